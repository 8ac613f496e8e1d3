package mailbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/pgtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// TestPostgresWaitPollsUnderOtherTraffic: a message whose lease (a drain
// killed after its claim) runs out is taken by an `inbox --wait` already
// waiting on that inbox. Nothing is written when a lease runs out, so no
// notification comes: the waiter looks again when the lease runs out (its
// safety poll, 10 s on, is the backstop). Here the team is busy — mail to
// another agent every 200 ms, as heartbeats and other agents' mail come in
// a team of a few agents — and each of those notifications, not this
// waiter's, must not put that look off again.
func TestPostgresWaitPollsUnderOtherTraffic(t *testing.T) {
	u := pgtest.URL(t)
	ctx := context.Background()
	db := open(t, u, nil)
	m := send(t, db, "t", "lead", "w", "task")
	// The state a drain SIGKILLed after its claim leaves: leased for 2 s.
	r := raw(t, u)
	if _, err := r.Exec(`UPDATE messages SET claim_token = 1, lease_until = ? WHERE id = ?`,
		time.Now().Add(2*time.Second).UnixNano(), m.ID); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	noise := make(chan error, 1)
	go func() {
		other := open(t, u, nil)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				noise <- nil
				return
			case <-tick.C:
			}
			if _, err := other.Send(ctx, mailbox.Message{Team: "t", From: "lead", To: "x", Body: "busy"}); err != nil {
				noise <- err
				return
			}
		}
	}()
	defer func() {
		close(stop)
		if err := <-noise; err != nil {
			t.Error(err)
		}
	}()

	waiter := open(t, u, nil)
	var got []mailbox.Message
	began := time.Now()
	// Lease 2 s: the message is the waiter's within ~2 s (12 s at worst,
	// by the safety poll).
	// The wait's deadline is a minute, when it checks one last time: the
	// message must come well before that.
	ok, err := waiter.WatchInbox(ctx, "t", "w", began.Add(time.Minute), func() (bool, error) {
		msgs, err := waiter.Drain(ctx, "t", "w", 0, keep(&got))
		return len(msgs) > 0, err
	})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	if !ok || took > 30*time.Second {
		t.Fatalf("the wait on t/w got message %d (%v) only after %s, its lease having run out 2 s in: other recipients' notifications kept putting its safety poll off until the deadline",
			m.ID, ok, took.Round(time.Second))
	}
	t.Logf("got message %d after %s", got[0].ID, took.Round(100*time.Millisecond))
}

// TestWaitSeesLeaseRunOut: a waiter on an inbox takes a message whose lease
// (a drain killed after its claim) runs out when it runs out, though nothing
// is written then (no inotify event, no notification) and its safety poll
// is off: the waiter looks for the first lease's end itself. (Before, only
// the safety poll found it: 2 s on SQLite, 5 s on PostgreSQL; with the poll
// off, the wait's deadline, here two minutes away.)
func TestWaitSeesLeaseRunOut(t *testing.T) {
	mailbox.NoSafetyPolls(t)
	eachBackend(t, func(t *testing.T, be backend) {
		ctx := context.Background()
		path := be.fresh(t)
		db := open(t, path, nil)
		m := send(t, db, "t", "lead", "w", "task")
		until := time.Now().Add(time.Second)
		if _, err := raw(t, path).Exec(`UPDATE messages SET claim_token = 1, lease_until = ? WHERE id = ?`,
			until.UnixNano(), m.ID); err != nil {
			t.Fatal(err)
		}
		var got []mailbox.Message
		began := time.Now()
		ok, err := db.WatchInbox(ctx, "t", "w", began.Add(2*time.Minute), func() (bool, error) {
			msgs, err := db.Drain(ctx, "t", "w", 0, keep(&got))
			return len(msgs) > 0, err
		})
		ended := time.Now()
		if err != nil || !ok || len(got) != 1 || got[0].ID != m.ID {
			t.Fatalf("WatchInbox = %v, %v, got %v; want message %d", ok, err, got, m.ID)
		}
		if ended.Before(until) || ended.Sub(began) > time.Minute {
			t.Fatalf("message %d taken %s into the wait; its lease ran out %s in", m.ID,
				ended.Sub(began).Round(10*time.Millisecond), until.Sub(began).Round(10*time.Millisecond))
		}
	})
}

// TestPostgresPollChecksOnlyForUnreadMail: an idle PostgreSQL waiter's
// safety poll is one query for mail unread in its inbox, and its check (a
// drain's claim, a transaction) runs only when there is some: here a
// message leased to another drain, which the check must get to once the
// lease is given back. With nothing unread, every poll used to run the
// check.
func TestPostgresPollChecksOnlyForUnreadMail(t *testing.T) {
	u := pgtest.URL(t)
	mailbox.SafetyPolls(t, 20*time.Millisecond)
	ctx := context.Background()
	db := open(t, u, nil)
	send(t, db, "t", "lead", "x", "for another inbox")
	checks := 0
	ok, err := db.WatchInbox(ctx, "t", "w", time.Now().Add(time.Second), func() (bool, error) {
		checks++
		return false, nil
	})
	if err != nil || ok || checks != 1 {
		t.Fatalf("an idle wait of 1 s with 20 ms polls = %v, %v after %d checks; want false, nil after the first check alone", ok, err, checks)
	}

	m := send(t, db, "t", "lead", "w", "task")
	if _, err := raw(t, u).Exec(`UPDATE messages SET claim_token = 1, lease_until = ? WHERE id = ?`,
		time.Now().Add(time.Hour).UnixNano(), m.ID); err != nil {
		t.Fatal(err)
	}
	checks = 0
	ok, err = db.WatchInbox(ctx, "t", "w", time.Now().Add(time.Minute), func() (bool, error) {
		checks++
		return checks == 3, nil
	})
	if err != nil || !ok || checks != 3 {
		t.Fatalf("a wait on an inbox holding a leased message = %v, %v after %d checks; want its polls to check again", ok, err, checks)
	}
}
