package mailbox_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// TestQueue: a host's queue lists its queued launches oldest first, across
// teams and for that host alone; Dequeue takes a launch out once (admitted
// or cancelled), and a launch recorded again leaves the queue with its row.
func TestQueue(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		ctx := context.Background()
		db, c, _ := newDB(t, be)
		enqueue := func(team, name, run, host string, max int) {
			t.Helper()
			if err := db.Enqueue(ctx, mailbox.Agent{Team: team, Name: name, Type: "x", Run: run, Host: host}, max, nil); err != nil {
				t.Fatal(err)
			}
			c.Add(time.Second)
			if be.name == "postgres" {
				time.Sleep(time.Millisecond) // the server's clock orders them
			}
		}
		enqueue("b", "w1", "r1", "h1", 3)
		enqueue("a", "w2", "r2", "h1", 5)
		enqueue("a", "w3", "r3", "h2", 1)
		enqueue("a", "w4", "r4", "h1", 5)
		names := func(host string) (out []string) {
			t.Helper()
			q, err := db.Queue(ctx, host)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range q {
				out = append(out, e.Team+"/"+e.Name)
			}
			return out
		}
		if got := names("h1"); len(got) != 3 || got[0] != "b/w1" || got[1] != "a/w2" || got[2] != "a/w4" {
			t.Fatalf("queue of h1 = %v, want [b/w1 a/w2 a/w4]", got)
		}
		if a, err := db.Agent(ctx, "b", "w1"); err != nil || a.State != mailbox.StateQueued {
			t.Fatalf("queued agent = %+v, %v; want state queued", a, err)
		}
		if ok, err := db.Dequeue(ctx, "b", "w1", "r1", mailbox.StateStarting); err != nil || !ok {
			t.Fatalf("Dequeue = %v, %v; want true", ok, err)
		}
		if ok, err := db.Dequeue(ctx, "b", "w1", "r1", mailbox.StateExited); err != nil || ok {
			t.Fatalf("second Dequeue = %v, %v; want false", ok, err)
		}
		if a, _ := db.Agent(ctx, "b", "w1"); a.State != mailbox.StateStarting {
			t.Fatalf("admitted agent state = %s, want starting", a.State)
		}
		// Admit fills h1's free slots, oldest first, under each entry's
		// cap: w1 holds one (it is starting), so of a/w2 (cap 5) and a/w4
		// (cap 5) both fit; with holds saying none is held, h2's a/w3 (cap 1)
		// fits too.
		got, err := db.Admit(ctx, "h1", func(a mailbox.Agent) bool { return a.State != mailbox.StateQueued })
		if err != nil || len(got) != 2 || got[0].Name != "w2" || got[1].Name != "w4" {
			t.Fatalf("Admit(h1) = %+v, %v; want w2, w4", got, err)
		}
		if got, err := db.Admit(ctx, "h1", func(mailbox.Agent) bool { return true }); err != nil || len(got) != 0 {
			t.Fatalf("Admit(h1) again = %+v, %v; want none", got, err)
		}
		// A cap reached admits nothing: h2 has one queued (cap 1), and one
		// held launch recorded there.
		if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "c", Name: "busy", Type: "x", Run: "r8", Host: "h2", State: mailbox.StateRunning}); err != nil {
			t.Fatal(err)
		}
		if got, err := db.Admit(ctx, "h2", func(a mailbox.Agent) bool { return a.State == mailbox.StateRunning }); err != nil || len(got) != 0 {
			t.Fatalf("Admit(h2) at its cap = %+v, %v; want none", got, err)
		}
		if got := names("h2"); len(got) != 1 || got[0] != "a/w3" {
			t.Fatalf("queue of h2 = %v, want [a/w3]", got)
		}
		// w2 is launched again, uncapped: its queue row no longer counts.
		if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "a", Name: "w2", Type: "x", Run: "r9", Host: "h1", State: mailbox.StateStarting}); err != nil {
			t.Fatal(err)
		}
		if got := names("h1"); len(got) != 0 {
			t.Fatalf("queue of h1 = %v, want none", got)
		}
		hosted, err := db.HostAgents(ctx, "h1")
		if err != nil || len(hosted) != 3 {
			t.Fatalf("HostAgents(h1) = %d agents, %v; want 3 (w1, w2, w4 starting)", len(hosted), err)
		}
	})
}

// A launch replaces only the record its spawn found (a spawn whose lock
// the server let go must not replace another's launch): ReplaceLaunch and
// Enqueue write nothing, queue row included, once another launch was
// recorded, and say ErrRelaunched.
func TestReplaceLaunchOnlyWhatWasFound(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		ctx := context.Background()
		db, _, _ := newDB(t, be)
		launch := func(run string) mailbox.Agent {
			return mailbox.Agent{Team: "t", Name: "w1", Type: "x", Run: run, Host: "h1", State: mailbox.StateStarting}
		}
		runIs := func(want string) {
			t.Helper()
			a, err := db.Agent(ctx, "t", "w1")
			if err != nil || a.Run != want {
				t.Fatalf("record names run %q (%v); want %q", a.Run, err, want)
			}
		}
		if err := db.ReplaceLaunch(ctx, launch("r1"), nil); err != nil {
			t.Fatal(err)
		}
		// Two spawns found r1; the first replaces it, the second must not.
		found := launch("r1")
		if err := db.ReplaceLaunch(ctx, launch("r2"), &found); err != nil {
			t.Fatal(err)
		}
		if err := db.ReplaceLaunch(ctx, launch("r3"), &found); !errors.Is(err, mailbox.ErrRelaunched) {
			t.Fatalf("second replace of r1: %v; want ErrRelaunched", err)
		}
		runIs("r2")
		// Nor may a spawn that found no record replace one.
		if err := db.ReplaceLaunch(ctx, launch("r4"), nil); !errors.Is(err, mailbox.ErrRelaunched) {
			t.Fatalf("first launch over r2: %v; want ErrRelaunched", err)
		}
		runIs("r2")
		// The queue: r2 queued, then a spawn that found r1 queues r5.
		current := launch("r2")
		if err := db.Enqueue(ctx, launch("r6"), 1, &current); err != nil {
			t.Fatal(err)
		}
		// r6's agent marks ready: a refused launch leaves the mark, which
		// r6's spawn waits for; a launch recorded clears it.
		if err := db.MarkReady(ctx, "t", "w1", "r6"); err != nil {
			t.Fatal(err)
		}
		if err := db.Enqueue(ctx, launch("r5"), 1, &found); !errors.Is(err, mailbox.ErrRelaunched) {
			t.Fatalf("queue over r6: %v; want ErrRelaunched", err)
		}
		runIs("r6")
		if m, ok, err := db.Ready(ctx, "t", "w1"); err != nil || !ok || m.Run != "r6" {
			t.Fatalf("after a refused queue, mark = %+v, %v (%v); want r6's", m, ok, err)
		}
		q, err := db.Queue(ctx, "h1")
		if err != nil || len(q) != 1 || q[0].Run != "r6" {
			t.Fatalf("queue = %+v (%v); want r6's row alone", q, err)
		}
		queued := launch("r6")
		if err := db.Enqueue(ctx, launch("r7"), 1, &queued); err != nil {
			t.Fatal(err)
		}
		if m, ok, err := db.Ready(ctx, "t", "w1"); err != nil || ok {
			t.Fatalf("after r7 queued, mark = %+v, %v (%v); want none", m, ok, err)
		}
	})
}
