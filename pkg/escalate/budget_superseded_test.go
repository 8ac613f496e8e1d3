package escalate

import (
	"testing"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// A budget ask about run r1 is superseded once a person has launched the
// agent again, and stays so when a resume pass has since re-spawned that
// person's run (its park ended: unpark holds no re-spawn for a budget
// ask): the agent's record then names resume's launch (ResumeOf set), but
// not this ask's. Only this ask's own launch (a pass that crashed after
// recording it) is no supersession.
func TestBudgetSuperseded(t *testing.T) {
	a := mailbox.Ask{ID: 7, BudgetRun: "r1"}
	for _, c := range []struct {
		why  string
		ag   mailbox.Agent
		want bool
	}{
		{"the budget run is still the agent's", mailbox.Agent{Run: "r1"}, false},
		{"a person's spawn", mailbox.Agent{Run: "r2"}, true},
		{"a park's re-spawn of the person's run", mailbox.Agent{Run: "r3", ResumeOf: ParkKey("r2")}, true},
		{"another ask's re-spawn of the person's run", mailbox.Agent{Run: "r3", ResumeOf: ResumeKey(9, time.Unix(5, 0))}, true},
		{"this ask's own launch", mailbox.Agent{Run: "r4", ResumeOf: ResumeKey(7, time.Unix(5, 0))}, false},
	} {
		if got := budgetSuperseded(a, c.ag); got != c.want {
			t.Errorf("%s (run %s, resume_of %q): budgetSuperseded = %v, want %v", c.why, c.ag.Run, c.ag.ResumeOf, got, c.want)
		}
	}
}
