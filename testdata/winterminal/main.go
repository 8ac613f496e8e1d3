//go:build windows

// Command winterminal is the stand-in for Windows Terminal's wt.exe that
// TestWindowsUnderWine puts on PATH as wt.exe, as the GitHub and Slack
// stand-ins speak those services' real protocols. It reads its argv as
// wt.exe does (AppCommandlineArgs in microsoft/terminal): commands split on
// every ";" not preceded by "\", "\;" turned back into ";"; the options
// -w/--window before the command; new-tab (or nt) with --title, -p and -d;
// then, after "--" or from the first positional argument, the tab's command
// line, which it joins back as Windows Terminal does (quotes around an
// argument that holds a space). Anything else is an error, as it is to wt.
//
// It then starts that command line as Windows Terminal would start a tab:
// in a console of its own, without waiting for it, and exits at once, as
// wt.exe does once it has handed the command to Windows Terminal. It
// appends what it understood to wt.log beside itself, for the test.
//
// Where it is not Windows Terminal: a tab's console is a pseudoconsole
// (ConPTY) owned by Windows Terminal, here a plain new console; and the
// tab's process is Windows Terminal's child with its environment, here
// this program's child with wt.exe's.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"
)

func main() {
	cmds := split(os.Args[1:])
	if len(cmds) != 1 {
		fail(fmt.Errorf("one command expected, got %d: %q", len(cmds), cmds))
	}
	args := cmds[0]
	window := ""
	for len(args) > 1 && (args[0] == "-w" || args[0] == "--window") {
		window, args = args[1], args[2:]
	}
	if len(args) == 0 || (args[0] != "new-tab" && args[0] != "nt") {
		fail(fmt.Errorf("new-tab expected, got %q", args))
	}
	args = args[1:]
	title := ""
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		opt := args[0]
		if opt == "--" {
			args = args[1:]
			break
		}
		if len(args) < 2 {
			fail(fmt.Errorf("%s needs a value", opt))
		}
		switch opt {
		case "--title":
			title = args[1]
		case "-p", "--profile", "-d", "--startingDirectory":
		default:
			fail(fmt.Errorf("unknown option %s", opt))
		}
		args = args[2:]
	}
	if len(args) == 0 {
		fail(fmt.Errorf("no command line for the tab"))
	}
	var line []string
	for _, a := range args {
		if strings.Contains(a, " ") {
			a = `"` + a + `"`
		}
		line = append(line, a)
	}
	cmdline := strings.Join(line, " ")
	argv, err := windows.DecomposeCommandLine(cmdline)
	if err != nil || len(argv) == 0 {
		fail(fmt.Errorf("command line %q: %v", cmdline, err))
	}
	record(fmt.Sprintf("window=%s title=%s commandline=%s\n", window, title, cmdline))
	cmd := exec.Command(argv[0])
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: cmdline, CreationFlags: windows.CREATE_NEW_CONSOLE}
	if err := cmd.Start(); err != nil {
		fail(err)
	}
}

// split is wt's BuildCommands: a ";" at an argument's start or after any
// character but "\" ends a command; "\;" then stands for ";".
func split(argv []string) [][]string {
	delim := regexp.MustCompile(`^;|[^\\];`)
	unescape := func(a string) string { return strings.ReplaceAll(a, `\;`, ";") }
	cmds := [][]string{nil}
	for _, arg := range argv {
		for {
			loc := delim.FindStringIndex(arg)
			if loc == nil {
				cmds[len(cmds)-1] = append(cmds[len(cmds)-1], unescape(arg))
				break
			}
			end := loc[1] - 1
			if end > 0 {
				cmds[len(cmds)-1] = append(cmds[len(cmds)-1], unescape(arg[:end]))
			}
			cmds = append(cmds, nil)
			if arg = arg[end+1:]; arg == "" {
				break
			}
		}
	}
	return cmds
}

func record(line string) {
	self, err := os.Executable()
	if err != nil {
		fail(err)
	}
	f, err := os.OpenFile(filepath.Join(filepath.Dir(self), "wt.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		fail(err)
	}
	defer f.Close()
	f.WriteString(line)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "wt:", err)
	os.Exit(1)
}
