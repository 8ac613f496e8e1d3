package slack

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/slacktest"
)

func standIn(t *testing.T) (*slacktest.Server, *Client, Posted) {
	t.Helper()
	s := slacktest.NewServer()
	t.Cleanup(s.Close)
	c, err := New(Options{BotToken: slacktest.BotToken, APIURL: s.APIURL()})
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.Post(context.Background(), slacktest.Channel, "Which colour?", Meta{AskID: 1, Team: "t", Agent: "w1", Run: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	return s, c, q
}

func calls(s *slacktest.Server, method string) (n int) {
	for _, r := range s.Requests() {
		if r.Method == method {
			n++
		}
	}
	return n
}

// Reactions lists everyone behind a reaction (full=true: the stand-in, like
// Slack, lists only some without it), and a removed one is gone.
func TestReactionsAsTheyStand(t *testing.T) {
	s, c, q := standIn(t)
	for i := 0; i < 5; i++ {
		s.React(fmt.Sprintf("U%d", i), "white_check_mark", q.Channel, q.TS)
	}
	s.React("U9", "x", q.Channel, q.TS)
	s.Unreact("U9", "x", q.Channel, q.TS)
	s.Unreact("U0", "white_check_mark", q.Channel, q.TS)
	rs, err := c.Reactions(context.Background(), q.Channel, q.TS)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Name != "white_check_mark" || fmt.Sprint(rs[0].Users) != "[U1 U2 U3 U4]" {
		t.Fatalf("reactions %+v", rs)
	}
	if _, err := c.Reactions(context.Background(), q.Channel, "1.000001"); err == nil {
		t.Error("a missing message had reactions")
	}
}

// Replies pages through a long thread, stops at the first reply stop
// accepts (reading no further page), and reads replies as they stand.
func TestRepliesAsTheyStand(t *testing.T) {
	s, c, q := standIn(t)
	ctx := context.Background()
	var edited, deleted string
	for i := 0; i < 2*repliesPageSize+50; i++ {
		ts, _ := s.PostReply("U1", fmt.Sprintf("reply %d", i), q.Channel, q.TS)
		switch i {
		case 3:
			edited = ts
		case 4:
			deleted = ts
		}
	}
	s.EditReply(q.Channel, edited, "reply 3, edited")
	s.DeleteReply(q.Channel, deleted)
	all, err := c.Replies(ctx, q.Channel, q.TS, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2*repliesPageSize+49 || all[3].Text != "reply 3, edited" || all[4].Text != "reply 5" || calls(s, "conversations.replies") != 3 {
		t.Fatalf("%d replies, %d calls: %+v", len(all), calls(s, "conversations.replies"), all[:6])
	}
	got, err := c.Replies(ctx, q.Channel, q.TS, func(r Reply) bool { return r.Text == "reply 7" })
	if err != nil || len(got) != 7 || got[6].Text != "reply 7" || got[6].User != "U1" || calls(s, "conversations.replies") != 4 {
		t.Fatalf("stopped: %d replies, %d calls, %v", len(got), calls(s, "conversations.replies"), err)
	}
}

// A 429 whose Retry-After is longer than MaxRateWait comes back at once as
// *RateLimitedError, and the method is not called again until it passed; a
// short one is waited out.
func TestRateLimitHold(t *testing.T) {
	s, c, q := standIn(t)
	ctx := context.Background()
	s.Limit("reactions.get", 1, time.Minute)
	if _, err := c.Reactions(ctx, q.Channel, q.TS); err != nil {
		t.Fatal(err)
	}
	_, err := c.Reactions(ctx, q.Channel, q.TS)
	var rl *RateLimitedError
	if !errors.As(err, &rl) || rl.Method != "reactions.get" || rl.RetryAfter <= MaxRateWait || calls(s, "reactions.get") != 2 {
		t.Fatalf("over budget: %v, %d calls", err, calls(s, "reactions.get"))
	}
	if _, err := c.Reactions(ctx, q.Channel, q.TS); !errors.As(err, &rl) || calls(s, "reactions.get") != 2 {
		t.Fatalf("called again within the Retry-After: %v, %d calls", err, calls(s, "reactions.get"))
	}
	// Other methods are not held.
	if _, err := c.Replies(ctx, q.Channel, q.TS, nil); err != nil {
		t.Fatal(err)
	}
	s.Fail(slacktest.Failure{Method: "conversations.replies", Status: 429, RetryAfter: 1, Count: 1})
	if _, err := c.Replies(ctx, q.Channel, q.TS, nil); err != nil || calls(s, "conversations.replies") != 3 {
		t.Fatalf("a 1s Retry-After was not waited out: %v", err)
	}
}
