package agenttype

import (
	"strings"
	"testing"
)

func TestParseStopHook(t *testing.T) {
	for _, tc := range []struct {
		conf string
		hook StopHook
		max  int
	}{
		{"command=a {prompt}", StopHookNone, 0},
		{"command=a {prompt}\nstop_hook=claude", StopHookClaude, DefaultStopHookMax},
		{"command=a {prompt}\nstop_hook=claude\nstop_hook_max=2", StopHookClaude, 2},
	} {
		c, err := Parse("t.conf", []byte(tc.conf))
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.conf, err)
		}
		if c.StopHook != tc.hook || c.StopHookMax != tc.max {
			t.Errorf("Parse(%q): stop_hook=%q max=%d, want %q %d", tc.conf, c.StopHook, c.StopHookMax, tc.hook, tc.max)
		}
	}
	for conf, want := range map[string]string{
		"command=a {prompt}\nstop_hook=codex":        `t.conf:2: stop_hook="codex"; expected claude (or no stop_hook line at all)`,
		"command=a {prompt}\nstop_hook=":             `t.conf:2: stop_hook=""; expected claude`,
		"command=a {prompt}\nstop_hook_max=0":        `t.conf:2: stop_hook_max="0"; expected a whole number of blocks from 1 to 1000`,
		"command=a {prompt}\nstop_hook_max=1001":     `t.conf:2: stop_hook_max="1001"`,
		"command=a {prompt}\nstop_hook_max=3 blocks": `t.conf:2: stop_hook_max="3 blocks"`,
	} {
		_, err := Parse("t.conf", []byte(conf))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %s…", conf, err, want)
		}
	}
}
