#!/bin/bash
# jvm_overhead.sh BUILD_DIR - JVM wall-clock overhead of the agent streaming to a live
# `fgcollect watch`, against the same JVM without the agent, on a JIT-heavy workload
# (in-process javac compiling generated classes: thousands of compiled-method events).
#
# Runs are interleaved (base, agent, base, agent, ...) so drift on a shared machine hits both
# sides alike; prints each side's median and the ratio. Env: REPS (default 7), CLASSES (300),
# JDK (default JDK 17).
set -eu
build=$(cd "${1:-build}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
reps=${REPS:-7}
classes=${CLASSES:-300}
jdk=${JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
fgcollect=$build/collector/fgcollect
agent=$build/jvmti-agent/libfgagent.so
tmp=$(mktemp -d /tmp/fg-bench-jvm.XXXXXX)
watch_pid=
cleanup() {
	[ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null && wait "$watch_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

classes_dir=$(JAVA_HOME=$jdk "$src/tests/java/build.sh" "$build/java-classes")
mkdir -p "$tmp/sock"
"$fgcollect" watch --socket "$tmp/sock/fgcollect.sock" 2>"$tmp/watch.log" &
watch_pid=$!
for _ in $(seq 50); do [ -S "$tmp/sock/fgcollect.sock" ] && break; sleep 0.1; done
[ -S "$tmp/sock/fgcollect.sock" ] || { echo "watch did not start"; cat "$tmp/watch.log"; exit 1; }

# run VARIANT: one JVM run, prints its wall time in ms (measured around the whole process).
run() {
	local extra=() t0 t1
	[ "$1" = agent ] && extra=("-agentpath:$agent=socket=$tmp/sock/fgcollect.sock")
	t0=$(date +%s%N)
	"$jdk/bin/java" -XX:+PreserveFramePointer "${extra[@]}" -cp "$classes_dir" \
		JavacWorkload "$classes" 1 >/dev/null
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

run base >/dev/null # warm the page cache for both sides
: >"$tmp/base" ; : >"$tmp/agent"
for i in $(seq "$reps"); do
	run base >>"$tmp/base"
	run agent >>"$tmp/agent"
done
b=$(median <"$tmp/base")
a=$(median <"$tmp/agent")
echo "workload: JavacWorkload $classes classes, $reps interleaved runs each, $(basename "$jdk")"
echo "without agent: median $b ms   ($(tr '\n' ' ' <"$tmp/base"))"
echo "with agent + live watch: median $a ms   ($(tr '\n' ' ' <"$tmp/agent"))"
awk -v a="$a" -v b="$b" 'BEGIN {printf "overhead: %+.2f%% (ratio %.4f; target <= 1%%)\n", (a-b)*100/b, a/b}'
grep -E 'connect|disconnect' "$tmp/watch.log" | tail -n 2 | sed 's/^/watch: /'
