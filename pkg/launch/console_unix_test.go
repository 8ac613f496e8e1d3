//go:build !windows

package launch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// A console run's agent output goes to the log whatever becomes of the
// console (here there is none to open, which is noted), and the run's end
// does not wait for a process the agent left holding its output.
func TestOnConsoleLogs(t *testing.T) {
	spec := Spec{Log: filepath.Join(t.TempDir(), "r1.log")}
	cmd := exec.Command("sh", "-c", "sleep 600 & echo bg=$!; echo to-stdout; echo to-stderr >&2")
	defer onConsole(spec, cmd)()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait() // returns consoleDrain after sh exits, with sleep still running
	if err != nil && err != exec.ErrWaitDelay {
		t.Fatalf("wait: %v", err)
	}
	log, err := os.ReadFile(spec.Log)
	if err != nil {
		t.Fatal(err)
	}
	if _, after, ok := strings.Cut(string(log), "bg="); ok {
		if pid, err := strconv.Atoi(strings.Fields(after)[0]); err == nil {
			syscall.Kill(pid, syscall.SIGKILL) // the sleep sh left running
		}
	}
	for _, want := range []string{"teamkit: the agent's output goes to the log only: no console on this system\n", "to-stdout\n", "to-stderr\n"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}
