#!/bin/bash
# JVM smoke tests of libfgagent.so, for every JDK under /usr/lib/jvm (symlinked dirs deduped):
#   1. no socket directory / no collector / permission denied: the JVM runs normally, same
#      output, exit 0, nothing on stderr;
#   2. a malformed option string: the JVM refuses to start with one clear message;
#   3. with fgrecv (tests/unit/fgrecv.c) as collector: HELLO with the JVM's pid and flags, a
#      snapshot, loads named like AgentTest::loop; after fgrecv restarts, HELLO + a full replay;
#   4. signatures=true and -XX:-DebugNonSafepoints show in names and HELLO flags;
#   5. classes unloaded: CODE_UNLOAD for the addresses their loads announced;
#   6. the JVM forks (launchMechanism=FORK, and the default) while streaming: no crash;
#   and no JVM of any case has a perf map in /tmp (the agent never writes one).
# Env (set by fg_e2e_test): FGAGENT, FGRECV.
set -u
: "${FGAGENT:?}" "${FGRECV:?}"

fails=0
work=$(mktemp -d /tmp/fgagent-e2e.XXXXXX)
chmod 755 "$work"
touch "$work/start"
# The agent as a JVM of another uid (65534) can read it: the build tree may sit in a private
# (0700) checkout, as root's home or a mktemp -d is.
mkdir -m 0755 "$work/agent"
install -m 0644 "$FGAGENT" "$work/agent/libfgagent.so"
agent_ro=$work/agent/libfgagent.so
pids=()
jvm_pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

fail() {
	echo "FAIL [$jdk_name]: $*" >&2
	fails=$((fails + 1))
}
ok() {
	echo "ok   [$jdk_name]: $*"
}

# wait_for FILE REGEX SECONDS: poll until a line of FILE matches.
wait_for() {
	local i
	for ((i = 0; i < $3 * 20; i++)); do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

start_recv() { # start_recv SOCKET OUT
	"$FGRECV" "$1" >"$2" 2>&1 &
	recv_pid=$!
	pids+=("$recv_pid")
	wait_for "$2" '^listening' 5 || fail "fgrecv did not start on $1"
}

stop_recv() {
	kill "$recv_pid" 2>/dev/null
	wait "$recv_pid" 2>/dev/null
}

# jrun OUT ERR CMD...: run a JVM with stdout in OUT and stderr in ERR, note its PID for the
# perf map check, return its exit status.
jrun() {
	local out=$1 err=$2 p rc=0
	shift 2
	"$@" >"$out" 2>"$err" &
	p=$!
	jvm_pids+=("$p")
	wait "$p" || rc=$?
	return $rc
}

cat >"$work/AgentTest.java" <<'JAVA'
import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.function.LongUnaryOperator;

public class AgentTest {
    static long loop(long n) { long s = 0; for (long i = 0; i < n; i++) s += i * 31 ^ (s >>> 3); return s; }

    public static void main(String[] a) throws Exception {
        long t = 0;
        switch (a[0]) {
        case "loop": {
            long end = System.nanoTime() + Long.parseLong(a[1]) * 1000000L;
            while (System.nanoTime() < end) t += loop(100000);
            break;
        }
        case "unload": {
            URL url = new File(a[1]).toURI().toURL();
            for (int round = 0; round < 3; round++) {
                URLClassLoader cl = new URLClassLoader(new URL[] { url },
                        AgentTest.class.getClassLoader().getParent());
                LongUnaryOperator op = (LongUnaryOperator) cl.loadClass("Dyn")
                        .getDeclaredConstructor().newInstance();
                for (int i = 0; i < 3000; i++) t += op.applyAsLong(10000);
                op = null; cl.close(); cl = null;
                for (int g = 0; g < 3; g++) { System.gc(); Thread.sleep(100); }
            }
            Thread.sleep(Long.parseLong(a[2]));
            break;
        }
        case "fork": {
            for (int i = 0; i < Integer.parseInt(a[1]); i++) {
                t += loop(100000);
                Process p = new ProcessBuilder("true").start();
                t += p.waitFor() == 0 ? 1 : 0;
            }
            break;
        }
        }
        System.out.println("done " + (t != 0));
    }
}
JAVA
cat >"$work/Dyn.java" <<'JAVA'
public class Dyn implements java.util.function.LongUnaryOperator {
    public long applyAsLong(long n) { long s = 0; for (long i = 0; i < n; i++) s += i * 17 ^ (s >>> 5); return s; }
}
JAVA

# Every JDK once: real directories with bin/java and bin/javac.
declare -A seen
jdks=()
for d in /usr/lib/jvm/*/; do
	real=$(readlink -f "$d")
	[ -x "$real/bin/java" ] && [ -x "$real/bin/javac" ] || continue
	[ -n "${seen[$real]:-}" ] && continue
	seen[$real]=1
	jdks+=("$real")
done
if [ ${#jdks[@]} -eq 0 ]; then
	echo "FAIL: no JDK under /usr/lib/jvm" >&2
	exit 1
fi

for jdk in "${jdks[@]}"; do
	jdk_name=$(basename "$jdk")
	java="$jdk/bin/java"
	d="$work/$jdk_name"
	mkdir -p "$d/cls" "$d/dyn" "$d/sock"
	chmod 755 "$d" "$d/cls" "$d/dyn"
	# One javac for both (a JVM start each is seconds); Dyn.class then moves to its own
	# directory, off the class path, where only AgentTest's class loader finds it.
	if ! "$jdk/bin/javac" -d "$d/cls" "$work/AgentTest.java" "$work/Dyn.java" ||
		! mv "$d/cls/Dyn.class" "$d/dyn/"; then
		fail "javac failed"
		continue
	fi
	chmod -R a+rX "$d/cls" "$d/dyn"
	run=("$java" -Xshare:auto -cp "$d/cls")

	# 1. Environment problems never stop or disturb the JVM.
	base=$("${run[@]}" AgentTest loop 200 2>"$d/base.err")
	for opt in "socket=$work/no-such-dir/fg.sock" "socket=$d/sock/nobody-listens.sock" ""; do
		jrun "$d/out" "$d/err" "${run[@]}" "-agentpath:$FGAGENT${opt:+=$opt}" AgentTest loop 200
		rc=$?
		out=$(cat "$d/out")
		if [ $rc -ne 0 ] || [ "$out" != "$base" ] || [ -s "$d/err" ]; then
			fail "with '${opt:-defaults}' and no collector: rc=$rc out='$out' err='$(head -c 300 "$d/err")'"
		else
			ok "runs normally with '${opt:-default socket}' and no collector"
		fi
	done
	# Permission denied: a collector listens in a directory the JVM's user cannot enter.
	mkdir -p "$d/private"
	chmod 700 "$d/private"
	start_recv "$d/private/fg.sock" "$d/private.txt"
	jrun "$d/out" "$d/err" setpriv --reuid=65534 --regid=65534 --clear-groups "${run[@]}" \
		"-agentpath:$agent_ro=socket=$d/private/fg.sock" AgentTest loop 500
	rc=$?
	out=$(cat "$d/out")
	if [ $rc -ne 0 ] || [ "$out" != "$base" ] || [ -s "$d/err" ] ||
		grep -q '^hello' "$d/private.txt"; then
		fail "permission denied case: rc=$rc out='$out' err='$(head -c 300 "$d/err")'"
	else
		ok "runs normally when the socket is not accessible (uid 65534)"
	fi
	stop_recv

	# 2. Malformed options refuse to start, with one clear line.
	while IFS='|' read -r opt msg; do
		jrun "$d/out" "$d/err" "${run[@]}" "-agentpath:$FGAGENT=$opt" AgentTest loop 10
		rc=$?
		out=$(cat "$d/out")
		# (The JVM itself prints "Error occurred during initialization of VM" on stdout.)
		if [ $rc -eq 0 ] || [[ "$out" == *done* ]] || ! grep -qF -- "$msg" "$d/err" ||
			[ "$(grep -c fgagent: "$d/err")" -ne 1 ]; then
			fail "option '$opt': rc=$rc out='$out' err='$(cat "$d/err")'"
		else
			ok "refuses '$opt': $(grep fgagent: "$d/err")"
		fi
	done <<'CASES'
sockt=/x|fgagent: unknown option 'sockt' in 'sockt=/x' (valid: socket, signatures, maxmem, log, service, events, depth, allocstack)
service=shop{x}|fgagent: bad value in 'service=shop{x}': service= takes 1 to 128 characters
socket|fgagent: option 'socket' has no '='
maxmem=5|fgagent: bad value in 'maxmem=5'
signatures=yes|fgagent: bad value in 'signatures=yes': signatures= takes true or false
socket=/a,socket=/b|fgagent: option 'socket' given twice
socket=rel.sock|fgagent: bad value in 'socket=rel.sock'
CASES

	# 3. Streaming, then a collector restart: HELLO + full replay again.
	sock="$d/sock/fg.sock"
	start_recv "$sock" "$d/r1.txt"
	"${run[@]}" -XX:+PreserveFramePointer "-agentpath:$FGAGENT=socket=$sock" \
		AgentTest loop 5000 >"$d/out" 2>"$d/err" &
	jpid=$!
	pids+=("$jpid")
	jvm_pids+=("$jpid")
	if ! wait_for "$d/r1.txt" 'name=AgentTest::loop ' 20; then
		fail "no load of AgentTest::loop reached the receiver"
	fi
	stop_recv
	start_recv "$sock" "$d/r2.txt"
	wait_for "$d/r2.txt" '^snapshot-end' 10 ||
		fail "no snapshot after the receiver restarted: $(head -c 300 "$d/r2.txt" | tr '\n' ' ')"
	wait "$jpid"
	rc=$?
	sleep 0.2
	stop_recv
	[ $rc -eq 0 ] && [ "$(cat "$d/out")" = "done true" ] ||
		fail "streaming JVM: rc=$rc out='$(cat "$d/out")' err='$(head -c 300 "$d/err")'"
	for r in r1 r2; do
		f="$d/$r.txt"
		# The first record (disconnect lines are pipes, not records: the agent refuses
		# its dialer's own redial to a restarted collector and opens a fresh socket).
		first=$(grep -vE '^(listening|disconnect)$' "$f" | sed -n 1p)
		case "$first" in
		"hello proto=1 pid=$jpid pfp=1 dns=1 sig=0 "*) ok "$r: first record is HELLO with pid $jpid, PreserveFramePointer, DebugNonSafepoints" ;;
		*) fail "$r: first record is '$first' (want hello with pid=$jpid pfp=1 dns=1)" ;;
		esac
		# The snapshot: BEGIN count = END count = records between them, all flagged replay.
		if awk '/^snapshot-begin/ {b = $2; sub("count=", "", b); inside = 1; next}
			/^snapshot-end/ {e = $2; sub("count=", "", e); exit !(inside && n + 0 == b + 0 && n + 0 == e + 0)}
			inside && /^(load|dyn) / {n++; if ($0 !~ / replay$/ && $0 !~ / replay truncated$/) bad = 1}
			END {if (bad) exit 1}' "$f"; then
			ok "$r: snapshot complete ($(grep -m1 '^snapshot-end' "$f"))"
		else
			fail "$r: snapshot inconsistent: $(grep '^snapshot' "$f" | tr '\n' ' ')"
		fi
		grep -q 'name=AgentTest::loop ' "$f" || fail "$r: AgentTest::loop missing"
		grep -q '^hello .* service=AgentTest$' "$f" || fail "$r: HELLO lacks service=AgentTest (the main class)"
		grep -q '^bad' "$f" && fail "$r: the decoder refused records"
	done
	grep -Eq '^load .*name=AgentTest::loop .* replay$' "$d/r2.txt" &&
		ok "restarted receiver got AgentTest::loop from the replay" ||
		fail "restarted receiver did not get AgentTest::loop replayed"
	grep -Eq '^dyn .*name=Interpreter' "$d/r1.txt" ||
		fail "no DynamicCodeGenerated Interpreter blob (events before VM init lost?)"

	# 4. Signatures and an explicitly disabled DebugNonSafepoints.
	start_recv "$sock" "$d/r3.txt"
	OTEL_SERVICE_NAME=otel-shop jrun "$d/out" "$d/err" "${run[@]}" -XX:+UnlockDiagnosticVMOptions \
		-XX:-DebugNonSafepoints "-agentpath:$FGAGENT=socket=$sock,signatures=true" AgentTest loop 500
	sleep 0.2
	stop_recv
	grep -q "^hello proto=1 pid=[0-9]* pfp=0 dns=0 sig=1 " "$d/r3.txt" &&
		grep -q 'name=AgentTest::loop(J)J ' "$d/r3.txt" &&
		ok "signatures=true names AgentTest::loop(J)J; HELLO says pfp=0 dns=0" ||
		fail "signatures/flags: $(grep -m1 '^hello' "$d/r3.txt"), $(grep -m1 'AgentTest::loop' "$d/r3.txt")"
	grep -q '^hello .* service=otel-shop$' "$d/r3.txt" && ok "OTEL_SERVICE_NAME gives the service label" ||
		fail "OTEL_SERVICE_NAME ignored: $(grep -m1 '^hello' "$d/r3.txt")"

	# 5. Unloaded classes: CODE_UNLOAD for addresses that were loaded as Dyn::applyAsLong.
	start_recv "$sock" "$d/r4.txt"
	jrun "$d/out" "$d/err" "${run[@]}" "-agentpath:$FGAGENT=socket=$sock" AgentTest unload "$d/dyn" 500
	sleep 0.2
	stop_recv
	n=0
	for a in $(sed -n 's/^load addr=\([0-9a-f]*\) .*name=Dyn::applyAsLong .*/\1/p' "$d/r4.txt"); do
		grep -q "^unload addr=$a " "$d/r4.txt" && n=$((n + 1))
	done
	[ "$n" -gt 0 ] && ok "$n Dyn::applyAsLong blobs loaded and unloaded" ||
		fail "no CODE_UNLOAD matched a Dyn::applyAsLong load ($(grep -c '^unload' "$d/r4.txt") unloads)"

	# 6. Forking while streaming.
	start_recv "$sock" "$d/r5.txt"
	for mech in FORK default; do
		prop=()
		[ "$mech" = FORK ] && prop=(-Djdk.lang.Process.launchMechanism=FORK)
		jrun "$d/out" "$d/err" "${run[@]}" "${prop[@]}" "-agentpath:$FGAGENT=socket=$sock" AgentTest fork 30
		rc=$?
		out=$(cat "$d/out")
		[ $rc -eq 0 ] && [ "$out" = "done true" ] && [ ! -s "$d/err" ] &&
			ok "30 child processes ($mech) while streaming" ||
			fail "fork ($mech): rc=$rc out='$out' err='$(head -c 300 "$d/err")'"
	done
	stop_recv

	# The agent never writes a perf map into the JVM's /tmp: no JVM above has one (made since
	# this test started: an old file of a reused PID is not the agent's doing).
	for p in "${jvm_pids[@]}"; do
		m=/tmp/perf-$p.map
		if [ -e "$m" ] && [ "$m" -nt "$work/start" ]; then
			fail "$m exists: the agent wrote a perf map into the JVM's /tmp"
		fi
	done
	ok "no perf map in /tmp for any of the ${#jvm_pids[@]} JVMs with the agent"
	jvm_pids=()
done

if [ $fails -ne 0 ]; then
	echo "$fails failure(s)" >&2
	exit 1
fi
echo "all agent JVM tests passed on: ${jdks[*]}"
