package resume

import (
	"context"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/wait"
)

// watchMail rings the watch's doorbell when new mail reaches team, so that
// a wake agent is re-spawned within moments of its message, not an
// interval later. It waits on the same push as `inbox --wait` (the SQLite
// file's change, PostgreSQL's LISTEN/NOTIFY) and compares the team's
// newest message id, so a heartbeat or a read rings nothing. The returned
// func stops it and waits for it.
func watchMail(ctx context.Context, db *mailbox.DB, team string, ring func()) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var seen int64 = -1
		check := func() (bool, error) {
			id, err := db.NewestMessage(ctx, team)
			if err != nil {
				return false, err
			}
			if seen >= 0 && id > seen {
				ring()
			}
			seen = id
			return false, nil
		}
		for ctx.Err() == nil {
			// Only a mailbox outage ends a watch: the pass loop reports
			// that; this one tries again.
			db.Watch(ctx, team, time.Time{}, check)
			wait.Sleep(ctx, time.Second)
		}
	}()
	return func() { cancel(); <-done }
}
