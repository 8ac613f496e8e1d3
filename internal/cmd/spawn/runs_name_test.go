package spawn_test

import (
	"os"
	"strings"
	"testing"

	"github.com/teamkit/teamkit/internal/cmd/spawn"
	"github.com/teamkit/teamkit/internal/command/commandtest"
)

// Finding 4. Names are refused (exit 64) before they touch the database;
// spawn runs' optional <name> is not checked at all: a bad name opens (and
// here creates) the mailbox and is answered "no runs recorded".
func TestRunsRefusesABadAgentName(t *testing.T) {
	h := commandtest.New(t, "spawn", spawn.App)
	for _, bad := range []string{"w/1", "../x", "a b", "-"} {
		r := h.Run("runs", "t", bad)
		if r.Code != 64 || !strings.Contains(r.Stderr, "agent name") {
			t.Errorf("spawn runs t %q: exit %d, stdout %q, stderr %q; want 64 and the agent name refused", bad, r.Code, r.Stdout, r.Stderr)
		}
	}
	if _, err := os.Stat(h.DB); !os.IsNotExist(err) {
		t.Errorf("spawn runs with a bad agent name touched the mailbox %s (%v)", h.DB, err)
	}
}
