package launch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

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
