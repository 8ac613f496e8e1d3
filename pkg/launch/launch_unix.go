//go:build !windows

package launch

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// startDetached starts cmd in a session of its own, so that neither the
// spawner's terminal nor its process group reaches it.
// It returns the started command.
func startDetached(cmd *exec.Cmd) (*exec.Cmd, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd, cmd.Start()
}

// executable reports whether p is a file with an execute bit.
func executable(p string, _ []string) (string, bool) {
	st, err := os.Stat(p)
	return p, err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// getenv is the value of key in env (names are case-sensitive on Unix).
func getenv(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// Supported reports whether the launch mode works on this OS: on Unix
// every mode but Windows' own (tmux when installed, which Tmux checks).
func Supported(mode string) error {
	switch mode {
	case ModeConsole:
		return errors.New("launch=console opens a Windows console window, which this system does not have; use launch=background, launch=tmux or launch=foreground")
	case ModeWT:
		return errors.New("launch=wt opens a Windows Terminal tab, which this system does not have; use launch=background, launch=tmux or launch=foreground")
	}
	return nil
}

// Console is Windows' console launch: on Unix it fails (Supported).
func Console(self, specPath, logPath string, env []string) (int, error) {
	return 0, Supported(ModeConsole)
}

// openConsole fails on Unix, which has no console to open by name; only a
// hand-made spec asks for one here.
func openConsole() (in, out *os.File, err error) {
	return nil, nil, errors.New("no console on this system")
}

// BatchFile reports whether path is run through cmd.exe's parser: never on
// Unix.
func BatchFile(path string) bool { return false }

// CommandLineFits is Windows' limit on a whole command line: Unix has
// none but the per-argument one agenttype.MaxArgLen checks.
func CommandLineFits(argv []string) error { return nil }

// Private makes dir readable by its owner alone (mode 0700).
func Private(dir string) error { return os.Chmod(dir, 0o700) }
