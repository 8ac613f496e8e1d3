package proc

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

func TestIdentity(t *testing.T) {
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	if !self.Known() || !self.Alive() {
		t.Fatalf("Self() = %+v: not known and alive", self)
	}
	if (Identity{}).Alive() || (Identity{PID: -1}).Alive() {
		t.Fatal("Alive of a non-pid = true")
	}
	// The same pid with another start time, or from another boot, is
	// another process.
	for _, other := range []Identity{{PID: self.PID, Start: self.Start + 1, Boot: self.Boot}, {PID: self.PID, Start: self.Start, Boot: "another-boot"}} {
		if other.Alive() {
			t.Errorf("%+v counted as alive", other)
		}
		if err := other.Signal(syscall.Signal(0)); err != ErrGone {
			t.Errorf("Signal(%+v) = %v, want ErrGone", other, err)
		}
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if (Identity{PID: cmd.Process.Pid}).Alive() {
		t.Fatalf("pid %d alive after the process was reaped", cmd.Process.Pid)
	}
}

func TestReadStatOddName(t *testing.T) {
	// A command name with spaces and parentheses must not shift the fields.
	dir := t.TempDir()
	odd := dir + "/a) b (c"
	if err := os.Symlink("/bin/sleep", odd); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(odd, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	s, err := ReadStat(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if s.PPID != os.Getpid() || s.Start == 0 {
		t.Fatalf("ReadStat = %+v, want ppid %d and a start time", s, os.Getpid())
	}
}

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
