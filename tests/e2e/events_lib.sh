# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# events_lib.sh - what the allocation, live and lock tests (record_alloc.sh, record_live.sh,
# record_lock.sh) share: recordings stamped with CLOCK_MONOTONIC, the truth their workloads
# (tests/java/AllocTruth, LeakTruth, LockTruth) print over exactly a recording's window, sums of
# folded profiles, and the checks. Sourced after tests/harness/lib.sh and fg_init; uses $cfg
# (the configuration's label, e.g. "JDK 17") in its messages.
#
# The workloads print, every 100 ms, one line of cumulative counters stamped with System.nanoTime
# (CLOCK_MONOTONIC on Linux, the clock the agent stamps its events with):
#   PREFIX NANOTIME KEY VALUE KEY VALUE ... end
# ev_truth interpolates them at the two ends of a window.

# ev_mono_ns: CLOCK_MONOTONIC now, in nanoseconds.
ev_mono_ns() {
	python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))'
}

# ev_record NAME OUT [OPTION...]: `fgcollect record --pid $FG_HOSTPID` on the agent socket $sock
# (no daemon: --ctl $noctl) for $D seconds into OUT, its stderr in $FG_TMP/NAME.err; the window
# (CLOCK_MONOTONIC ns when it started and ended) in $FG_TMP/NAME.win. Waits 300 ms after, so that
# the workload's next truth line lies past the window.
ev_record() {
	local name=$1 out=$2 t0 t1
	shift 2
	t0=$(ev_mono_ns)
	"$FGCOLLECT" record --pid "$FG_HOSTPID" --socket "$sock" --ctl "$noctl" --duration "$D" \
		-o "$out" "$@" 2>"$FG_TMP/$name.err" ||
		{ cat "$FG_TMP/$name.err" >&2; fg_fail "$cfg $name: fgcollect record $* failed"; }
	t1=$(ev_mono_ns)
	echo "$t0 $t1" >"$FG_TMP/$name.win"
	grep -v '^fgcollect record: note' "$FG_TMP/$name.err" | head -n 12 >&2 || true
	sleep 0.3
}

# ev_window NAME: "START END" in CLOCK_MONOTONIC ns: the window the recording NAME covered.
ev_window() {
	cat "$FG_TMP/$1.win"
}

# ev_truth LOG PREFIX START END KEY: the increase of counter KEY over [START, END] (ns), each end
# interpolated linearly between the complete truth lines around it. Fails when the log does not
# cover the window.
ev_truth() {
	local v
	v=$(P="$2" S="$3" E="$4" K="$5" awk '
	function at(t,   i) {
		if (t < ts[1] || t > ts[n]) return "none"
		for (i = 2; i <= n; i++)
			if (ts[i] >= t)
				return val[i - 1] + (val[i] - val[i - 1]) * (t - ts[i - 1]) / (ts[i] - ts[i - 1])
	}
	BEGIN { p = ENVIRON["P"]; k = ENVIRON["K"] }
	$1 == p && $NF == "end" {
		for (i = 3; i < NF; i += 2)
			if ($i == k) { n++; ts[n] = $2 + 0; val[n] = $(i + 1) + 0 }
	}
	END {
		if (n < 2) { print "none"; exit }
		a = at(ENVIRON["S"] + 0); b = at(ENVIRON["E"] + 0)
		if (a == "none" || b == "none") print "none"; else printf "%.0f\n", b - a
	}' "$1")
	[[ $v != none ]] || fg_fail "$cfg: the truth ($2 $5) in $1 does not cover the window $3..$4"
	echo "$v"
}

# ev_sum FILE THREAD [REGEX [LEAF]]: the weight of FILE's stacks (folded) rooted at THREAD (any
# thread: "*"), whose stack matches the extended REGEX and whose leaf frame is LEAF (the class;
# a "_[x]" mark after it allowed).
ev_sum() {
	T="$2" R="${3:-.}" L="${4:-}" awk '
	BEGIN { t = ENVIRON["T"]; r = ENVIRON["R"]; l = ENVIRON["L"] }
	{
		w = $NF; s = $0; sub(/ [0-9]+$/, "", s)
		n = split(s, f, ";"); leaf = f[n]; sub(/_\[[a-z0-9]+\]$/, "", leaf)
		if ((t == "*" || f[1] == t) && s ~ r && (l == "" || leaf == l)) c += w
	}
	END { printf "%.0f\n", c + 0 }' "$1"
}

# ev_need LABEL PART ALL PCT: PART >= PCT% of ALL (ALL > 0).
ev_need() {
	fg_log "$cfg $1: $2 of $3 ($(ev_pct "$2" "$3")%)"
	[[ $3 != 0 ]] || fg_fail "$cfg $1: nothing recorded"
	awk "BEGIN { exit !($2 * 100 >= $3 * $4) }" ||
		fg_fail "$cfg $1: $2 of $3 ($(ev_pct "$2" "$3")% < $4%)"
}

# ev_near LABEL GOT WANT PCT: GOT within PCT% of WANT (WANT > 0).
ev_near() {
	fg_log "$cfg $1: $2, truth $3 ($(ev_pct "$2" "$3")%)"
	[[ $3 != 0 ]] || fg_fail "$cfg $1: the truth is 0"
	awk "BEGIN { d = $2 - $3; if (d < 0) d = -d; exit !(d * 100 <= $3 * $4) }" ||
		fg_fail "$cfg $1: $2, truth $3 ($(ev_pct "$2" "$3")% of it, off by more than $4%)"
}

# ev_at_most LABEL GOT LIMIT: GOT <= LIMIT.
ev_at_most() {
	fg_log "$cfg $1: $2 (at most $3)"
	awk "BEGIN { exit !($2 <= $3) }" || fg_fail "$cfg $1: $2, more than $3"
}

# ev_pct A B: A as a percentage of B, one decimal.
ev_pct() {
	awk "BEGIN { printf \"%.1f\", $2 ? $1 * 100 / $2 : 0 }"
}

# ev_line FILE REGEX: the line number of the first line of the source FILE matching REGEX.
ev_line() {
	local n
	n=$(grep -nE -m 1 -- "$2" "$1" | cut -d: -f1)
	[[ -n $n ]] || fg_fail "no line of $1 matches /$2/"
	echo "$n"
}

# ev_pprof_types FILE: the sample types of the pprof profile FILE as `go tool pprof -raw` lists
# them ("alloc_objects/count alloc_space/bytes"), the default mark dropped.
ev_pprof_types() {
	command -v go >/dev/null || fg_missing_tool "go (golang-go), for go tool pprof"
	HOME=$FG_TMP GOCACHE=$FG_TMP/gocache GOFLAGS=-mod=mod GOTOOLCHAIN=local \
		go tool pprof -raw "$1" >"$1.raw" 2>"$1.rawerr" ||
		{ cat "$1.rawerr" >&2; fg_fail "$cfg: go tool pprof cannot read $1"; }
	grep -A1 '^Samples:' "$1.raw" | tail -n 1 | sed 's/\[dflt\]//g; s/  */ /g; s/^ //; s/ $//'
}
