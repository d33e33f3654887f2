#!/bin/bash
# SPDX-License-Identifier: MIT
#
# vthread.sh BUILD_DIR - what seeing virtual threads costs a JVM: HotSpot's own events, before
# any agent work. VThreadMounts (tests/java: THREADS virtual threads, each WORK_US of computation
# then a park of PARK_US, one unmount and one mount per loop: ~10 000 mounts a second at the
# defaults) runs once per variant, each with bench/agent/vthread_floor.c in a mode:
#   none       no agent
#   caps       can_support_virtual_threads added, no event on
#   startend   VirtualThreadStart/End on (once per virtual thread's life)
#   mount      the extension events VirtualThreadMount/Unmount on, empty callbacks
#   mounttime  as mount, with what exact unmounted totals need in the callbacks (a timestamp in
#              the virtual thread's JVMTI thread-local storage, a sum at the mount)
#   fgagent    libfgagent.so with no collector: what the JVM pays with no recording on
#   fgrec      libfgagent.so with `fgcollect record --event REC_EVENT` (wall unless told)
#              recording the JVM through each of its rounds (settle included): the agent's
#              virtual-thread events and stacks, and everything else a wall recording costs
#              the JVM (CPU samples, the BPF program at its switches); a CPU recording: the
#              mounts and the CPU samples. The recording's own CPU is not the JVM's.
#   fgagentb, fgrecb  as fgagent and fgrec with another build of libfgagent.so (AGENT_B), to
#              compare two builds in one run (in the default list only with AGENT_B)
# The JVMs stay alive for all rounds; in each round every variant in turn runs alone (the
# others stopped with SIGSTOP) for SETTLE then ROUND seconds. Printed per variant: the JVM's CPU
# per loop and the kernel's part of it, its threads' context switches per loop (medians over
# rounds), the extra CPU per mount against
# none (the same round), and what 10 000 mounts a second would then cost, as a share of the
# JVM's CPU at that rate; then the ratios of the JVM's CPU and fgcollect's together (fgrec),
# and of the JVM's alone (fgagent), against none's, paired per round (median and spread), and
# of the JVM's kernel CPU alone (the system time of /proc/PID/stat, in clock ticks: per-switch
# work such as a sched_switch program's shows there). With kernel.bpf_stats_enabled=1 while it
# runs, a wall or off-CPU recording also says its sched_switch program's own time at the JVM's
# switches (from its clock read on: its entry and first look-ups are not counted): printed a
# loop and a run, and against none's CPU a loop (paired per round).
# Env: JDKS (default: every JDK 21+ under /usr/lib/jvm), REPS (5), ROUND (5 s), SETTLE (2 s),
#      VARIANTS (default all, in the order above; none must be one of them),
#      THREADS (8), WORK_US (50), PARK_US (750), REC_EVENT (wall; cpu: a CPU recording, which
#      asks the agent for the mounts alone), AGENT (libfgagent.so of BUILD_DIR), AGENT_B.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
reps=${REPS:-5}
round=${ROUND:-5}
settle=${SETTLE:-2}
threads=${THREADS:-8}
work_us=${WORK_US:-50}
park_us=${PARK_US:-750}
floor=$build/bench/libfg_vthread_floor.so
jar=$build/tests/java/fg-workloads.jar
agentso=${AGENT:-$build/jvmti-agent/libfgagent.so}
agentb=${AGENT_B:-}
fgc=$build/collector/fgcollect
for f in "$floor" "$jar" "$agentso" "$fgc" ${agentb:+"$agentb"}; do
	[[ -e $f ]] || { echo "vthread: $f not built (cmake --build $build)"; exit 1; }
done
variants=${VARIANTS:-none caps startend mount mounttime fgagent fgrec${agentb:+ fgagentb fgrecb}}
for v in $variants; do
	[[ ($v != fgagentb && $v != fgrecb) || -n $agentb ]] || { echo "vthread: $v needs AGENT_B"; exit 1; }
done
tmp=$(mktemp -d /tmp/fg-bench-vthread.XXXXXX)
# The agent sockets' directory: searchable by the recording's sandboxed listener, which probes them.
chmod 0755 "$tmp"
declare -A pid=()
cleanup() {
	vt_stop_all
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# shellcheck source=bench/agent/vthread.lib
. "$(dirname "${BASH_SOURCE[0]}")/vthread.lib"
hz=$(getconf CLK_TCK)
# sys_ns PID: the JVM's kernel CPU (its system time, /proc/PID/stat), ns.
sys_ns() {
	local f
	read -r f <"/proc/$1/stat"
	f=${f##*) }
	# shellcheck disable=SC2086 # split into the fields after the command's name
	set -- $f
	echo $((${13} * 1000000000 / hz))
}
# switches PID: the context switches of the JVM's live threads (voluntary and not).
switches() {
	local t s=0 k v _
	for t in /proc/"$1"/task/*; do
		while read -r k v _; do
			[[ $k != *_ctxt_switches: ]] || s=$((s + v))
		done 2>/dev/null <"$t/status"
	done
	echo "$s"
}
# loops V: "NANOTIME LOOPS" of variant V's last report.
loops() { grep '^vtm ' "$tmp/$1.out" | tail -1 | cut -d' ' -f2-; }

jdks=${JDKS:-}
if [[ -z $jdks ]]; then
	for j in /usr/lib/jvm/*/; do
		[[ -x $j/bin/java && ! -L ${j%/} ]] || continue
		v=$("$j/bin/java" -XshowSettings:properties -version 2>&1 |
			awk -F'= ' '/java.specification.version/ {print $2}')
		if [[ $v =~ ^[0-9]+$ ]] && ((v >= 21)); then
			jdks+=" ${j%/}"
		fi
	done
fi
[[ -n $jdks ]] || { echo "vthread: no JDK 21 or later under /usr/lib/jvm (JDKS=...)"; exit 1; }
echo "vthread: $threads virtual threads, each ${work_us} us of work then a ${park_us} us park;" \
	"$reps rounds of ${round} s per variant"
for jdk in $jdks; do
	for v in $variants; do
		case $v in
		none) agent=() ;;
		fgagent) agent=("-agentpath:$agentso=socket=$tmp/nobody/fg.sock") ;;
		fgrec) agent=("-agentpath:$agentso=socket=$tmp/fg.sock") ;;
		fgagentb) agent=("-agentpath:$agentb=socket=$tmp/nobody/fg.sock") ;;
		fgrecb) agent=("-agentpath:$agentb=socket=$tmp/fgb.sock") ;;
		*) agent=("-agentpath:$floor=mode=$v") ;;
		esac
		vt_start vthread "$v" "$jdk" "$jar" "$threads" "$work_us" "$park_us" "$tmp/$v.out" \
			"${agent[@]}"
	done
	: >"$tmp/rounds"
	for r in $(seq "$reps"); do
		for v in $variants; do
			kill -CONT "${pid[$v]}"
			rec=""
			if [[ $v == fgrec || $v == fgrecb ]]; then
				sock=$tmp/fg.sock
				[[ $v == fgrec ]] || sock=$tmp/fgb.sock
				"$fgc" record --pid "${pid[$v]}" --socket "$sock" \
					--ctl "$tmp/nobody/ctl.sock" --event "${REC_EVENT:-wall}" \
					--duration "$((settle + round + 1))" -o "$tmp/rec.folded" \
					2>>"$tmp/rec.err" &
				rec=$!
			fi
			sleep "$settle"
			read -r t0 l0 <<<"$(loops "$v")"
			c0=$(cpu_ns "${pid[$v]}")
			s0=$(sys_ns "${pid[$v]}")
			w0=$(switches "${pid[$v]}")
			r0=0
			[[ -z $rec ]] || r0=$(cpu_ns "$rec")
			sleep "$round"
			c1=$(cpu_ns "${pid[$v]}")
			s1=$(sys_ns "${pid[$v]}")
			w1=$(switches "${pid[$v]}")
			r1=0
			[[ -z $rec ]] || r1=$(cpu_ns "$rec")
			read -r t1 l1 <<<"$(loops "$v")"
			[[ -z $rec ]] || wait "$rec" || { echo "vthread: fgcollect record failed:"; cat "$tmp/rec.err"; exit 1; }
			# The sched_switch program's own time at the JVM's switches over the whole
			# recording, in ms, and its runs (said with kernel.bpf_stats_enabled=1 only).
			bpf="0 0"
			if [[ -n $rec ]]; then
				bpf=$(grep 'BPF program ran' "$tmp/rec.err" | tail -1 |
					sed -n 's/.* ran \([0-9.]*\) ms at .*(\([0-9]*\) runs.*/\1 \2/p' || true)
				[[ -n $bpf ]] || bpf="0 0"
				mv "$tmp/rec.err" "$tmp/rec.err.keep" # the last round's
			fi
			kill -STOP "${pid[$v]}"
			# CPU per loop (us) and loops a second, this round, the collector's CPU per
			# loop (fgrec; 0 for the others), the JVM's kernel CPU per loop and its
			# threads' context switches per loop.
			# threads' context switches per loop; the BPF program's time per loop (us,
			# over the recording: settle + round + 1 s at this round's rate) and per run.
			echo "$r $v $((c1 - c0)) $((l1 - l0)) $((t1 - t0)) $round $((r1 - r0)) $((s1 - s0))" \
				"$((w1 - w0)) $bpf $((settle + round + 1))" |
				awk '{ rate = $4 / ($5 / 1e9); n = rate * $6
					printf "%s %s %.4f %.0f %.4f %.4f %.4f %.4f %.1f\n", $1, $2, $3 / 1e3 / n,
						rate, $7 / 1e3 / n, $8 / 1e3 / n, $9 / n,
						$10 * 1e3 / (rate * $12), $11 ? $10 * 1e6 / $11 : 0 }' >>"$tmp/rounds"
		done
	done
	ver=$("$jdk/bin/java" -version 2>&1 | head -1)
	echo "== $ver ($jdk)"
	base=$(awk '$2 == "none" {print $3}' "$tmp/rounds" | median)
	printf '  %-10s %14s %12s %12s %10s %20s %16s\n' variant "us CPU/loop" "of it kernel" \
		"loops/s" "switches" "extra us/mount" "of the JVM CPU"
	for v in $variants; do
		m=$(V=$v awk '$2 == ENVIRON["V"] {print $3}' "$tmp/rounds" | median)
		rate=$(V=$v awk '$2 == ENVIRON["V"] {print $4}' "$tmp/rounds" | median)
		sys=$(V=$v awk '$2 == ENVIRON["V"] {print $6}' "$tmp/rounds" | median)
		csw=$(V=$v awk '$2 == ENVIRON["V"] {print $7}' "$tmp/rounds" | median)
		# extra per mount, paired with none in the same round (a loop is one mount + one unmount)
		paired() {
			V=$v awk '$2 == "none" {b[$1] = $3} $2 == ENVIRON["V"] {x[$1] = $3}
				END {for (r in x) print x[r] - b[r]}' "$tmp/rounds"
		}
		ex=$(paired | median)
		sp=$(paired | spread)
		# The extra CPU as a share of the JVM's own at any mount rate (both are per loop).
		pct=$(echo "$ex $base" | awk '{ printf "%.2f%%", 100 * $1 / $2 }')
		printf '  %-10s %14.3f %12.3f %12.0f %10.2f %11.3f (%s) %16s\n' "$v" "$m" "$sys" "$rate" \
			"$csw" "$ex" "$sp" "$pct"
	done
	# The recording whole: the JVM's CPU and the collector's, against the JVM's with no
	# agent, as a ratio (per round, paired; median and spread).
	for v in fgrec fgrecb; do
		[[ " $variants " == *" $v "* ]] || continue
		ratio() {
			V=$v awk '$2 == "none" {b[$1] = $3} $2 == ENVIRON["V"] {x[$1] = $3; c[$1] = $5}
				END {for (r in x) if (b[r] > 0) printf "%.4f %.4f\n", (x[r] + c[r]) / b[r], c[r] / b[r]}' "$tmp/rounds"
		}
		printf '  %s: agent and collector against none: %.3f (%s), of which the collector %.3f\n' \
			"$v" "$(ratio | cut -d' ' -f1 | median)" "$(ratio | cut -d' ' -f1 | spread)" \
			"$(ratio | cut -d' ' -f2 | median)"
	done
	for v in fgagent fgagentb; do
		[[ " $variants " == *" $v "* ]] || continue
		ratio() {
			V=$v awk '$2 == "none" {b[$1] = $3} $2 == ENVIRON["V"] {x[$1] = $3}
				END {for (r in x) if (b[r] > 0) printf "%.4f\n", x[r] / b[r]}' "$tmp/rounds"
		}
		printf '  %s: agent with no recording against none: %.3f (%s)\n' "$v" \
			"$(ratio | median)" "$(ratio | spread)"
	done
	# The two builds recorded, one against the other (the JVM's CPU and the collector's).
	if [[ " $variants " == *" fgrec "* && " $variants " == *" fgrecb "* ]]; then
		ratio() {
			awk '$2 == "fgrecb" {b[$1] = $3 + $5} $2 == "fgrec" {x[$1] = $3 + $5}
				END {for (r in x) if (b[r] > 0) printf "%.4f\n", x[r] / b[r]}' "$tmp/rounds"
		}
		printf '  fgrec against fgrecb (AGENT_B): %.3f (%s)\n' "$(ratio | median)" "$(ratio | spread)"
	fi
	# The sched_switch program's own time against none's CPU (paired per round).
	if [[ " $variants " == *" fgrec "* ]] && awk '$2 == "fgrec" && $8 > 0 {f = 1} END {exit !f}' "$tmp/rounds"; then
		printf '  the sched_switch program at the JVM'"'"'s switches: %.3f us a loop, %.0f ns a run;' \
			"$(awk '$2 == "fgrec" {print $8}' "$tmp/rounds" | median)" \
			"$(awk '$2 == "fgrec" {print $9}' "$tmp/rounds" | median)"
		printf ' against none'"'"'s CPU: %.4f (%s)\n' \
			"$(awk '$2 == "none" {b[$1] = $3} $2 == "fgrec" {x[$1] = $8}
				END {for (r in x) if (b[r] > 0) printf "%.4f\n", x[r] / b[r]}' "$tmp/rounds" | median)" \
			"$(awk '$2 == "none" {b[$1] = $3} $2 == "fgrec" {x[$1] = $8}
				END {for (r in x) if (b[r] > 0) printf "%.4f\n", x[r] / b[r]}' "$tmp/rounds" | spread)"
	elif [[ " $variants " == *" fgrec "* && ${REC_EVENT:-wall} != cpu ]]; then
		echo "  (the sched_switch program's own time: with kernel.bpf_stats_enabled=1)"
	fi
	# The kernel's part alone, per variant: the JVM's system time against none's (paired).
	for v in $variants; do
		[[ $v != none ]] || continue
		ksys() {
			V=$v awk '$2 == "none" {b[$1] = $6} $2 == ENVIRON["V"] {x[$1] = $6}
				END {for (r in x) if (b[r] > 0) printf "%.4f\n", x[r] / b[r]}' "$tmp/rounds"
		}
		printf '  %s kernel CPU against none: %.3f (%s)\n' "$v" "$(ksys | median)" "$(ksys | spread)"
	done
	for v in $variants; do
		kill -CONT "${pid[$v]}"
		kill -TERM "${pid[$v]}" 2>/dev/null && wait "${pid[$v]}" 2>/dev/null || true
		[[ $v == none ]] || grep 'vthread_floor:' "$tmp/$v.out" | sed "s/^/  $v: /" || true
	done
	[[ ! -e $tmp/rec.err.keep ]] || { grep 'carriers of virtual threads' "$tmp/rec.err.keep" ||
		echo "fgcollect record: off-CPU: no carrier found pinned"; grep 'virtual threads:' "$tmp/rec.err.keep" | tail -2; } |
		sed 's/^/  fgrec, last round: /'
	rm -f "$tmp/rec.err" "$tmp/rec.err.keep"
	pid=()
done
