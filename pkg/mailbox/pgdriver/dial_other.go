//go:build !linux && !darwin && !windows

package pgdriver

import "time"

// Elsewhere keepalive alone bounds a wait for an answer; a statement whose
// data goes unacknowledged waits for the system's own retransmission limit.
func setUserTimeout(uintptr, time.Duration) {}
