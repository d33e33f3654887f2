#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_sources.sh - `fgcollect record` gets code tables both ways:
#   1. no watch daemon: record listens on the agent socket, the agent redials and replays;
#      output .pb.gz, which Debian's `go tool pprof -top` must read and list Java names from;
#   2. a watch daemon owns the socket: record subscribes through its control channel (--ctl,
#      a 0700 directory outside the shared one); output .folded with the loop's methods;
#   3. a daemon owns the socket but record is given no reachable control channel: a clear
#      error naming the socket, exit 1.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_sources
fg_require_built
command -v go >/dev/null || fg_missing_tool "go (Debian package golang-go, for go tool pprof)"

fg_sock_dir
sock=$FG_SOCK_DIR/fgcollect.sock
fg_jvm_start hot HotLoop 50
fg_wait_log hot 20 'HotLoop ready'

# 1. Without a daemon, to pprof.
pb=$FG_TMP/hot.pb.gz
"$FGCOLLECT" record --pid "$FG_HOSTPID" --duration 3 --socket "$sock" -o "$pb" \
	2>"$FG_TMP/rec1.err" || { cat "$FG_TMP/rec1.err" >&2; fg_fail "record (no daemon) failed"; }
cat "$FG_TMP/rec1.err" >&2
grep -q "PID $FG_HOSTPID: agent connected" "$FG_TMP/rec1.err" ||
	fg_fail "record did not get the agent's connection on its own socket"
[[ -s $pb ]] || fg_fail "no $pb"
export HOME=$FG_TMP GOCACHE=$FG_TMP/gocache GOFLAGS=-mod=mod GOTOOLCHAIN=local
go tool pprof -top "$pb" >"$FG_TMP/pprof.top" 2>"$FG_TMP/pprof.err" ||
	{ cat "$FG_TMP/pprof.err" >&2; fg_fail "go tool pprof could not read $pb"; }
head -n 12 "$FG_TMP/pprof.top" >&2
grep -qE 'HotLoop::(run|step|mix)' "$FG_TMP/pprof.top" ||
	fg_fail "go tool pprof -top lists no HotLoop Java method"

# 2. With a daemon owning the socket, through its control channel.
# lib.sh gives every test daemon a private control socket ($FG_CTL, a 0700 directory).
fg_watch_start --dir "$FG_SOCK_DIR"
ctl=${FG_CTL:-}
[[ -n $ctl ]] || fg_fail "fg_watch_start set no FG_CTL: this fgcollect watch has no --ctl"
fg_wait 10 fg_map_ok "$FG_HOSTPID" 'HotLoop::' || fg_fail "the agent did not reconnect to the watch daemon"
fg_wait 5 test -S "$ctl" || fg_fail "watch created no control socket $ctl"
folded=$FG_TMP/hot.folded
"$FGCOLLECT" record --pid "$FG_HOSTPID" --duration 3 --socket "$sock" --ctl "$ctl" -o "$folded" \
	2>"$FG_TMP/rec2.err" || { cat "$FG_TMP/rec2.err" >&2; fg_fail "record (ctl) failed"; }
cat "$FG_TMP/rec2.err" >&2
grep -q "from the watch daemon" "$FG_TMP/rec2.err" || fg_fail "record did not use the control channel"
read -r main inloop < <(awk '
	{ n = $NF; stack = $0; sub(/ [0-9]+$/, "", stack) }
	stack ~ /;JavaMain;/ { m += n; if (stack ~ /HotLoop::(run|step|mix)_\[[ji]\]/) h += n }
	END { print m + 0, h + 0 }' "$folded")
fg_log "ctl: main thread $main samples, $inloop in the loop"
((main >= 100)) || fg_fail "only $main main-thread samples in 3 s"
((inloop * 100 >= main * 90)) || fg_fail "ctl: only $inloop of $main samples in the loop"

# 3. The daemon owns the socket and the control path given is wrong: refuse clearly.
rc=0
"$FGCOLLECT" record --pid "$FG_HOSTPID" --duration 1 --socket "$sock" --ctl "$FG_TMP/nope/nope.sock" \
	-o "$FG_TMP/x.folded" 2>"$FG_TMP/rec3.err" || rc=$?
cat "$FG_TMP/rec3.err" >&2
((rc == 1)) || fg_fail "record with an unreachable --ctl exited $rc, expected 1"
grep -q "nope.sock" "$FG_TMP/rec3.err" || fg_fail "the error does not name the control path"
fg_pass "no daemon -> pprof with Java names; daemon -> ctl with $((inloop * 100 / main))% in the loop"
