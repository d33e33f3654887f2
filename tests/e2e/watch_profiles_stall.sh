#!/bin/bash
# SPDX-License-Identifier: MIT
#
# watch_profiles_stall.sh - sampling never delays map upkeep: with `watch --profile-every`, the
# roller thread (fg-roller) is stopped for 15 s (ptrace on that one thread), and meanwhile a
# JVM started in a new container still gets its perf map within 10 s and the first JVM's map
# stays valid; once the roller runs again, profiles of both JVMs are written.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init watch_profiles_stall
fg_require_built

out=$FG_TMP/profiles
fg_jvm_start one HotLoop 90
p1=$FG_HOSTPID
fg_wait_log one 25 'HotLoop ready'
fg_watch_start --profile-every 1s --out "$out" --host-name test-node
fg_wait 10 fg_map_ok "$p1" 'HotLoop::' || fg_fail "no map for pid $p1"
# has_profile PATTERN: a profile SVG whose name matches exists in $out
has_profile() { [[ -n $(find "$out" -name "$1" -print -quit) ]]; }
fg_wait 10 has_profile "*_HotLoop_*_${p1}_*.svg" ||
	fg_fail "no profile of pid $p1 before the stall"

roller=
for t in /proc/"$FG_WATCH_PID"/task/*; do
	[[ $(cat "$t/comm" 2>/dev/null) == fg-roller ]] && roller=${t##*/}
done
[[ -n $roller ]] || fg_fail "no fg-roller thread in watch (pid $FG_WATCH_PID)"
python3 "$FG_SOURCE_DIR/tests/e2e/freeze_thread.py" "$roller" 15 >"$FG_TMP/freeze.out" 2>&1 &
fpid=$!
fg_wait 5 grep -q frozen "$FG_TMP/freeze.out" || fg_fail "could not stop thread $roller: $(cat "$FG_TMP/freeze.out")"
[[ $(awk '/^State:/ {print $2}' "/proc/$FG_WATCH_PID/task/$roller/status") == t ]] ||
	fg_fail "the roller thread is not stopped"
t0=$(fg_ms)
fg_jvm_start two InlineChain 60
p2=$FG_HOSTPID
fg_wait 10 fg_map_ok "$p2" 'InlineChain::' ||
	fg_fail "no map for pid $p2 within 10 s of its start while the roller was stopped"
dt=$(($(fg_ms) - t0))
[[ $(awk '/^State:/ {print $2}' "/proc/$FG_WATCH_PID/task/$roller/status") == t ]] ||
	fg_fail "the roller ran again before the check: the stall did not last"
fg_log "map of pid $p2 ready $dt ms after its container started, with the roller stopped"
fg_map_ok "$p1" 'HotLoop::' || fg_fail "the map of pid $p1 broke while the roller was stopped"
wait "$fpid" || fg_fail "releasing thread $roller failed: $(cat "$FG_TMP/freeze.out")"
fg_wait 15 has_profile "*_InlineChain_*_${p2}_*.svg" ||
	fg_fail "no profile of pid $p2 after the roller ran again"
fg_watch_stop_clean
fg_pass "map of a new JVM written in $dt ms while the roller thread was stopped; profiling resumed after"
