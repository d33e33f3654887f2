#!/bin/bash
# jvm_overhead.sh BUILD_DIR - what libfgagent.so costs a JVM in a JIT storm (in-process javac
# compiling generated classes: thousands of compiled-method events in a few seconds, the worst
# case for any JIT agent), with and without a collector.
#
# Five variants, interleaved (base, floor, alone, frozen, watch, base, ...) so drift on a shared
# machine hits all alike:
#   base    the JVM without an agent;
#   floor   the JVM with bench/null_agent.c: the same JVMTI events, empty callbacks: what
#           HotSpot itself spends producing and posting them, the floor for any such agent;
#   alone   fgagent with no collector listening (socket path with nobody behind it);
#   frozen  fgagent connected to a `fgcollect watch` that is SIGSTOPped 0.5 s into the run
#           (a hung daemon) and resumed after it;
#   watch   fgagent streaming to a live `fgcollect watch` (maps written).
# Wall time and CPU time (user + sys of the JVM; for `watch`, plus the daemon's CPU during the
# run) are reported as medians with their noise (median absolute deviation, in % of the median),
# and as ratios over the floor: the ratio of the medians and the median of the per-round ratios
# (each round runs every variant once, back to back). The target is <= 1.01 over the floor.
# Our own threads (fg-sender, nng:*) are sampled from /proc every 100 ms for the breakdown.
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
variants="base floor alone frozen watch"
tmp=$(mktemp -d /tmp/fg-bench-jvm.XXXXXX)
watch_pid=
frozen_pid=
cleanup() {
	[ -n "$frozen_pid" ] && kill -CONT "$frozen_pid" 2>/dev/null && kill "$frozen_pid" 2>/dev/null
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

# start_watch NAME: a daemon on $tmp/NAME/fgcollect.sock, its pid in $started.
start_watch() {
	mkdir -p "$tmp/d-$1"
	"$fgcollect" watch --socket "$tmp/d-$1/fgcollect.sock" --ctl "$tmp/d-$1-ctl/ctl.sock" \
		2>"$tmp/d-$1.log" &
	started=$!
	for _ in $(seq 50); do [ -S "$tmp/d-$1/fgcollect.sock" ] && return 0; sleep 0.1; done
	echo "watch did not start"
	cat "$tmp/d-$1.log"
	exit 1
}
start_watch live
watch_pid=$started
mkdir -p "$tmp/d-nobody"

cpu_of() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run VARIANT: one JVM run; appends wall ms to $tmp/VARIANT, CPU ms to $tmp/VARIANT.cpu and
# our threads' CPU ms ("sender nng") to $tmp/VARIANT.own.
run() {
	local extra=() t0 t1 w0 w1 u s tpid jpid
	case $1 in
	floor) extra=("-agentpath:$floor") ;;
	alone) extra=("-agentpath:$agent=socket=$tmp/d-nobody/fgcollect.sock") ;;
	frozen)
		start_watch frozen
		frozen_pid=$started
		extra=("-agentpath:$agent=socket=$tmp/d-frozen/fgcollect.sock")
		;;
	watch) extra=("-agentpath:$agent=socket=$tmp/d-live/fgcollect.sock") ;;
	esac
	w0=$(cpu_of "$watch_pid")
	t0=$(date +%s%N)
	/usr/bin/time -f '%U %S' -o "$tmp/time" "$jdk/bin/java" -XX:+PreserveFramePointer \
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
			cat /proc/"$jpid"/task/*/stat >>"$tmp/own" 2>/dev/null
			sleep 0.1
		done
	) &
	local poller=$!
	wait "$tpid"
	t1=$(date +%s%N)
	w1=$(cpu_of "$watch_pid")
	wait "$poller" || true
	if [ "$1" = frozen ]; then
		kill -CONT "$frozen_pid"
		kill "$frozen_pid"
		wait "$frozen_pid" 2>/dev/null || true
		frozen_pid=
	fi
	read -r u s <"$tmp/time"
	echo $(((t1 - t0) / 1000000)) >>"$tmp/$1"
	awk -v u="$u" -v s="$s" -v w=$((w1 - w0)) -v hz="$hz" -v v="$1" \
		'BEGIN {printf "%d\n", (u + s) * 1000 + (v == "watch" ? w * 1000 / hz : 0)}' >>"$tmp/$1.cpu"
	# comm is field 2 in parentheses (no spaces in ours); utime, stime are fields 14, 15. The
	# last snapshot of each thread counts: threads end before the JVM does.
	awk -v hz="$hz" '$2 == "(fg-sender)" || $2 ~ /^\(nng:/ { t[$1] = $14 + $15; c[$1] = $2 }
		END { for (i in t) { if (c[i] == "(fg-sender)") s += t[i]; else n += t[i] }
		      printf "%d %d\n", s * 1000 / hz, n * 1000 / hz }' "$tmp/own" >>"$tmp/$1.own"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# noise FILE: median absolute deviation in % of the median.
noise() {
	local m
	m=$(median <"$1")
	awk -v m="$m" '{d = $1 - m; print (d < 0 ? -d : d)}' "$1" | median |
		awk -v m="$m" '{printf "%.1f", m ? $1 * 100 / m : 0}'
}
# ratios FILE_A FILE_B: per-round ratios A/B, one per line.
ratios() { paste "$1" "$2" | awk '{printf "%.4f\n", $2 ? $1 / $2 : 0}'; }

run base # warm the page cache
for v in $variants; do : >"$tmp/$v"; : >"$tmp/$v.cpu"; : >"$tmp/$v.own"; done
watch_cpu0=$(cpu_of "$watch_pid")
for _ in $(seq "$reps"); do
	for v in $variants; do run "$v"; done
done
watch_cpu1=$(cpu_of "$watch_pid")

echo "workload: JavacWorkload $classes classes, $reps interleaved rounds, $(basename "$jdk"), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-34s %9s %6s %9s %6s %9s %9s   %s\n" variant "wall ms" noise "CPU ms" noise "wall/flr" "CPU/flr" "per-round CPU/floor: median (min..max)"
fw=$(median <"$tmp/floor")
fc=$(median <"$tmp/floor.cpu")
for v in $variants; do
	case $v in
	base) label="without agent" ;;
	floor) label="JVMTI floor (empty callbacks)" ;;
	alone) label="fgagent, no collector" ;;
	frozen) label="fgagent, frozen collector" ;;
	watch) label="fgagent + live watch (CPU: + daemon)" ;;
	esac
	w=$(median <"$tmp/$v")
	c=$(median <"$tmp/$v.cpu")
	r=$(ratios "$tmp/$v.cpu" "$tmp/floor.cpu")
	rm_=$(echo "$r" | median)
	rlo=$(echo "$r" | sort -n | head -n 1)
	rhi=$(echo "$r" | sort -n | tail -n 1)
	printf "%-34s %9d %5s%% %9d %5s%% %9.4f %9.4f   %.4f (%.4f..%.4f)\n" "$label" "$w" \
		"$(noise "$tmp/$v")" "$c" "$(noise "$tmp/$v.cpu")" \
		"$(awk -v a="$w" -v b="$fw" 'BEGIN {print a / b}')" \
		"$(awk -v a="$c" -v b="$fc" 'BEGIN {print a / b}')" "$rm_" "$rlo" "$rhi"
done
for v in alone frozen watch; do
	read -r snd nng < <(awk '{s[NR] = $1; n[NR] = $2} END {
		asort_n = NR; for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) {
			if (s[j] < s[i]) { t = s[i]; s[i] = s[j]; s[j] = t }
			if (n[j] < n[i]) { t = n[i]; n[i] = n[j]; n[j] = t } }
		m = int((NR + 1) / 2); print s[m] + 0, n[m] + 0 }' "$tmp/$v.own")
	echo "our JVM threads ($v), medians: sender $snd ms, nng $nng ms CPU per run"
done
kill -TERM "$watch_pid"
wait "$watch_pid" 2>/dev/null || true
watch_pid=
records=$(sed -nE 's/.* messages, ([0-9]+) records .*/\1/p' "$tmp/d-live.log" | tail -n 1)
msgs=$(sed -nE 's/.*summary: .* ([0-9]+) messages, .*/\1/p' "$tmp/d-live.log" | tail -n 1)
echo "watch daemon CPU during the rounds: $(((watch_cpu1 - watch_cpu0) * 1000 / hz / reps)) ms per round (one JVM run streams to it per round); ${records:-?} records in ${msgs:-?} messages in all: $(awk -v c=$(((watch_cpu1 - watch_cpu0) * 1000000 / hz)) -v n="${records:-0}" 'BEGIN {printf "%.1f", n ? c / n : 0}') us of daemon CPU per record received"
echo "target: fgagent + live watch CPU/floor <= 1.01 (median of per-round ratios above)"
