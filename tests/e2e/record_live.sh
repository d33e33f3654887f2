#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_live.sh - live-heap (leak) profiles against known answers, on every JDK under
# /usr/lib/jvm, each JVM in a namespace container running LeakTruth (tests/java) with an 8 MB
# young generation: fg-leaker keeps a byte[4096] a millisecond (leak), fg-churn allocates
# 64 MB/s of byte[] garbage (churn) all along; the leak runs in a burst inside each recording,
# whose bytes the JVM counts (events_lib.sh). `record --event live --alloc-interval 16384 --alloc-budget 0`
# (about 1000 samples of the leak) around a 7 s burst:
#  - the leak's live bytes within 15% of what fg-leaker allocated in the burst (all of it is
#    kept; about 5 standard errors), >= 95% of them under LeakTruth::leak with byte[] as the leaf;
#  - the garbage mostly absent: fg-churn's live bytes under 5% of what it allocated in the burst
#    alone (a young collection every ~0.2 s frees it);
#  - pprof: sample types inuse_objects/count and inuse_space/bytes, LeakTruth::leak in it.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_live
fg_require_built
. "$(dirname "$0")/events_lib.sh"

fg_sock_dir
sock=$FG_SOCK_DIR/fgcollect.sock
noctl=$FG_TMP/no-daemon/ctl.sock # never another test's watch daemon
j='_\[[0ij]\]'                    # any Java frame's mark

for jdk in $(fg_jdks); do
	major=$(fg_jdk_major "$jdk")
	cfg="JDK $major"
	cur=live$major
	ev_ctl_dir
	FG_CT_OPTS=(--bind "$ctldir:/ctl:ro")
	FG_JVM_OPTS=(-Xmx512m -Xmn8m)
	FG_JDK=$jdk fg_jvm_start "$cur" LeakTruth 300 /ctl
	FG_JVM_OPTS=()
	FG_CT_OPTS=()
	fg_wait_log "$cur" 60 'LeakTruth ready'

	ev_record live "$FG_TMP/live.folded" leak 7000 --event live --alloc-interval 16384 --alloc-budget 0
	f=$FG_TMP/live.folded
	leak=$(ev_sum "$f" fg-leaker)
	ev_near "fg-leaker live bytes" "$leak" "$(ev_truth live fg-leaker)" 15
	ev_need "fg-leaker live bytes under LeakTruth::leak with byte[] as the leaf" \
		"$(ev_sum "$f" fg-leaker "LeakTruth::leak$j;[^;]*\$" 'byte[]')" "$leak" 95
	churn=$(ev_truth live fg-churn)
	ev_at_most "fg-churn live bytes (garbage), of $churn allocated" "$(ev_sum "$f" fg-churn)" $((churn / 20))

	ev_record pprof "$FG_TMP/live$major.pb.gz" leak 1000 --event live --alloc-interval 16384 --alloc-budget 0
	types=$(ev_pprof_types "$FG_TMP/live$major.pb.gz")
	fg_log "$cfg pprof sample types: $types"
	[[ $types == "inuse_objects/count inuse_space/bytes" ]] ||
		fg_fail "$cfg: the pprof sample types are '$types', not 'inuse_objects/count inuse_space/bytes'"
	grep -q 'LeakTruth::leak' "$FG_TMP/live$major.pb.gz.raw" ||
		fg_fail "$cfg: the pprof profile has no LeakTruth::leak"
	fg_container_stop "$cur" || true
done
fg_pass "live profiles hold the leak (and not the garbage) as the JVM counts it"
