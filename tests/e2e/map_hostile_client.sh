#!/bin/bash
# SPDX-License-Identifier: MIT
#
# map_hostile_client - hostile peers on the agent socket while a real JVM
# still gets its map. Peers (tests/e2e/hostile_client.py): connect floods, disconnects in the
# middle of the SP handshake (the nng 1.5.2 listener wedge), the wrong SP protocol, length
# prefixes of 1 GiB and 2^40, random messages, 64 silent connections held open, and a valid
# hello forging another process's PID. Afterwards: the collector is alive with bounded memory,
# a JVM started last gets a complete map, perf names >= 95% of its JIT frames, and the forged
# code appears in no map but (at most) the forger's own.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init map_hostile_client
fg_require_built
hostile=$FG_SOURCE_DIR/tests/e2e/hostile_client.py

fg_watch_start
alive() {
	kill -0 "$FG_WATCH_PID" 2>/dev/null || fg_fail "fgcollect watch died after: $1"
}

# A victim JVM already connected before the attack, and one started after it.
fg_jvm_start before HotLoop 50
pb=$FG_HOSTPID
fg_wait 10 fg_map_ok "$pb" 'HotLoop::' || fg_fail "no map for the JVM started before the attack"

python3 "$hostile" "$FG_SOCK" idle 64 25 >"$FG_TMP/idle.out" 2>&1 &
idle=$!
sleep 0.5
for mode in "flood 300" "half 200" "wrongproto 20" "oversize" "garbage 300"; do
	# shellcheck disable=SC2086
	out=$(timeout 20 python3 "$hostile" "$FG_SOCK" $mode 2>&1) || fg_fail "hostile client '$mode' failed: $out"
	fg_log "$out"
	alive "$mode"
done
forged_name='Forged::evil'
out=$(timeout 20 python3 "$hostile" "$FG_SOCK" forged "$pb" "$forged_name" 2>&1) || fg_fail "forged client failed: $out"
fg_log "$out"
forger=$(sed -n 's/.* from pid \([0-9]*\),.*/\1/p' <<<"$out")
[[ -n $forger ]] && fg_clean_later "/tmp/perf-$forger.map"
alive "forged hello"
# A background stream of mid-handshake disconnects while the new JVM connects.
(for _ in 1 2 3 4 5; do python3 "$hostile" "$FG_SOCK" half 50 >/dev/null 2>&1 || true; sleep 0.5; done) &
churn=$!

t0=$(fg_ms)
fg_jvm_start after HotLoop 40
pa=$FG_HOSTPID
fg_wait_log after 20 'HotLoop ready'
fg_wait 15 fg_map_ok "$pa" 'HotLoop::' ||
	fg_fail "JVM started during the attack got no map within 15 s ($(fg_map_lint "$(fg_map_path "$pa")"))"
fg_log "map of the JVM started under attack ready $(($(fg_ms) - t0)) ms after its start"
wait "$churn" || true
alive "mid-handshake churn"

fg_expect_jit_named "$pa" 3 "$FG_TMP/after" 'HotLoop::' 95
pct_after=$FG_JIT_PCT
fg_wait 10 fg_map_ok "$pb" 'HotLoop::' || fg_fail "the JVM connected before the attack lost its map"
fg_expect_jit_named "$pb" 2 "$FG_TMP/before" 'HotLoop::' 95

for f in /tmp/perf-*.map; do
	[[ -e $f ]] || continue
	[[ $f == "/tmp/perf-$forger.map" ]] && continue
	! grep -qF "$forged_name" "$f" || fg_fail "forged code '$forged_name' appears in $f: a PID was taken from a message"
done
rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$FG_WATCH_PID/status")
fg_log "collector RSS after the attack: $((rss / 1024)) MiB"
((rss < 256 * 1024)) || fg_fail "collector RSS is $((rss / 1024)) MiB after the attack (>= 256 MiB)"
kill "$idle" 2>/dev/null || true
wait "$idle" 2>/dev/null || true
fg_watch_stop_clean
fg_pass "collector survived every hostile peer; maps ok, perf named $pct_after% / $FG_JIT_PCT% of JIT frames"
