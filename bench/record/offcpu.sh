#!/bin/bash
# SPDX-License-Identifier: MIT
#
# offcpu.sh BUILD_DIR - what `fgcollect record --event offcpu|wall` costs.
#  1. A switch-heavy target: bench_pingpong, two threads passing a byte over pipes with WORK_NS
#     of CPU per hop (default 5000 ns: well over 50 000 switches/s on this kind of machine; its
#     measured switch rate is printed). Variants (VARIANTS), interleaved per round so that drift
#     on a shared machine hits all alike, each against the `none` round of the same pass:
#       none      nothing attached;
#       default   `record --event offcpu` with the defaults (the BPF program, --switch-rate 25);
#       rN        the same with --switch-rate N (r0: every switch-out's stack);
#       threads   `record --event offcpu --scope threads`: the per-thread tracepoint events of
#                 a collector without CAP_BPF, at their default (every switch-out);
#       tN        the same with --switch-period N;
#       alt       `record --event offcpu` with the fgcollect binary ALT (another build);
#       alt-rN    the same with --switch-rate N;
#       other     `record --event offcpu` of a process that sleeps, the target running beside it
#                 unfollowed: what the program costs the switches of a machine's other
#                 processes (its time per run is theirs);
#       bpf       bpftrace on the same tracepoint taking a user and a kernel stack per switch of
#                 the target (`@[ustack, kstack] = count()`, aggregated in the kernel), when
#                 bpftrace can attach here (otherwise its error is printed instead).
#     Per round: the target's CPU per round trip (both threads, user + system: the perf or BPF
#     work done in their context lands there) and its switches per round trip, from its own
#     marks at the window's edges, and the recorder's CPU over the window (schedstat).
#     Printed (medians over rounds, with the spread min..max): switch rate, the target's extra
#     CPU over none in %, µs of the target's CPU per switch and per stack taken (the extra CPU
#     per round trip / switches or stacks per round trip), µs of the recorder's CPU per switch
#     and per stack, and record's counted drops (lost records, switch-ins lost, stacks that
#     reached no thread root) summed over the rounds; for the variants that run the BPF
#     program, its own time per run (a run per context switch of the machine, counted by the
#     kernel with kernel.bpf_stats_enabled for the bench's length).
#  2. A realistic service: bench/record/realapp.sh with the variants none, offcpu and wall (record with
#     --event at the defaults), same interleaving; its "ours as %" lines give fgcollect's CPU and
#     the JVM's extra CPU as % of the service's CPU (REALAPP=0 skips it).
# Needs root (perf_event_open on a tracepoint). Each pass over the variants holds
# /tmp/fg-e2e.lock (others' heavy runs wait between passes, not for the whole bench).
# Env: REPS (5), ROUND (4 s measured), SETTLE (1 s after the recorder starts), WORK_NS (5000),
#      VARIANTS ("none default r0 threads t16 bpf"; alt when ALT is set), REALAPP (1), and
#      realapp.sh's (REALAPP_VARIANTS: its variants, "none offcpu wall").
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
reps=${REPS:-5}
round=${ROUND:-4}
settle=${SETTLE:-1}
work=${WORK_NS:-5000}
lock=/tmp/fg-e2e.lock
fgcollect=$build/collector/fgcollect
pp=$build/bench/bench_pingpong
for f in "$fgcollect" "$pp"; do
	[[ -x $f ]] || { echo "offcpu: $f not built (cmake --build $build)"; exit 1; }
done
[[ $(id -u) == 0 ]] || { echo "offcpu: run as root (perf_event_open on sched:sched_switch)"; exit 1; }
. "$src/tests/harness/lib.sh"

tmp=$(mktemp -d /tmp/fg-bench-offcpu.XXXXXX)
mkdir -m 0700 "$tmp/nosock" # record listens here on the agent socket (no agent comes)
ppid_=
rpid=
cleanup() {
	set +e
	[[ -n $rpid ]] && kill -INT "$rpid" 2>/dev/null && wait "$rpid" 2>/dev/null
	[[ -n $ppid_ ]] && kill -TERM "$ppid_" 2>/dev/null && wait "$ppid_" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

median() { sort -g | awk '{a[NR]=$1} END {if (NR) print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2; else print "nan"}'; }
# spread: "min..max" of a column of numbers.
spread() { sort -g | awk 'NR==1 {lo=$1} {hi=$1} END {if (NR) printf "%.3g..%.3g", lo, hi; else printf "-"}'; }

# perf_fds PID: PID holds perf event descriptors.
perf_fds() { find /proc/"$1"/fd -lname 'anon_inode:*perf_event*' 2>/dev/null | grep -q .; }

# mark: asks the target for a mark line and prints it ("RT CPU_NS SWITCHES MONO_NS").
mark() {
	local nmark
	nmark=$(($(grep -c '^mark' "$tmp/pp.out") + 1))
	kill -USR1 "$ppid_"
	for _ in $(seq 200); do
		(($(grep -c '^mark' "$tmp/pp.out") >= nmark)) && break
		sleep 0.01
	done
	grep '^mark' "$tmp/pp.out" | sed -n "${nmark}p" | cut -d' ' -f2-
}

# The BPF alternative: can bpftrace attach here?
bpf_why=
if [[ ${BPF:-1} == 0 ]]; then
	bpf_why="left out (BPF=0)"
elif ! command -v bpftrace >/dev/null; then
	bpf_why="bpftrace is not installed (apt-get install bpftrace)"
elif ! timeout 60 bpftrace -e 'tracepoint:sched:sched_switch { exit(); }' >"$tmp/bt.try" 2>&1; then
	bpf_why="bpftrace cannot attach: $(grep -v -i 'RLIMIT_MEMLOCK\|^Attaching' "$tmp/bt.try" | head -n 3 | tr '\n' ' ')"
fi

variants=
for v in ${VARIANTS:-none default r0 threads t16 bpf} $([[ -n ${ALT:-} && " ${VARIANTS:-} " != *" alt"* ]] && echo alt); do
	[[ $v == bpf && -n $bpf_why ]] && continue
	variants="$variants $v"
done
for v in $variants; do : >"$tmp/${v//\//_}"; done

# run VARIANT: one round with a fresh target; appends "RT CPU_NS SW NS REC_NS SWOUT STACKS LOST
# SWIN_LOST NOROOT SAMPLES" (the window's differences, then record's summary counts) to its file.
run() {
	local v=$1 f=${1//\//_} p m0 m1 r0=0 r1=0 log=$tmp/rec.log args=() follow opid=
	: >"$tmp/pp.out"
	"$pp" "$work" >"$tmp/pp.out" &
	ppid_=$!
	fg_wait 10 grep -q '^ready' "$tmp/pp.out" || { echo "offcpu: the target did not start"; return 1; }
	follow=$ppid_
	if [[ $v == other ]]; then
		sleep 600 &
		opid=$!
		follow=$opid
	fi
	case $v in
	none) ;;
	bpf)
		bpftrace -e "tracepoint:sched:sched_switch /pid == $ppid_/ { @[ustack, kstack] = count(); }" \
			>"$tmp/bt.out" 2>&1 &
		rpid=$!
		fg_wait 60 grep -q '^Attaching' "$tmp/bt.out" || { echo "offcpu: bpftrace did not attach"; cat "$tmp/bt.out"; return 1; }
		;;
	*)
		case $v in
		r* | alt-r*) args=(--switch-rate "${v#*r}") ;;
		threads) args=(--scope threads) ;;
		t*) args=(--scope threads --switch-period "${v#t}") ;;
		esac
		"$([[ $v == alt* ]] && echo "$ALT" || echo "$fgcollect")" record --pid "$follow" --event offcpu ${args[@]+"${args[@]}"} \
			--socket "$tmp/nosock/s.sock" --ctl "$tmp/nosock/c.sock" \
			--duration $((settle + round + 30)) -o "$tmp/rec.folded" 2>"$log" &
		rpid=$!
		# Ready when it holds perf events (they count from their opening).
		fg_wait 20 perf_fds "$rpid" || { echo "offcpu: record did not start"; cat "$log"; return 1; }
		;;
	esac
	sleep "$settle"
	[[ -n $rpid ]] && r0=$(fg_cpu_ns "$rpid")
	m0=$(mark)
	sleep "$round"
	m1=$(mark)
	[[ -n $rpid ]] && r1=$(fg_cpu_ns "$rpid")
	# The BPF program's own time per run (kernel.bpf_stats_enabled): a run per context switch
	# of the machine, in the context of the task switched out.
	if [[ $v != none && $v != bpf && -n $bpfstats ]]; then
		bpftool -j prog show name fg_switch 2>/dev/null | python3 -c '
import json, sys
try:
    p = json.load(sys.stdin)
    p = p[0] if isinstance(p, list) else p
    print(p.get("run_time_ns", 0), p.get("run_cnt", 0))
except Exception:
    pass' >>"$tmp/$f.bpf" || true
	fi
	if [[ -n $rpid ]]; then
		kill -0 "$rpid" 2>/dev/null || { echo "offcpu: the recorder of $v ended early"; cat "$log" "$tmp/bt.out" 2>/dev/null | tail; return 1; }
		kill -INT "$rpid"
		wait "$rpid" || true
		rpid=
	fi
	kill -TERM "$ppid_"
	wait "$ppid_" || true
	ppid_=
	if [[ -n $opid ]]; then
		kill "$opid"
		wait "$opid" 2>/dev/null || true
	fi
	local counts="0 0 0 0 - 0"
	if [[ $v != none && $v != bpf ]]; then
		cp "$log" "$tmp/$f.last.log"
		counts=$(awk '
			/off-CPU: [0-9]+ switch-outs/ { for (i = 1; i <= NF; i++) { if ($(i+1) == "switch-outs,") so = $i; if ($(i+1) == "stacks") st = $i } }
			/lost/ && /records/ && match($0, /[0-9]+ lost records/) { split(substr($0, RSTART, RLENGTH), a, " "); lost += a[1] }
			/whose switch-in was lost/ && match($0, /[0-9]+ whose switch-in/) { split(substr($0, RSTART, RLENGTH), a, " "); swl = a[1] }
			/^fgcollect record: [0-9]+ samples/ { n = $3 }
			/reached a thread root/ && match($0, /root[^:]*: [0-9.]+/) { r = substr($0, RSTART, RLENGTH); sub(/.*: /, "", r) }
			END { printf "%d %d %d %d %s %d", so, st, lost, swl, r == "" ? "-" : r, n }' "$log")
	fi
	echo "$m1 $m0 $((r1 - r0)) $counts" |
		awk '{ printf "%d %d %d %d %d %s %s %s %s %s %s\n", $1-$5, $2-$6, $3-$7, $4-$8, $9, $10, $11, $12, $13, $14, $15 }' >>"$tmp/$f"
}

# The BPF program's run time, counted by the kernel while the bench runs (restored after).
bpfstats=
if command -v bpftool >/dev/null && [[ -w /proc/sys/kernel/bpf_stats_enabled ]]; then
	bpfstats=$(cat /proc/sys/kernel/bpf_stats_enabled)
	echo 1 >/proc/sys/kernel/bpf_stats_enabled
	trap 'echo "$bpfstats" >/proc/sys/kernel/bpf_stats_enabled; cleanup' EXIT
fi

exec {lk}>"$lock"
for rep in $(seq "$reps"); do
	flock "$lk" # one pass of every variant (well under a minute) at a time
	for v in $variants; do run "$v"; done
	flock -u "$lk"
	echo "offcpu: round $rep of $reps done" >&2
done

echo "target: bench_pingpong, two threads over pipes, $work ns of CPU per hop; $reps interleaved rounds of $round s after $settle s; $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
[[ -n $bpf_why ]] && echo "bpf: $bpf_why"
printf "%-12s %16s %20s %18s %18s %14s %14s %s\n" variant "switches/s" "target CPU +% (spread)" "target us/switch" "target us/stack" "rec us/switch" "rec us/stack" "drops (lost records, switch-ins lost; all rounds); stacks reaching a thread root"
# per round figures against the none round of the same pass
for v in $variants; do
	f=${v//\//_}
	paste -d' ' "$tmp/none" "$tmp/$f" | awk '
	{ rt0 = $1; c0 = $2; rt = $12; c = $13; sw = $14; ns = $15; rec = $16; so = $17; st = $18
	  cpr0 = rt0 ? c0 / rt0 : 0; cpr = rt ? c / rt : 0; spr = rt ? sw / rt : 0
	  stacks = (so > 0) ? sw * st / so : sw          # stacks taken in the window
	  extra = cpr - cpr0
	  printf "%.0f %.3f %.3f %.3f %.3f %.3f %d %d %s\n", ns ? sw * 1e9 / ns : 0, cpr0 ? 100 * extra / cpr0 : 0,
		spr ? extra / spr / 1000 : 0, (stacks && rt) ? extra * rt / stacks / 1000 : 0,
		sw ? rec / sw / 1000 : 0, stacks ? rec / stacks / 1000 : 0, $19, $20, $21 }' >"$tmp/$f.fig"
	col() { cut -d' ' -f"$1" "$tmp/$f.fig"; }
	printf "%-12s %9.0f %-6s %7.2f %-12s %7.2f %-10s %7.2f %-10s %6.2f %-7s %6.2f %-7s %d, %d; rooted %s\n" "$v" \
		"$(col 1 | median)" "" "$(col 2 | median)" "($(col 2 | spread))" \
		"$(col 3 | median)" "($(col 3 | spread))" "$(col 4 | median)" "($(col 4 | spread))" \
		"$(col 5 | median)" "" "$(col 6 | median)" "" \
		"$(col 7 | awk '{s += $1} END {print s + 0}')" "$(col 8 | awk '{s += $1} END {print s + 0}')" \
		"$(col 9 | grep -v -- - | median | awk '{ print $1 == "nan" ? "-" : $1 "%" }')"
done
for v in $variants; do
	f=${v//\//_}
	[[ -s $tmp/$f.bpf ]] || continue
	v="$v" awk '$2 > 0 { ns += $1; n += $2 } END { if (n) printf "%-12s BPF program: %.0f ns per context switch of the machine (%d runs)\n", ENVIRON["v"], ns / n, n }' "$tmp/$f.bpf"
done
echo "goal: a few % of the target's CPU at most on a switch-heavy target, drops counted"

if [[ ${REALAPP:-1} != 0 ]]; then
	echo
	echo "realistic service (bench/record/realapp.sh, variants ${REALAPP_VARIANTS:-none offcpu wall}):"
	VARIANTS=${REALAPP_VARIANTS:-none offcpu wall} LOCK=$lock "$src/bench/record/realapp.sh" "$build" ||
		echo "offcpu: the realistic service's part failed (see above)"
	echo "goal: offcpu and wall <= 1% of the service's CPU (fgcollect + the JVM's extra CPU)"
fi
