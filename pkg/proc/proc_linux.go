package proc

// On Linux the start time is field 22 of /proc/<pid>/stat (clock ticks
// since boot) and the boot id is /proc/sys/kernel/random/boot_id. Signals go
// through a pidfd opened before the identity is re-checked, so a pid
// recycled between the check and the signal cannot receive it. The
// supervisor is a child subreaper: the agent's orphans stay below it.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

func readBootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b)), err
}

// Stat is what /proc/<pid>/stat says about a process.
type Stat struct {
	PID, PPID, Pgrp, Session int
	State                    byte // R, S, D, Z (zombie: exited, not yet reaped), …
	Flags                    uint64
	Threads                  int
	Start                    uint64
}

// pfExiting is the kernel's PF_EXITING in Stat.Flags: set as the process
// begins to exit, before it lets go of its memory.
const pfExiting = 0x4

// ReadStat parses /proc/<pid>/stat. The command name (field 2) is in
// parentheses and may itself hold spaces and parentheses, so the fields are
// counted from the last ')'.
func ReadStat(pid int) (Stat, error) {
	return readStat("/proc/"+strconv.Itoa(pid)+"/stat", pid)
}

// readStat parses the stat file at path, pid's or one of its threads'.
func readStat(path string, pid int) (Stat, error) {
	var buf [1024]byte // a stat line is some 300 bytes
	b, err := readProcLine(path, buf[:])
	if err != nil {
		return Stat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Stat{}, fmt.Errorf("%s: malformed", path)
	}
	// f[0] is field 3 (state); starttime is field 22. One string for them
	// all: spawn list reads the stat of every agent of a fleet.
	var f [20]string
	n := 0
	for w := range strings.FieldsSeq(string(b[i+1:])) {
		if n == len(f) {
			break
		}
		f[n] = w
		n++
	}
	if n < len(f) || len(f[0]) != 1 {
		return Stat{}, fmt.Errorf("%s: malformed", path)
	}
	s := Stat{PID: pid, State: f[0][0]}
	var errs [6]error
	s.PPID, errs[0] = strconv.Atoi(f[1])
	s.Pgrp, errs[1] = strconv.Atoi(f[2])
	s.Session, errs[2] = strconv.Atoi(f[3])
	s.Flags, errs[3] = strconv.ParseUint(f[6], 10, 64)
	s.Threads, errs[4] = strconv.Atoi(f[17])
	s.Start, errs[5] = strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(errs[:]...); err != nil {
		return Stat{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// leaderGone reports whether the process's main thread has ended, or is
// ending, while it has other threads (a C program's pthread_exit in main).
// Its stat then reads as a zombie or as exiting, whether or not the rest of
// it runs on, and its environ fails (ESRCH; older kernels read it as empty):
// the ended thread let go of the memory. See liveThread.
func (s Stat) leaderGone() bool { return s.Threads > 1 && (s.State == 'Z' || s.Flags&pfExiting != 0) }

// liveThread returns a thread of pid that is neither exiting nor ended, or
// 0 when there is none: a process whose every thread is on its way out is
// leaving (an exit_group in progress), one with a live thread runs.
func liveThread(pid int) int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	d, err := os.Open(dir)
	if err != nil {
		return 0
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, n := range names {
		tid, err := strconv.Atoi(n)
		if err != nil || tid == pid {
			continue
		}
		if t, err := readStat(dir+n+"/stat", tid); err == nil && t.runs() {
			return tid
		}
	}
	return 0
}

// runs reports whether the thread s was read from neither exits nor has
// ended: the kernel sets PF_EXITING before the thread lets go of its memory.
func (s Stat) runs() bool { return s.State != 'Z' && s.State != 'X' && s.Flags&pfExiting == 0 }

// errLeaving is environ's error for a process whose environment could not
// be read because it is on its way out.
var errLeaving = errors.New("the process is on its way out")

// readProcLine reads the one-line /proc file path into buf with open, read
// and close alone: os.ReadFile's fstat, second read and *os.File took twice
// as long (4.5 µs a stat against 2.4), paid for each agent of a fleet that
// spawn list judges. The read ends at the line's newline; a line longer
// than buf is read again whole.
func readProcLine(path string, buf []byte) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		n += m
		if m == 0 || buf[n-1] == '\n' {
			return buf[:n], nil
		}
	}
	return os.ReadFile(path)
}

func readInfo(pid int) (info, error) {
	s, err := ReadStat(pid)
	if err != nil {
		return info{}, err
	}
	return s.info(), nil
}

// Leaving reports whether the process was on its way out when its stat
// was read (see leaving): exiting, or a zombie, and no thread of it left
// running.
func (s Stat) Leaving() bool { return leaving(s.info()) }

// info is what s says, its threads asked when its main thread is gone.
func (s Stat) info() info {
	in := info{Start: s.Start, Session: s.Session, PPID: s.PPID}
	if s.leaderGone() {
		in.Via = liveThread(s.PID)
	}
	if in.Via == 0 {
		in.Ended = s.State == 'Z' || s.State == 'X'
		in.Exiting = s.Flags&pfExiting != 0
	}
	return in
}

func listPIDs() []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var out []int
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// environ reads the environment pid was started with. A process whose
// main thread is gone (see leaderGone) fails to give it (ESRCH; older
// kernels read it as empty), so pid's stat is read when it does: a kernel
// thread's is empty too, and most processes have one.
func environ(pid int) ([]byte, error) {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err == nil && len(env) > 0 {
		return env, nil
	}
	if in, serr := readInfo(pid); serr == nil && in.Via > 0 {
		return environOf(pid, in)
	}
	return env, err
}

// environOf reads pid's environment as its stat said (in): through the
// running thread in.Via when its main thread is gone. That thread may start
// its exit and let go of the memory as it is read (a process being killed,
// its threads ending one by one): its stat, read after, must still say it
// runs, else the read is errLeaving, whatever it returned.
func environOf(pid int, in info) ([]byte, error) {
	p := "/proc/" + strconv.Itoa(pid)
	if in.Via == 0 {
		return os.ReadFile(p + "/environ")
	}
	task := p + "/task/" + strconv.Itoa(in.Via)
	env, err := os.ReadFile(task + "/environ")
	if t, serr := readStat(task+"/stat", in.Via); serr != nil || !t.runs() {
		return nil, errLeaving
	}
	return env, err
}

// hasEnv reports whether pid, whose stat said in, was started with the
// environment entry kv.
func hasEnv(pid int, in info, kv string) bool {
	env, err := environOf(pid, in)
	if err != nil {
		return false
	}
	for _, e := range bytes.Split(env, []byte{0}) {
		if string(e) == kv {
			return true
		}
	}
	return false
}

// hasOtherValue reports whether pid was started with the variable of kv
// ("NAME=value") set to another value (other), or could not tell, being on
// its way out (left).
func hasOtherValue(pid int, kv string) (other, left bool) {
	name, _, _ := strings.Cut(kv, "=")
	env, err := environ(pid)
	if err != nil {
		return false, errors.Is(err, errLeaving)
	}
	for _, e := range bytes.Split(env, []byte{0}) {
		if k, _, ok := strings.Cut(string(e), "="); ok && k == name && string(e) != kv {
			return true, false
		}
	}
	return false, false
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

// adopts: becomeSubreaper makes this process the adopter of its
// descendants' orphans.
const adopts = true

// becomeSubreaper makes this process adopt its orphaned descendants, so an
// agent's children that outlive it stay below the supervisor, which reaps
// them, instead of escaping to init.
func becomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}
