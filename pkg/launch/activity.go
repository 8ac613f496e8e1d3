package launch

import (
	"os"
	"time"
)

// lastEvent is when the run's agent last did something its supervisor can
// see: the latest of the run's start, the last write to its log (a line of
// output in every mode whose output reaches the log: background, tmux,
// console, wt; in the foreground the output goes to the terminal only),
// and the last line of its structured stream, when it is read. The
// supervisor's own notes in the log come at the run's start and end, and
// when a heartbeat fails. It is looked at once per heartbeat, never per
// line: activity costs no write of its own, Heartbeat carries it.
func lastEvent(spec Spec, started time.Time, st *stream) time.Time {
	last := started
	if spec.Log != "" {
		if fi, err := os.Stat(spec.Log); err == nil && fi.ModTime().After(last) {
			last = fi.ModTime()
		}
	}
	if st != nil {
		st.mu.Lock()
		if st.last.After(last) {
			last = st.last
		}
		st.mu.Unlock()
	}
	return last
}
