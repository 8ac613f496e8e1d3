package proc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func init() {
	roles["supervisor"] = supervisorChild
	roles["leader-exit"] = leaderExitChild
	if os.Getenv("TEAMKIT_PROC_CHILD") == "leader-exit" {
		// Locked in an init, the main goroutine runs main on the main
		// thread: the one leaderExitChild ends.
		runtime.LockOSThread()
	}
}

// leaderExitChild ends its main thread alone, as a C program's
// pthread_exit in main does: exit, not exit_group. The process runs on in
// its other threads (the Go runtime's) until it is killed.
func leaderExitChild() int {
	unix.RawSyscall(unix.SYS_EXIT, 0, 0, 0)
	return 1 // not reached
}

// supervisorChild is a supervisor, as spawn's: it starts a run's tree whose
// agent leaves a process that scrubbed the marker and left the session, and
// starts a nested run (another marker); once all three have written their
// pids into $ADOPT_DIR, it prints the tree's members, then stops it.
func supervisorChild() int {
	dir := os.Getenv("ADOPT_DIR")
	marker := "TEAMKIT_RUN=adopt-test"
	cmd := exec.Command("sh", "-c", `env -u TEAMKIT_RUN setsid sh -c 'echo $$ > "$1/escaped"; exec sleep 300' sh "$1" </dev/null >/dev/null 2>&1 &
TEAMKIT_RUN=other-run sh -c 'echo $$ > "$1/nested"; exec sleep 300' sh "$1" &
echo $$ > "$1/agent"
wait`, "sh", dir)
	cmd.Env = append(os.Environ(), marker)
	tree, err := StartTree(cmd, Group{Marker: marker}, func(string, ...any) {})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if data, err := os.ReadFile(filepath.Join(dir, "nested")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		tree.Stop(time.Second)
		cmd.Wait()
		tree.Close()
	}()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		n := 0
		for _, f := range []string{"escaped", "nested", "agent"} {
			if data, _ := os.ReadFile(filepath.Join(dir, f)); len(data) > 0 && data[len(data)-1] == '\n' {
				n++
			}
		}
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "the agent's processes did not start")
			return 1
		}
	}
	fmt.Println(tree.Members())
	return 0
}

// A live supervisor's run is its descendants (it adopts their orphans),
// less a nested run under another marker: the agent's process that left
// the session without the marker is one, while its parent still runs; a
// process elsewhere that carries the run's marker is not one, nor is it
// read (a fleet's supervisors ending together each read every process's
// environment, the most of spawn stop --all).
func TestSupervisorGroupIsItsDescendants(t *testing.T) {
	dir := t.TempDir()
	outsider := exec.Command("sleep", "300")
	outsider.Env = append(os.Environ(), "TEAMKIT_RUN=adopt-test")
	if err := outsider.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { outsider.Process.Kill(); outsider.Wait() }()
	cmd := childCmd(t, "supervisor")
	cmd.Env = append(cmd.Env, "ADOPT_DIR="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("supervisor child: %v", err)
	}
	var members []int
	for _, f := range strings.Fields(strings.Trim(strings.TrimSpace(string(out)), "[]")) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("members %q", out)
		}
		members = append(members, pid)
	}
	pid := func(name string) int {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for name, want := range map[string]bool{"agent": true, "escaped": true, "nested": false} {
		if slices.Contains(members, pid(name)) != want {
			t.Errorf("members %v: %s (%d) a member = %v, want %v", members, name, pid(name), !want, want)
		}
	}
	if slices.Contains(members, outsider.Process.Pid) {
		t.Errorf("members %v hold %d, a process outside the supervisor's tree", members, outsider.Process.Pid)
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

func TestReadProcLineLongerThanItsBuffer(t *testing.T) {
	want, err := ReadStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	line, err := readProcLine("/proc/self/stat", make([]byte, 16))
	// The state (running, sleeping) may change between the two reads; the
	// parent, group and session do not.
	var after []string
	if i := bytes.LastIndexByte(line, ')'); i > 0 {
		after = strings.Fields(string(line[i+1:]))
	}
	if err != nil || !bytes.HasPrefix(line, fmt.Appendf(nil, "%d (", os.Getpid())) || !bytes.HasSuffix(line, []byte("\n")) ||
		len(after) < 20 || strings.Join(after[1:4], " ") != fmt.Sprintf("%d %d %d", want.PPID, want.Pgrp, want.Session) {
		t.Fatalf("readProcLine with a 16-byte buffer = %q (%v), want the whole line", line, err)
	}
	if _, err := readProcLine("/proc/self/no-such-file", make([]byte, 16)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("readProcLine of a missing file = %v, want fs.ErrNotExist", err)
	}
}

// A process on its way out is no member of its run: nothing of it is left
// to stop, and its environment may already read as empty, which would make
// another run's process pass for this run's (a nested run's supervisor,
// killed a moment before, was swept as the lead run's own). Caught in its
// exit (some 5 ms: dd lets go of its 64 MB block), a child
// carrying the run's own marker, a member while it ran, is none.
func TestExitingProcessIsNoMember(t *testing.T) {
	marker := "TEAMKIT_RUN=exit-test"
	g := Group{Marker: marker, Parent: os.Getpid()}
	catchExits(t, g, false, func() (int, int, func() bool, func()) {
		cmd, out := startWithMarker(t, marker, "dd", "if=/dev/zero", "bs=64M", "count=1", "status=none")
		pid := cmd.Process.Pid
		// dd has its block once it writes; it then waits on the full pipe.
		if _, err := out.ReadByte(); err != nil {
			t.Fatalf("dd wrote nothing: %v", err)
		}
		if !g.member(pid) {
			t.Fatalf("the running dd (%d) is no member", pid)
		}
		// Judged only if still exiting after the look.
		stillExiting := func() bool {
			after, err := readInfo(pid)
			return err == nil && after.Exiting && !after.Ended
		}
		return pid, pid, stillExiting, func() { cmd.Wait() }
	})
}

// A live process whose parent is on its way out is still its run's: the
// kernel hands it to the supervisor only late in the parent's exit, and
// until then it names the exiting parent as its own. Were the parent to
// cut its chain, a stop that looked then would find nothing left to stop
// (a child ignoring SIGTERM would outlive its run). Caught while its dd
// parent exits, a sleep is a member, by member and by Members.
func TestChildOfExitingProcessIsMember(t *testing.T) {
	marker := "TEAMKIT_RUN=exit-parent-test"
	g := Group{Marker: marker, Parent: os.Getpid()}
	catchExits(t, g, true, func() (int, int, func() bool, func()) {
		cmd, r := startWithMarker(t, marker, "sh", "-c", `sleep 600 & echo $!; exec dd if=/dev/zero bs=64M count=1 status=none`)
		dd := cmd.Process.Pid
		line, err := r.ReadString('\n')
		child, _ := strconv.Atoi(strings.TrimSpace(line))
		if err != nil || child <= 0 {
			t.Fatalf("no pid of the sleep: %q, %v", line, err)
		}
		if _, err := r.ReadByte(); err != nil {
			t.Fatalf("dd wrote nothing: %v", err)
		}
		if !g.member(child) {
			t.Fatalf("the sleep (%d), its parent running, is no member", child)
		}
		// Judged only if the sleep still named the exiting dd as its
		// parent after the look.
		stillChild := func() bool {
			after, err := readInfo(child)
			return err == nil && after.PPID == dd
		}
		return dd, child, stillChild, func() {
			syscall.Kill(child, syscall.SIGKILL)
			cmd.Wait()
		}
	})
}

// A process whose main thread has ended while its other threads run reads
// as a zombie in its stat, and its environ as empty, yet it runs: it is
// alive, a member of its run by its marker, and its run's stop ends it.
func TestProcessWithoutItsMainThreadRuns(t *testing.T) {
	marker := "TEAMKIT_RUN=leader-exit-test"
	cmd := childCmd(t, "leader-exit")
	cmd.Env = append(cmd.Env, marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-done
	}()
	pid := cmd.Process.Pid
	id, err := Of(pid)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		s, err := ReadStat(pid)
		if err != nil {
			t.Fatal(err)
		}
		if s.State == 'Z' {
			if s.Threads < 2 {
				t.Fatalf("the child ended whole: %+v", s)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child's main thread did not end: %+v", s)
		}
	}
	if !id.Alive() {
		t.Error("Alive = false for a process whose other threads run")
	}
	// By its marker alone (a sweep after its supervisor died), and as its
	// supervisor's descendant.
	for _, g := range []Group{{Marker: marker}, {Marker: marker, Parent: os.Getpid()}} {
		if !g.member(pid) || !slices.Contains(g.Members(), pid) {
			t.Errorf("%d is no member of its run %+v (member %v, Members %v)", pid, g, g.member(pid), g.Members())
		}
	}
	g := Group{Marker: marker}
	if s, _ := ReadStat(pid); s.Leaving() {
		t.Error("Leaving = true for a process whose other threads run")
	}
	g.Stop(time.Second)
	select {
	case err := <-done:
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
			t.Errorf("the child ended with %v, want SIGTERM", err)
		}
		done <- err
	case <-time.After(time.Minute):
		t.Fatal("the child runs after its run's stop")
	}
}

// startWithMarker starts name with args, marker in its environment, and
// returns it with its output.
func startWithMarker(t *testing.T, marker, name string, args ...string) (*exec.Cmd, *bufio.Reader) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), marker)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewReader(out)
}

// catchExits catches a dd in its exit, up to 100 tries, until a look has
// counted by member (on odd tries) and by Members (a look at every
// process, on even ones). start begins a try: it returns dd's pid, the
// process whose membership is looked at, whether the look counts (asked
// after it: what it needs still held) and what ends the try. Each look
// that counts must find that process a member exactly when want.
func catchExits(t *testing.T, g Group, want bool, start func() (dd, pid int, counts func() bool, end func())) {
	var caught [2]bool
	for try := 0; try < 100 && !(caught[0] && caught[1]); try++ {
		dd, pid, counts, end := start()
		syscall.Kill(dd, syscall.SIGKILL)
		for {
			in, err := readInfo(dd)
			if err != nil || in.Ended {
				break // missed: the next try
			}
			if !in.Exiting {
				continue
			}
			var found bool
			if try%2 == 1 {
				found = g.member(pid)
			} else {
				found = slices.Contains(g.Members(), pid)
			}
			if counts() {
				caught[try%2] = true
				if found != want {
					t.Errorf("%d, with dd (%d) exiting: a member %v, want %v (try %d: by member on odd tries, else Members)", pid, dd, found, want, try)
				}
			}
			break
		}
		end()
	}
	if !(caught[0] && caught[1]) {
		t.Fatal("no dd was caught in its exit in 100 tries")
	}
}
