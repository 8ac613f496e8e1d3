package mailbox_test

import (
	"context"
	"sync"
	"testing"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// TestBudgetAsks: an agent's budget is kept with its launch; a run files
// one budget ask however often and however concurrently it tries, beside
// the agent's own ask of the same run; a rejection closes it; a budget end
// is no failure.
func TestBudgetAsks(t *testing.T) { eachBackend(t, testBudgetAsks) }

func testBudgetAsks(t *testing.T, be backend) {
	ctx := context.Background()
	db, _, _ := newDB(t, be)
	a := mailbox.Agent{Team: "t", Name: "a", Type: "claude", Run: "r1", State: mailbox.StateRunning, Task: "do it", ResumeOf: "ask 1 resume 1"}
	if err := db.RecordLaunch(ctx, a); err != nil {
		t.Fatal(err)
	}
	b := mailbox.Budget{Tokens: 1000, USD: 2.5}
	if err := db.SetBudget(ctx, "t", "a", "r1", b); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Agent(ctx, "t", "a"); err != nil || got.Budget != b {
		t.Fatalf("budget = %+v, %v; want %+v", got.Budget, err, b)
	}
	// The agent's own ask in the same run does not stand in the way.
	if _, _, err := db.CreateAsk(ctx, mailbox.Ask{Team: "t", Agent: "a", Run: "r1", Kind: mailbox.KindQuestion, Question: "q?"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, ids := 0, map[int64]bool{}
	for range 8 {
		wg.Go(func() {
			ask, c, err := db.FileBudgetAsk(ctx, mailbox.Ask{Team: "t", Agent: "a", BudgetRun: "r1", Question: "budget of 1000 tokens reached on x: continue?"})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			ids[ask.ID] = true
			if c {
				created++
			}
		})
	}
	wg.Wait()
	if created != 1 || len(ids) != 1 {
		t.Fatalf("8 filings of one run's budget ask: %d created, ids %v; want 1 and 1", created, ids)
	}
	var id int64
	for id = range ids {
	}
	ask, err := db.Ask(ctx, id)
	if err != nil || ask.Kind != mailbox.KindApproval || ask.State != mailbox.AskAwaiting || ask.BudgetRun != "r1" {
		t.Fatalf("budget ask = %+v, %v", ask, err)
	}
	if held, err := db.BudgetAskAwaiting(ctx, "t", "a"); err != nil || !held {
		t.Fatalf("BudgetAskAwaiting = %v, %v; want true", held, err)
	}
	if _, err := db.DecideAsk(ctx, id, mailbox.Decision{Decision: mailbox.DecisionRejected, DecidedBy: "erin", Source: "local"}); err != nil {
		t.Fatal(err)
	}
	if err := db.CloseBudgetAsk(ctx, id); err != nil {
		t.Fatal(err)
	}
	if ask, err := db.Ask(ctx, id); err != nil || ask.ResumedRun != "r1" {
		t.Fatalf("rejected budget ask = %+v, %v; want resumed_run r1", ask, err)
	}
	if held, err := db.BudgetAskAwaiting(ctx, "t", "a"); err != nil || held {
		t.Fatalf("BudgetAskAwaiting after the decision = %v, %v; want false", held, err)
	}
	// A budget end of a re-spawn by resume is no failure.
	if err := db.SettleEnd(ctx, "t", "a", "r1", "budget", nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Agent(ctx, "t", "a"); got.RespawnFailures != 0 {
		t.Fatalf("a budget end counted as a failure: %+v", got)
	}
}
