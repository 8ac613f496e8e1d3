package escalate

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/slacktest"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/slack"
)

// Slack's tier limits are a budget per minute. With more asks of one kind
// awaiting than a pass's budget, every pass spends the budget on the same
// oldest asks and is refused at the same place: the asks after it must
// still be read by a later pass, not never. Here the budget is two
// reactions.get calls a window, three approvals await, and the decider's ✅
// is on the newest; each pass is a cron `resume` (a new process: a new
// client) after the window has passed.
func TestSlackRateLimitDoesNotStarveNewest(t *testing.T) {
	f, s, cl := slackFixture(t)
	ctx := context.Background()
	var asks []mailbox.Ask
	for i := 0; i < 3; i++ {
		a, err := PostSlack(ctx, f.db, cl, slacktest.Channel, SlackPeople{}, f.ask(fmt.Sprintf("w%d", i), "", mailbox.KindApproval, "Deploy?"), true)
		if err != nil {
			t.Fatal(err)
		}
		asks = append(asks, a)
	}
	newest := asks[2]
	s.React("U0ERIN", "white_check_mark", newest.SlackChannel, newest.SlackTS)
	for pass := 0; pass < 4; pass++ {
		s.Limit("reactions.get", 2, time.Hour) // a new window: two calls
		fresh, err := slack.New(slack.Options{BotToken: slacktest.BotToken, APIURL: s.APIURL()})
		if err != nil {
			t.Fatal(err)
		}
		if err := slackResumer(f, f.db, fresh).Once(ctx); err != nil {
			t.Fatalf("pass %d: %v", pass, err)
		}
	}
	if got := f.state(newest.ID); got.State == mailbox.AskAwaiting || got.DecidedBy != "U0ERIN" {
		t.Errorf("the newest approval was never read in 4 passes: ask %d is %s; stderr:\n%s", newest.ID, got.State, f.stderr.String())
	}
}
