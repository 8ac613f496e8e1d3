package escalate

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A mailbox that fails is tried again from DBRetryStart, doubling up to the
// interval, not an interval (or more) later: an answer that arrived during
// the outage is read soon after it ends.
func TestWatchRetriesTheMailboxSoon(t *testing.T) {
	f := newFixture(t)
	broken := f.open()
	broken.Close()
	r := f.resumer(broken, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var waits []time.Duration
	r.Sleep = func(ctx context.Context, d time.Duration) error {
		if waits = append(waits, d); len(waits) == 9 {
			cancel()
		}
		return ctx.Err()
	}
	if err := r.Watch(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	s := time.Second
	want := []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s, time.Minute, time.Minute, time.Minute}
	if fmt.Sprint(waits) != fmt.Sprint(want) {
		t.Errorf("waits %v, want %v", waits, want)
	}
	if !strings.Contains(f.stderr.String(), "cannot read the pause switch of team t, so treating it as paused") {
		t.Errorf("stderr %q", f.stderr.String())
	}
}
