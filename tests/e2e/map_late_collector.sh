#!/bin/bash
# SPDX-License-Identifier: MIT
#
# map_late_collector - the JVM starts 5 s before the collector. The agent
# must neither block nor fail the JVM meanwhile, and once `fgcollect watch` starts, the agent's
# replay must make the map complete (>= 95% of the methods the JVM itself reports compiled, via
# jcmd Compiler.perfmap) within 2 s, and perf must name >= 95% of JIT frames.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init map_late_collector
fg_require_built

fg_sock_dir
t_jvm=$(fg_ms)
fg_jvm_start early HotLoop 40
pid=$FG_HOSTPID
map=$(fg_map_path "$pid")
fg_wait_log early 20 'HotLoop ready'
left=$((5000 - ($(fg_ms) - t_jvm)))
((left <= 0)) || sleep "$((left / 1000)).$(printf '%03d' $((left % 1000)))"
kill -0 "$pid" 2>/dev/null || fg_fail "the JVM died with no collector listening"
[[ ! -e $map ]] || fg_fail "$map exists before any collector ran"

fg_jvm_truth "$pid" "$FG_TMP/truth.map" || fg_fail "jcmd Compiler.perfmap failed in the container"
complete() {
	local cov
	fg_map_ok "$pid" 'HotLoop::' || return 1
	read -r cov _ <<<"$(fg_map_coverage "$FG_TMP/truth.map" "$map")"
	((cov >= 95))
}
t0=$(fg_ms)
fg_watch_start
fg_wait 10 complete || fg_fail "map of pid $pid not complete 10 s after the collector started: coverage $(fg_map_coverage "$FG_TMP/truth.map" "$map") ($(fg_map_lint "$map"))"
elapsed=$(($(fg_ms) - t0))
fg_log "map complete $elapsed ms after starting the collector: coverage $(fg_map_coverage "$FG_TMP/truth.map" "$map") (pct hit total)"
((elapsed <= 2000)) || fg_fail "map took $elapsed ms (> 2000 ms) to be complete after the collector started"

fg_expect_jit_named "$pid" 3 "$FG_TMP/perf" 'HotLoop::' 95
fg_pass "late collector: map complete in $elapsed ms, perf named $FG_JIT_PCT% of $FG_JIT_FRAMES JIT frames"
