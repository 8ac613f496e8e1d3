package escalate

import (
	"context"
	"testing"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// TestBudgetRejectedStaysStoppedDespiteAnswer: a decider rejected going on
// past the budget, so "the agent stays stopped ... nothing re-spawns it until
// a person runs spawn" (README, Budgets). An answer to another of its asks,
// held while the budget ask awaited, must not re-spawn it after the
// rejection either.
func TestBudgetRejectedStaysStoppedDespiteAnswer(t *testing.T) {
	f := newFixture(t)
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
