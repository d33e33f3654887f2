#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_vthreads_scale.sh - virtual threads at scale, on Temurin 25: VThreadWall (tests/java)
# with about CHURN short-lived virtual threads a second besides its 8 handlers, named
# vt-worker-N (as many as the JVM keeps up with: tens of thousands in a recording of DC
# seconds, the workload's "vtc" count in its log says how many in all).
#  - A `record --event wall`: the summary counts the virtual threads seen in the recording,
#    at least 10 000 and at most those the workload started meanwhile and those alive at its
#    start (a thread started and not yet run is not seen: the JVM falls behind); their
#    unmounted time is under one root, "[virtual threads] vt-worker-N", no root names one of
#    them, and the graph has at most 40 roots. The time under [no stack sampled] is logged,
#    not bounded: at the full rate it is most of the unmounted time, about 90% (the
#    agent holds at most 1024 stacks of parked virtual threads at once, and thousands are
#    parked), and that time is said, not lost: the total stays the exact count.
#  - Then a `record --event wall --per-thread` of DP seconds: a root per virtual thread shown,
#    for at most 1024 of them (the summary says how many were given a root and counts the
#    samples and stacks of the ones past them, which go under "[virtual threads]
#    vt-worker-N"); the unnamed handlers' roots are their ids ("[virtual threads] #ID", at
#    VThreadWall::handle), none is under the scheduler's "[virtual threads]" but the time
#    counted with no stack. (--no-per-thread before it: the last given wins.)
#  - Then a `watch` daemon (the agent reconnects to it): its rolling wall profiles
#    (--profile-every) have the virtual threads' root.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_vthreads_scale
fg_require_built

fg_sock_dir
sock=$FG_SOCK_DIR/fgcollect.sock
noctl=$FG_TMP/no-daemon/ctl.sock # never another test's watch daemon
DC=4        # seconds of the recording
DP=2        # seconds of the --per-thread recording
CHURN=15000 # short-lived virtual threads a second
temurin=${FG_TEMURIN25:-/usr/lib/jvm/temurin-25-jdk-amd64}
[[ -x $temurin/bin/java ]] || fg_fail "no Temurin 25 at $temurin (scripts/install-deps.sh installs it)"

# vtw_at LOG: the last "vtw" line of LOG (the workload's cumulative counters).
vtw_at() {
	grep '^vtw ' "$1" | tail -1
}

# wprof_has: a rolling profile of the watch daemon has the virtual threads' root.
wprof_has() {
	grep -qs '^\[virtual threads\]' "$FG_TMP"/wprof/*.folded
}

# run_churn: the JVM started last, with CHURN short-lived named virtual threads a second.
run_churn() {
	local cfg=churn log=${FG_CT_LOG[$cur]} f=$FG_TMP/churn.folded c0 c1
	c0=$(vtw_at "$log" | awk '{ print $NF }')
	"$FGCOLLECT" record --pid "$FG_HOSTPID" --socket "$sock" --ctl "$noctl" --event wall \
		--duration "$DC" -o "$f" 2>"$FG_TMP/$cfg.err" ||
		{ cat "$FG_TMP/$cfg.err" >&2; fg_fail "$cfg: record failed"; }
	c1=$(vtw_at "$log" | awk '{ print $NF }')
	grep -E 'virtual threads|wall:' "$FG_TMP/$cfg.err" >&2
	local seen roots named nostack all
	seen=$(sed -n 's/.*virtual threads: PID [0-9]*: \([0-9]*\) seen, .*/\1/p' "$FG_TMP/$cfg.err")
	[[ -n $seen ]] || fg_fail "$cfg: the summary does not count the virtual threads"
	roots=$(cut -d';' -f1 "$f" | sort -u | wc -l)
	named=$(awk '/^\[virtual threads\] vt-worker-N;.*VThreadWall::churnWait_\[j\]/ { n += $NF } END { printf "%d", n }' "$f")
	# the unmounted time (the carriers' samples under the virtual threads' roots apart)
	nostack=$(awk '/^\[virtual threads\].*;\[no stack sampled\];/ { n += $NF } END { printf "%d", n }' "$f")
	all=$(awk '/^\[virtual threads\]/ && /;\[off-cpu: virtual thread unmounted\] [0-9]+$/ { n += $NF } END { printf "%d", n }' "$f")
	fg_log "$cfg: $seen virtual threads seen, $((c1 - c0)) started meanwhile; $roots roots;" \
		"$named us under [virtual threads] vt-worker-N at churnWait, $nostack us of $all with no stack"
	((c1 - c0 >= CHURN * DC / 4)) || fg_fail "$cfg: the workload started only $((c1 - c0)) virtual threads"
	# Seen: of those started in the window (not all run in it, the JVM falls behind), and those
	# alive at its start (at most 4096).
	((seen >= 10000 && seen <= c1 - c0 + 4096 + 8)) ||
		fg_fail "$cfg: $seen virtual threads seen, $((c1 - c0)) started"
	((roots <= 40)) || fg_fail "$cfg: $roots roots (the virtual threads are not grouped)"
	! cut -d';' -f1 "$f" | grep -qE 'vt-worker-[0-9]' || fg_fail "$cfg: a root names one virtual thread"
	((named > 0)) || fg_fail "$cfg: no time under [virtual threads] vt-worker-N at churnWait"
	((nostack <= all)) || fg_fail "$cfg: $nostack us with no stack, more than the $all us in all"
	# the graph holds the exact count: the summary's unmounted seconds, to 1%
	local exact
	exact=$(sed -n 's/.*virtual threads: \([0-9.]*\) s unmounted, counted at every mount.*/\1/p' "$FG_TMP/$cfg.err")
	[[ -n $exact ]] || fg_fail "$cfg: the summary gives no exact unmounted time"
	EXACT=$exact ALL=$all awk 'BEGIN { e = ENVIRON["EXACT"] * 1e6; a = ENVIRON["ALL"] + 0
		exit !(e > 0 && a >= e * 0.99 && a <= e * 1.01) }' ||
		fg_fail "$cfg: $all us under [virtual threads], the summary counted $exact s"
	fig_nostack=$((all ? nostack * 100 / all : 0))
	fg_log "$cfg: $fig_nostack% of the virtual threads' unmounted time under [no stack sampled]"
}

# run_split: the JVM started last, recorded --per-thread.
run_split() {
	local cfg=split f=$FG_TMP/split.folded
	"$FGCOLLECT" record --pid "$FG_HOSTPID" --socket "$sock" --ctl "$noctl" --event wall \
		--no-per-thread --per-thread --duration "$DP" -o "$f" 2>"$FG_TMP/$cfg.err" ||
		{ cat "$FG_TMP/$cfg.err" >&2; fg_fail "$cfg: record failed"; }
	grep -E 'virtual threads' "$FG_TMP/$cfg.err" >&2
	local given over own ids handlers grouped
	given=$(sed -n 's/.*virtual threads: \([0-9]*\) given a root of their own by --per-thread (at most 1024); \([0-9]*\) samples .*/\1/p' "$FG_TMP/$cfg.err")
	over=$(sed -n 's/.*virtual threads: \([0-9]*\) given a root of their own by --per-thread (at most 1024); \([0-9]*\) samples .*/\2/p' "$FG_TMP/$cfg.err")
	[[ -n $given && -n $over ]] || fg_fail "$cfg: the summary does not say how many virtual threads have a root"
	own=$(cut -d';' -f1 "$f" | sort -u | grep -cE '^\[virtual threads\] (vt-worker-[0-9]+|#[0-9]+)$' || true)
	ids=$(cut -d';' -f1 "$f" | sort -u | grep -cE '^\[virtual threads\] #[0-9]+$' || true)
	handlers=$(grep -E '^\[virtual threads\] #[0-9]+;' "$f" | grep -c 'VThreadWall::handle_\[j\]' || true)
	grouped=$(grep -cE '^\[virtual threads\] vt-worker-N;' "$f" || true)
	fg_log "$cfg: $given virtual threads with a root of their own, $over samples and stacks past them;" \
		"$own such roots in the graph, $ids by id ($handlers stacks of handlers), $grouped stacks under vt-worker-N"
	# each root of one virtual thread was given, within the cap; past it, under the pattern
	((given <= 1024 && own <= given && own >= 10)) ||
		fg_fail "$cfg: $own roots of single virtual threads, $given given"
	((given == 1024 || (over == 0 && grouped == 0))) ||
		fg_fail "$cfg: $over under their pattern's root with $given of 1024 given"
	((handlers > 0)) || fg_fail "$cfg: no unnamed handler under a root of its id"
	# (time counted with no stack names no thread: it alone stays under the scheduler's root)
	! grep -E '^\[virtual threads\];' "$f" | grep -qvF '[virtual threads];[no stack sampled];' ||
		fg_fail "$cfg: an unnamed virtual thread under the scheduler's root"
}

cur=t25churn
FG_JDK=$temurin
fg_jvm_start "$cur" VThreadWall 8 2 8 "$CHURN"
fg_wait_log "$cur" 60 ' vtc [0-9]+$'
run_churn
run_split
fg_watch_start --profile-every 2s --event wall --out "$FG_TMP/wprof" --host-name test-node
fg_wait 15 wprof_has || fg_fail "watch's rolling wall profiles have no virtual threads"
fg_watch_stop_clean
fg_container_stop "$cur" || true
fg_pass
