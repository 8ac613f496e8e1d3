//go:build !windows

package inbox_test

import (
	"strings"
	"testing"
	"time"
)

// prune leaves alone a read message that an unread reply answers: the
// dispatcher that sent it takes that reply with --reply-to ID (README's
// dispatch loop), which refuses, as a usage error, an id its team has no
// message of. Pruning the question would strand the answer.
func TestPruneKeepsRepliedToMessage(t *testing.T) {
	h := newHarness(t)
	h.ok("send", "crew", "w", "--from", "dispatch", "--", "run the migration") // id=1
	h.ok("crew", "w")                                                          // w reads its task
	h.Now = t0.Add(3 * time.Hour)
	h.ok("send", "crew", "dispatch", "--from", "w", "--reply-to", "1", "--", "migrated") // the answer, unread
	h.ok("prune", "crew", "--older", "1h")
	r := h.run("crew", "dispatch", "--reply-to", "1")
	if r.Code != 0 || !strings.Contains(r.Stdout, "migrated") {
		t.Fatalf("after prune, inbox crew dispatch --reply-to 1: exit %d, stdout %q, stderr %q; want exit 0 and the unread reply", r.Code, r.Stdout, r.Stderr)
	}
}
