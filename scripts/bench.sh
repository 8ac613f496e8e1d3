#!/usr/bin/env bash
# bench.sh — time the teamkit mailbox commands as whole processes, on both
# backends side by side.
#
# Builds inbox, stale and the reference binary scripts/benchref (a bare Go
# binary that opens the same database with the same driver and options,
# runs SELECT 1 and exits) into a temporary directory; makes a 1,000- and a
# 1,000,000-message mailbox (about 300 unread in each, the rest read) on
# SQLite and on PostgreSQL (TEAMKIT_TEST_POSTGRES, else a throwaway cluster
# that benchref starts as the tests do; BACKENDS=sqlite skips it); then
# runs every command RUNS times and prints the median wall-clock time per
# process and the ratios the targets are stated in:
#
#   a mailbox command costs at most ~2x the bare binary;
#   stale, drain and inbox list (unread) on 1M messages stay within 2x of 1k;
#   inbox list --all streams: its peak memory (GNU time's max RSS) is the
#   same at 1M as at 1k.
#
# Timing needs nothing but bash (EPOCHREALTIME, bash >= 5; else GNU date);
# Go is needed only to build. Usage:
#
#   scripts/bench.sh             # RUNS=31
#   RUNS=101 scripts/bench.sh
set -euo pipefail

RUNS=${RUNS:-31}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/teamkit-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
bin=$work/bin
mkdir -p "$bin"

echo "bench: building into $bin" >&2
(cd "$root" && go build -o "$bin/" ./cmd/inbox ./cmd/stale ./scripts/benchref)

BACKENDS=${BACKENDS:-sqlite postgres}
declare -A DB=([sqlite_1k]=$work/1k.db [sqlite_1M]=$work/1M.db)
declare -A SIZE=([1k]=1000 [1M]=1000000)
if [[ $BACKENDS == *postgres* ]]; then
	# benchref -pg prints two database URLs and keeps their server until
	# its stdin closes (at exit, below).
	coproc PGSERVER { "$bin/benchref" -pg 2; }
	read -r -u "${PGSERVER[0]}" 'DB[postgres_1k]'
	read -r -u "${PGSERVER[0]}" 'DB[postgres_1M]'
	trap 'exec {PGSERVER[1]}>&-; wait; rm -rf "$work"' EXIT
fi
for b in $BACKENDS; do
	for s in 1k 1M; do
		echo "bench: seeding ${SIZE[$s]} messages ($b)" >&2
		"$bin/inbox" list crew --db "${DB[${b}_$s]}" >/dev/null 2>&1 # creates and migrates
		"$bin/benchref" -seed "${SIZE[$s]}" "${DB[${b}_$s]}"
	done
done

# tick sets T to the time in microseconds, without forking when it can.
if [[ -n ${EPOCHREALTIME:-} ]]; then
	tick() { T=${EPOCHREALTIME/[.,]/}; }
else
	tick() { T=$(($(date +%s%N) / 1000)); }
fi

# run CMD…: output discarded; exit 0, or 2 (stale found messages), is success.
run() {
	local rc=0
	"$@" >/dev/null 2>&1 || rc=$?
	if ((rc != 0 && rc != 2)); then
		echo "bench: '$*' exited $rc" >&2
		"$@" >&2 || true
		exit 1
	fi
}

# median µs of the arguments (µs), printed in ms.
median_ms() {
	printf '%s\n' "$@" | sort -n | awk '{a[NR] = $1}
		END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.2f", m / 1000 }'
}

declare -A MS RSS
# time_cmd KEY CMD…: RUNS timed runs after 3 untimed ones.
time_cmd() {
	local key=$1 i t0 samples=()
	shift
	for i in 1 2 3; do run "$@"; done
	for ((i = 0; i < RUNS; i++)); do
		tick; t0=$T
		run "$@"
		tick; samples+=($((T - t0)))
	done
	MS[$key]=$(median_ms "${samples[@]}")
}

# time_roundtrip KEY: send one message to "drainer" (a tenth of the mailbox
# is its read history) and drain it, each a process, RUNS times.
time_roundtrip() {
	local s=$1 db=${DB[$1]} i a b c sends=() drains=() trips=()
	for i in 1 2 3; do
		run "$bin/inbox" send crew drainer "warm-up" --db "$db"
		run "$bin/inbox" drain crew drainer --db "$db"
	done
	for ((i = 0; i < RUNS; i++)); do
		tick; a=$T
		run "$bin/inbox" send crew drainer "Task $i: implement the next item, run the tests, report back." --db "$db"
		tick; b=$T
		run "$bin/inbox" drain crew drainer --db "$db"
		tick; c=$T
		sends+=($((b - a))); drains+=($((c - b))); trips+=($((c - a)))
	done
	MS[send_$s]=$(median_ms "${sends[@]}")
	MS[drain_$s]=$(median_ms "${drains[@]}")
	MS[trip_$s]=$(median_ms "${trips[@]}")
}

for b in $BACKENDS; do
	for s in 1k 1M; do
		k=${b}_$s
		echo "bench: timing on the $s mailbox, $b ($RUNS runs each)" >&2
		time_cmd "ref_$k" "$bin/benchref" "${DB[$k]}"
		time_roundtrip "$k"
		time_cmd "stale_$k" "$bin/stale" crew --min 10 --db "${DB[$k]}"
		time_cmd "quiet_$k" "$bin/stale" crew --min 100000 --db "${DB[$k]}"
	done
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
verdict() { awk -v r="$1" -v lim="$2" 'BEGIN { print (r <= lim) ? "met" : "NOT met" }'; }

declare -A TITLE=([sqlite]=SQLite [postgres]=PostgreSQL)
declare -A LABEL=([send]="inbox send" [drain]="inbox drain" [stale]="stale (~300 listed)" [quiet]="stale (none stale)")
for b in $BACKENDS; do
	echo
	echo "## ${TITLE[$b]}: commands as whole processes, median of $RUNS runs"
	echo
	printf '| %-42s | %9s | %9s | %9s |\n' "command" "1k ms" "1M ms" "1M / 1k"
	printf '|%s|%s|%s|%s|\n' "--------------------------------------------" "-----------" "-----------" "-----------"
	row() { printf '| %-42s | %9s | %9s | %9s |\n' "$1" "${MS[${2}_${b}_1k]}" "${MS[${2}_${b}_1M]}" "$(ratio "${MS[${2}_${b}_1M]}" "${MS[${2}_${b}_1k]}")"; }
	row "benchref: open the database, SELECT 1" ref
	row "inbox send" send
	row "inbox drain (one message)" drain
	row "inbox send + inbox drain (two processes)" trip
	row "stale crew --min 10 (~300 stale listed)" stale
	row "stale crew --min 100000 (none stale)" quiet
	echo
	echo "### ${TITLE[$b]}: ratios to the bare binary (same mailbox)"
	echo
	printf '| %-42s | %9s | %9s |\n' "command / benchref" "1k" "1M"
	printf '|%s|%s|%s|\n' "--------------------------------------------" "-----------" "-----------"
	for k in send drain stale quiet; do
		printf '| %-42s | %9s | %9s |\n' "${LABEL[$k]}" "$(ratio "${MS[${k}_${b}_1k]}" "${MS[ref_${b}_1k]}")" "$(ratio "${MS[${k}_${b}_1M]}" "${MS[ref_${b}_1M]}")"
	done
	printf '| %-42s | %9s | %9s |\n' "inbox send + drain / (2 x benchref)" \
		"$(ratio "${MS[trip_${b}_1k]}" "$(awk -v r="${MS[ref_${b}_1k]}" 'BEGIN { print 2 * r }')")" \
		"$(ratio "${MS[trip_${b}_1M]}" "$(awk -v r="${MS[ref_${b}_1M]}" 'BEGIN { print 2 * r }')")"
done
if [[ $BACKENDS == *sqlite* && $BACKENDS == *postgres* ]]; then
	echo
	echo "## PostgreSQL beside SQLite (same run)"
	echo
	printf '| %-42s | %9s | %9s | %9s |\n' "median ms, 1k mailbox" "SQLite" "PostgreSQL" "PG / SQLite"
	printf '|%s|%s|%s|%s|\n' "--------------------------------------------" "-----------" "-----------" "-----------"
	for k in ref send drain trip stale; do
		printf '| %-42s | %9s | %9s | %9s |\n' "${LABEL[$k]:-$k}" "${MS[${k}_sqlite_1k]}" "${MS[${k}_postgres_1k]}" "$(ratio "${MS[${k}_postgres_1k]}" "${MS[${k}_sqlite_1k]}")"
	done
fi
echo
echo "## Targets"
echo
for b in $BACKENDS; do
	worst=$(for s in 1k 1M; do for k in send drain stale quiet; do
		echo "$(ratio "${MS[${k}_${b}_$s]}" "${MS[ref_${b}_$s]}") ${LABEL[$k]}, $s"
	done; done | sort -n | tail -1)
	stale_r=$(ratio "${MS[stale_${b}_1M]}" "${MS[stale_${b}_1k]}")
	drain_r=$(ratio "${MS[drain_${b}_1M]}" "${MS[drain_${b}_1k]}")
	echo "- ${TITLE[$b]}: a mailbox command <= ~2x the bare binary: worst ${worst%% *}x (${worst#* }) — $(verdict "${worst%% *}" 2)"
	echo "- ${TITLE[$b]}: stale 1M within 2x of 1k: ${stale_r}x — $(verdict "$stale_r" 2)"
	echo "- ${TITLE[$b]}: drain 1M within 2x of 1k: ${drain_r}x — $(verdict "$drain_r" 2)"
done
