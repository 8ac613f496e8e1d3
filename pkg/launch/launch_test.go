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

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "agent-cli")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	plain := filepath.Join(dir, "not-exec")
	os.WriteFile(plain, []byte("x"), 0o644)
	env := []string{"HOME=/h", "PATH=/nonexistent:" + dir}

	if got, err := LookPath("agent-cli", env); err != nil || got != exe {
		t.Errorf("LookPath on the agent's PATH = %q, %v; want %q", got, err, exe)
	}
	// The spawner's own PATH does not count: only the agent's.
	if _, err := LookPath("agent-cli", []string{"PATH=/nonexistent"}); err == nil || !strings.Contains(err.Error(), "not found in the agent's PATH") {
		t.Errorf("missing command: %v", err)
	}
	if _, err := LookPath("not-exec", env); err == nil {
		t.Error("a non-executable file on PATH was accepted")
	}
	if _, err := LookPath(plain, env); err == nil || !strings.Contains(err.Error(), "is not executable") {
		t.Errorf("non-executable path: %v", err)
	}
	if _, err := LookPath(dir, env); err == nil {
		t.Error("a directory was accepted as a command")
	}
}

func TestSpecRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.spec.json")
	want := Spec{Argv: []string{"claude", "-p", "line 1\n$(x) `y` 'q'"}, Env: []string{"A=b"}, Dir: "/w", Stdin: "/b.md", Log: "/l", DB: "/db", Team: "t", Name: "w1", Run: "r"}
	if err := WriteSpec(path, want); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("spec mode %v: it holds the environment, want 0600", st.Mode().Perm())
	}
	got, err := ReadSpec(path)
	if err != nil || strings.Join(got.Argv, "\x00") != strings.Join(want.Argv, "\x00") || got.Run != "r" || got.Stdin != "/b.md" {
		t.Fatalf("ReadSpec = %+v, %v", got, err)
	}
	os.WriteFile(path, []byte(`{"argv":[]}`), 0o600)
	if _, err := ReadSpec(path); err == nil {
		t.Error("a spec without a command was accepted")
	}
}

func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		script string
		want   int
	}{{"exit 0", 0}, {"exit 7", 7}, {"kill -TERM $$", 128 + 15}, {"kill -KILL $$", 128 + 9}} {
		cmd := exec.Command("sh", "-c", c.script)
		err := cmd.Run()
		if got := ExitCode(cmd.ProcessState, err); got != c.want {
			t.Errorf("%q: ExitCode = %d, want %d", c.script, got, c.want)
		}
	}
}

func TestTmuxSession(t *testing.T) {
	for in, want := range map[string]string{"team": "team", "t.x": "t_x", "a.b.c": "a_b_c", "x-y_z": "x-y_z"} {
		if got := TmuxSession(in); got != want {
			t.Errorf("TmuxSession(%q) = %q, want %q", in, got, want)
		}
	}
	if safePath("/tmp/state/teamkit/runs/t/w1/r.spec.json") != true || safePath("/tmp/with space/x") || safePath("/tmp/$(x)") {
		t.Error("safePath misjudges a path")
	}
}

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
