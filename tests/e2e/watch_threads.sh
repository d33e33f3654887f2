#!/bin/bash
# SPDX-License-Identifier: MIT
#
# watch_threads - every thread of `fgcollect watch` busy at once (run with the ThreadSanitizer
# fgcollect, label e2e-tsan): the rolling-profile thread cutting a profile every second, the push
# queue's thread posting to a local ingest server that comes up late (failed attempts, backoff,
# then deliveries), the receiver's watchdog and nng callbacks under connection floods and
# hostile peers, the control channel serving a recording, and a JVM that exits while profiled.
# Nothing here depends on speed: each step waits for what it needs with a generous limit, and
# the checks are that everything was done (profiles written and pushed, a recording that names
# the JVM's code, a clean stop) and that no sanitizer report appears in any log (lib.sh).
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init watch_threads
fg_require_built
hostile=$FG_SOURCE_DIR/tests/e2e/hostile_client.py
port=$(fg_free_port)
recv=$FG_TMP/received
rpid=
stop_receiver() {
	[[ -n $rpid ]] || return 0
	kill "$rpid" 2>/dev/null || true
	wait "$rpid" 2>/dev/null || true
	rpid=
}
# (set +e: under errexit a failing kill or `(exit $rc)` would end the trap before fg_cleanup)
trap 'rc=$?; set +e; [[ -n $rpid ]] && kill "$rpid" 2>/dev/null; (exit $rc); fg_cleanup' EXIT

fg_jvm_start one HotLoop 300
p1=$FG_HOSTPID
fg_wait_log one 60 'HotLoop ready'
fg_watch_start --profile-every 1s --out "$FG_TMP/profiles" --keep-profiles 8 \
	--push "http://127.0.0.1:$port" --push-queue 4 --host-name test-node
fg_wait 30 fg_map_ok "$p1" 'HotLoop::' || fg_fail "no map for pid $p1"

# Hostile peers and connection floods while the roller samples and the pusher fails.
python3 "$hostile" "$FG_SOCK" all >"$FG_TMP/hostile.out" 2>&1 || fg_fail "hostile peers: $(tail -n 3 "$FG_TMP/hostile.out")"
python3 "$hostile" "$FG_SOCK" flood 50 >>"$FG_TMP/hostile.out" 2>&1 || fg_fail "flood: $(tail -n 3 "$FG_TMP/hostile.out")"

# A second JVM connects, is profiled, and exits.
fg_jvm_start two InlineChain 300
p2=$FG_HOSTPID
fg_wait_log two 60 'InlineChain ready'
fg_wait 30 fg_map_ok "$p2" 'InlineChain::' || fg_fail "no map for pid $p2"

# The ingest server comes up: the queue drains.
python3 "$FG_SOURCE_DIR/tests/e2e/pyroscope_receiver.py" "$port" "$recv" >"$FG_TMP/recv.log" 2>&1 &
rpid=$!
fg_wait 30 grep -q listening "$FG_TMP/recv.log" || fg_fail "the receiver did not start: $(cat "$FG_TMP/recv.log")"

# A recording through the control channel while the roller holds its own session.
"$FGCOLLECT" record --ctl "$FG_CTL" --all --duration 5 -o "$FG_TMP/rec.folded" 2>"$FG_TMP/record.err" ||
	fg_fail "record --all through the daemon failed: $(tail -n 3 "$FG_TMP/record.err")"
# How many samples land depends on the CPU the JVMs get beside a sanitizer build: the check is
# that the recording ran through the daemon to its end and that what it has is named Java code.
grep -q 'fgcollect record: wrote ' "$FG_TMP/record.err" || fg_fail "the recording did not finish"
[[ ! -s $FG_TMP/rec.folded ]] || grep -qE '::[A-Za-z_$<>0-9]+_\[[ji0]\]' "$FG_TMP/rec.folded" ||
	fg_fail "the recording's stacks name no Java frame: $(head -c 300 "$FG_TMP/rec.folded")"

fg_container_stop two || true
got() { find "$recv" -name '*.json' 2>/dev/null | wc -l; }
enough() { (($(got) >= 3)); }
fg_wait 90 enough || fg_fail "the receiver got only $(got) profiles"
[[ -s $FG_TMP/profiles/index.html ]] || fg_fail "no index.html in the profile directory"
fg_watch_stop_clean
stop_receiver
grep -E 'profiles: [0-9]+ intervals' "$FG_WATCH_LOG" >&2 || fg_fail "no profiles summary line"
grep 'push:' "$FG_WATCH_LOG" >&2 || fg_fail "no push summary line"
[[ ! -s $recv/errors.log ]] || { cat "$recv/errors.log" >&2; fg_fail "requests broke the ingest API"; }
fg_pass "profiles cut, written and pushed ($(got) received), hostile peers served, a recording through ctl, a JVM exit, a clean stop"
