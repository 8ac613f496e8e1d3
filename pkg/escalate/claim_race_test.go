package escalate

import (
	"context"
	"testing"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// TestClaimRacingWatchDeliverReportsOnce: under --watch, the answers given
// meanwhile are delivered every interval while the channels are read
// (pass.read). When that delivery carries (and settles) an answer a
// channel's reader has just recorded, before the reader goes on from its
// compare-and-set, the reader must not leave a fresh resume intent behind:
// the next pass would report the same answer resumed a second time
// (status=recovered).
func TestClaimRacingWatchDeliverReportsOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a := f.ask("w1", issue, mailbox.KindQuestion, "Which colour?")
	f.comment("carol", "COLLABORATOR", "Blue.")
	r := f.resumer(f.db, "")
	// A --watch pass: the interval's deliveries run while GitHub is read.
	r.watching, r.interval = true, 20*time.Millisecond
	r.Crash = func(point string) {
		if point != CrashAfterDecide {
			return
		}
		// The reader won the compare-and-set; the interval's delivery
		// gets there first (a slow moment of the reader's goroutine).
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			got, err := f.db.Ask(ctx, a.ID)
			in, ierr := f.db.ResumeIntents(ctx, "t")
			if err == nil && ierr == nil && got.ResumedRun != "" && len(in) == 0 {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Error("the interval's delivery never carried the answer")
	}
	if err := r.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if n := f.spawnCount(); n != 1 {
		t.Fatalf("%d re-spawns, want 1", n)
	}
	r.Crash = nil
	if err := r.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.resumed) != 1 {
		t.Errorf("ask %d reported resumed %d times, want once: %+v", a.ID, len(f.resumed), f.resumed)
	}
}
