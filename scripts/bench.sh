#!/usr/bin/env bash
# bench.sh — time the teamkit mailbox commands as whole processes.
#
# Builds inbox, stale and the reference binary scripts/benchref (a bare Go
# binary that opens the same database with the same SQLite driver and options,
# runs SELECT 1 and exits) into a temporary directory; makes a 1,000- and a
# 1,000,000-message mailbox (about 300 unread in each, the rest read); then
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

declare -A DB=([1k]=$work/1k.db [1M]=$work/1M.db)
declare -A SIZE=([1k]=1000 [1M]=1000000)
for s in 1k 1M; do
	echo "bench: seeding ${SIZE[$s]} messages" >&2
	"$bin/inbox" list crew --db "${DB[$s]}" >/dev/null # creates and migrates
	"$bin/benchref" -seed "${SIZE[$s]}" "${DB[$s]}"
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

# time_roundtrip SIZE: send one message to "drainer" (a tenth of the mailbox
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

for s in 1k 1M; do
	echo "bench: timing on the $s mailbox ($RUNS runs each)" >&2
	time_cmd "ref_$s" "$bin/benchref" "${DB[$s]}"
	time_roundtrip "$s"
	time_cmd "stale_$s" "$bin/stale" crew --min 10 --db "${DB[$s]}"
	time_cmd "quiet_$s" "$bin/stale" crew --min 100000 --db "${DB[$s]}"
	time_cmd "list_$s" "$bin/inbox" list crew --db "${DB[$s]}"
	# The whole history once (a million rows at 1M): wall time and peak
	# memory of one process, with GNU time when it is there.
	if [[ -x /usr/bin/time ]]; then
		read -r wall rss < <(/usr/bin/time -f '%e %M' "$bin/inbox" list crew --all --db "${DB[$s]}" 2>&1 >/dev/null | tail -1)
		MS[all_$s]=$(awk -v w="$wall" 'BEGIN { printf "%.2f", w * 1000 }')
		RSS[$s]=$((rss / 1024))
	else
		tick; t0=$T
		run "$bin/inbox" list crew --all --db "${DB[$s]}"
		tick; MS[all_$s]=$(awk -v d=$((T - t0)) 'BEGIN { printf "%.2f", d / 1000 }')
		RSS[$s]=?
	fi
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
verdict() { awk -v r="$1" -v lim="$2" 'BEGIN { print (r <= lim) ? "met" : "NOT met" }'; }

echo
echo "## Commands as whole processes: median of $RUNS runs"
echo
printf '| %-42s | %9s | %9s | %9s |\n' "command" "1k ms" "1M ms" "1M / 1k"
printf '|%s|%s|%s|%s|\n' "--------------------------------------------" "-----------" "-----------" "-----------"
row() { printf '| %-42s | %9s | %9s | %9s |\n' "$1" "${MS[${2}_1k]}" "${MS[${2}_1M]}" "$(ratio "${MS[${2}_1M]}" "${MS[${2}_1k]}")"; }
row "benchref: open the database, SELECT 1" ref
row "inbox send" send
row "inbox drain (one message)" drain
row "inbox send + inbox drain (two processes)" trip
row "stale crew --min 10 (~300 stale listed)" stale
row "stale crew --min 100000 (none stale)" quiet
row "inbox list crew (~300 unread listed)" list
row "inbox list crew --all (whole history, once)" all
echo
echo "inbox list crew --all, peak RSS: ${RSS[1k]} MiB at 1k, ${RSS[1M]} MiB at 1M"
echo
echo "## Ratios to the bare binary (same mailbox)"
echo
printf '| %-42s | %9s | %9s |\n' "command / benchref" "1k" "1M"
printf '|%s|%s|%s|\n' "--------------------------------------------" "-----------" "-----------"
declare -A LABEL=([send]="inbox send" [drain]="inbox drain" [stale]="stale (~300 listed)" [quiet]="stale (none stale)")
for k in send drain stale quiet; do
	printf '| %-42s | %9s | %9s |\n' "${LABEL[$k]}" "$(ratio "${MS[${k}_1k]}" "${MS[ref_1k]}")" "$(ratio "${MS[${k}_1M]}" "${MS[ref_1M]}")"
done
printf '| %-42s | %9s | %9s |\n' "inbox send + drain / (2 x benchref)" \
	"$(ratio "${MS[trip_1k]}" "$(awk -v r="${MS[ref_1k]}" 'BEGIN { print 2 * r }')")" \
	"$(ratio "${MS[trip_1M]}" "$(awk -v r="${MS[ref_1M]}" 'BEGIN { print 2 * r }')")"
echo
worst=$(for s in 1k 1M; do for k in send drain stale quiet; do
	echo "$(ratio "${MS[${k}_$s]}" "${MS[ref_$s]}") ${LABEL[$k]}, $s"
done; done | sort -n | tail -1)
stale_r=$(ratio "${MS[stale_1M]}" "${MS[stale_1k]}")
drain_r=$(ratio "${MS[drain_1M]}" "${MS[drain_1k]}")
list_r=$(ratio "${MS[list_1M]}" "${MS[list_1k]}")
echo "## Targets"
echo
echo "- a mailbox command <= ~2x the bare binary: worst ${worst%% *}x (${worst#* }) — $(verdict "${worst%% *}" 2)"
echo "- stale 1M within 2x of 1k: ${stale_r}x — $(verdict "$stale_r" 2)"
echo "- drain 1M within 2x of 1k: ${drain_r}x — $(verdict "$drain_r" 2)"
echo "- inbox list 1M within 2x of 1k: ${list_r}x — $(verdict "$list_r" 2)"
