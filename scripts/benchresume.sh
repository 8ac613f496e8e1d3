#!/usr/bin/env bash
# benchresume.sh — time one resume pass carrying N answers back, one
# re-spawn at a time (--parallel 1) and at the default parallelism.
#
# Builds the six commands into a temporary directory, then for each setting:
# makes a fresh mailbox, spawns N agents of the built-in probe type, records
# a question for each (ask --team --name) and answers it (ask answer), and
# times `resume bench` re-spawning them all (each re-spawn waits for the
# probe's ready mark, as spawn does for any handshake type). Usage:
#
#   scripts/benchresume.sh            # N=200
#   N=50 scripts/benchresume.sh
set -euo pipefail

N=${N:-200}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/teamkit-benchresume.XXXXXX")
trap 'rm -rf "$work"' EXIT
bin=$work/bin
mkdir -p "$bin"
echo "benchresume: building into $bin" >&2
(cd "$root" && go build -o "$bin/" ./cmd/...)
export PATH=$bin:$PATH XDG_STATE_HOME=$work/state
unset TEAMKIT_TEAM TEAMKIT_AGENT TEAMKIT_RUN TEAMKIT_ISSUE TEAMKIT_TYPES

now() { date +%s.%N; }

for parallel in 1 default; do
	export TEAMKIT_DB=$work/$parallel/t.db
	mkdir -p "$work/$parallel"
	echo "benchresume: seeding $N answered asks (--parallel $parallel)" >&2
	for i in $(seq 1 "$N"); do
		spawn probe "w$i" --team bench >/dev/null 2>&1 &
		if ((i % 20 == 0)); then wait; fi
	done
	wait
	for i in $(seq 1 "$N"); do
		ask --team bench --name "w$i" "Which colour, w$i?" >/dev/null 2>&1
	done
	for id in $(seq 1 "$N"); do
		ask answer "$id" "Blue." >/dev/null 2>&1
	done
	flag=()
	[[ $parallel == default ]] || flag=(--parallel "$parallel")
	start=$(now)
	resume bench "${flag[@]}" >"$work/$parallel/out" 2>"$work/$parallel/err"
	end=$(now)
	resumed=$(grep -c '^resumed .*status=ready' "$work/$parallel/out" || true)
	printf 'parallel=%s answers=%d resumed_ready=%d seconds=%.2f\n' "$parallel" "$N" "$resumed" "$(echo "$end - $start" | bc)"
done
