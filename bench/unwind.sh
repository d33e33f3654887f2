#!/bin/bash
# unwind.sh BUILD_DIR - what unwinding without frame pointers costs and what it gains.
#  1. Cost per sample: UnwindMix's mixed workload (deep Java chain, libz, writes) with
#     -XX:+PreserveFramePointer, recorded with --unwind-check, so every sample is unwound both
#     ways in the same run: the vm unwinder (stack copy + frame facts + CFI) against the
#     frame-pointer path's own work in the collector (the kernel's chain walked again in the
#     copy); µs per sample and frames per second of each. (The kernel's own chain walk is
#     part of every sample's cost either way: bench/sample.sh measures it.)
#  2. What users gain: a JIT-heavy workload (in-process javac, tests/java/JavacWorkload) with
#     -XX:-PreserveFramePointer against -XX:+PreserveFramePointer, interleaved repetitions in
#     the same run, medians of its own timing of the warm rounds.
# Env: REPS (default 5), JDK (default JDK 17), SECONDS (recording, default 10).
set -eu
build=$(cd "${1:-build}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
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
for f in "$fgcollect" "$agent"; do
	[ -e "$f" ] || { echo "bench/unwind.sh: $f not built" >&2; exit 1; }
done
classes=$(JAVA_HOME=$jdk "$src/tests/java/build.sh" "$build/tests/java-classes")
echo "== unwinding without frame pointers (bench/unwind.sh, $(basename "$jdk"))"

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
run() { # run FLAG: the warm rounds' total ms
	"$jdk/bin/java" "$1" -cp "$classes" JavacWorkload 200 4 2>/dev/null |
		awk '/round [2-4]:/ { for (i = 1; i <= NF; i++) if ($i == "in") t += $(i + 1) } END { print t }'
}
on=() off=()
for r in $(seq "$reps"); do
	off+=("$(run -XX:-PreserveFramePointer)")
	on+=("$(run -XX:+PreserveFramePointer)")
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
m_on=$(median "${on[@]}")
m_off=$(median "${off[@]}")
echo "  javac, 3 warm rounds of 200 classes, $reps interleaved runs each: without frame pointers ${m_off} ms, with ${m_on} ms (medians; runs: off ${off[*]}, on ${on[*]})"
awk -v a="$m_off" -v b="$m_on" 'BEGIN { printf "  with frame pointers / without: %.3f (%.1f%% more time with -XX:+PreserveFramePointer)\n", b / a, (b / a - 1) * 100 }'
