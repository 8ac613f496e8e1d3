package mailbox

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
)

// Budget is what each run of an agent may use before its supervisor stops
// it and asks a decider whether to go on: Tokens counts every token the
// model reported (input, output, cache read and cache write: Tokens.Total,
// the TOKENS column of spawn list), USD the cost the CLI reported (a CLI
// that reports none never trips it). 0 is no limit.
type Budget struct {
	Tokens int64   `json:"tokens,omitempty"`
	USD    float64 `json:"usd,omitempty"`
}

// Set reports whether b limits anything.
func (b Budget) Set() bool { return b.Tokens > 0 || b.USD > 0 }

// Reached reports whether a run that used t and cost (nil: not reported)
// has reached b, and which limit, in words ("budget of 1000 tokens").
func (b Budget) Reached(t Tokens, cost *float64) (string, bool) {
	switch {
	case b.Tokens > 0 && t.Total() >= b.Tokens:
		return fmt.Sprintf("budget of %d tokens", b.Tokens), true
	// A cost summed from a CLI's reports carries float noise (ten $0.10
	// steps make 0.9999999999999999): a cost within a billionth of the
	// budget has reached it.
	case b.USD > 0 && cost != nil && *cost >= b.USD*(1-1e-9):
		return "budget of $" + strconv.FormatFloat(b.USD, 'f', -1, 64), true
	}
	return "", false
}

// SetBudget records b with the agent's launch run, so that every re-spawn
// of the agent keeps it.
func (d *DB) SetBudget(ctx context.Context, team, name, run string, b Budget) error {
	_, err := d.db.ExecContext(ctx, `UPDATE agents SET budget_tokens = ?, budget_usd = ? WHERE team = ? AND name = ? AND run = ?`,
		b.Tokens, b.USD, team, name, run)
	return d.fail("record the agent's budget", err)
}

// FileBudgetAsk records a (an approval whose BudgetRun is set) as
// awaiting, once per run: a second call for the same run (a supervisor
// started again, a stream reporting past the limit) returns the first ask
// with created=false. Nothing is posted here: the resume pass posts it
// through the agent's channel (escalate/budget.go).
func (d *DB) FileBudgetAsk(ctx context.Context, a Ask) (out Ask, created bool, err error) {
	err = d.inTx(ctx, "record the budget ask", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`INSERT INTO asks (team, agent, run, issue, kind, question, state, created_at, budget_run)
			 VALUES (?, ?, '', ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			a.Team, a.Agent, a.Issue, KindApproval, a.Question, AskAwaiting, nanos(d.now()), a.BudgetRun)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		created = n == 1
		out, err = scanAsk(tx.QueryRowContext(ctx, `SELECT `+askCols+` FROM asks WHERE team = ? AND agent = ? AND budget_run = ?`,
			a.Team, a.Agent, a.BudgetRun))
		return err
	})
	return out, created, err
}

// BudgetAskAwaiting reports whether the agent has a budget ask awaiting a
// decision: nothing re-spawns it meanwhile.
func (d *DB) BudgetAskAwaiting(ctx context.Context, team, name string) (bool, error) {
	var n int
	err := d.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM asks WHERE team = ? AND agent = ? AND budget_run != '' AND state = ?`,
		team, name, AskAwaiting).Scan(&n)
	return n > 0, d.fail("read the agent's budget asks", err)
}

// CloseBudgetAsk settles rejected budget ask id: its answer is delivered
// to the run it was about, which stays stopped, and no pass re-spawns it.
func (d *DB) CloseBudgetAsk(ctx context.Context, id int64) error {
	_, err := d.db.ExecContext(ctx, `UPDATE asks SET resumed_run = budget_run WHERE id = ? AND budget_run != '' AND resumed_run = ''`, id)
	return d.fail("close the budget ask", err)
}
