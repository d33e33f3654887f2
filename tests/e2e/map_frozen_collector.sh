#!/bin/bash
# SPDX-License-Identifier: MIT
#
# map_frozen_collector - `fgcollect watch` is frozen (SIGSTOP, a hung daemon)
# in the middle of a JIT storm (in-process javac in a namespace container) for 5 s. The JVM must
# keep running at full speed meanwhile (it never waits for the collector), and once the daemon
# is resumed (SIGCONT) it must catch up completely: after the storm, the map holds the full live
# set (>= 98% of the methods the JVM itself reports via jcmd Compiler.perfmap), lints clean,
# and is complete within 5 s of the JVM's last compile.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init map_frozen_collector
fg_require_built

fg_watch_start
fg_jvm_start storm JavacWorkload 300 3 120
pid=$FG_HOSTPID
map=$(fg_map_path "$pid")
lines_at_least() { [[ -f $map ]] && (($(wc -l <"$map") >= $1)); }
fg_wait 30 lines_at_least 300 || fg_fail "the storm did not put 300 lines in $map within 30 s"
grep -q 'JavacWorkload total' "${FG_CT_LOG[storm]}" && fg_fail "the storm ended before the freeze: nothing to test"

jvm_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
c0=$(jvm_ticks)
t0=$(fg_ms)
kill -STOP "$FG_WATCH_PID"
fg_log "watch frozen with $(wc -l <"$map") map lines"
sleep 5
c1=$(jvm_ticks)
kill -CONT "$FG_WATCH_PID"
hz=$(getconf CLK_TCK)
cpu_ms=$(((c1 - c0) * 1000 / hz))
fg_log "during the 5 s freeze the JVM used $cpu_ms ms of CPU (it never waits for the collector)"
# javac keeps at least one CPU busy; a JVM blocked on the collector would use next to none.
((cpu_ms >= 1000)) || fg_fail "the JVM used only $cpu_ms ms of CPU in 5 s while the collector was frozen"
kill -0 "$pid" 2>/dev/null || fg_fail "the JVM died while the collector was frozen"

fg_wait_log storm 240 'JavacWorkload total'
t_done=$(fg_ms)
fg_jvm_truth "$pid" "$FG_TMP/truth.map" || fg_fail "jcmd Compiler.perfmap failed in the container"
complete() {
	local cov
	fg_map_ok "$pid" || return 1
	read -r cov _ <<<"$(fg_map_coverage "$FG_TMP/truth.map" "$map")"
	((cov >= 98))
}
fg_wait 5 complete ||
	fg_fail "map not complete 5 s after the storm: coverage $(fg_map_coverage "$FG_TMP/truth.map" "$map") (pct hit total) ($(fg_map_lint "$map"))"
fg_log "map complete $(($(fg_ms) - t_done)) ms after the storm: coverage $(fg_map_coverage "$FG_TMP/truth.map" "$map") (pct hit total), $(wc -l <"$map") lines"
connects=$(grep -cE "connect: pid $pid " "$FG_WATCH_LOG" || true)
fg_log "the agent connected $connects time(s) (2 or more: it gave up on the frozen connection and replayed)"
fg_container_stop storm || true
# watch must then exit on SIGTERM. After a freeze, nng 1.5.2 sometimes never returns from
# nng_close() (the agent's abandoned dials sat in the frozen listener's backlog); the maps are
# written by then and watch exits anyway after 2 s, saying so.
rc=0
fg_watch_stop TERM || rc=$?
((rc == 0 || rc == 143)) || fg_fail "watch did not exit on SIGTERM after the freeze (status $rc)"
# Reconnecting after the freeze, the agent starts every connection with its HELLO: a collector
# must never see records before it (they were counted as malformed and the JVM dropped).
bad=$(sed -nE 's/.* ([0-9]+) dropped for malformed input.*/\1/p' "$FG_WATCH_LOG" | tail -n 1)
[[ $bad == 0 ]] || fg_fail "watch dropped the agent's connections as malformed ${bad:-?} time(s): $(grep -m3 'malformed' "$FG_WATCH_LOG")"
if grep -q 'nng did not close its sockets' "$FG_WATCH_LOG"; then
	fg_log "note: nng_close() hung after the freeze; watch exited without it (status $rc)"
fi
fg_pass "JVM kept ${cpu_ms} ms of CPU in a 5 s freeze; map complete after the storm; watch exited on SIGTERM"
