#!/bin/bash
# jdks.sh [BUILD_DIR] - what libfgagent.so and `fgcollect watch` cost a JVM over HotSpot's own
# JVMTI floor, on each JDK of the JDK matrix, every ratio measured in the same run.
#
# Each JVM runs as the JDK matrix runs it (tests/e2e/jdk_matrix.sh): in a namespace container
# (tests/harness/fgcontainer), on the image's own /usr and glibc for the Debian JDKs (sid: the
# image root of tests/images/jdkroot.sh), with -XX:+PreserveFramePointer. The workload is
# JitStorm (tests/java: CLASSES class copies defined by their own loaders, each called CALLS
# times): thousands of compiled-method events in a few seconds on a bare JRE, Java 8 class files
# for JDK 8. Per JDK (a cell), three variants, interleaved: every round runs every cell's
# variants back to back (base, floor, watch; every other round in reverse order), so drift on a
# shared machine hits all alike:
#   base   the JVM without an agent;
#   floor  the JVM with bench/agent/null_agent.c: the JVMTI events libfgagent.so asks for, empty
#          callbacks: what HotSpot itself spends producing and posting them;
#   watch  libfgagent.so streaming to a live `fgcollect watch` on the host (one daemon per
#          cell, its socket directory the container's /var/run/fgcollect).
# CPU: the JVM's user + sys (its parent shell's cutime and cstime, so every thread counts to
# the end), for `watch` plus the daemon's CPU during the run. Per cell: medians with their noise
# (median absolute deviation in % of the median), floor over base, watch over floor as the ratio
# of the medians and as the median of the per-round ratios with its range and a 95% bootstrap
# interval. Because the JVM's CPU varies by several % from run to run, our cost is also counted
# directly, as in jvm_overhead.sh: nanoseconds of CPU from /proc/PID/task/TID/schedstat, sampled
# every 50 ms, of the Service Thread (where HotSpot posts CompiledMethodLoad, so our callbacks
# run there; the floor runs' median subtracted), our threads (fg-sender, nng:*) and the daemon;
# "1+ours/flr" is 1 + that sum over the floor's median CPU. Records: what the agent sent per run
# (the daemon's disconnect line). TIMED=1 runs the agent's benchmark build
# (libfgagent_bench.so), which times each callback with its thread's CPU clock: the callbacks'
# part of "ours" is then that sum, not the Service Thread's noisy difference from the floor
# (which also misses callbacks that a JDK posts on another thread). TIMED=1 also gives the map's
# latency: the timed agent writes when each compiled method was announced (its callback's
# entry, CLOCK_MONOTONIC) and fg_bench_mapwatch when each line first became visible in
# /tmp/perf-PID.map (inotify); per cell, the median and p99 over every compiled method of
# every run, and how many never showed while their JVM ran (left out of the latency).
# Env: CELLS (default "sid:8 sid:11 host:17 sid:21 temurin:25"; IMAGE:N as in jdk_matrix.sh:
# sid, host or temurin), REPS (rounds, default 5), CLASSES (200), CALLS (20000), VARIANTS
# (default "base floor watch"; floor must be one of them), BASELINE (the build directory of an
# earlier version: adds the variant `older`, its agent streaming to its own live `watch`, one
# daemon per cell, measured like `watch` in the same rounds and printed in a row of its own).
# Needs root (namespaces).
set -eu
build=$(cd "${1:-build}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/tests/harness/lib.sh"
. "$src/bench/agent/stats.lib"
. "$src/bench/agent/cpu.lib" # cpu_of, snap
cells=${CELLS:-sid:8 sid:11 host:17 sid:21 temurin:25}
reps=${REPS:-5}
classes=${CLASSES:-200}
calls=${CALLS:-20000}
variants=${VARIANTS:-base floor watch}
fgcollect=$build/collector/fgcollect
lib=libfgagent.so
[ "${TIMED:-0}" = 1 ] && lib=libfgagent_bench.so
agent=$build/jvmti-agent/$lib
baseline=${BASELINE:+$(cd "$BASELINE" && pwd)}
floor=$build/bench/libfg_null_agent.so
hz=$(getconf CLK_TCK)
[ "$(id -u)" = 0 ] || { echo "jdks: needs root (namespace containers)"; exit 1; }
case " $variants " in *" floor "*) ;; *) echo "jdks: VARIANTS must hold floor"; exit 1 ;; esac
mapwatch=$build/bench/fg_bench_mapwatch
for f in "$fgcollect" "$agent" "$floor" "$mapwatch" "$build/tests/java/fg-workloads.jar" \
	"$build/tests/java8/fg-workloads.jar"; do
	[ -e "$f" ] || { echo "jdks: $f not built (make bench builds it)"; exit 1; }
done
if [ -n "$baseline" ]; then
	for f in "$baseline/collector/fgcollect" "$baseline/jvmti-agent/$lib"; do
		[ -e "$f" ] || { echo "jdks: BASELINE has no $f"; exit 1; }
	done
	case " $variants " in *" older "*) ;; *) variants="$variants older" ;; esac
fi

tmp=$(mktemp -d /tmp/fg-bench-jdks.XXXXXX)
mkdir -p "$tmp/b"
chmod 1777 "$tmp/b" # the timed agent's output, written by the JVM's uid
declare -A daemon=() # cell index (oINDEX: BASELINE's) -> its watch daemon's pid
ct_pid='' mw_pid=''
cleanup() {
	local p
	[ -n "$ct_pid" ] && kill "$ct_pid" 2>/dev/null && wait "$ct_pid" 2>/dev/null
	[ -n "$mw_pid" ] && kill "$mw_pid" 2>/dev/null && wait "$mw_pid" 2>/dev/null
	for p in "${daemon[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	"$FG_CONTAINER" --gc >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# start_daemon KEY FGCOLLECT: a watch daemon whose agents' socket directory is $tmp/sKEY.
start_daemon() {
	mkdir -p "$tmp/s$1"
	chmod 0755 "$tmp/s$1"
	"$2" watch --socket "$tmp/s$1/fgcollect.sock" --ctl "$tmp/c$1/ctl.sock" 2>"$tmp/d$1.log" &
	daemon[$1]=$!
	for _ in $(seq 50); do [ -S "$tmp/s$1/fgcollect.sock" ] && break; sleep 0.1; done
	[ -S "$tmp/s$1/fgcollect.sock" ] || { echo "jdks: watch did not start"; cat "$tmp/d$1.log"; exit 1; }
}

# Each cell: its container options, JDK label, glibc and workload jar directory.
declare -a c_opts=() c_label=() c_app=()
i=0
for cell in $cells; do
	image=${cell%%:*} n=${cell#*:}
	case $image in
	sid | bullseye)
		rootdir=$("$src/tests/images/jdkroot.sh" "$image" "$n" 2>"$tmp/jdkroot.err") ||
			{ echo "jdks: no $image image root with OpenJDK $n: $(tail -n 3 "$tmp/jdkroot.err")"; exit 1; }
		jdk=$(fg_root_jdk "$rootdir" "$n") || { echo "jdks: $rootdir has no OpenJDK $n"; exit 1; }
		c_opts[i]="--root $rootdir --jdk $jdk"
		rel=$rootdir$jdk glibc=$(fg_root_glibc "$rootdir")
		;;
	host | temurin)
		rootdir=''
		jdk=/usr/lib/jvm/java-$n-openjdk-amd64
		[ "$image" = temurin ] && jdk=/usr/lib/jvm/temurin-$n-jdk-amd64
		[ -x "$jdk/bin/java" ] || { echo "jdks: no $jdk/bin/java"; exit 1; }
		c_opts[i]="--jdk $jdk"
		rel=$jdk glibc=$(fg_root_glibc "")
		;;
	*) echo "jdks: unknown image in cell '$cell' (sid, bullseye, host, temurin)"; exit 1 ;;
	esac
	ver=$(sed -n 's/^JAVA_VERSION="\(.*\)"/\1/p' "$rel/release" 2>/dev/null || true)
	# A JDK 8 JRE has no release file: its package's version in the image.
	[ -n "$ver" ] || [ -z "${rootdir:-}" ] || ver=$(P="openjdk-$n-jre-headless" awk \
		'$1 == "Package:" { q = $2 == ENVIRON["P"] } q && $1 == "Version:" { print $2; exit }' \
		"$rootdir/var/lib/dpkg/status" 2>/dev/null || true)
	c_label[i]="$image $n (${ver:-$n}, $glibc)"
	c_app[i]=$build/tests/java
	((n >= 11)) || c_app[i]=$build/tests/java8
	start_daemon "$i" "$fgcollect"
	[ -z "$baseline" ] || start_daemon "o$i" "$baseline/collector/fgcollect"
	i=$((i + 1))
done
ncells=$i

# ns_of PID: on-CPU nanoseconds of a daemon and its live children (schedstat).
ns_of() {
	local p t=0
	for p in "$1" $(pgrep -P "$1"); do t=$((t + $(fg_cpu_ns "$p"))); done
	echo "$t"
}

# run CELL VARIANT: one JVM in a container; appends its CPU ms to $tmp/CELL.VARIANT.cpu, our
# counted CPU ("service sender nng daemon", us) to .own and its host pid to .pids.
run() {
	local c=$1 v=$2 extra=() ct=() w0 w1 n0 n1 jpid sh u s key=$1 lib_of=$agent
	[ "$v" = older ] && key=o$1 lib_of=$baseline/jvmti-agent/$lib
	local d=${daemon[$key]}
	# shellcheck disable=SC2206 # the options are words without blanks
	ct=(${c_opts[c]} --app "${c_app[c]}" --volume "$tmp/s$key")
	case $v in
	floor)
		ct+=(--bind "$floor:/opt/fgcollect/lib/libfg_null_agent.so:ro")
		extra=(-agentpath:/opt/fgcollect/lib/libfg_null_agent.so)
		;;
	watch | older)
		ct+=(--agent "$lib_of" --bind "$tmp/b:/var/run/fgbench" --env FGAGENT_BENCH_OUT=/var/run/fgbench/bs)
		extra=("$(fg_agent_opt "$FG_SOCK_IN_CT")")
		;;
	esac
	rm -f "$tmp/ct.pid" "$tmp/b/bs" "$tmp/b/bs.code"
	w0=$(cpu_of "$d")
	n0=$(ns_of "$d")
	# The JVM is the child of a shell that prints its own stat line after it: cutime and
	# cstime hold the whole JVM's CPU, every thread to its end.
	# shellcheck disable=SC2016 # $@, $? and $$ are the container shell's
	"$FG_CONTAINER" --name "fg-jdks-$c-$v" --pidfile "$tmp/ct.pid" "${ct[@]}" -- \
		sh -c 'java "$@"; r=$?; read -r s </proc/$$/stat; echo "fg-cpu $s"; exit $r' sh \
		-XX:+PreserveFramePointer "${extra[@]}" -cp /app/fg-workloads.jar JitStorm \
		"$classes" "$calls" >"$tmp/run.log" 2>&1 </dev/null &
	ct_pid=$!
	jpid=
	for _ in $(seq 600); do
		sh=$(cat "$tmp/ct.pid" 2>/dev/null || true)
		[ -n "$sh" ] && jpid=$(pgrep -P "$sh" || true)
		[ -n "$jpid" ] && break
		kill -0 "$ct_pid" 2>/dev/null || break
		sleep 0.01
	done
	: >"$tmp/own"
	while [ -n "$jpid" ] && kill -0 "$jpid" 2>/dev/null; do
		snap "$jpid" >>"$tmp/own"
		sleep 0.05
	done
	wait "$ct_pid" || { echo "jdks: ${c_label[c]} $v failed:"; tail -n 20 "$tmp/run.log"; exit 1; }
	ct_pid=
	# The daemon has taken the JVM's last message once it logs the disconnect, and writes its
	# lines into the map at its next tick: only then are its CPU and the map complete (the map
	# is removed below).
	if [ -n "$jpid" ] && { [ "$v" = watch ] || [ "$v" = older ]; }; then
		for _ in $(seq 100); do
			grep -q "disconnect: pid $jpid " "$tmp/d$key.log" && break
			sleep 0.02
		done
		sleep 0.1
	fi
	w1=$(cpu_of "$d")
	n1=$(ns_of "$d")
	u='' s=''
	read -r u s < <(awk '$1 == "fg-cpu" { print $17, $18 }' "$tmp/run.log") || true
	if [ -z "$s" ] || ! grep -q "^JitStorm $classes classes in" "$tmp/run.log"; then
		echo "jdks: ${c_label[c]} $v: no JitStorm or CPU line:"
		tail -n 20 "$tmp/run.log"
		exit 1
	fi
	[ -n "$jpid" ] && rm -f "/tmp/perf-$jpid.map"
	echo "${jpid:-0}" >>"$tmp/$c.$v.pids"
	[ -n "$jpid" ] && [ -s "$tmp/b/bs.code" ] && mv "$tmp/b/bs.code" "$tmp/code.$jpid"
	u="$u" s="$s" w=$((w1 - w0)) hz="$hz" v="$v" awk 'BEGIN { v = ENVIRON["v"]
		printf "%d\n", (ENVIRON["u"] + ENVIRON["s"] + (v == "watch" || v == "older" ? ENVIRON["w"] : 0)) * 1000 / ENVIRON["hz"] }' \
		>>"$tmp/$c.$v.cpu"
	# The last snapshot of each thread counts: threads end before the JVM does. The callbacks'
	# own clock (TIMED=1), else -1.
	cb=-1
	[ -s "$tmp/b/bs" ] && cb=$(awk '{s += $3} END {printf "%d", s / 1000}' "$tmp/b/bs")
	d=$(((n1 - n0) / 1000)) v="$v" cb="$cb" awk 'BEGIN { d = ENVIRON["d"]; v = ENVIRON["v"] } { t[$1] = $3; k[$1] = $2 }
		END { for (i in t) { if (k[i] == "Service_Thread") st += t[i]; else if (k[i] == "fg-sender") s += t[i]; else n += t[i] }
		      printf "%d %d %d %d %d\n", st / 1000, s / 1000, n / 1000, v == "watch" || v == "older" ? d : 0, ENVIRON["cb"] }' \
		"$tmp/own" >>"$tmp/$c.$v.own"
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
if [ "${TIMED:-0}" = 1 ]; then
	"$mapwatch" /tmp "$tmp/seen" &
	mw_pid=$!
fi
for ((c = 0; c < ncells; c++)); do
	run "$c" base # warm the page cache
	for v in base floor watch older; do : >"$tmp/$c.$v.cpu"; : >"$tmp/$c.$v.own"; : >"$tmp/$c.$v.pids"; done
done
for ((r = 1; r <= reps; r++)); do
	for ((c = 0; c < ncells; c++)); do
		order=$variants
		# shellcheck disable=SC2086 # the variants are words
		((r % 2)) || order=$(printf '%s\n' $variants | tac | tr '\n' ' ')
		for v in $order; do run "$c" "$v"; done
	done
done
for p in "${daemon[@]}"; do
	kill -TERM "$p"
	wait "$p" 2>/dev/null || true
done
daemon=()
if [ -n "$mw_pid" ]; then
	kill -TERM "$mw_pid"
	wait "$mw_pid" || { echo "jdks: fg_bench_mapwatch failed"; exit 1; }
	mw_pid=
fi

# latency CELL VARIANT: "MEDIAN P99 UNSEEN/ALL" of the map's latency in ms over every compiled
# method of the variant's runs, "- - -" without the timed agent's announcements.
latency() {
	local p
	: >"$tmp/lat"
	: >"$tmp/unseen"
	while read -r p; do
		[ -s "$tmp/code.$p" ] || continue
		# The first time a line of this JVM's map at the method's address was seen at or
		# after its announcement.
		pid="$p" lat="$tmp/lat" awk 'BEGIN { pid = ENVIRON["pid"]; lat = ENVIRON["lat"] }
			FNR == NR { if ($1 == pid) { n[$2]++; t[$2, n[$2]] = $3 }; next }
			$1 != 0 { next }
			{ best = -1
			  for (i = 1; i <= n[$2]; i++) if (t[$2, i] >= $3 && (best < 0 || t[$2, i] < best)) best = t[$2, i]
			  if (best < 0) miss++; else printf "%.3f\n", (best - $3) / 1e6 >lat
			  all++ }
			END { print miss + 0, all + 0 }' "$tmp/seen" "$tmp/code.$p" >>"$tmp/unseen"
	done <"$tmp/$1.$2.pids"
	if [ ! -s "$tmp/lat" ]; then
		echo "- - -"
		return
	fi
	sort -n "$tmp/lat" | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		i = int(NR * 0.99 + 0.999999); if (i < 1) i = 1; printf "%.1f %.1f ", m, v[i] }'
	awk '{ m += $1; a += $2 } END { printf "%d/%d\n", m, a }' "$tmp/unseen"
}

echo "workload: JitStorm $classes classes x $calls calls, $reps interleaved rounds of $variants, each JVM in a namespace container with -XX:+PreserveFramePointer, $(nproc) CPUs, load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
printf "%-34s %8s %6s %8s %6s %8s %6s %8s %8s   %-40s %8s %6s %10s   %s\n" JDK "base ms" noise "floor ms" noise \
	"watch ms" noise flr/base wat/flr "per-round watch/floor: median (min..max) CI" "ours ms" noise 1+ours/flr \
	"CI; records per run; ours' parts, ms: callbacks/sender/nng/daemon; map latency, ms: median p99 (unseen/compiled, all runs)"
# row CELL VARIANT LABEL: a line of the table for watch (or older) against the same rounds' floor.
row() {
	local c=$1 w=$2 f=$tmp/$1 bm bn fm fn wm wn lo hi st_floor lmed lp99 lun
	col() { # VARIANT: "MEDIAN NOISE" of its CPU, "- -" without that variant
		if [ -s "$f.$1.cpu" ]; then echo "$(median <"$f.$1.cpu") $(noise "$f.$1.cpu")"; else echo "- -"; fi
	}
	read -r bm bn < <(col base)
	read -r fm fn < <(col floor)
	read -r wm wn < <(col "$w")
	div() { a="$1" b="$2" awk 'BEGIN { a = ENVIRON["a"]; b = ENVIRON["b"]; if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.4f", a / b }'; }
	pr="-" ours="-" on="-" oci="-" orat="-" recs="-" parts="-"
	if [ -s "$f.$w.cpu" ]; then
		ratios "$f.$w.cpu" "$f.floor.cpu" >"$tmp/r"
		read -r lo hi < <(boot_ci <"$tmp/r")
		pr="$(median <"$tmp/r") ($(sort -n "$tmp/r" | head -n 1)..$(sort -n "$tmp/r" | tail -n 1)) CI $lo..$hi"
		st_floor=$(cut -d' ' -f1 "$f.floor.own" | median)
		f0="$st_floor" awk 'BEGIN { f = ENVIRON["f0"] } { c = $5 >= 0 ? $5 : $1 - f
			print c + $2 + $3 + $4, c, $2, $3, $4 }' "$f.$w.own" >"$tmp/o5"
		cut -d' ' -f1 "$tmp/o5" >"$f.$w.ours"
		parts=$(for k in 2 3 4 5; do cut -d' ' -f"$k" "$tmp/o5" | median | awk '{printf "%.1f/", $1 / 1000}'; done)
		parts=${parts%/}
		ours=$(median <"$f.$w.ours" | awk '{printf "%.1f", $1 / 1000}')
		on=$(noise "$f.$w.ours")
		fc="$fm" awk 'BEGIN { c = ENVIRON["fc"] } {printf "%.4f\n", 1 + $1 / 1000 / c}' "$f.$w.ours" >"$tmp/or"
		orat=$(median <"$tmp/or")
		read -r lo hi < <(boot_ci <"$tmp/or")
		oci="$lo..$hi"
		# What the agent sent per run: its daemon's disconnect line of each JVM.
		local log=$tmp/d$c.log
		[ "$w" = older ] && log=$tmp/do$c.log
		while read -r p; do
			sed -nE "s/^.*disconnect: pid $p .*; ([0-9]+) records,.*/\1/p" "$log" | tail -n 1
		done <"$f.$w.pids" >"$tmp/recs"
		[ "$(grep -c . "$tmp/recs")" = "$reps" ] ||
			{ echo "jdks: ${c_label[c]}: $(grep -c . "$tmp/recs") of $reps $w JVMs connected"; exit 1; }
		recs=$(median <"$tmp/recs")
	fi
	read -r lmed lp99 lun < <(latency "$c" "$w")
	printf "%-34s %8s %5s%% %8s %5s%% %8s %5s%% %8s %8s   %-40s %8s %5s%% %10s   %s; %s; %s; %s %s (%s)\n" "$3" \
		"$bm" "$bn" "$fm" "$fn" "$wm" "$wn" "$(div "$fm" "$bm")" "$(div "$wm" "$fm")" "$pr" \
		"$ours" "$on" "$orat" "$oci" "$recs" "$parts" "$lmed" "$lp99" "$lun"
}

for ((c = 0; c < ncells; c++)); do
	row "$c" watch "${c_label[c]}"
	[ -z "$baseline" ] || row "$c" older "  BASELINE's agent + watch"
done
if [ -n "$baseline" ]; then
	echo "this build against BASELINE, per round: CPU watch/older and ours watch/older, median (min..max)"
	for ((c = 0; c < ncells; c++)); do
		f=$tmp/$c
		ratios "$f.watch.cpu" "$f.older.cpu" >"$tmp/r"
		ratios "$f.watch.ours" "$f.older.ours" >"$tmp/r2"
		printf "%-34s CPU %s (%s..%s)   ours %s (%s..%s)\n" "${c_label[c]}" "$(median <"$tmp/r")" \
			"$(sort -n "$tmp/r" | head -n 1)" "$(sort -n "$tmp/r" | tail -n 1)" "$(median <"$tmp/r2")" \
			"$(sort -n "$tmp/r2" | head -n 1)" "$(sort -n "$tmp/r2" | tail -n 1)"
	done
fi
if [ "${TIMED:-0}" = 1 ]; then cbs="the callbacks' own thread CPU clock (TIMED=1, libfgagent_bench.so)"; else cbs="the Service Thread over the floor's"; fi
echo "CPU: the JVM's user + sys, for watch plus its daemon's; ours: $cbs, fg-sender, nng and the daemon (schedstat)"
echo "target: watch/floor within noise of 1 on every JDK"
