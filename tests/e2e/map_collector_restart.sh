#!/bin/bash
# SPDX-License-Identifier: MIT
#
# map_collector_restart - `fgcollect watch` is killed with SIGKILL (leaving
# its socket file behind) and restarted, twice. The JVM keeps running unharmed, the agent
# reconnects and replays, and the map (deleted while the collector was down, so it must be
# rewritten from the replay) is complete again within 2 s: >= 95% of the methods the JVM itself
# reports (jcmd Compiler.perfmap), and perf names >= 95% of JIT frames.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init map_collector_restart
fg_require_built

fg_watch_start
fg_jvm_start svc HotLoop 45
pid=$FG_HOSTPID
map=$(fg_map_path "$pid")
fg_wait_log svc 20 'HotLoop ready'
fg_wait 10 fg_map_ok "$pid" 'HotLoop::' || fg_fail "no map naming HotLoop:: for pid $pid within 10 s"

complete() {
	local cov
	fg_map_ok "$pid" 'HotLoop::' || return 1
	read -r cov _ <<<"$(fg_map_coverage "$FG_TMP/truth.map" "$map")"
	((cov >= 95))
}
worst=0
for round in 1 2; do
	fg_watch_stop KILL || true
	[[ -S $FG_SOCK ]] || fg_log "round $round: SIGKILL left no socket file (fine, but unusual)"
	rm -f "$map"
	sleep 1
	kill -0 "$pid" 2>/dev/null || fg_fail "round $round: the JVM died when the collector was killed"
	fg_jvm_truth "$pid" "$FG_TMP/truth.map" || fg_fail "jcmd Compiler.perfmap failed in the container"
	t0=$(fg_ms)
	fg_watch_start
	fg_wait 10 complete || fg_fail "round $round: map not complete 10 s after restart: coverage $(fg_map_coverage "$FG_TMP/truth.map" "$map") ($(fg_map_lint "$map"))"
	elapsed=$(($(fg_ms) - t0))
	fg_log "round $round: map complete $elapsed ms after the restart (coverage pct/hit/total: $(fg_map_coverage "$FG_TMP/truth.map" "$map"))"
	((elapsed > worst)) && worst=$elapsed
	((elapsed <= 2000)) || fg_fail "round $round: map took $elapsed ms (> 2000 ms) after the restart"
done

fg_expect_jit_named "$pid" 3 "$FG_TMP/perf" 'HotLoop::' 95
fg_pass "2 SIGKILL restarts: map complete within $worst ms, perf named $FG_JIT_PCT% of JIT frames"
