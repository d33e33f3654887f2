#!/bin/bash
# SPDX-License-Identifier: MIT
#
# watch_push.sh - `watch --push` against a receiver that is down, then comes back. A protocol
# test: no Pyroscope server can be installed here, so tests/e2e/pyroscope_receiver.py stands
# in, checking every request against Pyroscope's documented ingest API and saving the bodies.
#   - while the receiver is down (7 s of 1 s profiles), the queue keeps at most --push-queue 3
#     (+1 in flight) profiles: the rest are dropped and counted, memory does not grow;
#   - once it is up, the queued profiles arrive in one burst at the next retry, then the new ones,
#     in order; sent + dropped + unsent = profiles made;
#   - every request passed the API checks, carries the JVM's labels, and `go tool pprof` reads
#     its body and lists the JVM's Java methods;
#   - libcurl is opened only to push: without it (an empty file bound over it in a mount
#     namespace of its own) `watch --push` says why and exits 1.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init watch_push
fg_require_built
command -v go >/dev/null || fg_fail "go (golang-go) is not installed: needed for go tool pprof"

rpid=
# (set +e: under errexit a failing kill or `(exit $rc)` would end the trap before fg_cleanup)
trap 'rc=$?; set +e; [[ -n $rpid ]] && kill "$rpid" 2>/dev/null; (exit $rc); fg_cleanup' EXIT
port=$(fg_free_port)
recv=$FG_TMP/received

FG_CT_OPTS=(--env OTEL_SERVICE_NAME=checkout)
fg_jvm_start one HotLoop 90
pid=$FG_HOSTPID
FG_CT_OPTS=()
cid=$(fg_container_cid one)
fg_wait_log one 25 'HotLoop ready'
fg_watch_start --profile-every 1s --push "http://127.0.0.1:$port" --push-queue 3 --host-name test-node

# Down for 7 s: ~7 profiles, of which at most 4 can wait.
sleep 7
python3 "$FG_SOURCE_DIR/tests/e2e/pyroscope_receiver.py" "$port" "$recv" >"$FG_TMP/recv.log" 2>&1 &
rpid=$!
fg_wait 5 grep -q listening "$FG_TMP/recv.log" || fg_fail "the receiver did not start: $(cat "$FG_TMP/recv.log")"
up=$(sed -n 's/.* since \([0-9.]*\)$/\1/p' "$FG_TMP/recv.log")
fg_log "receiver up on port $port at $up"
# Backoff doubles from 1 s (1, 2, 4, 8): within 20 s the queue drains and new ones follow.
got() { find "$recv" -name '*.json' | wc -l; }
enough() { (($(got) >= 6)); }
fg_wait 25 enough || fg_fail "the receiver got only $(got) profiles after coming back"
fg_watch_stop_clean
kill "$rpid" 2>/dev/null || true
wait "$rpid" 2>/dev/null || true
rpid=
grep 'push:' "$FG_WATCH_LOG" >&2 || fg_fail "no push summary line"
[[ ! -s $recv/errors.log ]] || { cat "$recv/errors.log" >&2; fg_fail "requests broke the documented ingest API"; }
line=$(grep 'push:' "$FG_WATCH_LOG")
sent=$(sed -n 's/.*push: \([0-9]*\) profiles sent.*/\1/p' <<<"$line")
failed=$(sed -n 's/.* \([0-9]*\) failed attempts.*/\1/p' <<<"$line")
dropped=$(sed -n 's/.* \([0-9]*\) dropped with the queue full.*/\1/p' <<<"$line")
((sent == $(got))) || fg_fail "watch says $sent sent, the receiver has $(got)"
((failed >= 1)) || fg_fail "no failed attempt counted while the receiver was down"
((dropped >= 2)) || fg_fail "only $dropped profiles dropped: the queue (3) held more than 7 s of profiles?"
made=$(sed -n 's/.*profiles: [0-9]* intervals, \([0-9]*\) profiles.*/\1/p' "$FG_WATCH_LOG")
unsent=$(sed -n 's/.* \([0-9]*\) unsent at exit.*/\1/p' <<<"$line")
rejected=$(sed -n 's/.* \([0-9]*\) rejected by the server.*/\1/p' <<<"$line")
((sent + dropped + unsent + rejected == made)) ||
	fg_fail "$made profiles made but $sent sent + $dropped dropped + $unsent unsent + $rejected rejected"

# The first successful attempt delivers what waited in the queue: a burst of at most 4 (the cap
# of 3 plus the one in flight) profiles within a second, while profiles are cut 1 s apart; then
# they come in order (and each once: sent == received, checked above).
read -r early ordered < <(python3 - "$recv" <<'PY'
import json, sys
qs = []
n = 1
while True:
    try:
        qs.append(json.load(open("%s/%d.json" % (sys.argv[1], n))))
    except OSError:
        break
    n += 1
burst = sum(1 for q in qs if q["received"] - qs[0]["received"] < 0.5)
froms = [int(q["from"]) for q in qs]
print(burst, int(froms == sorted(froms)))  # whole seconds: two cuts may share one
PY
)
((early >= 3 && early <= 4)) || fg_fail "$early queued profiles arrived at once after the receiver came back (want 3..4)"
((ordered == 1)) || fg_fail "profiles arrived out of order"
# Labels and body of one of them.
q=$(cat "$recv/1.json")
for want in '"service_name": "checkout"' "\"container_id\": \"$cid\"" "\"host_pid\": \"$pid\"" \
	'"hostname": "test-node"' '"app": "checkout"' '"format": "pprof"' '"sampleRate": "99"'; do
	grep -qF "$want" <<<"$q" || fg_fail "request 1 lacks $want: $q"
done
export HOME=$FG_TMP GOCACHE=$FG_TMP/gocache GOFLAGS=-mod=mod GOTOOLCHAIN=local
last=$(got)
go tool pprof -top "$recv/$last.pb.gz" >"$FG_TMP/top.txt" 2>"$FG_TMP/pprof.err" ||
	{ cat "$FG_TMP/pprof.err" >&2; fg_fail "go tool pprof cannot read a pushed profile"; }
grep -q 'HotLoop::' "$FG_TMP/top.txt" || { head "$FG_TMP/top.txt" >&2; fg_fail "the pushed profile lists no HotLoop method"; }
# Without libcurl: the loader's words, and status 1.
lib=$(ldconfig -p | awk '$1 == "libcurl.so.4" && /x86-64/ && !n++ {print $NF}') # reads it all (pipefail)
[[ -n $lib ]] || fg_fail "ldconfig lists no libcurl.so.4"
: >"$FG_TMP/empty.so"
mkdir -p "$FG_TMP/nc/sock" "$FG_TMP/nc/ctl" && chmod 700 "$FG_TMP/nc/ctl"
rc=0
unshare -m sh -c 'mount --bind "$1" "$2" && exec timeout 10 "$3" watch --socket "$4/sock/fg.sock" --ctl "$4/ctl/ctl.sock" --profile-every 1s --push http://127.0.0.1:9' \
	_ "$FG_TMP/empty.so" "$(readlink -f "$lib")" "$FGCOLLECT" "$FG_TMP/nc" >"$FG_TMP/nc.log" 2>&1 || rc=$?
((rc == 1)) && grep -q "cannot push to http://127.0.0.1:9: .*libcurl.so.4" "$FG_TMP/nc.log" ||
	fg_fail "without libcurl, watch --push exited $rc and did not say why: $(head -3 "$FG_TMP/nc.log")"
fg_log "without libcurl: $(grep 'cannot push' "$FG_TMP/nc.log")"
fg_pass "receiver down then up: $sent sent ($early queued ones in a burst), $dropped dropped at the queue cap, $failed failed attempts, every request per the ingest API"
