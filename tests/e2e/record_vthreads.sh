#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_vthreads.sh - virtual threads' unmounted time in wall profiles, against the known
# answer of VThreadWall (tests/java): 8 virtual threads each loop 2 ms of computation in
# compute() and an 8 ms sleep in await() (the thread unmounts), timing their handler and their
# await themselves. `fgcollect record --event wall` at the defaults, on Temurin 25 with
# -XX:+PreserveFramePointer and without it, then on OpenJDK 21 of Debian sid's image root
# (FG_VTHREAD_JDK21=0 leaves that one out):
#  - the await share of the handler's time (stacks under [virtual threads] through
#    VThreadWall::handle: a carrier's samples between mounts are its own) is within 2
#    points of the workload's own share over the recording;
#  - the handler's total is within 3% of the workload's own (its time in handle() a second,
#    times the recording's length), less its await time before the agent turned virtual
#    threads' waits on, which the summary gives (the profile has no time of theirs before);
#  - the unmounted time is under one root, [virtual threads], at Thread.sleep with the
#    handler's chain, and the summary says how many virtual threads were seen and how often
#    they mounted;
#  - the carriers' CPU time running the handlers is under [virtual threads] too, not under
#    the carriers' names (ForkJoinPool-1-worker-N): at least 95% of compute()'s CPU time;
#  - a virtual thread pinned to its carrier (VThreadWall's vt-pin-0: 20 ms asleep in a class
#    initializer, which pins on JDK 21 and 25 alike, then 60 ms unpinned): the summary's pinned
#    time under its root, [virtual threads] vt-pin-N (its carrier's time off the CPU while it
#    was mounted, counted at every unmount), is within 10% of its own count of its pinned
#    sleeps, and its carrier's waits are shown under that root at [pinned] (sampled: their
#    width is logged, not bounded).
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_vthreads
fg_require_built

fg_sock_dir
sock=$FG_SOCK_DIR/fgcollect.sock
noctl=$FG_TMP/no-daemon/ctl.sock # never another test's watch daemon
D=8                               # seconds per recording
temurin=${FG_TEMURIN25:-/usr/lib/jvm/temurin-25-jdk-amd64}
[[ -x $temurin/bin/java ]] || fg_fail "no Temurin 25 at $temurin (scripts/install-deps.sh installs it)"

# vtw_at LOG: the last "vtw" line of LOG (the workload's cumulative counters).
vtw_at() {
	grep '^vtw ' "$1" | tail -1
}

# run CFG: one recording of the JVM started last, checked against its own counters.
run() {
	local cfg=$1 log=${FG_CT_LOG[$cur]} t0 t1 f=$FG_TMP/$1.folded
	fg_wait_log "$cur" 60 '^vtw '
	sleep 2 # the JIT settles
	t0=$(vtw_at "$log")
	"$FGCOLLECT" record --pid "$FG_HOSTPID" --socket "$sock" --ctl "$noctl" --event wall \
		--duration "$D" ${FG_VT_REC_OPTS:-} -o "$f" 2>"$FG_TMP/$cfg.err" ||
		{ cat "$FG_TMP/$cfg.err" >&2; fg_fail "$cfg: record failed"; }
	sleep 0.3
	t1=$(vtw_at "$log")
	grep -E 'virtual threads|wall:' "$FG_TMP/$cfg.err" >&2
	grep -qE 'virtual threads: PID [0-9]+: 9 seen, [0-9]+ mounts and as many unmounts timed \([0-9]+ a second\)' \
		"$FG_TMP/$cfg.err" || fg_fail "$cfg: the summary does not count the 9 virtual threads"
	# The workload's truth over its lines around the recording; the recording's length from
	# its summary.
	local rec_ms
	rec_ms=$(sed -n 's/.* samples in \([0-9]*\)\.\([0-9]\) s at.*/\1\200/p' "$FG_TMP/$cfg.err")
	[[ -n $rec_ms ]] || fg_fail "$cfg: no recording length in the summary"
	read -r got_h got_a under at cpu_all cpu_vt pinned <<<"$(awk '{ n = $NF }
		/^\[virtual threads\]/ && /VThreadWall::handle_\[/ { h += n }
		/^\[virtual threads\]/ && /VThreadWall::await_\[/ { a += n }
		/^\[virtual threads\];.*VThreadWall::handle_\[.*VThreadWall::await_\[j\];java.lang.Thread::sleep/ { u += n }
		/VThreadWall::await_\[/ && /virtual thread unmounted/ { w += n }
		/VThreadWall::compute_\[/ && !/off-cpu/ { c += n; if (/^\[virtual threads\];/) cv += n }
		/^\[virtual threads\] vt-pin-N;/ && /;\[pinned\];/ { p += n }
		END { printf "%d %d %d %d %d %d %d\n", h, a, u, w, c, cv, p }' "$f")"
	# The virtual threads' waits count from when the agent turned them on (the summary says
	# when, if after the start): the truth leaves that part of its await time out too.
	local gap_ms
	gap_ms=$(sed -n 's/.*waits counted from \([0-9.]*\) s after the start.*/\1/p' "$FG_TMP/$cfg.err" |
		awk '{ printf "%d", $1 * 1000 }')
	# Each line: vtw NOW HANDLER AWAIT COMPUTE vtp PINNED.
	read -r want_share want_h want_pin <<<"$(echo "$t0 $t1 $rec_ms ${gap_ms:-0}" | awk '{
		h = ($10 - $3) / ($9 - $2); a = ($11 - $4) / ($9 - $2); p = ($14 - $7) / ($9 - $2)
		th = h * $15 - a * $16; ta = a * ($15 - $16); tp = p * ($15 - $16)
		printf "%.4f %d %d\n", ta / th, th * 1000, tp * 1000 }')"
	fg_log "$cfg: virtual threads' waits counted from ${gap_ms:-0} ms after the start"
	local share
	share=$(a="$got_a" h="$got_h" awk 'BEGIN { a = ENVIRON["a"] + 0; h = ENVIRON["h"] + 0; printf "%.4f", h ? a / h : 0 }')
	fg_log "$cfg: await share $share (truth $want_share); handler $got_h us (truth $want_h);" \
		"$at us unmounted, $under us of it under [virtual threads] at Thread.sleep"
	fg_log "$cfg: compute()'s CPU time $cpu_all us, $cpu_vt us of it under [virtual threads];" \
		"pinned $pinned us under [virtual threads] vt-pin-N at [pinned] (truth $want_pin us)"
	((got_h > 0)) || fg_fail "$cfg: no stack through VThreadWall::handle"
	((cpu_all > 0 && cpu_vt * 100 >= cpu_all * 95)) ||
		fg_fail "$cfg: $cpu_vt of $cpu_all us of compute()'s CPU time under [virtual threads], not under the carriers"
	((want_pin > 0)) || fg_fail "$cfg: the workload counted no pinned time"
	local pin_sum
	pin_sum=$(sed -n 's/.*virtual threads: \([0-9.]*\) s pinned under \[virtual threads\] vt-pin-N$/\1/p' "$FG_TMP/$cfg.err" |
		awk '{ printf "%d", $1 * 1000000 }')
	fg_log "$cfg: pinned $pin_sum us in the summary (counted at every unmount), truth $want_pin us"
	[[ -n $pin_sum ]] || fg_fail "$cfg: the summary does not count the pinned time"
	g="$pin_sum" w="$want_pin" awk 'BEGIN { g = ENVIRON["g"] + 0; w = ENVIRON["w"] + 0; d = (g - w) / w; exit !(d <= 0.10 && d >= -0.10) }' ||
		fg_fail "$cfg: pinned time $pin_sum us in the summary, truth $want_pin us (more than 10% off)"
	((pinned > 0)) || fg_fail "$cfg: no stack under [virtual threads] vt-pin-N at [pinned]"
	((at > 0 && under * 100 >= at * 95)) ||
		fg_fail "$cfg: $under of $at us of unmounted time under [virtual threads] at Thread.sleep with the handler's chain"
	g="$share" w="$want_share" awk 'BEGIN { d = ENVIRON["g"] - ENVIRON["w"]; exit !(d <= 0.02 && d >= -0.02) }' ||
		fg_fail "$cfg: await share $share, truth $want_share (more than 2 points off)"
	g="$got_h" w="$want_h" awk 'BEGIN { g = ENVIRON["g"] + 0; w = ENVIRON["w"] + 0; d = (g - w) / w; exit !(d <= 0.03 && d >= -0.03) }' ||
		fg_fail "$cfg: handler total $got_h us, truth $want_h us (more than 3% off)"
}

FG_JDK=$temurin
cur=t25fp
fg_jvm_start "$cur" VThreadWall 8 2 8 0 20
run temurin25-fp
fg_container_stop "$cur" || true # a JVM stopped by SIGTERM exits 143

cur=t25nofp
FG_JVM_OPTS=(-XX:-PreserveFramePointer)
fg_jvm_start "$cur" VThreadWall 8 2 8 0 20
run temurin25-nofp
fg_container_stop "$cur" || true # a JVM stopped by SIGTERM exits 143
FG_JVM_OPTS=()

if [[ ${FG_VTHREAD_JDK21:-1} == 1 ]]; then
	fg_image_root sid 21
	cur=jdk21
	fg_jvm_start "$cur" VThreadWall 8 2 8 0 20
	run openjdk21-fp
	fg_container_stop "$cur" || true
fi
fg_pass
