//go:build linux

package teamkit_test

// Script commands for the process-identity tests: crash a run the way a
// SIGKILL or a dying machine does, wait for a recorded pid to be gone, and
// run commands inside a pid namespace of their own, where pids can be made
// to recur on demand (a real reused pid, not an edited row).

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/proc"
)

// recorded returns the agent's record and the pid of its run's guard, read
// from the note the supervisor writes in the run's log.
func recorded(ts *testscript.TestScript, team, name string) (mailbox.Agent, int) {
	ctx := context.Background()
	db, err := mailbox.Open(ctx, ts.Getenv("TEAMKIT_DB"), mailbox.Options{})
	ts.Check(err)
	defer db.Close()
	a, err := db.Agent(ctx, team, name)
	ts.Check(err)
	// The agent may mark ready before its supervisor notes the guard.
	re := regexp.MustCompile(`run ` + regexp.QuoteMeta(a.Run) + ` started, pid \d+, supervisor \d+, guard (\d+)`)
	var m [][]byte
	for deadline := time.Now().Add(waitLimit); m == nil; time.Sleep(pollEvery) {
		log, err := os.ReadFile(a.Log)
		ts.Check(err)
		if m = re.FindSubmatch(log); m == nil && time.Now().After(deadline) {
			ts.Fatalf("no guard noted in %s", a.Log)
		}
	}
	guard, _ := strconv.Atoi(string(m[1]))
	return a, guard
}

// crash runs "crash [-machine|-orphan] TEAM NAME": SIGKILL the run's
// supervisor; with -machine, first its guard and afterwards the
// supervisor's whole process group too, as when the machine dies and
// nothing is left to record anything; with -orphan, the guard and then the
// supervisor alone, which leaves the agent running with nobody watching
// it (the worst case the guard exists for).
func crash(ts *testscript.TestScript, neg bool, args []string) {
	mode := ""
	if len(args) == 3 && (args[0] == "-machine" || args[0] == "-orphan") {
		mode, args = args[0], args[1:]
	}
	if neg || len(args) != 2 {
		ts.Fatalf("usage: crash [-machine|-orphan] TEAM NAME")
	}
	a, guard := recorded(ts, args[0], args[1])
	switch mode {
	case "-machine":
		ts.Check(syscall.Kill(guard, syscall.SIGKILL))
		ts.Check(syscall.Kill(-a.PID, syscall.SIGKILL))
	case "-orphan":
		ts.Check(syscall.Kill(guard, syscall.SIGKILL))
		ts.Check(syscall.Kill(a.PID, syscall.SIGKILL))
	default:
		ts.Check(syscall.Kill(a.PID, syscall.SIGKILL))
	}
}

// freeze runs "freeze TEAM NAME FILE": SIGSTOP the run's supervisor, as a
// host cut off from the database looks to the others (its heartbeats stop,
// its agent runs on), and write the supervisor's pid to FILE for a later
// "exec kill -CONT" and waitgone.
func freeze(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: freeze TEAM NAME FILE")
	}
	a, _ := recorded(ts, args[0], args[1])
	ts.Check(syscall.Kill(a.PID, syscall.SIGSTOP))
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), []byte(strconv.Itoa(a.PID)+"\n"), 0o644))
}

// waitGone runs "waitgone FILE…": wait until the process whose pid is the
// first word of each FILE has ended (a zombie has ended: this machine's init
// may never reap orphans), and kill it if it never does, so that a failure
// leaves nothing behind. "waitgone -now FILE…" does not wait: each process
// must have ended already. "! waitgone FILE" checks it still runs, and
// "waitgone -not FILE" waits until FILE exists.
func waitGone(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 2 && args[0] == "-not" {
		deadline := time.Now().Add(waitLimit)
		for {
			if _, err := os.Stat(ts.MkAbs(args[1])); err == nil && strings.TrimSpace(ts.ReadFile(args[1])) != "" {
				return
			}
			if time.Now().After(deadline) {
				ts.Fatalf("%s never appeared", args[1])
			}
			time.Sleep(pollEvery)
		}
	}
	limit := waitLimit
	if len(args) > 0 && args[0] == "-now" && !neg {
		limit, args = 0, args[1:]
	}
	if len(args) == 0 {
		ts.Fatalf("usage: waitgone [-now] FILE…")
	}
	for _, f := range args {
		pid, err := strconv.Atoi(strings.Fields(ts.ReadFile(f) + " x")[0])
		ts.Check(err)
		deadline := time.Now().Add(limit)
		for {
			running := processRuns(pid)
			if neg && !running {
				ts.Fatalf("process %d (from %s) has ended", pid, f)
			}
			if neg || !running {
				break
			}
			if !time.Now().Before(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				ts.Fatalf("process %d (from %s) still runs (killed now)", pid, f)
			}
			time.Sleep(pollEvery)
		}
	}
}

// legacyRecord runs "legacyrecord TEAM NAME": start an unrelated process
// (a sleep, its pid written to impostor.pid, killed when the script ends)
// and make the agent's record name it as a run still going, with a pid but
// no start time or boot id, as a record from before teamkit kept them, or
// a hand-edited row, does.
func legacyRecord(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: legacyrecord TEAM NAME")
	}
	imp := exec.Command("sleep", "300")
	ts.Check(imp.Start())
	ts.Defer(func() { imp.Process.Kill(); imp.Wait() })
	ts.Check(os.WriteFile(ts.MkAbs("impostor.pid"), []byte(strconv.Itoa(imp.Process.Pid)), 0o600))
	db, err := openScriptDB(ts.Getenv("TEAMKIT_DB"))
	ts.Check(err)
	defer db.Close()
	q := `UPDATE agents SET state = 'ready', exit_code = NULL, pid = $1, pid_start = 0, boot_id = '' WHERE team = $2 AND name = $3`
	res, err := db.Exec(q, imp.Process.Pid, args[0], args[1])
	ts.Check(err)
	if n, _ := res.RowsAffected(); n != 1 {
		ts.Fatalf("legacyrecord: no agent %s/%s", args[0], args[1])
	}
}

func processRuns(pid int) bool {
	// A process killed a moment ago may still be on its way out: it has
	// ended all the same.
	s, err := proc.ReadStat(pid)
	return err == nil && !s.Leaving()
}

// pidNS is a pid namespace held by one script: its init (this test binary
// as "pidinit", which reaps every orphan so their pids are free again) and
// the impostor started with a reused pid.
type pidNS struct {
	init     *exec.Cmd
	impostor *exec.Cmd
	done     chan struct{}
}

type pidNSKey struct{}

// pidns runs "pidns start", "pidns exec CMD ARGS…" (CMD inside the
// namespace), "pidns crash TEAM NAME" (SIGKILL the run's guard, then its
// supervisor and the supervisor's process group: the machine died),
// "pidns reuse TEAM NAME" (once the recorded supervisor's pid is free,
// start an unrelated process with exactly that pid), "[!] pidns impostor"
// (the unrelated process still runs) and "pidns stop".
func pidns(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: pidns start|exec|crash|reuse|impostor|stop …")
	}
	ns := ts.Value(pidNSKey{}).(*pidNS) // one per script, made in Setup
	if args[0] != "start" && ns.init == nil {
		ts.Fatalf("pidns start first")
	}
	enter := func(cmdArgs ...string) []string {
		return append([]string{"-t", strconv.Itoa(ns.init.Process.Pid), "-p", "-m", "--"}, cmdArgs...)
	}
	switch args[0] {
	case "start":
		self, err := os.Executable()
		ts.Check(err)
		cmd := exec.Command(self)
		cmd.Args = []string{"pidinit"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS}
		ts.Check(cmd.Start())
		ns.init = cmd
		ts.Defer(func() { cmd.Process.Kill(); cmd.Wait() })
		// Ready once its /proc is mounted: pid 1 is the init itself.
		deadline := time.Now().Add(waitLimit)
		for exec.Command("nsenter", enter("test", "-e", "/proc/1/stat")...).Run() != nil {
			if time.Now().After(deadline) {
				ts.Fatalf("the pid namespace's init never came up")
			}
			time.Sleep(pollEvery)
		}
	case "exec":
		err := ts.Exec("nsenter", enter(args[1:]...)...)
		if err != nil && !neg {
			ts.Fatalf("%v", err)
		}
		if err == nil && neg {
			ts.Fatalf("unexpected success")
		}
	case "crash":
		a, guard := recorded(ts, args[1], args[2])
		// The guard first (it would record the run), then the supervisor's
		// session: the supervisor and its agent.
		for _, kill := range [][]string{{"kill", "-s", "KILL", strconv.Itoa(guard)}, {"pkill", "-KILL", "-s", strconv.Itoa(a.PID)}} {
			if out, err := exec.Command("nsenter", enter(kill...)...).CombinedOutput(); err != nil {
				ts.Fatalf("%s in the namespace: %v %s", kill[0], err, out)
			}
		}
	case "reuse":
		a, _ := recorded(ts, args[1], args[2])
		deadline := time.Now().Add(waitLimit)
		for {
			if time.Now().After(deadline) {
				out, _ := exec.Command("nsenter", enter("sh", "-c", "ps -ef; cat /proc/$0/stat", strconv.Itoa(a.PID))...).CombinedOutput()
				ts.Fatalf("pid %d never came round again:\n%s", a.PID, out)
			}
			if exec.Command("nsenter", enter("test", "-e", fmt.Sprintf("/proc/%d", a.PID))...).Run() == nil {
				time.Sleep(pollEvery) // not reaped yet
				continue
			}
			// The next pid handed out in the namespace is ns_last_pid+1.
			cmd := exec.Command("nsenter", enter("sh", "-c", `echo $(($0 - 1)) > /proc/sys/kernel/ns_last_pid || exit 1; sleep 100000 & echo $!; wait`, strconv.Itoa(a.PID))...)
			out, err := cmd.StdoutPipe()
			ts.Check(err)
			ts.Check(cmd.Start())
			var got int
			fmt.Fscan(out, &got)
			if got != a.PID {
				cmd.Process.Kill()
				cmd.Wait()
				continue
			}
			ns.impostor, ns.done = cmd, make(chan struct{})
			go func() { cmd.Wait(); close(ns.done) }()
			ts.Defer(func() {
				exec.Command("nsenter", enter("kill", strconv.Itoa(a.PID))...).Run()
				cmd.Process.Kill()
				<-ns.done
			})
			ts.Logf("pid %d now belongs to an unrelated sleep", a.PID)
			return
		}
	case "impostor":
		select {
		case <-ns.done:
			if !neg {
				ts.Fatalf("the process holding the reused pid was killed")
			}
		default:
			if neg {
				ts.Fatalf("the process holding the reused pid still runs")
			}
		}
	case "stop":
		ns.init.Process.Kill()
		ns.init.Wait()
	default:
		ts.Fatalf("pidns: unknown verb %q", args[0])
	}
}

// pidInit is pid 1 of a test's pid namespace: it mounts the namespace's own
// /proc (privately, in its own mount namespace) and reaps every orphan, so a
// dead process's pid is free for reuse at once.
func pidInit() int {
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		fmt.Fprintln(os.Stderr, "pidinit:", err)
		return 1
	}
	if err := syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
		fmt.Fprintln(os.Stderr, "pidinit:", err)
		return 1
	}
	for {
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(-1, &ws, 0, nil); err == syscall.ECHILD {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// canPidNS is the script condition [pidns]: root may create pid namespaces
// here, and nsenter (util-linux) and pkill (procps) are installed.
func canPidNS() bool {
	if os.Geteuid() != 0 {
		return false
	}
	for _, tool := range []string{"nsenter", "pkill"} {
		if _, err := exec.LookPath(tool); err != nil {
			return false
		}
	}
	cmd := exec.Command("true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS}
	return cmd.Run() == nil
}
