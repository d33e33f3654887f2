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
#      agent socket's confined child), each as % of one core.
#
#   LIBJVM    libjvm.so for part 1 (default: Debian JDK 17's)
#   SAMPLES   samples for part 1 (default 200000)
#   DURATION  seconds per measurement in part 2 (default 10)
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
fg_jvm_start hot HotLoop $((4 * dur + 30))
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

fg_watch_start
fg_wait 10 fg_map_ok "$FG_HOSTPID" 'HotLoop::' || fg_fail "the agent did not connect to watch"
# watch's processes: itself and its children (the agent socket's confined process).
watch_pids() { echo "$FG_WATCH_PID" $(pgrep -P "$FG_WATCH_PID"); }
pids=$(watch_pids)
# cpu_ns PID...: the CPU time of their threads, in ns (schedstat: finer than clock ticks)
cpu_ns() { cat $(for p; do echo /proc/"$p"/task/*/schedstat; done) | awk '{ s += $1 } END { printf "%d", s }'; }
t0=$(cpu_ns $pids)
sleep "$dur"
[[ $(watch_pids) == "$pids" ]] || fg_fail "watch's processes changed during the measurement ($pids, now $(watch_pids))"
t1=$(cpu_ns $pids)
rss=$(for p in $pids; do awk '/^VmRSS/ { print $2 }' "/proc/$p/status"; done | awk '{ s += $1 } END { print s }')
hwm=$(for p in $pids; do awk '/^VmHWM/ { print $2 }' "/proc/$p/status"; done | awk '{ s += $1 } END { print s }')
# Proportional set size: pages the processes share (the same binary and libraries) counted once.
pss=$(for p in $pids; do awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup"; done | awk '{ s += $1 } END { print s }')
t="$((t1 - t0))" d="$dur" rss="$rss" hwm="$hwm" pss="$pss" n="$(echo $pids | wc -w)" awk 'BEGIN { t = ENVIRON["t"]; d = ENVIRON["d"]; rss = ENVIRON["rss"]; hwm = ENVIRON["hwm"]; pss = ENVIRON["pss"]
	printf "  watch (1 JVM, steady state; its %d processes together): CPU %.3f%% of one core, PSS %.1f MiB, RSS %.1f MiB (peak %.1f MiB)\n",
		ENVIRON["n"], 100 * t / 1e9 / d, pss / 1024, rss / 1024, hwm / 1024 }'
fg_watch_stop || true
