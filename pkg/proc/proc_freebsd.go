package proc

// On FreeBSD the start time is ki_start of the struct kinfo_proc that sysctl
// kern.proc.pid.<pid> returns (microseconds since 1970), and the boot is
// kern.boottime. A process's environment, where the run's marker is, comes
// from kern.proc.env.<pid>. x/sys/unix has no kinfo_proc for FreeBSD, so
// the few fields used are read at their offsets in the 64-bit layout (the
// struct's own size field is checked first).

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

func readBootID() (string, error) {
	tv, err := unix.SysctlTimeval("kern.boottime")
	if err != nil {
		return "", fmt.Errorf("read the boot time: %w", err)
	}
	return fmt.Sprintf("boottime-%d.%06d", tv.Sec, tv.Usec), nil
}

// Offsets in struct kinfo_proc (sys/user.h) on 64-bit FreeBSD.
const (
	kinfoSize    = 1088 // KINFO_PROC_SIZE
	offPID       = 72   // ki_pid
	offSID       = 88   // ki_sid
	offStart     = 336  // ki_start: struct timeval
	offStat      = 388  // ki_stat
	sZomb        = 5    // SZOMB
	kinfoMinRead = offStat + 1
)

type kinfo []byte

func (k kinfo) i32(off int) int { return int(int32(binary.LittleEndian.Uint32(k[off:]))) }

func parseKinfo(b []byte) ([]kinfo, error) {
	var out []kinfo
	for len(b) >= kinfoMinRead {
		size := int(binary.LittleEndian.Uint32(b))
		if size != kinfoSize || len(b) < size {
			return nil, fmt.Errorf("kinfo_proc of %d bytes, expected %d", size, kinfoSize)
		}
		out = append(out, kinfo(b[:size]))
		b = b[size:]
	}
	return out, nil
}

func readInfo(pid int) (info, error) {
	b, err := unix.SysctlRaw("kern.proc.pid", pid)
	if err != nil {
		return info{}, err
	}
	ks, err := parseKinfo(b)
	if err != nil {
		return info{}, err
	}
	if len(ks) == 0 || ks[0].i32(offPID) != pid {
		return info{}, fmt.Errorf("no process %d", pid)
	}
	k := ks[0]
	sec := binary.LittleEndian.Uint64(k[offStart:])
	usec := binary.LittleEndian.Uint64(k[offStart+8:])
	return info{Start: sec*1e6 + usec, Session: k.i32(offSID), Ended: k[offStat] == sZomb}, nil
}

func listPIDs() []int {
	b, err := unix.SysctlRaw("kern.proc.proc")
	if err != nil {
		return nil
	}
	ks, err := parseKinfo(b)
	if err != nil {
		return nil
	}
	out := make([]int, 0, len(ks))
	for _, k := range ks {
		out = append(out, k.i32(offPID))
	}
	return out
}

// hasEnv reports whether pid was started with the environment entry kv.
func hasEnv(pid int, _ info, kv string) bool {
	b, err := unix.SysctlRaw("kern.proc.env", pid)
	if err != nil {
		return false
	}
	for _, e := range bytes.Split(b, []byte{0}) {
		if string(e) == kv {
			return true
		}
	}
	return false
}
