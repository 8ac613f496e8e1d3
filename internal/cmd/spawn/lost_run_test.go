package spawn_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/cmd/spawn"
	"github.com/teamkit/teamkit/internal/command/commandtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// Finding 1. An agent whose host died (its heartbeat 1 h old) is "lost" in
// spawn list; spawn runs still calls the same run "running", and will for
// ever: nothing records an end for a run whose machine died.
func TestRunsAgreesWithListOnALostRun(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h := commandtest.New(t, "spawn", spawn.App)
	h.Now = t0
	h.Vars["TEAMKIT_HOST"] = "here"
	st, ctx := h.Store(), context.Background()
	const run = "20260301T120000Z-0000abcd"
	if err := st.RecordLaunch(ctx, mailbox.Agent{Team: "t", Name: "w1", Type: "probe", Run: run, State: mailbox.StateStarting, Host: "b2"}); err != nil {
		t.Fatal(err)
	}
	if err := st.StartRun(ctx, "t", "w1", run, mailbox.Process{PID: 4242, Start: 1, Boot: "x", Host: "b2", Heartbeat: 15 * time.Second}, 0); err != nil {
		t.Fatal(err)
	}
	if err := st.RecordRun(ctx, mailbox.RunRecord{Team: "t", Name: "w1", Run: run, Type: "probe", StartedAt: t0}); err != nil {
		t.Fatal(err)
	}
	h.Now = t0.Add(time.Hour)
	list := h.Want(0, "list", "t")
	if !strings.Contains(list, "lost host=b2") {
		t.Fatalf("spawn list t: %q; want w1 lost on host b2", list)
	}
	runs := h.Want(0, "runs", "t")
	for _, l := range strings.Split(runs, "\n") {
		if strings.Contains(l, run) && strings.Contains(l, " running ") {
			t.Errorf("spawn list calls w1 lost:\n%s\nbut spawn runs calls its run running:\n%s", list, runs)
		}
	}
}
