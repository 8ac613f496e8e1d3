package spawn_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// agentJSON is one agent of "spawn list demo --json" (the fields used here).
type agentJSON struct {
	Name, Run, State string
	StartedAt        *time.Time `json:"started_at"`
}

func (l *launcher) agentNamed(name string) agentJSON {
	l.T.Helper()
	out := l.Want(0, "list", team, "--json")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var a agentJSON
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			l.T.Fatalf("spawn list --json line %q: %v", line, err)
		}
		if a.Name == name {
			return a
		}
	}
	l.T.Fatalf("spawn list %s --json has no %s: %q", team, name, out)
	return agentJSON{}
}

// waitState polls spawn list until name is in one of states (2 minutes:
// only a hang fails, never a slow machine).
func (l *launcher) waitState(name string, states ...string) agentJSON {
	l.T.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		a := l.agentNamed(name)
		for _, s := range states {
			if a.State == s {
				return a
			}
		}
		if time.Now().After(deadline) {
			l.T.Fatalf("%s is %q after 2 minutes, want one of %q", name, a.State, states)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// queueBehind spawns w1 (ready) under a cap of 1, then w2, which queues.
func queueBehind(t *testing.T) (*launcher, string) {
	l := newLauncher(t)
	l.spawn(0, readyLine, "holder", "w1", "--timeout", "60s", "--max-running", "1")
	r := l.Run("holder", "w2", "--team", team, "--workdir", t.TempDir(), "--max-running", "1", "--no-wait", "--timeout", "60s")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "status=queued ") {
		t.Fatalf("spawn holder w2 under a cap of 1: exit %d, stdout %q, stderr %q; want status=queued", r.Code, r.Stdout, r.Stderr)
	}
	a := l.agentNamed("w2")
	if a.State != "queued" {
		t.Fatalf("w2 is %q, want queued", a.State)
	}
	return l, a.Run
}
