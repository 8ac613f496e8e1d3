package escalate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/slacktest"
	"github.com/teamkit/teamkit/pkg/github"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// A configuration error (no GitHub token, a Slack token without a scope)
// is said once, with its hint, and not retried as an outage: the channel
// is tried again only every MaxBackoff, silently while nothing changed,
// and the passes keep their interval for the rest (a local answer).
func TestConfigErrorSaidOnce(t *testing.T) {
	f, s, cl := slackFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.ask("w1", issue, mailbox.KindQuestion, "Which colour?")
	sa, err := PostSlack(ctx, f.db, cl, slacktest.Channel, SlackPeople{}, f.ask("w2", "", mailbox.KindQuestion, "Which font?"), true)
	if err != nil {
		t.Fatal(err)
	}
	local := f.ask("w3", "", mailbox.KindQuestion, "Which door?")
	s.Fail(slacktest.Failure{Method: "conversations.replies", Error: "missing_scope", Count: -1})

	r := slackResumer(f, f.db, cl)
	tries := 0
	r.Channels[1].(*GitHubChannel).Client = func() (GitHub, error) {
		tries++
		_, err := github.New(github.Options{BaseURL: f.fake.URL, Getenv: func(string) string { return "" }})
		return nil, err
	}
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r.Now = func() time.Time { return clock }
	var waits []time.Duration
	r.Sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		clock = clock.Add(d)
		switch len(waits) {
		case 2:
			if _, err := AnswerLocal(ctx, f.db, LocalAnswer{ID: local.ID, Text: "Green.", Decision: mailbox.DecisionAnswered, By: "tester"}); err != nil {
				t.Error(err)
			}
		case 3:
			if f.state(local.ID).ResumedRun == "" {
				t.Error("the local answer waited for the misconfigured channels")
			}
		case 12:
			cancel()
		}
		return ctx.Err()
	}
	if err := r.Watch(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	for i, w := range waits {
		if w != time.Minute {
			t.Fatalf("wait %d is %s: the passes backed off", i, w)
		}
	}
	// Tried at 0 and again after MaxBackoff (10 min), not every pass.
	if tries != 2 {
		t.Errorf("the GitHub client was tried %d times in 12 min, want 2", tries)
	}
	replies := 0
	for _, rq := range s.Requests() {
		if rq.Method == "conversations.replies" {
			replies++
		}
	}
	if replies != 2 {
		t.Errorf("Slack's thread was read %d times in 12 min, want 2", replies)
	}
	out := f.stderr.String()
	for _, want := range []string{
		"\nresume: github: misconfigured: no token found",
		"\nresume: hint: log in with 'gh auth login', or set GH_TOKEN\n",
		"\nresume: slack: misconfigured: slack conversations.replies: missing_scope",
		"\nresume: hint: the bot token lacks a scope",
	} {
		if strings.Count("\n"+out, want) != 1 {
			t.Errorf("stderr has %q %d times, want once:\n%s", want, strings.Count("\n"+out, want), out)
		}
	}
	if strings.Contains(out, "github: github:") || strings.Contains(out, "pass failed") {
		t.Errorf("stderr:\n%s", out)
	}
	if got := f.state(sa.ID); got.State != mailbox.AskAwaiting {
		t.Errorf("the Slack ask is %s", got.State)
	}
	var ce *ConfigError
	if !errors.As(slackConfigError(errors.New("slack apps.connections.open: not_allowed_token_type")), &ce) ||
		!strings.Contains(ce.Hint, "wrong kind") {
		t.Errorf("not_allowed_token_type is not a configuration error with a hint: %v", ce)
	}
}

// A failure outside the channels (a re-spawn that fails) still makes the
// watch double its own interval, and a clean pass restores it.
func TestWatchBacksOffOnRespawnFailure(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := f.ask("w1", "", mailbox.KindQuestion, "Which door?")
	if _, err := AnswerLocal(ctx, f.db, LocalAnswer{ID: a.ID, Text: "Green.", Decision: mailbox.DecisionAnswered, By: "tester"}); err != nil {
		t.Fatal(err)
	}
	f.spawnErr = errors.New("no room for another agent")
	r := f.resumer(f.db, "")
	var waits []time.Duration
	r.Sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		switch len(waits) {
		case 3:
			f.mu.Lock()
			f.spawnErr = nil
			f.mu.Unlock()
		case 4:
			cancel()
		}
		return ctx.Err()
	}
	if err := r.Watch(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	m := time.Minute
	if want := []time.Duration{2 * m, 4 * m, 8 * m, m}; fmt.Sprint(waits) != fmt.Sprint(want) {
		t.Errorf("waits %v, want %v", waits, want)
	}
	if f.state(a.ID).ResumedRun == "" || !strings.Contains(f.stderr.String(), "pass failed; next pass in 8m0s") {
		t.Errorf("ask %+v; stderr:\n%s", f.state(a.ID), f.stderr.String())
	}
}
