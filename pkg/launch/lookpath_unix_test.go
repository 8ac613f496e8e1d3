//go:build !windows

package launch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
