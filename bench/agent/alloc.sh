#!/bin/bash
# SPDX-License-Identifier: MIT
#
# alloc.sh BUILD_DIR - what allocation profiling costs a JVM that allocates fast, and how close
# its profile comes to the JVM's own count.
#  1. Cost: AllocService (tests/java: worker threads answering synthetic requests at a fixed
#     RATE, ~105 KB allocated per request: 500+ MB/s at the default rate) with libfgagent.so,
#     streaming to a `fgcollect watch` for the whole run, one JVM per JDK. That JVM's agent takes
#     its samples' stacks with GetStackTrace (ALLOCSTACK, default jvmti; auto: the agent's
#     default, the copy while a recording reads the ring). Its variants, interleaved per round
#     (none, alloc, fixed, ...; every other pass in the reverse order, so a variant and its
#     baseline sit side by side and a drift linear over two passes weighs them alike):
#       none   nobody records: the agent connected, its events off;
#       aa     none again on alloc's schedule (SETTLE seconds before its window, first in the
#              passes alloc is last): paired with none as alloc is, it reads what the pairing
#              itself makes of two windows of the same state (1.000 when unbiased; AA=0
#              leaves it out);
#       alloc  `fgcollect record --pid JVM --event alloc --alloc-budget BUDGET` (a sample every
#              512 KiB, the interval widened by the agent to keep sampling under BUDGET% of
#              the JVM's CPU) through the daemon, started SETTLE seconds before the measured
#              window and stopped (Ctrl-C) right after it;
#       fixed  the same with --alloc-budget 0: a sample every 512 KiB all along, each stack
#              taken with GetStackTrace in the JVM at allocstack=jvmti (what one sample of the
#              jvmti path costs; FIXED=0 leaves it out);
#       live   `record --event live --alloc-budget 0`: fixed's samples, each object tagged and
#              its ObjectFree sent (what tracking the live heap adds; LIVE=0 leaves it out).
#     ring: one more AllocService JVM with libfgagent.so=allocstack=copy (each sample's last Java
#     frame and the top of its stack copied into the agent's ring, no GetStackTrace; fgcollect
#     reads the ring and walks each copy on the host), alive beside the first for all the rounds
#     and recorded like fixed (--alloc-budget 0) in its turn: the JVM's side of the copy path,
#     and fgcollect's; weighed against ringnone, the same JVM in a round nobody records it
#     (two JVMs of one service differ in CPU per request by more than a sample costs).
#     RING=0 leaves both out.
#     Two more AllocService JVMs, alive beside the first for all the rounds, are variants of
#     every round against the first JVM's none: the floor of any JVMTI allocation profiler at the
#     same interval (bench/agent/alloc_floor.c), sampling with an empty callback (floor) and
#     with a GetStackTrace of at most 128 frames in it (stack: what naming the frames through
#     JVMTI costs, as libfgagent.so's default depth asks). FLOOR=0 leaves them out.
#     Two more beside them measure a stack copy without libfgagent.so (alloc_floor.c copy=):
#     copycb, the callback taking its registers and COPY bytes of its stack into a preallocated
#     ring; copy, the same with the floor agent's sender thread shipping each copy into a unix
#     socket drained outside the JVM. Printed beside the JVM's extra CPU per sample: its ratio to
#     the floor's and to fixed's, and each floor agent's own median time in its callback (robust
#     to a loaded machine, where the CPU per request is not). COPY=0 leaves them out.
#     The two paths side by side: the JVM's extra CPU per sample of fixed (jvmti) and ring
#     (copy) and their ratio, fgcollect's CPU per sample of each in the measured window (the
#     daemon's and record's for fixed, record's for ring: its rings are read by record), and the
#     copy path's net saving (what the JVM saves less what fgcollect spends more).
#     Each round measures ROUND seconds of every JVM of the part at once (one reader of all their
#     threads' schedstat at each end): each JVM's CPU, of all its threads and by kind, the
#     requests it answered and the bytes its workers allocated (its own marks, interpolated at
#     the window's ends), and fgcollect's CPU (the daemon's and record's). Printed: medians per
#     variant (CPU us per request, MB/s, requests/s), the per-round ratio of CPU per request
#     alloc/none (median, spread, 95% bootstrap interval of the median), the JVM's CPU by kind
#     of thread (the workers, where the sampling callbacks run; the agent's own threads; the
#     rest), the JVM's extra CPU per allocation sample (per variant; for those without a
#     sample count, bytes over the interval), what 1% of the JVM's CPU allows per sample, and
#     fgcollect's CPU (daemon and record) as % of the JVM's, and alloc/none against the budget's
#     goal (1 + BUDGET / 100) with the intervals record's summary says were used, the controlled
#     alloc/none beside aa/none, and the cost derived: the window's samples/s (its bytes over
#     the interval that weighed the most bytes) x (the callbacks' own time per sample +
#     HOTSPOT_US) over the JVM's CPU a second. AllocService allocates 2-3 GB per
#     second of its CPU, far more per unit of work than most services: the cost per sample says
#     what another service pays (samples/s x cost per sample over its CPU).
#     Paired, round by round, for each variant with a baseline in its own JVM (alloc, fixed, live
#     against none; ring against ringnone; asprof against asprofnone): its extra CPU per sample
#     from the whole JVM, from its worker threads only (GC and JIT threads, the same work in
#     both windows, left out with their noise), and from its workers less the drift between the
#     two windows that the other JVMs' workers show (controlled: their mean ratio of CPU per
#     request, those JVMs being in the same state in both windows); each as the median of the
#     rounds' figures, their interquartile range and a 95% bootstrap interval of the median;
#     the same as ratios of the JVM's CPU per request (the budget's alloc/none), and
#     copy/async-profiler (ring/asprof) as a ratio of the medians with a 95% bootstrap interval
#     over the rounds resampled in pairs.
#  2. Quality: AllocTruth (tests/java; four threads allocating known volumes of known classes;
#     its agent at its default allocstack) recorded QREPS times at the defaults (--alloc-budget
#     BUDGET) around a burst of QDUR seconds of its allocation:
#     each thread's share of the bytes against the JVM's own count of the burst (ThreadMXBean),
#     the total, and the share of bytes under the allocating method with its class as the leaf;
#     then the bytes of the copies lapped before they were read ([lost before read], no thread).
#  3. async-profiler in the same runs, when ASPROF names its libasyncProfiler.so (built apart
#     from this repository; its options as of its 4.x docs/ProfilerOptions.md): a second
#     AllocService JVM with -agentpath:$ASPROF (and no fgagent), alive beside the first for all
#     the rounds, idle in asprofnone and, in asprof, profiling alloc at 512 KiB from a
#     `asprof start -e alloc --alloc 512k PID` before the settle to a `stop` after the window
#     (the launcher ASPROF_BIN, default ../bin/asprof beside the library); asprof is weighed
#     against asprofnone and printed beside ours. Without the launcher the library profiles from
#     the JVM's start (start,event=alloc,alloc=512k) and asprof is weighed against the first
#     JVM's none. And an AllocTruth
#     JVM with the same options plus threads,total, profiled from its start through QREPS
#     bursts, whose profile is held to the JVM's own count since its start (its last
#     alloc-truth line) as ours is. Without ASPROF one line says the comparison was not run.
# Needs root only for nothing in particular (no perf events for alloc); the JVMs run on the host.
# Env: JDKS (default every JDK under /usr/lib/jvm), REPS (5), ROUND (8 s), SETTLE (2 s),
#      WARM (5 s), RATE (5000 requests/s), QUALITY (1), QREPS (3), QDUR (10 s), LOCK (a file to
#      flock around each pass of the variants), ASPROF (path of libasyncProfiler.so), FLOOR (1),
#      BUDGET (1: --alloc-budget of the alloc variant and of the quality recordings), LIVE (1),
#      COPY (16384 bytes of stack per sample in copycb and copy; 0: neither), RING (1),
#      FIXED (1), ALLOCSTACK (jvmti: the first JVM's allocstack), AA (1: the aa variant, below),
#      HOTSPOT_US (3: HotSpot's sampling outside the callbacks per sample, for the derived cost).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
reps=${REPS:-5}
round=${ROUND:-8}
settle=${SETTLE:-2}
warm=${WARM:-5}
rate=${RATE:-5000}
fgcollect=$build/collector/fgcollect
agent=$build/jvmti-agent/libfgagent.so
floor=$build/bench/libfg_alloc_floor.so
jar=$build/tests/java/fg-workloads.jar
for f in "$fgcollect" "$agent" "$jar" "$floor"; do
	[[ -e $f ]] || { echo "alloc: $f not built (cmake --build $build)"; exit 1; }
done
asprof=${ASPROF:-}
if [[ -n $asprof && ! -r $asprof ]]; then
	echo "alloc: ASPROF=$asprof is not a readable file"
	exit 1
fi
budget=${BUDGET:-1}
allocstack=${ALLOCSTACK:-jvmti}
variants="none alloc"
[[ ${AA:-1} == 0 ]] || variants="aa $variants"
[[ ${FIXED:-1} == 0 ]] || variants+=" fixed"
[[ ${LIVE:-1} == 0 ]] || variants+=" live"
copy=${COPY:-16384}
[[ ${FLOOR:-1} == 0 ]] || variants+=" floor stack"
[[ ${FLOOR:-1} == 0 || $copy == 0 ]] || variants+=" copycb copy"
[[ ${RING:-1} == 0 ]] || variants+=" ringnone ring"
# async-profiler's launcher beside its library: with it, its JVM loads the library idle and each
# asprof round starts and stops alloc profiling by attaching, so asprofnone (that JVM idle) is
# its own baseline; without it, the library profiles from the JVM's start and asprof is weighed
# against the first JVM's none.
asprof_bin=${ASPROF_BIN:-$(dirname "${asprof:-.}")/../bin/asprof}
if [[ -n $asprof ]]; then
	if [[ -x $asprof_bin ]]; then variants+=" asprofnone asprof"; else asprof_bin='' variants+=" asprof"; fi
fi
# The variants run by a JVM of their own: its pid and output (set when it starts).
declare -A xpid=() xlog=()
# base VARIANT: the variant its CPU per request is weighed against: the same JVM idle.
base() {
	case $1 in
	ring) echo ringnone ;;
	asprof) [[ -n $asprof_bin ]] && echo asprofnone || echo none ;;
	*) echo none ;;
	esac
}
. "$src/tests/harness/lib.sh"
. "$src/tests/e2e/events_lib.sh"
FG_TEST=alloc
cfg=bench

tmp=$(mktemp -d /tmp/fg-bench-alloc.XXXXXX)
chmod 0755 "$tmp"
mkdir -m 0755 "$tmp/sock"
mkdir -m 0700 "$tmp/ctl"
sock=$tmp/sock/fgcollect.sock
ctlsock=$tmp/ctl/ctl.sock
wpid=
jpid=
apid=
rpid=
drain=
cleanup() {
	set +e
	[[ -n $rpid ]] && kill -INT "$rpid" 2>/dev/null && wait "$rpid" 2>/dev/null
	[[ -n $jpid ]] && kill -TERM "$jpid" 2>/dev/null && wait "$jpid" 2>/dev/null
	[[ -n $apid ]] && kill -TERM "$apid" 2>/dev/null && wait "$apid" 2>/dev/null
	[[ -n $drain ]] && kill -TERM "$drain" 2>/dev/null && wait "$drain" 2>/dev/null
	for v in "${!xpid[@]}"; do kill -TERM "${xpid[$v]}" 2>/dev/null && wait "${xpid[$v]}" 2>/dev/null; done
	[[ -n $wpid ]] && kill -TERM "$wpid" 2>/dev/null && wait "$wpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# The shared helpers' fg_fail reports and exits; no containers here.
FG_TMP=$tmp

median() { sort -g | awk '{a[NR]=$1} END {if (NR) print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2; else print "nan"}'; }
spread() { sort -g | awk 'NR==1 {lo=$1} {hi=$1} END {if (NR) printf "%.4g..%.4g", lo, hi; else printf "-"}'; }
# boot_ci: "LO HI", a 95% bootstrap interval of the median of the values on stdin (2000
# resamples, fixed seed).
boot_ci() {
	awk 'function isort(a, n,   i, j, t) { for (i = 2; i <= n; i++) { t = a[i]
			for (j = i - 1; j > 0 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t } }
	function med(a, n) { return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
	{ x[NR] = $1 }
	END { if (NR == 0) { print "0 0"; exit } srand(1); B = 2000
	      for (b = 1; b <= B; b++) { for (i = 1; i <= NR; i++) y[i] = x[int(rand() * NR) + 1]
					 isort(y, NR); m[b] = med(y, NR) }
	      isort(m, B); printf "%.4f %.4f\n", m[int(B * 0.025) + 1], m[int(B * 0.975)] }'
}

"$fgcollect" watch --socket "$sock" --ctl "$ctlsock" 2>"$tmp/watch.log" &
wpid=$!
fg_wait 5 test -S "$sock" || { echo "alloc: watch did not start"; cat "$tmp/watch.log"; exit 1; }

# jvm_start MAINCLASS ARG...: the JVM with the agent on the daemon's socket (AGENTOPTS: more of
# its options), its output in $tmp/jvm.out; waits for "MAINCLASS ready".
jvm_start() {
	local cls=$1
	shift
	"$jdk/bin/java" -XX:+PreserveFramePointer "-agentpath:$agent=socket=$sock${AGENTOPTS:-}" -cp "$jar" "$cls" "$@" \
		>"$tmp/jvm.out" 2>&1 &
	jpid=$!
	fg_wait 60 grep -q "$cls ready" "$tmp/jvm.out" || { echo "alloc: $cls did not start"; cat "$tmp/jvm.out"; exit 1; }
}
jvm_stop() {
	kill -TERM "$jpid" 2>/dev/null || true
	wait "$jpid" 2>/dev/null || true
	jpid=
}

# asprof_start OUT MAINCLASS ARG...: the JVM with async-profiler (from its start: alloc at
# 512 KiB, collapsed into $tmp/OUT.collapsed at its exit; QOPTS more of its options) and no
# fgagent, its output in $tmp/OUT.out, its pid in apid; waits for "MAINCLASS ready".
asprof_start() {
	local out=$1 cls=$2
	shift 2
	"$jdk/bin/java" -XX:+PreserveFramePointer \
		"-agentpath:$asprof=start,event=alloc,alloc=512k,${QOPTS:-}file=$tmp/$out.collapsed,collapsed" \
		-cp "$jar" "$cls" "$@" >"$tmp/$out.out" 2>&1 &
	apid=$!
	fg_wait 60 grep -q "$cls ready" "$tmp/$out.out" ||
		{ echo "alloc: $cls with async-profiler did not start"; cat "$tmp/$out.out"; exit 1; }
}
asprof_stop() {
	kill -TERM "$apid" 2>/dev/null || true
	wait "$apid" 2>/dev/null || true
	apid=
}

# floor_start VARIANT OPTIONS: an AllocService JVM with the allocation floor agent
# (alloc_floor.c OPTIONS) and no fgagent, its output in $tmp/VARIANT.out; waits for it.
floor_start() {
	local v=$1 opts=$2
	"$jdk/bin/java" -XX:+PreserveFramePointer "-agentpath:$floor=$opts" -cp "$jar" AllocService 100000 "$rate" \
		>"$tmp/$v.out" 2>&1 &
	xpid[$v]=$!
	xlog[$v]=$tmp/$v.out
	fg_wait 60 grep -q "AllocService ready" "$tmp/$v.out" ||
		{ echo "alloc: AllocService with the $v agent did not start"; cat "$tmp/$v.out"; exit 1; }
}
# ring_start: an AllocService JVM with libfgagent.so=allocstack=copy on the daemon's socket, its
# output in $tmp/ring.out; waits for it.
ring_start() {
	"$jdk/bin/java" -XX:+PreserveFramePointer "-agentpath:$agent=socket=$sock,allocstack=copy,log=info" \
		-cp "$jar" AllocService 100000 "$rate" >"$tmp/ring.out" 2>&1 &
	xpid[ring]=$! xpid[ringnone]=$!
	xlog[ring]=$tmp/ring.out xlog[ringnone]=$tmp/ring.out
	fg_wait 60 grep -q "AllocService ready" "$tmp/ring.out" ||
		{ echo "alloc: AllocService with allocstack=copy did not start"; cat "$tmp/ring.out"; exit 1; }
}
floors_stop() {
	local v
	for v in "${!xpid[@]}"; do
		kill -TERM "${xpid[$v]}" 2>/dev/null || true
		wait "${xpid[$v]}" 2>/dev/null || true
	done
	xpid=() xlog=()
}

# proc_cpu_ns PID: the CPU the process used since it started, exited threads included
# (/proc/PID/stat utime + stime, in clock ticks), in ns; 0 when it is gone.
proc_cpu_ns() {
	local st
	st=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
	st=${st##*) }
	read -r -a f <<<"$st"
	echo $(((f[11] + f[12]) * 1000000000 / hz))
}
hz=$(getconf CLK_TCK)

# snap PID...: a line per PID, "PID MONO_NS CPU_NS WORKERS_NS AGENT_NS OTHER_NS": the time
# (CLOCK_MONOTONIC, System.nanoTime's clock) and the CPU of the JVM's live threads (schedstat),
# all and by kind: the service's workers (fg-svc-*: the sampling callbacks run there), the
# agent's own (fg-sender, nng:*), the rest (GC, JIT, ...), each PID read at its own time. One
# process for all the JVMs, so their windows start and end within a few ms of each other.
snap() {
	/usr/bin/python3 -c 'import os, sys, time
for pid in sys.argv[1:]:
    t = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    c = [0, 0, 0]
    try:
        tasks = os.listdir("/proc/%s/task" % pid)
    except OSError:
        tasks = []
    for task in tasks:
        d = "/proc/%s/task/%s/" % (pid, task)
        try:
            comm = open(d + "comm").read().strip()
            ns = int(open(d + "schedstat").read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        k = 0 if comm.startswith("fg-svc-") else 1 if comm == "fg-sender" or comm.startswith("nng:") else 2
        c[k] += ns
    print(pid, t, sum(c), *c)' "$@"
}

# jkey VARIANT: the JVM a variant runs in: main (the first JVM) or its own (ring for ring and
# ringnone, asprof for asprof and asprofnone, the floor agents' by name).
jkey() {
	case $1 in
	aa | none | alloc | fixed | live) echo main ;;
	ring | ringnone) echo ring ;;
	asprof | asprofnone) echo asprof ;;
	*) echo "$1" ;;
	esac
}
# jvms: the keys of the JVMs alive in part 1 ("main" and one per JVM of its own).
jvms() {
	local v k out=main
	for v in $variants; do
		k=$(jkey "$v")
		[[ " $out " == *" $k "* ]] || out+=" $k"
	done
	echo "$out"
}

# round VARIANT: one measured window, every JVM of part 1 measured in it; appends "CPU_NS
# REQUESTS BYTES WINDOW_NS FGCOLLECT_NS WORKERS_NS AGENT_NS OTHER_NS" to $tmp/w.VARIANT.JVM for
# each JVM (fgcollect's CPU only in the variant's own), and the variant's own JVM's line to
# $tmp/VARIANT.
round() {
	local v=$1 k pid log f0 f1 r0=0 r1=0 own keys pids=() p t0 c0 w0 a0 o0 t1 c1 w1 a1 o1 fc
	own=$(jkey "$v")
	keys=$(jvms)
	for k in $keys; do pids+=("$(kpid "$k")"); done
	pid=$(kpid "$own")
	if [[ $v == alloc || $v == fixed || $v == live || $v == ring ]]; then
		"$fgcollect" record --pid "$pid" --ctl "$ctlsock" --event "$([[ $v == live ]] && echo live || echo alloc)" \
			--duration $((settle + round + 60)) \
			--alloc-budget "$([[ $v == alloc ]] && echo "$budget" || echo 0)" \
			-o "$tmp/rec.folded" 2>"$tmp/rec.err" &
		rpid=$!
	fi
	if [[ $v == asprof && -n $asprof_bin ]]; then
		"$asprof_bin" start -e alloc --alloc 512k "$pid" >"$tmp/asprof.ctl" 2>&1 ||
			{ echo "alloc: asprof start failed"; cat "$tmp/asprof.ctl"; exit 1; }
	fi
	# Only a window that starts something waits for it to settle, and aa, which stands for
	# alloc without its recording.
	if [[ -n $rpid || $v == aa || ($v == asprof && -n $asprof_bin) ]]; then sleep "$settle"; else sleep 0.3; fi
	f0=$(proc_cpu_ns "$wpid")
	snap "${pids[@]}" >"$tmp/snap0"
	[[ -n $rpid ]] && r0=$(proc_cpu_ns "$rpid")
	sleep "$round"
	f1=$(proc_cpu_ns "$wpid")
	snap "${pids[@]}" >"$tmp/snap1"
	[[ -n $rpid ]] && r1=$(proc_cpu_ns "$rpid")
	[[ $own != main ]] && f1=$f0 # a JVM of its own, no daemon
	if [[ -n $rpid ]]; then
		kill -0 "$rpid" 2>/dev/null || { echo "alloc: record ended early"; cat "$tmp/rec.err"; exit 1; }
		kill -INT "$rpid"
		wait "$rpid" || { echo "alloc: record failed"; cat "$tmp/rec.err"; exit 1; }
		rpid=
		cp "$tmp/rec.err" "$tmp/rec.last.$v.err"
		[[ $v != fixed && $v != ring && $v != alloc ]] ||
			sed -n "s/.*allocation sampling cost \([0-9.]*\) us of CPU per sample in the agent's callbacks.*/\1/p" "$tmp/rec.err" >>"$tmp/cbcost.$v"
		# the interval that weighed the most bytes: the one the budget held through the window
		[[ $v != alloc ]] || sed -n 's/.*sampling intervals used ([^)]*): //p' "$tmp/rec.err" | tr ';' '\n' |
			awk '$2 == "bytes:" && $(NF - 1) + 0 > m { m = $(NF - 1) + 0; i = $1 } END { print i + 0 }' >>"$tmp/ival.alloc"
		[[ $v != alloc ]] ||
			sed -n "s/.*us of CPU per sample in the agent's callbacks ([0-9]* samples, \([0-9.]*\)% of the JVM's.*/\1/p" "$tmp/rec.err" >>"$tmp/cbpct.alloc"
		[[ $v != ring ]] || sed -n "s/.*took \([0-9.]*\) us of the collector's CPU per copy.*/\1/p" "$tmp/rec.err" >>"$tmp/ringcost"
		# live's summary counts the samples still live: its rate is fixed's (same interval)
		[[ $v == live || $v == ring ]] || sed -n 's/.*: \([0-9]*\) allocation samples in \([0-9.]*\) s .*/\1 \2/p' "$tmp/rec.err" |
			awk '$2 > 0 { printf "%.1f\n", $1 / $2 }' >>"$tmp/samples.$v"
	fi
	if [[ $v == asprof && -n $asprof_bin ]]; then
		"$asprof_bin" stop -o collapsed -f "$tmp/asprof.collapsed" "$pid" >"$tmp/asprof.ctl" 2>&1 ||
			{ echo "alloc: asprof stop failed"; cat "$tmp/asprof.ctl"; exit 1; }
	fi
	sleep 0.2 # a mark past the window
	for k in $keys; do
		p=$(kpid "$k")
		log=$(klog "$k")
		read -r _ t0 c0 w0 a0 o0 < <(P="$p" awk '$1 == ENVIRON["P"]' "$tmp/snap0")
		read -r _ t1 c1 w1 a1 o1 < <(P="$p" awk '$1 == ENVIRON["P"]' "$tmp/snap1")
		fc=0
		[[ $k == "$own" ]] && fc=$((f1 - f0 + r1 - r0))
		echo "$((c1 - c0)) $(ev_interp "$log" svc-truth "$t0" "$t1" requests)" \
			"$(ev_interp "$log" svc-truth "$t0" "$t1" bytes) $((t1 - t0)) $fc" \
			"$((w1 - w0)) $((a1 - a0)) $((o1 - o0))" >>"$tmp/w.$v.$k"
	done
	tail -n 1 "$tmp/w.$v.$own" >>"$tmp/$v"
}
# kpid KEY, klog KEY: a part 1 JVM's pid and output.
kpid() { if [[ $1 == main ]]; then echo "$jpid"; else echo "${xpid[$1]}"; fi; }
klog() { if [[ $1 == main ]]; then echo "$tmp/jvm.out"; else echo "${xlog[$1]}"; fi; }

# summ: "MEDIAN (IQR Q1..Q3, 95% CI LO..HI)" of the values on stdin: the median, its
# interquartile range and a 95% bootstrap interval of the median.
summ() {
	local v m q
	v=$(cat)
	m=$(median <<<"$v")
	q=$(sort -g <<<"$v" | awk '{ a[NR] = $1 } function q(p,   h, i) { h = (NR - 1) * p + 1; i = int(h)
		return i < NR ? a[i] + (h - i) * (a[i + 1] - a[i]) : a[NR] }
		END { if (NR) printf "%.4g..%.4g", q(0.25), q(0.75); else printf "-" }')
	read -r lo hi < <(boot_ci <<<"$v")
	printf "%.4g (IQR %s, 95%% CI %.4g..%.4g)" "$m" "$q" "$lo" "$hi"
}
# ratio_ci: "POINT LO HI": the median of the first column over the median of the second, lines
# (rounds) resampled in pairs for a 95% bootstrap interval (2000 resamples, fixed seed).
ratio_ci() {
	awk 'function isort(a, n,   i, j, t) { for (i = 2; i <= n; i++) { t = a[i]
			for (j = i - 1; j > 0 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t } }
	function med(a, n) { return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
	{ x[NR] = $1; y[NR] = $2 }
	END { if (NR == 0) { print "nan nan nan"; exit }
	      for (i = 1; i <= NR; i++) { u[i] = x[i]; w[i] = y[i] }
	      isort(u, NR); isort(w, NR); d = med(w, NR); p = d ? med(u, NR) / d : 0
	      srand(1); B = 2000
	      for (b = 1; b <= B; b++) { for (i = 1; i <= NR; i++) { j = int(rand() * NR) + 1; u[i] = x[j]; w[i] = y[j] }
					 isort(u, NR); isort(w, NR); d = med(w, NR); r[b] = d ? med(u, NR) / d : 0 }
	      isort(r, B); printf "%.3f %.3f %.3f\n", p, r[int(B * 0.025) + 1], r[int(B * 0.975)] }'
}

# paired_rounds VARIANT: per round (a line each), the variant against its baseline in the same
# JVM and pass: "WHOLE WORKERS CONTROLLED RWHOLE RWORKERS RCONTROLLED": its extra CPU per
# sample in us, of the whole JVM, of its worker threads only, and of its workers less the drift
# the other JVMs' workers (idle or unchanged in both windows) show between the two windows
# (their mean ratio of CPU per request); then the same as the JVM's CPU per request over its
# baseline's (the worker figures as a share of the whole JVM's CPU per request). Samples per
# second: record's count for alloc, the bytes over the interval for the others.
paired_rounds() {
	local v=$1 b k j
	b=$(base "$v")
	j=$(jkey "$v")
	: >"$tmp/ctl.$v"
	for k in $(jvms); do
		[[ $k == "$j" ]] && continue
		paste -d' ' "$tmp/w.$v.$k" "$tmp/w.$b.$k" |
			awk '{ print ($2 && $10 && $14) ? ($6 / $2) / ($14 / $10) : 1 }' >"$tmp/ctl1"
		if [[ -s $tmp/ctl.$v ]]; then paste -d' ' "$tmp/ctl.$v" "$tmp/ctl1" >"$tmp/ctl2"; else cp "$tmp/ctl1" "$tmp/ctl2"; fi
		mv "$tmp/ctl2" "$tmp/ctl.$v"
	done
	[[ -s $tmp/ctl.$v ]] || awk '{ print 1 }' "$tmp/w.$v.$j" >"$tmp/ctl.$v"
	if [[ $v == alloc && -s $tmp/samples.alloc ]]; then
		cp "$tmp/samples.alloc" "$tmp/n.$v"
	else
		awk '{ printf "%.1f\n", $3 / $4 * 1e9 / 524288 }' "$tmp/w.$v.$j" >"$tmp/n.$v"
	fi
	paste -d' ' "$tmp/w.$v.$j" "$tmp/w.$b.$j" "$tmp/n.$v" "$tmp/ctl.$v" | awk '{
		n = $17; c = 0; for (i = 18; i <= NF; i++) c += $i; c /= (NF - 17)
		if (!$2 || !$10 || !n) next
		rps = $10 * 1e9 / $12; cb = $9 / 1e3 / $10; wb = $14 / 1e3 / $10
		cv = $1 / 1e3 / $2; wv = $6 / 1e3 / $2
		printf "%.3f %.3f %.3f %.5f %.5f %.5f\n", (cv - cb) * rps / n, (wv - wb) * rps / n,
			(wv - wb * c) * rps / n, cv / cb, 1 + (wv - wb) / cb, 1 + (wv - wb * c) / cb }'
}

# paired: the variants against their baselines round by round (paired_rounds), with spreads, and
# copy/async-profiler (ring/asprof) as a ratio of medians with its bootstrap interval.
paired() {
	local v c
	echo "paired per round (the variant's window against its baseline's in the same JVM and pass; median, IQR, 95% CI of the median):"
	for v in $variants; do
		case $v in
		aa | alloc | fixed | live | ring) ;;
		asprof) [[ -n $asprof_bin ]] || continue ;;
		*) continue ;;
		esac
		paired_rounds "$v" >"$tmp/pr.$v"
		echo "  $v against $(base "$v"), $(wc -l <"$tmp/pr.$v") rounds, about $(median <"$tmp/n.$v") samples/s; extra CPU per sample, us:"
		echo "    whole JVM:   $(cut -d' ' -f1 "$tmp/pr.$v" | summ)"
		echo "    workers:     $(cut -d' ' -f2 "$tmp/pr.$v" | summ)"
		echo "    controlled:  $(cut -d' ' -f3 "$tmp/pr.$v" | summ)"
		echo "    rounds, workers: $(cut -d' ' -f2 "$tmp/pr.$v" | xargs printf '%.1f ')"
		echo "    rounds, controlled: $(cut -d' ' -f3 "$tmp/pr.$v" | xargs printf '%.1f ')"
		echo "    JVM CPU per request over $(base "$v")'s:"
		echo "      whole:      $(cut -d' ' -f4 "$tmp/pr.$v" | summ)"
		echo "      workers:    $(cut -d' ' -f5 "$tmp/pr.$v" | summ)"
		echo "      controlled: $(cut -d' ' -f6 "$tmp/pr.$v" | summ)"
	done
	if [[ -s $tmp/pr.ring && -s $tmp/pr.asprof ]]; then
		echo "  copy/async-profiler (ring/asprof), ratio of the medians of the extra CPU per sample, 95% bootstrap interval over rounds:"
		for c in 1:"whole JVM" 2:workers 3:controlled; do
			read -r p lo hi < <(paste -d' ' <(cut -d' ' -f"${c%%:*}" "$tmp/pr.ring") <(cut -d' ' -f"${c%%:*}" "$tmp/pr.asprof") | ratio_ci)
			echo "    ${c#*:}: $p ($lo..$hi)"
		done
	fi
}

# cost: part 1 for $jdk.
cost() {
	local v
	for v in $variants; do : >"$tmp/$v"; done
	rm -f "$tmp"/w.*
	: >"$tmp/samples.alloc"
	: >"$tmp/samples.fixed"
	: >"$tmp/ringcost"
	: >"$tmp/cbcost.fixed"
	: >"$tmp/cbcost.alloc"
	: >"$tmp/cbpct.alloc"
	: >"$tmp/ival.alloc"
	load0=$(cut -d' ' -f1-3 /proc/loadavg)
	: >"$tmp/cbcost.ring"
	AGENTOPTS=,allocstack=$allocstack jvm_start AllocService 100000 "$rate"
	if [[ -n $asprof && -n $asprof_bin ]]; then
		"$jdk/bin/java" -XX:+PreserveFramePointer "-agentpath:$asprof" -cp "$jar" AllocService 100000 "$rate" \
			>"$tmp/asprof.out" 2>&1 &
		apid=$!
		fg_wait 60 grep -q "AllocService ready" "$tmp/asprof.out" ||
			{ echo "alloc: AllocService with async-profiler loaded did not start"; cat "$tmp/asprof.out"; exit 1; }
		xpid[asprof]=$apid xlog[asprof]=$tmp/asprof.out xpid[asprofnone]=$apid xlog[asprofnone]=$tmp/asprof.out
	elif [[ -n $asprof ]]; then
		QOPTS= asprof_start asprof AllocService 100000 "$rate"
		xpid[asprof]=$apid xlog[asprof]=$tmp/asprof.out
	fi
	if [[ ${FLOOR:-1} != 0 ]]; then
		floor_start floor interval=524288,stack=0
		floor_start stack interval=524288,stack=128
	fi
	[[ $variants != *ring* ]] || ring_start
	if [[ $variants == *copy* ]]; then
		floor_start copycb "interval=524288,copy=$copy"
		# The copies' reader, outside the JVM: it accepts the sender and reads to the end
		# (Debian's python3, scripts/install-deps.sh; not a version manager's shim).
		rm -f "$tmp/copy.sock"
		/usr/bin/python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1); c, _ = s.accept()
while c.recv(1 << 20): pass' "$tmp/copy.sock" 2>"$tmp/drain.err" &
		drain=$!
		fg_wait 30 test -S "$tmp/copy.sock" || { echo "alloc: the copies' reader did not start"; cat "$tmp/drain.err"; exit 1; }
		floor_start copy "interval=524288,copy=$copy,out=$tmp/copy.sock"
	fi
	sleep "$warm"
	[[ -n ${LOCK:-} ]] && exec {lk}>"$LOCK"
	local rep order
	for rep in $(seq "$reps"); do
		[[ -n ${LOCK:-} ]] && flock "$lk"
		# ABBA: every other pass runs the variants backwards, so a drift that is linear over
		# two passes weighs each variant and its baseline alike.
		if ((rep % 2)); then order=$variants; else order=$(tr ' ' '\n' <<<"$variants" | tac | xargs); fi
		for v in $order; do round "$v"; done
		[[ -n ${LOCK:-} ]] && flock -u "$lk"
		echo "alloc: $(basename "$jdk") round $rep of $reps done" >&2
	done
	jvm_stop
	[[ -n $asprof ]] && asprof_stop
	floors_stop
	[[ -n $drain ]] && { kill -TERM "$drain" 2>/dev/null; wait "$drain" 2>/dev/null; drain=; }
	echo "== cost: AllocService (allocstack=$allocstack) at $rate requests/s, $(basename "$jdk"), $reps interleaved rounds of $round s after $settle s; $(nproc) CPUs, load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
	if [[ -n $asprof && -n $asprof_bin ]]; then
		echo "(asprof: a second AllocService JVM with async-profiler's library loaded, alive beside the first in every round: idle in asprofnone, its alloc at 512 KiB started and stopped by asprof around the window in asprof)"
	elif [[ -n $asprof ]]; then
		echo "(asprof: a second AllocService JVM with async-profiler's alloc at 512 KiB from its start, alive beside the first in every round, against the first JVM's none)"
	fi
	[[ ${FLOOR:-1} == 0 ]] || echo "(floor, stack: AllocService JVMs sampling at 512 KiB with an empty callback, and with GetStackTrace of at most 128 frames in it; alive beside the first in every round)"
	[[ $variants != *ring* ]] || echo "(ring: a third AllocService JVM, libfgagent.so=allocstack=copy, recorded with --alloc-budget 0 in its turn: each sample's last Java frame and the top of its stack copied into the agent's ring, no GetStackTrace; record reads the ring and walks each copy)"
	[[ $variants != *copy* ]] || echo "(copycb, copy: the same with $copy bytes of the sampled thread's stack copied into a ring in the callback; copy also ships them out of the JVM from a sender thread)"
	printf "%-8s %12s %10s %12s %14s %12s %12s %12s %s\n" variant "requests/s" "MB/s" "CPU us/req" "fgcollect %" \
		"workers/req" "agent/req" "other/req" "(medians over rounds; us of the JVM's threads by kind)"
	for v in $variants; do
		awk '{ printf "%.1f %.1f %.3f %.3f %.3f %.3f %.3f\n", $2 * 1e9 / $4, $3 * 1e3 / $4, $1 / 1e3 / $2,
			$5 * 100 / $1, $6 / 1e3 / $2, $7 / 1e3 / $2, $8 / 1e3 / $2 }' "$tmp/$v" >"$tmp/$v.fig"
		col() { cut -d' ' -f"$1" "$tmp/$v.fig" | median; }
		printf "%-8s %12.0f %10.0f %12.2f %14.3f %12.2f %12.2f %12.2f\n" "$v" "$(col 1)" "$(col 2)" "$(col 3)" \
			"$(col 4)" "$(col 5)" "$(col 6)" "$(col 7)"
	done
	for v in $variants; do
		[[ $v == none || $v == *none ]] && continue
		paste -d' ' "$tmp/$v.fig" "$tmp/$(base "$v").fig" | awk '{ printf "%.4f\n", $10 ? $3 / $10 : 0 }' >"$tmp/ratio"
		read -r lo hi < <(boot_ci <"$tmp/ratio")
		echo "JVM CPU per request, $v/$(base "$v") per round: median $(median <"$tmp/ratio") ($(spread <"$tmp/ratio")), 95% CI of the median $lo..$hi"
	done
	# What one sample costs the JVM: the extra CPU per request times the requests per second,
	# over the samples per second: record's count for alloc (over its whole duration, the first
	# ~0.5 s before the events turned on included: an upper bound), the bytes over the
	# interval for the others (the interval is the mean distance between samples).
	local n0 r0 c0
	per() { cut -d' ' -f2 "$tmp/$1.fig" | median | awk '{ printf "%.1f", $1 * 1e6 / 524288 }'; }
	n0=$(per none) r0=$(cut -d' ' -f1 "$tmp/none.fig" | median) c0=$(cut -d' ' -f3 "$tmp/none.fig" | median)
	echo "1% of the JVM's CPU at about $n0 samples/s allows $(c="$c0" r="$r0" n="$n0" awk 'BEGIN { printf "%.1f", 0.01 * ENVIRON["c"] * ENVIRON["r"] / ENVIRON["n"] }') us per sample"
	# x VARIANT SAMPLES_PER_S: the JVM's extra CPU per sample against its baseline (base).
	x() { a=$(cut -d' ' -f3 "$tmp/$1.fig" | median) b=$(cut -d' ' -f3 "$tmp/$(base "$1").fig" | median) \
		r=$(cut -d' ' -f1 "$tmp/$(base "$1").fig" | median) n="$2" \
		awk 'BEGIN { printf "%.2f", (ENVIRON["a"] - ENVIRON["b"]) * ENVIRON["r"] / ENVIRON["n"] }'; }
	for v in $variants; do
		[[ $v == none || $v == *none ]] && continue
		local n=$n0
		[[ $v == alloc ]] && n=$(median <"$tmp/samples.alloc")
		[[ $v == alloc || $v == fixed || $v == live ]] || n=$(cut -d' ' -f2 "$tmp/$v.fig" | median | awk '{ printf "%.1f", $1 * 1e6 / 524288 }')
		echo "$v: about $n samples/s; the JVM's extra CPU per sample (against $(base "$v")): $(x "$v" "$n") us"
	done
	if [[ $variants == *copy* && $variants == *fixed* ]]; then
		local f s c
		f=$(x floor "$(per floor)") s=$(x fixed "$n0") c=$(x copy "$(per copy)")
		ratio() { c="$1" f="$2" awk 'BEGIN { printf "%.2f", (ENVIRON["f"] > 0 ? ENVIRON["c"] / ENVIRON["f"] : 0) }'; }
		echo "stack copy ($copy B, shipped): the JVM's extra CPU per sample $c us; $(ratio "$c" "$f")x the floor's" \
			"($f us), $(ratio "$c" "$s")x libfgagent.so's GetStackTrace path's (fixed, $s us)"
		echo "in the callback, median (each floor agent's own clock, whole run):"
		for v in floor stack copycb copy; do
			echo "  $v: $(grep -o 'alloc_floor: .*' "$tmp/$v.out" | sed 's/^alloc_floor: //' || echo 'no figure')"
		done
	fi
	if [[ $variants == *ring* ]]; then
		local jj=nan jc cj=nan cc
		# fgcollect's CPU in the window over the window's samples: $5 ns in $4 ns at n samples/s
		fc() { n="$2" awk '{ n = ENVIRON["n"]; if (n > 0) printf "%.4f\n", $5 / 1e3 / ($4 / 1e9 * n) }' "$tmp/$1" | median | awk '{ printf "%.2f", $1 }'; }
		jc=$(x ring "$(per ring)") cc=$(fc ring "$(per ring)")
		[[ $variants != *fixed* ]] || jj=$(x fixed "$n0") cj=$(fc fixed "$n0")
		echo "jvmti vs copy, per allocation sample (medians over rounds; jvmti: nan when FIXED=0):"
		echo "  the JVM's extra CPU: jvmti (fixed) $jj us, copy (ring) $jc us; copy/jvmti $(c="$jc" j="$jj" awk 'BEGIN { j = ENVIRON["j"] + 0; printf "%.2f", (j > 0 ? ENVIRON["c"] / j : 0) }')"
		echo "  the agent's callbacks (its own timing of one in 64, steadier on a loaded machine): jvmti $(median <"$tmp/cbcost.fixed") us, copy $(median <"$tmp/cbcost.ring") us"
		echo "  fgcollect's CPU: jvmti $cj us (the daemon and record), copy $cc us (record; its summary: $(median <"$tmp/ringcost") us per copy read and walked)"
		[[ $variants != *fixed* ]] ||
			echo "  copy's net saving: $(a="$jj" b="$jc" c="$cj" d="$cc" awk 'BEGIN { printf "%.2f", (ENVIRON["a"] - ENVIRON["b"]) - (ENVIRON["d"] - ENVIRON["c"]) }') us per sample by the JVM's extra CPU," \
				"$(a="$(median <"$tmp/cbcost.fixed")" b="$(median <"$tmp/cbcost.ring")" c="$cj" d="$cc" awk 'BEGIN { printf "%.2f", (ENVIRON["a"] - ENVIRON["b"]) - (ENVIRON["d"] - ENVIRON["c"]) }') us by the callbacks' (the JVM's saving less fgcollect's extra)"
		echo "  the ring agent's count: $(grep -o 'allocstack=copy: .*' "$tmp/ring.out" | tail -n 1 || echo 'no figure')"
		if [[ $variants == *asprof* ]]; then
			local ja
			ja=$(x asprof "$(per asprof)")
			echo "  async-profiler's alloc (asprof, against $(base asprof)): the JVM's extra CPU $ja us per sample;" \
				"copy/async-profiler $(c="$jc" a="$ja" awk 'BEGIN { printf "%.2f", (ENVIRON["a"] > 0 ? ENVIRON["c"] / ENVIRON["a"] : 0) }')," \
				"jvmti/async-profiler $(c="$jj" a="$ja" awk 'BEGIN { a = ENVIRON["a"] + 0; printf "%.2f", (a > 0 ? ENVIRON["c"] / a : 0) }')"
		fi
	fi
	if [[ -s $tmp/live && -s $tmp/fixed ]]; then
		echo "live heap (tags, ObjectFree): the JVM's extra CPU per sample, live/fixed: $(a=$(cut -d' ' -f3 "$tmp/live.fig" | median) \
			f=$(cut -d' ' -f3 "$tmp/fixed.fig" | median) b="$c0" awk 'BEGIN { d = ENVIRON["f"] - ENVIRON["b"]
			if (d > 0) printf "%.2f", (ENVIRON["a"] - ENVIRON["b"]) / d; else printf "nan" }')"
	fi
	paired
	paste -d' ' "$tmp/alloc.fig" "$tmp/none.fig" | awk '{ printf "%.4f\n", $10 ? $3 / $10 : 0 }' >"$tmp/ratio"
	echo "--alloc-budget $budget: the whole JVM's CPU per request with/without recording, median over rounds: $(median <"$tmp/ratio") (goal <= $(b="$budget" awk 'BEGIN { printf "%.3f", 1 + ENVIRON["b"] / 100 }'))"
	# The same cost derived rather than measured: samples a second times the agent's callbacks'
	# own time per sample (record's summary), plus HotSpot's sampling outside them (HOTSPOT_US,
	# the empty callback's extra CPU per sample), over the JVM's CPU a second in alloc's windows.
	# Samples a second in the window: its bytes over the interval that weighed the most bytes in
	# the recording (record's count over its whole duration includes the first second at
	# 512 KiB, before the budget widened the interval).
	local ns cb jc
	ns=$(paste -d' ' "$tmp/alloc" "$tmp/ival.alloc" | awk '$4 && $9 { printf "%.1f\n", $3 / $4 * 1e9 / $9 }' | median)
	cb=$(median <"$tmp/cbcost.alloc")
	jc=$(awk '$4 { printf "%.1f\n", $1 / $4 * 1e6 }' "$tmp/alloc" | median)
	echo "--alloc-budget $budget, direct: the JVM's CPU per request over none's, controlled, median of the rounds: $(cut -d' ' -f6 "$tmp/pr.alloc" | summ)"
	[[ ! -s $tmp/pr.aa ]] ||
		echo "  A/A (aa, nothing recorded, alloc's schedule) over none's, controlled: $(cut -d' ' -f6 "$tmp/pr.aa" | summ)"
	echo "--alloc-budget $budget, derived: $ns samples/s in the window (at $(median <"$tmp/ival.alloc") bytes; $(median <"$tmp/samples.alloc") over the whole recording) x ($cb us in the agent's callbacks + ${HOTSPOT_US:-3} us of HotSpot's" \
		"sampling outside them) over the JVM's $jc us of CPU a second: $(n="$ns" c="$cb" h="${HOTSPOT_US:-3}" j="$jc" awk 'BEGIN {
			j = ENVIRON["j"] + 0; if (j > 0) printf "%.3f%% (the callbacks alone %.3f%%)", 100 * ENVIRON["n"] * (ENVIRON["c"] + ENVIRON["h"]) / j,
				100 * ENVIRON["n"] * ENVIRON["c"] / j; else printf "nan" }');" \
		"the agent's own count, median of the rounds: $(median <"$tmp/cbpct.alloc")% of the JVM's CPU in its callbacks"
	echo "record's summary (last alloc round, --alloc-budget $budget):"
	grep -v 'note' "$tmp/rec.last.alloc.err" | sed 's/^/  /' | head -n 12
	for v in fixed live ring; do
		[[ -s $tmp/rec.last.$v.err ]] &&
			echo "$v: $(grep 'allocation sampling cost' "$tmp/rec.last.$v.err" | sed 's/^fgcollect record: //')"
	done
	return 0 # a variant left out is no failure
}

# quality: part 2 for $jdk: QREPS recordings of QDUR + 4 s through the daemon, each around a
# burst of AllocTruth's allocation of QDUR seconds asked for 1.5 s after it started (its agent,
# connected to the daemon for a while, reads the want file every 500 ms).
quality() {
	local q rp qd=${QDUR:-10}
	mkdir -p "$tmp/ctl-bursts"
	rm -f "$tmp/ctl-bursts/burst"
	ctldir=$tmp/ctl-bursts
	jvm_start AllocTruth 100000 "$ctldir"
	echo "== quality: AllocTruth, $(basename "$jdk"), record --event alloc --alloc-budget $budget around a $qd s burst, ${QREPS:-3} times"
	printf "%-4s %-46s %10s %10s %14s\n" rec "shares, profile/truth % (fg-bytes longs particles strings)" "max |d| pt" "total %" "under method+class %"
	for q in $(seq "${QREPS:-3}"); do
		"$fgcollect" record --pid "$jpid" --ctl "$ctlsock" --event alloc --duration $((qd + 4)) \
			--alloc-budget "$budget" -o "$tmp/q.folded" 2>"$tmp/q.err" &
		rp=$!
		sleep 1.5
		ev_burst $((qd * 1000))
		fg_wait $((qd + 10)) grep -qE "^alloc-burst $EV_BURST .* end\$" "$tmp/jvm.out" ||
			{ echo "alloc: burst $EV_BURST did not end"; exit 1; }
		kill -0 "$rp" 2>/dev/null || { echo "alloc: the recording ended before the burst"; exit 1; }
		grep -E "^alloc-burst $EV_BURST .* end\$" "$tmp/jvm.out" >"$tmp/q.burst"
		wait "$rp" || { echo "alloc: record failed"; cat "$tmp/q.err"; exit 1; }
		q_rows "$tmp/q.folded" "$tmp/q.burst" 'AllocTruth::METHOD_\[[0ij]\];[^;]*$'
		q_print "$q"
		grep -oE 'sampling intervals used.*|sample weights:.*' "$tmp/q.err" | sed 's/^/     /' || true
		# the copies lapped in the ring before they were read: their bytes, threads unknown
		LOST=$(ev_sum "$tmp/q.folded" "[lost before read]") awk '{ w += $2 }
			END { l = ENVIRON["LOST"] + 0
				printf "     lost before read: %d bytes, %.2f%% of the truth\n", l, w ? 100 * l / w : 0 }' \
			"$tmp/q.rows"
	done
	jvm_stop
}

# q_rows FOLDED TRUTHLINE REGEX_OF_METHOD: a row per AllocTruth thread of FOLDED ("PROFILE
# TRUTH UNDER": its bytes, the JVM's count in TRUTHLINE, its bytes under the method, METHOD
# standing for its name, with the class as the leaf) into $tmp/q.rows.
q_rows() {
	local t th m c
	: >"$tmp/q.rows"
	for t in fg-bytes:makeBytes:'byte[]' fg-longs:makeLongs:'long[]' \
		fg-particles:makeParticles:'AllocTruth$Particle' fg-strings:makeStrings:java.lang.String; do
		IFS=: read -r th m c <<<"$t"
		echo "$(ev_sum "$1" "$th") $(K="$th" awk '{ for (i = 3; i < NF; i += 2) if ($i == ENVIRON["K"]) print $(i + 1) }' "$2")" \
			"$(ev_sum "$1" "$th" "${3//METHOD/$m}" "$c")" >>"$tmp/q.rows"
	done
}

# q_print LABEL: the row of the figures of $tmp/q.rows (the quality table's columns).
q_print() {
	q="$1" awk '{ g[NR] = $1; w[NR] = $2; u += $3; G += $1; W += $2 }
	END { if (!G || !W) { printf "%-4s nothing recorded\n", ENVIRON["q"]; exit }
	      for (i = 1; i <= NR; i++) { a = 100 * g[i] / G; b = 100 * w[i] / W; d = a - b
			 if (d < 0) d = -d; if (d > m) m = d; s = s sprintf("%.1f/%.1f ", a, b) }
	      printf "%-4s %-46s %10.2f %10.1f %14.2f\n", ENVIRON["q"], s, m, 100 * (G - W) / W, 100 * u / G }' \
		"$tmp/q.rows"
}

# asprof_quality: part 3's quality for $jdk: AllocTruth with async-profiler from its start
# (threads apart, bytes in total) through QREPS bursts of QDUR s, held to the JVM's own count
# since its start (its last alloc-truth line, after the last burst).
asprof_quality() {
	local b qd=${QDUR:-10} n=${QREPS:-3}
	mkdir -p "$tmp/ctl-asprof"
	rm -f "$tmp/ctl-asprof/burst"
	ctldir=$tmp/ctl-asprof
	QOPTS=threads,total, asprof_start asprof-q AllocTruth 100000 "$ctldir"
	for b in $(seq "$n"); do
		ev_burst $((qd * 1000))
		fg_wait $((qd + 10)) grep -qE "^alloc-burst $EV_BURST .* end\$" "$tmp/asprof-q.out" ||
			{ echo "alloc: burst $EV_BURST with async-profiler did not end"; exit 1; }
	done
	sleep 0.5 # a truth line past the last burst
	asprof_stop
	grep '^alloc-truth ' "$tmp/asprof-q.out" | tail -n 1 >"$tmp/asprof-q.truth"
	[[ -s $tmp/asprof-q.collapsed && -s $tmp/asprof-q.truth ]] ||
		{ echo "alloc: async-profiler wrote no profile"; cat "$tmp/asprof-q.out"; exit 1; }
	# Its thread frame "[NAME tid=N]" as the thread's name, the root as in ours.
	sed -E 's/^\[(.*) tid=[0-9]+\];/\1;/' "$tmp/asprof-q.collapsed" >"$tmp/asprof-q.folded"
	q_rows "$tmp/asprof-q.folded" "$tmp/asprof-q.truth" 'AllocTruth\.METHOD;[^;]*$'
	echo "async-profiler (alloc=512k, threads, total) from AllocTruth's start through its $n bursts of $qd s, against the JVM's count since its start:"
	q_print asp
}

for jdk in ${JDKS:-$(fg_jdks)}; do
	cost
	[[ ${QUALITY:-1} == 0 ]] || quality
	[[ ${QUALITY:-1} == 0 || -z $asprof ]] || asprof_quality
	echo
done
[[ -n $asprof ]] ||
	echo "async-profiler: not compared (set ASPROF to the path of a libasyncProfiler.so to run it beside the agent in the same rounds)"
echo "goals: alloc/none CPU per request <= 1.01; shares within 2 points, total within 5%, >= 99% under the method and class"
