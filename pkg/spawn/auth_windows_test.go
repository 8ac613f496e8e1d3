package spawn

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/teamkit/teamkit/pkg/agenttype"
)

// In cmd.exe, PowerShell or Task Scheduler HOME is not set (Git Bash sets
// it): the home is %USERPROFILE%, where the agent CLIs keep their logins
// (`codex login` writes %USERPROFILE%\.codex\auth.json). A codex agent of
// a user logged in that way must pass the credential check.
func TestCheckAuthWithoutHOMEWindows(t *testing.T) {
	profile, err := os.MkdirTemp("", "profile")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(profile)
	if err := os.MkdirAll(filepath.Join(profile, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(profile, ".codex", "auth.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	codex, err := agenttype.Finder{Builtin: agenttype.Builtin()}.Find("codex")
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"USERPROFILE=" + profile, `SystemRoot=C:\windows`, `Path=C:\windows\system32`}
	if err := CheckAuth(codex, env); err != nil {
		t.Errorf("codex logged in (%s), no HOME: %v", filepath.Join(profile, ".codex", "auth.json"), err)
	}
	// The same user in Git Bash, whose HOME is the profile, passes.
	if err := CheckAuth(codex, append(env, "HOME="+profile)); err != nil {
		t.Errorf("codex logged in, HOME set: %v", err)
	}
}
