#!/bin/bash
# SPDX-License-Identifier: MIT
#
# alloc_perf.sh BUILD_DIR - where a JVM's extra CPU goes while its allocations are recorded:
# one AllocService JVM (tests/java) with libfgagent.so=allocstack=copy beside a `fgcollect
# watch`, profiled with `perf record -e cpu-clock -F 4000 -p JVM` for WINDOW seconds with
# nothing recorded, then for WINDOW seconds starting SETTLE seconds after `fgcollect record
# --event alloc --alloc-budget 0` (a sample every 512 KiB), REPS times. Prints the recorded
# windows' extra perf samples by kind of symbol (HotSpot's sampling outside the callback, the
# agent's callback, the compiled methods announced when the code tables go on, the kernel, the
# JVM's Java code, the rest) in us per allocation sample (each perf sample 1 / 4000 s over the
# windows' samples, from record's count over its duration), and the announcement's CPU by
# second of each window.
# Needs perf and root (or perf_event_paranoid <= 1). The JVM runs on the host.
# Env: JDK (default /usr/lib/jvm/java-17-openjdk-amd64), REPS (3), WINDOW (6 s), SETTLE (2 s),
#      RATE (5000 requests/s).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
jdk=${JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
reps=${REPS:-3}
window=${WINDOW:-6}
settle=${SETTLE:-2}
rate=${RATE:-5000}
fgcollect=$build/collector/fgcollect
agent=$build/jvmti-agent/libfgagent.so
jar=$build/tests/java/fg-workloads.jar
for f in "$fgcollect" "$agent" "$jar" "$jdk/bin/java"; do
	[[ -e $f ]] || { echo "alloc_perf: $f not found"; exit 1; }
done
command -v perf >/dev/null || { echo "alloc_perf: perf is not installed"; exit 1; }
tmp=$(mktemp -d /tmp/fg-bench-allocperf.XXXXXX)
# The agent socket's directory must be searchable by the daemon's sandboxed listener (and by
# agents of any uid); the control socket's stays ours alone.
chmod 0755 "$tmp"
mkdir -m 0700 "$tmp/ctl"
wpid='' jpid=''
cleanup() {
	[[ -z $jpid ]] || { kill -TERM "$jpid" 2>/dev/null || true; wait "$jpid" 2>/dev/null || true; }
	[[ -z $wpid ]] || { kill -TERM "$wpid" 2>/dev/null || true; wait "$wpid" 2>/dev/null || true; }
	rm -rf "$tmp"
}
trap cleanup EXIT

"$fgcollect" watch --socket "$tmp/s" --ctl "$tmp/ctl/c" 2>"$tmp/watch.log" &
wpid=$!
for _ in $(seq 50); do [[ -S $tmp/s ]] && break; sleep 0.1; done
"$jdk/bin/java" -XX:+PreserveFramePointer "-agentpath:$agent=socket=$tmp/s,allocstack=copy" \
	-cp "$jar" AllocService 100000 "$rate" >"$tmp/jvm.out" 2>&1 &
jpid=$!
for _ in $(seq 60); do grep -q "AllocService ready" "$tmp/jvm.out" && break; sleep 1; done
grep -q "AllocService ready" "$tmp/jvm.out" || { echo "alloc_perf: AllocService did not start"; exit 1; }
sleep 5
samples=0
echo "alloc_perf: $("$jdk/bin/java" -version 2>&1 | head -n 1), $reps rounds of ${window} s idle and ${window} s recorded ${settle} s after record starts"
for r in $(seq "$reps"); do
	echo "round $r: load average $(cut -d' ' -f1-3 /proc/loadavg)"
	perf record -q -e cpu-clock -F 4000 -p "$jpid" -o "$tmp/idle$r.data" -- sleep "$window" 2>/dev/null
	"$fgcollect" record --pid "$jpid" --ctl "$tmp/ctl/c" --event alloc --alloc-budget 0 \
		--duration $((settle + window + 2)) -o "$tmp/rec$r.folded" 2>"$tmp/rec$r.err" &
	rpid=$!
	sleep "$settle"
	perf record -q -e cpu-clock -F 4000 -p "$jpid" -o "$tmp/rec$r.data" -- sleep "$window" 2>/dev/null
	wait "$rpid" || true
	# record's samples a second over its duration, times the window
	n=$(sed -n 's/.* \([0-9][0-9]*\) allocation samples in \([0-9.]*\) s .*/\1 \2/p' "$tmp/rec$r.err" |
		W="$window" awk '{ w = ENVIRON["W"] + 0; if ($2 > 0) printf "%d", $1 / $2 * w }')
	echo "  record: $(grep -o '[0-9]* allocation samples in [0-9.]* s' "$tmp/rec$r.err" || echo 'no count')"
	samples=$((samples + ${n:-0}))
	for k in idle rec; do
		perf report -i "$tmp/$k$r.data" --stdio --sort dso,sym -n 2>/dev/null | grep -v '^#' | grep -v '^$' |
			K="$k" awk '{ k = ENVIRON["K"]; n = $2; $1 = ""; $2 = ""; sub(/^ +/, ""); gsub(/tid [0-9]+/, "tid"); print k "\t" n "\t" $0 }' >>"$tmp/sym.tsv"
	done
	perf script -i "$tmp/rec$r.data" -F time,ip,sym 2>/dev/null |
		awk '{ t = $1; sub(/:$/, "", t); t += 0; if (NR == 1) t0 = t; b = int(t - t0)
			if ($0 ~ /ScopeDesc|jmethod_id|methodset|fill_lines|resource_allocate|create_inline|klass_name|post_compiled_method_load|put_pc_entries|line_at/) { c[b]++; n++ } }
			END { printf "  compiled methods announced: %.0f ms of CPU in the window, by second:", n / 4; for (i = 0; i < 7; i++) printf " %d", c[i]; print "" }'
done
echo "extra CPU of the recorded windows over the idle ones, us per allocation sample ($samples samples):"
N="$samples" awk -F'\t' 'BEGIN { n = ENVIRON["N"] + 0 }

function kind(k) {
	if (k ~ /ScopeDesc|jmethod_id|methodset|fill_lines|fill_chain|resource_allocate|create_inline|klass_name|post_compiled_method_load|events_code_load|put_pc_entries|line_at|CodeHeap::next_used|PcDesc|scope_desc_at|decode_object_values|methodHandle|HandleMark::pop|intern_find|os::malloc|os::free|malloc|_int_|free|unlink_chunk/) return "compiled methods announced"
	if (k ~ /stackring_put|on_sampled_alloc|alloc_event|vmanchor|__tls_get_addr|pthread_once|memmove|take32/) return "the agent'"'"'s callback"
	if (k ~ /check_for_sampling|post_sampled_object_alloc|SampledObjectAlloc|OopStorage|oop_access_barrier|is_Java_thread|memset|MemAllocator|ObjAllocator|new_array_C|ThreadHeapSampler|JvmtiThreadState|JvmtiEnv|JvmtiExport/) return "HotSpot'"'"'s sampling"
	if (k ~ /kernel/) return "kernel"
	if (k ~ /JIT/) return "Java code"
	return "the rest"
}
{ d[kind($3)] += ($1 == "rec" ? $2 : -$2) }
END { for (x in d) printf "  %-28s %8.2f\n", x, (n > 0 ? d[x] * 250 / n : 0) }' "$tmp/sym.tsv" | sort
