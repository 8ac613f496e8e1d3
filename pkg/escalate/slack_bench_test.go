package escalate

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/slacktest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// BenchmarkSlackReactionToRespawn is how long a decider's ✅ takes to reach
// a re-spawn with a watching resume whose interval is an hour: the event
// over Socket Mode, its ack after the store, the wake, the pass, the
// compare-and-set and the (recorded, not launched) spawn. Figures in
// docs/BENCHMARKS.md.
func BenchmarkSlackReactionToRespawn(b *testing.B) {
	f, s, cl := slackFixture(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wake := make(chan struct{}, 1)
	r := slackResumer(f, f.db, cl)
	r.Wake = wake
	go cl.Listen(ctx, SlackDoorbell(f.db, "t", func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}), func(string, ...any) {})
	go r.Watch(ctx, time.Hour)
	waitSlack(b, s, "connected", func(v slacktest.View) bool { return v.Connected() })
	var total time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		a := f.ask(fmt.Sprintf("w%d", i), "", mailbox.KindApproval, "Deploy?")
		a, err := PostSlack(ctx, f.db, cl, slacktest.Channel, SlackPeople{}, a, true)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		s.React("U0ERIN", "white_check_mark", a.SlackChannel, a.SlackTS)
		for f.state(a.ID).ResumedRun == "" {
			time.Sleep(200 * time.Microsecond)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms/reaction")
}

// BenchmarkSlackPass is what one resume pass costs with 25 approvals and 25
// questions awaiting in Slack and nothing answered: one reactions.get or
// conversations.replies each (reported as calls/pass), against the stand-in
// on 127.0.0.1. Figures in docs/SCALING.md.
func BenchmarkSlackPass(b *testing.B) {
	f, s, cl := slackFixture(b)
	ctx := context.Background()
	r := slackResumer(f, f.db, cl)
	for i := 0; i < 50; i++ {
		kind := mailbox.KindApproval
		if i%2 == 1 {
			kind = mailbox.KindQuestion
		}
		a, err := PostSlack(ctx, f.db, cl, slacktest.Channel, SlackPeople{}, f.ask(fmt.Sprintf("w%d", i), "", kind, "Deploy?"), true)
		if err != nil {
			b.Fatal(err)
		}
		// Chatter that decides nothing: a stranger's ✅, a stranger's reply.
		s.React("U0MALLORY", "white_check_mark", a.SlackChannel, a.SlackTS)
		s.PostReply("U0MALLORY", "Looks fine to me.", a.SlackChannel, a.SlackTS)
	}
	before := len(s.Requests())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := r.Once(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(len(s.Requests())-before)/float64(b.N), "calls/pass")
	if f.spawnCount() != 0 {
		b.Fatalf("%d spawns", f.spawnCount())
	}
}
