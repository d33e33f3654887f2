#!/bin/bash
# SPDX-License-Identifier: MIT
#
# map_two_pid1 - two containers whose JVMs are both PID 1 inside (one in a
# Docker-like cgroup, one in a Kubernetes-like one), plus a third JVM that is a child of a
# PID-1 shell. Each gets its own map under its own host PID with only its own methods, and perf
# names >= 95% of each hot JVM's JIT frames.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init map_two_pid1
fg_require_built
fg_watch_start

fg_jvm_start alpha HotLoop 40
pa=$FG_HOSTPID
FG_CT_OPTS=(--cgroup kubepods)
fg_jvm_start beta InlineChain 40
pb=$FG_HOSTPID
FG_CT_OPTS=(--not-pid1)
fg_jvm_start gamma PrimeService --seconds 40
pc=$FG_HOSTPID
FG_CT_OPTS=()

for p in "$pa" "$pb"; do
	[[ $(awk '/^NSpid:/ {print $NF}' "/proc/$p/status") == 1 ]] || fg_fail "host pid $p is not PID 1 in its namespace"
done
[[ $(awk '/^NSpid:/ {print $NF}' "/proc/$pc/status") != 1 ]] || fg_fail "--not-pid1 JVM $pc is PID 1"
[[ $pa != "$pb" ]] || fg_fail "both containers got host pid $pa"
fg_wait_log alpha 20 'HotLoop ready'
fg_wait_log beta 20 'InlineChain ready'
fg_wait_log gamma 20 'PrimeService listening'

fg_wait 10 fg_map_ok "$pa" 'HotLoop::' || fg_fail "alpha (pid $pa): no map naming HotLoop:: ($(fg_map_lint "$(fg_map_path "$pa")"))"
fg_wait 10 fg_map_ok "$pb" 'InlineChain::' || fg_fail "beta (pid $pb): no map naming InlineChain:: ($(fg_map_lint "$(fg_map_path "$pb")"))"
fg_wait 10 fg_map_ok "$pc" '::' || fg_fail "gamma (pid $pc, not PID 1): no map ($(fg_map_lint "$(fg_map_path "$pc")"))"
! grep -q 'InlineChain::' "$(fg_map_path "$pa")" || fg_fail "alpha's map has beta's methods"
! grep -q 'HotLoop::' "$(fg_map_path "$pb")" || fg_fail "beta's map has alpha's methods"
! grep -qE 'HotLoop::|InlineChain::' "$(fg_map_path "$pc")" || fg_fail "gamma's map has another JVM's methods"
[[ ! -e /tmp/perf-1.map ]] || fg_fail "a map was written under the in-container pid 1"

for c in alpha beta gamma; do
	p=${FG_CT_HOSTPID[$c]}
	cid=$(fg_container_cid "$c")
	grep -E "(^|[^0-9])$p([^0-9]|$)" "$FG_WATCH_LOG" | grep -q "${cid:0:12}" ||
		fg_fail "the watch log has no line naming $c's host pid $p and container ${cid:0:12}"
done

fg_expect_jit_named "$pa" 3 "$FG_TMP/alpha" 'HotLoop::' 95
pct_a=$FG_JIT_PCT
fg_expect_jit_named "$pb" 3 "$FG_TMP/beta" 'InlineChain::' 95
fg_pass "3 JVMs (2 as PID 1): distinct maps, perf named $pct_a% and $FG_JIT_PCT% of JIT frames"
