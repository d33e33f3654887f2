#!/bin/bash
# SPDX-License-Identifier: MIT
#
# map_keep_exited - when a JVM exits, `fgcollect watch --keep-exited D` keeps
# its /tmp/perf-<hostpid>.map (stock perf can still report on a recording of the dead JVM) for
# D, then removes it; and it never removes a file that is no longer the one it wrote.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init map_keep_exited
fg_require_built
fg_watch_start --keep-exited 3s

# 1. A JVM that exits: its map stays for 3 s, then goes.
fg_jvm_start short HotLoop 60
pid=$FG_HOSTPID
map=$(fg_map_path "$pid")
fg_wait_log short 20 'HotLoop ready'
fg_wait 10 fg_map_ok "$pid" 'HotLoop::' || fg_fail "no map naming HotLoop:: for $pid"
fg_container_stop short || true
t_exit=$(fg_ms)
sleep 1
fg_map_ok "$pid" 'HotLoop::' || fg_fail "$map vanished 1 s after the JVM exited (--keep-exited 3s)"
fg_wait 10 bash -c "[[ ! -e $map ]]" || fg_fail "$map still there 10 s after the JVM exited (--keep-exited 3s)"
gone_after=$(($(fg_ms) - t_exit))
((gone_after >= 2500)) || fg_fail "$map removed after $gone_after ms, before --keep-exited 3s"
fg_log "map of exited JVM $pid kept, then removed $gone_after ms after the exit"

# 2. A JVM whose map someone replaced after it exited: at expiry the file at the path is no
# longer the one watch wrote, so it stays.
fg_jvm_start other HotLoop 60
pid2=$FG_HOSTPID
map2=$(fg_map_path "$pid2")
fg_wait_log other 20 'HotLoop ready'
fg_wait 10 fg_map_ok "$pid2" 'HotLoop::' || fg_fail "no map naming HotLoop:: for $pid2"
fg_container_stop other || true
fg_wait 10 grep -qE "exit: pid $pid2 " "$FG_WATCH_LOG" || fg_fail "watch never noted that $pid2 exited"
echo "7f0000000000 10 not-ours" >"$map2.tmp" && mv -f "$map2.tmp" "$map2"
fg_wait 15 grep -qE "expire: pid $pid2:" "$FG_WATCH_LOG" ||
	fg_fail "watch never expired $pid2 (--keep-exited 3s)"
fg_watch_stop_clean # after this no removal can still be under way
[[ -f $map2 ]] && grep -q not-ours "$map2" || fg_fail "watch removed $map2 although it was no longer its file"
rm -f "$map2"
fg_pass "exited JVM's map kept for --keep-exited, then removed; a foreign file at the path left alone"
