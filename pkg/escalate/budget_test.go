package escalate

import (
	"context"
	"strings"
	"testing"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// heldByBudget makes agent w1's question answered while its budget ask
// awaits, runs a pass, and wants no re-spawn: the answer waits. It returns
// the budget ask, the deciders and the resumer for what the test does next.
func heldByBudget(t *testing.T, f *fixture) (mailbox.Ask, Deciders, *Resumer) {
	t.Helper()
	ctx := context.Background()
	q := f.ask("w1", "", mailbox.KindQuestion, "Which colour?")
	b, created, err := f.db.FileBudgetAsk(ctx, mailbox.Ask{Team: "t", Agent: "w1", BudgetRun: "first-w1", Question: "budget of 10 tokens reached: continue?"})
	if err != nil || !created {
		t.Fatalf("FileBudgetAsk: %v %v", created, err)
	}
	testers, err := ParseDeciders("tester", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AnswerLocal(ctx, f.db, LocalAnswer{ID: q.ID, Decision: mailbox.DecisionAnswered, Text: "Blue", By: "tester"}); err != nil {
		t.Fatal(err)
	}
	r := f.resumer(f.db, "tester")
	if err := r.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if n := f.spawnCount(); n != 0 {
		t.Fatalf("%d re-spawns while the budget ask awaits; want 0", n)
	}
	return b, testers, r
}

// TestBudgetAskHoldsOtherAnswers: while an agent's budget ask awaits a
// decision, an answer to its own question waits (noted), and once the
// budget ask is approved the agent is re-spawned with "budget renewed".
func TestBudgetAskHoldsOtherAnswers(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	b, testers, r := heldByBudget(t, f)
	if !strings.Contains(f.stderr.String(), "t/w1 awaits a decision on its budget; the answer waits") {
		t.Errorf("no note of the wait: %q", f.stderr.String())
	}
	if _, err := AnswerLocal(ctx, f.db, LocalAnswer{ID: b.ID, Decision: mailbox.DecisionApproved, By: "tester", Deciders: testers}); err != nil {
		t.Fatal(err)
	}
	if err := r.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if f.spawnCount() == 0 {
		t.Fatal("no re-spawn after the approval")
	}
	found := false
	for _, s := range f.spawns {
		found = found || strings.Contains(s.Task, "budget renewed: run first-w1 was stopped when it reached its budget, and tester approved going on.")
	}
	if !found {
		t.Errorf("no re-spawn says budget renewed: %+v", f.spawns)
	}
}

// TestBudgetRejectedStaysStoppedDespiteAnswer: a decider rejected going on
// past the budget, so "the agent stays stopped ... nothing re-spawns it until
// a person runs spawn" (README, Budgets). An answer to another of its asks,
// held while the budget ask awaited, must not re-spawn it after the
// rejection either.
func TestBudgetRejectedStaysStoppedDespiteAnswer(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	b, testers, r := heldByBudget(t, f)
	if _, err := AnswerLocal(ctx, f.db, LocalAnswer{ID: b.ID, Decision: mailbox.DecisionRejected, By: "tester", Deciders: testers}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := r.Pass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.spawnCount(); n != 0 {
		t.Fatalf("the budget was rejected, yet w1 was re-spawned %d time(s): %+v\nstderr: %s", n, f.spawns, f.stderr.String())
	}
}
