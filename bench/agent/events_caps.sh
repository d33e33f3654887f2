#!/bin/bash
# events_caps.sh BUILD_DIR - what the agent's alloc, live and lock events cost a JVM: holding
# their JVMTI capabilities while no collector asks for them (the agent's default), against the
# agent that does not acquire them (events=false), and the events on at the collector's
# defaults.
#
# Variants, interleaved (nocaps, caps, on, nocaps, ...) so drift on a shared machine hits all
# alike; the agent streams to no collector in the first two:
#   nocaps  fgagent events=false: the capabilities are never acquired;
#   caps    fgagent as shipped: can_generate_sampled_object_alloc_events, can_tag_objects,
#           can_generate_object_free_events and can_generate_monitor_events held, no event
#           enabled;
#   on      fgagent streaming to a collector that asks for alloc, live and lock events at the
#           defaults (tests' fgrecv --events "alloc=524288 live lock=0"): every event enabled.
# Workloads, each with fixed work: javac (JavacWorkload, a JIT storm: the agent's code events),
# alloc (4 threads allocating mixed objects and arrays) and lock (8 threads on one monitor,
# contended) from bench/agent/EventsCapsWorkload.java, compiled here with the JDK under test.
# For each JDK and workload: the JVM's CPU (user + sys) and wall time, medians and noise (median
# absolute deviation in % of the median), and the CPU over nocaps's: the median of the per-round
# ratios with its 95% bootstrap interval. The capabilities cost nothing measurable when that
# interval holds 1 and the median is within the noise.
# Env: REPS (default 9), JDKS (default the JDK 17 and 25 of the test machine), VARIANTS
# (default "nocaps caps on"), WORKLOADS (default "javac alloc lock"), ALLOC_N, LOCK_N, CLASSES.
set -eu
build=$(cd "${1:-build}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
reps=${REPS:-9}
jdks=${JDKS:-/usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64}
variants=${VARIANTS:-nocaps caps on}
workloads=${WORKLOADS:-javac alloc lock}
alloc_n=${ALLOC_N:-30000000}
lock_n=${LOCK_N:-10000000}
classes=${CLASSES:-40}
agent=$build/jvmti-agent/libfgagent.so
fgrecv=$build/tests/fgrecv
jar=$build/tests/java/fg-workloads.jar
for f in "$agent" "$fgrecv" "$jar"; do
	[ -e "$f" ] || { echo "events_caps: $f not built (make bench builds it)"; exit 1; }
done
tmp=$(mktemp -d /tmp/fg-bench-evcaps.XXXXXX)
recv_pid=
cleanup() {
	[ -n "$recv_pid" ] && kill "$recv_pid" 2>/dev/null && wait "$recv_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/nobody" "$tmp/on"

case " $variants " in
*" on "*)
	"$fgrecv" --events "alloc=524288 live lock=0" "$tmp/on/fg.sock" >/dev/null 2>"$tmp/recv.log" &
	recv_pid=$!
	for _ in $(seq 50); do [ -S "$tmp/on/fg.sock" ] && break; sleep 0.1; done
	[ -S "$tmp/on/fg.sock" ] || { echo "events_caps: fgrecv did not start"; cat "$tmp/recv.log"; exit 1; }
	;;
esac

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
noise() {
	local m
	m=$(median <"$1")
	m="$m" awk 'BEGIN { m = ENVIRON["m"] } {d = $1 - m; print (d < 0 ? -d : d)}' "$1" | median |
		m="$m" awk 'BEGIN { m = ENVIRON["m"] } {printf "%.1f", m ? $1 * 100 / m : 0}'
}
ratios() { paste "$1" "$2" | awk '{printf "%.4f\n", $2 ? $1 / $2 : 0}'; }
# A 95% bootstrap interval of the median of stdin's values (2000 resamples, fixed seed).
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

# run JDK WORKLOAD VARIANT: one JVM run; appends CPU ms to $tmp/W.V.cpu and wall ms to W.V.
run() {
	local jdk=$1 w=$2 v=$3 opts cmd e u s
	case $v in
	nocaps) opts="socket=$tmp/nobody/fg.sock,events=false" ;;
	caps) opts="socket=$tmp/nobody/fg.sock" ;;
	on) opts="socket=$tmp/on/fg.sock" ;;
	esac
	case $w in
	javac) cmd=(-cp "$jar" JavacWorkload "$classes" 1) ;;
	alloc) cmd=(-Xmx256m -cp "$tmp/cls" EventsCapsWorkload alloc 4 "$alloc_n") ;;
	lock) cmd=(-cp "$tmp/cls" EventsCapsWorkload lock 8 "$lock_n") ;;
	esac
	/usr/bin/time -f '%e %U %S' -o "$tmp/time" "$jdk/bin/java" "-agentpath:$agent=$opts" \
		"${cmd[@]}" >/dev/null
	read -r e u s <"$tmp/time"
	E=$e awk 'BEGIN { printf "%d\n", ENVIRON["E"] * 1000 }' >>"$tmp/$w.$v"
	U=$u S=$s awk 'BEGIN { printf "%d\n", (ENVIRON["U"] + ENVIRON["S"]) * 1000 }' >>"$tmp/$w.$v.cpu"
}

label_of() {
	case $1 in
	nocaps) echo "events=false (no capabilities)" ;;
	caps) echo "capabilities held, events off" ;;
	on) echo "events on (alloc 512 KiB, live, lock 0)" ;;
	esac
}

for jdk in $jdks; do
	rm -rf "$tmp/cls"
	mkdir -p "$tmp/cls"
	"$jdk/bin/javac" -d "$tmp/cls" "$src/bench/agent/EventsCapsWorkload.java"
	for w in $workloads; do
		run "$jdk" "$w" nocaps # warm the page cache
		for v in $variants; do : >"$tmp/$w.$v"; : >"$tmp/$w.$v.cpu"; done
	done
	for _ in $(seq "$reps"); do
		for w in $workloads; do
			for v in $variants; do run "$jdk" "$w" "$v"; done
		done
	done
	echo "$("$jdk/bin/java" -version 2>&1 | head -n 1), $reps interleaved rounds, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
	printf "%-6s %-40s %9s %6s %9s %6s   %s\n" workload variant "CPU ms" noise "wall ms" noise \
		"CPU / nocaps: median of per-round ratios (min..max), 95% CI"
	for w in $workloads; do
		for v in $variants; do
			r=$(ratios "$tmp/$w.$v.cpu" "$tmp/$w.nocaps.cpu")
			read -r lo hi < <(echo "$r" | boot_ci)
			printf "%-6s %-40s %9.0f %5s%% %9.0f %5s%%   %.4f (%.4f..%.4f) CI %s..%s\n" "$w" \
				"$(label_of "$v")" "$(median <"$tmp/$w.$v.cpu")" "$(noise "$tmp/$w.$v.cpu")" \
				"$(median <"$tmp/$w.$v")" "$(noise "$tmp/$w.$v")" "$(echo "$r" | median)" \
				"$(echo "$r" | sort -n | head -n 1)" "$(echo "$r" | sort -n | tail -n 1)" \
				"$lo" "$hi"
		done
	done
	echo
done
echo "target: capabilities held, events off: CPU / nocaps within the noise (its CI holds 1)"
