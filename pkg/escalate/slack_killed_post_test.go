package escalate

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/slacktest"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/slack"
)

// killedAfterPost is `ask` SIGKILLed the instant chat.postMessage returned:
// the message is in Slack, and nothing after it runs (no slack_ts, no
// slack_error is recorded).
type killedAfterPost struct {
	Slack
	posted chan struct{}
}

func (k killedAfterPost) Post(ctx context.Context, channel, text string, m slack.Meta) (slack.Posted, error) {
	k.Slack.Post(ctx, channel, text, m)
	close(k.posted)
	runtime.Goexit() // the process is gone: nothing after this line runs
	panic("unreachable")
}

// An `ask` killed (SIGKILL, OOM, the agent's whole process group stopped)
// between posting its question to Slack and recording the message on the
// ask leaves the ask with neither slack_ts nor slack_error. The Slack
// channel holds only asks with one of them, so no resume pass ever reads
// that thread (nor looks for the message by its metadata): a listed
// answerer's reply in it never reaches the agent. (Killed just before the
// post, the same ask is never posted to Slack at all.)
func TestAskKilledMidSlackPostKeepsAnswer(t *testing.T) {
	f, s, cl := slackFixture(t)
	ctx := context.Background()
	f.agent("w1", "")
	a, created, err := Record(ctx, f.db, mailbox.Ask{Team: "t", Agent: "w1", Run: "first-w1", Kind: mailbox.KindQuestion, Question: "Which colour?"})
	if err != nil || !created {
		t.Fatal(err)
	}
	posted := make(chan struct{})
	ch := &SlackChannel{Client: func() (Slack, error) { return killedAfterPost{Slack: cl, posted: posted}, nil }, Channel: slacktest.Channel}
	go ch.Post(ctx, f.db, a, created) // what `ask` runs, fresh
	select {
	case <-posted:
	case <-time.After(60 * time.Second):
		t.Fatal("never posted")
	}
	q, ok := s.LastQuestion()
	if !ok {
		t.Fatal("no question in Slack")
	}
	// U0CAROL, a listed answerer, answers in the thread.
	s.PostReply("U0CAROL", "Blue.", q.Channel, q.TS)

	r := slackResumer(f, f.db, cl)
	for i := 0; i < 2; i++ {
		if err := r.Once(ctx); err != nil {
			t.Logf("pass %d: %v", i, err)
		}
	}
	got := f.state(a.ID)
	if got.State != mailbox.AskAnswered || f.spawnCount() != 1 {
		t.Errorf("U0CAROL's answer in Slack was never read: ask %d is %s (slack_ts %q, slack_error %q), %d re-spawns; stderr %q",
			a.ID, got.State, got.SlackTS, got.SlackError, f.spawnCount(), f.stderr.String())
	}
}
