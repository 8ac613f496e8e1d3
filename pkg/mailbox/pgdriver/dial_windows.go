package pgdriver

import (
	"time"

	"golang.org/x/sys/windows"
)

// Windows's TCP_MAXRT: seconds of retransmission before the connection is
// dropped.
func setUserTimeout(fd uintptr, d time.Duration) {
	windows.SetsockoptInt(windows.Handle(fd), windows.IPPROTO_TCP, windows.TCP_MAXRT, int(d/time.Second))
}
