#!/bin/bash
# SPDX-License-Identifier: MIT
#
# alloc_budget.sh BUILD_DIR - what allocation profiling at the cost budget costs a service that
# allocates 500 MB/s, counted apart from the agent's own estimate. One AllocService JVM
# (tests/java: 4 workers at RATE requests/s, ~105 KB a request) with libfgagent.so at its
# defaults, no daemon. Each of REPS rounds holds three windows of WINDOW seconds, in turn (the
# order rotated a round):
#   idle   nothing recorded (the agent loaded, its events off);
#   floor  `fgcollect record --pid JVM --event alloc --alloc-interval 1073741824 --alloc-budget
#          0`: allocation sampling on with hardly a sample (what sampling on costs whatever
#          the interval: HotSpot's sampler on every TLAB refill, record's own loop);
#   rec    `fgcollect record --pid JVM --event alloc` at its defaults (--alloc-budget BUDGET,
#          1 unless told: the agent widens the interval to keep sampling under 1% of the JVM's
#          CPU; the stacks copied into the agent's ring and walked by record).
# A recorded window starts SETTLE seconds after record does. In each window `perf record -g -e
# cpu-clock -F 4000 -p JVM` profiles all the JVM's threads, schedstat gives the JVM's CPU, and
# `perf record -e cpu-clock -F 4000` of record and its sandboxed listener gives record's CPU (a
# sample 250 us). The JVM's perf samples are split by call chain:
#   hotspot    under HotSpot's JVMTI sampler (the allocation's notify of the sampler,
#              ThreadHeapSampler, the sampled-allocation event collector,
#              JvmtiExport::post_sampled_object_alloc), outside the agent's callback;
#   callback   under the agent's callback (on_sampled_alloc) and everything it calls;
#   agentthr   on the agent's own thread (fg-sender: its events, its budget, its sends);
#   slowpath   the rest of the allocation's way through the VM (MemAllocator, the TLAB's slow
#              path, the zeroing), which each sample takes: its share over idle's.
# The cost of a recorded window, in % of the JVM's CPU: hotspot + callback + agentthr + slowpath
# over idle's + record's CPU over the JVM's. Per round: the load average; the JVM's CPU (ms/s);
# floor's and rec's cost and parts; rec's samples a second (the agent's callbacks counted by a
# uprobe, `perf stat -e probe_libfgagent:on_sampled_alloc`, whose own samples (the kernel's
# uprobe handling) are left out of every part; where
# perf cannot place it, the workers' bytes from the service's own count over the interval that
# weighed the most bytes in 10 samples or more); rec less floor a sample, in us (the JVM's
# parts and record's apart: what a sample costs beyond sampling on); the agent's estimate for
# rec's window (those samples at its callbacks' time a sample, from record's summary, plus its
# fixed estimates outside them, over the JVM's CPU); and the JVM's CPU per request, rec over
# idle (the whole JVM, a cross-check too coarse for 1%). Then the medians over the rounds with
# their spread, and 95% bootstrap intervals of the medians of rec's cost and of the ratio.
# Needs perf and root (or perf_event_paranoid <= 1), python3. The JVM runs on the host.
# Env: JDK (default /usr/lib/jvm/java-17-openjdk-amd64), REPS (4), WINDOW (5 s), SETTLE (8 s),
#      RATE (5000 requests/s), BUDGET (1), OUTSIDE_US (the agent's fixed estimate a copied
#      sample outside its callbacks: EVBUDGET_COPY_OUTSIDE_NS of jvmti-agent/evprof/include/
#      evbudget.h), VERBOSE (record's summaries), KEEP (a path prefix: keep the perf data).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
jdk=${JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
reps=${REPS:-4}
window=${WINDOW:-5}
settle=${SETTLE:-8}
rate=${RATE:-5000}
budget=${BUDGET:-1}
here=$(dirname "${BASH_SOURCE[0]}")
# the budget's fixed estimate a copied sample, from the agent's source
outside=${OUTSIDE_US:-$(sed -n 's/^#define EVBUDGET_COPY_OUTSIDE_NS \([0-9]*\)u.*/\1/p' \
	"$here/../../jvmti-agent/evprof/include/evbudget.h" | awk '{ print $1 / 1000 }')}
fgc=$build/collector/fgcollect
agent=$build/jvmti-agent/libfgagent.so
jar=$build/tests/java/fg-workloads.jar
for f in "$fgc" "$agent" "$jar" "$jdk/bin/java"; do
	[[ -e $f ]] || { echo "alloc_budget: $f not found"; exit 1; }
done
command -v perf >/dev/null || { echo "alloc_budget: perf is not installed"; exit 1; }
command -v python3 >/dev/null || { echo "alloc_budget: python3 is not installed"; exit 1; }
# shellcheck source=bench/agent/stats.lib
. "$here/stats.lib"
# shellcheck source=bench/agent/vthread.lib
. "$here/vthread.lib"
tmp=$(mktemp -d /tmp/fg-bench-allocbudget.XXXXXX)
# The agent socket's directory: searchable by record's sandboxed listener.
chmod 0755 "$tmp"
jpid='' rpid='' probe=''
cleanup() {
	[[ -z $rpid ]] || { kill -INT "$rpid" 2>/dev/null || true; wait "$rpid" 2>/dev/null || true; }
	[[ -z $jpid ]] || { kill -TERM "$jpid" 2>/dev/null || true; wait "$jpid" 2>/dev/null || true; }
	[[ -z $probe ]] || perf probe -q -d "$probe" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mono() { python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))'; }
# requests LOG T0 T1 KEY: the service's count KEY (requests, bytes) between two CLOCK_MONOTONIC
# instants (its marks every 100 ms, interpolated).
requests() {
	P=svc-truth S="$2" E="$3" K="$4" awk '
	function at(t,   i) {
		if (t < ts[1] || t > ts[n]) return "none"
		for (i = 2; i <= n; i++)
			if (ts[i] >= t)
				return val[i - 1] + (val[i] - val[i - 1]) * (t - ts[i - 1]) / (ts[i] - ts[i - 1])
	}
	$1 == ENVIRON["P"] && $NF == "end" { for (i = 3; i < NF; i += 2) if ($i == ENVIRON["K"]) { n++; ts[n] = $2 + 0; val[n] = $(i + 1) + 0 } }
	END {
		a = at(ENVIRON["S"] + 0); b = at(ENVIRON["E"] + 0)
		if (n < 2 || a == "none" || b == "none") print 0; else printf "%.0f\n", b - a
	}' "$1"
}
# split DATA: "hotspot callback agentthr slowpath total" perf samples of the JVM by part.
split() {
	perf script -i "$1" -F comm,tid,ip,sym 2>/dev/null | awk '
	function flush(   i, s, p) {
		if (!n && comm == "") return
		p = "other"
		if (comm == "fg-sender") p = "agentthr"
		else {
			for (i = 1; i <= n; i++) {
				s = f[i]
				# the uprobe that counts the callbacks: the bench'"'"'s, not the agent'"'"'s
				if (s ~ /uprobe|swbp|exc_int3/) { p = "probe"; break }
				if (s ~ /^on_sampled_alloc$/) { p = "callback"; break }
				if (s ~ /notify_allocation_jvmti_sampler|ThreadHeapSampler|JvmtiSampledObjectAllocEventCollector|post_sampled_object_alloc/) p = "hotspot"
			}
			if (p == "other")
				for (i = 1; i <= n; i++)
					if (f[i] ~ /MemAllocator|allocate_inside_tlab|CollectedHeap::.*allocate|OptoRuntime::new_|InterpreterRuntime::(_new|newarray|anewarray|multianewarray)|TypeArrayKlass::allocate|ObjArrayKlass::allocate|InstanceKlass::allocate|oopFactory::new_|mem_clear|ObjAllocator|ObjArrayAllocator/) { p = "slowpath"; break }
		}
		c[p]++; if (p != "probe") tot++
		n = 0; comm = ""
	}
	/^[^ \t]/ { flush(); comm = $1; next }
	/^$/ { flush(); next }
	{ s = $2; sub(/\+0x[0-9a-f]+$/, "", s); f[++n] = s }
	END { flush(); printf "%d %d %d %d %d\n", c["hotspot"], c["callback"], c["agentthr"], c["slowpath"], tot }'
}

# The callbacks counted in each window: a uprobe on the agent's on_sampled_alloc (its own
# samples left out of the parts), or, where perf cannot place it, bytes over the interval.
probe=''
if perf probe -q -x "$agent" --add on_sampled_alloc 2>/dev/null; then
	probe=probe_libfgagent:on_sampled_alloc
fi
"$jdk/bin/java" "-agentpath:$agent=socket=$tmp/fg.sock" -cp "$jar" AllocService 100000 "$rate" \
	>"$tmp/jvm.out" 2>&1 &
jpid=$!
for _ in $(seq 60); do grep -q "AllocService ready" "$tmp/jvm.out" && break; sleep 1; done
grep -q "AllocService ready" "$tmp/jvm.out" || { echo "alloc_budget: AllocService did not start"; cat "$tmp/jvm.out"; exit 1; }
sleep 5
echo "alloc_budget: $("$jdk/bin/java" -version 2>&1 | head -n 1); AllocService at $rate requests/s;" \
	"$reps rounds of ${window} s idle, floor and rec, ${settle} s after record starts" \
	"(--alloc-budget $budget); $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
# one window: VARIANT ROUND -> a line of $tmp/win
window() {
	local v=$1 r=$2 c0 c1 q b t0 t1 rc0=0 rc1=0 sp cb=0 iv=0 opt=() calls spid
	case $v in
	floor) opt=(--alloc-interval 1073741824 --alloc-budget 0) ;;
	rec) opt=(--alloc-budget "$budget") ;;
	esac
	if [[ $v != idle ]]; then
		"$fgc" record --pid "$jpid" --socket "$tmp/fg.sock" --ctl "$tmp/nobody/ctl.sock" \
			--event alloc "${opt[@]}" --duration $((settle + window + 2)) \
			-o "$tmp/rec.folded" 2>"$tmp/$v$r.err" &
		rpid=$!
		sleep "$settle"
		# record's CPU: its process and its sandboxed listener's, by perf (threads that end
		# within the window keep their samples)
		perf record -q -e cpu-clock -F 4000 -p "$(pgrep -d, -P "$rpid" | sed "s/^/$rpid,/;s/,\$//")" \
			-o "$tmp/rc$v$r.data" -- sleep "$window" 2>/dev/null &
		rc0=$!
	fi
	t0=$(mono)
	c0=$(cpu_ns "$jpid")
	spid=''
	if [[ -n $probe ]]; then
		perf stat -x, -e "$probe" -p "$jpid" -o "$tmp/n$v$r" -- sleep "$window" 2>/dev/null &
		spid=$!
	fi
	perf record -q -g -e cpu-clock -F 4000 -p "$jpid" -o "$tmp/$v$r.data" -- sleep "$window" 2>/dev/null
	c1=$(cpu_ns "$jpid")
	t1=$(mono)
	[[ -z $spid ]] || wait "$spid" || true
	calls=$([[ -z $probe ]] || awk -F, '$3 ~ /on_sampled_alloc/ { print $1 + 0 }' "$tmp/n$v$r")
	if [[ $v != idle ]]; then
		wait "$rc0" || true
		rc0=0
		rc1=$(($(perf script -i "$tmp/rc$v$r.data" -F tid 2>/dev/null | wc -l) * 250000))
		rm -f "$tmp/rc$v$r.data"
		wait "$rpid" || { echo "alloc_budget: record failed:"; cat "$tmp/$v$r.err"; exit 1; }
		rpid=''
		[[ -z ${VERBOSE:-} ]] || sed 's/^/    /' "$tmp/$v$r.err"
		# the callbacks' own time a sample, and the interval in force at the end
		cb=$(sed -n 's/.*allocation sampling cost \([0-9.]*\) us of CPU per sample.*/\1/p' "$tmp/$v$r.err")
		# the interval that weighed the most bytes in at least 10 samples (the budget's once it
		# settled; not the first second's, nor the few samples drawn at the interval before)
		iv=$(sed -n 's/.*sampling intervals used ([^)]*): //p' "$tmp/$v$r.err" | tr ';' '\n' |
			sed -n 's/^ *\([0-9][0-9]*\) bytes: \([0-9]*\) samples, \([0-9.]*\) MiB.*/\2 \3 \1/p' |
			awk '$1 >= 10' | sort -k2,2g | tail -1 | cut -d' ' -f3)
	fi
	sleep 0.2 # a mark past the window
	q=$(requests "$tmp/jvm.out" "$t0" "$t1" requests)
	b=$(requests "$tmp/jvm.out" "$t0" "$t1" bytes)
	sp=$(split "$tmp/$v$r.data")
	[[ -z ${KEEP:-} ]] || cp "$tmp/$v$r.data" "$KEEP.$v$r.data"
	rm -f "$tmp/$v$r.data"
	# the samples in the window: the callbacks counted, or the bytes over the interval
	[[ -z $calls ]] || { b=$calls iv=1; }
	echo "$r $v $(cut -d' ' -f1 /proc/loadavg) $((c1 - c0)) $((rc1 - rc0)) $q $b ${iv:-0} ${cb:-0} $(((t1 - t0) / 1000)) $sp" >>"$tmp/win"
}
: >"$tmp/win"
for r in $(seq "$reps"); do
	case $((r % 3)) in
	1) order="idle floor rec" ;;
	2) order="rec idle floor" ;;
	0) order="floor rec idle" ;;
	esac
	for v in $order; do window "$v" "$r"; done
done
# per round, from the windows' lines: r v load jvm_ns rec_ns requests bytes interval cb_us
# window_us hotspot callback agentthr slowpath total
OUT="$outside" awk '
{ k = $1 " " $2; la[k] = $3; cpu[k] = $4; rc[k] = $5; q[k] = $6; by[k] = $7; iv[k] = $8; cb[k] = $9
  us[k] = $10; hs[k] = $11; ca[k] = $12; at[k] = $13; sp[k] = $14; tot[k] = $15; if ($1 > R) R = $1 }
function pct(a, k) { return tot[k] ? 100 * a / tot[k] : 0 }
function jvm(k, i) { return pct(hs[k], k) + pct(ca[k], k) + pct(at[k], k) + pct(sp[k], k) - pct(sp[i], i) }
function recp(k) { return cpu[k] ? 100 * rc[k] / cpu[k] : 0 }
END {
	for (r = 1; r <= R; r++) {
		i = r " idle"; f = r " floor"; e = r " rec"
		n = iv[e] ? by[e] / iv[e] : 0 # samples in the window
		ps = n / (us[e] / 1e6)
		# rec less floor, us a sample: the JVM side and record apart
		dj = n ? ((jvm(e, i) / 100) * cpu[e] - (jvm(f, i) / 100) * cpu[f] * us[e] / us[f]) / 1e3 / n : 0
		dr = n ? (rc[e] - rc[f] * us[e] / us[f]) / 1e3 / n : 0
		est = cpu[e] ? 100 * n * (cb[e] + ENVIRON["OUT"]) * 1e3 / cpu[e] : 0
		ratio = (q[e] > 0 && q[i] > 0 && cpu[i] > 0) ? (cpu[e] / q[e]) / (cpu[i] / q[i]) : 0
		printf "%d %s %.1f %.3f %.3f %.3f %.3f %.3f %.3f %.3f %.3f %.3f %.1f %.1f %.1f %.2f %.3f %.4f %.3f %d %.3f %.3f %.3f %.3f\n", r, la[e],
			cpu[e] / us[e], jvm(f, i) + recp(f), jvm(f, i), recp(f),
			pct(hs[e], e), pct(ca[e], e), pct(at[e], e), pct(sp[e], e) - pct(sp[i], i), recp(e),
			jvm(e, i) + recp(e), ps, dj, dr, cb[e], est, ratio, pct(sp[i], i), iv[e],
			pct(hs[f], f), pct(ca[f], f), pct(at[f], f), pct(sp[f], f) - pct(sp[i], i)
	}
}' "$tmp/win" >"$tmp/rounds"
echo "per round (in % of the JVM's CPU unless told): load average; JVM CPU ms/s; floor: cost" \
	"(JVM side, record); rec: hotspot, callback, agentthr, slowpath over idle, record, cost;" \
	"samples/s; rec less floor, us a sample: JVM side, record; callbacks us a sample (the" \
	"agent's clock); the agent's estimate; CPU per request rec / idle; interval"
awk '{ printf "  %d %5s %6.1f | %6.3f (%6.3f %6.3f) | %6.3f %6.3f %6.3f %6.3f %6.3f %6.3f | %5.1f | %6.1f %6.1f | %5.2f | %6.3f | %.4f | %d\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $20 }' "$tmp/rounds"
col() { I=$1 awk '{ print $(ENVIRON["I"]) }' "$tmp/rounds"; }
printf "median (spread) over %d rounds:\n" "$reps"
i=4
for k in "floor: cost" "floor: JVM side" "floor: record" "rec: hotspot" "rec: callback" \
	"rec: agentthr" "rec: slowpath" "rec: record" "rec: cost" "rec: samples/s" \
	"rec-floor: JVM us/sample" "rec-floor: record us/sample" "callbacks us/sample" \
	"agent's estimate"; do
	printf "  %-28s %8.3f  (%s)\n" "$k" "$(col $i | median)" "$(col $i | spread)"
	i=$((i + 1))
done
i=21
for k in "floor: hotspot" "floor: callback" "floor: agentthr" "floor: slowpath"; do
	printf "  %-28s %8.3f  (%s)\n" "$k" "$(col $i | median)" "$(col $i | spread)"
	i=$((i + 1))
done
printf "  %-28s %8.3f  (%s)\n" "slowpath idle, % of samples" "$(col 19 | median)" "$(col 19 | spread)"
printf "  rec's cost, 95%% bootstrap interval of the median: %s %%\n" "$(col 12 | boot_ci)"
printf "  CPU per request rec / idle (whole JVM): %.4f (%s), 95%% interval %s\n" "$(col 18 | median)" \
	"$(col 18 | spread)" "$(col 18 | boot_ci)"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
