package mailbox_test

import (
	"context"
	"errors"
	"testing"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

func TestSlack(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		db, _, _ := newDB(t, be)
		testSlack(t, db)
	})
}

// testSlack: an ask's Slack message is recorded once and finds the ask.
func testSlack(t *testing.T, db *mailbox.DB) {
	ctx := context.Background()
	a, _, err := db.CreateAsk(ctx, mailbox.Ask{Team: "t", Agent: "w1", Run: "r1", Kind: mailbox.KindQuestion, Question: "Which colour?"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AskBySlackMessage(ctx, "", ""); !errors.Is(err, mailbox.ErrNotFound) {
		t.Fatalf("an unposted ask was found by an empty ts: %v", err)
	}
	if err := db.SetAskSlackError(ctx, a.ID, "slack chat.postMessage: HTTP 503"); err != nil {
		t.Fatal(err)
	}
	if ok, err := db.SetAskSlackPosted(ctx, a.ID, "C1", "1764000000.000100"); !ok || err != nil {
		t.Fatalf("first post: %v %v", ok, err)
	}
	if ok, err := db.SetAskSlackPosted(ctx, a.ID, "C1", "1764000009.000100"); ok || err != nil {
		t.Fatalf("second post recorded: %v %v", ok, err)
	}
	db.SetAskSlackError(ctx, a.ID, "late error") // a posted ask keeps no error
	got, err := db.AskBySlackMessage(ctx, "C1", "1764000000.000100")
	if err != nil || got.ID != a.ID || got.SlackChannel != "C1" || got.SlackTS != "1764000000.000100" || got.SlackError != "" {
		t.Fatalf("by message: %+v %v", got, err)
	}
	if _, err := db.AskBySlackMessage(ctx, "C2", "1764000000.000100"); !errors.Is(err, mailbox.ErrNotFound) {
		t.Fatalf("another channel: %v", err)
	}

	if won, err := db.DecideAsk(ctx, a.ID, mailbox.Decision{Answer: "Blue", DecidedBy: "U1", Decision: mailbox.DecisionAnswered, Source: "slack:C1/x"}); !won || err != nil {
		t.Fatal(won, err)
	}
	if err := db.ClearSlackEvents(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
}
