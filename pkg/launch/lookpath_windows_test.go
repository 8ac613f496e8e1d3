package launch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On Windows PATHEXT, not an execute bit, makes a file a command, and the
// PATH variable is found whatever its case (Windows writes it "Path").
func TestLookPath(t *testing.T) {
	// Not t.TempDir: under Wine 8.0 its cleanup fails to unlink the .cmd
	// ("Invalid function"), which Windows does not; removal stays best effort.
	dir, err := os.MkdirTemp("", "lookpath")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	shim := filepath.Join(dir, "agent-cli.cmd")
	os.WriteFile(shim, []byte("@echo off\r\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	env := []string{`Path=C:\nonexistent;` + dir}

	if got, err := LookPath("agent-cli", env); err != nil || !strings.EqualFold(got, shim) {
		t.Errorf("LookPath(agent-cli) = %q, %v; want %q", got, err, shim)
	}
	if got, err := LookPath(filepath.Join(dir, "agent-cli"), env); err != nil || !strings.EqualFold(got, shim) {
		t.Errorf("LookPath of the path without extension = %q, %v; want %q", got, err, shim)
	}
	if _, err := LookPath("notes.txt", env); err == nil {
		t.Error("a .txt file on PATH was accepted as a command")
	}
	if _, err := LookPath("agent-cli", append(env, "PATHEXT=.EXE")); err == nil {
		t.Error("a .cmd was accepted with PATHEXT=.EXE")
	}
	if !BatchFile(shim) || !BatchFile(`C:\x\Y.BAT`) || BatchFile(`C:\x\y.exe`) {
		t.Error("BatchFile misjudges .cmd, .BAT or .exe")
	}
}
