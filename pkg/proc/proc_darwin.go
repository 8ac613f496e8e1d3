package proc

// On macOS the start time comes from sysctl kern.proc.pid.<pid> (p_starttime,
// in microseconds since 1970), and the boot from kern.bootsessionuuid, a
// UUID made afresh at every boot (kern.boottime where a kernel lacks it).
// A process's environment, where the run's marker is, comes from
// kern.procargs2, which the kernel gives for the caller's own processes.

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

func readBootID() (string, error) {
	if id, err := unix.Sysctl("kern.bootsessionuuid"); err == nil && id != "" {
		return id, nil
	}
	tv, err := unix.SysctlTimeval("kern.boottime")
	if err != nil {
		return "", fmt.Errorf("read the boot time: %w", err)
	}
	return fmt.Sprintf("boottime-%d.%06d", tv.Sec, tv.Usec), nil
}

// sZomb is p_stat of a process that exited and awaits its parent's wait.
const sZomb = 5

func readInfo(pid int) (info, error) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return info{}, err
	}
	if int(k.Proc.P_pid) != pid {
		return info{}, fmt.Errorf("no process %d", pid)
	}
	sid, _ := unix.Getsid(pid)
	tv := k.Proc.P_starttime
	return info{Start: uint64(tv.Sec)*1e6 + uint64(tv.Usec), Session: sid, Ended: k.Proc.P_stat == sZomb}, nil
}

func listPIDs() []int {
	ks, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil
	}
	out := make([]int, 0, len(ks))
	for _, k := range ks {
		out = append(out, int(k.Proc.P_pid))
	}
	return out
}

// hasEnv reports whether pid was started with the environment entry kv.
// kern.procargs2 is argc (int32), the executable's path, NUL padding, argc
// arguments, then the environment, each NUL-terminated.
func hasEnv(pid int, _ info, kv string) bool {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil || len(b) < 4 {
		return false
	}
	argc := int(binary.LittleEndian.Uint32(b))
	b = b[4:]
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return false
	}
	b = bytes.TrimLeft(b[i:], "\x00")
	for n := 0; len(b) > 0; n++ {
		s, rest, _ := bytes.Cut(b, []byte{0})
		if len(s) == 0 {
			break
		}
		if n >= argc && string(s) == kv {
			return true
		}
		b = rest
	}
	return false
}
