//go:build darwin || freebsd

package proc

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// signalIf asks ok whether pid is still the process meant, then signals it.
// macOS and FreeBSD have no pidfd, so a window remains between the check and
// kill(2): the two system calls follow each other directly, a few
// microseconds apart, and for a wrong process to be hit the recorded one
// would have to exit, be reaped, and its pid be handed out again (after the
// kernel cycled through the whole pid space, 99999 on both) within those
// microseconds.
func signalIf(pid int, sig syscall.Signal, ok func() bool) error {
	if !ok() {
		return ErrGone
	}
	if err := unix.Kill(pid, sig); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return ErrGone
		}
		return fmt.Errorf("signal %d: %w", pid, err)
	}
	return nil
}

// becomeSubreaper does nothing here: macOS has no child subreaper (and
// teamkit does not use FreeBSD's procctl reaper, to keep the two alike).
// The agent's orphans go to launchd or init, but they keep the run's marker
// in their environment and the supervisor's session, so the supervisor, its
// guard and spawn stop still find and stop them (Group): no agent process
// runs unsupervised. Linux tests the same path with orphans it does not
// adopt (TestGroupFindsOrphans).
func becomeSubreaper() error { return nil }

// adopts is false: becomeSubreaper adopts nothing here.
const adopts = false

// hasOtherValue is false here: without a subreaper, the supervisor's
// children are only its agent and its guard, and no other run's process
// becomes one (see Group.member).
func hasOtherValue(pid int, kv string) (other, left bool) { return false, false }
