package mailbox_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// TestParks: a run's limit end parks its agent (until the reset, else a
// backoff doubling from 1 min to 1 h), counted once per run; failed
// re-spawns by resume are counted and a person's launch clears them; of
// many concurrent claims on one park exactly one wins.
func TestParks(t *testing.T) { eachBackend(t, testParks) }

func testParks(t *testing.T, be backend) {
	ctx := context.Background()
	db, _, _ := newDB(t, be)
	launch := func(run, resumeOf string) mailbox.Agent {
		t.Helper()
		a := mailbox.Agent{Team: "t", Name: "a", Type: "claude", Run: run, State: mailbox.StateRunning, Task: "do it", ResumeOf: resumeOf}
		if err := db.RecordLaunch(ctx, a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	read := func() mailbox.Agent {
		t.Helper()
		a, err := db.Agent(ctx, "t", "a")
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	settle := func(run, end string, resets *time.Time) {
		t.Helper()
		if err := db.SettleEnd(ctx, "t", "a", run, end, resets); err != nil {
			t.Fatal(err)
		}
	}

	// A reset ahead of both clocks: the tests' SQLite clock and
	// PostgreSQL's own.
	reset := time.Now().UTC().Add(240 * time.Hour).Truncate(time.Second)
	launch("r1", "")
	settle("r1", "usage-limit", &reset)
	settle("r1", "usage-limit", &reset) // a retried write counts once
	if a := read(); a.ParkedUntil == nil || !a.ParkedUntil.Equal(reset) || a.ParkBackoff != 0 || a.LimitEnds != 1 || a.RespawnFailures != 0 {
		t.Fatalf("after a limit end with a reset: %+v", a)
	}

	// No reset: the second limit end in a row backs off 2 min, and says so.
	// A limit end of a re-spawn extends the park: it is no failure.
	launch("r2", "park of run r1")
	settle("r2", "usage-limit", nil)
	if a := read(); a.ParkBackoff != 2*time.Minute || a.LimitEnds != 2 || a.RespawnFailures != 0 || a.ParkedUntil == nil {
		t.Fatalf("after a limit end without a reset: %+v", a)
	}
	launch("r2b", "park of run r2")
	settle("r2b", "usage-limit", nil)
	if a := read(); a.ParkBackoff != 4*time.Minute || a.LimitEnds != 3 || a.RespawnFailures != 0 || a.ParkedUntil == nil {
		t.Fatalf("after a third limit end without a reset: %+v", a)
	}

	// Three failed re-spawns: failing. A rate limit without a reset does
	// not park, and counts.
	launch("r3", "park of run r2b")
	settle("r3", "rate-limited", nil)
	launch("r3b", "ask 1 resume 1")
	settle("r3b", "model-error", nil)
	launch("r4", "ask 2 resume 1")
	settle("r4", "crashed", nil)
	if a := read(); a.ParkedUntil != nil || a.LimitEnds != 0 || a.RespawnFailures != 3 {
		t.Fatalf("after three failed re-spawns: %+v", a)
	}
	// The end of a run the record no longer names changes nothing.
	launch("r5", "")
	settle("r4", "usage-limit", &reset)
	if a := read(); a.ParkedUntil != nil || a.RespawnFailures != 0 {
		t.Fatalf("a person's launch, then a stale end: %+v", a)
	}
	launch("r6", "ask 1 resume 1")
	settle("r6", "done", nil)
	if a := read(); a.RespawnFailures != 0 {
		t.Fatalf("a re-spawn that ended done: %+v", a)
	}
	// A reset already past when the run ended is taken once (the limit
	// may be over); past again on the next limit end in a row, it is
	// backed off.
	past := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	launch("r6a", "")
	settle("r6a", "usage-limit", &past)
	if a := read(); a.ParkedUntil == nil || !a.ParkedUntil.Equal(past) || a.ParkBackoff != 0 || a.LimitEnds != 1 {
		t.Fatalf("after a first limit end with a past reset: %+v", a)
	}
	launch("r6b", "")
	settle("r6b", "usage-limit", &past)
	if a := read(); a.ParkedUntil == nil || a.ParkedUntil.Equal(past) || a.ParkBackoff != 2*time.Minute || a.LimitEnds != 2 {
		t.Fatalf("after a second limit end with a past reset: %+v", a)
	}
	launch("r6c", "")
	settle("r6c", "done", nil)

	// Concurrent claims on one park: one wins; a launch clears the park.
	launch("r7", "")
	settle("r7", "usage-limit", &reset)
	parked := read()
	var wg sync.WaitGroup
	wins := make(chan string, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run := "claim" + string(rune('a'+i))
			ok, err := db.ClaimPark(ctx, parked, run)
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins <- run
			}
		}()
	}
	wg.Wait()
	close(wins)
	var won []string
	for w := range wins {
		won = append(won, w)
	}
	if len(won) != 1 {
		t.Fatalf("claims won: %v, want exactly one", won)
	}
	if a := read(); a.ParkClaim != won[0] || a.ParkClaimedAt == nil {
		t.Fatalf("claim recorded: %+v", a)
	}
	if ok, err := db.ReleasePark(ctx, parked, "other"); err != nil || ok {
		t.Fatalf("release by a loser: %v %v", ok, err)
	}
	if ok, err := db.ReleasePark(ctx, parked, won[0]); err != nil || !ok {
		t.Fatalf("release by the winner: %v %v", ok, err)
	}
	launch(won[0], "park of run r7")
	if a := read(); a.ParkedUntil != nil || a.ParkClaim != "" {
		t.Fatalf("a launch should end the park: %+v", a)
	}
}

// TestBackoff: 1 min doubling, capped at 1 h.
func TestBackoff(t *testing.T) {
	for n, want := range map[int]time.Duration{1: time.Minute, 2: 2 * time.Minute, 3: 4 * time.Minute, 6: 32 * time.Minute, 7: time.Hour, 40: time.Hour} {
		if got := mailbox.Backoff(n); got != want {
			t.Errorf("Backoff(%d) = %s, want %s", n, got, want)
		}
	}
}
