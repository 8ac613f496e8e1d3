package proc

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func child(role string) int {
	switch role {
	case "exit":
		return 0
	case "sleep":
		time.Sleep(300 * time.Second)
		return 0
	case "tree": // a child of its own, whose pid it prints, then sleep
		self, _ := os.Executable()
		c := childCmdNoT(self, "sleep")
		if err := c.Start(); err != nil {
			fmt.Println("error", err)
			return 1
		}
		fmt.Println(c.Process.Pid)
		time.Sleep(300 * time.Second)
		return 0
	}
	return 3
}

// TestTree: the agent and the child it starts are both in the run's Job
// Object, seen from outside by the marker; spawn stop's request reaches the
// supervisor; Stop ends the whole tree; and the job going away with its
// handle leaves nothing behind.
func TestTree(t *testing.T) {
	marker := "TEAMKIT_RUN=test-tree-" + strconv.Itoa(os.Getpid())
	cmd := childCmd(t, "tree")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	tree, err := StartTree(cmd, Group{Marker: marker}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	gpid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the agent said %q", line)
	}
	grandchild, err := Of(gpid)
	if err != nil {
		t.Fatal(err)
	}
	if m := (Group{Marker: marker}).Members(); len(m) != 2 {
		t.Fatalf("members seen from outside: %v, want the agent %d and its child %d", m, cmd.Process.Pid, gpid)
	}
	// spawn stop's graceful step is a request to the supervisor.
	go Group{Marker: marker}.Stop(time.Hour)
	select {
	case <-tree.StopRequests():
	case <-time.After(time.Minute):
		t.Fatal("the stop request did not reach the tree's holder")
	}
	tree.Stop(time.Second)
	err = cmd.Wait()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() == 0 {
		t.Fatalf("the agent ended %v (%v), want a non-zero code", cmd.ProcessState, err)
	}
	if !grandchild.WaitGone(time.Minute) {
		t.Fatalf("the agent's child %d outlived Stop", gpid)
	}
	if m := tree.Members(); len(m) != 0 {
		t.Fatalf("members after Stop: %v", m)
	}
}

// TestAliveAfterClockStepWindows: Windows gives no boot id, so the boot is
// computed, now less the time since boot, and moves with every step of the
// wall clock: a clock set forward by the time service (a virtual machine
// resumed, whose tick count stood still while it was paused), or back by
// hand, moves it by as much. A process alive across such a step is still
// the process recorded before it: its creation time does not move.
func TestAliveAfterClockStepWindows(t *testing.T) {
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	boot, err := strconv.ParseInt(self.Boot, 10, 64)
	if err != nil {
		t.Fatalf("boot %q: %v", self.Boot, err)
	}
	for _, step := range []time.Duration{-10 * time.Minute, 3 * time.Minute, 8 * time.Hour} {
		// Recorded before the clock was stepped by step: the boot read
		// then was the one read now less step.
		before := self
		before.Boot = strconv.FormatInt(boot-int64(step/time.Second), 10)
		if !before.Alive() {
			t.Errorf("this process, recorded before a clock step of %s, counted as gone", step)
		}
		if err := before.Signal(0); err != nil {
			t.Errorf("Signal(0) to this process, recorded before a clock step of %s: %v", step, err)
		}
	}
}
