// Package proc identifies local OS processes exactly and signals them only
// when they are still the process that was recorded.
//
// A pid alone names a process only until it exits: the kernel hands the
// number to the next process that needs one, and after a reboot every pid
// means something else. An Identity is the pid plus the process's start time
// (clock ticks since boot, field 22 of /proc/<pid>/stat) plus the boot id
// (/proc/sys/kernel/random/boot_id): no two processes ever share all three.
// Signals go through a pidfd opened before the identity is re-checked, so a
// pid recycled between the check and the signal cannot receive it.
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Identity is one process, exactly.
type Identity struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"` // clock ticks after boot
	Boot  string `json:"boot"`  // the kernel's boot id
}

// ErrGone is returned when the recorded process no longer exists (its pid
// may now belong to another process, which is left alone).
var ErrGone = errors.New("the recorded process is gone")

var bootOnce struct {
	sync.Once
	id  string
	err error
}

// BootID is this boot's id: it changes at every reboot.
func BootID() (string, error) {
	bootOnce.Do(func() {
		b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
		bootOnce.id, bootOnce.err = strings.TrimSpace(string(b)), err
	})
	return bootOnce.id, bootOnce.err
}

// Stat is what /proc/<pid>/stat says about a process.
type Stat struct {
	PID, PPID, Pgrp, Session int
	State                    byte // R, S, D, Z (zombie: exited, not yet reaped), …
	Start                    uint64
}

// ReadStat parses /proc/<pid>/stat. The command name (field 2) is in
// parentheses and may itself hold spaces and parentheses, so the fields are
// counted from the last ')'.
func ReadStat(pid int) (Stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Stat{}, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); starttime is field 22.
	if len(f) < 20 || len(f[0]) != 1 {
		return Stat{}, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	s := Stat{PID: pid, State: f[0][0]}
	var errs [4]error
	s.PPID, errs[0] = strconv.Atoi(f[1])
	s.Pgrp, errs[1] = strconv.Atoi(f[2])
	s.Session, errs[2] = strconv.Atoi(f[3])
	s.Start, errs[3] = strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(errs[:]...); err != nil {
		return Stat{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return s, nil
}

// Of is the identity of the live process pid.
func Of(pid int) (Identity, error) {
	boot, err := BootID()
	if err != nil {
		return Identity{}, err
	}
	s, err := ReadStat(pid)
	if err != nil {
		return Identity{}, err
	}
	return Identity{PID: pid, Start: s.Start, Boot: boot}, nil
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
	s, err := ReadStat(id.PID)
	if err != nil || s.State == 'Z' || s.State == 'X' {
		return false
	}
	boot, err := BootID()
	return err == nil && boot == id.Boot && s.Start == id.Start
}

// Signal sends sig to the process id names, and to no other: ErrGone when
// that process has ended, whoever holds its pid now.
func (id Identity) Signal(sig syscall.Signal) error {
	if !id.Known() {
		return fmt.Errorf("pid %d was recorded without its start time; refusing to signal a pid that may have been reused", id.PID)
	}
	return signalIf(id.PID, sig, id.Alive)
}

// signalIf opens a pidfd on pid, then asks ok whether pid is still the
// process meant, then signals through the pidfd: if pid was recycled after
// the open, the pidfd names the dead process and the signal goes nowhere.
func signalIf(pid int, sig syscall.Signal, ok func() bool) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return ErrGone
		}
		return fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	defer unix.Close(fd)
	if !ok() {
		return ErrGone
	}
	if err := unix.PidfdSendSignal(fd, sig, nil, 0); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return ErrGone
		}
		return fmt.Errorf("signal %d: %w", pid, err)
	}
	return nil
}

// Group is the set of processes that belong to one agent run, wherever they
// have wandered in the process tree: those carrying Marker (an environment
// entry such as "TEAMKIT_RUN=<run>", which every descendant inherits) in
// the environment they were started with, and, when Session > 0, those in
// that session (descendants that scrubbed their environment but did not
// leave the session). Only pass a Session whose leader was just verified
// alive: a session id is reused once every member has gone.
type Group struct {
	Marker  string
	Session int
	Exclude []int // never members: the supervisor, the guard
}

func (g Group) member(pid int) bool {
	if pid == os.Getpid() {
		return false
	}
	for _, x := range g.Exclude {
		if pid == x {
			return false
		}
	}
	s, err := ReadStat(pid)
	if err != nil || s.State == 'Z' || s.State == 'X' {
		return false
	}
	if g.Session > 0 && s.Session == g.Session {
		return true
	}
	if g.Marker == "" {
		return false
	}
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, kv := range bytes.Split(env, []byte{0}) {
		if string(kv) == g.Marker {
			return true
		}
	}
	return false
}

// Members lists the live processes of the group.
func (g Group) Members() []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var out []int
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid <= 0 {
			continue
		}
		if g.member(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// Signal sends sig to every member, each checked again through its pidfd,
// and returns how many were signalled.
func (g Group) Signal(sig syscall.Signal) int {
	n := 0
	for _, pid := range g.Members() {
		if signalIf(pid, sig, func() bool { return g.member(pid) }) == nil {
			n++
		}
	}
	return n
}

// pollEvery bounds how late the end of a stopped group is noticed.
const pollEvery = 20 * time.Millisecond

// Stop ends the group: SIGTERM to every member, then, for whatever still
// runs after grace, SIGKILL (again until none is left, as a member may fork
// meanwhile). It returns once no member runs, or after a last bounded wait.
func (g Group) Stop(grace time.Duration) {
	if g.Signal(syscall.SIGTERM) == 0 {
		return
	}
	if g.waitEmpty(grace) {
		return
	}
	for range 50 {
		if g.Signal(syscall.SIGKILL) == 0 || g.waitEmpty(100*time.Millisecond) {
			return
		}
	}
}

// waitEmpty waits up to d for the group to have no live member.
func (g Group) waitEmpty(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if len(g.Members()) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
}

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

// BecomeSubreaper makes this process adopt its orphaned descendants, so an
// agent's children that outlive it stay below the supervisor, which reaps
// them, instead of escaping to init.
func BecomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// ReapOrphans collects every exited child that nobody waits for (adopted
// orphans); call it only once the children waited for by name are done.
func ReapOrphans() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
