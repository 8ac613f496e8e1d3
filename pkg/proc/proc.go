// Package proc answers questions about local OS processes that the mailbox
// records by pid.
package proc

import (
	"errors"
	"syscall"
)

// Alive reports whether a process with this pid exists on this host. EPERM
// means it exists but belongs to someone else, which still counts.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
