package spawn_test

import (
	"strings"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/command/commandtest"
)

// Finding 2. spawn log --follow "returns when the run ends"; for an agent
// waiting in the queue it fails at once instead (exit 1), saying the log
// may have been pruned: there is no log yet.
func TestFollowAQueuedAgent(t *testing.T) {
	l, run := queueBehind(t)
	done := make(chan commandtest.Result, 1)
	go func() { done <- l.Run("log", team, "w2", "--follow") }()
	l.Want(0, "stop", team, "w1")
	l.waitState("w2", "running", "ready")
	l.Want(0, "stop", team, "w2")
	select {
	case r := <-done:
		if r.Code != 0 || !strings.Contains(r.Stdout, "run "+run+" exited with code") {
			t.Errorf("spawn log %s w2 --follow, begun while w2 was queued: exit %d, stdout %q, stderr %q; want its run's log to its end", team, r.Code, r.Stdout, r.Stderr)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("spawn log --follow did not return 2 minutes after the run ended")
	}
}
