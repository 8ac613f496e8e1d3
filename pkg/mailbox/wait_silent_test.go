package mailbox_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/pgtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// hush is a TCP proxy to a PostgreSQL server whose silence() makes every
// connection that has sent a LISTEN go quiet, as a NAT or a firewall that
// dropped an idle connection's state does: nothing more is forwarded
// either way, and nothing is closed. Other connections, and new ones, are
// served.
type hush struct {
	mu     sync.Mutex
	quiet  map[net.Conn]bool
	listen map[net.Conn]bool
}

// silence quiets the connections listening now; later ones are served.
func (h *hush) silence() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.listen {
		h.quiet[c] = true
	}
}

// silent reports whether c is to forward nothing more; seen is what c just
// sent, if from the client (nil for what the server sent it).
func (h *hush) silent(c net.Conn, seen []byte) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if bytes.Contains(seen, []byte("LISTEN ")) {
		h.listen[c] = true
	}
	return h.quiet[c]
}

func hushed(t *testing.T, pgURL string) (string, *hush) {
	h := &hush{quiet: map[net.Conn]bool{}, listen: map[net.Conn]bool{}}
	return pgProxy(t, pgURL, func(c net.Conn, chunk []byte, fromClient bool) bool {
		if !fromClient {
			chunk = nil
		}
		return !h.silent(c, chunk)
	}), h
}

// watchBy runs watch and fails the test if it has not returned within
// limit (leaving it running: a hung waiter is the defect).
func watchBy(t *testing.T, limit time.Duration, watch func() (bool, error)) (bool, error) {
	t.Helper()
	type result struct {
		ok  bool
		err error
	}
	done := make(chan result, 1)
	go func() {
		ok, err := watch()
		done <- result{ok, err}
	}()
	select {
	case r := <-done:
		return r.ok, r.err
	case <-time.After(limit):
		t.Fatalf("the wait has not returned %s after it began", limit)
		return false, nil
	}
}

// TestPostgresWaitEndsOnSilentConnection: a waiter whose listening
// connection goes silent (no error, no answer: a host or a network path
// gone) still returns at its deadline. The wait's end UNLISTENs on that
// connection, which never answers: that must not hang the waiter, and the
// connection must not go back to the pool.
func TestPostgresWaitEndsOnSilentConnection(t *testing.T) {
	mailbox.NoSafetyPolls(t)
	mailbox.QuietLimit(t, 500*time.Millisecond)
	u, h := hushed(t, pgtest.URL(t))
	db := open(t, u, nil)
	began := time.Now()
	ok, err := watchBy(t, 20*time.Second, func() (bool, error) {
		return db.Watch(context.Background(), "t", began.Add(time.Second), func() (bool, error) {
			h.silence() // listening by now
			return false, nil
		})
	})
	if ok || err != nil {
		t.Fatalf("Watch = %v, %v; want false, nil at its deadline", ok, err)
	}
	t.Logf("returned after %s", time.Since(began).Round(10*time.Millisecond))
}

// TestPostgresWaitErrorLeavesNoListener: a wait that ends in its check's
// error gives its connection back to the pool listening to nothing: one
// still listening would collect every notification of the schema, unread,
// for as long as the process lives (resume --watch retries such a wait).
func TestPostgresWaitErrorLeavesNoListener(t *testing.T) {
	u := pgtest.URL(t)
	db := open(t, u, nil)
	boom := errors.New("boom")
	_, err := db.Watch(context.Background(), "t", time.Now().Add(time.Minute), func() (bool, error) { return false, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("Watch = %v; want the check's error", err)
	}
	var n int
	if err := raw(t, u).QueryRow(`SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN %'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d connection(s) of the pool still LISTEN after the wait ended", n)
	}
}

// TestPostgresInboxWaitEndsOnSilentConnection: the same for a waiter on an
// inbox, whose looks between checks (when a lease runs out, the safety
// poll) are queries on the listening connection: one that never comes back
// must not hold the waiter past its deadline.
func TestPostgresInboxWaitEndsOnSilentConnection(t *testing.T) {
	mailbox.SafetyPolls(t, 200*time.Millisecond)
	mailbox.QuietLimit(t, 500*time.Millisecond)
	u, h := hushed(t, pgtest.URL(t))
	db := open(t, u, nil)
	began := time.Now()
	checks := 0
	ok, err := watchBy(t, 20*time.Second, func() (bool, error) {
		return db.WatchInbox(context.Background(), "t", "w", began.Add(3*time.Second), func() (bool, error) {
			if checks++; checks == 1 {
				h.silence()
			}
			return false, nil
		})
	})
	if ok || err != nil {
		t.Fatalf("WatchInbox = %v, %v; want false, nil at its deadline", ok, err)
	}
	t.Logf("returned after %s", time.Since(began).Round(10*time.Millisecond))
}

// TestPostgresInterruptedWaitClosesAtOnce: a wait interrupted (Ctrl-C, a
// stopping watch) on a silent listening connection returns at once,
// closing the connection, rather than give its UNLISTEN, which will never
// be answered, the quiet limit.
func TestPostgresInterruptedWaitClosesAtOnce(t *testing.T) {
	mailbox.NoSafetyPolls(t)
	mailbox.QuietLimit(t, time.Minute)
	u, h := hushed(t, pgtest.URL(t))
	db := open(t, u, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := watchBy(t, 20*time.Second, func() (bool, error) {
		return db.Watch(ctx, "t", time.Now().Add(time.Hour), func() (bool, error) {
			h.silence() // listening by now
			time.AfterFunc(200*time.Millisecond, cancel)
			return false, nil
		})
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Watch = %v; want the interruption", err)
	}
}
