//go:build !windows

package proc

import (
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
