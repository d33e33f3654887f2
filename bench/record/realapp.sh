#!/bin/bash
# SPDX-License-Identifier: MIT
#
# realapp.sh BUILD_DIR - what profiling costs a real service: the Jetty 9 + JDBC service of
# tests/java/realapp (Debian's jars) on a throwaway PostgreSQL on loopback
# (tests/e2e/realapp_db.sh), one JVM with libfgagent.so for the whole run, loaded by
# `ab -k -c 4` in rounds after WARM seconds of warm-up. Three variants, interleaved (none,
# watch, record, none, ...) so drift on a shared machine hits all alike:
#   none    the agent loaded, no collector listening;
#   watch   `fgcollect watch` on the agent's socket: the agent connects and sends its names
#           (tables on demand, so off);
#   record  `fgcollect record --pid --freq FREQ` on that socket (no daemon): the agent
#           connects and turns its tables on, and every sample copies user stack in the
#           kernel, charged to the JVM's threads (per-CPU events, the other processes'
#           samples dropped by the kernel's BPF filter before any copy).
# Each round starts the variant's fgcollect, loads the service SETTLE seconds (the one-off
# costs of a start: connection, names and tables, fgcollect's setup; reported apart), then
# ROUND seconds measured (the steady state), then stops it.
# Measured: requests/s (ab), the JVM's CPU (utime + stime of /proc/PID/stat) and CPU per
# request, and the whole machine's busy CPU per request (host us/req: the database, ab, and the
# kernel's work for samples of other processes included); our own CPU counted directly: the
# agent's threads (fg-sender, nng:*) and every thread of fgcollect, on-CPU time from
# /proc/PID/task/*/schedstat.
# Printed: medians, ratios against `none` (ratio of medians and per-round ratios), and
# "ours" as % of the service's CPU in the same window: agent threads + fgcollect, and, for
# record, the JVM's extra CPU per request over `none` (the kernel's sampling and stack
# copies land there; by difference, so as noisy as the JVM's CPU). For offcpu and wall, the
# off-CPU BPF program's time too: the bench sets kernel.bpf_stats_enabled for its run, and the
# program then counts its own time from its clock read to its last step in each run that follows
# one of the JVM's threads in or out (record prints it for the whole recording, scaled here to
# the measured window; it is in "together"); and the kernel's count of the program's time at
# every switch of the machine, the database's and ab's included (its run_time_ns and run_cnt,
# read with bpftool at the window's ends). Goal: together <= 1% at the defaults.
# Needs root (the database servers run as postgres, perf_event_open for record).
# VARIANTS picks and orders the variants (default "none watch record"); more record the
# off-CPU and wall-clock profiles: offcpu (`record --event offcpu`, the defaults: the BPF
# program), offcpu-rN (the same with --switch-rate N), offcpu-threads (per-thread tracepoint
# events: --scope threads, a collector without CAP_BPF), offcpu-pN (--switch-period N) and
# wall (`record --event wall --freq FREQ`), wall-rN (the same with --switch-rate N), offcpu-rN-sM and wall-rN-sM (with --stack-copy M too); record-sN records CPU samples with an N-byte stack copy (--stack-copy N), so copy
# sizes compare in the same rounds; record-threads records with per-thread sampling events
# (--scope threads, what an unprivileged recording falls back to) instead of per-CPU ones. With LOCK=FILE each pass over the variants holds flock
# FILE (others' heavy runs wait between passes, not for the whole bench). perf is stock
# `perf record -e cpu-clock -F FREQ -g -p JPID`: the same per-thread sampling events without a
# stack copy, so the JVM's extra CPU that any per-thread sampler costs shows apart from ours
# ("fgcollect" is perf's own CPU then).
# With BASELINE=DIR (another build directory) a fourth variant, base, records with DIR's
# fgcollect in the same interleaved rounds, and record's CPU per sample is printed for both;
# base-V (e.g. base-offcpu-r400) is variant V with DIR's fgcollect.
# Env: REPS (3), ROUND (10 s), SETTLE (3 s), WARM (15 s), FREQ (99), STACK (fgcollect's default),
# JDK (JDK 17), PFP (on|off: -XX:+/-PreserveFramePointer, default on), DB (pg|maria), BASELINE,
# VARIANTS, LOCK.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
reps=${REPS:-3}
round=${ROUND:-10}
settle=${SETTLE:-3}
warm=${WARM:-15}
freq=${FREQ:-99}
jdk=${JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
pfp=${PFP:-on}
db=${DB:-pg}
fgcollect=$build/collector/fgcollect
base_fgcollect=
if [[ -n ${BASELINE:-} ]]; then
	base_fgcollect=$(cd "$BASELINE" && pwd)/collector/fgcollect
	[[ -x $base_fgcollect ]] || { echo "realapp: $base_fgcollect not built"; exit 1; }
fi
agent=$build/jvmti-agent/libfgagent.so
jar=$build/tests/java/fg-realapp.jar
for f in "$fgcollect" "$agent" "$jar"; do
	[[ -e $f ]] || { echo "realapp: $f not built (make build builds it; the jar needs libjetty9-java, libpostgresql-jdbc-java, libmariadb-java)"; exit 1; }
done
[[ $(id -u) == 0 ]] || { echo "realapp: run as root (database servers, perf_event_open)"; exit 1; }
command -v ab >/dev/null || { echo "realapp: ab is not installed (apache2-utils)"; exit 1; }
. "$src/tests/harness/lib.sh"
. "$src/tests/e2e/realapp_db.sh"

tmp=$(mktemp -d /tmp/fg-bench-realapp.XXXXXX)
chmod 0755 "$tmp"
jpid=
fgpid=
bpf_stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)
cleanup() {
	set +e
	echo "$bpf_stats_was" >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null
	[[ -n $fgpid ]] && kill -TERM "$fgpid" 2>/dev/null
	[[ -n $jpid ]] && kill -TERM "$jpid" 2>/dev/null && wait "$jpid" 2>/dev/null
	ra_db_stop_all
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [[ $db == maria ]]; then
	ra_maria_start "$tmp/maria" || { echo "realapp: MariaDB did not start"; exit 1; }
	port=$RA_MARIA_PORT
else
	ra_pg_start "$tmp/pg" || { echo "realapp: PostgreSQL did not start"; exit 1; }
	port=$RA_PG_PORT
fi
mkdir -p "$tmp/sock" "$tmp/noctl"
mkdir -m 0700 "$tmp/ctl" # the daemon wants its control directory private
sock=$tmp/sock/fgcollect.sock
if [[ -n ${LOCK:-} ]]; then # held for the JVM's start and warm-up, then per pass
	exec {lk}>"$LOCK"
	flock "$lk"
fi
popt=-XX:+PreserveFramePointer
[[ $pfp == off ]] && popt=-XX:-PreserveFramePointer
"$jdk/bin/java" "$popt" "-agentpath:$agent=socket=$sock" -cp "$jar" RealApp "$db" "$port" 4 \
	>"$tmp/app.log" 2>&1 &
jpid=$!
for _ in $(seq 600); do
	grep -q 'RealApp ready port=' "$tmp/app.log" && break
	kill -0 "$jpid" 2>/dev/null || { cat "$tmp/app.log"; exit 1; }
	sleep 0.1
done
hp=$(sed -n 's/.*RealApp ready port=\([0-9]*\).*/\1/p' "$tmp/app.log" | head -n 1)
[[ -n $hp ]] || { echo "realapp: the service did not start"; tail "$tmp/app.log"; exit 1; }
url=http://127.0.0.1:$hp/q
hz=$(getconf CLK_TCK)

jvm_ticks() { awk '{print $14 + $15}' "/proc/$jpid/stat"; }
# host_ticks: the machine's busy CPU (user, nice, system, irq, softirq, steal): the database,
# ab and the kernel's work for samples of other processes count too.
host_ticks() { awk '$1 == "cpu" {print $2 + $3 + $4 + $7 + $8 + $9; exit}' /proc/stat; }
# agent_ns: on-CPU nanoseconds of the agent's threads (fg-sender, nng:*) alive now.
agent_ns() {
	local t c ns _ sum=0
	for t in /proc/"$jpid"/task/*; do
		read -r c 2>/dev/null <"$t/comm" || continue
		case $c in
		fg-sender | nng:*) read -r ns _ 2>/dev/null <"$t/schedstat" && sum=$((sum + ns)) ;;
		esac
	done
	echo "$sum"
}
# bpf_ns: "RUN_TIME_NS RUN_CNT" of the off-CPU BPF program loaded now ("0 0" if none).
bpf_ns() {
	{ bpftool prog show name fg_switch 2>/dev/null || true; } |
		awk '{ for (i = 1; i < NF; i++) { if ($i == "run_time_ns") t = $(i + 1); if ($i == "run_cnt") c = $(i + 1) } }
			END { print t + 0, c + 0 }'
}
# load SECONDS: ab on the service; prints its requests/s (fails on errors).
load() {
	ab -k -c 4 -t "$1" -n 100000000 -s 10 "$url" >"$tmp/ab.out" 2>&1 || { cat "$tmp/ab.out"; return 1; }
	! grep -q '^Non-2xx' "$tmp/ab.out" || { grep -E '^(Complete|Non-2xx)' "$tmp/ab.out"; tail "$tmp/app.log"; return 1; }
	sed -n 's/^Requests per second: *\([0-9.]*\).*/\1/p' "$tmp/ab.out"
}

# run VARIANT: one round: the variant's fgcollect starts, SETTLE s of load (its connection,
# the agent's names and tables, its symbol loading: the one-off costs), then ROUND s of load
# measured (the steady state), then it stops. Appends to $tmp/VARIANT
# "REQ_PER_S JVM_MS AGENT_US FGCOLLECT_US REQUESTS HOST_MS BPF_US BPF_RUNS BPF_JVM_US" of the
# measured window (BPF_*: the off-CPU program's run time and runs in it, 0 without the program;
# BPF_JVM_US: its own count of its time at the JVM's switches) and to
# $tmp/VARIANT.start "AGENT_US FGCOLLECT_US" of the settling one.
run() {
	local name=$1 v=$1 r c0 c1 h0 h1 a0 a1 as rps f0=0 f1=0 fs=0 ev=() fp= st bin=$fgcollect b0 b1 bj=0
	a0=$(agent_ns)
	if [[ $v == base* ]]; then
		[[ -n $base_fgcollect ]] || { echo "realapp: $v needs BASELINE"; return 1; }
		bin=$base_fgcollect
		v=${v#base}
		v=${v#-}
		v=${v:-record}
	fi
	case $v in
	watch)
		"$fgcollect" watch --socket "$sock" --ctl "$tmp/ctl/ctl.sock" >/dev/null 2>"$tmp/watch.log" &
		fp=$!
		;;
	perf)
		perf record -q -e cpu-clock -F "$freq" -g -p "$jpid" -o "$tmp/perf.data" 2>"$tmp/perf.log" &
		fp=$!
		;;
	record | record-s* | record-threads | offcpu | wall | offcpu-* | wall-r*)
		[[ $v == offcpu || $v == wall ]] && ev=(--event "$v")
		[[ $v == record-threads ]] && ev=(--scope threads)
		[[ $v == offcpu-p* ]] && ev=(--event offcpu --switch-period "${v#offcpu-p}")
		st=${STACK:-}
		if [[ $v == offcpu-r* || $v == wall-r* ]]; then
			r=${v#*-r}
			[[ $r == *-s* ]] && st=${r#*-s}
			ev=(--event "${v%%-*}" --switch-rate "${r%%-s*}")
		fi
		[[ $v == offcpu-threads ]] && ev=(--event offcpu --scope threads)
		[[ $v == record-s* ]] && st=${v#record-s}
		"$bin" record --pid "$jpid" --socket "$sock" --ctl "$tmp/noctl/ctl.sock" \
			${ev[@]+"${ev[@]}"} \
			--freq "$freq" ${st:+--stack-copy "$st"} --duration $((settle + round + 30)) \
			-o "$tmp/rec.folded" 2>"$tmp/rec.log" &
		fp=$!
		;;
	esac
	fgpid=$fp
	load "$settle" >/dev/null
	[[ -n $fp ]] && fs=$(fg_cpu_ns "$fp")
	as=$(agent_ns)
	c0=$(jvm_ticks)
	h0=$(host_ticks)
	b0=$(bpf_ns)
	f0=$fs
	rps=$(load "$round")
	c1=$(jvm_ticks)
	h1=$(host_ticks)
	b1=$(bpf_ns)
	a1=$(agent_ns)
	if [[ -n $fp ]]; then
		f1=$(fg_cpu_ns "$fp")
		kill -0 "$fp" 2>/dev/null || { echo "realapp: fgcollect $v ended early"; cat "$tmp/rec.log" "$tmp/watch.log" 2>/dev/null; return 1; }
		kill "-$([[ $v == watch ]] && echo TERM || echo INT)" "$fp"
		wait "$fp" || true
		fgpid=
		if [[ $v != watch && $v != perf ]]; then
			cp "$tmp/rec.log" "$tmp/$name.last.log"
			# Samples in the measured window: the recording's rate over its whole run.
			sed -n 's/^fgcollect record: \([0-9]*\) samples in \([0-9.]*\) s.*/\1 \2/p' "$tmp/rec.log" |
				f=$((f1 - f0)) r=$round awk '{ n = $1 * ENVIRON["r"] / $2; if (n > 0) printf "%.1f\n", ENVIRON["f"] / 1000 / n }' >>"$tmp/$name.us"
			# The program's time at the JVM's switches (us), its share of the window.
			bj=$(r=$round awk '/ samples in / { s = $6 } /BPF program ran/ { for (i = 1; i < NF; i++) if ($i == "ran") ms = $(i + 1) }
				END { printf "%.0f", (s > 0 ? ms * 1000 * ENVIRON["r"] / s : 0) }' "$tmp/rec.log")
		fi
	fi
	echo "$rps $(((c1 - c0) * 1000 / hz)) $(((a1 - as) / 1000)) $(((f1 - f0) / 1000)) $(r=$rps t=$round awk 'BEGIN {printf "%.0f", ENVIRON["r"] * ENVIRON["t"]}') $(((h1 - h0) * 1000 / hz)) $(((${b1% *} - ${b0% *}) / 1000)) $((${b1#* } - ${b0#* })) $bj" >>"$tmp/$name"
	echo "$(((as - a0) / 1000)) $((fs / 1000))" >>"$tmp/$name.start"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
col() { cut -d' ' -f"$2" "$tmp/$1"; }
ratio() { a=$1 b=$2 awk 'BEGIN { a = ENVIRON["a"]; b = ENVIRON["b"]; print b ? a / b : 0 }'; }

variants=${VARIANTS:-none watch record}
[[ -n $base_fgcollect && " $variants " != *" base"* ]] && variants="$variants base"
[[ ${variants%% *} == none ]] || { echo "realapp: VARIANTS must start with none (the baseline)"; exit 1; }
# The kernel counts BPF programs' time only while asked: for the variants that load one.
[[ " $variants " == *" offcpu"* || " $variants " == *" wall"* || " $variants " == *" base-offcpu"* ||
	" $variants " == *" base-wall"* ]] && { echo 1 >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null || true; }
load "$warm" >/dev/null # JIT warm-up
[[ -n ${LOCK:-} ]] && flock -u "$lk"
for v in $variants; do : >"$tmp/$v"; : >"$tmp/$v.start"; : >"$tmp/$v.us"; done
for _ in $(seq "$reps"); do
	[[ -n ${LOCK:-} ]] && flock "$lk"
	for v in $variants; do run "$v"; done
	[[ -n ${LOCK:-} ]] && flock -u "$lk"
done

echo "service: Jetty 9 + JDBC ($db) on $(basename "$jdk"), PreserveFramePointer $pfp, ab -k -c 4, $reps interleaved rounds of $settle s settling + $round s measured, after $warm s of warm-up; record at $freq Hz; $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-14s %9s %9s %10s %10s %10s %9s %9s %11s %9s\n" variant "req/s" "JVM ms" "JVM us/req" "agent ms" "fgcoll ms" "rps/none" "cpu/req/none" "host us/req" "host/none"
# Per round "cpu per request" in microseconds, for the ratios.
for v in $variants; do
	awk '{printf "%.2f\n", $5 ? $2 * 1000 / $5 : 0}' "$tmp/$v" >"$tmp/$v.cpr"
	awk '{printf "%.2f\n", $5 ? $6 * 1000 / $5 : 0}' "$tmp/$v" >"$tmp/$v.hpr"
done
nh=$(median <"$tmp/none.hpr")
nr=$(col none 1 | median)
nc=$(median <"$tmp/none.cpr")
for v in $variants; do
	r=$(col "$v" 1 | median)
	c=$(median <"$tmp/$v.cpr")
	h=$(median <"$tmp/$v.hpr")
	printf "%-14s %9.1f %9.0f %10.1f %10.1f %10.1f %9.4f %9.4f %11.1f %9.4f\n" "$v" "$r" "$(col "$v" 2 | median)" "$c" \
		"$(col "$v" 3 | median | awk '{print $1 / 1000}')" "$(col "$v" 4 | median | awk '{print $1 / 1000}')" \
		"$(ratio "$r" "$nr")" \
		"$(ratio "$c" "$nc")" "$h" "$(ratio "$h" "$nh")"
done
echo "per-round ratios against the none round before them (rps, JVM CPU per request):"
for v in ${variants#none }; do
	paste -d' ' "$tmp/none" "$tmp/$v" "$tmp/none.cpr" "$tmp/$v.cpr" |
		v=$v awk '{ printf "  %-7s rps %.4f  cpu/req %.4f\n", ENVIRON["v"], $1 ? $10 / $1 : 0, $19 ? $20 / $19 : 0 }'
done
echo "ours as % of the service's CPU (medians of per-round figures; service = the JVM's CPU less the agent's threads):"
for v in ${variants#none }; do
	paste -d' ' "$tmp/$v" "$tmp/none.cpr" | v=$v awk '
	{ v = ENVIRON["v"]; svc = $2 - $3 / 1000; agent = $3 / 10 / svc; fg = $4 / 10 / svc
	  bpf = $7 / 10 / svc; per = $8 ? $7 * 1000 / $8 : 0; jvm = $9 / 10 / svc
	  extra = svc - $10 * $5 / 1000   # the JVM beyond none at this round'"'"'s requests
	  printf "%s %.3f %.3f %.3f %.3f %.3f %.0f %.3f\n", v, agent, fg, agent + fg + jvm, extra * 100 / svc, bpf, per, jvm }' >"$tmp/$v.ours"
	printf "  %-7s agent threads %.3f%%  fgcollect %.3f%%" "$v" \
		"$(cut -d' ' -f2 "$tmp/$v.ours" | median)" "$(cut -d' ' -f3 "$tmp/$v.ours" | median)"
	cut -d' ' -f8 "$tmp/$v.ours" | median | awk '{ exit !($1 > 0) }' &&
		printf "  the BPF program at the JVM's switches %.3f%%" "$(cut -d' ' -f8 "$tmp/$v.ours" | median)"
	printf "  together %.3f%%" "$(cut -d' ' -f4 "$tmp/$v.ours" | median)"
	cut -d' ' -f6 "$tmp/$v.ours" | median | awk '{ exit !($1 > 0) }' &&
		printf "; the BPF program at every switch of the machine %.3f%% (%.0f ns per run)" \
			"$(cut -d' ' -f6 "$tmp/$v.ours" | median)" "$(cut -d' ' -f7 "$tmp/$v.ours" | median)"
	if [[ $v == perf ]]; then
		printf "; the JVM's extra CPU per request over none (by difference): %.2f%%" \
			"$(cut -d' ' -f5 "$tmp/$v.ours" | median)"
	elif [[ $v != watch ]]; then
		printf "; record %.1f us of CPU per sample" "$(median <"$tmp/$v.us")"
		printf "; the JVM's extra CPU per request over none (sampling, stack copies; by difference): %.2f%%" \
			"$(cut -d' ' -f5 "$tmp/$v.ours" | median)"
	fi
	echo
done
echo "one-off per start, the first $settle s (connection, the agent's names and tables, fgcollect's setup), medians:"
for v in ${variants#none }; do
	printf "  %-7s agent threads %.1f ms, fgcollect %.1f ms\n" "$v" "$(cut -d' ' -f1 "$tmp/$v.start" | median | awk '{print $1 / 1000}')" \
		"$(cut -d' ' -f2 "$tmp/$v.start" | median | awk '{print $1 / 1000}')"
done
for v in $variants; do
	[[ -s $tmp/$v.last.log ]] || continue
	sed -n "s/^fgcollect record: /  last $v: /p" "$tmp/$v.last.log" | grep -E 'samples in|tables|off-CPU|reached a thread root|wall:' || true
done
echo "goal: ours <= 1% of the service's CPU at 99 Hz"
