package spawn

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teamkit/teamkit/pkg/agenttype"
)

func TestExpandPath(t *testing.T) {
	vars := map[string]string{"HOME": "/h", "CODEX_HOME": "/c", "EMPTY": ""}
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{"~/.claude/.credentials.json", "/h/.claude/.credentials.json", true},
		{"${CODEX_HOME:-~/.codex}/auth.json", "/c/auth.json", true},
		{"${NOPE:-~/.codex}/auth.json", "/h/.codex/auth.json", true},
		{"${EMPTY:-/d}/x", "/d/x", true},
		{"$NOPE/auth.json", "", false},
		{"relative/x", "", false},
		{"~other/x", "", false},
	} {
		got, ok := expandPath(tt.in, vars)
		if got != tt.want || ok != tt.ok {
			t.Errorf("expandPath(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if _, ok := expandPath("~/x", map[string]string{}); ok {
		t.Error("~ expanded with no HOME")
	}
}

func TestCheckAuth(t *testing.T) {
	home := t.TempDir()
	ty := &agenttype.Type{Name: "cli", Conf: agenttype.Conf{Auth: agenttype.Auth{
		Env: []string{"KEY_A", "KEY_B"}, Files: []string{"${CLI_HOME:-~/.cli}/auth.json"}, Login: "run `cli login`"}}}
	err := CheckAuth(ty, []string{"HOME=" + home, "KEY_A="})
	var ae *AuthError
	if !errors.As(err, &ae) {
		t.Fatalf("no key, no file: %v", err)
	}
	want := "type cli: no credentials for its CLI: none of KEY_A, KEY_B is set, and no login file (" + home + "/.cli/auth.json)"
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
	if h := ae.Hint(); !strings.HasPrefix(h, "set KEY_A (or KEY_B) in spawn's environment, or run `cli login`; ") || !strings.Contains(h, "--no-auth-check") {
		t.Errorf("hint %q", h)
	}
	if err := CheckAuth(ty, []string{"HOME=" + home, "KEY_B=k"}); err != nil {
		t.Errorf("with KEY_B: %v", err)
	}
	os.MkdirAll(filepath.Join(home, ".cli"), 0o700)
	os.WriteFile(filepath.Join(home, ".cli", "auth.json"), []byte("{}"), 0o600)
	if err := CheckAuth(ty, []string{"HOME=" + home}); err != nil {
		t.Errorf("with the login file: %v", err)
	}
	// CLI_HOME moves the login file; the one under ~ is then not the CLI's.
	if err := CheckAuth(ty, []string{"HOME=" + home, "CLI_HOME=" + t.TempDir()}); err == nil {
		t.Error("a login file outside CLI_HOME was taken")
	}
	if err := CheckAuth(&agenttype.Type{Name: "probe"}, nil); err != nil {
		t.Errorf("a type naming no credentials: %v", err)
	}
}

func TestAgentEnvDropsSessions(t *testing.T) {
	var environ []string
	for _, n := range SessionEnv {
		environ = append(environ, n+"=secret")
	}
	got := AgentEnv(append(environ, "KEEP=1"), agenttype.Conf{}, nil)
	if len(got) != 1 || got[0] != "KEEP=1" {
		t.Errorf("AgentEnv kept a session variable: %q", got)
	}
}
