package launch

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/text"
)

// The budget (Spec.Budget) is the supervisor's, never the agent's: it
// counts what the stream reports, and once the run has reached it, it
// records the run's one budget ask in the mailbox (mailbox.DB.FileBudgetAsk,
// unique per run), stops the agent as spawn stop does (SIGTERM to its
// tree, SIGKILL after the grace) and ends the run end=budget. The next
// resume pass posts the ask through the agent's channel and re-spawns the
// agent when a decider approves (escalate/budget.go).

// reached reports whether the stream's usage has reached the run's budget;
// s.mu must be held.
func (s *stream) reached() (string, bool) {
	if !s.budget.Set() {
		return "", false
	}
	return s.budget.Reached(mailbox.Tokens(s.r.Tokens), s.r.CostUSD)
}

// overAtEnd reports whether a run that ended on its own had reached its
// budget by its last event: a CLI that reports its usage only as a turn
// ends (codex exec: one turn a run) is caught there, the run then ends
// budget, and a decider says whether the agent goes on.
func (s *stream) overAtEnd() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, over := s.reached()
	return over
}

// budgetReached files the run's budget ask and returns the run's detail:
// the budget and what the run used ("budget of 1000 tokens reached: 1040
// tokens used").
func budgetReached(db *mailbox.DB, spec Spec, st *stream) string {
	st.mu.Lock()
	what, _ := st.reached()
	used := fmt.Sprintf("%d tokens", mailbox.Tokens(st.r.Tokens).Total())
	if st.r.CostUSD != nil {
		used += ", $" + strconv.FormatFloat(math.Round(*st.r.CostUSD*1e6)/1e6, 'f', -1, 64)
	}
	st.mu.Unlock()
	detail := what + " reached: " + used + " used"
	var ask mailbox.Ask
	created := false
	err := Retry(EndPatience, func(ctx context.Context) (err error) {
		ask, created, err = fileBudgetAsk(ctx, db, spec.Team, spec.Name, spec.Run, what)
		return err
	})
	switch {
	case err != nil:
		note(spec, "%s, but the budget ask could not be recorded: %v", detail, err)
	case created:
		note(spec, "%s; ask %d asks a decider to continue", detail, ask.ID)
	default:
		note(spec, "%s; ask %d was already filed", detail, ask.ID)
	}
	return detail
}

// fileBudgetAsk files run's one budget ask, what being the budget it
// reached in words ("budget of 1000 tokens"); a second call returns the
// first ask, created false.
func fileBudgetAsk(ctx context.Context, db *mailbox.DB, team, name, run, what string) (mailbox.Ask, bool, error) {
	a, err := db.Agent(ctx, team, name)
	if err != nil {
		return mailbox.Ask{}, false, err
	}
	return db.FileBudgetAsk(ctx, mailbox.Ask{Team: team, Agent: name, Issue: a.Issue, BudgetRun: run,
		Question: budgetQuestion(what, a), Kind: mailbox.KindApproval})
}

// budgetQuestion is the budget ask's question for agent a: "budget of 1000
// tokens reached on <its issue, or its task's first line>: continue?".
func budgetQuestion(what string, a mailbox.Agent) string {
	on := a.Issue
	if on == "" {
		on = strconv.Quote(text.FirstLine(a.Task, 80))
	}
	return fmt.Sprintf("%s reached on %s: continue?", what, on)
}
