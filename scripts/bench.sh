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
#   scripts/bench.sh --base REF  # this tree against REF, paired (below)
#   scripts/bench.sh --fleet N   # N agents: spawn 10 at a time, list, stop --all
#   scripts/bench.sh --pair A… -- B…   # two commands of your own, paired
#   AGMSG=DIR scripts/bench.sh --peer  # the agent's round trip against agmsg's
#
# --base REF builds inbox, stale and ready from the git ref REF (git archive
# into a temporary directory) and from this tree, and runs each command of
# both, alternately, RUNS times: each pair's ratio is taken in the same
# moment, so a busy machine shifts both sides alike, and the median ratio
# shows a regression even where the absolute times wander. Each is also
# paired with the floor: scripts/benchfloor (open the SQLite file, one
# statement) and, for --version, an empty Go main; send also with
# benchfloor -send, whose one statement is send's INSERT. GNU time's peak
# RSS and minor page faults are printed for one run of each.
#
# --pair runs two given commands (neither may contain the word --) the same
# way, RUNS pairs, and prints the one line: any two builds side by side.
#
# --peer pairs the agent's round trip (one process sends a message, then its
# recipient drains it: inbox send, then inbox drain) with the same through
# agmsg, the bash toolkit teamkit replaces (send.sh, then inbox.sh, run as
# its SKILL.md has agents run them). AGMSG=DIR names a checkout of
# github.com/fujibee/agmsg, else it is cloned; agmsg needs sqlite3.
#
# --fleet N spawns N trivial agents (sleep, no handshake) 10 at a time,
# times spawn list at N agents paired with a one-agent team, and spawn stop
# --all (grace 2s).
#
# How long (2 cores, shared): --base with RUNS=21, 54 s at load ~10;
# --fleet 200 with RUNS=11, 1 to 2.5 min, nearly all of it the 200 spawns.
set -euo pipefail

RUNS=${RUNS:-31}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/teamkit-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
bin=$work/bin
mkdir -p "$bin"
# The tags make install builds the commands with, and as it does, static
# (every binary here, the bases and the floors alike).
TAGS=urfave_cli_no_docs
export CGO_ENABLED=0

# tick sets T to the time in microseconds, without forking when it can.
if [[ -n ${EPOCHREALTIME:-} ]]; then
	tick() { T=${EPOCHREALTIME/[.,]/}; }
else
	tick() { T=$(($(date +%s%N) / 1000)); }
fi

# median of the arguments (one a line), as is.
median() {
	printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1}
		END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; print m }'
}

# paired LABEL A… -- B…: RUNS alternating runs of A and B (after 3 of each
# untimed); prints A's and B's median ms and the median of the B/A ratios.
paired() {
	local label=$1 a=() b=() i t0 ta tb ras=() tas=() tbs=()
	shift
	while [[ $1 != -- ]]; do a+=("$1"); shift; done
	shift
	b=("$@")
	for i in 1 2 3; do "${a[@]}" >/dev/null 2>&1 || true; "${b[@]}" >/dev/null 2>&1 || true; done
	# Every other pair runs B first: the second of two runs is a few per
	# cent slower here (two runs of one command gave 1.02-1.04), which
	# would otherwise always count against B.
	for ((i = 0; i < RUNS; i++)); do
		if ((i % 2)); then
			tick; t0=$T; "${b[@]}" >/dev/null 2>&1 || true; tick; tb=$((T - t0))
			tick; t0=$T; "${a[@]}" >/dev/null 2>&1 || true; tick; ta=$((T - t0))
		else
			tick; t0=$T; "${a[@]}" >/dev/null 2>&1 || true; tick; ta=$((T - t0))
			tick; t0=$T; "${b[@]}" >/dev/null 2>&1 || true; tick; tb=$((T - t0))
		fi
		tas+=("$ta"); tbs+=("$tb"); ras+=("$(awk -v a="$ta" -v b="$tb" 'BEGIN { printf "%.4f", b / a }')")
	done
	printf '| %-44s | %8.2f | %8.2f | %6.2f |\n' "$label" "$(median "${tas[@]}" | awk '{print $1 / 1000}')" \
		"$(median "${tbs[@]}" | awk '{print $1 / 1000}')" "$(median "${ras[@]}")"
}

# mem LABEL CMD…: peak RSS (MB) and minor page faults of one run.
mem() {
	local label=$1 out
	shift
	out=$({ /usr/bin/time -f '%M %R' "$@" 2>&1 >/dev/null || true; } | tail -1) # stale exits 2 when it lists
	printf '| %-44s | %8.1f | %8s |\n' "$label" "$(awk -v k="${out% *}" 'BEGIN { print k / 1024 }')" "${out#* }"
}

if [[ ${1:-} == --pair ]]; then
	shift
	printf '| %-44s | %8s | %8s | %6s |\n' "command (A, B)" "A ms" "B ms" "B / A"
	printf '|%s|%s|%s|%s|\n' "----------------------------------------------" "----------" "----------" "--------"
	paired "$*" "$@"
	exit 0
fi

if [[ ${1:-} == --peer ]]; then
	peer=$work/agmsg
	if [[ -n ${AGMSG:-} ]]; then
		cp -R "$AGMSG" "$peer"
	elif ! git clone -q --depth 1 https://github.com/fujibee/agmsg "$peer" 2>/dev/null; then
		echo "bench: --peer needs agmsg: AGMSG=DIR scripts/bench.sh --peer, DIR a checkout of github.com/fujibee/agmsg" >&2
		exit 1
	fi
	command -v sqlite3 >/dev/null || { echo "bench: --peer needs sqlite3 for agmsg (apt-get install sqlite3)" >&2; exit 1; }
	rm -rf "$peer/db" && mkdir "$peer/db"
	"$peer/scripts/init-db.sh" >/dev/null
	(cd "$root" && go build -tags "$TAGS" -o "$bin/" ./cmd/inbox)
	export TEAMKIT_DB=$work/peer.db
	"$bin/inbox" send crew w1 first >/dev/null 2>&1 && "$bin/inbox" drain crew w1 >/dev/null
	agmsg() { "$peer/scripts/send.sh" crew lead w1 hello && "$peer/scripts/inbox.sh" crew w1; }
	teamkit() { "$bin/inbox" send crew w1 hello --from lead && "$bin/inbox" drain crew w1; }
	echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores; $RUNS pairs; agmsg $(git -C "$peer" rev-parse --short HEAD 2>/dev/null || echo "from $AGMSG")"
	printf '| %-44s | %8s | %8s | %6s |\n' "round trip (A = agmsg, B = teamkit)" "A ms" "B ms" "B / A"
	printf '|%s|%s|%s|%s|\n' "----------------------------------------------" "----------" "----------" "--------"
	paired "send, then the recipient drains it" agmsg -- teamkit
	exit 0
fi

if [[ ${1:-} == --base ]]; then
	ref=${2:?usage: scripts/bench.sh --base REF}
	echo "bench: building $ref and this tree into $work" >&2
	mkdir -p "$work/base" "$work/src" "$bin/base" "$bin/new" "$work/empty"
	git -C "$root" archive "$ref" | tar -x -C "$work/src"
	# A ref from before the tag existed does not build with it.
	(cd "$work/src" && { go build -tags "$TAGS" -o "$bin/base/" ./cmd/inbox ./cmd/stale ./cmd/ready 2>/dev/null ||
		go build -o "$bin/base/" ./cmd/inbox ./cmd/stale ./cmd/ready; })
	(cd "$root" && go build -tags "$TAGS" -o "$bin/new/" ./cmd/inbox ./cmd/stale ./cmd/ready ./scripts/benchref ./scripts/benchfloor)
	printf 'package main\n\nfunc main() {}\n' >"$work/empty/main.go"
	(cd "$work/empty" && printf 'module empty\n' >go.mod && go build -o "$bin/empty" .)
	db=$work/base.db
	export TEAMKIT_DB=$db
	"$bin/new/inbox" list crew >/dev/null 2>&1
	"$bin/new/benchref" -seed 1000 "$db"
	sync # the seeding's writeback, not the first pairs, should pay for it
	B=$bin/base N=$bin/new
	echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores; $RUNS pairs each"
	echo
	echo "## This tree against $ref ($(git -C "$root" rev-parse --short "$ref"))"
	echo
	printf '| %-44s | %8s | %8s | %6s |\n' "command (A = $ref, B = this tree)" "A ms" "B ms" "B / A"
	printf '|%s|%s|%s|%s|\n' "----------------------------------------------" "----------" "----------" "--------"
	paired "inbox --version" "$B/inbox" --version -- "$N/inbox" --version
	paired "inbox send" "$B/inbox" send crew w1 hello -- "$N/inbox" send crew w1 hello
	paired "inbox drain (empty)" "$B/inbox" drain crew nobody -- "$N/inbox" drain crew nobody
	paired "stale crew --min 10 (~300 listed)" "$B/stale" crew --min 10 -- "$N/stale" crew --min 10
	paired "stale crew --min 100000 (none)" "$B/stale" crew --min 100000 -- "$N/stale" crew --min 100000
	paired "ready check crew w1" "$B/ready" check crew w1 -- "$N/ready" check crew w1
	echo
	echo "## This tree against the floor"
	echo
	printf '| %-44s | %8s | %8s | %6s |\n' "command (A = floor, B = this tree)" "A ms" "B ms" "B / A"
	printf '|%s|%s|%s|%s|\n' "----------------------------------------------" "----------" "----------" "--------"
	paired "inbox --version / empty main" "$bin/empty" -- "$N/inbox" --version
	paired "inbox send / benchfloor" "$N/benchfloor" "$db" -- "$N/inbox" send crew w1 hello
	paired "inbox send / benchfloor -send (its INSERT)" "$N/benchfloor" -send "$db" -- "$N/inbox" send crew w1 hello
	paired "inbox drain (empty) / benchfloor" "$N/benchfloor" "$db" -- "$N/inbox" drain crew nobody
	paired "stale (~300 listed) / benchfloor" "$N/benchfloor" "$db" -- "$N/stale" crew --min 10
	paired "stale (~300 listed) / benchfloor -stale (its SELECT)" "$N/benchfloor" -stale "$db" -- "$N/stale" crew --min 10
	paired "stale (none) / benchfloor" "$N/benchfloor" "$db" -- "$N/stale" crew --min 100000
	paired "ready check / benchfloor" "$N/benchfloor" "$db" -- "$N/ready" check crew w1
	echo
	echo "## Peak RSS and minor page faults (one run each)"
	echo
	printf '| %-44s | %8s | %8s |\n' "program" "RSS MB" "faults"
	printf '|%s|%s|%s|\n' "----------------------------------------------" "----------" "----------"
	mem "empty main" "$bin/empty"
	mem "benchfloor" "$N/benchfloor" "$db"
	for v in base new; do
		mem "inbox --version ($v)" "$bin/$v/inbox" --version
		mem "inbox drain, empty ($v)" "$bin/$v/inbox" drain crew nobody
		mem "stale, ~300 listed ($v)" "$bin/$v/stale" crew --min 10
	done
	exit 0
fi

if [[ ${1:-} == --fleet ]]; then
	n=${2:?usage: scripts/bench.sh --fleet N}
	(cd "$root" && go build -tags "$TAGS" -o "$bin/" ./cmd/spawn ./cmd/inbox)
	export TEAMKIT_DB=$work/fleet.db TEAMKIT_TYPES=$work/types XDG_STATE_HOME=$work/state HOME=$work
	mkdir -p "$TEAMKIT_TYPES/idle"
	printf '%s\n' 'command=sleep 3600' 'boot=stdin' >"$TEAMKIT_TYPES/idle/type.conf"
	echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
	"$bin/spawn" idle a0 --team solo >/dev/null
	tick; t0=$T
	for ((i = 0; i < n; i += 10)); do
		for ((j = i; j < i + 10 && j < n; j++)); do "$bin/spawn" idle "a$j" --team fleet >/dev/null & done
		wait
	done
	tick; echo "spawn $n agents, 10 at a time: $(((T - t0) / 1000)) ms"
	running=$("$bin/spawn" list fleet | grep -c ' running ' || true)
	echo "running: $running of $n"
	printf '| %-44s | %8s | %8s | %6s |\n' "command" "A ms" "B ms" "B / A"
	printf '|%s|%s|%s|%s|\n' "----------------------------------------------" "----------" "----------" "--------"
	paired "spawn list: $n agents (B) / 1 agent (A)" "$bin/spawn" list solo -- "$bin/spawn" list fleet
	tick; t0=$T
	"$bin/spawn" stop fleet --all --grace 2s >/dev/null
	tick; echo "spawn stop --all on $n agents, grace 2s: $(((T - t0) / 1000)) ms"
	"$bin/spawn" stop solo --all --grace 2s >/dev/null
	exit 0
fi

echo "bench: building into $bin" >&2
(cd "$root" && go build -tags "$TAGS" -o "$bin/" ./cmd/inbox ./cmd/stale ./cmd/teamkit-postgres ./scripts/benchref)

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
