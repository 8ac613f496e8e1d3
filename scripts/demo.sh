#!/bin/sh
# demo.sh — the whole dispatch loop on a fresh mailbox, with the built-in
# probe agent (no AI, no API key): queue a task, see it stale, spawn the
# agent, read its reply, see that nothing is left unread, and look at the
# team. `make demo` runs it after installing the commands.
#
# Each step says what it shows, then prints the command exactly as you
# would type it (quotes included: paste it into your own shell after the
# export line shown first), then runs it. Everything lives in a
# temporary directory, removed when the demo ends, however it ends.
set -eu
dir=$(mktemp -d "${TMPDIR:-/tmp}/teamkit-demo.XXXXXX")
trap 'rm -rf "$dir"' EXIT
# HUP too: a closed terminal ends the demo as Ctrl-C does, through the
# EXIT trap (a signal with no trap would kill the shell without running it).
trap 'exit 129' HUP
trap 'exit 130' INT TERM
export TEAMKIT_DB="$dir/teamkit.db" XDG_STATE_HOME="$dir/state"

# quote prints one argument so that a POSIX shell reads it back unchanged.
quote() {
	case $1 in
	'' | *[!A-Za-z0-9_./=:@%+,-]*) printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")" ;;
	*) printf '%s' "$1" ;;
	esac
}

# step WHAT CMD…: say what the step shows, print the command, run it. Exit
# 2 is the watched-for condition ("stale messages exist"): reported, not
# fatal.
step() {
	printf '\n# %s\n$' "$1"
	shift
	for a in "$@"; do printf ' %s' "$(quote "$a")"; done
	printf '\n'
	rc=0
	"$@" || rc=$?
	if [ "$rc" -eq 2 ]; then
		echo "(exit 2: the condition this command watches for)"
	elif [ "$rc" -ne 0 ]; then
		echo "demo: that command failed (exit $rc)" >&2
		exit "$rc"
	fi
}

echo "teamkit demo: a fresh mailbox in a temporary directory, removed at the end."
echo "To paste the commands below into your own shell, first run:"
echo "  export TEAMKIT_DB=\$(mktemp -d)/teamkit.db"
step "Queue a task for worker w1, which does not exist yet (it prints the message id)." \
	inbox send demo w1 --from lead -- "summarise the README"
step "Nobody has read it: stale lists it, and says w1 was never spawned (exit 2)." \
	stale demo --min 0
step "Spawn the built-in probe agent as w1. spawn blocks until w1's own run marks ready." \
	spawn probe w1 --team demo
step "The probe drained its inbox and replied to lead. Read the reply (waiting up to 60s)." \
	inbox demo lead --wait 60s
step "Nothing is left unread: stale prints nothing and exits 0." \
	stale demo --min 0
step "The team at a glance: each agent's state, unread work and log." \
	spawn list demo
echo
echo "Done. A real agent is the same loop with another type: spawn claude w2 --team demo --task '…'"
