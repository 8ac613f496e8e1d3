package launch

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf16"

	"golang.org/x/sys/windows"
)

// startDetached starts cmd with a hidden console and a process group of its
// own, so the spawner's Ctrl-C and console window do not reach it.
func startDetached(cmd *exec.Cmd) (*exec.Cmd, error) {
	return startAway(cmd, windows.CREATE_NEW_PROCESS_GROUP|windows.CREATE_NO_WINDOW)
}

// startInConsole starts cmd in a new console window and a process group of
// its own: spawn stop's CTRL_BREAK goes to the agent's group on that
// console, and the spawner's Ctrl-C does not.
func startInConsole(cmd *exec.Cmd) (*exec.Cmd, error) {
	return startAway(cmd, windows.CREATE_NEW_PROCESS_GROUP|windows.CREATE_NEW_CONSOLE)
}

// startAway starts cmd with flags, outside the spawner's Job Object when
// that job allows it: a terminal that puts its shells in a kill-on-close
// job would otherwise end the run with the window. It returns the started
// command.
func startAway(cmd *exec.Cmd, flags uint32) (*exec.Cmd, error) {
	again := &exec.Cmd{Path: cmd.Path, Args: cmd.Args, Env: cmd.Env, Dir: cmd.Dir, Stdin: cmd.Stdin, Stdout: cmd.Stdout, Stderr: cmd.Stderr}
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: flags | windows.CREATE_BREAKAWAY_FROM_JOB}
	err := cmd.Start()
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		// The spawner's job forbids breaking away.
		again.SysProcAttr = &syscall.SysProcAttr{CreationFlags: flags}
		return again, again.Start()
	}
	return cmd, err
}

// Console starts "self __run specPath" in a new console window (see
// startInConsole) and returns its pid. The supervisor's own output goes to
// logPath, and so do its notes; the agent's output is shown in the window
// and copied to the log (onConsole). The window closes when the run ends;
// closing it stops the run (Windows sends the supervisor CTRL_CLOSE_EVENT,
// which Go delivers as SIGTERM).
func Console(self, specPath, logPath string, env []string) (int, error) {
	return startSupervisor(self, specPath, logPath, env, startInConsole)
}

// openConsole opens the console this process is attached to, by name, and
// asks it for UTF-8 (what agents print) and VT sequences (colours): a
// console that refuses either still shows the text.
func openConsole() (in, out *os.File, err error) {
	out, err = os.OpenFile("CONOUT$", os.O_RDWR, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open the console: %w", err)
	}
	in, err = os.OpenFile("CONIN$", os.O_RDWR, 0)
	if err != nil {
		out.Close()
		return nil, nil, fmt.Errorf("open the console's input: %w", err)
	}
	windows.SetConsoleOutputCP(65001) // CP_UTF8
	var mode uint32
	if windows.GetConsoleMode(windows.Handle(out.Fd()), &mode) == nil {
		windows.SetConsoleMode(windows.Handle(out.Fd()), mode|windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING)
	}
	return in, out, nil
}

// executable finds p as Windows runs it: a file whose extension is in
// PATHEXT, or p with one of those extensions added (the execute bit means
// nothing on Windows).
func executable(p string, env []string) (string, bool) {
	exts := pathExts(env)
	isFile := func(f string) bool {
		st, err := os.Stat(f)
		return err == nil && !st.IsDir()
	}
	ext := strings.ToLower(filepath.Ext(p))
	for _, e := range exts {
		if ext == e && isFile(p) {
			return p, true
		}
	}
	for _, e := range exts {
		if isFile(p + e) {
			return p + e, true
		}
	}
	return p, false
}

// pathExts is PATHEXT, lower-cased, or Windows' default list.
func pathExts(env []string) []string {
	v := getenv(env, "PATHEXT")
	if v == "" {
		v = ".COM;.EXE;.BAT;.CMD"
	}
	var out []string
	for _, e := range strings.Split(strings.ToLower(v), ";") {
		if e != "" && e[0] == '.' {
			out = append(out, e)
		}
	}
	return out
}

// getenv is the value of key in env, whose names Windows compares without
// regard to case (Path, PATH).
func getenv(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && strings.EqualFold(k, key) {
			v = val
		}
	}
	return v
}

// Supported reports whether the launch mode works on Windows: tmux does
// not.
func Supported(mode string) error {
	if mode == ModeTmux {
		return errors.New("launch=tmux needs tmux, which Windows does not have; use launch=background, launch=console, launch=wt or launch=foreground")
	}
	return nil
}

// BatchFile reports whether path is a batch file, which Windows runs
// through cmd.exe's parser: %, ^, !, &, |, <, >, " and newlines in its
// arguments cannot be passed through that safely.
func BatchFile(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".cmd", ".bat":
		return true
	}
	return false
}

// maxCmdLine is the longest command line CreateProcess takes: 32,767
// UTF-16 units, its NUL included.
const maxCmdLine = 32766

// CommandLineFits refuses argv when the command line os/exec builds from it
// (each argument quoted as the C runtime reads it, joined by spaces) is
// longer than CreateProcess takes: Windows hands a program one command
// line, not an argv, and has no per-argument limit but that one.
func CommandLineFits(argv []string) error {
	n := len(argv) - 1
	for _, a := range argv {
		for _, r := range syscall.EscapeArg(a) {
			n += utf16.RuneLen(r)
		}
	}
	if n > maxCmdLine {
		return fmt.Errorf("its command line is %d characters, over the %d Windows takes", n, maxCmdLine)
	}
	return nil
}

// Private makes dir readable by its owner alone, and everything created in
// it after: its DACL becomes one entry, full control for the current user,
// inherited by files and subdirectories, with the entries dir would inherit
// from its parent cut off (a protected DACL). Windows ignores Unix modes,
// and a run directory's files (specs, briefings, logs) hold secrets.
func Private(dir string) error {
	user, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return err
	}
	acl, err := windows.ACLFromEntries([]windows.EXPLICIT_ACCESS{{
		AccessPermissions: windows.GENERIC_ALL,
		AccessMode:        windows.GRANT_ACCESS,
		Inheritance:       windows.SUB_CONTAINERS_AND_OBJECTS_INHERIT,
		Trustee: windows.TRUSTEE{
			TrusteeForm:  windows.TRUSTEE_IS_SID,
			TrusteeType:  windows.TRUSTEE_IS_USER,
			TrusteeValue: windows.TrusteeValueFromSID(user.User.Sid),
		},
	}}, nil)
	if err != nil {
		return err
	}
	return windows.SetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, acl, nil)
}
