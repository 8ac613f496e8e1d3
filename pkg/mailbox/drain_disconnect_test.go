package mailbox_test

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/teamkit/teamkit/internal/pgtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// dropSessions ends every other session on the database of u, as a server
// restart or a dropped network does to a command's connections.
func dropSessions(t testing.TB, u string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
}

// TestPostgresDrainConnectionLostAfterDelivery: the connection a drain
// claimed on is cut while it writes its batch (a server restart, a network
// blip), before its read mark. The batch was delivered: the mark must
// still land, on a new connection, not leave the messages to come back
// once the lease runs out. Under `inbox --wait` (WatchInbox) the lost
// connection must not be ridden out as if nothing had been delivered: that
// printed the batch, then waited on and reported "no message" (exit 2),
// and the batch came again to the next drain.
func TestPostgresDrainConnectionLostAfterDelivery(t *testing.T) {
	ctx := context.Background()
	t.Run("drain", func(t *testing.T) {
		u := pgtest.URL(t)
		db := open(t, u, newClock())
		m := send(t, db, "t", "lead", "w", "task")
		var got []mailbox.Message
		msgs, err := db.Drain(ctx, "t", "w", 0, func(b []mailbox.Message) error {
			got = append(got, b...)
			dropSessions(t, u)
			return nil
		})
		if err != nil {
			t.Fatalf("drain delivered %v, then: %v", ids(got), err)
		}
		if !equalIDs(ids(msgs), []int64{m.ID}) {
			t.Fatalf("drain returned %v; want [%d]", ids(msgs), m.ID)
		}
		if p, err := db.Peek(ctx, "t", "w", 0); err != nil || len(p) != 0 {
			t.Fatalf("after the drain delivered it, unread = %v (%v); want none", ids(p), err)
		}
	})
	t.Run("wait", func(t *testing.T) {
		u := pgtest.URL(t)
		db := open(t, u, newClock())
		other := open(t, u, nil)
		// The wait finds the inbox empty, then the message comes.
		var m mailbox.Message
		var got []mailbox.Message
		dropped := false
		began := time.Now()
		ok, err := db.WatchInbox(ctx, "t", "w", began.Add(20*time.Second), func() (bool, error) {
			msgs, err := db.Drain(ctx, "t", "w", 0, func(b []mailbox.Message) error {
				got = append(got, b...)
				if !dropped {
					dropped = true
					dropSessions(t, u)
				}
				return nil
			})
			if err == nil && m.ID == 0 {
				m = send(t, other, "t", "lead", "w", "task")
			}
			return len(msgs) > 0, err
		})
		if !equalIDs(ids(got), []int64{m.ID}) {
			t.Errorf("the wait delivered %v; want [%d] once", ids(got), m.ID)
		}
		if err != nil || !ok {
			t.Fatalf("the wait delivered %v, then returned ok=%v err=%v after %s; want ok", ids(got), ok, err, time.Since(began).Round(time.Second))
		}
		if p, err := db.Peek(ctx, "t", "w", 0); err != nil || len(p) != 0 {
			t.Fatalf("after the wait delivered it, unread = %v (%v); want none", ids(p), err)
		}
	})
}

// TestPostgresClaimAnswerLost: a drain's claim lands on the server, but its
// answer never comes back (the connection cut on its way, or the drain
// interrupted while it waited). Nothing was delivered, and the lease it
// may hold is given back at once, on another connection: the next drain
// gets the message now, not once the lease (an hour here) runs out.
func TestPostgresClaimAnswerLost(t *testing.T) {
	direct := pgtest.URL(t)
	var mu sync.Mutex
	claiming := map[net.Conn]bool{}
	u := pgProxy(t, direct, func(c net.Conn, chunk []byte, fromClient bool) bool {
		mu.Lock()
		defer mu.Unlock()
		if fromClient && bytes.Contains(chunk, []byte("FOR UPDATE SKIP LOCKED")) {
			claiming[c] = true
		}
		return fromClient || !claiming[c]
	})
	db := open(t, u, nil)
	db.SetLease(time.Hour)
	m := send(t, db, "t", "lead", "w", "task")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	delivered := false
	began := time.Now()
	_, err := db.Drain(ctx, "t", "w", 0, func([]mailbox.Message) error { delivered = true; return nil })
	t.Logf("drain returned after %s: %v", time.Since(began), err)
	if err == nil || delivered {
		t.Fatalf("a drain whose claim went unanswered = %v, delivered %v; want an error, no delivery", err, delivered)
	}
	mu.Lock()
	n := len(claiming)
	mu.Unlock()
	if n != 1 {
		t.Fatalf("%d connections sent the claim; want 1", n)
	}
	var got []mailbox.Message
	if _, err := open(t, direct, nil).Drain(context.Background(), "t", "w", 0, keep(&got)); err != nil || len(got) != 1 || got[0].ID != m.ID {
		t.Fatalf("the next drain = %v, %v; want message %d, its lease given back", got, err, m.ID)
	}
}

// TestPostgresClaimAnswerCutShort: the claim lands, but only the first of
// the rows it returned reach the drain before its answer stops (a
// connection cut mid-answer, the drain interrupted while it read). The
// drain knows of that one row only, but holds the lease on all three: it
// must give back every row carrying its token, not just those in the id
// range of the rows it got (RETURNING keeps no order, and the rest may lie
// either side).
func TestPostgresClaimAnswerCutShort(t *testing.T) {
	direct := pgtest.URL(t)
	var mu sync.Mutex
	claiming := map[net.Conn]int{} // bytes of the claim's answer forwarded
	const budget = 250 << 10       // one row of 200 KiB, not two
	u := pgProxy(t, direct, func(c net.Conn, chunk []byte, fromClient bool) bool {
		mu.Lock()
		defer mu.Unlock()
		if fromClient {
			if bytes.Contains(chunk, []byte("FOR UPDATE SKIP LOCKED")) {
				claiming[c] = 0
			}
			return true
		}
		n, ok := claiming[c]
		if !ok {
			return true
		}
		if n >= budget {
			return false
		}
		claiming[c] = n + len(chunk)
		return true
	})
	db := open(t, u, nil)
	db.SetLease(time.Hour)
	body := strings.Repeat("x", 200<<10)
	var sent []int64
	for range 3 {
		sent = append(sent, send(t, db, "t", "lead", "w", body).ID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	delivered := false
	_, err := db.Drain(ctx, "t", "w", 0, func([]mailbox.Message) error { delivered = true; return nil })
	if err == nil || delivered {
		t.Fatalf("a drain whose claim's answer was cut short = %v, delivered %v; want an error, no delivery", err, delivered)
	}
	var got []mailbox.Message
	if _, err := open(t, direct, nil).Drain(context.Background(), "t", "w", 0, keep(&got)); err != nil || !equalIDs(ids(got), sent) {
		t.Fatalf("the next drain = %v, %v; want %v, the whole lease given back", ids(got), err, sent)
	}
}
