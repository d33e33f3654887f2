#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_exit.sh - a JVM that exits during the recording: `record --duration 30` ends when the
# process is gone, still writes its output (an SVG here, with the Java names of what ran),
# exits 0, and says so on stderr. Ctrl-C (SIGINT) ends a recording early and still writes it.
# Also: an unknown output extension is a usage error (64) naming the file, and a PID that does
# not exist is a runtime failure (1) naming the PID.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_exit
fg_require_built

rc=0
"$FGCOLLECT" record --pid 1 -o "$FG_TMP/out.txt" 2>"$FG_TMP/usage.err" || rc=$?
((rc == 64)) || fg_fail "unknown extension: exit $rc, expected 64"
grep -q 'out.txt' "$FG_TMP/usage.err" || fg_fail "the usage error does not name the file"
rc=0
"$FGCOLLECT" record --pid 999999999 -d 1 -o "$FG_TMP/x.folded" 2>"$FG_TMP/nopid.err" || rc=$?
((rc == 64 || rc == 1)) || fg_fail "bad PID: exit $rc"
grep -q '999999999' "$FG_TMP/nopid.err" || fg_fail "the error does not name the PID"

fg_sock_dir
fg_jvm_start short HotLoop 6
fg_wait_log short 20 'HotLoop ready'
svg=$FG_TMP/short.svg
start=$(fg_ms)
rc=0
"$FGCOLLECT" record --pid "$FG_HOSTPID" --duration 30 --socket "$FG_SOCK_DIR/fgcollect.sock" -o "$svg" \
	2>"$FG_TMP/record.err" || rc=$?
took=$(($(fg_ms) - start))
cat "$FG_TMP/record.err" >&2
((rc == 0)) || fg_fail "record exited $rc when its JVM exited"
((took < 25000)) || fg_fail "record kept running ${took} ms after its only target exited"
grep -q "PID $FG_HOSTPID exited" "$FG_TMP/record.err" || fg_fail "no note that the JVM exited"
[[ -s $svg ]] || fg_fail "no SVG written"
grep -q '</svg>' "$svg" || fg_fail "$svg is not a complete SVG"
grep -q 'HotLoop::' "$svg" || fg_fail "the SVG has no HotLoop Java frame"
fg_container_wait short 10 || true

# SIGINT: a 30 s recording of a live JVM, interrupted 1 s after the JVM's agent connected to
# it (record notes the connection), still writes its output.
fg_jvm_start long HotLoop 40
fg_wait_log long 20 'HotLoop ready'
folded=$FG_TMP/int.folded
"$FGCOLLECT" record --pid "$FG_HOSTPID" --duration 30 --socket "$FG_SOCK_DIR/fgcollect.sock" \
	-o "$folded" 2>"$FG_TMP/int.err" &
rec=$!
fg_wait 20 grep -q "PID $FG_HOSTPID: agent connected" "$FG_TMP/int.err" || {
	kill -INT "$rec"
	wait "$rec" || true
	cat "$FG_TMP/int.err" >&2
	fg_fail "record never noted that the agent of $FG_HOSTPID connected"
}
sleep 1 # samples of the named code
kill -INT "$rec"
rc=0
wait "$rec" || rc=$?
cat "$FG_TMP/int.err" >&2
((rc == 0)) || fg_fail "record exited $rc after SIGINT"
grep -q 'interrupted' "$FG_TMP/int.err" || fg_fail "no note that the recording was interrupted"
grep -q 'HotLoop::' "$folded" || fg_fail "the interrupted recording wrote no HotLoop frames to $folded"

fg_pass "record ended ${took} ms after start, wrote an SVG with Java names, exit 0; SIGINT writes too"
