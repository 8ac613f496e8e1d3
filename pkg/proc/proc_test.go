package proc

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// TestMain lets the test binary serve as a child process: TEAMKIT_PROC_CHILD
// says what it does (see child_test.go files).
func TestMain(m *testing.M) {
	if role := os.Getenv("TEAMKIT_PROC_CHILD"); role != "" {
		os.Exit(child(role))
	}
	os.Exit(m.Run())
}

// childCmd runs this test binary as a child in role.
func childCmd(t *testing.T, role string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return childCmdNoT(self, role)
}

func TestIdentity(t *testing.T) {
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	if !self.Known() || !self.Alive() {
		t.Fatalf("Self() = %+v: not known and alive", self)
	}
	if err := self.Signal(0); err != nil {
		t.Fatalf("Signal(0) to self = %v", err)
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
	cmd := childCmd(t, "exit")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	id, err := Of(cmd.Process.Pid)
	if err != nil || !id.Known() {
		t.Fatalf("Of(child) = %+v, %v", id, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if id.Alive() {
		t.Fatalf("%+v alive after the process was reaped", id)
	}
	if err := id.Signal(syscall.SIGKILL); err != ErrGone {
		t.Fatalf("Signal(SIGKILL) to an ended process = %v, want ErrGone", err)
	}
}

func childCmdNoT(self, role string) *exec.Cmd {
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), "TEAMKIT_PROC_CHILD="+role)
	return cmd
}

// BenchmarkAlive is the liveness check spawn list makes for each agent of a
// fleet whose run is on this host: its recorded identity against the
// process table (on Linux, /proc/<pid>/stat read and parsed).
//
//	go test -run '^$' -bench Alive -benchtime 20000x ./pkg/proc/
func BenchmarkAlive(b *testing.B) {
	self, err := Self()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if !self.Alive() {
			b.Fatal("this process is not alive")
		}
	}
}
