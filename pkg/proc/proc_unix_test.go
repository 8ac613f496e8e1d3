//go:build !windows

package proc

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func child(role string) int {
	if role == "exit" {
		return 0
	}
	if f, ok := roles[role]; ok {
		return f()
	}
	return 3
}

// roles are the child roles an OS's tests add.
var roles = map[string]func() int{}

func TestGroupStop(t *testing.T) {
	// A shell that ignores SIGTERM, with a child: both carry the marker;
	// Stop ends both (SIGKILL after the grace) and nothing else.
	cmd := exec.Command("sh", "-c", "trap '' TERM; sleep 300 & wait")
	cmd.Env = append(os.Environ(), "TEAMKIT_RUN=test-group-stop")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	g := Group{Marker: "TEAMKIT_RUN=test-group-stop"}
	for len(g.Members()) < 2 {
		select {
		case <-done:
			t.Fatal("the shell exited early")
		default:
		}
	}
	g.Stop(100e6)
	<-done
	if m := g.Members(); len(m) != 0 {
		t.Fatalf("members after Stop: %v", m)
	}
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("shell ended %v, want killed by SIGKILL", cmd.ProcessState)
	}
}

// TestGroupFindsOrphans is the path macOS and FreeBSD supervise by (they
// have no child subreaper): an agent's child that outlived it and was
// adopted by init, not by this process, is still found by the run's marker
// and stopped.
func TestGroupFindsOrphans(t *testing.T) {
	marker := "TEAMKIT_RUN=test-orphans"
	cmd := exec.Command("sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!")
	cmd.Env = append(os.Environ(), marker)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := Of(pid)
	if err != nil {
		t.Fatal(err)
	}
	g := Group{Marker: marker}
	if m := g.Members(); len(m) != 1 || m[0] != orphan.PID {
		t.Fatalf("members = %v, want the orphan %d", m, orphan.PID)
	}
	g.Stop(10 * time.Second)
	if !orphan.WaitGone(30*time.Second) || len(g.Members()) != 0 {
		t.Fatalf("orphan %d still runs after Stop", orphan.PID)
	}
}

// TestWaitEmptyUnwatchedMember: a member the look found but could not
// watch (it ended and was reaped before its identity was read, having
// forked what the look did not see) does not make the group empty: the
// wait looks again until its deadline. Here no identity can be read at
// all, which makes every member such a one, and Stop would otherwise
// return after its SIGTERM with the member running.
func TestWaitEmptyUnwatchedMember(t *testing.T) {
	marker := "TEAMKIT_RUN=test-unwatched"
	cmd := exec.Command("sleep", "300")
	cmd.Env = append(os.Environ(), marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	g := Group{Marker: marker}
	for deadline := time.Now().Add(10 * time.Second); len(g.Members()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the member never carried the marker")
		}
	}
	if _, err := BootID(); err != nil {
		t.Skip(err)
	}
	saved := bootOnce.err
	bootOnce.err = errors.New("no boot id")
	defer func() { bootOnce.err = saved }()
	start := time.Now()
	if g.waitEmpty(200 * time.Millisecond) {
		t.Fatalf("waitEmpty = true after %v, with member %d running", time.Since(start), cmd.Process.Pid)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("waitEmpty gave up after %v, before its deadline", d)
	}
}
