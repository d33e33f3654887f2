#!/bin/bash
# SPDX-License-Identifier: MIT
#
# map_perf_names - a JVM in a namespace container (PID 1, uid 4242, own
# /tmp, JDK at /opt/jdk) with the agent; `fgcollect watch` on the host; stock
# `perf record -g -p HOSTPID` + `perf script` name >= 95% of the JIT frames of a hot loop.
# Runs once per JDK under /usr/lib/jvm. Also: the agent writes no map inside the container, the
# watch log names the JVM's host PID and container id, and the map outlives the JVM.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init map_perf_names
fg_require_built
fg_watch_start

n=0
for jdk in $(fg_jdks); do
	major=$(fg_jdk_major "$jdk")
	name=hot$major
	FG_JDK=$jdk fg_jvm_start "$name" HotLoop 30
	pid=$FG_HOSTPID
	map=$(fg_map_path "$pid")
	fg_wait_log "$name" 20 'HotLoop ready'
	fg_wait 10 fg_map_ok "$pid" 'HotLoop::' ||
		fg_fail "JDK $major: no well-formed $map naming HotLoop:: within 10 s ($(fg_map_lint "$map"))"
	[[ ! -e /proc/$pid/root/tmp/perf-1.map ]] || fg_fail "JDK $major: a map was written inside the container's /tmp"

	fg_expect_jit_named "$pid" 3 "$FG_TMP/perf$major" 'HotLoop::' 95
	fg_log "JDK $major: $FG_JIT_NAMED/$FG_JIT_FRAMES JIT frames named ($FG_JIT_PCT%), $(fg_map_lines "$pid") map entries"

	cid=$(fg_container_cid "$name")
	grep -E "(^|[^0-9])$pid([^0-9]|$)" "$FG_WATCH_LOG" | grep -q "${cid:0:12}" ||
		fg_fail "JDK $major: the watch log has no line naming host pid $pid and container ${cid:0:12}"

	fg_container_stop "$name" || true
	sleep 0.5
	fg_map_ok "$pid" 'HotLoop::' || fg_fail "JDK $major: $map vanished when the JVM exited (--keep-exited defaults to 1 h)"
	n=$((n + 1))
done
((n >= 1)) || fg_fail "no JDK found under /usr/lib/jvm"
fg_watch_stop_clean
fg_pass "$n JDK(s): perf named >= 95% of JIT frames"
