#!/bin/bash
# jvm_overhead.sh BUILD_DIR - what libfgagent.so costs a JVM in a JIT storm (in-process javac
# compiling generated classes: thousands of compiled-method events in a few seconds, the worst
# case for any JIT agent), with and without a collector.
#
# Five variants, interleaved (base, floor, alone, frozen, watch, base, ...) so drift on a shared
# machine hits all alike:
#   base    the JVM without an agent;
#   floor   the JVM with bench/agent/null_agent.c: the same JVMTI events, empty callbacks: what
#           HotSpot itself spends producing and posting them, the floor for any such agent;
#   alone   fgagent with no collector listening (socket path with nobody behind it);
#   frozen  fgagent connected to a `fgcollect watch` that is SIGSTOPped 0.5 s into the run
#           (a hung daemon) and resumed after it;
#   watch   fgagent streaming to a live `fgcollect watch` (maps written); nobody profiles the
#           JVM, so its agent sends names alone (tables on demand);
#   profiled  the same with a recording subscribed to that daemon all along (`fgcollect record
#           --all` through its control socket, sampling at 1 Hz): the agent sends every table
#           (inline, frame facts, lines), as while someone profiles. The recording's own CPU
#           is not counted (it is the profiler's, not the agent's); the daemon's is.
# Wall time and CPU time (user + sys of the JVM; for `watch`, plus the daemon's CPU during the
# run) are reported as medians with their noise (median absolute deviation, in % of the median),
# and as ratios over the floor: the ratio of the medians and the median of the per-round ratios
# (each round runs every variant once, back to back). The target is <= 1.01 over the floor.
#
# The JVM's CPU varies by 5-10% from run to run on a shared machine (JIT timing, GC, the host),
# ten times the target, so the script also counts our cost directly, in nanoseconds of CPU
# from /proc/PID/task/TID/schedstat, sampled every 50 ms: the Service Thread (where HotSpot
# posts CompiledMethodLoad, so our callbacks run there; its floor-run median is subtracted), our
# own threads (fg-sender, nng:*) and, for `watch`, the daemon's processes (itself and the agent
# socket's confined child). That sum over the floor's CPU is "ours": its noise is a share of our
# cost, not of the JVM's.
# Env: REPS (default 7), CLASSES (300), JDK (default JDK 17), VARIANTS (default all five; floor
# must be one of them), BASELINE (the build directory of an earlier version: adds the variant
# `older`, its agent streaming to its own live watch, measured like `watch` in the same rounds),
# TIMED=1 (the agents' benchmark builds, libfgagent_bench.so, which time each callback with the
# thread's CPU clock: the callbacks column is then that sum, not the Service Thread's noisy
# difference; the clock reads add ~0.4 us per callback).
set -eu
build=$(cd "${1:-build}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/tests/harness/lib.sh"
reps=${REPS:-7}
classes=${CLASSES:-300}
jdk=${JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
fgcollect=$build/collector/fgcollect
agent=$build/jvmti-agent/libfgagent.so
floor=$build/bench/libfg_null_agent.so
variants=${VARIANTS:-base floor alone frozen watch profiled}
timed=${TIMED:-0}
lib=libfgagent.so
[ "$timed" = 1 ] && lib=libfgagent_bench.so && agent=$build/jvmti-agent/$lib
baseline=${BASELINE:+$(cd "$BASELINE" && pwd)}
if [ -n "$baseline" ]; then
	for f in "$baseline/collector/fgcollect" "$baseline/jvmti-agent/$lib"; do
		[ -e "$f" ] || { echo "jvm_overhead: BASELINE has no $f"; exit 1; }
	done
	case " $variants " in *" older "*) ;; *) variants="$variants older" ;; esac
fi
tmp=$(mktemp -d /tmp/fg-bench-jvm.XXXXXX)
watch_pid=
older_pid=
prof_pid=
rec_pid=
frozen_pid=
cleanup() {
	[ -n "$frozen_pid" ] && kill -CONT "$frozen_pid" 2>/dev/null && kill "$frozen_pid" 2>/dev/null
	[ -n "$older_pid" ] && kill "$older_pid" 2>/dev/null && wait "$older_pid" 2>/dev/null
	[ -n "$rec_pid" ] && kill -INT "$rec_pid" 2>/dev/null && wait "$rec_pid" 2>/dev/null
	[ -n "$prof_pid" ] && kill "$prof_pid" 2>/dev/null && wait "$prof_pid" 2>/dev/null
	[ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null && wait "$watch_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
for f in "$fgcollect" "$agent" "$floor"; do
	[ -e "$f" ] || { echo "jvm_overhead: $f not built (make bench builds it)"; exit 1; }
done
hz=$(getconf CLK_TCK)

workloads=$build/tests/java/fg-workloads.jar # tests/e2e.cmake builds it (Java 11 classes)
[ -f "$workloads" ] || { echo "jvm_overhead: $workloads not built (make bench builds it)"; exit 1; }

# start_watch NAME [FGCOLLECT]: a daemon on $tmp/NAME/fgcollect.sock, its pid in $started.
start_watch() {
	mkdir -p "$tmp/d-$1"
	"${2:-$fgcollect}" watch --socket "$tmp/d-$1/fgcollect.sock" --ctl "$tmp/d-$1-ctl/ctl.sock" \
		2>"$tmp/d-$1.log" &
	started=$!
	for _ in $(seq 50); do [ -S "$tmp/d-$1/fgcollect.sock" ] && return 0; sleep 0.1; done
	echo "watch did not start"
	cat "$tmp/d-$1.log"
	exit 1
}
start_watch live
watch_pid=$started
if [ -n "$baseline" ]; then
	start_watch older "$baseline/collector/fgcollect"
	older_pid=$started
fi
case " $variants " in
*" profiled "*)
	start_watch prof
	prof_pid=$started
	"$fgcollect" record --all --ctl "$tmp/d-prof-ctl/ctl.sock" --freq 1 --duration 86400 \
		-o "$tmp/prof.folded" 2>"$tmp/rec.log" &
	rec_pid=$!
	sleep 1
	kill -0 "$rec_pid" 2>/dev/null || { echo "the profiling record did not start"; cat "$tmp/rec.log"; exit 1; }
	;;
esac
mkdir -p "$tmp/d-nobody"

. "$src/bench/agent/cpu.lib" # cpu_of, snap


# run VARIANT: one JVM run; appends wall ms to $tmp/VARIANT, CPU ms to $tmp/VARIANT.cpu and
# our threads' CPU ms ("sender nng") to $tmp/VARIANT.own.
run() {
	local extra=() t0 t1 w0 w1 n0 n1 u s tpid jpid dpid=$watch_pid
	case $1 in
	floor) extra=("-agentpath:$floor") ;;
	alone) extra=("-agentpath:$agent=socket=$tmp/d-nobody/fgcollect.sock") ;;
	frozen)
		start_watch frozen
		frozen_pid=$started
		extra=("-agentpath:$agent=socket=$tmp/d-frozen/fgcollect.sock")
		;;
	watch) extra=("-agentpath:$agent=socket=$tmp/d-live/fgcollect.sock") ;;
	profiled)
		extra=("-agentpath:$agent=socket=$tmp/d-prof/fgcollect.sock")
		dpid=$prof_pid
		;;
	older)
		extra=("-agentpath:$baseline/jvmti-agent/$lib=socket=$tmp/d-older/fgcollect.sock")
		dpid=$older_pid
		;;
	esac
	w0=$(cpu_of "$dpid")
	n0=$(fg_cpu_ns "$dpid")
	t0=$(date +%s%N)
	rm -f "$tmp/bs"
	FGAGENT_BENCH_OUT=$tmp/bs /usr/bin/time -f '%U %S' -o "$tmp/time" "$jdk/bin/java" \
		-XX:+PreserveFramePointer \
		"${extra[@]}" -cp "$workloads" JavacWorkload "$classes" 1 >/dev/null &
	tpid=$!
	jpid=
	for _ in $(seq 100); do
		jpid=$(pgrep -P "$tpid" -x java || true)
		[ -n "$jpid" ] && break
		sleep 0.01
	done
	: >"$tmp/own"
	(
		n=0
		while [ -n "$jpid" ] && kill -0 "$jpid" 2>/dev/null; do
			n=$((n + 1))
			[ "$1" = frozen ] && [ "$n" = 5 ] && kill -STOP "$frozen_pid"
			snap "$jpid" >>"$tmp/own"
			sleep 0.05
		done
	) &
	local poller=$!
	wait "$tpid"
	t1=$(date +%s%N)
	w1=$(cpu_of "$dpid")
	n1=$(fg_cpu_ns "$dpid")
	wait "$poller" || true
	if [ "$1" = frozen ]; then
		kill -CONT "$frozen_pid"
		kill "$frozen_pid"
		wait "$frozen_pid" 2>/dev/null || true
		frozen_pid=
	fi
	read -r u s <"$tmp/time"
	echo $(((t1 - t0) / 1000000)) >>"$tmp/$1"
	u="$u" s="$s" w=$((w1 - w0)) hz="$hz" v="$1" awk \
		'BEGIN { u = ENVIRON["u"]; s = ENVIRON["s"]; w = ENVIRON["w"]; hz = ENVIRON["hz"]; v = ENVIRON["v"]; printf "%d\n", (u + s) * 1000 + (v == "watch" || v == "older" || v == "profiled" ? w * 1000 / hz : 0)}' \
		>>"$tmp/$1.cpu"
	# The last snapshot of each thread counts: threads end before the JVM does. Per run, in
	# microseconds: Service Thread, fg-sender, nng threads, daemon (watch, older), and the
	# callbacks' own clock (TIMED=1; else -1).
	cb=-1
	[ -s "$tmp/bs" ] && cb=$(awk '{s += $3} END {printf "%d", s / 1000}' "$tmp/bs")
	d=$(((n1 - n0) / 1000)) v="$1" cb="$cb" awk 'BEGIN { d = ENVIRON["d"]; v = ENVIRON["v"]; cb = ENVIRON["cb"] } { t[$1] = $3; c[$1] = $2 }
		END { for (i in t) { if (c[i] == "Service_Thread") st += t[i];
				     else if (c[i] == "fg-sender") s += t[i]; else n += t[i] }
		      printf "%d %d %d %d %d\n", st / 1000, s / 1000, n / 1000,
			     v == "watch" || v == "older" || v == "profiled" ? d : 0, cb }' \
		"$tmp/own" >>"$tmp/$1.own"
}

. "$src/bench/agent/stats.lib" # median, noise, ratios, boot_ci

label_of() {
	case $1 in
	base) echo "without agent" ;;
	floor) echo "JVMTI floor (empty callbacks)" ;;
	alone) echo "fgagent, no collector" ;;
	frozen) echo "fgagent, frozen collector" ;;
	watch) echo "fgagent + live watch (CPU: + daemon)" ;;
	profiled) echo "fgagent + watch + a recording" ;;
	older) echo "BASELINE's fgagent + its watch" ;;
	esac
}

run base # warm the page cache
for v in $variants; do : >"$tmp/$v"; : >"$tmp/$v.cpu"; : >"$tmp/$v.own"; done
watch_cpu0=$(cpu_of "$watch_pid")
for _ in $(seq "$reps"); do
	for v in $variants; do run "$v"; done
done
watch_cpu1=$(cpu_of "$watch_pid")

echo "workload: JavacWorkload $classes classes, $reps interleaved rounds, $(basename "$jdk"), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-34s %9s %6s %9s %6s %9s %9s   %s\n" variant "wall ms" noise "CPU ms" noise "wall/flr" "CPU/flr" "per-round CPU/floor: median (min..max), 95% CI of the median"
fw=$(median <"$tmp/floor")
fc=$(median <"$tmp/floor.cpu")
for v in $variants; do
	label=$(label_of "$v")
	w=$(median <"$tmp/$v")
	c=$(median <"$tmp/$v.cpu")
	r=$(ratios "$tmp/$v.cpu" "$tmp/floor.cpu")
	rm_=$(echo "$r" | median)
	rlo=$(echo "$r" | sort -n | head -n 1)
	rhi=$(echo "$r" | sort -n | tail -n 1)
	read -r clo chi < <(echo "$r" | boot_ci)
	printf "%-34s %9.0f %5s%% %9.0f %5s%% %9.4f %9.4f   %.4f (%.4f..%.4f) CI %s..%s\n" "$label" "$w" \
		"$(noise "$tmp/$v")" "$c" "$(noise "$tmp/$v.cpu")" \
		"$(a="$w" b="$fw" awk 'BEGIN { a = ENVIRON["a"]; b = ENVIRON["b"]; print a / b}')" \
		"$(a="$c" b="$fc" awk 'BEGIN { a = ENVIRON["a"]; b = ENVIRON["b"]; print a / b}')" "$rm_" "$rlo" "$rhi" "$clo" "$chi"
done
# Ours counted directly (see the header), per run: the Service Thread over the floor runs'
# median, our JVM threads, and the daemon; its median, and over the floor's median CPU.
st_floor=$(cut -d' ' -f1 "$tmp/floor.own" | median)
echo "our CPU counted directly (schedstat), medians per run; the floor's Service Thread: $(u="$st_floor" awk 'BEGIN { u = ENVIRON["u"]; printf "%.1f", u / 1000}') ms (noise $(cut -d' ' -f1 "$tmp/floor.own" >"$tmp/st"; noise "$tmp/st")%)"
[ "$timed" = 1 ] && echo "callbacks: the sum of their own thread CPU clock (TIMED=1, $lib)"
printf "%-34s %9s %7s %7s %7s %9s %6s %9s   %s\n" variant "callbacks" sender nng daemon "ours ms" noise "1+ours/flr" "95% CI of the median (bootstrap)"
for v in $variants; do
	case $v in base | floor) continue ;; esac
	f="$st_floor" awk 'BEGIN { f = ENVIRON["f"] } { c = $5 >= 0 ? $5 : $1 - f
		printf "%d %d %d %d %d\n", c, $2, $3, $4, c + $2 + $3 + $4 }' "$tmp/$v.own" >"$tmp/$v.ours"
	for k in 1 2 3 4 5; do cut -d' ' -f"$k" "$tmp/$v.ours" | median >"$tmp/m$k"; done
	cut -d' ' -f5 "$tmp/$v.ours" >"$tmp/o5"
	c="$fc" awk 'BEGIN { c = ENVIRON["c"] } {printf "%.4f\n", 1 + $1 / 1000 / c}' "$tmp/o5" >"$tmp/r5"
	read -r clo chi < <(boot_ci <"$tmp/r5")
	printf "%-34s %9.1f %7.1f %7.1f %7.1f %9.1f %5s%% %9.4f   %s..%s\n" "$(label_of "$v")" \
		"$(awk '{print $1 / 1000}' "$tmp/m1")" "$(awk '{print $1 / 1000}' "$tmp/m2")" \
		"$(awk '{print $1 / 1000}' "$tmp/m3")" "$(awk '{print $1 / 1000}' "$tmp/m4")" \
		"$(awk '{print $1 / 1000}' "$tmp/m5")" "$(noise "$tmp/o5")" "$(median <"$tmp/r5")" \
		"$clo" "$chi"
done
kill -TERM "$watch_pid"
wait "$watch_pid" 2>/dev/null || true
watch_pid=
records=$(sed -nE 's/.* messages, ([0-9]+) records .*/\1/p' "$tmp/d-live.log" | tail -n 1)
msgs=$(sed -nE 's/.*summary: .* ([0-9]+) messages, .*/\1/p' "$tmp/d-live.log" | tail -n 1)
echo "watch daemon CPU during the rounds: $(((watch_cpu1 - watch_cpu0) * 1000 / hz / reps)) ms per round (one JVM run streams to it per round); ${records:-?} records in ${msgs:-?} messages in all: $(c=$(((watch_cpu1 - watch_cpu0) * 1000000 / hz)) n="${records:-0}" awk 'BEGIN { c = ENVIRON["c"]; n = ENVIRON["n"]; printf "%.1f", n ? c / n : 0}') us of daemon CPU per record received"
if [ -n "$rec_pid" ]; then
	kill -INT "$rec_pid"
	wait "$rec_pid" 2>/dev/null || true
	rec_pid=
	echo "profiled: $(grep -c 'agent sends its inline and line tables' "$tmp/rec.log") of $reps JVM runs turned their tables on for the recording"
fi
echo "target: fgagent + live watch CPU/floor <= 1.01 (median of per-round ratios above)"
