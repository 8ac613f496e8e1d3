package runstream

import (
	"strings"
	"testing"
)

// TestSessionIDs: the session ids the pinned CLIs report are taken; an id
// a CLI's stream gives that could be read as an option, or that holds
// blanks or control characters, or is unboundedly long, is no session id.
func TestSessionIDs(t *testing.T) {
	for _, id := range []string{
		"3f0e7d6a-1111-4222-8333-444455556666", // claude, codex, gemini
		"ses_7a1b2c3d4e5fXyZ0123456789a",       // opencode
		"s-9", "a.b:c_d", strings.Repeat("x", MaxSession),
	} {
		if err := CheckSession(id); err != nil {
			t.Errorf("CheckSession(%q): %v, want nil", id, err)
		}
	}
	for _, id := range []string{
		"", "-", "--dangerously-skip-permissions", "-c", "a b", "a\tb", "a\nb", "a\x1b[2Jb", "a\u202eb", "a/b", "é",
		strings.Repeat("x", MaxSession+1),
	} {
		if err := CheckSession(id); err == nil {
			t.Errorf("CheckSession(%q): nil, want an error", id)
		} else if strings.ContainsAny(err.Error(), "\n\t\x1b\u202e") {
			t.Errorf("CheckSession(%q): %q is not one escaped line", id, err)
		}
	}
}

// TestStreamSessionUnusable: a stream whose session id is not one records
// no session (the re-spawn gets the full briefing) and says so in the log,
// escaped; a usable one that follows is still taken.
func TestStreamSessionUnusable(t *testing.T) {
	for _, c := range []struct{ format, line string }{
		{Claude, `{"type":"system","subtype":"init","session_id":"--fork-session"}`},
		{Codex, `{"type":"thread.started","thread_id":"-x"}`},
		{Gemini, `{"type":"init","session_id":"a\u001b]0;hi\u0007b"}`},
		{OpenCode, `{"type":"step_start","sessionID":"ses 1"}`},
	} {
		r := New(c.format, nil)
		out := r.Line([]byte(c.line))
		if r.Session != "" {
			t.Errorf("%s: session %q recorded, want none", c.format, r.Session)
		}
		if got := strings.Join(out, "\n"); !strings.Contains(got, "[session not recorded: session id ") || strings.ContainsAny(got, "\x1b\x07") {
			t.Errorf("%s: log %q, want an escaped note that the session was not recorded", c.format, got)
		}
	}
	r := New(Claude, nil)
	r.Line([]byte(`{"type":"system","subtype":"init","session_id":"-bad"}`))
	r.Line([]byte(`{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s-9"}`))
	if r.Session != "s-9" {
		t.Errorf("claude: session %q after a usable id, want s-9", r.Session)
	}
}

// TestOpenCodeSessionUnusableNotedOnce: opencode names its session on
// every event; one that is no session id is noted in the log once, not on
// every line after it.
func TestOpenCodeSessionUnusableNotedOnce(t *testing.T) {
	r := New(OpenCode, nil)
	var log []string
	for _, line := range []string{
		`{"type":"step_start","sessionID":"ses 1"}`,
		`{"type":"text","sessionID":"ses 1","part":{"type":"text","text":"working"}}`,
		`{"type":"step_finish","sessionID":"ses 1","part":{"type":"step-finish"}}`,
	} {
		log = append(log, r.Line([]byte(line))...)
	}
	if n := strings.Count(strings.Join(log, "\n"), "[session not recorded"); n != 1 {
		t.Errorf("the unusable session noted %d times in %q, want once", n, log)
	}
}
