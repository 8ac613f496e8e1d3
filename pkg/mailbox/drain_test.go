package mailbox_test

// The drain's lease: claimed in one short transaction, written with no lock
// held, marked read in another. Each test runs its second drain (and a
// send) from inside the first drain's delivery, which is where a drain that
// held its lock would make them wait.

import (
	"context"
	"testing"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// While a drain writes, the team goes on: another drain of the same inbox
// gets the next messages, never the leased ones, and a send succeeds.
func TestDrainLeaseHolds(t *testing.T) { eachBackend(t, testDrainLeaseHolds) }

func testDrainLeaseHolds(t *testing.T, be backend) {
	ctx := context.Background()
	db, c, path := newDB(t, be)
	other := open(t, path, c)
	var all []int64
	for i := 0; i < 5; i++ {
		all = append(all, send(t, db, "t", "s", "w", "m").ID)
	}
	var b []mailbox.Message
	var during int64
	a, err := db.Drain(ctx, "t", "w", 2, func(m []mailbox.Message) error {
		if _, err := other.Drain(ctx, "t", "w", 0, keep(&b)); err != nil {
			return err
		}
		during = send(t, other, "t", "s", "w", "sent while a drain was printing").ID
		if p, _ := other.Peek(ctx, "t", "w", 0); !equalIDs(ids(p), []int64{all[0], all[1], during}) {
			t.Errorf("while leased, unread = %v; want the leased %v and the new %d", ids(p), all[:2], during)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !equalIDs(ids(a), all[:2]) || !equalIDs(ids(b), all[2:]) {
		t.Fatalf("drain A got %v while drain B got %v; want %v and %v", ids(a), ids(b), all[:2], all[2:])
	}
	for _, m := range a {
		if m.ReadAt.IsZero() {
			t.Fatalf("message %d returned without its read time", m.ID)
		}
	}
	if p, _ := db.Peek(ctx, "t", "w", 0); !equalIDs(ids(p), []int64{during}) {
		t.Fatalf("after both drains, unread = %v; want only %d", ids(p), during)
	}
	if n := count(t, raw(t, path), `SELECT count(*) FROM messages WHERE claim_token IS NOT NULL OR lease_until IS NOT NULL`); n != 0 {
		t.Fatalf("%d messages still carry a claim after their drains finished", n)
	}
}

// A lease that runs out (its drain died, or its reader is slower than the
// lease) is delivered again by the next drain: repeated, never lost; the
// slow drain's late mark changes nothing.
func TestDrainLeaseExpires(t *testing.T) { eachBackend(t, testDrainLeaseExpires) }

func testDrainLeaseExpires(t *testing.T, be backend) {
	ctx := context.Background()
	db, c, path := newDB(t, be)
	other := open(t, path, c)
	want := []int64{send(t, db, "t", "s", "w", "x").ID, send(t, db, "t", "s", "w", "y").ID}
	db.SetLease(time.Minute)
	var early, late []mailbox.Message
	a, err := db.Drain(ctx, "t", "w", 0, func([]mailbox.Message) error {
		c.Add(45 * time.Second)
		if _, err := other.Drain(ctx, "t", "w", 0, keep(&early)); err != nil {
			return err
		}
		c.Add(20 * time.Second)
		_, err := other.Drain(ctx, "t", "w", 0, keep(&late))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(early) != 0 {
		t.Fatalf("inside a 1m lease, at 45s, another drain got %v", ids(early))
	}
	if !equalIDs(ids(a), want) || !equalIDs(ids(late), want) {
		t.Fatalf("slow drain got %v, the drain after its lease ran out got %v; want %v both", ids(a), ids(late), want)
	}
	if p, _ := db.Peek(ctx, "t", "w", 0); len(p) != 0 {
		t.Fatalf("%d left unread", len(p))
	}
}

// OnClaim runs before a drain's lease commits, so that the inbox command,
// which catches signals in it, is never interrupted holding a lease it
// cannot give back: on SQLite inside the claim's transaction and only when
// there is something to lease (a drain that finds nothing never calls it);
// on PostgreSQL, whose claim is one statement, before that statement. A
// drain interrupted from there on leaves nothing leased.
func TestDrainOnClaim(t *testing.T) { eachBackend(t, testDrainOnClaim) }

func testDrainOnClaim(t *testing.T, be backend) {
	db, c, path := newDB(t, be)
	calls := 0
	db.OnClaim(func() { calls++ })
	want := 0
	if be.name == "postgres" {
		want = 1
	}
	if got, err := db.Drain(context.Background(), "t", "w", 0, keep(new([]mailbox.Message))); err != nil || len(got) != 0 || calls != want {
		t.Fatalf("an empty drain: %d messages, %v, OnClaim called %d times; want none, and %d calls", len(got), err, calls, want)
	}
	m := send(t, db, "t", "s", "w", "m")
	leased := func() int {
		return count(t, raw(t, path), `SELECT count(*) FROM messages WHERE claim_token IS NOT NULL OR lease_until IS NOT NULL`)
	}
	var leasedThen int
	if _, err := db.Drain(context.Background(), "t", "w", 0, keep(new([]mailbox.Message))); err != nil {
		t.Fatal(err)
	}
	if _, err := raw(t, path).Exec(`UPDATE messages SET read_at = NULL WHERE id = ?`, m.ID); err != nil {
		t.Fatal(err)
	}
	calls = 0
	db.OnClaim(func() { calls++; leasedThen = leased() })
	if got, err := db.Drain(context.Background(), "t", "w", 0, keep(new([]mailbox.Message))); err != nil || len(got) != 1 || calls != 1 || leasedThen != 0 {
		t.Fatalf("a drain: %d messages, %v, OnClaim called %d times, %d messages leased as it ran; want 1, one call, none leased yet", len(got), err, calls, leasedThen)
	}
	if _, err := raw(t, path).Exec(`UPDATE messages SET read_at = NULL WHERE id = ?`, m.ID); err != nil {
		t.Fatal(err)
	}
	calls = 0
	ctx, cancel := context.WithCancel(context.Background())
	db.OnClaim(func() { calls++; cancel() })
	delivered := false
	_, err := db.Drain(ctx, "t", "w", 0, func([]mailbox.Message) error { delivered = true; return nil })
	if err == nil || delivered || calls != 1 {
		t.Fatalf("a drain whose context ended in OnClaim: %v, delivered %v, OnClaim called %d times; want an error, no delivery, one call", err, delivered, calls)
	}
	if n := leased(); n != 0 {
		t.Fatalf("%d messages leased after a drain interrupted in its claim", n)
	}
	// On PostgreSQL the interrupted claim's transaction ends when the
	// server sees its connection close (database/sql closes it on the
	// context's end, on its own goroutine): until then its row lock makes
	// the next drain skip the message, which it then gets.
	other := open(t, path, c)
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := other.Drain(context.Background(), "t", "w", 0, keep(new([]mailbox.Message)))
		if err != nil || len(got) > 0 && !equalIDs(ids(got), []int64{m.ID}) {
			t.Fatalf("the next drain got %v (%v); want message %d", ids(got), err, m.ID)
		}
		if len(got) > 0 {
			break
		}
		if be.name == sqliteBackend.name || time.Now().After(deadline) {
			t.Fatalf("the next drain got nothing; want message %d", m.ID)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
