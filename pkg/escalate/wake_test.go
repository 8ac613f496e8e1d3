package escalate

import (
	"testing"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/runstream"
)

// TestWakeable: only a wake agent whose last run ended normally, here, with
// no human awaited, may be woken.
func TestWakeable(t *testing.T) {
	zero, three, term := 0, 3, 143
	exited := func(code *int) mailbox.Agent {
		return mailbox.Agent{Name: "w", Wake: mailbox.WakeMail, Host: "h1", State: mailbox.StateExited, ExitCode: code}
	}
	ended := func(end string) *mailbox.RunRecord { return &mailbox.RunRecord{End: end} }
	for _, c := range []struct {
		name  string
		a     mailbox.Agent
		rec   *mailbox.RunRecord
		asked bool
		want  bool
	}{
		{"done", exited(&zero), ended(runstream.EndDone), false, true},
		{"exit 0, no record", exited(&zero), nil, false, true},
		{"exit 0, run record not ended", exited(&zero), ended(""), false, true},
		{"not a wake agent", mailbox.Agent{Name: "w", Host: "h1", State: mailbox.StateExited, ExitCode: &zero}, nil, false, false},
		{"stopped", exited(&term), ended(runstream.EndStopped), false, false},
		{"stopped with code 0", exited(&zero), ended(runstream.EndStopped), false, false},
		{"crashed", exited(&three), ended(runstream.EndCrashed), false, false},
		{"failed-auth", exited(&zero), ended(runstream.EndFailedAuth), false, false},
		{"exit 3, no record", exited(&three), nil, false, false},
		{"exit unknown", exited(nil), nil, false, false},
		{"awaiting a human", exited(&zero), ended(runstream.EndDone), true, false},
		{"running", mailbox.Agent{Name: "w", Wake: mailbox.WakeMail, Host: "h1", State: mailbox.StateRunning}, nil, false, false},
		{"on another host", mailbox.Agent{Name: "w", Wake: mailbox.WakeMail, Host: "h2", State: mailbox.StateExited, ExitCode: &zero}, nil, false, false},
		{"parked", parked(exited(&zero)), ended(runstream.EndDone), false, false},
		{"failing", failing(exited(&zero)), ended(runstream.EndDone), false, false},
	} {
		if got := wakeable(c.a, c.rec, c.asked, "h1", wakeNow); got != c.want {
			t.Errorf("%s: wakeable = %v, want %v", c.name, got, c.want)
		}
	}
}

// wakeNow is the time of TestWakeable's cases; parked and failing give an agent
// a park that ends after it, and the failed re-spawns that make it failing.
var wakeNow = time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC)

func parked(a mailbox.Agent) mailbox.Agent {
	until := wakeNow.Add(time.Minute)
	a.ParkedUntil = &until
	return a
}

func failing(a mailbox.Agent) mailbox.Agent {
	a.RespawnFailures = mailbox.FailingAfter
	return a
}
