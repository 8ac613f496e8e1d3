// Command wineagent is the agent TestWindowsUnderWine spawns: a Windows
// program that does what an agent CLI does with teamkit, through the
// built .exe files beside it (ready.exe, inbox.exe), with the TEAMKIT_*
// environment spawn gives it.
//
//	wineagent agent BEAT   start a child that appends to BEAT, send the lead
//	                       a reply, mark ready, then wait for the child
//	wineagent child BEAT   append a byte to BEAT every 50ms, for ever
//	wineagent brief OUT    copy stdin to OUT, then mark ready
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

func main() {
	if len(os.Args) != 3 {
		fail(fmt.Errorf("usage: wineagent agent|child|brief FILE"))
	}
	file := os.Args[2]
	switch os.Args[1] {
	case "agent":
		child := exec.Command(self(), "child", file)
		if err := child.Start(); err != nil {
			fail(err)
		}
		// The reply first: spawn returns once the agent is ready, and
		// the test reads the reply then.
		teamkit("inbox", "send", os.Getenv("TEAMKIT_TEAM"), "lead", "reply from "+os.Getenv("TEAMKIT_AGENT"), "--from", os.Getenv("TEAMKIT_AGENT"))
		teamkit("ready", "mark")
		fail(child.Wait())
	case "child":
		f, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			fail(err)
		}
		for {
			if _, err := f.Write([]byte{'.'}); err != nil {
				fail(err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	case "brief":
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			fail(err)
		}
		if err := os.WriteFile(file, b, 0o600); err != nil {
			fail(err)
		}
		teamkit("ready", "mark")
	default:
		fail(fmt.Errorf("unknown mode %q", os.Args[1]))
	}
}

func self() string {
	p, err := os.Executable()
	if err != nil {
		fail(err)
	}
	return p
}

// teamkit runs one of the teamkit commands built beside this program.
func teamkit(name string, args ...string) {
	cmd := exec.Command(filepath.Join(filepath.Dir(self()), name+".exe"), args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fail(fmt.Errorf("%s %v: %w", name, args, err))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "wineagent:", err)
	os.Exit(1)
}
