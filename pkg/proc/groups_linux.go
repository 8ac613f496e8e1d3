package proc

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// Members lists, for each group, its live members, from one pass over
// /proc. A process belongs to every group it matches.
func (gs Groups) Members() [][]int {
	out := make([][]int, len(gs))
	d, err := os.Open("/proc")
	if err != nil {
		return out
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	bySession := map[int][]int{}
	byMarker := map[string][]int{}
	for i, g := range gs {
		if g.Session > 0 {
			bySession[g.Session] = append(bySession[g.Session], i)
		}
		if g.Marker != "" {
			byMarker[g.Marker] = append(byMarker[g.Marker], i)
		}
	}
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid <= 0 {
			continue
		}
		s, err := ReadStat(pid)
		if err != nil || s.Leaving() {
			continue
		}
		hit := map[int]bool{}
		for _, i := range bySession[s.Session] {
			hit[i] = true
		}
		if len(byMarker) > 0 {
			if env, err := environOf(pid, s.info()); err == nil {
				for _, kv := range bytes.Split(env, []byte{0}) {
					for _, i := range byMarker[string(kv)] {
						hit[i] = true
					}
				}
			}
		}
		for i := range hit {
			if !gs[i].excluded(pid) {
				out[i] = append(out[i], pid)
			}
		}
	}
	return out
}

// Signal sends sig to every member of every group (each checked again
// through its pidfd, as Group.Signal does) and returns how many were
// signalled in each group.
func (gs Groups) Signal(sig syscall.Signal) []int {
	n := make([]int, len(gs))
	for i, pids := range gs.Members() {
		for _, pid := range pids {
			if signalIf(pid, sig, func() bool { return gs[i].member(pid) }) == nil {
				n[i]++
			}
		}
	}
	return n
}

// Stop is Group.Stop for all the groups at once: SIGTERM to every member
// of every group, one wait of grace for them all, then SIGKILL to what
// remains until nothing does (or a last bounded wait).
func (gs Groups) Stop(grace time.Duration) {
	some := false
	for _, n := range gs.Signal(syscall.SIGTERM) {
		some = some || n > 0
	}
	if !some || gs.waitEmpty(grace) {
		return
	}
	for range 50 {
		total := 0
		for _, n := range gs.Signal(syscall.SIGKILL) {
			total += n
		}
		if total == 0 || gs.waitEmpty(100*time.Millisecond) {
			return
		}
	}
}

// waitEmpty waits up to d for no group to have a live member (waitNone:
// it watches the members it found, not every process each poll, which
// with a whole fleet's supervisors alive costs more than the stopping
// itself).
func (gs Groups) waitEmpty(d time.Duration) bool {
	return waitNone(func() []int {
		var all []int
		for _, m := range gs.Members() {
			all = append(all, m...)
		}
		return all
	}, d)
}
