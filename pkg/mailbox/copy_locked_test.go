package mailbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/teamkit/teamkit/internal/pgtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// TestPostgresCopyLocksSourceForWriting: `inbox copy` says the source "is
// locked for writing while it is read". On SQLite the copy holds the write
// lock; on PostgreSQL its advisory lock kept out only other serialized
// transactions, not a send, a drain or a compare-and-set, and each table
// was read at its own moment: a message sent while the copy was reading
// went into the source (send said so) but not into the copy, beside tables
// read after it. Here the copy is held up reading its last table (a lock
// the test holds on it) while a message is sent: the send must wait for
// the copy, not land in the middle of it.
func TestPostgresCopyLocksSourceForWriting(t *testing.T) {
	ctx := context.Background()
	srcURL, dstURL := pgtest.URL(t), pgtest.URL(t)
	src, dst := open(t, srcURL, nil), open(t, dstURL, nil)
	first := send(t, src, "t", "lead", "w", "before the copy")

	// Hold the copy up at its last table, slack_events (tables are
	// copied in name order), messages being copied already.
	holder, err := pgx.Connect(ctx, srcURL)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	hold, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback(ctx)
	if _, err := hold.Exec(ctx, `LOCK TABLE slack_events IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	watcher, err := pgx.Connect(ctx, srcURL)
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close(ctx)
	waitingOn := func(table string) bool {
		var n int
		if err := watcher.QueryRow(ctx, `SELECT count(*) FROM pg_locks
			WHERE NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND relation = $1::regclass`, table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}

	copied := make(chan error, 1)
	go func() {
		_, err := mailbox.Copy(ctx, src, dst)
		copied <- err
	}()
	for deadline := time.Now().Add(30 * time.Second); !waitingOn("slack_events"); {
		select {
		case err := <-copied:
			t.Fatalf("the copy ended (%v) without waiting for the held table", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the copy never reached slack_events")
		}
		time.Sleep(10 * time.Millisecond)
	}

	other := open(t, srcURL, nil)
	type sent struct {
		m   mailbox.Message
		err error
	}
	sends := make(chan sent, 1)
	go func() {
		m, err := other.Send(ctx, mailbox.Message{Team: "t", From: "lead", To: "w", Body: "during the copy"})
		sends <- sent{m, err}
	}()
	// The send either waits for the copy's lock on messages or lands.
	var during *sent
	for deadline := time.Now().Add(30 * time.Second); during == nil && !waitingOn("messages"); {
		select {
		case s := <-sends:
			during = &s
		default:
			if time.Now().After(deadline) {
				t.Fatal("the send neither ended nor waited on messages")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	landed := during != nil // while the copy was reading
	if err := hold.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-copied; err != nil {
		t.Fatalf("copy: %v", err)
	}
	if during == nil {
		s := <-sends
		during = &s
	}
	if during.err != nil {
		t.Fatalf("send after the copy: %v", during.err)
	}
	msgs, err := dst.List(ctx, "t", "", true)
	if err != nil {
		t.Fatal(err)
	}
	inCopy := ids(msgs)
	if !landed && !equalIDs(inCopy, []int64{first.ID}) {
		t.Errorf("the copy holds messages %v; want [%d], from before it", inCopy, first.ID)
	}
	if landed {
		t.Fatalf("message %d was sent (send succeeded) while the copy read its source, which it says is locked for writing, and is not in the copy %v", during.m.ID, inCopy)
	}
}
