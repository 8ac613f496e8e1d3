package mailbox

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"
)

// Lock returns the file lock named key for team (say "w1.spawn", or
// "resume"). Lock files live beside the database, in "<db>-locks/<team>/",
// so every process using this mailbox contends for the same lock whatever
// its XDG_STATE_HOME. The kernel releases a lock when its holder dies, even
// by SIGKILL.
func (d *DB) Lock(team, key string) (*flock.Flock, error) {
	dir := filepath.Join(d.path+"-locks", team)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create lock directory: %w", err)
	}
	return flock.New(filepath.Join(dir, key+".lock")), nil
}
