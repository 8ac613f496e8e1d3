package mailbox

// The SQLite backend: one file on one machine.

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/gofrs/flock"
	"github.com/teamkit/teamkit/pkg/readlimit"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

type sqliteBackend struct{}

// walLimit is the WAL size past which a command checkpoints as it closes.
// SQLite's own automatic checkpoint does not keep the WAL of a busy mailbox
// bounded here (its file grew by every message while a reader was open, even
// one between reads), so teamkit runs one itself, PASSIVE: it waits for
// nobody, copies what no reader still needs, and lets the next writer
// start the WAL over.
const walLimit = 4 << 20

func (sqliteBackend) checkpoint(d *DB) {
	if st, err := os.Stat(d.file + "-wal"); err == nil && st.Size() > walLimit {
		d.db.ExecContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`)
	}
}

// clock: a SQLite file is on one machine, whose clock is the only one; its
// times are the process's (Options.Now), which tests can set.
func (sqliteBackend) clock() string { return "" }

func (sqliteBackend) sendLock() string { return "" }

func openSQLite(path string, o Options) (*DB, error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		// Opening a FIFO blocks until a writer comes (deaf to SIGTERM,
		// which the commands catch), and a device is no mailbox either.
		return nil, &Error{Op: "open mailbox", Path: path, Kind: ErrCorrupt, Err: fmt.Errorf("it is %s, not a regular file", readlimit.Kind(st.Mode()))}
	}
	target, err := os.Readlink(path)
	link := err == nil
	if link {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			// SQLite would create the link's target, or fail as if the
			// directory were read-only: say what the path is instead.
			return nil, &Error{Op: "open mailbox", Path: path, Kind: ErrDangling, Err: fmt.Errorf("it points to %s, which does not exist", target)}
		}
	}
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if !o.CreateDir {
			return nil, &Error{Op: "open mailbox", Path: path, Kind: ErrNoDir, Err: fmt.Errorf("%s is missing", dir)}
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, &Error{Op: "create mailbox directory", Path: dir, Err: err}
		}
	}
	// SQLite names the WAL after the file it opens for path (sqliteFile:
	// on Unix, path with its links resolved). file is that file: where the
	// WAL is, and so where the waiter watches and the locks are, whichever
	// name a process gave. Only a link, or a ".." that may follow a linked
	// directory, can make the two differ.
	file := path
	if link || strings.Contains(path, "..") {
		file = sqliteFile(path)
	}
	// The WAL first, then the header: a file whose WAL held nothing is
	// whole, so its header's version is the schema's (DB.openVersion).
	// Through a link whose file is not known (Windows, or a link gone
	// meanwhile), the header is not trusted.
	walEmpty := false
	if !link || file != path {
		st, err := os.Stat(file + "-wal")
		walEmpty = errors.Is(err, fs.ErrNotExist) || err == nil && st.Size() == 0
	}
	h := readHeader(file)
	if err := refuseForeign(path, h); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(o.BusyTimeout.Milliseconds()))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL")
	q.Set("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	sdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, &Error{Op: "open mailbox", Path: path, Err: err}
	}
	d := &DB{db: sdb, be: sqliteBackend{}, path: path, file: file, now: o.Now}
	if walEmpty && h.wal() {
		d.headerVersion = h.userVersion()
	}
	return d, nil
}

// header is the 100-byte header of a SQLite file, as read before SQLite
// opens it.
type header []byte

// readHeader is path's header: nil for a file that is missing (a new
// mailbox), shorter than a header, or no SQLite file (SQLite says so).
func readHeader(path string) header {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	h := make(header, 100)
	if n, _ := io.ReadFull(f, h); n < len(h) || string(h[:16]) != "SQLite format 3\x00" {
		return nil
	}
	return h
}

func (h header) userVersion() int { return int(binary.BigEndian.Uint32(h[60:64])) }

// wal reports whether the file is in WAL mode: a file in a rollback mode
// may have a hot journal to roll back, header included.
func (h header) wal() bool { return h != nil && h[18] == 2 && h[19] == 2 }

// refuseForeign refuses another program's SQLite file before teamkit's own
// connection settings touch it: opening with _journal_mode=WAL rewrites
// the file's header at once, before migrate could see whose tables it
// holds. A file teamkit migrated has a user_version; one with none that
// holds tables is someone else's. The header answers for nearly every
// open (its user_version is set); only a file whose header says 0 (new, or
// a fresh mailbox whose version still sits in its WAL) is asked, read-only.
func refuseForeign(path string, h header) error {
	if h == nil || h.userVersion() != 0 {
		return nil // new, not SQLite, or migrated
	}
	ro, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro")
	if err != nil {
		return nil
	}
	defer ro.Close()
	ctx := context.Background()
	// One snapshot for both questions: a first open elsewhere may commit
	// teamkit's tables and version in between.
	tx, err := ro.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil || v != 0 {
		return nil
	}
	theirs, err := sqliteBackend{}.tables(ctx, tx)
	if err != nil || len(theirs) == 0 {
		return nil
	}
	return foreignTables(path, theirs)
}

func (sqliteBackend) name() string { return "sqlite" }

func (sqliteBackend) kindOf(err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return nil
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return ErrLocked
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM:
		return ErrReadOnly
	case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
		return ErrCorrupt
	case sqlite3.SQLITE_CANTOPEN:
		// The directory exists (Open checked), so this is permissions.
		return ErrReadOnly
	}
	return nil
}

// begin is BEGIN IMMEDIATE (the DSN's _txlock): every write transaction
// takes the write lock first, serialized or not.
func (sqliteBackend) begin(ctx context.Context, db *sql.DB, _ bool) (*sql.Tx, error) {
	return db.BeginTx(ctx, nil)
}

// unreadByRecipient names the partial index that drain and peek must use.
// Without statistics SQLite's planner prefers messages_by_recipient, the
// recipient's whole history, so a drain read every message the recipient
// ever got: 0.5 s per drain at 100k read messages instead of microseconds.
// (PostgreSQL has no such hint and needs none: rebind drops it.)
const unreadByRecipient = `messages INDEXED BY messages_unread_by_recipient`

// claim needs no row locks: the transaction holds the write lock from its
// first read, so every matching unread id up to the last one selected is in
// msgs (the select was ordered by id and nobody can write meanwhile), and
// the lease is set on that range.
func (sqliteBackend) claim(ctx context.Context, db *sql.DB, now func() time.Time, claiming func(), from, where string, args []any, limit int, token int64, lease time.Duration) ([]Message, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	// The lease runs from the claim, not from before it: the write lock
	// (BEGIN IMMEDIATE) may have taken up to the busy timeout to get,
	// longer than a --lease.
	at := now().UTC()
	msgs, err := queryMessages(ctx, tx,
		`SELECT `+messageCols+` FROM `+from+` WHERE `+where+` ORDER BY id`+limitClause(limit), append(slices.Clip(args), nanos(at))...)
	if err == nil && len(msgs) > 0 {
		_, err = tx.ExecContext(ctx,
			`UPDATE `+from+` SET claim_token = ?, lease_until = ? WHERE `+where+` AND id <= ?`,
			append(append([]any{token, nanos(at.Add(lease))}, args...), nanos(at), msgs[len(msgs)-1].ID)...)
		if err == nil {
			// Before the commit: an interruption from here on rolls the
			// claim back (ctx ends the transaction) or, once committed,
			// has the drain give the lease back.
			claiming()
		}
	}
	if err != nil {
		tx.Rollback()
		return nil, err
	}
	// A commit that fails may have landed: the drain gives back what
	// carries its token.
	return msgs, tx.Commit()
}

func (sqliteBackend) migrationDir() string { return "migrations" }

// The version is PRAGMA user_version.
func (sqliteBackend) version(ctx context.Context, q querier) (int, error) {
	var v int
	err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}

func (sqliteBackend) prepareMigration(context.Context, *sql.Tx) error { return nil }

func (sqliteBackend) setVersion(ctx context.Context, tx *sql.Tx, v int) error {
	_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v))
	return err
}

// lock is a file lock beside the database, in "<db>-locks/<team>/" (the
// file a link points to: DB.file), so every process using this mailbox
// contends for the same lock whatever its XDG_STATE_HOME or the name it
// gave the file. The kernel releases it when its holder dies, even by
// SIGKILL.
func (sqliteBackend) lock(d *dbRef, team, key string) (*Lock, error) {
	dir := filepath.Join(d.file+"-locks", team)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create lock directory: %w", err)
	}
	f := flock.New(filepath.Join(dir, key+".lock"))
	return &Lock{tryLock: f.TryLock, unlock: f.Unlock}, nil
}

// sqliteSafetyPoll is how often a waiter looks at PRAGMA data_version
// without being woken: the backstop for a change inotify cannot see (a
// database on a network file system, say). The wake-up itself is
// immediate, and a drain's lease running out on the inbox waited on
// (which writes nothing) is looked for when it runs out (inboxLook). Each
// look wakes an idle waiter: at 2 s they cost 0.04–0.09% of a core each
// on a machine where a wake-up is dear, at 10 s 0.013%. (A variable only
// so that a test can switch it off and prove the wake-up.)
var sqliteSafetyPoll = 10 * time.Second

// sqliteFallbackPoll is the poll when no file watcher can be had (the
// inotify limits are reached): what every waiter did before the watcher.
const sqliteFallbackPoll = 50 * time.Millisecond

// watch sleeps on inotify events for the database's directory, filtered to
// the database file and its WAL and journal (a commit in WAL mode always
// writes the WAL), and looks at PRAGMA data_version — a counter that moves
// when another connection commits, a few microseconds to read — only when
// woken. check runs only when that counter moved. An idle waiter is a
// process blocked in read(2).
func (sqliteBackend) watch(ctx context.Context, d *dbRef, t topic, deadline time.Time, check func() (bool, error)) (bool, error) {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	wake := make(chan struct{}, 1)
	poll := sqliteSafetyPoll
	dir := filepath.Dir(d.file)
	if w, err := fsnotify.NewWatcher(); err != nil {
		poll = sqliteFallbackPoll
	} else {
		// Closing an inotify descriptor that still watches waits in the
		// kernel for the watch's teardown (an SRCU grace period: 8 ms
		// median, 20 ms at worst, measured), and a process cannot end
		// while one of its threads is in that close: a waiter would pay
		// it between printing and exiting, closed on the side or not.
		// Removing the watch as the wait ends starts the teardown at
		// once; it runs while the waiter closes the database, and the
		// close, on the side, is left little or nothing to wait for (0.09
		// ms median, 2 ms after the removal; a waiter's exit measured 1.3
		// ms after its output, 6.7–8.1 ms before).
		defer func() {
			w.Remove(dir)
			go w.Close()
		}()
		if err := w.Add(dir); err != nil {
			poll = sqliteFallbackPoll
		} else {
			go forwardChanges(w, filepath.Base(d.file), wake)
		}
	}
	// The file the connection has open: a mailbox removed (or renamed
	// over) while we wait gets no more mail, and the next send makes a new
	// one at the path, which this connection would never see.
	opened, err := os.Stat(d.file)
	if err != nil {
		return false, err
	}
	last := int64(-1)
	// A writer appends its frames to the WAL (the event) before it
	// publishes the commit in the shared-memory index, which no event
	// announces: woken early, a waiter still sees the old data_version. So
	// a wake-up is followed by a few quick looks (every 5 ms, for 100 ms)
	// until the counter moves.
	followUps := 0
	var checked, leased time.Time
	for {
		var v int64
		if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			return false, err
		}
		// Also once per safety poll whatever the counter says: what check
		// waits for may come from time alone (a drain's lease running out
		// writes nothing).
		if now, err := os.Stat(d.file); err != nil || !os.SameFile(opened, now) {
			return false, fmt.Errorf("the mailbox file %s was removed or replaced while waiting", d.file)
		}
		now := (*DB)(d).now()
		if v != last || time.Since(checked) >= sqliteSafetyPoll || !leased.IsZero() && !now.Before(leased) {
			last, checked, followUps = v, time.Now(), 0
			done, err := check()
			if err != nil || done {
				return done, err
			}
			if _, leased, err = inboxLook(func(q string, args ...any) Row { return conn.QueryRowContext(ctx, q, args...) }, t, now); err != nil {
				return false, err
			}
		}
		wait := poll
		if followUps > 0 {
			wait = sqliteFollowUp
			followUps--
		}
		if !leased.IsZero() {
			wait = max(min(wait, leased.Sub(now)), 0)
		}
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return false, nil
			}
			wait = min(wait, left)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		case <-wake:
			followUps = sqliteFollowUps
		case <-t.C:
		}
		t.Stop()
	}
}

// sqliteFollowUp and sqliteFollowUps are the quick looks after a wake-up.
const (
	sqliteFollowUp  = 5 * time.Millisecond
	sqliteFollowUps = 20
)

// forwardChanges turns the watcher's events on base, base-wal or
// base-journal into at most one pending wake-up, until the watcher closes.
func forwardChanges(w *fsnotify.Watcher, base string, wake chan<- struct{}) {
	for {
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			switch filepath.Base(ev.Name) {
			case base, base + "-wal", base + "-journal":
			default:
				continue
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			select {
			case wake <- struct{}{}:
			default:
			}
		case _, ok := <-w.Errors:
			if !ok {
				return
			}
			// An overflowed queue lost events: look once to be sure.
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	}
}

func (sqliteBackend) tables(ctx context.Context, tx *sql.Tx) ([]string, error) {
	return queryStrings(ctx, tx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
}

// lastIDs is AUTOINCREMENT's record of the largest id ever handed out.
func (sqliteBackend) lastIDs(ctx context.Context, tx *sql.Tx) (map[string]int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT name, seq FROM sqlite_sequence`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var t string
		var n int64
		if err := rows.Scan(&t, &n); err != nil {
			return nil, err
		}
		out[t] = n
	}
	return out, rows.Err()
}

// afterCopy moves AUTOINCREMENT's sqlite_sequence, which follows the
// largest id inserted, up to the source's last ids.
func (sqliteBackend) afterCopy(ctx context.Context, tx *sql.Tx, last map[string]int64) error {
	for t, n := range last {
		res, err := tx.ExecContext(ctx, `UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?`, n, t)
		if err != nil {
			return err
		}
		if k, err := res.RowsAffected(); err != nil {
			return err
		} else if k == 0 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)`, t, n); err != nil {
				return err
			}
		}
	}
	return nil
}
