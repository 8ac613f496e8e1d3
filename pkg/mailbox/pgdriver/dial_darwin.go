package pgdriver

import (
	"time"

	"golang.org/x/sys/unix"
)

// macOS's TCP_RXT_CONNDROPTIME: seconds of retransmission before the
// connection is dropped.
func setUserTimeout(fd uintptr, d time.Duration) {
	unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_RXT_CONNDROPTIME, int(d/time.Second))
}
