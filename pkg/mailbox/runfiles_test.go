package mailbox_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

func TestIsURL(t *testing.T) {
	for db, want := range map[string]bool{
		"/state/teamkit/teamkit.db":          false,
		"teamkit.db":                         false,
		"./dir with spaces/x.db":             false,
		"postgres://u:secret@host/teamkit":   true,
		"postgresql://host/teamkit?sslmode=": true,
		"mysql://host/teamkit":               true, // refused by Open, never a file
	} {
		if got := mailbox.IsURL(db); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", db, got, want)
		}
	}
}

// Run files sit beside a file mailbox whatever the directory a command
// runs in, and under the state directory, apart per URL, for a database.
func TestRunsDir(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mailbox.RunsDir("/state", "rel/teamkit.db"), filepath.Join(wd, "rel", "teamkit.db")+"-runs"; got != want {
		t.Errorf("relative file: RunsDir = %q, want %q", got, want)
	}
	if got, want := mailbox.RunsDir("/state", "/abs/teamkit.db"), "/abs/teamkit.db-runs"; got != want {
		t.Errorf("absolute file: RunsDir = %q, want %q", got, want)
	}
	a := mailbox.RunsDir("/state", "postgres://u:pw@h/a")
	b := mailbox.RunsDir("/state", "postgres://u:pw@h/b")
	if !strings.HasPrefix(a, filepath.Join("/state", "runs")+string(filepath.Separator)) || a == b {
		t.Errorf("URLs: RunsDir = %q and %q, want two directories under /state/runs", a, b)
	}
	if strings.Contains(a, "pw") {
		t.Errorf("RunsDir %q holds the URL's password", a)
	}
	// The password does not name the directory: a new one does not move
	// the run files. One named before (by the whole URL) is kept.
	state := t.TempDir()
	for _, pair := range [][2]string{
		{"postgres://u:pw@h/a", "postgres://u:other@h/a"},
		{"postgres://u@h/a?sslmode=disable&password=pw", "postgres://u@h/a?sslmode=disable&password=other"},
	} {
		if x, y := mailbox.RunsDir(state, pair[0]), mailbox.RunsDir(state, pair[1]); x != y {
			t.Errorf("RunsDir of %q and %q: %q and %q, want one directory", pair[0], pair[1], x, y)
		}
	}
	if mailbox.RunsDir(state, "postgres://u:pw@h/a") == mailbox.RunsDir(state, "postgres://v:pw@h/a") {
		t.Error("two users of one server share a run directory")
	}
	sum := sha256.Sum256([]byte("postgres://u:pw@h/a"))
	old := filepath.Join(state, "runs", hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(old, 0o700); err != nil {
		t.Fatal(err)
	}
	if got := mailbox.RunsDir(state, "postgres://u:pw@h/a"); got != old {
		t.Errorf("with the run directory of before: RunsDir = %q, want %q", got, old)
	}
}

// OldRunFiles lists an ended run's files once they are older than the
// cutoff, and never those of a live agent's current run.
func TestOldRunFiles(t *testing.T) {
	runs := t.TempDir()
	dir := mailbox.AgentRunDir(runs, "t", "w1")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	for _, f := range []string{"r1.log", "r1.md", "r2.log"} {
		p := filepath.Join(dir, f)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if got := mailbox.Runs(runs, "t", "w1"); strings.Join(got, ",") != "r1,r2" {
		t.Errorf("Runs = %q, want r1,r2", got)
	}
	cutoff := time.Now().Add(-24 * time.Hour)
	live := mailbox.Agent{Team: "t", Name: "w1", Run: "r2", State: mailbox.StateRunning, UpdatedAt: old}
	got, err := mailbox.OldRunFiles(runs, live, cutoff)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(dir, "r1.log"), filepath.Join(dir, "r1.md")}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("live agent: OldRunFiles = %q, want %q", got, want)
	}
	ended := live
	ended.State = mailbox.StateExited
	if got, _ := mailbox.OldRunFiles(runs, ended, cutoff); len(got) != 3 {
		t.Errorf("exited agent: OldRunFiles = %q, want all three files", got)
	}
}
