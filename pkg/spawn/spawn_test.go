package spawn

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/teamkit/teamkit/pkg/agenttype"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/proc"
)

func TestAgentEnv(t *testing.T) {
	environ := []string{"PATH=/bin", "CLAUDECODE=1", "OPENAI_API_KEY=k", "TEAMKIT_RUN=old", "TEAMKIT_ISSUE=o/r#1", "HOME=/h"}
	conf := agenttype.Conf{UnsetEnv: []string{"CLAUDECODE"}, Env: []agenttype.EnvVar{{Name: "MODE", Value: "x"}, {Name: "HOME", Value: "/agent"}}}
	got := AgentEnv(environ, conf, map[string]string{"TEAMKIT_DB": "/db", "TEAMKIT_TEAM": "t", "TEAMKIT_AGENT": "w", "TEAMKIT_RUN": "new"})
	want := []string{"PATH=/bin", "OPENAI_API_KEY=k", "TEAMKIT_RUN=new", "HOME=/agent", "MODE=x", "TEAMKIT_DB=/db", "TEAMKIT_TEAM=t", "TEAMKIT_AGENT=w"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("AgentEnv =\n %q\nwant\n %q", got, want)
	}
}

func TestNewRun(t *testing.T) {
	now := time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC)
	a, b := NewRun(now), NewRun(now)
	if a == b {
		t.Fatalf("two runs at the same instant share an id: %s", a)
	}
	if !regexp.MustCompile(`^20261202T140000Z-[0-9a-f]{8}$`).MatchString(a) {
		t.Fatalf("run id %q is not time-sortable with a random tail", a)
	}
}

// TestWatchInterruptedAfterMark: a spawn interrupted once its agent has
// marked ready reports it ready, not the interruption, also when the mark
// was consumed by a check whose answer the interruption lost; without a
// mark it reports the interruption.
func TestWatchInterruptedAfterMark(t *testing.T) {
	db, err := mailbox.Open(context.Background(), filepath.Join(t.TempDir(), "mail.db"), mailbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	self, err := proc.Self()
	if err != nil {
		t.Fatal(err)
	}
	typ := &agenttype.Type{Name: "marker", Conf: agenttype.Conf{Handshake: agenttype.HandshakeActAs}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i, c := range []struct{ mark, consumed bool }{{false, false}, {true, false}, {true, true}} {
		mark, run := c.mark, fmt.Sprintf("run-%d", i)
		bg := context.Background()
		if err := db.RecordLaunch(bg, mailbox.Agent{Team: "t", Name: "w1", Run: run, State: mailbox.StateRunning}); err != nil {
			t.Fatal(err)
		}
		if mark {
			if err := db.MarkReady(bg, "t", "w1", run); err != nil {
				t.Fatal(err)
			}
		}
		if c.consumed {
			if ok, err := db.ConsumeReady(bg, "t", "w1", run); err != nil || !ok {
				t.Fatalf("consume: %v %v", ok, err)
			}
		}
		res, err := watch(ctx, db, typ, Request{Team: "t", Name: "w1", Timeout: time.Minute}, run, self, Result{}, time.Now())
		switch {
		case mark && (err != nil || res.Status != StatusReady):
			t.Errorf("marked (consumed: %v), then interrupted: status %q, error %v; want ready", c.consumed, res.Status, err)
		case !mark && !errors.Is(err, context.Canceled):
			t.Errorf("interrupted without a mark: status %q, error %v; want the interruption", res.Status, err)
		}
	}
}
