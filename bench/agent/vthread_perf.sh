#!/bin/bash
# SPDX-License-Identifier: MIT
#
# vthread_perf.sh BUILD_DIR - where the carriers' CPU goes in the virtual threads' mount and
# unmount callbacks, split by part. One VThreadMounts JVM (tests/java: THREADS virtual threads,
# each WORK_US of computation then a park of PARK_US, one mount and one unmount a loop) per
# variant:
#   floor   bench/agent/vthread_floor.c mode=mount: the extension events on, empty callbacks
#           (HotSpot's own posting of the events, the floor under any agent that sees them)
#   fgrec   libfgagent.so recorded by `fgcollect record --event REC_EVENT` (cpu unless told)
#   fgrecb  as fgrec with another build of libfgagent.so (AGENT_B; in the default list only
#           with it)
#   fgrecf  as fgrec, recorded by another build of fgcollect (FGCOLLECT_B; in the default list
#           only with it)
#   rec     no agent, recorded as fgrec (the recording's CPU with no agent to read from)
# Each JVM runs alone (the others stopped with SIGSTOP); REPS times in turn, SETTLE seconds after
# the recording starts `perf record -g -F 4000 -e cpu-clock -t TIDS` profiles the carriers (the
# threads named ForkJoinPool-1-worker-*) for WINDOW seconds. A sample stands for 1/4000 s; the
# samples of each part, over the loops the workload counted in the window, are printed in us a
# loop (median over rounds, and the spread):
#   dispatch    under JvmtiExport::post_vthread_mount/unmount (or VirtualThreadStart/End's
#               posting), outside the agent's callbacks
#   callbacks   under the agent's on_mount, on_unmount, on_start, on_end, split into: the JVMTI
#               thread-local storage calls (tls), the name and id read through JNI (name, tid),
#               the push of the event (push), the monotonic clock (clock), the carrier's CPU
#               clock (cpuclock), the stacks (stack) and the rest of their own code (own)
# Needs perf and root (or perf_event_paranoid <= 1). The JVM's CPU and the recording's over
# the window (us a loop, all their threads, from schedstat) are printed beside them. The
# recording (fgcollect) is profiled alike over the same window, its samples split into: its CPU
# samples of the JVM (samples: read, unwound, aggregated), the agent's messages (msgs: the
# socket's receive, the records' decoding and the events' hand-off, the mounts excepted), the
# mounts' table (mounts: each mount added, the samples' look-ups, its prune), the aggregator's
# settle (settle), its sleeps and wakeups (poll) and the rest (rest).
# Env: JDK (default /usr/lib/jvm/temurin-25-jdk-amd64), REPS (3), WINDOW (5 s), SETTLE (2 s),
#      VARIANTS (floor fgrec, fgrecb with AGENT_B, fgrecf with FGCOLLECT_B; rec on demand), THREADS (8), WORK_US (50), PARK_US
#      (750), REC_EVENT (cpu), AGENT (libfgagent.so of BUILD_DIR), AGENT_B, FGCOLLECT_B.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
jdk=${JDK:-/usr/lib/jvm/temurin-25-jdk-amd64}
reps=${REPS:-3}
window=${WINDOW:-5}
settle=${SETTLE:-2}
threads=${THREADS:-8}
work_us=${WORK_US:-50}
park_us=${PARK_US:-750}
event=${REC_EVENT:-cpu}
floor=$build/bench/libfg_vthread_floor.so
jar=$build/tests/java/fg-workloads.jar
agentso=${AGENT:-$build/jvmti-agent/libfgagent.so}
agentb=${AGENT_B:-}
fgc=$build/collector/fgcollect
fgcb=${FGCOLLECT_B:-}
for f in "$floor" "$jar" "$agentso" "$fgc" "$jdk/bin/java" ${agentb:+"$agentb"} ${fgcb:+"$fgcb"}; do
	[[ -e $f ]] || { echo "vthread_perf: $f not found"; exit 1; }
done
command -v perf >/dev/null || { echo "vthread_perf: perf is not installed"; exit 1; }
variants=${VARIANTS:-floor fgrec${agentb:+ fgrecb}${fgcb:+ fgrecf}}
for v in $variants; do
	case $v in
	floor | rec | fgrec) ;;
	fgrecb) [[ -n $agentb ]] || { echo "vthread_perf: fgrecb needs AGENT_B"; exit 1; } ;;
	fgrecf) [[ -n $fgcb ]] || { echo "vthread_perf: fgrecf needs FGCOLLECT_B"; exit 1; } ;;
	*) echo "vthread_perf: no variant $v (floor rec fgrec fgrecb fgrecf)"; exit 1 ;;
	esac
done
tmp=$(mktemp -d /tmp/fg-bench-vthreadperf.XXXXXX)
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
loops() { grep '^vtm ' "$tmp/$1.out" | tail -1 | cut -d' ' -f3; }
carriers() {
	local t c out=""
	for t in /proc/"$1"/task/*; do
		read -r c 2>/dev/null <"$t/comm" || continue
		[[ $c != ForkJoinPool-1-* ]] || out+=${out:+,}${t##*/}
	done
	echo "$out"
}

echo "vthread_perf: $("$jdk/bin/java" -version 2>&1 | head -1); $threads virtual threads, each" \
	"${work_us} us of work then a ${park_us} us park; $reps rounds of ${window} s per variant;" \
	"recording --event $event"
for v in $variants; do
	case $v in
	floor) agent=("-agentpath:$floor=mode=mount") ;;
	rec) agent=() ;;
	fgrec) agent=("-agentpath:$agentso=socket=$tmp/fg.sock") ;;
	fgrecb) agent=("-agentpath:$agentb=socket=$tmp/fgb.sock") ;;
	fgrecf) agent=("-agentpath:$agentso=socket=$tmp/fgf.sock") ;;
	esac
	vt_start vthread_perf "$v" "$jdk" "$jar" "$threads" "$work_us" "$park_us" "$tmp/$v.out" \
		"${agent[@]}"
done
: >"$tmp/rounds"
: >"$tmp/recparts"
: >"$tmp/walks"
for r in $(seq "$reps"); do
	for v in $variants; do
		kill -CONT "${pid[$v]}"
		rec=""
		if [[ $v != floor ]]; then
			recorder=$fgc
			case $v in
			fgrec) sock=$tmp/fg.sock ;;
			fgrecb) sock=$tmp/fgb.sock ;;
			fgrecf) sock=$tmp/fgf.sock recorder=$fgcb ;;
			*) sock=$tmp/none.sock ;;
			esac
			"$recorder" record --pid "${pid[$v]}" --socket "$sock" --ctl "$tmp/nobody/ctl.sock" \
				--event "$event" --duration "$((settle + window + 1))" -o "$tmp/rec.folded" \
				2>"$tmp/rec.err" &
			rec=$!
		fi
		sleep "$settle"
		tids=$(carriers "${pid[$v]}")
		[[ -n $tids ]] || { echo "vthread_perf: $v has no carrier"; exit 1; }
		l0=$(loops "$v")
		c0=$(cpu_ns "${pid[$v]}")
		r0=0
		[[ -z $rec ]] || r0=$(cpu_ns "$rec")
		[[ -z $rec ]] || perf record -q -g -F 4000 -e cpu-clock -p "$rec" -o "$tmp/$v.$r.rec" \
			-- sleep "$window" 2>/dev/null &
		prec=$!
		perf record -q -g -F 4000 -e cpu-clock -t "$tids" -o "$tmp/$v.$r.data" -- sleep "$window" \
			2>/dev/null
		wait "$prec" || true
		c1=$(cpu_ns "${pid[$v]}")
		r1=0
		[[ -z $rec ]] || r1=$(cpu_ns "$rec")
		l1=$(loops "$v")
		[[ -z $rec ]] || wait "$rec" || { echo "vthread_perf: fgcollect record failed:"; cat "$tmp/rec.err"; exit 1; }
		# its summary's time a stack walked by the vm unwinder
		[[ -z $rec ]] || echo "$v $(sed -n 's/.*vm unwinder: .* \([0-9.]*\) us each.*/\1/p' "$tmp/rec.err" | head -1)" >>"$tmp/walks"
		kill -STOP "${pid[$v]}"
		perf script -i "$tmp/$v.$r.data" -F ip,sym 2>/dev/null |
			R="$r" V="$v" L="$((l1 - l0))" C="$((c1 - c0))" RC="$((r1 - r0))" LA="$(cut -d' ' -f1 /proc/loadavg)" awk '
			function part(n, i, s, agent, disp, sys) {
				agent = disp = sys = 0
				for (i = 1; i <= n; i++) {
					if (f[i] ~ /^on_(mount|unmount|start|end)$/) agent = 1
					if (f[i] ~ /post_vthread_(mount|unmount|start|end)/) disp = 1
				}
				if (!agent && !disp)
					return ""
				# leaves with no frame of their own: their caller (the agent) is not in the
				# chain; HotSpot calls neither on its way to a callback
				if (f[1] ~ /clock_gettime/) return "clock"
				if (f[1] ~ /^pthread_(getspecific|setspecific|once)/) return "own"
				if (!agent)
					return "dispatch"
				# the innermost call of the agent (its own functions) that the sample is in
				for (i = 1; i <= n; i++) {
					s = f[i]
					# a system call: the carrier CPU clock (the monotonic one is the vDSO)
					if (s ~ /sys_clock_gettime|do_syscall_64|entry_SYSCALL/) sys = 1
					if (s ~ /^on_(mount|unmount|start|end)$/) break
					if (s ~ /ThreadLocalStorage/) return "tls"
					if (s ~ /GetStackTrace|^take_stack$|^evjvmti_frames$|^last_unmount$/) return "stack"
					if (s ~ /GetLongField|^thread_id$/) return "tid"
					if (s ~ /GetObjectField|GetString|DeleteLocalRef|ExceptionCheck|^vthread_name$|^take_name$|^thread_field$/) return "name"
					if (s ~ /evctl_push|^evbatch_|^queue_/) return "push"
					if (s ~ /^thread_cpu_ns$|^mount_cpu0$|cputime|posix_cpu|task_sched_runtime/) return "cpuclock"
					if (s ~ /^fg_now_ns$|__vdso_clock_gettime|^clock_gettime/) return sys ? "cpuclock" : "clock"
				}
				# none: a frame of HotSpot whose caller, skipped, was the thread-local storage
				for (i = 1; i <= n; i++) {
					if (f[i] ~ /^on_(mount|unmount|start|end)$/) break
					if (f[i] ~ /^Jvmti|ThreadsList|VTMSTransition/) return "tls"
				}
				return "own"
			}
			function flush() {
				if (n) { p = part(n); if (p != "") c[p]++; if (p != "" && p != "dispatch") c["callbacks"]++ }
				n = 0
			}
			/^$/ { flush(); next }
			{ s = $2; sub(/\+0x[0-9a-f]+$/, "", s); f[++n] = s }
			END {
				flush()
				us = 250 / (ENVIRON["L"] > 0 ? ENVIRON["L"] : 1)
				printf "%s %s %s %.3f %.3f", ENVIRON["R"], ENVIRON["V"], ENVIRON["LA"], ENVIRON["C"] / 1e3 / ENVIRON["L"], ENVIRON["RC"] / 1e3 / ENVIRON["L"]
				split("dispatch callbacks tls name tid push clock cpuclock stack own", k, " ")
				for (i = 1; i <= 10; i++) printf " %.4f", c[k[i]] * us
				printf "\n"
			}' >>"$tmp/rounds"
		if [[ -n $rec ]]; then
			perf script -i "$tmp/$v.$r.rec" -F ip,sym 2>/dev/null |
				R="$r" V="$v" L="$((l1 - l0))" awk '
				function part(s) {
					if (s ~ /(^|;)(vtmount_|vtwall_mount)/) return "mounts"
					if (s ~ /(^|;)(jvmset_|listen_pump|ses_on_agent_ev)/) return "msgs"
					if (s ~ /(^|;)(sampler_poll|on_sample|perfring_)/) return "samples"
					if (s ~ /(^|;)(ses_settle|stackagg_settle)/) return "settle"
					if (s ~ /(^|;)(__poll|epoll_wait)/) return "poll"
					return "rest"
				}
				function flush(i, s) {
					if (!n) return
					s = ""
					for (i = 1; i <= n; i++) s = s ";" f[i]
					c[part(s)]++
					n = 0
				}
				/^$/ { flush(); next }
				{ s = $2; sub(/\+0x[0-9a-f]+$/, "", s); f[++n] = s }
				END {
					flush()
					us = 250 / (ENVIRON["L"] > 0 ? ENVIRON["L"] : 1)
					printf "%s %s", ENVIRON["R"], ENVIRON["V"]
					split("samples msgs mounts settle poll rest", k, " ")
					for (i = 1; i <= 6; i++) printf " %.4f", c[k[i]] * us
					printf "\n"
				}' >>"$tmp/recparts"
		fi
		[[ -z ${KEEP:-} ]] || cp "$tmp/$v.$r.data" "$KEEP.$v.$r.data"
		[[ -z ${KEEP:-} || -z $rec ]] || cp "$tmp/$v.$r.rec" "$KEEP.$v.$r.rec"
		rm -f "$tmp/$v.$r.data" "$tmp/$v.$r.rec"
	done
done
echo "us a loop (median over rounds, spread); load average at each window's end:" \
	"$(awk '{print $3}' "$tmp/rounds" | tr '\n' ' ')"
printf '  %-8s %9s %9s' variant "JVM CPU" "recording"
for k in dispatch callbacks tls name tid push clock cpuclock stack own; do printf ' %16s' "$k"; done
printf '\n'
for v in $variants; do
	printf '  %-8s %9.2f %9.3f' "$v" "$(V=$v awk '$2 == ENVIRON["V"] {print $4}' "$tmp/rounds" | median)" \
		"$(V=$v awk '$2 == ENVIRON["V"] {print $5}' "$tmp/rounds" | median)"
	for i in $(seq 6 15); do
		col() { V=$v I=$i awk '$2 == ENVIRON["V"] {print $(ENVIRON["I"])}' "$tmp/rounds"; }
		printf ' %6.3f %9s' "$(col | median)" "($(col | spread))"
	done
	printf '\n'
done
[[ ! -s $tmp/recparts ]] || {
	echo "the recording's own CPU, us a loop (median over rounds, spread):"
	printf '  %-8s' variant
	for k in samples msgs mounts settle poll rest; do printf ' %16s' "$k"; done
	printf '\n'
	for v in $variants; do
		[[ $v != floor ]] || continue
		printf '  %-8s' "$v"
		for i in $(seq 3 8); do
			col() { V=$v I=$i awk '$2 == ENVIRON["V"] {print $(ENVIRON["I"])}' "$tmp/recparts"; }
			printf ' %6.3f %9s' "$(col | median)" "($(col | spread))"
		done
		printf '\n'
	done
	echo "the recording's summary, us a stack walked (median over rounds, spread):"
	for v in $variants; do
		[[ $v != floor ]] || continue
		col() { V=$v awk '$1 == ENVIRON["V"] && $2 != "" {print $2}' "$tmp/walks"; }
		printf '  %-8s %6.1f %9s\n' "$v" "$(col | median)" "($(col | spread))"
	done
}
