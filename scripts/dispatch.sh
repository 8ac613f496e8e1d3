#!/bin/sh
# dispatch.sh — hand one task to one agent and wait for its reply.
#
#   TEAMKIT_DB=/path/to/team.db scripts/dispatch.sh TEAM TYPE AGENT TASK
#
#   for i in 1 2 3 4 5; do scripts/dispatch.sh myteam probe "w$i" "task $i" & done; wait
#
# 1. queue the task in the agent's inbox (before the agent exists: the
#    briefing tells it to drain its inbox first thing);
# 2. spawn the agent and, for handshake types, block until its own run
#    marks ready (an agent of a type without one that replied and exited
#    within spawn's watch has done its task);
# 3. wait for the reply to that task — only replies to its id, so any number
#    of dispatches can run at once from the same DISPATCHER inbox, each
#    getting its own reply;
# 4. make sure nothing the team was sent sits unread.
#
# A dispatch that fails after step 1 leaves its task queued (it printed the
# id): run again, it would queue the task a second time. To have the agent
# read the task already queued, spawn it alone (spawn TYPE AGENT --team TEAM;
# exit 2 with status=exited is an agent that was quicker than spawn's watch,
# as in step 2), then wait for the reply: inbox TEAM DISPATCHER --reply-to ID
# --wait 10m.
#
# Environment: TEAMKIT_DB (the mailbox), DISPATCHER (our inbox name, default
# "dispatch"), REPLY_WAIT (default 600s), STALE_MIN (default 10).
# Exit: 0 reply received; 2 the agent never became ready, or no reply came
# in time, or stale messages remain; 1 a teamkit command failed; 64 usage;
# 129, 130, 143 stopped by SIGHUP, SIGINT, SIGTERM, which stop the command
# it waits on too (no inbox --wait is left to take the reply).
set -u

if [ $# -ne 4 ]; then
	echo "usage: dispatch.sh TEAM TYPE AGENT TASK" >&2
	exit 64
fi
team=$1 type=$2 agent=$3 task=$4
me=${DISPATCHER:-dispatch}

# run CMD…: run a teamkit command and wait for it, so that a signal to this
# script (kill PID, a supervisor's SIGTERM) stops the command too: a stopped
# dispatch leaves no inbox --wait behind to take its reply later, nor a spawn
# still waiting for the handshake. The command runs in the background, which
# a sh waiting for it leaves for a trap at once; fd 3 gives it our stdin
# (sh gives a background command /dev/null).
child=
run() {
	"$@" <&3 3<&- &
	child=$!
	wait "$child"
	rc=$?
	child=
	return "$rc"
}
stop() {
	trap '' HUP INT TERM
	if [ -n "$child" ]; then
		kill -TERM "$child" 2>/dev/null
		wait "$child"
	fi
	exit "$1"
}
trap 'stop 129' HUP
trap 'stop 130' INT
trap 'stop 143' TERM
{ command exec 3<&0; } 2>/dev/null || exec 3</dev/null

# "--" ends the flags, so a task that starts with "-" is still a task.
sent=$(inbox send "$team" "$agent" --from "$me" -- "$task") || exit 1
id=${sent#id=}
echo "dispatch: queued $sent for $team/$agent"

replied=
run spawn "$type" "$agent" --team "$team"
case $? in
0) ;;
2)
	# Exit 2 is also an agent that ended before spawn saw it ready: one of a
	# type without a handshake that did its task and exited within spawn's
	# watch. A reply it already sent is the task done.
	if run inbox "$team" "$me" --reply-to "$id" --wait 0 2>/dev/null; then
		replied=yes
	else
		echo "dispatch: $team/$agent did not become ready (see the status line and log above)" >&2
		exit 2
	fi
	;;
*) exit 1 ;;
esac

if [ -z "$replied" ]; then
	run inbox "$team" "$me" --reply-to "$id" --wait "${REPLY_WAIT:-600s}"
	case $? in
	0) ;;
	2)
		echo "dispatch: no reply to message $id from $team/$agent in ${REPLY_WAIT:-600s}" >&2
		exit 2
		;;
	*) exit 1 ;;
	esac
fi

# Anything still unread past STALE_MIN minutes is somebody's lost work.
run stale "$team" --min "${STALE_MIN:-10}"
