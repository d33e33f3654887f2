#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_targets.sh - `record --container ID` and `record --all` with two JVMs in two namespace
# containers (HotLoop and InlineChain, both PID 1 inside):
#   --container (a 12-digit prefix of the first's id) samples that container only, with the
#     process as the root frame ("java-HOSTPID") above the thread;
#   --all samples every JVM whose agent connects, both showing with Java names;
#   `top --container` and `top --all` find the same targets: the first container's JVM only,
#     then both.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_targets
fg_require_built

fg_sock_dir
sock=$FG_SOCK_DIR/fgcollect.sock
fg_jvm_start one HotLoop 50
pid1=$FG_HOSTPID
fg_jvm_start two InlineChain 50
pid2=$FG_HOSTPID
fg_wait_log one 25 'HotLoop ready'
fg_wait_log two 25 'InlineChain ready'
cid1=$(fg_container_cid one)

out=$FG_TMP/one.folded
"$FGCOLLECT" record --container "${cid1:0:12}" --duration 3 --socket "$sock" -o "$out" \
	2>"$FG_TMP/rec1.err" || { cat "$FG_TMP/rec1.err" >&2; fg_fail "record --container failed"; }
cat "$FG_TMP/rec1.err" >&2
grep -q "^java-$pid1;.*HotLoop::[a-z]*_\[[ji]\]" "$out" ||
	fg_fail "--container: no java-$pid1 root with HotLoop frames"
! grep -q "InlineChain::" "$out" || fg_fail "--container sampled the other container's JVM"
! grep -q "^java-$pid2;" "$out" || fg_fail "--container has a root frame of PID $pid2"

all=$FG_TMP/all.folded
"$FGCOLLECT" record --all --duration 4 --socket "$sock" -o "$all" 2>"$FG_TMP/rec2.err" ||
	{ cat "$FG_TMP/rec2.err" >&2; fg_fail "record --all failed"; }
cat "$FG_TMP/rec2.err" >&2
grep -q "^java-$pid1;.*HotLoop::[a-z]*_\[[ji]\]" "$all" || fg_fail "--all: no HotLoop frames under java-$pid1"
grep -q "^java-$pid2;.*InlineChain::[a-z]*_\[[ji]\]" "$all" || fg_fail "--all: no InlineChain frames under java-$pid2"
# top: the same targets, counted together in one table per interval.
"$FGCOLLECT" top --container "${cid1:0:12}" --count 2 --rows 200 --socket "$sock" \
	>"$FG_TMP/top1.out" 2>"$FG_TMP/top1.err" || { cat "$FG_TMP/top1.err" >&2; fg_fail "top --container failed"; }
[[ $(grep -Ec "^fgcollect top - container ${cid1:0:12} \\([0-9]+ process(es)?\\) - " "$FG_TMP/top1.out") == 2 ]] ||
	fg_fail "top --container: no 2 snapshots of container ${cid1:0:12}: $(head -3 "$FG_TMP/top1.out")"
grep -q 'HotLoop::[a-z]*_\[[ji]\]' "$FG_TMP/top1.out" || fg_fail "top --container names no HotLoop method: $(head -8 "$FG_TMP/top1.out")"
! grep -q 'InlineChain::' "$FG_TMP/top1.out" || fg_fail "top --container shows the other container's JVM"
"$FGCOLLECT" top --all --count 3 --rows 200 --socket "$sock" >"$FG_TMP/top2.out" 2>"$FG_TMP/top2.err" ||
	{ cat "$FG_TMP/top2.err" >&2; fg_fail "top --all failed"; }
grep -q '^fgcollect top - every JVM (2 processes) - ' "$FG_TMP/top2.out" ||
	fg_fail "top --all: no snapshot of 2 processes: $(grep '^fgcollect top' "$FG_TMP/top2.out")"
for m in HotLoop InlineChain; do
	grep -q "$m::[a-zA-Z]*_\[[ji]\]" "$FG_TMP/top2.out" || fg_fail "top --all names no $m method: $(head -8 "$FG_TMP/top2.out")"
done
fg_pass "--container sampled only its JVM; --all sampled both with Java names; top likewise"
