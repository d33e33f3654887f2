# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# events_lib.sh - what the allocation, live and lock tests (record_alloc.sh, record_live.sh,
# record_lock.sh) share: recordings around a burst of their workloads' work (tests/java:
# AllocTruth, LeakTruth, LockTruth), the workloads' own count of the burst, sums of folded
# profiles, and the checks. Sourced after tests/harness/lib.sh and fg_init; uses $cfg (the
# configuration's label, e.g. "JDK 17") in its messages.
#
# The workloads (tests/java/Burst.java) work only during bursts a test asks for by writing
# "N MS" to the file burst of a directory the container sees at /ctl; for each they print the
# JVM's own counts of exactly that burst, "PREFIX-burst N KEY VALUE ... end". A recording starts,
# its agent connects and turns its events on, then the test asks for a burst that ends well
# before the recording does: the profile must hold all of the burst, whenever the events turned
# on and however loaded the machine.
#
# Set before use: $sock (the agent socket record listens on), $noctl (a control socket nobody
# serves), $cur (the container's name), $ctldir (the directory the container sees at /ctl).

EV_BURSTS=0

# ev_ctl_dir: an empty directory for the bursts' requests (a workload started with a request
# already there would run it at once), for FG_CT_OPTS=(--bind "$ctldir:/ctl:ro").
ev_ctl_dir() {
	ctldir=$FG_TMP/ctl-bursts
	mkdir -p "$ctldir"
	chmod 0755 "$ctldir"
	rm -f "$ctldir/burst"
}

# ev_burst MS: ask the workload for a burst of MS milliseconds; its number in EV_BURST (the
# workload's lines PREFIX-burst EV_BURST ...).
ev_burst() {
	EV_BURSTS=$((EV_BURSTS + 1))
	EV_BURST=$EV_BURSTS
	echo "$EV_BURST $1" >"$ctldir/burst.tmp"
	mv -f "$ctldir/burst.tmp" "$ctldir/burst"
}

# ev_record NAME OUT PREFIX MS [OPTION...]: `fgcollect record --pid $FG_HOSTPID` on the agent
# socket $sock (no daemon) into OUT, its stderr in $FG_TMP/NAME.err; once its agent has
# connected (and 1 s more for the events to turn on), a burst of MS milliseconds, whose line
# goes to $FG_TMP/NAME.burst; 0.5 s after the burst, Ctrl-C (SIGINT) ends the recording, which
# writes OUT. Fails unless the burst ended while the recording still ran. With EV_STALL="MS..."
# the recording is stopped (SIGSTOP) during the burst for each MS milliseconds in turn, 1 s
# apart, as a host too loaded to run it would.
ev_record() {
	local name=$1 out=$2 prefix=$3 ms=$4 rpid t0 rc=0 log=${FG_CT_LOG[$cur]} spid=
	shift 4
	EV_LAST=$name
	t0=$(fg_ms)
	"$FGCOLLECT" record --pid "$FG_HOSTPID" --socket "$sock" --ctl "$noctl" \
		--duration $((ms / 1000 + 30)) -o "$out" "$@" 2>"$FG_TMP/$name.err" &
	rpid=$!
	fg_wait 10 grep -q 'agent connected' "$FG_TMP/$name.err" || {
		kill "$rpid" 2>/dev/null || true
		wait "$rpid" || true
		fg_fail "$cfg $name: the agent did not connect to record within 10 s"
	}
	fg_log "$cfg $name: the agent connected $(($(fg_ms) - t0)) ms after record started"
	sleep 1
	ev_burst "$ms"
	if [[ -n ${EV_STALL:-} ]]; then
		(for st in $EV_STALL; do
			sleep 1
			kill -STOP "$rpid"
			sleep "$(awk "BEGIN { print $st / 1000 }")"
			kill -CONT "$rpid"
		done) &
		spid=$!
	fi
	fg_wait $((ms / 1000 + 10)) grep -qE "^$prefix-burst $EV_BURST .* end\$" "$log" ||
		fg_fail "$cfg $name: burst $EV_BURST did not end within $((ms / 1000 + 10)) s"
	kill -0 "$rpid" 2>/dev/null ||
		fg_fail "$cfg $name: the recording ended before burst $EV_BURST did ($(($(fg_ms) - t0)) ms after it started)"
	grep -E "^$prefix-burst $EV_BURST .* end\$" "$log" >"$FG_TMP/$name.burst"
	[[ -z $spid ]] || wait "$spid" || fg_fail "$cfg $name: the recording could not be stopped"
	sleep 0.5 # the burst's last events on their way
	kill -INT "$rpid"
	wait "$rpid" || rc=$?
	((rc == 0)) || fg_fail "$cfg $name: fgcollect record $* failed ($rc)"
	fg_log "$cfg $name: record took $(($(fg_ms) - t0)) ms"
}

# On a failure: what the last recording said (its summary), the workload's line of its burst.
ev_on_fail() {
	[[ -n ${EV_LAST:-} && -s $FG_TMP/$EV_LAST.err ]] || return 0
	echo "--- fgcollect record ($cfg $EV_LAST) said:"
	grep -v '^fgcollect record: note' "$FG_TMP/$EV_LAST.err" | head -n 14
	[[ ! -s $FG_TMP/$EV_LAST.burst ]] || echo "--- its burst: $(cat "$FG_TMP/$EV_LAST.burst")"
}
FG_ON_FAIL=ev_on_fail

# ev_truth NAME KEY: the value of KEY in the burst of the recording NAME.
ev_truth() {
	local v
	v=$(K="$2" awk '{ for (i = 3; i < NF; i += 2) if ($i == ENVIRON["K"]) print $(i + 1) }' "$FG_TMP/$1.burst")
	[[ -n $v ]] || fg_fail "$cfg $1: no $2 in the burst's line: $(cat "$FG_TMP/$1.burst")"
	echo "$v"
}

# ev_mono_ns: CLOCK_MONOTONIC now, in nanoseconds (the clock of System.nanoTime on Linux).
ev_mono_ns() {
	python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))'
}

# ev_interp LOG PREFIX START END KEY: the increase of counter KEY over [START, END] (ns) from
# the lines "PREFIX NANOTIME KEY VALUE ... end" a workload prints every 100 ms (System.nanoTime),
# each end interpolated linearly between the lines around it. Fails when the log does not cover
# the window.
ev_interp() {
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
	[[ $v != none ]] || fg_fail "$cfg: the counts ($2 $5) in $1 do not cover the window $3..$4"
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

# ev_pprof_types FILE: the sample types of the pprof profile FILE ("alloc_objects/count
# alloc_space/bytes"); FILE.raw gets its function names, one a line, then "total TYPE SUM" per
# sample type. Read here (a gzipped protobuf, the fields profile.proto numbers) rather than by
# `go tool pprof`, whose first run in a fresh cache costs about 10 s.
ev_pprof_types() {
	python3 - "$1" >"$1.raw" 2>"$1.rawerr" <<'PY' || { cat "$1.rawerr" >&2; fg_fail "$cfg: cannot read the pprof profile $1"; }
import gzip, sys

def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v, i

def fields(b):
    i = 0
    while i < len(b):
        k, i = varint(b, i)
        if k & 7 == 0:
            v, i = varint(b, i)
        elif k & 7 == 2:
            n, i = varint(b, i); v = b[i:i + n]; i += n
        elif k & 7 == 1:
            v = b[i:i + 8]; i += 8
        elif k & 7 == 5:
            v = b[i:i + 4]; i += 4
        else:
            sys.exit("bad wire type %d" % (k & 7))
        yield k >> 3, k & 7, v

def ints(wt, v):  # a repeated int64, packed or not
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i); out.append(x)
    return out

p = gzip.open(sys.argv[1]).read()
strs, types, funcs, sums = [], [], [], []
for f, wt, v in fields(p):
    if f == 6:
        strs.append(v.decode())
    elif f == 1:
        t = dict((g, x) for g, _, x in fields(v)); types.append((t.get(1, 0), t.get(2, 0)))
    elif f == 5:
        funcs.append(dict((g, x) for g, _, x in fields(v)).get(2, 0))
    elif f == 2:
        vals = []
        for g, w, x in fields(v):
            if g == 2:
                vals += ints(w, x)
        sums = [a + b for a, b in zip(sums, vals)] if sums else vals
print(" ".join("%s/%s" % (strs[t], strs[u]) for t, u in types))
for n in funcs:
    print(strs[n])
for (t, u), n in zip(types, sums):
    print("total %s %d" % (strs[t], n))
PY
	head -n 1 "$1.raw"
}

# ev_pprof_total FILE TYPE: the sum of sample type TYPE's values in the pprof profile FILE (read
# by ev_pprof_types first).
ev_pprof_total() {
	local v
	v=$(T="$2" awk '$1 == "total" && $2 == ENVIRON["T"] { print $3 }' "$1.raw")
	[[ -n $v ]] || fg_fail "$cfg: the pprof profile $1 has no sample type $2"
	echo "$v"
}
