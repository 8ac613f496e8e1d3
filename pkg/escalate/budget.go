package escalate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/roster"
)

// A budget ask is filed by the supervisor of a run that reached its budget
// (launch/budget.go): an approval recorded in the mailbox, once per run
// (mailbox.DB.FileBudgetAsk), and posted by the next resume pass, never by
// the supervisor. The pass already holds the channels' clients, their
// health and backoff, and posts exactly once what never reached its
// channel (GitHub's marker, Slack's post record): a supervisor that cannot
// reach GitHub, or dies, leaves an ask the next pass posts, where a
// supervisor posting itself would need all of that again and could lose
// the post in an outage. The ask goes where the agent's own ask would: its
// issue (GitHub), else the local channel; Slack too when it is configured.
// It is an approval like any other: only a named decider's explicit token
// decides it, and nothing else does (fail closed). Approved, the agent is
// re-spawned like any answered ask, with the same budget (recorded with
// it) counted afresh and BudgetTask as what is new; rejected, it stays
// stopped (CloseBudgetAsk). While it awaits, nothing re-spawns the agent.

// SlackPending is the Slack post record of a budget ask not yet posted
// there: with it the Slack channel holds the ask and its Find posts it.
const SlackPending = "not posted yet: resume posts budget asks"

// postBudgetAsks marks the awaiting budget asks that no pass has posted to
// Slack yet as Slack's to post (SlackPending), when Slack is configured;
// GitHub's Find posts them on its own (they hold no comment yet).
func (p *pass) postBudgetAsks(awaiting []mailbox.Ask) error {
	slack := false
	for _, ch := range p.r.Channels {
		if sc, ok := ch.(*SlackChannel); ok && sc.Client != nil && sc.Channel != "" {
			slack = true
		}
	}
	if !slack {
		return nil
	}
	for i, a := range awaiting {
		if a.BudgetRun == "" || a.SlackTS != "" || a.SlackError != "" {
			continue
		}
		if err := p.r.DB.SetAskSlackError(p.ctx, a.ID, SlackPending); err != nil {
			return err
		}
		awaiting[i].SlackError = SlackPending
	}
	return nil
}

// respawnable says whether agent ag may be re-spawned now with the answer
// to ask a: roster.Respawnable, and not while it has a budget ask awaiting
// a decision (a's own excepted).
func (p *pass) respawnable(ag mailbox.Agent, a mailbox.Ask, now time.Time) (bool, string, error) {
	if ok, why := roster.Respawnable(ag, now); !ok {
		return false, why, nil
	}
	if a.BudgetRun != "" {
		return true, "", nil
	}
	held, err := p.r.DB.BudgetAskAwaiting(p.ctx, a.Team, a.Agent)
	if err != nil {
		return false, "", err
	}
	if held {
		return false, fmt.Sprintf("%s/%s awaits a decision on its budget", a.Team, a.Agent), nil
	}
	// A decider rejected going on past the budget of the agent's last run:
	// it stays stopped until a person spawns it (a new run), and nothing
	// else re-spawns it meanwhile.
	answered, err := p.r.DB.Asks(p.ctx, a.Team, mailbox.AskAnswered)
	if err != nil {
		return false, "", err
	}
	for _, b := range answered {
		if b.Agent == ag.Name && b.BudgetRun != "" && b.BudgetRun == ag.Run && b.Decision == mailbox.DecisionRejected {
			return false, fmt.Sprintf("%s/%s was stopped at its budget and %s rejected going on; it stays stopped until a person spawns it",
				a.Team, a.Agent, safeLogin(b.DecidedBy)), nil
		}
	}
	return true, "", nil
}

// budgetRejected settles rejected budget ask a: the agent stays stopped.
func (p *pass) budgetRejected(a mailbox.Ask) error {
	return p.closeBudget(a, Resumed{Status: StatusStopped, Run: a.BudgetRun},
		"ask %d: %s rejected going on past the budget; %s/%s stays stopped until a person spawns it", a.ID, safeLogin(a.DecidedBy), a.Team, a.Agent)
}

// closeBudget settles budget ask a with nothing re-spawned: closed, noted
// (format, args), and reported as res.
func (p *pass) closeBudget(a mailbox.Ask, res Resumed, format string, args ...any) error {
	db, ctx := p.r.DB, context.WithoutCancel(p.ctx)
	if err := db.CloseBudgetAsk(ctx, a.ID); err != nil {
		return err
	}
	now, err := db.Ask(ctx, a.ID)
	if err != nil {
		return err
	}
	p.r.note(format, args...)
	return p.settle(now, res)
}

// budgetSuperseded reports whether budget ask a is about a run its agent ag
// has since left behind: a person launched ag again (spawn; a launch by
// resume records what it resumes). Nothing else launches ag while a awaits.
func budgetSuperseded(a mailbox.Ask, ag mailbox.Agent) bool {
	return a.BudgetRun != "" && ag.Run != a.BudgetRun && ag.ResumeOf == ""
}

// settleSuperseded settles budget ask a, approved after its agent ag was
// launched again (a person's spawn): the run it was about is no longer the
// agent's, so there is nothing to renew and nothing is re-spawned.
func (p *pass) settleSuperseded(a mailbox.Ask, ag mailbox.Agent) error {
	return p.closeBudget(a, Resumed{Status: StatusSuperseded, Run: ag.Run},
		"ask %d: %s/%s was launched again since run %s stopped at its budget; the approval renews nothing", a.ID, a.Team, a.Agent, a.BudgetRun)
}

// StatusSuperseded is the status of a budget ask approved after its agent
// was launched again: nothing was re-spawned.
const StatusSuperseded = "superseded"

// StatusStopped is the status of a budget ask's rejection: nothing was
// re-spawned.
const StatusStopped = "stopped"

// BudgetTask is the task an agent is re-spawned with once a decider
// approved its budget ask a: its task, then what is new, "budget renewed".
// No text a person wrote enters it.
func BudgetTask(task string, a mailbox.Ask) string {
	var b strings.Builder
	if t := strings.TrimRight(task, "\n"); t != "" {
		b.WriteString(t)
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "### Budget renewed (teamkit ask %d)\n\n", a.ID)
	fmt.Fprintf(&b, "budget renewed: run %s was stopped when it reached its budget, and %s approved going on. "+
		"This run has the same budget again, counted from zero. Carry on with your task.\n", a.BudgetRun, safeLogin(a.DecidedBy))
	return b.String()
}
