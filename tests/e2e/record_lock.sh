#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_lock.sh - lock profiles against known answers, on every JDK under /usr/lib/jvm, each
# JVM in a namespace container running LockTruth (tests/java): fg-holder holds the monitor of a
# LockTruth$Ledger 40 ms out of every 50 (holdLedger), fg-waiter1 and fg-waiter2 enter it over
# and over from enterLedger and time every entry themselves (System.nanoTime, taken over exactly
# each recording's window: events_lib.sh); fg-rl-holder and fg-rl-waiter do the same with a
# java.util.concurrent ReentrantLock (enterReentrant), which parks.
#  - `record --event lock` (threshold 0, every contended entry), 6 s: each waiter's contended
#    time within 10% of its own count, >= 95% of it under enterLedger with LockTruth$Ledger as
#    the leaf; fg-rl-waiter's time is not there (under 1% of its own count: JVMTI's monitor
#    events do not see java.util.concurrent locks) ...
#  - ... and `record --event offcpu --switch-rate 0` (every switch-out) has it: fg-rl-waiter's
#    off-CPU time under enterReentrant within 15% of its own count;
#  - --lock-threshold 45000 (us; every wait here is about 40 ms or less): the waiters' time is
#    left out (under 5% of their count) and the summary counts the short waits;
#  - pprof: sample types contentions/count and delay/nanoseconds.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_lock
fg_require_built
. "$(dirname "$0")/events_lib.sh"

FG_SOCK_DIR=$FG_TMP/sock
mkdir -p "$FG_SOCK_DIR"
chmod 0755 "$FG_SOCK_DIR"
sock=$FG_SOCK_DIR/fgcollect.sock
noctl=$FG_TMP/no-daemon/ctl.sock # never another test's watch daemon
j='_\[[0ij]\]'                    # any Java frame's mark

# truth_us NAME KEY: microseconds KEY's counter grew over the recording NAME's window.
truth_us() {
	local s0 s1
	read -r s0 s1 < <(ev_window "$1")
	echo $(($(ev_truth "${FG_CT_LOG[$cur]}" lock-truth "$s0" "$s1" "$2") / 1000))
}

for jdk in $(fg_jdks); do
	major=$(fg_jdk_major "$jdk")
	cfg="JDK $major"
	cur=lock$major
	FG_JDK=$jdk fg_jvm_start "$cur" LockTruth 120
	fg_wait_log "$cur" 60 'LockTruth ready'

	# ---- every contended monitor entry -------------------------------------------------------
	D=6
	ev_record lock "$FG_TMP/lock.folded" --event lock
	f=$FG_TMP/lock.folded
	for w in fg-waiter1 fg-waiter2; do
		got=$(ev_sum "$f" "$w")
		ev_near "$w contended time, us" "$got" "$(truth_us lock "$w")" 10
		ev_need "$w time under LockTruth::enterLedger with LockTruth\$Ledger as the leaf" \
			"$(ev_sum "$f" "$w" "LockTruth::enterLedger$j;[^;]*\$" 'LockTruth$Ledger')" "$got" 95
	done
	rl=$(truth_us lock fg-rl-waiter)
	((rl > 1000000)) || fg_fail "$cfg: fg-rl-waiter waited only $rl us for its ReentrantLock"
	ev_at_most "fg-rl-waiter's ReentrantLock waits in the lock profile, us" \
		"$(ev_sum "$f" fg-rl-waiter)" $((rl / 100))

	# ---- the ReentrantLock's waits are off-CPU time ------------------------------------------
	D=4
	ev_record offcpu "$FG_TMP/offcpu.folded" --event offcpu --switch-rate 0 --threads 'fg-rl-waiter'
	ev_near "fg-rl-waiter off-CPU under LockTruth::enterReentrant, us" \
		"$(ev_sum "$FG_TMP/offcpu.folded" fg-rl-waiter "LockTruth::enterReentrant$j;")" \
		"$(truth_us offcpu fg-rl-waiter)" 15

	# ---- a threshold above every wait --------------------------------------------------------
	D=3
	ev_record thr "$FG_TMP/thr.folded" --event lock --lock-threshold 45000
	for w in fg-waiter1 fg-waiter2; do
		ev_at_most "--lock-threshold 45000: $w time, us" "$(ev_sum "$FG_TMP/thr.folded" "$w")" \
			$(($(truth_us thr "$w") / 20))
	done
	grep -iE 'lock' "$FG_TMP/thr.err" | grep -qE '[1-9][0-9]* .*(short|below|under|threshold)' ||
		fg_fail "$cfg: the summary does not count the waits under the threshold: $(grep -i lock "$FG_TMP/thr.err" | head -n 3)"

	# ---- pprof -------------------------------------------------------------------------------
	D=2
	ev_record pprof "$FG_TMP/lock$major.pb.gz" --event lock
	types=$(ev_pprof_types "$FG_TMP/lock$major.pb.gz")
	fg_log "$cfg pprof sample types: $types"
	[[ $types == "contentions/count delay/nanoseconds" ]] ||
		fg_fail "$cfg: the pprof sample types are '$types', not 'contentions/count delay/nanoseconds'"
	grep -q 'LockTruth::enterLedger' "$FG_TMP/lock$major.pb.gz.raw" ||
		fg_fail "$cfg: the pprof profile has no LockTruth::enterLedger"
	fg_container_stop "$cur" || true
done
fg_pass "lock profiles match the waiters' own counts; ReentrantLock waits are off-CPU time, not lock time"
