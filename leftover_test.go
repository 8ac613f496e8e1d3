//go:build linux

package teamkit_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// suiteVar marks every process this test binary starts, directly or
// through a script (scriptParams sets it too: scripts do not inherit the
// test's environment), so that leftoverCheck can find what outlived it.
const suiteVar = "TEAMKIT_TEST_SUITE"

// suiteMark is the value of suiteVar: this test binary's own, or, in a
// command the binary runs as (spawn in a script), the one it inherited.
var suiteMark = func() string {
	if v := os.Getenv(suiteVar); v != "" {
		return v
	}
	return fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
}()

// leftoverGrace is how long processes get to finish after the last test:
// a supervisor records its agent's exit, a guard notices its supervisor
// gone. Only a failing suite waits this long.
const leftoverGrace = 30 * time.Second

// leftoverCheck fails the suite when a process it started outlives it (an
// agent a script never stopped, its supervisor or guard), naming each, and
// then kills them, so a run never leaves a `sleep 300` behind.
type leftoverCheck struct{ m testscript.TestingM }

func (l leftoverCheck) Run() int {
	code := l.m.Run()
	if runtime.GOOS != "linux" {
		return code // /proc is how the marked processes are found
	}
	left := suiteProcesses()
	for deadline := time.Now().Add(leftoverGrace); len(left) > 0 && time.Now().Before(deadline); left = suiteProcesses() {
		time.Sleep(100 * time.Millisecond)
	}
	if len(left) == 0 {
		return code
	}
	fmt.Fprintf(os.Stderr, "FAIL: %d process(es) started by the tests outlived them (a test or script never stopped them):\n", len(left))
	for _, p := range left {
		fmt.Fprintf(os.Stderr, "\tpid %d: %s\n", p.pid, p.cmdline)
		syscall.Kill(p.pid, syscall.SIGKILL)
	}
	return 1
}

type leftover struct {
	pid     int
	cmdline string
}

// suiteProcesses are the live processes (not zombies) carrying this
// binary's mark, but this process itself.
func suiteProcesses() []leftover {
	mark := []byte(suiteVar + "=" + suiteMark + "\x00")
	dirs, _ := os.ReadDir("/proc")
	var out []leftover
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err != nil || !bytes.Contains(env, mark) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat")); err == nil {
			if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
				continue
			}
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		out = append(out, leftover{pid, strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))})
	}
	return out
}
