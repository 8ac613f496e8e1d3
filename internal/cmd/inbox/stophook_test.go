//go:build !windows

package inbox_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hook runs the Stop hook as claude does: its JSON input on stdin.
func (h *harness) hook(state string, active bool, max string) result {
	h.T.Helper()
	in, _ := json.Marshal(map[string]any{"hook_event_name": "Stop", "stop_hook_active": active, "session_id": "s1"})
	return h.runIn(string(in), "__stop-hook", "--state", state, "--max", max, "--inbox", "/opt/tk/bin/inbox", "--", "crew", "w")
}

// wantBlock checks r is a block whose reason tells the model to run inbox.
func wantBlock(t *testing.T, r result, unread string) {
	t.Helper()
	var out struct{ Decision, Reason string }
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &out) != nil || out.Decision != "block" ||
		!strings.Contains(out.Reason, "Run `/opt/tk/bin/inbox` now") || !strings.Contains(out.Reason, unread+" unread message(s) for w ") {
		t.Fatalf("hook = %+v, want a block telling the model to run inbox, %s unread", r, unread)
	}
}

// wantStop checks r lets the stop happen: exit 0, nothing on stdout.
func wantStop(t *testing.T, r result, stderr string) {
	t.Helper()
	if r.Code != 0 || r.Stdout != "" || !strings.Contains(r.Stderr, stderr) {
		t.Fatalf("hook = %+v, want exit 0, no output, stderr with %q", r, stderr)
	}
}

func TestStopHookBlocksOnlyWhileMailWaits(t *testing.T) {
	h := newHarness(t)
	state := filepath.Join(t.TempDir(), "run.stop-hook")
	wantStop(t, h.hook(state, false, "5"), "")
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Fatalf("a stop with no mail left state behind: %v", err)
	}
	h.ok("send", "crew", "w", "more work")
	h.ok("send", "crew", "other", "not w's")
	wantBlock(t, h.hook(state, false, "5"), "1")
	// Told, the model stopped again without reading it: no second block for it.
	wantStop(t, h.hook(state, true, "5"), "announced at the last stop and left unread")
	// New mail is worth a block, even while a hook keeps the run going.
	h.ok("send", "crew", "w", "even more")
	wantBlock(t, h.hook(state, true, "5"), "2")
	h.ok("crew", "w")
	wantStop(t, h.hook(state, true, "5"), "")
}

func TestStopHookCap(t *testing.T) {
	h := newHarness(t)
	state := filepath.Join(t.TempDir(), "run.stop-hook")
	for i := range 2 {
		h.ok("send", "crew", "w", "more work")
		wantBlock(t, h.hook(state, i > 0, "2"), "1")
		h.ok("crew", "w")
	}
	h.ok("send", "crew", "w", "still more")
	wantStop(t, h.hook(state, true, "2"), "blocked 2 times already (stop_hook_max)")
}

// A hook that cannot do its job lets the agent stop (exit 1 is a failed
// hook to claude, never exit 2, which would block), with one line on
// stderr and nothing on stdout.
func TestStopHookFailsOpen(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	h.ok("send", "crew", "w", "more work")

	bad := filepath.Join(dir, "bad.stop-hook")
	os.WriteFile(bad, []byte("garbage\n"), 0o600)
	// A state file that cannot be written: its directory is gone.
	gone := filepath.Join(dir, "gone", "run.stop-hook")
	h2 := newHarness(t)
	h2.DB = filepath.Join(dir, "not-a-dir", "x.db")
	os.WriteFile(filepath.Join(dir, "not-a-dir"), nil, 0o600)
	for name, r := range map[string]result{
		"bad state":        h.hook(bad, false, "5"),
		"state unwritable": h.hook(gone, false, "5"),
		"mailbox error":    h2.hook(filepath.Join(dir, "ok.stop-hook"), false, "5"),
	} {
		if r.Code != 1 || r.Stdout != "" || !strings.HasPrefix(r.Stderr, "inbox: error: ") || strings.Count(r.Stderr, "\n") > 2 {
			t.Errorf("%s: hook = %+v, want exit 1, nothing on stdout, an error line", name, r)
		}
	}
}
