#!/usr/bin/env bash
# benchwake.sh — wake on mail (issue 19): how soon a message to an exited
# wake agent is drained under `resume --watch`, and what the watch costs
# while nothing happens.
#
# Builds the six commands into a temporary directory and uses a scripted
# wake type (wake=mail) whose agent marks ready and, when its briefing says
# new mail is waiting, drains its inbox and appends the time it finished.
#
#   scripts/benchwake.sh latency     # N=20 messages, one at a time, each to the exited agent
#   scripts/benchwake.sh idle        # 50 exited wake agents, no mail: CPU of the watch over SECS=60
set -euo pipefail

mode=${1:-latency}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/teamkit-benchwake.XXXXXX")
watch=
trap '[ -n "$watch" ] && kill -INT "$watch" 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/types/waker"
(cd "$root" && go build -o "$work/bin/" ./cmd/...)
export PATH=$work/bin:$PATH TEAMKIT_DB=$work/team.db TEAMKIT_TYPES=$work/types XDG_STATE_HOME=$work/state WORK=$work
printf 'command=sh {typedir}/agent.sh {prompt_file}\nboot=file\nhandshake=actas\nready_timeout=60\nmonitor=no\nwake=mail\n' \
	> "$work/types/waker/type.conf"
echo '{{template "teamkit" .}}' > "$work/types/waker/template.md"
cat > "$work/types/waker/agent.sh" <<'A'
ready mark || exit 3
grep -q 'New mail is waiting' "$1" || exit 0
inbox "$TEAMKIT_TEAM" "$TEAMKIT_AGENT" > /dev/null
date +%s%N >> "$WORK/drained.log"
A

: > "$work/drained.log"

exited() { spawn list b --json | grep -q "\"name\":\"$1\",.*\"state\":\"exited\""; }

case $mode in
latency)
	spawn waker w1 --team b > /dev/null 2>&1
	until exited w1; do sleep 0.05; done
	resume b --watch --interval 1h > "$work/resume.out" 2> /dev/null &
	watch=$!
	sleep 2 # its first pass done
	for i in $(seq "${N:-20}"); do
		until exited w1; do sleep 0.05; done
		before=$(wc -l < "$work/drained.log")
		t0=$(date +%s%N)
		inbox send b w1 --from lead "m$i" > /dev/null
		while [ "$(wc -l < "$work/drained.log")" -le "$before" ]; do sleep 0.005; done
		echo "wake $i: $((($(tail -n 1 "$work/drained.log") - t0) / 1000000)) ms from inbox send to drained"
	done
	kill -INT "$watch"; wait "$watch" || true; watch=
	echo "woke lines: $(grep -c '^woke ' "$work/resume.out")"
	;;
idle)
	for i in $(seq 50); do spawn waker "w$i" --team b > /dev/null 2>&1; done
	for i in $(seq 50); do until exited "w$i"; do sleep 0.05; done; done
	resume b --watch --interval 30s > "$work/resume.out" 2> /dev/null &
	watch=$!
	sleep 5
	s0=$(awk '{print $14+$15}' "/proc/$watch/stat")
	sleep "${SECS:-60}"
	s1=$(awk '{print $14+$15}' "/proc/$watch/stat")
	echo "resume --watch, 50 idle wake agents: $((s1 - s0)) ticks (1/$(getconf CLK_TCK) s) of CPU in ${SECS:-60} s;" \
		"children now: $(ps --ppid "$watch" -o pid= | wc -l)"
	kill -INT "$watch"; wait "$watch" || true; watch=
	echo "woke lines: $(grep -c '^woke ' "$work/resume.out" || true)"
	;;
*)
	echo "usage: benchwake.sh latency|idle" >&2
	exit 64
	;;
esac
