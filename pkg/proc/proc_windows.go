package proc

// On Windows the start time is the process's creation time
// (GetProcessTimes, in 100 ns since 1601) and the boot is the boot time
// (now less GetTickCount64), to the second, which only Known needs (see
// sameBoot). A signal goes through a process
// handle opened before the identity is re-checked: Windows never hands out
// the pid of a process while a handle to it is open, so the check and the
// act concern the same process, as a pidfd does on Linux.
//
// A run's tree is a Job Object, named after the run's marker, with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE: the agent is put in it before it runs
// a single instruction, every process it starts is in it too and cannot
// leave, and only the supervisor holds a handle to it, so when the
// supervisor ends, however, Windows ends the whole run. That is the Windows
// form of the supervisor's guard. Stopping a run is CTRL_BREAK to the
// agent's console process group (the graceful step, sent by the supervisor,
// which shares the agent's console), then TerminateJobObject.

import (
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	kernel32          = windows.NewLazySystemDLL("kernel32.dll")
	procGetTickCount  = kernel32.NewProc("GetTickCount64")
	procOpenJobObject = kernel32.NewProc("OpenJobObjectW")
)

// stillActive is the exit code GetExitCodeProcess reports for a process
// that has not ended (STILL_ACTIVE).
const stillActive = 259

func readBootID() (string, error) {
	ms, _, _ := procGetTickCount.Call()
	boot := time.Now().Add(-time.Duration(ms) * time.Millisecond)
	return strconv.FormatInt(boot.Unix(), 10), nil
}

// sameBoot holds for any two boot times. They are computed (now less the
// time since boot), and so move with every step of the wall clock: the time
// service setting it right, by minutes after a virtual machine resumed
// (its tick count stood still while it was paused), or a person. The
// creation time alone tells two processes apart, across boots too: it is
// wall-clock time, to 100 ns, and does not move with the clock. Only a
// boot that is not a time (no record Windows makes) must match exactly.
func sameBoot(a, b string) bool {
	_, err1 := strconv.ParseInt(a, 10, 64)
	_, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil {
		return a == b
	}
	return true
}

func filetime(ft windows.Filetime) uint64 {
	return uint64(ft.HighDateTime)<<32 | uint64(ft.LowDateTime)
}

// handleInfo reads what h, a process handle, says about its process.
func handleInfo(h windows.Handle) (info, error) {
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return info{}, err
	}
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return info{}, err
	}
	return info{Start: filetime(created), Ended: code != stillActive}, nil
}

func readInfo(pid int) (info, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return info{}, fmt.Errorf("process %d: %w", pid, err)
	}
	defer windows.CloseHandle(h)
	return handleInfo(h)
}

// signalIf opens pid, asks ok whether it is still the process meant, then
// acts through the handle. Signal 0 only checks; any other ends the
// process with exit code 128 plus the signal's number.
func signalIf(pid int, sig syscall.Signal, ok func() bool) error {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
			return ErrGone // no such pid
		}
		return fmt.Errorf("open process %d: %w", pid, err)
	}
	defer windows.CloseHandle(h)
	if !ok() {
		return ErrGone
	}
	if sig == 0 {
		return nil
	}
	if err := windows.TerminateProcess(h, 128+uint32(sig)); err != nil {
		return fmt.Errorf("end process %d: %w", pid, err)
	}
	return nil
}

// Names of a run's Job Object and stop event, in this logon session.
func jobName(marker string) *uint16  { return utf16(`Local\teamkit-job-` + marker) }
func stopName(marker string) *uint16 { return utf16(`Local\teamkit-stop-` + marker) }

func utf16(s string) *uint16 {
	p, err := windows.UTF16PtrFromString(s)
	if err != nil { // a NUL in the marker: a name nothing matches
		p, _ = windows.UTF16PtrFromString(`Local\teamkit-invalid`)
	}
	return p
}

const (
	jobQuery     = 0x0004 // JOB_OBJECT_QUERY
	jobTerminate = 0x0008 // JOB_OBJECT_TERMINATE
)

func openJob(marker string) (windows.Handle, error) {
	h, _, err := procOpenJobObject.Call(jobQuery|jobTerminate, 0, uintptr(unsafe.Pointer(jobName(marker))))
	if h == 0 {
		return 0, err
	}
	return windows.Handle(h), nil
}

// jobPIDs lists the processes in job.
func jobPIDs(job windows.Handle) []int {
	// JOBOBJECT_BASIC_PROCESS_ID_LIST: two counts, then the ids.
	for n := 64; n <= 1<<16; n *= 4 {
		buf := make([]uintptr, 1+n)
		err := windows.QueryInformationJobObject(job, windows.JobObjectBasicProcessIdList,
			uintptr(unsafe.Pointer(&buf[0])), uint32(len(buf))*uint32(unsafe.Sizeof(buf[0])), nil)
		if errors.Is(err, windows.ERROR_MORE_DATA) {
			continue
		}
		if err != nil {
			return nil
		}
		listed := *(*uint32)(unsafe.Pointer(uintptr(unsafe.Pointer(&buf[0])) + 4))
		out := make([]int, 0, listed)
		for _, pid := range buf[1 : 1+int(listed)] {
			out = append(out, int(pid))
		}
		return out
	}
	return nil
}

// Members lists the live processes of the run's Job Object.
func (g Group) Members() []int {
	if g.Marker == "" {
		return nil
	}
	job, err := openJob(g.Marker)
	if err != nil {
		return nil // no job: its supervisor is gone, and with it the run
	}
	defer windows.CloseHandle(job)
	return g.live(jobPIDs(job))
}

func (g Group) live(pids []int) []int {
	var out []int
	for _, pid := range pids {
		if g.excluded(pid) {
			continue
		}
		if in, err := readInfo(pid); err == nil && !in.Ended {
			out = append(out, pid)
		}
	}
	return out
}

// killedCode is the exit code of a run ended by force, as on Unix after
// SIGKILL.
const killedCode = 128 + 9

// Stop ends the run from outside its supervisor: it asks the supervisor
// (through the run's stop event) for the graceful step, which only a
// process on the agent's console can take, then after grace ends whatever
// is left with TerminateJobObject.
func (g Group) Stop(grace time.Duration) {
	if len(g.Members()) == 0 {
		return
	}
	if ev, err := windows.OpenEvent(windows.EVENT_MODIFY_STATE, false, stopName(g.Marker)); err == nil {
		windows.SetEvent(ev)
		windows.CloseHandle(ev)
	}
	if g.waitEmpty(grace) {
		return
	}
	if job, err := openJob(g.Marker); err == nil {
		windows.TerminateJobObject(job, killedCode)
		windows.CloseHandle(job)
	}
	g.waitEmpty(5 * time.Second)
}

// Tree is the run's Job Object and stop event, held by its supervisor.
type Tree struct {
	g     Group
	job   windows.Handle
	stop  windows.Handle
	quit  windows.Handle // set by Close: watchStop returns
	agent int
	reqs  chan struct{}
}

// StartTree starts cmd, the run's agent, suspended in a process group of its
// own, puts it in a new Job Object named after g.Marker, then lets it run.
func StartTree(cmd *exec.Cmd, g Group, note func(format string, args ...any)) (*Tree, error) {
	job, err := windows.CreateJobObject(nil, jobName(g.Marker))
	if err != nil {
		return nil, fmt.Errorf("create the run's job object: %w", err)
	}
	t := &Tree{g: g, job: job, reqs: make(chan struct{}, 1)}
	limits := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	limits.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&limits)), uint32(unsafe.Sizeof(limits))); err != nil {
		t.Close()
		return nil, fmt.Errorf("set up the run's job object: %w", err)
	}
	t.stop, err = windows.CreateEvent(nil, 0, 0, stopName(g.Marker))
	if err == nil {
		t.quit, err = windows.CreateEvent(nil, 1, 0, nil)
	}
	if err != nil {
		note("no stop event for this run (spawn stop will end it without the graceful step): %v", err)
	} else {
		go t.watchStop()
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP
	if err := cmd.Start(); err != nil {
		t.Close()
		return nil, err
	}
	t.agent = cmd.Process.Pid
	if err := t.adopt(uint32(t.agent)); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Close()
		return nil, fmt.Errorf("put the agent in the run's job object: %w", err)
	}
	return t, nil
}

// adopt assigns the suspended process pid to the job, then resumes its
// threads.
func (t *Tree) adopt(pid uint32) error {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, pid)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(t.job, h); err != nil {
		return err
	}
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(snap)
	var te windows.ThreadEntry32
	te.Size = uint32(unsafe.Sizeof(te))
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return err
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return err
		}
		resumed++
	}
	if resumed == 0 {
		return fmt.Errorf("no thread of process %d to resume", pid)
	}
	return nil
}

func (t *Tree) watchStop() {
	for {
		ev, err := windows.WaitForMultipleObjects([]windows.Handle{t.stop, t.quit}, false, windows.INFINITE)
		if err != nil || ev != windows.WAIT_OBJECT_0 {
			return
		}
		select {
		case t.reqs <- struct{}{}:
		default:
		}
	}
}

// Members lists the live processes of the run's job.
func (t *Tree) Members() []int { return t.g.live(jobPIDs(t.job)) }

// Stop ends the run: CTRL_BREAK to the agent's process group, then, after
// grace, TerminateJobObject for whatever is left.
func (t *Tree) Stop(grace time.Duration) {
	if len(t.Members()) == 0 {
		return
	}
	windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(t.agent))
	deadline := time.Now().Add(grace)
	for len(t.Members()) > 0 && time.Now().Before(deadline) {
		time.Sleep(pollEvery)
	}
	if len(t.Members()) > 0 {
		windows.TerminateJobObject(t.job, killedCode)
	}
}

// StopRequests delivers spawn stop's requests (the run's stop event).
func (t *Tree) StopRequests() <-chan struct{} { return t.reqs }

// Close releases the job, which ends whatever is still in it.
func (t *Tree) Close() {
	if t.quit != 0 {
		// watchStop keeps the handles until it returns; they go with
		// the process, which ends soon after.
		windows.SetEvent(t.quit)
	}
	windows.CloseHandle(t.job)
}
