package spawn_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Finding 3. A queued agent has not started, yet spawn list gives it a
// STARTED time (started_at): the time its spawn queued it, read from its run
// id. Once it runs, spawn list keeps that queue time as its start, while
// spawn runs records when it really started.
func TestQueuedAgentStartedAt(t *testing.T) {
	l, run := queueBehind(t)
	if a := l.agentNamed("w2"); a.StartedAt != nil {
		t.Errorf("w2 is queued (it never started), but spawn list --json says started_at=%s", a.StartedAt.Format(time.RFC3339))
	}
	// Let a second pass, so that a start after the queueing shows in
	// seconds, then free the slot: w2 starts.
	queuedAt, _ := time.Parse("20060102T150405Z", run[:16])
	for deadline := time.Now().Add(time.Minute); !time.Now().UTC().Truncate(time.Second).After(queuedAt); {
		if time.Now().After(deadline) {
			t.Fatal("the clock did not move on")
		}
		time.Sleep(20 * time.Millisecond)
	}
	l.Want(0, "stop", team, "w1")
	a := l.waitState("w2", "running", "ready")
	// The supervisor records the start (the state) and then the run's
	// record, in two writes: wait for the second.
	var rec struct {
		Run       string    `json:"run"`
		StartedAt time.Time `json:"started_at"`
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		out := l.Want(0, "runs", team, "w2", "--json")
		err := json.Unmarshal([]byte(strings.TrimSpace(out)), &rec)
		if err == nil && rec.Run == run {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("spawn runs %s w2 --json: %q (%v); want run %s", team, out, err, run)
		}
	}
	if a.StartedAt == nil || a.StartedAt.Before(rec.StartedAt.Truncate(time.Second)) {
		t.Errorf("run %s: spawn list says started_at=%v, spawn runs says started_at=%s", run, a.StartedAt, rec.StartedAt.Format(time.RFC3339Nano))
	}
}
