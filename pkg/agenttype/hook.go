package agenttype

import (
	"fmt"
	"strconv"
)

// StopHook is how a running agent hears of mail at the end of a turn: the
// CLI's own hook, never keystrokes into its terminal.
type StopHook string

// The stop hooks type.conf accepts. StopHookNone is the absence of the key:
// the agent sees new mail only when it runs inbox (or, exited, when it is
// woken).
const (
	StopHookNone StopHook = ""
	// StopHookClaude: spawn gives claude a Stop hook (--settings FILE) that
	// runs `inbox __stop-hook`; while the agent has unread mail it blocks the
	// stop with a reason telling the model to run inbox, and the same run
	// goes on.
	StopHookClaude StopHook = "claude"
)

// DefaultStopHookMax is StopHookMax when type.conf sets stop_hook but not
// stop_hook_max: below claude's own cap of 8 blocks in a row, so ours is
// the one that ends a run whose mail keeps coming.
const DefaultStopHookMax = 5

// maxStopHookMax bounds stop_hook_max: a run that took more turns of new
// mail than this should end and be woken afresh.
const maxStopHookMax = 1000

func parseStopHook(value string) (StopHook, bool) {
	switch h := StopHook(value); h {
	case StopHookClaude:
		return h, true
	}
	return "", false
}

func parseStopHookMax(value string) (int, string) {
	n, err := strconv.Atoi(value)
	if err != nil || n < 1 || n > maxStopHookMax {
		return 0, fmt.Sprintf("a whole number of blocks from 1 to %d", maxStopHookMax)
	}
	return n, ""
}
