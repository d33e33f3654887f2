#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_lock.sh - lock profiles against known answers, on every JDK under /usr/lib/jvm, each
# JVM in a namespace container running LockTruth (tests/java): fg-holder holds the monitor of a
# LockTruth$Ledger 40 ms out of every 50 (holdLedger), fg-waiter1 and fg-waiter2 enter it over
# and over from enterLedger and time every entry themselves (System.nanoTime), during a burst
# inside each recording (events_lib.sh); fg-rl-holder and fg-rl-waiter do the same with a
# java.util.concurrent ReentrantLock (enterReentrant), which parks.
#  - `record --event lock` (threshold 0, every contended entry), a 5 s burst: each waiter's contended
#    time within 10% of its own count, >= 95% of it under enterLedger with LockTruth$Ledger as
#    the leaf; fg-rl-waiter's time is not there (under 1% of its own count: JVMTI's monitor
#    events do not see java.util.concurrent locks) ...
#  - ... and `record --event offcpu --switch-rate 0` (every switch-out) has it: fg-rl-waiter's
#    off-CPU time under enterReentrant within 15% of its own count;
#  - --lock-threshold 45000 (us; most waits here are 40 ms or less): the waits kept in the profile
#    are >= 45 ms each, those the summary counts as left out shorter, some are, and both
#    together are the waiters' own count within 10% (only the agent's own count of the short
#    waits, cumulative since it started, says what it left out: one such recording per JVM);
#  - pprof: sample types contentions/count and delay/nanoseconds, delay's sum the waiters' own
#    count (in ns) within 10%.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_lock
fg_require_built
. "$(dirname "$0")/events_lib.sh"

fg_sock_dir
sock=$FG_SOCK_DIR/fgcollect.sock
noctl=$FG_TMP/no-daemon/ctl.sock # never another test's watch daemon
j='_\[[0ij]\]'                    # any Java frame's mark

# truth_us NAME KEY: microseconds of KEY's waits in the burst of the recording NAME.
truth_us() {
	echo $(($(ev_truth "$1" "$2") / 1000))
}

for jdk in $(fg_jdks); do
	major=$(fg_jdk_major "$jdk")
	cfg="JDK $major"
	cur=lock$major
	ev_ctl_dir
	FG_CT_OPTS=(--bind "$ctldir:/ctl:ro")
	FG_JDK=$jdk fg_jvm_start "$cur" LockTruth 300 /ctl
	FG_CT_OPTS=()
	fg_wait_log "$cur" 60 'LockTruth ready'

	# ---- every contended monitor entry -------------------------------------------------------
	ev_record lock "$FG_TMP/lock.folded" lock 5000 --event lock
	f=$FG_TMP/lock.folded
	for w in fg-waiter1 fg-waiter2; do
		got=$(ev_sum "$f" "$w")
		ev_near "$w contended time, us" "$got" "$(truth_us lock "$w")" 10
		ev_need "$w time under LockTruth::enterLedger with LockTruth\$Ledger as the leaf" \
			"$(ev_sum "$f" "$w" "LockTruth::enterLedger$j;[^;]*\$" 'LockTruth$Ledger')" "$got" 95
	done
	rl=$(truth_us lock fg-rl-waiter)
	((rl > 2000000)) || fg_fail "$cfg: fg-rl-waiter waited only $rl us for its ReentrantLock"
	ev_at_most "fg-rl-waiter's ReentrantLock waits in the lock profile, us" \
		"$(ev_sum "$f" fg-rl-waiter)" $((rl / 100))

	# ---- the ReentrantLock's waits are off-CPU time ------------------------------------------
	ev_record offcpu "$FG_TMP/offcpu.folded" lock 3000 --event offcpu --switch-rate 0 --threads 'fg-rl-waiter'
	ev_near "fg-rl-waiter off-CPU under LockTruth::enterReentrant, us" \
		"$(ev_sum "$FG_TMP/offcpu.folded" fg-rl-waiter "LockTruth::enterReentrant$j;")" \
		"$(truth_us offcpu fg-rl-waiter)" 15

	# ---- a threshold among the waits ---------------------------------------------------------
	ev_record thr "$FG_TMP/thr.folded" lock 2000 --event lock --lock-threshold 45000
	e=$FG_TMP/thr.err
	kept=$(sed -n 's/.*: \([0-9]*\) contended monitor entries in .*/\1/p' "$e")
	read -r short short_ms < <(sed -n 's/.* left out \([0-9]*\) short lock waits (\([0-9.]*\) ms).*/\1 \2/p' "$e")
	[[ -n $kept && -n $short ]] ||
		fg_fail "$cfg: the summary does not count the waits kept and left out: $(grep -iE 'monitor|short' "$e" | head -n 2)"
	kept_us=$(ev_sum "$FG_TMP/thr.folded" '*')
	short_us=$(awk "BEGIN { printf \"%.0f\", $short_ms * 1000 }")
	fg_log "$cfg --lock-threshold 45000: $kept waits kept ($kept_us us), $short left out ($short_us us)"
	((short > 0)) || fg_fail "$cfg: --lock-threshold 45000 left no wait out"
	((kept_us >= kept * 45000)) || fg_fail "$cfg: --lock-threshold 45000 kept $kept waits of $kept_us us in all: some were shorter"
	((short_us <= short * 45000)) || fg_fail "$cfg: --lock-threshold 45000 left out $short waits of $short_us us in all: some were longer"
	ev_near "--lock-threshold 45000: the waits kept and left out, us" $((kept_us + short_us)) \
		$(($(truth_us thr fg-waiter1) + $(truth_us thr fg-waiter2))) 10

	# ---- pprof -------------------------------------------------------------------------------
	ev_record pprof "$FG_TMP/lock$major.pb.gz" lock 1000 --event lock
	types=$(ev_pprof_types "$FG_TMP/lock$major.pb.gz")
	fg_log "$cfg pprof sample types: $types"
	[[ $types == "contentions/count delay/nanoseconds" ]] ||
		fg_fail "$cfg: the pprof sample types are '$types', not 'contentions/count delay/nanoseconds'"
	grep -q 'LockTruth::enterLedger' "$FG_TMP/lock$major.pb.gz.raw" ||
		fg_fail "$cfg: the pprof profile has no LockTruth::enterLedger"
	ev_near "pprof: delay in all, ns" "$(ev_pprof_total "$FG_TMP/lock$major.pb.gz" delay)" \
		$(($(ev_truth pprof fg-waiter1) + $(ev_truth pprof fg-waiter2))) 10
	fg_container_stop "$cur" || true
done
fg_pass "lock profiles match the waiters' own counts; ReentrantLock waits are off-CPU time, not lock time"
