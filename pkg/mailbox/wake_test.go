package mailbox_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/pgtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// TestClaimWakeOnce: mail sent before a launch is the launch's; mail after
// it makes the agent a wake candidate, and of many concurrent claims of the
// same burst, from connections of their own (as passes on other hosts),
// exactly one wins. A claim given back is won again; a newer run voids an
// older run's claim.
func TestClaimWakeOnce(t *testing.T) { eachBackend(t, testClaimWakeOnce) }

func testClaimWakeOnce(t *testing.T, be backend) {
	ctx := context.Background()
	db, c, path := newDB(t, be)
	send := func(body string) int64 {
		m, err := db.Send(ctx, mailbox.Message{Team: "t", From: "lead", To: "w", Body: body})
		if err != nil {
			t.Fatal(err)
		}
		return m.ID
	}
	send("before")
	if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "t", Name: "w", Type: "x", Run: "r1", State: mailbox.StateExited, Wake: mailbox.WakeMail}); err != nil {
		t.Fatal(err)
	}
	if cs, err := db.WakeCandidates(ctx, "t"); err != nil || len(cs) != 0 {
		t.Fatalf("mail before the launch: candidates %+v, %v; want none", cs, err)
	}
	send("one")
	newest := send("two")
	cs, err := db.WakeCandidates(ctx, "t")
	if err != nil || len(cs) != 1 || cs[0].Newest != newest || cs[0].Agent.Wake != mailbox.WakeMail {
		t.Fatalf("after mail: candidates %+v, %v; want w up to %d", cs, err, newest)
	}

	const n = 8
	var wg sync.WaitGroup
	wins := make([]bool, n)
	for i := range n {
		other := open(t, path, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			won, err := other.ClaimWake(ctx, cs[0])
			if err != nil {
				t.Error(err)
			}
			wins[i] = won
		}()
	}
	wg.Wait()
	won := 0
	for _, w := range wins {
		if w {
			won++
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d concurrent claims won; want exactly 1", won, n)
	}
	if cs, _ := db.WakeCandidates(ctx, "t"); len(cs) != 0 {
		t.Fatalf("after the claim: candidates %+v; want none", cs)
	}
	if err := db.ReleaseWake(ctx, cs[0]); err != nil {
		t.Fatal(err)
	}
	if ok, err := db.ClaimWake(ctx, cs[0]); err != nil || !ok {
		t.Fatalf("claim after release: %v, %v; want won", ok, err)
	}
	if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "t", Name: "w", Type: "x", Run: "r2", State: mailbox.StateRunning, Wake: mailbox.WakeMail}); err != nil {
		t.Fatal(err)
	}
	later := send("three")
	if ok, err := db.ClaimWake(ctx, mailbox.WakeCandidate{Agent: cs[0].Agent, Newest: later, Covered: newest}); err != nil || ok {
		t.Fatalf("claim against the old run: %v, %v; want lost", ok, err)
	}
}

// A wake claimed and given back (its re-spawn did not start) leaves the
// agent a candidate for all the mail no run has covered, also after a read
// of the newest message alone (a reply, read with --reply-to): the release
// puts back what the runs covered, not the claim's newest message minus one.
func TestReleaseWakeRestoresCovered(t *testing.T) { eachBackend(t, testReleaseWakeRestoresCovered) }

func testReleaseWakeRestoresCovered(t *testing.T, be backend) {
	ctx := context.Background()
	db, _, _ := newDB(t, be)
	if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "t", Name: "w", Type: "x", Run: "r1", State: mailbox.StateExited, Wake: mailbox.WakeMail}); err != nil {
		t.Fatal(err)
	}
	send := func(body string, replyTo int64) int64 {
		m, err := db.Send(ctx, mailbox.Message{Team: "t", From: "lead", To: "w", Body: body, ReplyTo: replyTo})
		if err != nil {
			t.Fatal(err)
		}
		return m.ID
	}
	q := send("an earlier message", 0)
	send("one", 0)
	send("two", 0)
	send("the reply", q)
	cs, err := db.WakeCandidates(ctx, "t")
	if err != nil || len(cs) != 1 {
		t.Fatalf("candidates %+v, %v", cs, err)
	}
	if ok, err := db.ClaimWake(ctx, cs[0]); err != nil || !ok {
		t.Fatalf("claim: %v, %v", ok, err)
	}
	if err := db.ReleaseWake(ctx, cs[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DrainReplies(ctx, "t", "w", q, 0, func([]mailbox.Message) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if cs, err := db.WakeCandidates(ctx, "t"); err != nil || len(cs) != 1 {
		t.Fatalf("after the release and a read of the reply alone: candidates %+v, %v; want w, whose mail 'one' and 'two' no run has covered", cs, err)
	}
}

// On PostgreSQL a message's id is taken when it is inserted and seen when it
// commits, so ids need not become visible in their order. A wake covers the
// mail up to the newest id it saw; a message with a lower id that commits
// after that must still wake the agent, not pass for covered. Here a send
// that has taken its id is held before its commit (a trigger waits on a lock
// the test holds) while a second send to the same agent goes ahead; a wake
// pass claims and drains what it sees, and when both sends are in, any
// unread mail still makes the agent a candidate.
func TestPostgresWakeCoversOnlyCommittedMail(t *testing.T) {
	u := pgtest.URL(t)
	ctx := context.Background()
	db := open(t, u, nil)
	if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "t", Name: "w", Type: "x", Run: "r1", State: mailbox.StateExited, Wake: mailbox.WakeMail}); err != nil {
		t.Fatal(err)
	}
	r := raw(t, u)
	if _, err := r.Exec(`CREATE FUNCTION held() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.body = 'held' THEN PERFORM pg_advisory_xact_lock(4242); END IF;
			RETURN NEW;
		END $$`); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Exec(`CREATE TRIGGER held BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION held()`); err != nil {
		t.Fatal(err)
	}
	holder, err := r.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.ExecContext(ctx, `SELECT pg_advisory_lock(4242)`); err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			if _, err := holder.ExecContext(ctx, `SELECT pg_advisory_unlock(4242)`); err != nil {
				t.Error(err)
			}
		}
	}
	defer release()
	waiters := func() int {
		var n int
		if err := r.QueryRow(`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	send := func(body string) <-chan error {
		other := open(t, u, nil)
		done := make(chan error, 1)
		go func() {
			_, err := other.Send(ctx, mailbox.Message{Team: "t", From: "lead", To: "w", Body: body})
			done <- err
		}()
		return done
	}
	held := send("held")
	deadline := time.Now().Add(time.Minute)
	for waiters() < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the held send never reached its trigger")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The second send either commits (ids visible out of order) or waits
	// behind the held one.
	second := send("second")
	var secondErr error
	secondDone := false
	for !secondDone && waiters() < 2 {
		select {
		case secondErr = <-second:
			secondDone = true
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the second send neither finished nor waited")
		}
	}
	// A wake pass now: it claims what it sees, and the woken run drains it.
	cs, err := db.WakeCandidates(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if ok, err := db.ClaimWake(ctx, c); err != nil || !ok {
			t.Fatalf("claim: %v, %v", ok, err)
		}
		if _, err := db.Drain(ctx, "t", "w", 0, func([]mailbox.Message) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	release()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if !secondDone {
		secondErr = <-second
	}
	if secondErr != nil {
		t.Fatal(secondErr)
	}
	unread, err := db.Peek(ctx, "t", "w", 0)
	if err != nil {
		t.Fatal(err)
	}
	cs, err = db.WakeCandidates(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if len(unread) > 0 && len(cs) == 0 {
		t.Fatalf("unread mail %v that no run saw, and w is not a wake candidate: it passed for covered", unread)
	}
}
