#!/bin/sh
# demo.sh — the whole dispatch loop on a fresh mailbox, with the built-in
# probe agent (no AI, no API key): queue a task, spawn, see it go ready, read
# its reply, and see that nothing is left unread. `make demo` runs it after
# installing the commands.
set -eu
dir=$(mktemp -d "${TMPDIR:-/tmp}/teamkit-demo.XXXXXX")
export TEAMKIT_DB="$dir/teamkit.db" XDG_STATE_HOME="$dir/state"
run() {
	printf '\n$ %s\n' "$*"
	"$@"
}
echo "teamkit demo: mailbox $TEAMKIT_DB"
run inbox send demo w1 --from lead -- "summarise the README"
# Exit 2 means "stale messages exist": expected here, the worker does not exist yet.
run stale demo --min 0 || [ $? -eq 2 ]
run spawn probe w1 --team demo
run inbox demo lead --wait 60s
run stale demo --min 0
echo "stale: nothing unread"
