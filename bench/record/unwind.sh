#!/bin/bash
# unwind.sh BUILD_DIR - what unwinding without frame pointers costs and what it gains.
#  1. Cost per sample: UnwindMix's mixed workload (deep Java chain, libz, writes) with
#     -XX:+PreserveFramePointer, recorded with --unwind-check, so every sample is unwound both
#     ways in the same run: the vm unwinder (stack copy + frame facts + CFI) against the
#     frame-pointer path's own work in the collector (the kernel's chain walked again in the
#     copy); µs per sample and frames per second of each. (The kernel's own chain walk is
#     part of every sample's cost either way: bench/record/sample.sh measures it.)
#  2. What users gain: a JIT-heavy workload (in-process javac, tests/java/JavacWorkload) with
#     -XX:-PreserveFramePointer against -XX:+PreserveFramePointer, interleaved repetitions in
#     the same run, medians of its own timing of the warm rounds.
# Env: REPS (default 5), JDK (default JDK 17), SECONDS (recording, default 10).
set -eu
build=$(cd "${1:-build}" && pwd)
reps=${REPS:-5}
jdk=${JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
secs=${SECONDS_REC:-10}
fgcollect=$build/collector/fgcollect
agent=$build/jvmti-agent/libfgagent.so
tmp=$(mktemp -d /tmp/fg-bench-unwind.XXXXXX)
jpid=
cleanup() {
	[ -n "$jpid" ] && kill "$jpid" 2>/dev/null && wait "$jpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
classes=$build/tests/java/fg-workloads.jar # the Java workloads (tests/e2e.cmake)
for f in "$fgcollect" "$agent" "$classes"; do
	[ -e "$f" ] || { echo "bench/record/unwind.sh: $f not built" >&2; exit 1; }
done
echo "== unwinding without frame pointers (bench/record/unwind.sh, $(basename "$jdk"))"

# ---- 1. cost per sample, both ways on the same samples ---------------------------------------
"$jdk/bin/java" -XX:+PreserveFramePointer "-agentpath:$agent=socket=$tmp/s.sock" -cp "$classes" \
	UnwindMix mix 30 $((secs + 20)) >"$tmp/jvm.out" 2>&1 &
jpid=$!
for _ in $(seq 200); do grep -q ready "$tmp/jvm.out" && break; sleep 0.1; done
"$fgcollect" record --pid "$jpid" --duration "$secs" --freq 999 --socket "$tmp/s.sock" \
	--ctl "$tmp/none/ctl.sock" --unwind-check -o "$tmp/mix.folded" 2>"$tmp/rec.err" || {
	cat "$tmp/rec.err" >&2
	exit 1
}
kill "$jpid" 2>/dev/null; wait "$jpid" 2>/dev/null || true
jpid=
grep -E 'samples in|vm unwinder|unwind check|unwind cost' "$tmp/rec.err" | sed 's/^fgcollect record: /  /'

# ---- 2. throughput of a JIT-heavy workload, without against with frame pointers --------------
# run FLAG: "WARM_MS CPU_MS": the warm rounds' own wall time, and the JVM's CPU time (user +
# system, every thread: a shared machine's preemption inflates wall time, not CPU time).
run() {
	/usr/bin/time -f 'cpu %U %S' -o "$tmp/time" "$jdk/bin/java" "$1" -cp "$classes" \
		JavacWorkload 200 4 >"$tmp/javac.out" 2>/dev/null
	awk '/round [2-4]:/ { for (i = 1; i <= NF; i++) if ($i == "in") t += $(i + 1) } END { printf "%d ", t }' "$tmp/javac.out"
	awk '/^cpu/ { printf "%d\n", ($2 + $3) * 1000 }' "$tmp/time"
}
on_w=() on_c=() off_w=() off_c=()
for r in $(seq "$reps"); do
	read -r w c < <(run -XX:-PreserveFramePointer)
	off_w+=("$w") off_c+=("$c")
	read -r w c < <(run -XX:+PreserveFramePointer)
	on_w+=("$w") on_c+=("$c")
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "  javac (200 classes x 4 rounds), $reps interleaved runs each, medians:"
echo "    warm rounds' wall time: without frame pointers $(median "${off_w[@]}") ms, with $(median "${on_w[@]}") ms (runs: off ${off_w[*]}; on ${on_w[*]})"
echo "    JVM CPU time:           without frame pointers $(median "${off_c[@]}") ms, with $(median "${on_c[@]}") ms (runs: off ${off_c[*]}; on ${on_c[*]})"
a="$(median "${off_c[@]}")" b="$(median "${on_c[@]}")" x="$(median "${off_w[@]}")" y="$(median "${on_w[@]}")" awk \
	'BEGIN { a = ENVIRON["a"]; b = ENVIRON["b"]; x = ENVIRON["x"]; y = ENVIRON["y"]; printf "    with / without frame pointers: CPU %.3f, warm wall %.3f\n", b / a, y / x }'
