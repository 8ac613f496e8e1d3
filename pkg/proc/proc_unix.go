//go:build !windows

package proc

import (
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// sameBoot compares boot ids, which Unix kernels give exactly.
func sameBoot(a, b string) bool { return a == b }

func (g Group) member(pid int) bool {
	if g.excluded(pid) {
		return false
	}
	in, err := readInfo(pid)
	if err != nil || leaving(in) {
		return false
	}
	if g.adopting() {
		return g.descends(pid, in)
	}
	if g.Session > 0 && in.Session == g.Session {
		return true
	}
	// An adopted orphan that carries another run's marker is that run's
	// (an agent's spawn started it, then exited: its supervisor), not ours.
	if g.Parent > 0 && in.PPID == g.Parent && !foreign(pid, g.Marker) {
		return true
	}
	return g.Marker != "" && hasEnv(pid, in, g.Marker)
}

// leaving reports whether a process is on its way out (exiting, or a
// zombie): no member of any run. Nothing of it is left to stop, and its
// environment may already read as empty (the kernel lets go of its memory
// while its stat still says it runs), which would make another run's
// process pass for one that scrubbed its environment: a nested run's
// supervisor, killed a moment before, was swept as the lead run's own.
//
// It still counts as the parent it is, though: until the kernel hands its
// children to the supervisor, late in its exit, they name it as their
// parent, and they are no less the run's (see descends).
func leaving(in info) bool { return in.Ended || in.Exiting }

// foreign reports whether pid, a descendant or an adopted orphan of the
// run's supervisor, is not the run's by its environment: started with the
// marker's variable set to another run's value (a nested run and all below
// it), or read as it left (see leaving: the stat read after the
// environment tells).
func foreign(pid int, marker string) bool {
	if marker == "" {
		return false
	}
	other, left := hasOtherValue(pid, marker)
	return other || left || leftSince(pid)
}

// leftSince reports whether pid reads as leaving, or gone, now.
func leftSince(pid int) bool {
	in, err := readInfo(pid)
	return err != nil || leaving(in)
}

// passes reports whether pid, a process between a candidate and the run's
// supervisor, lets the candidate be the run's: it carries no other run's
// marker. One on its way out passes unasked (its environment may read as
// empty either way), as does one found on its way out as it is asked: a
// nested run's processes below it carry that run's marker themselves, and
// its guard an empty one.
func passes(pid int, left bool, marker string) bool {
	if marker == "" || left {
		return true
	}
	other, leftNow := hasOtherValue(pid, marker)
	return leftNow || !other
}

// adopting reports whether the group is that of this process's own run,
// which adopts every orphan of it (a child subreaper, alive: it is asking).
// Every process of the run is then its descendant, and the group is read
// from the parents of the processes alone: one stat each, where the marker
// needs each process's environment read, which is the dearer by far (a
// fleet's supervisors ending together each read every process's: spawn
// stop --all spent most of its time there).
func (g Group) adopting() bool { return adopts && g.Parent > 0 && g.Parent == os.Getpid() }

// descends reports whether pid (its info in) descends from the group's
// Parent, and neither it nor any process between them carries another
// run's marker: a nested run (an agent's own spawn, whose supervisor this
// one adopted once that spawn exited) and all below it are that run's.
func (g Group) descends(pid int, in info) bool {
	if foreign(pid, g.Marker) {
		return false
	}
	for n := 0; in.PPID != g.Parent; n++ {
		// pid 1 and the kernel's threads (parent 0 or 2) end a chain that
		// is not ours; so does a chain longer than any real one (a pid
		// reused in a loop while it was walked).
		if in.PPID <= 2 || n > 1000 {
			return false
		}
		pid = in.PPID
		var err error
		if in, err = readInfo(pid); err != nil || !passes(pid, leaving(in), g.Marker) {
			return false
		}
	}
	return true
}

// Members lists the live processes of the group.
func (g Group) Members() []int {
	if g.adopting() {
		return g.descendants()
	}
	var out []int
	for _, pid := range listPIDs() {
		if pid > 0 && g.member(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// descendants is Members of an adopting group (descends): one pass over
// every process's parent, then the environments of the descendants only.
func (g Group) descendants() []int {
	pids := listPIDs()
	parent := make(map[int]int, len(pids))
	gone := map[int]bool{}
	for _, pid := range pids {
		if in, err := readInfo(pid); err == nil {
			parent[pid] = in.PPID
			gone[pid] = leaving(in)
		}
	}
	ours := map[int]bool{g.Parent: true}
	var mine func(pid, depth int) bool
	mine = func(pid, depth int) bool {
		if v, ok := ours[pid]; ok {
			return v
		}
		pp, ok := parent[pid]
		v := ok && depth < 1000 && mine(pp, depth+1) && passes(pid, gone[pid], g.Marker)
		ours[pid] = v
		return v
	}
	var out []int
	for _, pid := range pids {
		if pid != g.Parent && !gone[pid] && mine(pid, 0) && !g.excluded(pid) && (g.Marker == "" || !leftSince(pid)) {
			out = append(out, pid)
		}
	}
	return out
}

// signal sends sig to every member, each checked again just before (see
// signalIf), and returns how many were signalled.
func (g Group) signal(sig syscall.Signal) int {
	n := 0
	for _, pid := range g.Members() {
		if signalIf(pid, sig, func() bool { return g.member(pid) }) == nil {
			n++
		}
	}
	return n
}

// Stop ends the group: SIGTERM to every member, then, for whatever still
// runs after grace, SIGKILL (again until none is left, as a member may fork
// meanwhile). It returns once no member runs, or after a last bounded wait.
func (g Group) Stop(grace time.Duration) {
	if g.signal(syscall.SIGTERM) == 0 {
		return
	}
	if g.waitEmpty(grace) {
		return
	}
	for range 50 {
		if g.signal(syscall.SIGKILL) == 0 || g.waitEmpty(100*time.Millisecond) {
			return
		}
	}
}

// Tree is the process tree of one run as its supervisor holds it. On Unix
// it is the run's Group: its marker, and its session when the supervisor
// leads one (background, tmux).
type Tree struct{ g Group }

// StartTree starts cmd, the run's agent, as the root of the run's tree.
// The supervisor first becomes the adopter of the agent's orphans where the
// OS has such a thing (see becomeSubreaper); note receives what could not be
// set up, which does not stop the run.
func StartTree(cmd *exec.Cmd, g Group, note func(format string, args ...any)) (*Tree, error) {
	if err := becomeSubreaper(); err != nil {
		note("cannot adopt the agent's orphans: %v", err)
	} else {
		// Every orphan of the run is now a child of this process.
		g.Parent = os.Getpid()
	}
	if sid, err := unix.Getsid(0); err == nil && sid == os.Getpid() {
		// A session of our own (background, tmux): an agent's child that
		// scrubbed its environment is still found by its session.
		g.Session = sid
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Tree{g: g}, nil
}

// Members lists the live processes of the run.
func (t *Tree) Members() []int { return t.g.Members() }

// Stop ends the run's processes: SIGTERM, then SIGKILL after grace.
func (t *Tree) Stop(grace time.Duration) { t.g.Stop(grace) }

// StopRequests delivers a request to stop the run that comes by another
// way than a signal to the supervisor. On Unix, SIGTERM is that request,
// and the supervisor takes it from os/signal: nil.
func (t *Tree) StopRequests() <-chan struct{} { return nil }

// Close collects every exited child that nobody waits for (adopted
// orphans); call it only once the agent was waited for.
func (t *Tree) Close() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
