//go:build !windows

package launch

import (
	"context"
	"strings"
	"testing"
)

// Windows' launchers fail at once on Unix, naming the launchers that work
// here, as tmux does on Windows.
func TestWindowsLaunchersRefused(t *testing.T) {
	_, console := Console("/bin/spawn", "/r.spec.json", "/r.log", nil)
	_, wt := WindowsTerminal(context.Background(), "/bin/spawn", "/r.spec.json", "/r.pid", "demo", "w1", []string{"PATH=/bin"})
	for mode, err := range map[string]error{
		ModeConsole: Supported(ModeConsole), ModeWT: Supported(ModeWT),
		"Console": console, "WindowsTerminal": wt,
	} {
		if err == nil || !strings.Contains(err.Error(), "use launch=background, launch=tmux or launch=foreground") {
			t.Errorf("%s: %v", mode, err)
		}
	}
	for _, mode := range []string{ModeBackground, ModeTmux, ModeForeground} {
		if err := Supported(mode); err != nil {
			t.Errorf("Supported(%s) = %v", mode, err)
		}
	}
}
