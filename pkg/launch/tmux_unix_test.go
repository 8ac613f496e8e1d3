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
	defer syscall.Umask(syscall.Umask(0o022))
	dir, env, run := privateTmux(t)
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

// pipe-pane's command goes through tmux's format expansion and then
// /bin/sh: a log whose path holds any byte, '#[' (which tmux leaves as it
// is, with every '#' before it) among them, is still the file cat appends
// to, and nothing in the path runs.
func TestCapturePaneHostilePath(t *testing.T) {
	dir, env, run := privateTmux(t)
	logDir := filepath.Join(dir, "d #[fg=red] ##[x] ###[y] 'q' \"dq\" #(touch PWNED1) #{pane_id} %H %% $(touch PWNED2) `touch PWNED3`;|\nnl")
	if err := os.Mkdir(logDir, 0o700); err != nil {
		t.Fatal(err)
	}
	gate := filepath.Join(dir, "go")
	pane := run("new-session", "-d", "-P", "-F", "#{pane_id}", "-s", "hostile", "--",
		"sh", "-c", `while [ ! -e "$0" ]; do sleep 0.05; done; echo said-in-the-pane; exec sleep 60`, gate)
	defer run("kill-server")
	spec := Spec{Log: filepath.Join(logDir, "run #[x].log"), Tmux: true, Pane: pane, Environ: env}
	capturePane(spec)
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var got []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got, _ = os.ReadFile(spec.Log); strings.Contains(string(got), "said-in-the-pane") {
			break
		}
	}
	if !strings.Contains(string(got), "said-in-the-pane") {
		t.Errorf("the pane's output did not reach the log %q (pipe-pane command %q); the log holds %q", spec.Log, pipeCommand(spec.Log), got)
	}
	for _, f := range []string{"PWNED1", "PWNED2", "PWNED3"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s exists: the log's path ran as a command", f)
		}
	}
}

// privateTmux is a tmux of the test's own, its server's socket in dir (a
// temporary directory, also run's working directory): env is its
// environment, run runs a tmux command and returns its output.
func privateTmux(t *testing.T) (dir string, env []string, run func(args ...string) string) {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but tmux is missing (.ci/run installs it)")
		}
		t.Skip("tmux is not installed")
	}
	dir = t.TempDir()
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "TMUX_TMPDIR=") {
			env = append(env, kv)
		}
	}
	env = append(env, "TMUX_TMPDIR="+dir)
	return dir, env, func(args ...string) string {
		c := exec.Command(tmux, args...)
		c.Env, c.Dir = env, dir
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
}
