#!/bin/bash
# Agent figures:
#   1. fg_bench_agent: callback path vs. an nng send per event (baseline), table inserts,
#      replay cost per method over nng ipc;
#   2. real JVMTI callbacks timed inside the JVM (libfgagent_bench.so) while in-process javac
#      compiles generated classes with fgrecv listening: median and p99 per event kind, and the
#      callbacks' total time as a share of the JVM's wall time (the baseline).
#   3. with BASELINE=DIR (the build directory of an earlier version): its callbacks against ours,
#      REPS (default 5) interleaved javac runs per JDK, each agent's CPU per run; the median of
#      the per-pair ratios says what changed (single runs drift by 10-20% on a shared machine).
#   bench/agent/agent.sh BUILD_DIR        (FG_BENCH_QUICK=1 for a short run)
set -eu
BUILD=${1:?usage: bench/agent/agent.sh BUILD_DIR}
BENCH=$BUILD/bench/fg_bench_agent
LIB=$BUILD/jvmti-agent/libfgagent_bench.so
RECV=$BUILD/tests/fgrecv
for f in "$BENCH" "$LIB" "$RECV"; do
	if [ ! -e "$f" ]; then
		echo "bench/agent/agent.sh: $f not built (cmake --build $BUILD --target fg_bench_agent fgagent_bench fgrecv)" >&2
		exit 1
	fi
done
quick=${FG_BENCH_QUICK:-0}
n=20000
classes=300
[ "$quick" = 1 ] && n=5000 && classes=60

echo "== agent without a JVM (fg_bench_agent $n)"
"$BENCH" "$n"

work=$(mktemp -d /tmp/fgbench-agent.XXXXXX)
recv_pid=
cleanup() {
	[ -n "$recv_pid" ] && kill "$recv_pid" 2>/dev/null && wait "$recv_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# A JIT-heavy workload: javac compiling generated classes, in one JVM.
mkdir -p "$work/src" "$work/out"
for ((i = 0; i < classes; i++)); do
	cat >"$work/src/C$i.java" <<JAVA
import java.util.*;
public class C$i {
    private final Map<String, List<Integer>> m = new HashMap<>();
    public int f$i(int x) { int s = 0; for (int k = 0; k < x; k++) s += (k * $i) ^ (s >>> 3); return s; }
    public String g(String a) { return a.toUpperCase().replace('A', 'b') + m.size() + f$i(a.length()); }
    public List<Integer> h(int n) { List<Integer> l = new ArrayList<>(); for (int k = 0; k < n; k++) l.add(k * $i); Collections.sort(l); return l; }
}
JAVA
done

"$RECV" "$work/fg.sock" >"$work/recv.txt" 2>&1 &
recv_pid=$!
sleep 0.3

declare -A seen
for d in /usr/lib/jvm/*/; do
	jdk=$(readlink -f "$d")
	[ -x "$jdk/bin/java" ] || continue
	[ -n "${seen[$jdk]:-}" ] && continue
	seen[$jdk]=1
	echo "== JVMTI callbacks in $(basename "$jdk"): javac compiling $classes classes, streaming to fgrecv"
	rm -f "$work/samples"
	t0=$(date +%s%N)
	FGAGENT_BENCH_OUT=$work/samples "$jdk/bin/java" -XX:+PreserveFramePointer \
		"-agentpath:$LIB=socket=$work/fg.sock" \
		-m jdk.compiler/com.sun.tools.javac.Main -d "$work/out" "$work"/src/*.java
	t1=$(date +%s%N)
	if [ ! -s "$work/samples" ]; then
		echo "no samples written" >&2
		exit 1
	fi
	for k in 0 1 2; do
		name=(CompiledMethodLoad CompiledMethodUnload DynamicCodeGenerated)
		k=$k awk 'BEGIN { k = ENVIRON["k"] } $1 == k {print $2}' "$work/samples" | sort -n >"$work/k$k"
		k=$k awk 'BEGIN { k = ENVIRON["k"] } $1 == k {print $3}' "$work/samples" | sort -n >"$work/c$k"
		cnt=$(wc -l <"$work/k$k")
		[ "$cnt" -eq 0 ] && { printf '%-22s no events\n' "${name[$k]}"; continue; }
		med=$(sed -n "$(((cnt + 1) / 2))p" "$work/k$k")
		p99=$(sed -n "$(((cnt * 99 + 99) / 100))p" "$work/k$k")
		cmed=$(sed -n "$(((cnt + 1) / 2))p" "$work/c$k")
		cp99=$(sed -n "$(((cnt * 99 + 99) / 100))p" "$work/c$k")
		printf '%-22s %6d events  wall median %6.2f us p99 %8.2f us | CPU median %6.2f us p99 %7.2f us\n' \
			"${name[$k]}" "$cnt" "$(echo "$med / 1000" | bc -l)" "$(echo "$p99 / 1000" | bc -l)" \
			"$(echo "$cmed / 1000" | bc -l)" "$(echo "$cp99 / 1000" | bc -l)"
	done
	total=$(awk '{s += $2} END {print s + 0}' "$work/samples")
	ctotal=$(awk '{s += $3} END {print s + 0}' "$work/samples")
	wall=$((t1 - t0))
	printf 'callbacks: %.1f ms CPU (%.1f ms wall, preemption included) in a %.0f ms JVM run = %.2f%% of its wall time in CPU\n' \
		"$(echo "$ctotal / 1000000" | bc -l)" "$(echo "$total / 1000000" | bc -l)" \
		"$(echo "$wall / 1000000" | bc -l)" "$(echo "100 * $ctotal / $wall" | bc -l)"
done

[ -n "${BASELINE:-}" ] || exit 0
OLD=$(cd "$BASELINE" && pwd)/jvmti-agent/libfgagent_bench.so
[ -e "$OLD" ] || { echo "bench/agent/agent.sh: BASELINE has no $OLD" >&2; exit 1; }
reps=${REPS:-5}
# one_run LIB JDK: "CompiledMethodLoad CPU median (us) and all callbacks' CPU (ms)" of a run.
one_run() {
	rm -f "$work/samples"
	FGAGENT_BENCH_OUT=$work/samples "$2/bin/java" -XX:+PreserveFramePointer \
		"-agentpath:$1=socket=$work/fg.sock" \
		-m jdk.compiler/com.sun.tools.javac.Main -d "$work/out" "$work"/src/*.java
	[ -s "$work/samples" ] || { echo "no samples written" >&2; exit 1; }
	awk '$1 == 0 {print $3}' "$work/samples" | sort -n |
		t="$(awk '{s += $3} END {print s + 0}' "$work/samples")" awk \
			'BEGIN { t = ENVIRON["t"] } {a[NR] = $1} END {printf "%.2f %.1f\n", a[int((NR + 1) / 2)] / 1000, t / 1e6}'
}
for jdk in "${!seen[@]}"; do
	echo "== BASELINE $BASELINE against this build, $(basename "$jdk"), $reps interleaved pairs"
	: >"$work/pairs"
	for _ in $(seq "$reps"); do
		read -r om ot < <(one_run "$OLD" "$jdk")
		read -r nm nt < <(one_run "$LIB" "$jdk")
		echo "$om $ot $nm $nt" >>"$work/pairs"
		printf '  baseline: CompiledMethodLoad CPU median %6.2f us, callbacks %6.1f ms | this build: %6.2f us, %6.1f ms\n' \
			"$om" "$ot" "$nm" "$nt"
	done
	awk '{print $3 / $1, $4 / $2}' "$work/pairs" | sort -n -k2 >"$work/r"
	printf 'this build / baseline, median of %d pairs: CompiledMethodLoad CPU median %.3f, all callbacks %.3f (pairs %.3f..%.3f)\n' \
		"$reps" "$(cut -d' ' -f1 "$work/r" | sort -n | sed -n "$(((reps + 1) / 2))p")" \
		"$(cut -d' ' -f2 "$work/r" | sed -n "$(((reps + 1) / 2))p")" \
		"$(head -n 1 "$work/r" | cut -d' ' -f2)" "$(tail -n 1 "$work/r" | cut -d' ' -f2)"
done
