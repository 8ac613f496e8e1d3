package escalate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/githubtest"
	"github.com/teamkit/teamkit/pkg/github"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// A resume pass that runs while `ask` is still posting its question (here:
// ask's POST met a 429 and waits out its Retry-After, as the retry policy
// does) finds the ask awaiting with no comment and no post error, and posts
// the question itself. ask's retry then posts it a second time and records
// its own comment over the pass's, so a reply given to the first copy (by
// the issue's author, who may answer) is dropped as "before the question":
// the question is on the issue twice and the answer is lost.
func TestPassRacingAskPostsOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a := f.recordedQuestion() // what `ask` has recorded before it posts

	// ask's client retries, as ask's does (the default policy).
	askGH, err := github.New(github.Options{BaseURL: f.fake.URL, Token: githubtest.DefaultToken,
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.fake.Fail(githubtest.Failure{Count: 1, Method: "POST", PathPrefix: "/repos/octo/repo/issues/7/comments",
		Status: 429, Headers: map[string]string{"Retry-After": "3"}, Message: "slow down"}); err != nil {
		t.Fatal(err)
	}
	askDone := make(chan error, 1)
	go func() {
		// What `ask` runs: GitHubChannel.Post with fresh=true.
		ch := &GitHubChannel{Client: func() (GitHub, error) { return askGH, nil }}
		_, err := ch.Post(ctx, f.db, a, true)
		askDone <- err
	}()
	// Wait for ask's first POST to be refused (it now waits 3 s to retry).
	deadline := time.Now().Add(60 * time.Second)
	for {
		n := 0
		for _, r := range f.fake.Requests() {
			if r.Method == "POST" && r.Status == 429 {
				n++
			}
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("ask never POSTed")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// A pass (cron, or a watch woken by mail) meanwhile.
	if err := f.resumer(f.db, "").Pass(ctx); err != nil {
		t.Fatalf("pass: %v", err)
	}
	// The issue's author answers the question as soon as it is on the issue.
	onIssue := func() bool {
		for _, c := range f.fake.Comments("octo", "repo", 7) {
			if strings.Contains(c.Body, MarkerPrefix) {
				return true
			}
		}
		return false
	}
	answered := false
	if onIssue() {
		f.comment("alice", "OWNER", "Blue.")
		answered = true
	}

	select {
	case err := <-askDone:
		if err != nil {
			t.Fatalf("ask: %v", err)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("ask never finished")
	}

	if !answered && onIssue() {
		f.comment("alice", "OWNER", "Blue.")
	}
	questions := 0
	for _, c := range f.fake.Comments("octo", "repo", 7) {
		if strings.Contains(c.Body, MarkerPrefix) {
			questions++
		}
	}
	// The answer must reach the agent.
	if err := f.resumer(f.db, "").Pass(ctx); err != nil {
		t.Logf("second pass: %v", err)
	}
	got := f.state(a.ID)
	if questions != 1 {
		t.Errorf("the question is on the issue %d times, want once", questions)
	}
	if got.State != mailbox.AskAnswered || f.spawnCount() != 1 {
		t.Errorf("alice's answer was lost: ask %d is %s, %d re-spawns (stderr %q)", a.ID, got.State, f.spawnCount(), f.stderr.String())
	}
}
