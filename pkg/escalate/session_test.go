package escalate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// TestContinuationUnusableSession: a record holding a session id that is
// not one (written before runstream checked it, or by another version
// sharing the mailbox) continues nothing: the re-spawn gets the full
// briefing, and the reason names the run and the id, escaped.
func TestContinuationUnusableSession(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	p := &pass{r: &Resumer{DB: f.db, Team: "t", Host: "h1"}, ctx: ctx}
	for run, session := range map[string]string{"r-ok": "s-1", "r-dash": "--fork-session", "r-esc": "s\x1b]0;x\a"} {
		if err := f.db.RecordRun(ctx, mailbox.RunRecord{Team: "t", Name: "w1", Run: run, Type: "keeper", StartedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if err := f.db.RecordUsage(ctx, mailbox.RunRecord{Team: "t", Run: run, Session: session}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := p.continuation(mailbox.Agent{Team: "t", Name: "w1", Run: "r-ok", Host: "h1"}, "news")
	if err != nil || c.Session != "s-1" {
		t.Fatalf("usable session: %+v, %v", c, err)
	}
	for _, run := range []string{"r-dash", "r-esc"} {
		c, err := p.continuation(mailbox.Agent{Team: "t", Name: "w1", Run: run, Host: "h1"}, "news")
		if err != nil {
			t.Fatal(err)
		}
		if c.Session != "" || !strings.HasPrefix(c.Why, "the last run "+run+" recorded no usable session: session id ") ||
			strings.ContainsAny(c.Why, "\x1b\a") || c.News != "news" {
			t.Errorf("%s: %+v, want no session, and why", run, c)
		}
	}
}
