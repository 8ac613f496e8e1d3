package mailbox_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// A drain's lease runs from its claim, not from before the claim waited for
// SQLite's write lock: a drain that waited longer than its lease for the
// lock (a busy mailbox, a raised TEAMKIT_BUSY_TIMEOUT) still holds what it
// claimed for the whole lease, and no other drain gets those messages while
// it writes them.
func TestDrainLeaseStartsAtTheClaim(t *testing.T) {
	ctx := context.Background()
	path := sqliteBackend.fresh(t)
	c := newClock()
	var calls atomic.Int64
	db, err := mailbox.Open(ctx, path, mailbox.Options{Now: func() time.Time { calls.Add(1); return c.Now() }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	other := open(t, path, c)
	m := send(t, db, "t", "s", "w", "only once")
	db.SetLease(2 * time.Second)

	release := holdLock(t, path)
	type res struct {
		got, dup []mailbox.Message
		err      error
	}
	done := make(chan res, 1)
	before := calls.Load()
	go func() {
		var r res
		r.got, r.err = db.Drain(ctx, "t", "w", 0, func([]mailbox.Message) error {
			// Just claimed, well inside a two-second lease: another drain
			// must find nothing.
			_, err := other.Drain(ctx, "t", "w", 0, keep(&r.dup))
			return err
		})
		done <- r
	}()
	// The drain has begun (it read the clock) and cannot claim before the
	// lock is let go: the ten seconds it waits pass, then the lock.
	deadline := time.Now().Add(time.Minute)
	for calls.Load() == before {
		if time.Now().After(deadline) {
			t.Fatal("the drain never read the clock")
		}
		time.Sleep(time.Millisecond)
	}
	c.Add(10 * time.Second)
	release()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !equalIDs(ids(r.got), []int64{m.ID}) {
		t.Fatalf("the drain got %v; want message %d", ids(r.got), m.ID)
	}
	if len(r.dup) != 0 {
		t.Fatalf("a drain run just after the claim, inside its two-second lease, got %v too: the lease was counted from before the claim waited for the lock", ids(r.dup))
	}
}
