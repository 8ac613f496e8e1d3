package escalate

import (
	"context"
	"fmt"
	"testing"

	"github.com/teamkit/teamkit/internal/slacktest"
)

// A question whose chat.postMessage reached Slack but whose answer was lost
// is found again by its metadata before it is posted again, however busy
// the channel was meanwhile: conversations.history lists the newest first,
// a page at a time, so the earlier post can lie past the pages FindPosted
// used to read (5 of 200), and a second copy was posted.
func TestPostSlackOnceInABusyChannel(t *testing.T) {
	f, s, cl := slackFixture(t)
	ctx := context.Background()
	a := f.ask("w1", "", "question", "Which colour?")
	s.Fail(slacktest.Failure{Method: "chat.postMessage", Status: 502, Count: 1, AfterCall: true})
	if _, err := PostSlack(ctx, f.db, cl, slacktest.Channel, SlackPeople{}, a, true); err == nil {
		t.Fatal("the lost response was not an error")
	}
	// The channel is busy: more than five pages of messages since.
	n := 5*200 + 1
	for i := 0; i < n; i++ {
		s.PostReply("U0DAVE", fmt.Sprintf("chatter %d", i), slacktest.Channel, "")
	}
	got, err := PostSlack(ctx, f.db, cl, slacktest.Channel, SlackPeople{}, f.state(a.ID), false)
	if err != nil {
		t.Fatal(err)
	}
	questions := 0
	for _, m := range s.Messages() {
		if m.BotID == slacktest.BotID {
			questions++
		}
	}
	if questions != 1 || got.SlackTS != s.Messages()[0].TS {
		t.Errorf("the question is in Slack %d times (ask ts %s, first %s)", questions, got.SlackTS, s.Messages()[0].TS)
	}
}
