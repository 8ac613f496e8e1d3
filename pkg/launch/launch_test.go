package launch

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

	// Bytes that are not UTF-8 (a Latin-1 é) come back as they went, where
	// JSON alone would give U+FFFD; the spec handed over is not changed.
	raw := Spec{Argv: []string{"agent", "caf\xe9"}, Env: []string{"A=b", "FOO=caf\xe9"}, Dir: "/w/caf\xe9", Log: "/l\xe9", DB: "/m\xe9/team.db", Run: "r"}
	if err := WriteSpec(path, raw); err != nil {
		t.Fatal(err)
	}
	if raw.Env[1] != "FOO=caf\xe9" || raw.Raw != nil {
		t.Fatalf("WriteSpec changed the spec it was given: %+v", raw)
	}
	got, err = ReadSpec(path)
	if err != nil || !slices.Equal(got.Argv, raw.Argv) || !slices.Equal(got.Env, raw.Env) || got.Dir != raw.Dir || got.Log != raw.Log || got.DB != raw.DB || got.Raw != nil {
		t.Fatalf("ReadSpec of a spec with bytes that are not UTF-8 = %+v, %v", got, err)
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
	if got, want := pipeCommand("/tmp/a b/it's #S #{x} 50%d $(x).log"), `exec cat >> '/tmp/a b/it'\''s ##S ##{x} 50%%d $(x).log'`; got != want {
		t.Errorf("pipeCommand = %s, want %s", got, want)
	}
}
