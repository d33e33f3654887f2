#!/bin/bash
# SPDX-License-Identifier: MIT
#
# faults_record.sh - `fgcollect record` against faults of what it reads:
#   1. a debuginfod server that accepts connections and never answers (DEBUGINFOD_URLS): the
#      recording is written all the same with what local files name, the summary counts the
#      lookups that timed out, and a server that never answered is not asked again (one
#      timeout, not one per library).
#   2. a process that exits during an off-CPU recording (--event offcpu): record ends when it
#      is gone, says so, writes what it recorded (the JVM's Java frames) and exits 0.
#   3. a container root whose debug file for a stripped binary is an absolute symlink to a file
#      that exists only on the host: that file's names never reach the profile (the same debug
#      file as a regular file in the container's root does name the frame: the control).
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init faults_record
fg_require_built

hang=
trap 'rc=$?; set +e; [[ -n $hang ]] && kill "$hang" 2>/dev/null; (exit $rc); fg_cleanup' EXIT
fg_sock_dir
sock=$FG_SOCK_DIR/fgcollect.sock

# ---- 1. a debuginfod that hangs ----------------------------------------------------------
python3 -c '
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
print(s.getsockname()[1], flush=True)
held = []
while True:
    c, _ = s.accept()
    held.append(c)  # never read, never answered
' >"$FG_TMP/hang.port" 2>"$FG_TMP/hang.err" &
hang=$!
fg_wait 5 test -s "$FG_TMP/hang.port" || fg_fail "the hanging server did not start: $(cat "$FG_TMP/hang.err")"
port=$(<"$FG_TMP/hang.port")
fg_jvm_start hot HotLoop 40
fg_wait_log hot 20 'HotLoop ready'
rc=0
DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$FG_TMP/dcache \
	"$FGCOLLECT" record --pid "$FG_HOSTPID" --duration 2 --socket "$sock" \
	--ctl "$FG_TMP/no-daemon/ctl.sock" -o "$FG_TMP/hang.folded" 2>"$FG_TMP/hang.rec.err" || rc=$?
cat "$FG_TMP/hang.rec.err" >&2
((rc == 0)) || fg_fail "record exited $rc with a hanging debuginfod"
grep -q 'HotLoop::' "$FG_TMP/hang.folded" || fg_fail "the recording has no HotLoop frames"
line=$(grep 'debuginfod: [0-9]* lookups' "$FG_TMP/hang.rec.err") || fg_fail "no debuginfod line in the summary"
lookups=$(sed -n 's/.*debuginfod: \([0-9]*\) lookups.*/\1/p' <<<"$line")
timeouts=$(sed -n 's/.* \([0-9]*\) timed out.*/\1/p' <<<"$line")
refused=$(sed -n "s/.* \([0-9]*\) over the limits.*/\1/p" <<<"$line")
((timeouts == 1 && lookups == 1)) ||
	fg_fail "want one lookup that timed out, then none: $line"
((refused >= 1)) || fg_fail "no later lookup skipped: the hanging server was not the only one asked? $line"
grep -q "debuginfod: http://127.0.0.1:$port did not answer within the lookup timeout: not asked again" "$FG_TMP/hang.rec.err" ||
	fg_fail "record did not say which server hangs"
fg_log "1. hanging debuginfod: $line"

# ---- 2. a process that exits during an off-CPU recording ---------------------------------
fg_container_stop hot 5 || true
FG_CT_OPTS=(--bind "$FG_TMP/disk:/disk")
mkdir -p "$FG_TMP/disk"
fg_jvm_start short OffCpuTruth 6 /disk
FG_CT_OPTS=()
fg_wait_log short 20 'ready'
rc=0
"$FGCOLLECT" record --pid "$FG_HOSTPID" --event offcpu --duration 60 --socket "$sock" \
	--ctl "$FG_TMP/no-daemon/ctl.sock" -o "$FG_TMP/off.folded" 2>"$FG_TMP/off.err" || rc=$?
cat "$FG_TMP/off.err" >&2
((rc == 0)) || fg_fail "record --event offcpu exited $rc when its JVM exited"
grep -q "PID $FG_HOSTPID exited" "$FG_TMP/off.err" || fg_fail "no note that the JVM exited"
grep -q 'OffCpuTruth' "$FG_TMP/off.folded" || fg_fail "the off-CPU recording has no OffCpuTruth frames"
fg_log "2. JVM exited during record --event offcpu: $(grep -c '' "$FG_TMP/off.folded") stacks written"

# ---- 3. a container's absolute symlink to a host-only file -------------------------------
# A stripped binary (its local function only in its debug file), a debug tree for it bound over
# the container's /usr/lib/debug/.build-id, and a host-only file under $FG_TMP (the container's
# /tmp is its own) that names the function HOST_SECRET.
app=$FG_TMP/app
mkdir -p "$app" "$FG_TMP/dbg" "$FG_TMP/hostonly"
cat >"$app/spin.c" <<'C'
#include <stdint.h>
static volatile uint64_t sink;
static void __attribute__((noinline)) spin_local(void)
{
	for (uint64_t i = 0; i < 1000000; i++)
		sink += i * i;
}
int main(void)
{
	for (;;)
		spin_local();
}
C
gcc -O1 -g -fno-omit-frame-pointer -Wl,--build-id=sha1 -o "$app/spin.full" "$app/spin.c" ||
	fg_fail "cannot build the test binary"
objcopy --only-keep-debug "$app/spin.full" "$FG_TMP/spin.debug"
objcopy --redefine-sym spin_local=HOST_SECRET "$FG_TMP/spin.debug" "$FG_TMP/hostonly/secret.debug"
strip --strip-all -o "$app/spin" "$app/spin.full"
bid=$(readelf -n "$app/spin" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
[[ ${#bid} -ge 4 ]] || fg_fail "no build-id in the test binary"
mkdir -p "$FG_TMP/dbg/${bid:0:2}"
dbgfile=$FG_TMP/dbg/${bid:0:2}/${bid:2}.debug
spin_record() { # NAME: record the spinning binary in a container, folded into $FG_TMP/NAME.folded
	FG_CT_OPTS=(--app "$app" --bind "$FG_TMP/dbg:/usr/lib/debug/.build-id:ro")
	fg_container_start "$1" "${FG_CT_OPTS[@]}" -- /app/spin
	FG_CT_OPTS=()
	"$FGCOLLECT" record --pid "$FG_HOSTPID" --duration 2 --socket "$sock" \
		--ctl "$FG_TMP/no-daemon/ctl.sock" -o "$FG_TMP/$1.folded" 2>"$FG_TMP/$1.err" ||
		{ cat "$FG_TMP/$1.err" >&2; fg_fail "record of the $1 binary failed"; }
	fg_container_stop "$1" 5 || true
}
cp "$FG_TMP/spin.debug" "$dbgfile"
spin_record spinreg
grep -q 'spin_local' "$FG_TMP/spinreg.folded" ||
	fg_fail "control: the container's own debug file did not name spin_local: $(head -c 600 "$FG_TMP/spinreg.folded")"
rm -f "$dbgfile"
ln -s "$FG_TMP/hostonly/secret.debug" "$dbgfile"
spin_record spinlink
if grep -q 'HOST_SECRET' "$FG_TMP/spinlink.folded"; then
	fg_fail "a host-only file reached through the container's absolute symlink named frames"
fi
grep -q 'spin' "$FG_TMP/spinlink.folded" || fg_fail "the symlink recording has no frames of the binary"
fg_log "3. container symlink to a host-only debug file: not followed ($(grep -c '' "$FG_TMP/spinlink.folded") stacks, control named spin_local)"
fg_pass "hanging debuginfod asked once, recording written; off-CPU recording of an exiting JVM written; no host file through a container symlink"
