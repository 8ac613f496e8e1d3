package mailbox

// Lock is a named lock of one team that holds across every process using
// the mailbox: on SQLite a file lock beside the database, on PostgreSQL a
// session advisory lock on a connection held for the purpose, so it holds
// across hosts. Either way it is released when its holder dies, even by
// SIGKILL: the kernel drops the file lock, the server ends the session.
type Lock struct {
	tryLock func() (bool, error)
	unlock  func() error
	held    bool
}

// Lock returns the lock named key for team (say "w1.spawn", or "resume").
// It is not taken until TryLock.
func (d *DB) Lock(team, key string) (*Lock, error) {
	return d.be.lock((*dbRef)(d), team, key)
}

// TryLock takes the lock if it is free and reports whether it did; it never
// waits.
func (l *Lock) TryLock() (bool, error) {
	if l.held {
		return true, nil
	}
	ok, err := l.tryLock()
	l.held = ok && err == nil
	return l.held, err
}

// Unlock releases a lock taken by TryLock.
func (l *Lock) Unlock() error {
	if !l.held {
		return nil
	}
	l.held = false
	return l.unlock()
}
