//go:build !windows

package launch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tmux's pipe-pane runs "cat >> LOG" through a shell with the tmux server's
// umask; the run's log must be private all the same.
func TestCapturePaneLogIsPrivate(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but tmux is missing (.ci/run installs it)")
		}
		t.Skip("tmux is not installed")
	}
	defer syscall.Umask(syscall.Umask(0o022))
	dir := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "TMUX_TMPDIR=") {
			env = append(env, kv)
		}
	}
	env = append(env, "TMUX_TMPDIR="+dir)
	run := func(args ...string) string {
		c := exec.Command(tmux, args...)
		c.Env = env
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	pane := run("new-session", "-d", "-P", "-F", "#{pane_id}", "-s", "logmode", "--", "sleep", "60")
	defer run("kill-server")
	spec := Spec{Log: filepath.Join(dir, "run.log"), Tmux: true, Pane: pane, Environ: env}
	capturePane(spec)
	// capturePane makes the log itself; were it left to tmux, the pipe's
	// shell would create it in the background, so give that a moment
	// rather than fail on a missing file instead of on its mode.
	st, err := os.Stat(spec.Log)
	for deadline := time.Now().Add(5 * time.Second); err != nil && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		st, err = os.Stat(spec.Log)
	}
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("log mode %v under umask 022, want 0600", st.Mode().Perm())
	}
}
