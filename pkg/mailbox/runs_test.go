package mailbox_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// TestRuns: a run's record is written at its start and replaced at its
// end, listed by agent and time, and the latest run of each agent is found
// through its launch.
func TestRuns(t *testing.T) { eachBackend(t, testRuns) }

func testRuns(t *testing.T, be backend) {
	ctx := context.Background()
	db, _, _ := newDB(t, be)
	t0 := time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC)
	if _, err := db.Run(ctx, "t", "r1"); !errors.Is(err, mailbox.ErrNotFound) {
		t.Fatalf("Run before record: %v", err)
	}
	start := mailbox.RunRecord{Team: "t", Name: "a", Run: "r1", Type: "claude", StartedAt: t0}
	if err := db.RecordRun(ctx, start); err != nil {
		t.Fatal(err)
	}
	half := 0.5
	if err := db.RecordUsage(ctx, mailbox.RunRecord{Team: "t", Run: "r1", Session: "s-1", Tokens: mailbox.Tokens{Input: 7}, CostUSD: &half}); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Run(ctx, "t", "r1"); err != nil || got.Tokens.Input != 7 || *got.CostUSD != 0.5 || got.Session != "s-1" || got.End != "" {
		t.Fatalf("after RecordUsage: %+v, %v", got, err)
	}
	if err := db.SetRunEnd(ctx, "timeout", "not ready", mailbox.AgentRun{Team: "t", Name: "a", Run: "r1"}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetRunEnd(ctx, "stopped", "later", mailbox.AgentRun{Team: "t", Name: "a", Run: "r1"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Run(ctx, "t", "r1"); got.End != "timeout" || got.Detail != "not ready" {
		t.Fatalf("SetRunEnd: the first reason should stand: %+v", got)
	}
	end, code, cost, resets := t0.Add(time.Minute), 0, 0.0153, t0.Add(time.Hour)
	done := start
	done.EndedAt, done.End, done.Detail, done.ExitCode, done.Session = &end, "usage-limit", "limit reached", &code, "s-1"
	done.ResetsAt, done.Tokens, done.CostUSD = &resets, mailbox.Tokens{Input: 2000, Output: 100, CacheRead: 600, CacheWrite: 400}, &cost
	if err := db.RecordRun(ctx, done); err != nil {
		t.Fatal(err)
	}
	got, err := db.Run(ctx, "t", "r1")
	if err != nil || !reflect.DeepEqual(got, done) {
		t.Fatalf("Run = %+v, %v\nwant %+v", got, err, done)
	}
	second := mailbox.RunRecord{Team: "t", Name: "a", Run: "r2", Type: "claude", StartedAt: t0.Add(2 * time.Hour)}
	other := mailbox.RunRecord{Team: "t", Name: "b", Run: "r3", Type: "codex", StartedAt: t0.Add(3 * time.Hour)}
	for _, r := range []mailbox.RunRecord{second, other} {
		if err := db.RecordRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := db.Runs(ctx, "t", "", time.Time{})
	if err != nil || len(runs) != 3 || runs[0].Run != "r1" || runs[2].Run != "r3" {
		t.Fatalf("Runs(team) = %+v, %v", runs, err)
	}
	runs, err = db.Runs(ctx, "t", "a", t0.Add(time.Hour))
	if err != nil || len(runs) != 1 || runs[0].Run != "r2" {
		t.Fatalf("Runs(a, since) = %+v, %v", runs, err)
	}
	if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "t", Name: "a", Type: "claude", Run: "r1", State: mailbox.StateExited}); err != nil {
		t.Fatal(err)
	}
	latest, err := db.LatestUsage(ctx, "t")
	if u := latest["a"]; err != nil || len(latest) != 1 || u.Tokens.Total() != 3100 || u.CostUSD == nil || *u.CostUSD != cost {
		t.Fatalf("LatestUsage = %+v, %v", latest, err)
	}
	// A handshake that times out before the supervisor recorded the start:
	// the end stands through the start record, and the end record keeps it
	// (the supervisor reads it back).
	if err := db.SetRunEnd(ctx, "timeout", "not ready after 0s", mailbox.AgentRun{Team: "t", Name: "c", Run: "r4"}); err != nil {
		t.Fatal(err)
	}
	if err := db.RecordRun(ctx, mailbox.RunRecord{Team: "t", Name: "c", Run: "r4", Type: "claude", StartedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Run(ctx, "t", "r4"); err != nil || got.End != "timeout" || got.Detail != "not ready after 0s" || got.Type != "claude" {
		t.Fatalf("a start after SetRunEnd lost its end: %+v, %v", got, err)
	}
}
