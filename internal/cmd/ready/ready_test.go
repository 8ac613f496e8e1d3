package ready_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/cmd/ready"
	"github.com/teamkit/teamkit/internal/command/commandtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

type result = commandtest.Result

// harness runs the ready command in-process against one database, on t0.
type harness struct{ *commandtest.Harness }

func newHarness(t *testing.T) *harness {
	h := &harness{commandtest.New(t, "ready", ready.App)}
	h.Now = t0
	return h
}

func (h *harness) run(args ...string) result { h.T.Helper(); return h.Run(args...) }

func (h *harness) want(code int, args ...string) string { h.T.Helper(); return h.Want(code, args...) }

// store opens the mailbox on the real clock, as the command's writers do.
func (h *harness) store() *mailbox.DB {
	h.T.Helper()
	db, err := mailbox.Open(context.Background(), h.DB, mailbox.Options{})
	if err != nil {
		h.T.Fatal(err)
	}
	h.T.Cleanup(func() { db.Close() })
	return db
}

func TestMarkCheckAcrossRuns(t *testing.T) {
	h := newHarness(t)
	h.want(2, "check", "crew", "w") // nothing marked
	h.Vars["TEAMKIT_RUN"] = "run-1"
	out := h.want(0, "mark", "crew", "w")
	if out != "ready=marked team=crew name=w run=run-1\n" {
		t.Fatalf("mark printed %q", out)
	}
	out = h.want(0, "check", "crew", "w")
	if out != "ready=yes team=crew name=w run=run-1 marked_at=2025-03-01T12:00:00Z\n" {
		t.Fatalf("check printed %q", out)
	}
	// A new launch: the old run's mark does not count.
	h.Vars["TEAMKIT_RUN"] = "run-2"
	out = h.want(2, "check", "crew", "w")
	if !strings.Contains(out, "ready=no") || !strings.Contains(out, "mark_run=run-1") || !strings.Contains(out, "want_run=run-2") {
		t.Fatalf("check for another run printed %q", out)
	}
	// --run, after the positionals, wins over TEAMKIT_RUN.
	h.want(0, "check", "crew", "w", "--run", "run-1")
	h.want(0, "mark", "crew", "w")
	h.want(0, "check", "crew", "w")
	h.want(2, "check", "crew", "w", "--run", "run-1")
	// Other agents are separate.
	h.want(2, "check", "crew", "w2")
	h.want(2, "check", "other", "w")
	// clear removes it.
	if out := h.want(0, "clear", "crew", "w"); out != "ready=cleared team=crew name=w\n" {
		t.Fatalf("clear printed %q", out)
	}
	h.want(2, "check", "crew", "w")
}

func TestCheckUsesRecordedRun(t *testing.T) {
	h := newHarness(t)
	// Never recorded by spawn, no run given: any mark counts.
	h.want(0, "mark", "crew", "w", "--run", "old")
	h.want(0, "check", "crew", "w")
	// Once spawn records a launch, only that run's mark counts.
	if err := h.store().RecordLaunch(context.Background(), mailbox.Agent{Team: "crew", Name: "w", Type: "codex", Run: "new", State: mailbox.StateRunning}); err != nil {
		t.Fatal(err)
	}
	out := h.want(2, "check", "crew", "w")
	if !strings.Contains(out, "mark_run=old") || !strings.Contains(out, "want_run=new") {
		t.Fatalf("check printed %q", out)
	}
	h.want(0, "mark", "--run", "new", "crew", "w")
	h.want(0, "check", "crew", "w")
}

func TestIdentityFromEnv(t *testing.T) {
	h := newHarness(t)
	h.Vars["TEAMKIT_TEAM"] = "crew"
	h.Vars["TEAMKIT_AGENT"] = "w"
	h.Vars["TEAMKIT_RUN"] = "r"
	h.want(0, "mark")
	delete(h.Vars, "TEAMKIT_AGENT")
	h.want(0, "check", "w")
	h.want(2, "check", "w2")
	delete(h.Vars, "TEAMKIT_TEAM")
	h.want(0, "check", "crew", "w")
	m, ok, err := h.store().Ready(context.Background(), "crew", "w")
	if err != nil || !ok || m.Run != "r" || !m.MarkedAt.Equal(t0) {
		t.Fatalf("stored mark %+v, %v, %v", m, ok, err)
	}
	r := h.run("mark")
	if r.Code != 64 || !strings.Contains(r.Stderr, "TEAMKIT_TEAM") {
		t.Fatalf("mark without identity: %+v", r)
	}
}

func TestJSON(t *testing.T) {
	h := newHarness(t)
	h.Vars["TEAMKIT_RUN"] = "r1"
	h.want(0, "mark", "crew", "w", "--json")
	var got map[string]any
	out := h.want(0, "check", "crew", "w", "--json")
	if err := json.Unmarshal([]byte(out), &got); err != nil || got["ready"] != true || got["run"] != "r1" || got["mark"] == nil {
		t.Fatalf("check --json printed %q (%v)", out, err)
	}
	out = h.want(2, "check", "crew", "w", "--json", "--run", "r2")
	got = nil
	if err := json.Unmarshal([]byte(out), &got); err != nil || got["ready"] != false {
		t.Fatalf("check --json for another run printed %q (%v)", out, err)
	}
}

func TestUsage(t *testing.T) {
	h := newHarness(t)
	for _, args := range [][]string{
		{"mark", "a/b", "w"},
		{"mark", "crew", ".."},
		{"check", "crew", "a b"},
		{"clear", "$(x)", "w"},
		{"mark", "crew", strings.Repeat("x", 65)},
		{"mark", "crew", "w", "extra"},
		{"check"},
		{"chek", "crew", "w"},
	} {
		r := h.run(args...)
		lines := strings.Split(strings.TrimRight(r.Stderr, "\n"), "\n")
		hinted := len(lines) == 2 && strings.HasPrefix(lines[1], "ready: hint:")
		if r.Code != 64 || r.Stdout != "" || (len(lines) != 1 && !hinted) || !strings.HasPrefix(lines[0], "ready: error:") {
			t.Errorf("ready %q: exit %d stdout %q stderr %q; want 64 and one line (and a hint)", args, r.Code, r.Stdout, r.Stderr)
		}
	}
	if _, err := os.Stat(h.DB); !os.IsNotExist(err) {
		t.Fatalf("usage errors touched the database: %v", err)
	}
}

// TestCheckOtherAgentFromInsideAnAgent: inside agent lead (spawn exported
// TEAMKIT_TEAM, TEAMKIT_AGENT and TEAMKIT_RUN), `ready check crew w1` asks
// whether worker w1's current run has marked. lead's own TEAMKIT_RUN names
// lead's launch, which no mark of w1 can ever carry: it must not be taken
// as the run that counts for w1.
func TestCheckOtherAgentFromInsideAnAgent(t *testing.T) {
	h := newHarness(t)
	db := h.store()
	ctx := context.Background()
	if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "crew", Name: "w1", Type: "codex", Run: "run-w1", State: mailbox.StateRunning}); err != nil {
		t.Fatal(err)
	}
	// w1 marks its own run, as its briefing tells it to.
	if err := db.MarkReady(ctx, "crew", "w1", "run-w1"); err != nil {
		t.Fatal(err)
	}
	h.want(0, "check", "crew", "w1") // from a plain shell: ready
	// The same question from inside the lead agent.
	h.Vars["TEAMKIT_TEAM"] = "crew"
	h.Vars["TEAMKIT_AGENT"] = "lead"
	h.Vars["TEAMKIT_RUN"] = "run-lead"
	if r := h.run("check", "crew", "w1"); r.Code != 0 {
		t.Errorf("inside agent lead, `ready check crew w1` for a w1 whose run marked: exit %d, stdout %q; want 0 (lead's TEAMKIT_RUN is not w1's run)", r.Code, r.Stdout)
	}
}
