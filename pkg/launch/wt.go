package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/teamkit/teamkit/internal/atomicfile"
)

// ErrNoWT is returned when a type asks for Windows Terminal and wt.exe is
// not on PATH.
var ErrNoWT = errors.New("this type launches in Windows Terminal, but wt.exe is not on PATH")

// WTHint is what spawn suggests with ErrNoWT.
const WTHint = "install Windows Terminal, or use a type with launch=console or launch=background"

// WTWindow is the Windows Terminal window (wt -w) every wt run opens its
// tab in: created by the first, reused by the others.
const WTWindow = "teamkit"

// WTPatience is how long WindowsTerminal waits for the supervisor in the
// new tab to report its pid: Windows Terminal may have to start first.
const WTPatience = time.Minute

// WindowsTerminal opens a tab titled team/name in the Windows Terminal
// window WTWindow, running "self __run specPath", and returns the
// supervisor's pid. wt.exe hands the command to Windows Terminal and exits,
// so the pid comes from the supervisor itself: it writes it to pidFile (the
// spec's PIDFile) first thing, and the tab is taken as failed if that does
// not happen within WTPatience. env is wt.exe's environment; the tab's is
// Windows Terminal's own, as a tmux window's is the tmux server's (the
// agent's environment travels in the spec).
func WindowsTerminal(ctx context.Context, self, specPath, pidFile, team, name string, env []string) (int, error) {
	if err := Supported(ModeWT); err != nil {
		return 0, err
	}
	wt, err := LookPath("wt", env)
	if err != nil {
		return 0, ErrNoWT
	}
	args, err := WTArgs(self, specPath, team, name)
	if err != nil {
		return 0, err
	}
	os.Remove(pidFile)
	// wt.exe shows its errors in a window of its own, not on its output,
	// which is left alone: a pipe would also be held open by the tab's
	// processes wherever handles are inherited whole (Wine).
	c := exec.CommandContext(ctx, wt, args...)
	c.Env = env
	if err := c.Run(); err != nil {
		return 0, fmt.Errorf("wt.exe new-tab: %w", err)
	}
	return awaitPID(ctx, pidFile, WTPatience)
}

// WTArgs is wt.exe's argv (after argv[0]) for a new tab running
// "self __run specPath".
//
// wt.exe reads its argv, once Windows has split the command line, as a
// list of commands separated by ";", wherever it stands in an argument;
// "\;" stands for a literal ";". After "--" come the tab's command and its
// arguments, which Windows Terminal joins back into a command line, putting
// quotes around those that hold a space; how it treats "\;" or a quote in
// them has changed between releases. So every ";" is escaped, and an
// argument that its quoting could not carry intact is refused: one holding
// a quote, a control character or "\;", one ending in "\" (which would
// escape the closing quote), or an empty one. Windows paths hold none of
// those.
func WTArgs(self, specPath, team, name string) ([]string, error) {
	args := []string{"-w", WTWindow, "new-tab", "--title", team + "/" + name, "--", self, "__run", specPath}
	for i, a := range args {
		if bad := wtUnsafe(a); bad != "" {
			return nil, fmt.Errorf("cannot hand %q to wt.exe: it %s, which Windows Terminal would not pass on intact (use launch=console)", a, bad)
		}
		args[i] = strings.ReplaceAll(a, ";", `\;`)
	}
	return args, nil
}

// wtUnsafe says what in a makes it unsafe for wt.exe's command line, or "".
func wtUnsafe(a string) string {
	switch {
	case a == "":
		return "is empty"
	case strings.Contains(a, `"`):
		return "holds a quote"
	case strings.Contains(a, `\;`):
		return `holds "\;"`
	case strings.HasSuffix(a, `\`):
		return `ends in "\"`
	case strings.ContainsFunc(a, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return "holds a control character"
	}
	return ""
}

// announce writes the supervisor's pid to spec.PIDFile, when set, for the
// launcher waiting for it (WindowsTerminal), whole: the launcher never
// reads half a pid.
func announce(spec Spec) {
	if spec.PIDFile == "" {
		return
	}
	if err := atomicfile.Write(spec.PIDFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		note(spec, "could not report this supervisor's pid: %v", err)
	}
}

// awaitPID waits until the pid file at path appears, then reads and
// removes it.
func awaitPID(ctx context.Context, path string, patience time.Duration) (int, error) {
	deadline := time.Now().Add(patience)
	for {
		if data, err := os.ReadFile(path); err == nil {
			os.Remove(path)
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err != nil || pid <= 0 {
				return 0, fmt.Errorf("the supervisor reported pid %q", data)
			}
			return pid, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("Windows Terminal did not start the agent's supervisor within %s (see its window for why)", patience)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
