// Package proc identifies local OS processes exactly, signals them only
// while they are still the process that was recorded, and holds the whole
// process tree of an agent run. It is teamkit's platform seam for
// processes: what differs between operating systems lives in
// proc_<os>.go, and nothing above this package asks which OS it runs on.
//
// A pid alone names a process only until it exits: the kernel hands the
// number to the next process that needs one, and after a reboot every pid
// means something else. An Identity is the pid plus the process's start time
// plus the boot it belongs to: no two processes ever share all three. How
// each OS reads them, and how close each comes to "signal only that
// process", is said in its file.
//
// Public: a Go program embedding teamkit may import this package.
package proc

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// Identity is one process, exactly.
type Identity struct {
	PID int `json:"pid"`
	// Start is the process's start time in the OS's own unit: clock ticks
	// after boot (Linux), microseconds since 1970 (macOS, FreeBSD), 100 ns
	// since 1601 (Windows). It is only ever compared for equality.
	Start uint64 `json:"start"`
	Boot  string `json:"boot"` // the boot the process belongs to
}

// ErrGone is returned when the recorded process no longer exists (its pid
// may now belong to another process, which is left alone).
var ErrGone = errors.New("the recorded process is gone")

// info is what the OS says about a pid.
type info struct {
	Start   uint64
	Session int  // 0 where the OS has no sessions
	PPID    int  // the parent's pid, 0 where it is not read
	Ended   bool // exited, not yet reaped (a zombie)
	// Exiting is set while the process is on its way out, before it is a
	// zombie (Linux only): its environment may already read as empty.
	Exiting bool
	// Via is a running thread of a process whose main thread has ended
	// (Linux only), through which the process is read; 0 otherwise.
	Via int
}

var bootOnce struct {
	sync.Once
	id  string
	err error
}

// BootID names this boot: it changes at every reboot.
func BootID() (string, error) {
	bootOnce.Do(func() { bootOnce.id, bootOnce.err = readBootID() })
	return bootOnce.id, bootOnce.err
}

// Of is the identity of the live process pid.
func Of(pid int) (Identity, error) {
	boot, err := BootID()
	if err != nil {
		return Identity{}, err
	}
	in, err := readInfo(pid)
	if err != nil {
		return Identity{}, err
	}
	return Identity{PID: pid, Start: in.Start, Boot: boot}, nil
}

// Self is this process's identity.
func Self() (Identity, error) { return Of(os.Getpid()) }

// Known reports whether id carries a start time and boot id (records made
// before teamkit kept them carry a pid only).
func (id Identity) Known() bool { return id.PID > 0 && id.Start > 0 && id.Boot != "" }

// Alive reports whether the process id names still runs: same boot, same
// pid, same start time, and not a zombie. An identity without a start time
// or boot id (a record from before teamkit kept them, or of a supervisor
// gone before it could be read) is never alive: a pid alone may name any
// process now, and a guess of "running" would refuse spawns and stall
// resume behind a stranger.
func (id Identity) Alive() bool {
	if !id.Known() {
		return false
	}
	in, err := readInfo(id.PID)
	if err != nil || in.Ended {
		return false
	}
	boot, err := BootID()
	return err == nil && sameBoot(boot, id.Boot) && in.Start == id.Start
}

// Signal sends sig to the process id names, and to no other: ErrGone when
// that process has ended, whoever holds its pid now. Signal 0 only checks.
// Windows has no signals: there any other signal ends the process, with
// exit code 128 plus the signal's number, as a shell would report it.
func (id Identity) Signal(sig syscall.Signal) error {
	if !id.Known() {
		return fmt.Errorf("pid %d was recorded without its start time; refusing to signal a pid that may have been reused", id.PID)
	}
	return signalIf(id.PID, sig, id.Alive)
}

// pollEvery bounds how late the end of a process or group is noticed.
const pollEvery = 20 * time.Millisecond

// WaitGone waits up to d for the process id names to end.
func (id Identity) WaitGone(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for id.Alive() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
	return true
}

// Group is the set of processes that belong to one agent run, wherever they
// have wandered in the process tree. On Unix: those carrying Marker (an
// environment entry such as "TEAMKIT_RUN=<run>", which every descendant
// inherits) in the environment they were started with, and, when
// Session > 0, those in that session (descendants that scrubbed their
// environment but did not leave the session); only pass a Session whose
// leader was just verified alive, as a session id is reused once every
// member has gone. On Windows: the processes of the run's Job Object, named
// after Marker (see Tree), which no descendant can leave.
type Group struct {
	Marker  string
	Session int
	Exclude []int // never members: the supervisor, the guard
	// Parent, when > 0, makes its children members too: a supervisor that
	// adopts its agent's orphans (a subreaper) finds there those that both
	// scrubbed the marker and left the session.
	Parent int
}

func (g Group) excluded(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	for _, x := range g.Exclude {
		if pid == x {
			return true
		}
	}
	return false
}

// waitEmpty waits up to d for the group to have no live member.
func (g Group) waitEmpty(d time.Duration) bool { return waitNone(g.Members, d) }

// waitNone waits up to d for members to find none. It watches the members
// it last found and looks for members again only once they are gone, to
// catch what they forked meanwhile: a look every poll reads every process
// on the host. Only a look that finds no member ends the wait: a member
// found that ended (and was reaped) before it could be watched may have
// forked since, which only the next look sees; past the deadline, a look
// that finds one ends the wait.
func waitNone(members func() []int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		pids := members()
		if len(pids) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		var ids []Identity
		for _, pid := range pids {
			if id, err := Of(pid); err == nil {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			time.Sleep(pollEvery)
			continue
		}
		if len(WaitAllGone(ids, time.Until(deadline))) > 0 {
			return false
		}
	}
}
