#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record.sh BUILD_DIR - figures of `fgcollect record`:
#   1. end-to-end symbolization throughput (bench_record: real symbolizer on libjvm.so, libc and
#      kallsyms, a 22k-blob code table with inline tables, deferred JIT settling, aggregation),
#      in frames/s on one core, against the bare lookups in the same run; target >= 1M/core;
#   2. collector CPU and peak RSS per JVM: `record` of one busy JVM (HotLoop in a namespace
#      container with the agent) at 99 and 999 Hz for DURATION s, and a `watch` daemon serving
#      that JVM (CPU over DURATION s, PSS and RSS; watch's processes together: itself and the
#      agent socket's confined child), each as % of one core; the watch in REPS interleaved
#      rounds against the same build with --no-sandbox (the socket served in one process), and
#      the per-round ratio.
#
#   LIBJVM    libjvm.so for part 1 (default: Debian JDK 17's)
#   SAMPLES   samples for part 1 (default 200000)
#   DURATION  seconds per measurement in part 2 (default 10)
#   REPS      rounds of the two watches (default 3)
set -euo pipefail
build=${1:?usage: bench/record/record.sh BUILD_DIR}
bin=$build/bench/bench_record
[[ -x $bin ]] || { echo "record bench: build the bench_record target first" >&2; exit 1; }
jvm=${LIBJVM:-/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so}
"$bin" "$jvm" "${SAMPLES:-200000}"

export FGCOLLECT=${FGCOLLECT:-$build/collector/fgcollect}
export FGAGENT=${FGAGENT:-$build/jvmti-agent/libfgagent.so}
export FG_BUILD_DIR=$build
. "$(dirname "$0")/../../tests/harness/lib.sh"
fg_init bench_record
fg_require_built
dur=${DURATION:-10}

FG_SOCK_DIR=$FG_TMP/sock
mkdir -p "$FG_SOCK_DIR"
chmod 0755 "$FG_SOCK_DIR"
fg_jvm_start hot HotLoop $(((2 + 2 * ${REPS:-3}) * (dur + 8) + 30))
fg_wait_log hot 30 'HotLoop ready'

echo "collector cost per JVM (one busy JVM: HotLoop, $(nproc) CPUs, ${dur} s each):"
for hz in 99 999; do
	/usr/bin/time -f '%U %S %M' -o "$FG_TMP/time.$hz" "$FGCOLLECT" record --pid "$FG_HOSTPID" \
		--freq "$hz" --duration "$dur" --socket "$FG_SOCK_DIR/fgcollect.sock" \
		-o "$FG_TMP/b$hz.folded" 2>"$FG_TMP/rec.$hz.err"
	read -r u s rss <"$FG_TMP/time.$hz"
	samples=$(grep -o '^fgcollect record: [0-9]* samples' "$FG_TMP/rec.$hz.err" | grep -o '[0-9]*' | head -n 1)
	hz="$hz" u="$u" s="$s" rss="$rss" d="$dur" n="$samples" awk 'BEGIN { hz = ENVIRON["hz"]; u = ENVIRON["u"]; s = ENVIRON["s"]; rss = ENVIRON["rss"]; d = ENVIRON["d"]; n = ENVIRON["n"]
		printf "  record %4d Hz: CPU %.2f s user + %.2f s sys = %.2f%% of one core, peak RSS %.1f MiB, %d samples (%.1f us CPU per sample)\n",
			hz, u, s, 100 * (u + s) / d, rss / 1024, n, n ? 1e6 * (u + s) / n : 0 }'
done

# watch's processes: itself and its children (the agent socket's confined process).
watch_pids() { echo "$FG_WATCH_PID" $(pgrep -P "$FG_WATCH_PID"); }
# cpu_ns PID...: the CPU time of their threads, in ns (schedstat: finer than clock ticks)
cpu_ns() { cat $(for p; do echo /proc/"$p"/task/*/schedstat; done) | awk '{ s += $1 } END { printf "%d", s }'; }
# sum_kib FIELD FILE PID...: a field of /proc/PID/FILE summed over the PIDs, in KiB
sum_kib() { local f=$1 file=$2; shift 2; for p; do f="$f" awk '$1 == ENVIRON["f"] { print $2 }' "/proc/$p/$file"; done | awk '{ s += $1 } END { print s + 0 }'; }

# measure_watch NAME [WATCH_OPTION...]: a watch serving the JVM, steady state, for DURATION s;
# prints a line and appends "NAME CPU%" to $FG_TMP/watch.cpu.
measure_watch() {
	local name=$1 pids t0 t1
	shift
	fg_watch_start "$@"
	fg_wait 10 fg_map_ok "$FG_HOSTPID" 'HotLoop::' || fg_fail "the agent did not connect to watch ($name)"
	sleep 2 # its replay done
	pids=$(watch_pids)
	t0=$(cpu_ns $pids)
	sleep "$dur"
	[[ $(watch_pids) == "$pids" ]] || fg_fail "watch's processes changed during the measurement ($pids, now $(watch_pids))"
	t1=$(cpu_ns $pids)
	# Proportional set size: pages the processes share (the binary, libraries) counted once.
	tmp="$FG_TMP" t="$((t1 - t0))" d="$dur" name="$name" n="$(echo $pids | wc -w)" rss="$(sum_kib VmRSS: status $pids)" \
		hwm="$(sum_kib VmHWM: status $pids)" pss="$(sum_kib Pss: smaps_rollup $pids)" awk 'BEGIN {
		t = ENVIRON["t"]; d = ENVIRON["d"]
		printf "  watch %-10s (%d process%s): CPU %.3f%% of one core, PSS %.1f MiB, RSS %.1f MiB (peak %.1f MiB)\n",
			ENVIRON["name"], ENVIRON["n"], ENVIRON["n"] == 1 ? "" : "es", 100 * t / 1e9 / d,
			ENVIRON["pss"] / 1024, ENVIRON["rss"] / 1024, ENVIRON["hwm"] / 1024
		printf "%s %.6f\n", ENVIRON["name"], 100 * t / 1e9 / d >> (ENVIRON["tmp"] "/watch.cpu") }'
	fg_watch_stop || true
}

# The confined child against the same build serving the socket in one process (--no-sandbox),
# in interleaved rounds (the first of each pair alternates).
reps=${REPS:-3}
echo "watch serving the JVM (steady state, ${dur} s each, $reps interleaved rounds): confined child against --no-sandbox"
: >"$FG_TMP/watch.cpu"
for ((r = 0; r < reps; r++)); do
	if ((r % 2 == 0)); then
		measure_watch sandboxed
		measure_watch one-process --no-sandbox
	else
		measure_watch one-process --no-sandbox
		measure_watch sandboxed
	fi
done
awk '{ k = ++n[$1]; v[$1, k] = $2 }
function median(name, k,   i, j, t, a) {
	for (i = 1; i <= k; i++) a[i] = v[name, i]
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
END {
	k = n["sandboxed"]
	for (i = 1; i <= k; i++) v["ratio", i] = v["one-process", i] > 0 ? v["sandboxed", i] / v["one-process", i] : 0
	lo = hi = v["ratio", 1]; for (i = 2; i <= k; i++) { if (v["ratio", i] < lo) lo = v["ratio", i]; if (v["ratio", i] > hi) hi = v["ratio", i] }
	printf "  median CPU: confined child %.3f%%, one process %.3f%% of one core; per-round ratio %.2f (%.2f-%.2f)\n",
		median("sandboxed", k), median("one-process", n["one-process"]), median("ratio", k), lo, hi
}' "$FG_TMP/watch.cpu"
