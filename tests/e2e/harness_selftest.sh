#!/bin/bash
# SPDX-License-Identifier: MIT
#
# harness_selftest - the namespace container is what the other end-to-end tests claim it is,
# and stock perf on the host cannot name JIT frames without a map (so the map tests cannot
# pass vacuously). No agent, no collector: a plain JVM with -XX:+PreserveFramePointer.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init harness_selftest

# A read-only shared volume with a listening unix socket: connecting must work through it.
fg_sock_dir
python3 - "$FG_SOCK_DIR/probe.sock" >"$FG_TMP/probe.out" 2>&1 <<'PY' &
import os, socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777)
s.listen(1)
s.settimeout(30)
c, _ = s.accept()
pid, uid, gid = struct.unpack("3i", c.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
print("peer", pid, uid, c.recv(64).decode())
PY
probe=$!
fg_wait 30 test -S "$FG_SOCK_DIR/probe.sock" || fg_fail "probe socket not created within 30 s"

FG_CT_OPTS=(--volume "$FG_SOCK_DIR:ro")
FG_NO_AGENT=1 fg_jvm_start plain HotLoop 90
pid=$FG_HOSTPID
fg_wait_log plain 15 'HotLoop ready'

# PID 1 inside, its own PID namespace, uid 4242 with no name.
nspid=$(awk '/^NSpid:/ {print $NF}' "/proc/$pid/status")
[[ $nspid == 1 ]] || fg_fail "JVM is pid $nspid in its namespace, expected 1"
[[ $(readlink "/proc/$pid/ns/pid") != $(readlink /proc/self/ns/pid) ]] || fg_fail "no own PID namespace"
for ns in mnt uts ipc net cgroup; do
	[[ $(readlink "/proc/$pid/ns/$ns") != $(readlink "/proc/self/ns/$ns") ]] || fg_fail "no own $ns namespace"
done
read -r _ ruid euid _ < <(grep '^Uid:' "/proc/$pid/status")
[[ $ruid == 4242 && $euid == 4242 ]] || fg_fail "JVM runs as uid $ruid/$euid, expected 4242"
! getent passwd 4242 >/dev/null || fg_fail "uid 4242 has a name on this host; the test needs a nameless uid"
grep -q 'HotLoop start 1$' "${FG_CT_LOG[plain]}" || fg_fail "the JVM does not see itself as pid 1"

# pivot_root: the host sees container paths that do not exist on the host.
grep -q ' /opt/jdk/lib/server/libjvm.so$' "/proc/$pid/maps" || fg_fail "maps do not show /opt/jdk/lib/server/libjvm.so"
[[ ! -e /opt/jdk ]] || fg_fail "/opt/jdk exists on the host; the test needs a path only the container has"
# The container's / is another directory than the host's, and since it was pivoted (not
# chroot'ed) the host reads its path as "/": only /proc/PID/root reaches the files in it.
[[ $(stat -L -c %d:%i "/proc/$pid/root/") != $(stat -c %d:%i /) ]] || fg_fail "the container's / is the host's /"
root=$(readlink "/proc/$pid/root")
[[ $root == / ]] || fg_fail "readlink /proc/$pid/root is '$root', expected / (a pivoted root, not a chroot)"
[[ -f /proc/$pid/root/opt/jdk/release ]] || fg_fail "JDK not visible through /proc/$pid/root"
[[ ! -e /proc/$pid/root/usr/lib/jvm/java-17-openjdk-amd64 ]] || fg_fail "host JDKs visible in the container"

# A cgroup named like Docker's, with the container id.
cid=$(fg_container_cid plain)
[[ $cid =~ ^[0-9a-f]{64}$ ]] || fg_fail "container id '$cid' is not 64 hex"
grep -q "/docker/$cid\$" "/proc/$pid/cgroup" || fg_fail "/proc/$pid/cgroup does not name docker/$cid"

# Private /tmp, writable by uid 4242, with no perf map in it.
[[ $(stat -c %a "/proc/$pid/root/tmp") == 1777 ]] || fg_fail "container /tmp is not 1777"
[[ $(stat -f -c %T "/proc/$pid/root/tmp") == tmpfs ]] || fg_fail "container /tmp is not a private tmpfs"
[[ ! -e /proc/$pid/root/tmp/perf-1.map ]] || fg_fail "a map exists inside the container"
[[ ! -e /tmp/perf-$pid.map ]] || fg_fail "a host map exists for pid $pid before any collector ran"

# The read-only volume refuses writes but a unix socket in it accepts a connection.
out=$(nsenter -t "$pid" -a -r -w setpriv --reuid 4242 --regid 4242 --clear-groups -- python3 -c '
import socket
try:
    open("/var/run/fgcollect/x", "w")
    print("writable")
except OSError:
    print("read-only")
s = socket.socket(socket.AF_UNIX)
s.connect("/var/run/fgcollect/probe.sock")
s.send(b"hello")
print("connected")' 2>&1) || fg_fail "socket probe in container failed: $out"
[[ $out == $'read-only\nconnected' ]] || fg_fail "ro volume probe said: $out"
wait "$probe" || fg_fail "probe server failed: $(cat "$FG_TMP/probe.out")"
grep -q '^peer [0-9]* 4242 hello$' "$FG_TMP/probe.out" || fg_fail "probe server saw: $(cat "$FG_TMP/probe.out")"
fg_log "read-only volume: writes refused, unix socket connect works"

# Stock perf without a map: many JIT frames, none named. Proves fg_perf_jit counts JIT frames
# and that names in the other tests can only come from the collector's map.
fg_perf_jit "$pid" 2 "$FG_TMP/nomap" 'HotLoop'
((FG_JIT_FRAMES >= 100)) || fg_fail "only $FG_JIT_FRAMES JIT frames without a map"
((FG_JIT_NAMED == 0)) || fg_fail "$FG_JIT_NAMED JIT frames named without any map"

# The JVM's own view (jcmd Compiler.perfmap) works as a completeness oracle.
fg_jvm_truth "$pid" "$FG_TMP/truth.map" || fg_fail "jcmd Compiler.perfmap in the container failed"
grep -q ' HotLoop\.step(' "$FG_TMP/truth.map" || fg_fail "jcmd map has no HotLoop method"
[[ ! -e /proc/$pid/root/tmp/perf-1.map ]] || fg_fail "jcmd's map left inside the container"

# --not-pid1: the JVM is a child of a PID-1 shell.
FG_CT_OPTS=(--not-pid1)
FG_NO_AGENT=1 fg_jvm_start child HotLoop 90
cpid=$FG_HOSTPID
nspid=$(awk '/^NSpid:/ {print $NF}' "/proc/$cpid/status")
[[ $nspid != 1 && $(cat "/proc/$cpid/comm") == java ]] || fg_fail "--not-pid1: JVM is ns pid $nspid ($(cat "/proc/$cpid/comm"))"
ppid=$(awk '/^PPid:/ {print $2}' "/proc/$cpid/status")
[[ $(awk '/^NSpid:/ {print $NF}' "/proc/$ppid/status") == 1 ]] || fg_fail "--not-pid1: parent is not pid 1"

# Stopping: SIGTERM reaches the JVM as PID 1; nothing is left behind.
fg_container_stop plain 10 || true
fg_container_stop child 10 || true
! kill -0 "$pid" 2>/dev/null || fg_fail "JVM $pid survived its container"
! ls -d /sys/fs/cgroup/*/docker/"$cid" 2>/dev/null || fg_fail "cgroup of $cid left behind"
# A watch that dies at start fails the test with its status and its log, never silently (the
# test scripts run under errexit, where a bare `wait` of the dead watch would end them).
printf '#!/bin/sh\n[ "$1 $2" = "watch --help" ] && exit 0\necho "cannot listen here" >&2\nexit 3\n' \
	>"$FG_TMP/deadwatch"
chmod 0755 "$FG_TMP/deadwatch"
out=$(FGCOLLECT=$FG_TMP/deadwatch FG_WATCH_START_S=1 bash -c 'set -euo pipefail
	. "$1"; FG_TEST=deadwatch FG_TMP=$2; trap - EXIT; fg_watch_start --dir "$2/dead"
	echo "started anyway"' _ "$FG_SOURCE_DIR/tests/harness/lib.sh" "$FG_TMP" 2>&1) && st=0 || st=$?
[[ $st == 1 && $out == *"exited with status 3"* && $out == *"cannot listen here"* ]] ||
	fg_fail "a watch that died at start was reported as: status $st, output: $out"
fg_log "a watch that dies at start: reported with its status and log"
# Every failure says why on its FAIL line: a blank reason, a reason on a later line, a capture
# that came back empty, a command that ends the test under errexit.
fail_line() { # BODY: the FAIL line of a test script whose body is BODY
	printf 'set -euo pipefail\n. "%s"\nFG_TEST=t\ntrap fg_cleanup EXIT\n%s\n' \
		"$FG_SOURCE_DIR/tests/harness/lib.sh" "$1" >"$FG_TMP/failcase.sh"
	bash "$FG_TMP/failcase.sh" 2>&1 | grep -m1 'FAIL' || true
}
for c in 'fg_fail ""' 'fg_fail $'"'"'\n'"'"'"two runs missed"' 'x=$(true); fg_fail "check failed: $x"' \
	'read -r a </dev/null'; do
	l=$(fail_line "$c")
	case $c in
	*missed*) want='FAIL: two runs missed' ;;
	*read*) want='FAIL: status 1 from `read -r a' ;;
	*'check failed'*) want='FAIL: check failed: (nothing: an empty value at' ;;
	*) want='FAIL: no reason given (fg_fail called with an empty message at' ;;
	esac
	[[ $l == *"$want"* ]] || fg_fail "the harness reported '$c' as '$l' (want '$want')"
done
fg_log "a blank or late reason, an empty capture, an errexit: each on its FAIL line"

# --root (an image root's /usr, tests/images/jdkroot.sh; the JDK matrix's image cells run on
# them): a directory that is no image root, or a JDK path that leaves it, is refused as a usage
# error.
mkdir -p "$FG_TMP/notaroot"
for args in "--root $FG_TMP/notaroot" "--root / --jdk /nonexistent" "--root / --jdk /usr/../x"; do
	rc=0
	# shellcheck disable=SC2086 # the test's own paths, no spaces
	"$FG_CONTAINER" --name badroot $args -- true 2>"$FG_TMP/badroot.err" || rc=$?
	[[ $rc == 64 ]] || fg_fail "fgcontainer $args: status $rc (want 64, a usage error): $(cat "$FG_TMP/badroot.err")"
done
fg_log "fgcontainer refuses a --root that is no image root and a --jdk outside it"
fg_pass "container: pid 1, uid 4242, pivot_root, private /tmp, docker cgroup, ro socket volume; perf: $FG_JIT_FRAMES JIT frames, 0 named without a map"
