#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_pid_socket.sh - `record --pid` finds a watch daemon that serves a non-default agent
# socket: with the daemon's --ctl given, and without it (the daemon on the default control
# socket). record asks the daemon first and listens only when none answers; when neither works
# its error names the control socket and the agent socket it tried.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_pid_socket
fg_require_built
command -v go >/dev/null || fg_fail "go (golang-go) is not installed: needed for go tool pprof"

DEFAULT_CTL=/run/fgcollect-ctl/ctl.sock

fg_watch_start # --socket $FG_TMP/sock/fgcollect.sock --ctl $FG_TMP/ctl/ctl.sock
fg_jvm_start hot HotLoop 60
pid=$FG_HOSTPID
fg_wait_log hot 25 'HotLoop ready'
fg_wait 10 fg_map_ok "$pid" 'HotLoop::' || fg_fail "the daemon never wrote a map for pid $pid"

# check_record NAME ARGS...: record --pid succeeds through the daemon, with Java names.
check_record() {
	local name=$1 out=$FG_TMP/$1.folded
	shift
	"$FGCOLLECT" record --pid "$pid" --duration 3 -o "$out" "$@" 2>"$FG_TMP/$name.err" ||
		{ cat "$FG_TMP/$name.err" >&2; fg_fail "$name: record --pid $pid $* failed"; }
	cat "$FG_TMP/$name.err" >&2
	grep -q 'code table from the watch daemon' "$FG_TMP/$name.err" ||
		fg_fail "$name: record did not use the daemon's code table"
	grep -q 'HotLoop::[a-z]*_\[[ji]\]' "$out" || fg_fail "$name: no named HotLoop frames in $out"
	# The agent's service label (no service= or OTEL_SERVICE_NAME: the main class) arrives.
	grep -q "PID $pid: code table from the watch daemon (service HotLoop," "$FG_TMP/$name.err" ||
		fg_fail "$name: the daemon did not pass on the service label HotLoop"
}

# 1. The daemon's control socket given explicitly, agent socket not given.
check_record with_ctl --ctl "$FG_CTL"
# The SVG's title carries the labels of rolling profiles: service, container, host PID, host.
"$FGCOLLECT" record --pid "$pid" --duration 1 --ctl "$FG_CTL" -o "$FG_TMP/t.svg" 2>"$FG_TMP/svg.err" ||
	{ cat "$FG_TMP/svg.err" >&2; fg_fail "record -o t.svg failed"; }
cid=$(fg_container_cid hot)
grep -qF "CPU: HotLoop | container ${cid:0:12} | PID $pid | host $(hostname)" "$FG_TMP/t.svg" ||
	fg_fail "the SVG title lacks the labels: $(grep -o 'id="title"[^<]*' "$FG_TMP/t.svg")"
# ... and so does a pprof file, as its comment
"$FGCOLLECT" record --pid "$pid" --duration 1 --ctl "$FG_CTL" -o "$FG_TMP/t.pb.gz" 2>"$FG_TMP/pb.err" ||
	{ cat "$FG_TMP/pb.err" >&2; fg_fail "record -o t.pb.gz failed"; }
export HOME=$FG_TMP GOCACHE=$FG_TMP/gocache GOFLAGS=-mod=mod GOTOOLCHAIN=local
go tool pprof -comments "$FG_TMP/t.pb.gz" 2>&1 | grep -qF "CPU: HotLoop | container ${cid:0:12} | PID $pid | host $(hostname)" ||
	fg_fail "the pprof file lacks the labels comment: $(go tool pprof -comments "$FG_TMP/t.pb.gz" 2>&1 | head -3)"

# 2. The daemon on the default control socket (shared with other runs on this machine: wait
#    until nobody else holds it).
fg_watch_stop
ctl_free() {
	! python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' \
		"$DEFAULT_CTL" 2>/dev/null
}
fg_wait 180 ctl_free || fg_fail "another watch daemon holds $DEFAULT_CTL for over 3 minutes"
"$FGCOLLECT" watch --socket "$FG_SOCK" >"$FG_TMP/watch2.out" 2>"$FG_TMP/watch2.log" &
FG_WATCH_PID=$!
FG_WATCH_LOG=$FG_TMP/watch2.log
fg_wait 5 test -S "$DEFAULT_CTL" || fg_fail "watch did not open $DEFAULT_CTL"
fg_wait 10 grep -q "connect: pid $pid" "$FG_WATCH_LOG" || fg_fail "the agent did not reconnect"
check_record without_ctl

# 3. No daemon, a control socket nobody serves, an agent socket in a missing directory: the
#    error names both and the exit status is 1.
fg_watch_stop_clean
rc=0
"$FGCOLLECT" record --pid "$pid" --duration 1 --ctl "$FG_TMP/ctl/none.sock" \
	--socket "$FG_TMP/missing/fgcollect.sock" -o "$FG_TMP/x.folded" 2>"$FG_TMP/none.err" || rc=$?
cat "$FG_TMP/none.err" >&2
((rc == 1)) || fg_fail "record with nothing to talk to exited $rc (expected 1)"
grep -qF "$FG_TMP/ctl/none.sock" "$FG_TMP/none.err" || fg_fail "the error does not name the control socket"
grep -qF "$FG_TMP/missing/fgcollect.sock" "$FG_TMP/none.err" || fg_fail "the error does not name the agent socket"
fg_pass "record --pid used the daemon on a non-default socket with and without --ctl"
