#!/bin/bash
# jvm_overhead.sh BUILD_DIR - JVM wall-clock overhead of libfgagent.so streaming to a live
# `fgcollect watch`, on a JIT-heavy workload (in-process javac compiling generated classes:
# thousands of compiled-method events in a few seconds, the worst case for any JIT agent).
#
# Three variants, interleaved (base, floor, agent, base, ...) so drift on a shared machine hits
# all alike; each prints its median and its ratio to the JVM without any agent:
#   base   the JVM without an agent;
#   floor  the JVM with bench/null_agent.c: the same JVMTI events, empty callbacks — what
#          HotSpot itself spends producing and posting them, the floor for any such agent;
#   agent  the JVM with libfgagent.so connected to a live `fgcollect watch` (maps written).
# Env: REPS (default 7), CLASSES (300), JDK (default JDK 17).
set -eu
build=$(cd "${1:-build}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
reps=${REPS:-7}
classes=${CLASSES:-300}
jdk=${JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
fgcollect=$build/collector/fgcollect
agent=$build/jvmti-agent/libfgagent.so
floor=$build/bench/libfg_null_agent.so
tmp=$(mktemp -d /tmp/fg-bench-jvm.XXXXXX)
watch_pid=
cleanup() {
	[ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null && wait "$watch_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
for f in "$fgcollect" "$agent" "$floor"; do
	[ -e "$f" ] || { echo "jvm_overhead: $f not built (make bench builds it)"; exit 1; }
done

classes_dir=$(JAVA_HOME=$jdk "$src/tests/java/build.sh" "$build/java-classes")
mkdir -p "$tmp/sock"
"$fgcollect" watch --socket "$tmp/sock/fgcollect.sock" --ctl "$tmp/ctl/ctl.sock" 2>"$tmp/watch.log" &
watch_pid=$!
for _ in $(seq 50); do [ -S "$tmp/sock/fgcollect.sock" ] && break; sleep 0.1; done
[ -S "$tmp/sock/fgcollect.sock" ] || { echo "watch did not start"; cat "$tmp/watch.log"; exit 1; }

# run VARIANT: one JVM run; appends its wall time to $tmp/VARIANT and the CPU time (user + sys,
# ms) of the JVM process plus, for the agent, the watch daemon's during the run to
# $tmp/VARIANT.cpu. CPU time is the steadier figure on a shared 2-CPU machine: a JIT storm keeps
# both CPUs busy, so wall time moves with whatever else runs.
run() {
	local extra=() t0 t1 w0 w1 u s
	case $1 in
	floor) extra=("-agentpath:$floor") ;;
	agent) extra=("-agentpath:$agent=socket=$tmp/sock/fgcollect.sock") ;;
	esac
	w0=$(awk '{print $14 + $15}' "/proc/$watch_pid/stat")
	t0=$(date +%s%N)
	/usr/bin/time -f '%U %S' -o "$tmp/time" "$jdk/bin/java" -XX:+PreserveFramePointer \
		"${extra[@]}" -cp "$classes_dir" JavacWorkload "$classes" 1 >/dev/null
	t1=$(date +%s%N)
	w1=$(awk '{print $14 + $15}' "/proc/$watch_pid/stat")
	read -r u s <"$tmp/time"
	echo $(((t1 - t0) / 1000000)) >>"$tmp/$1"
	awk -v u="$u" -v s="$s" -v w=$((w1 - w0)) -v hz="$(getconf CLK_TCK)" -v v="$1" \
		'BEGIN {printf "%d\n", (u + s) * 1000 + (v == "agent" ? w * 1000 / hz : 0)}' >>"$tmp/$1.cpu"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

run base # warm the page cache
watch_cpu0=$(awk '{print $14 + $15}' "/proc/$watch_pid/stat")
for v in base floor agent; do : >"$tmp/$v"; : >"$tmp/$v.cpu"; done
for _ in $(seq "$reps"); do
	for v in base floor agent; do run $v; done
done
watch_cpu1=$(awk '{print $14 + $15}' "/proc/$watch_pid/stat")
b=$(median <"$tmp/base")
echo "workload: JavacWorkload $classes classes, $reps interleaved runs per variant, $(basename "$jdk"), $(nproc) CPUs"
for v in base floor agent; do
	m=$(median <"$tmp/$v")
	awk -v m="$m" -v b="$b" -v v="$v" -v all="$(tr '\n' ' ' <"$tmp/$v")" 'BEGIN {
		label["base"] = "without agent"
		label["floor"] = "JVMTI floor (empty callbacks)"
		label["agent"] = "fgagent + live watch"
		printf "%-32s median %6d ms  %+6.2f%% vs without   (%s)\n", label[v], m, (m-b)*100/b, all }'
done
f=$(median <"$tmp/floor")
a=$(median <"$tmp/agent")
awk -v a="$a" -v b="$b" -v f="$f" 'BEGIN {
	printf "wall-clock overhead vs the JVM without an agent: %+.2f%% (target <= 1%%)\n", (a-b)*100/b
	printf "wall-clock overhead of fgagent + watch over the JVMTI floor: %+.2f%%\n", (a-f)*100/f }'
bc=$(median <"$tmp/base.cpu")
fc=$(median <"$tmp/floor.cpu")
ac=$(median <"$tmp/agent.cpu")
awk -v a="$ac" -v b="$bc" -v f="$fc" 'BEGIN {
	printf "CPU time (JVM, + watch for the agent), medians: without %d ms, floor %d ms (%+.2f%%), fgagent + watch %d ms (%+.2f%%; %+.2f%% over the floor)\n", b, f, (f-b)*100/b, a, (a-b)*100/b, (a-f)*100/f }'
hz=$(getconf CLK_TCK)
echo "watch daemon CPU during the $reps agent runs: $(( (watch_cpu1 - watch_cpu0) * 1000 / hz / reps )) ms per run"
