#!/bin/bash
# steady_state.sh BUILD_DIR - does a warmed-up service pay anything for libfgagent.so + watch?
# PrimeService (the demo's service) serves /primes to its own 2 load threads for WARM + 60 s;
# throughput (requests/s) and CPU time (JVM, + the watch daemon for the agent) are measured over
# the 60 s after WARM s of warm-up, in interleaved runs without and with the agent streaming to a
# live `fgcollect watch`. Prints each variant's median and noise, and the ratio with its spread.
# Env: REPS (default 3), WARM (20), WINDOW (60), JDK (default JDK 17).
set -eu
build=$(cd "${1:-build}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
reps=${REPS:-3}
warm=${WARM:-20}
window=${WINDOW:-60}
jdk=${JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
fgcollect=$build/collector/fgcollect
agent=$build/jvmti-agent/libfgagent.so
tmp=$(mktemp -d /tmp/fg-bench-steady.XXXXXX)
watch_pid=
cleanup() {
	[ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null && wait "$watch_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
workloads=$build/tests/java/fg-workloads.jar # tests/e2e.cmake builds it (Java 11 classes)
[ -f "$workloads" ] || { echo "steady_state: $workloads not built (make bench builds it)"; exit 1; }
mkdir -p "$tmp/sock"
"$fgcollect" watch --socket "$tmp/sock/fgcollect.sock" --ctl "$tmp/ctl/ctl.sock" 2>"$tmp/watch.log" &
watch_pid=$!
for _ in $(seq 50); do [ -S "$tmp/sock/fgcollect.sock" ] && break; sleep 0.1; done
hz=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run VARIANT: requests/s and CPU ms over the window, appended to $tmp/VARIANT{,.cpu}.
run() {
	local extra=() jpid c0 c1 w0 w1 n0 n1
	[ "$1" = agent ] && extra=("-agentpath:$agent=socket=$tmp/sock/fgcollect.sock")
	"$jdk/bin/java" -XX:+PreserveFramePointer "${extra[@]}" -cp "$workloads" PrimeService \
		--load 2 --seconds $((warm + window + 5)) --report 1 >"$tmp/out" &
	jpid=$!
	sleep "$warm"
	n0=$(grep -c 'served .* at' "$tmp/out" || true)
	c0=$(ticks "$jpid")
	w0=$(ticks "$watch_pid")
	sleep "$window"
	c1=$(ticks "$jpid")
	w1=$(ticks "$watch_pid")
	n1=$(grep -c 'served .* at' "$tmp/out" || true)
	wait "$jpid" || true
	# Requests between the report lines n0 and n1 (1 s apart): requests per second.
	a="$n0" b="$n1" awk 'BEGIN { a = ENVIRON["a"]; b = ENVIRON["b"] } /served .* at/ { i++; if (i == a) { s0 = $3; t0 = $5 } if (i == b) { s1 = $3; t1 = $5 } }
		END { printf "%.1f\n", (s1 - s0) * 1000 / (t1 - t0) }' "$tmp/out" >>"$tmp/$1"
	[ "$1" = agent ] || w1=$w0 # the daemon's CPU counts for the agent only
	echo $(((c1 - c0 + w1 - w0) * 1000 / hz)) >>"$tmp/$1.cpu"
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
: >"$tmp/none"; : >"$tmp/agent"; : >"$tmp/none.cpu"; : >"$tmp/agent.cpu"
for _ in $(seq "$reps"); do
	run none
	run agent
done
echo "PrimeService --load 2, ${warm} s warm-up then ${window} s measured, $reps interleaved runs each, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for v in none agent; do
	printf "%-28s requests/s: median %9.1f (runs: %s)  CPU ms: median %6d (runs: %s)\n" \
		"$([ $v = none ] && echo 'without agent' || echo 'fgagent + live watch')" \
		"$(median <"$tmp/$v")" "$(tr '\n' ' ' <"$tmp/$v")" "$(median <"$tmp/$v.cpu")" \
		"$(tr '\n' ' ' <"$tmp/$v.cpu")"
done
paste "$tmp/agent" "$tmp/none" | awk '{print $1 / $2}' | sort -n >"$tmp/ratio"
echo "throughput ratio agent/none per round: median $(median <"$tmp/ratio") (min $(head -n 1 "$tmp/ratio"), max $(tail -n 1 "$tmp/ratio"))"
# Requests per CPU-second (the daemon's CPU counted for the agent): steadier than requests per
# second on a machine shared with other work, whose CPU share moves between runs.
paste "$tmp/agent" "$tmp/agent.cpu" "$tmp/none" "$tmp/none.cpu" |
	awk '{print ($1 / $2) / ($3 / $4)}' | sort -n >"$tmp/eff"
echo "requests per CPU-second, agent/none per round: median $(median <"$tmp/eff") (min $(head -n 1 "$tmp/eff"), max $(tail -n 1 "$tmp/eff"))"

# The daemon at rest: its CPU over REST s with no JVM, then with one idle JVM connected.
rest=${REST:-30}
w0=$(ticks "$watch_pid")
sleep "$rest"
w1=$(ticks "$watch_pid")
"$jdk/bin/java" -XX:+PreserveFramePointer "-agentpath:$agent=socket=$tmp/sock/fgcollect.sock" \
	-cp "$workloads" PrimeService --seconds $((rest + 35)) >/dev/null &
jpid=$!
sleep 30 # start-up compiles are over (the JVM is idle from then on)
w2=$(ticks "$watch_pid")
sleep "$rest"
w3=$(ticks "$watch_pid")
wait "$jpid" || true
a=$((w1 - w0)) b=$((w3 - w2)) hz="$hz" r="$rest" awk 'BEGIN { a = ENVIRON["a"]; b = ENVIRON["b"]; hz = ENVIRON["hz"]; r = ENVIRON["r"]
	printf "watch daemon at rest: %.2f%% of a core with no JVM, %.2f%% with one idle JVM connected (%+.3f%% per JVM; %d s each, clock ticks of %d ms)\n",
		a * 100 / hz / r, b * 100 / hz / r, (b - a) * 100 / hz / r, r, 1000 / hz }'
