//go:build !windows

package inbox_test

import (
	"strings"
	"testing"
)

// --wait 0 is a wait that has already passed: with no message it exits 2,
// as every other --wait does (README: exit 2 when "inbox --wait got no
// message in time"), not 0, which a loop that passes the time it has left
// would take for a message.
func TestWaitZeroNoMessage(t *testing.T) {
	h := newHarness(t)
	for _, args := range [][]string{
		{"crew", "w", "--wait", "0"},
		{"crew", "w", "--wait", "0s", "--peek"},
	} {
		r := h.run(args...)
		if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, "no message for crew/w") {
			t.Errorf("inbox %s on an empty inbox: exit %d, stdout %q, stderr %q; want exit 2 and no message said",
				strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
		}
	}
	h.ok("send", "crew", "w", "here")
	if out := h.ok("crew", "w", "--wait", "0"); !strings.Contains(out, "here") {
		t.Fatalf("inbox crew w --wait 0 with a message waiting printed %q", out)
	}
	// Without --wait an empty drain is no failure.
	h.ok("crew", "w")
}
