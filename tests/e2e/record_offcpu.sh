#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_offcpu.sh - off-CPU and wall-clock profiles against known answers, on every JDK under
# /usr/lib/jvm, each without -XX:+PreserveFramePointer and with it (FG_OFFCPU_FP="off" or "on":
# one of them), each JVM in a namespace container
# running OffCpuTruth (threads whose waits it times itself with System.nanoTime). Exact
# recordings (--switch-rate 0: the BPF program takes every switch-out's stack):
#  - fg-sleeper computes in computeA for 20 ms, sleeps in sleepB for 60 ms: >= 95% of its
#    off-CPU time sits under sleepB with the Java chain (sleeper;sleepB), that time is the
#    truth's within 15%, and its wall profile splits computeA:sleepB within 5 points of the
#    truth's split;
#  - fg-contender blocked on a monitor fg-holder keeps: >= 90% of its off-CPU time under
#    OffCpuTruth::contend;
#  - fg-reader waiting for a local server's answer (40 ms): >= 90% of its off-CPU time under
#    readReply with the kernel's read path, the time within 15% of the truth's;
#  - fg-syncer in fsync on the host's disk: the share of its off-CPU time in the
#    uninterruptible state is printed (the kernel and file system decide whether fsync waits
#    in D state); at least some of it must be there.
# Sampled recordings of the fg-* threads (--threads, left out in the kernel): at the default
# rate the sleeper's and the reader's shares hold as above and, each thread's time being counted
# exactly at every switch with the stacks scaled to it, their times are the truth's within 5%;
# at 400 stacks/s likewise. Wall at the defaults: every fg-* thread's total is the recording's
# length (within its printed precision) and the sleeper's split holds. The first configuration
# records at the defaults again under a load it makes itself (8 busy processes on the machine).
# The record summaries must count every switch (drops printed).
# FG_OFFCPU_PARTS picks the parts (default "exact loaded"): exact is everything above but the
# same window and the loaded defaults; loaded is those two, on the first configuration alone.
# ctest runs them as two tests: exact beside another test, loaded alone (the same window's two
# recordings must start within a few ms, and its 8 busy processes would take a neighbour's CPUs).
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_offcpu
fg_require_built

FG_SOCK_DIR=$FG_TMP/sock
mkdir -p "$FG_SOCK_DIR" "$FG_TMP/disk"
chmod 0755 "$FG_SOCK_DIR"
chmod 0777 "$FG_TMP/disk"
sock=$FG_SOCK_DIR/fgcollect.sock
noctl=$FG_TMP/no-daemon/ctl.sock # never another test's watch daemon
D=4                               # seconds per recording
j='_\[[0ij]\]'                    # any Java frame's mark

# truth_group LOG: the last complete group of truth lines in LOG (the JVM prints a group of six
# lines, "truth clock now" first, one line at a time: the log may end inside a group, whose
# lines must not be mixed with the previous group's).
truth_group() {
	awk '/^truth clock now / { n = 0 }
	     /^truth / { g[n++] = $0; if (n == 6) { for (i = 0; i < 6; i++) last[i] = g[i]; ok = 1 } }
	     END { if (ok) for (i = 0; i < 6; i++) print last[i] }' "$1"
}

# record NAME EVENT [OPTION...]: fgcollect record --event EVENT into $FG_TMP/NAME.folded; the
# truth lines the JVM printed just before and after go to $FG_TMP/NAME.t0 / .t1.
record() {
	local name=$1 ev=$2 log=${FG_CT_LOG[$cur]}
	shift 2
	truth_group "$log" >"$FG_TMP/$name.t0"
	"$FGCOLLECT" record --pid "$FG_HOSTPID" --socket "$sock" --ctl "$noctl" --event "$ev" \
		--duration "$D" -o "$FG_TMP/$name.folded" "$@" 2>"$FG_TMP/$name.err" ||
		{ cat "$FG_TMP/$name.err" >&2; fg_fail "$name: record failed"; }
	grep -E 'off-CPU|wall:|unresolved' "$FG_TMP/$name.err" >&2
	sleep 0.3 # the next truth line covers the end of the window
	truth_group "$log" >"$FG_TMP/$name.t1"
	grep -q 'off-CPU dropped: ' "$FG_TMP/$name.err" || fg_fail "$name: no drop counts in the summary"
}

# truth NAME THREAD METHOD: milliseconds THREAD spent in METHOD around the recording NAME
# (difference of the cumulative counters before and after it; they tick every 100 ms, and a
# recording starts a little after its command, so this window is longer than the recording:
# callers compare shares, `truth NAME clock now` being the window's length).
truth() {
	local a b
	a=$(T="$2" M="$3" awk '$2 == ENVIRON["T"] && $3 == ENVIRON["M"] { print $4 }' "$FG_TMP/$1.t0")
	b=$(T="$2" M="$3" awk '$2 == ENVIRON["T"] && $3 == ENVIRON["M"] { print $4 }' "$FG_TMP/$1.t1")
	echo $((b - a))
}

# rec_ms NAME: the length of the recording NAME in ms, as its summary says.
rec_ms() {
	sed -n 's/.* samples in \([0-9]*\)\.\([0-9]\) s at.*/\1\200/p' "$FG_TMP/$1.err"
}

# us FILE THREAD [REGEX [NOT_REGEX]]: microseconds of THREAD's stacks (matching REGEX, not
# matching NOT_REGEX).
us() {
	th="$2" re="${3:-.}" nre="${4:-^$}" awk 'BEGIN { th = ENVIRON["th"]; re = ENVIRON["re"]; nre = ENVIRON["nre"] }
		{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); split(s, f, ";") }
		f[1] == th && s ~ re && s !~ nre { c += n }
		END { printf "%d\n", c + 0 }' "$1"
}
# The waits a thread chose (sleeping, blocked, disk); a busy machine adds preemptions wherever
# the thread happened to run, which are checked apart.
pre='\[off-cpu: preempted\]'

# need LABEL PART ALL PCT: PART >= PCT% of ALL (ALL > 0).
need() {
	fg_log "$cfg $1: $2 of $3 us"
	(($3 > 0)) || fg_fail "$cfg $1: nothing recorded"
	(($2 * 100 >= $3 * $4)) || fg_fail "$cfg $1: $2 of $3 us (< $4%)"
}

# near LABEL GOT WANT PCT: GOT within PCT% of WANT.
near() {
	fg_log "$cfg $1: $2 (truth $3)"
	(($3 > 0)) || fg_fail "$cfg $1: the truth is 0"
	local d=$(($2 - $3))
	((d < 0)) && d=$((-d))
	((d * 100 <= $3 * $4)) || fg_fail "$cfg $1: $2, truth $3 (off by more than $4%)"
}

# A load of its own: 8 busy processes, stopped by burn_stop (and at exit).
burners=()
burn_start() {
	local i
	for i in 1 2 3 4 5 6 7 8; do
		sh -c 'while :; do :; done' &
		burners+=($!)
	done
}
burn_stop() {
	((${#burners[@]})) && kill "${burners[@]}" 2>/dev/null
	wait "${burners[@]}" 2>/dev/null || true
	burners=()
}
# (set +e: under errexit a failing kill or `(exit $rc)` would end the trap before fg_cleanup,
# which removes the containers and $FG_TMP)
trap 'rc=$?; set +e; burn_stop; (exit $rc); fg_cleanup' EXIT

# defaults LABEL: off-CPU and wall at the defaults (all threads): the sleeper's sleepB and the
# reader's readReply time the truth's within 5%, every fg-* thread's wall time the recording's.
defaults() {
	local r=$cur.def$1 f all part rec win t D=8 # the default recordings: 8 s
	record "$r" offcpu
	grep -q 'exact times: .* threads counted at every switch' "$FG_TMP/$r.err" ||
		fg_fail "$cfg $1: the summary has no exact times: $(grep 'exact times' "$FG_TMP/$r.err")"
	f=$FG_TMP/$r.folded
	win=$(truth "$r" clock now) rec=$(rec_ms "$r")
	all=$(us "$f" fg-sleeper . "$pre")
	part=$(us "$f" fg-sleeper "OffCpuTruth::sleeper$j;.*OffCpuTruth::sleepB$j;.*\\[off-cpu: sleeping\\]")
	need "$1 defaults: fg-sleeper off-CPU under sleeper;sleepB (sleeping)" "$part" "$all" 95
	near "$1 defaults: fg-sleeper off-CPU in sleepB, ms" $((part / 1000)) \
		$((rec * $(truth "$r" fg-sleeper sleepB) / win)) 5
	part=$(us "$f" fg-reader "OffCpuTruth::readReply$j;.*\\[off-cpu: sleeping\\]")
	near "$1 defaults: fg-reader off-CPU under readReply, ms" $((part / 1000)) \
		$((rec * $(truth "$r" fg-reader readReply) / win)) 5
	r=$cur.defw$1
	record "$r" wall
	f=$FG_TMP/$r.folded
	rec=$(rec_ms "$r")
	for t in fg-sleeper fg-reader fg-contender fg-holder; do
		# rec_ms has 100 ms steps
		near "$1 defaults: $t wall time, ms" $(($(us "$f" "$t") / 1000)) "$rec" 2
	done
	precise "$1 defaults" "$r"
}

# same_window: off-CPU and wall recorded at once, each on a socket of its own (without the
# agent's names, so that both wait for an agent alike and their windows match: only their
# totals are read): the JVM's time off the CPU, counted exactly in both, is the same within 1%
# (the windows start a few ms apart; the JVM's threads are steady).
same_window() {
	local o=$cur.sameo w=$cur.samew bg a b
	"$FGCOLLECT" record --pid "$FG_HOSTPID" --socket "$FG_TMP/wall-alone.sock" --ctl "$noctl" \
		--event wall --duration 4 -o "$FG_TMP/$w.folded" 2>"$FG_TMP/$w.err" &
	bg=$!
	"$FGCOLLECT" record --pid "$FG_HOSTPID" --socket "$FG_TMP/offcpu-alone.sock" --ctl "$noctl" --event offcpu \
		--duration 4 -o "$FG_TMP/$o.folded" 2>"$FG_TMP/$o.err" ||
		{ cat "$FG_TMP/$o.err" >&2; fg_fail "$cfg same window: the off-CPU recording failed"; }
	wait "$bg" || { cat "$FG_TMP/$w.err" >&2; fg_fail "$cfg same window: the wall recording failed"; }
	a=$(sed -nE 's/.*exact times: [0-9]+ threads counted at every switch: ([0-9.]+) s off the CPU.*/\1/p' "$FG_TMP/$o.err")
	b=$(sed -nE 's/.*exact times: [0-9]+ threads counted at every switch: ([0-9.]+) s off the CPU.*/\1/p' "$FG_TMP/$w.err")
	[[ -n $a && -n $b ]] || fg_fail "$cfg same window: no exact off-CPU times (offcpu '$a', wall '$b')"
	fg_log "$cfg same window: off-CPU $a s, wall's off-CPU part $b s"
	A=$a B=$b awk 'BEGIN { a = ENVIRON["A"]; b = ENVIRON["B"]; d = a - b; if (d < 0) d = -d
		exit !(a > 0 && d <= a / 100) }' ||
		fg_fail "$cfg same window: off-CPU $a s but wall's off-CPU part $b s (more than 1% apart)"
}

# precise LABEL REC: the summary says how precise fg-sleeper's split is (+-P points at 95%),
# and its computeA:sleepB split in REC is within 1.5 P of the truth.
precise() {
	local line p a b ta tb got want d
	line=$(grep -m 1 -E 'precision: +fg-sleeper/' "$FG_TMP/$2.err") ||
		fg_fail "$cfg $1: the summary says nothing of fg-sleeper's precision: $(grep -m 1 'precision:' "$FG_TMP/$2.err")"
	p=$(sed -E 's/.*\+-([0-9]+)\.([0-9]) points$/\1\2/' <<<"$line") # tenths of a point
	[[ $p =~ ^[0-9]+$ ]] || fg_fail "$cfg $1: unreadable precision line: $line"
	a=$(us "$FG_TMP/$2.folded" fg-sleeper "OffCpuTruth::computeA$j")
	b=$(us "$FG_TMP/$2.folded" fg-sleeper "OffCpuTruth::sleepB$j")
	ta=$(truth "$2" fg-sleeper computeA) tb=$(truth "$2" fg-sleeper sleepB)
	((a + b > 0 && ta + tb > 0)) || fg_fail "$cfg $1: fg-sleeper has no computeA/sleepB time"
	got=$((a * 1000 / (a + b))) want=$((ta * 1000 / (ta + tb)))
	d=$((got - want))
	((d < 0)) && d=$((-d))
	fg_log "$cfg $1: fg-sleeper computeA share $got per mille (truth $want), stated +-$p per mille"
	((d * 2 <= p * 3)) ||
		fg_fail "$cfg $1: fg-sleeper's computeA share $got per mille, truth $want: off by more than 1.5 x the stated +-$p"
}

parts=${FG_OFFCPU_PARTS:-exact loaded}
part_on() {
	[[ " $parts " == *" $1 "* ]]
}
part_on exact || part_on loaded || fg_fail "FG_OFFCPU_PARTS='$parts': neither exact nor loaded"
dsum=0 dall=0 loaded=0
# Each JDK without -XX:+PreserveFramePointer first (what services run), then with it.
for jdk in $(fg_jdks); do
	major=$(fg_jdk_major "$jdk")
	for fp in ${FG_OFFCPU_FP:-off on}; do
		cfg="JDK $major fp $fp"
		cur=oc$major$fp
		opt=-XX:+PreserveFramePointer
		[[ $fp == off ]] && opt=-XX:-PreserveFramePointer
		FG_JVM_OPTS=("$opt")
		FG_CT_OPTS=(--bind "$FG_TMP/disk:/disk")
		FG_JDK=$jdk fg_jvm_start "$cur" OffCpuTruth 150 /disk
		FG_JVM_OPTS=()
		FG_CT_OPTS=()
		fg_wait_log "$cur" 60 'OffCpuTruth ready'
		sleep 1.1 # a first truth line

		if part_on exact; then
			# ---- off-CPU, every switch-out taken: exact ------------------------------------------
			r=$cur.off
			record "$r" offcpu --switch-rate 0
			grep -q 'stacks taken in the kernel by BPF' "$FG_TMP/$r.err" ||
				fg_fail "$cfg: off-CPU stacks were not taken by BPF: $(grep 'off-CPU:' "$FG_TMP/$r.err" | head -n 1)"
			f=$FG_TMP/$r.folded
			! grep -q ';\[unknown\] (anon)' "$f" ||
				grep ';\[unknown\] (anon)' "$f" | head -n 3 >&2
			all=$(us "$f" fg-sleeper . "$pre")
			part=$(us "$f" fg-sleeper "OffCpuTruth::sleeper$j;.*OffCpuTruth::sleepB$j;.*\\[off-cpu: sleeping\\]")
			need "fg-sleeper off-CPU (preemptions apart) under sleeper;sleepB (sleeping)" "$part" "$all" 95
			# Preempted while computing: under computeA (the machine's load decides how much).
			pall=$(us "$f" fg-sleeper "$pre")
			ppart=$(us "$f" fg-sleeper "OffCpuTruth::computeA$j;.*$pre")
			((pall < 20000)) || need "fg-sleeper preempted time under computeA" "$ppart" "$pall" 90
			# The truth's share of the window in sleepB, applied to the recording's length.
			ta=$(truth "$r" fg-sleeper computeA) tb=$(truth "$r" fg-sleeper sleepB)
			win=$(truth "$r" clock now) rec=$(rec_ms "$r")
			near "fg-sleeper off-CPU in sleepB, ms" $((part / 1000)) $((rec * tb / win)) 15

			all=$(us "$f" fg-contender . "$pre")
			part=$(us "$f" fg-contender "OffCpuTruth::contender$j;(.*;)?OffCpuTruth::contend$j;" "$pre")
			need "fg-contender off-CPU under contend (monitor)" "$part" "$all" 90

			all=$(us "$f" fg-reader . "$pre")
			part=$(us "$f" fg-reader "OffCpuTruth::readReply$j;.*(tcp_recvmsg|sock_recvmsg|sock_read_iter)_\\[k\\];.*\\[off-cpu: sleeping\\]")
			need "fg-reader off-CPU under readReply and the socket read path" "$part" "$all" 90
			near "fg-reader off-CPU under readReply, ms" $((part / 1000)) \
				$((rec * $(truth "$r" fg-reader readReply) / win)) 15

			all=$(us "$f" fg-syncer . "$pre")
			part=$(us "$f" fg-syncer "OffCpuTruth::syncDisk$j;.*\\[off-cpu: uninterruptible \\(disk I/O\\)\\]")
			fg_log "$cfg fg-syncer: $part of $all us off-CPU under syncDisk in D state"
			((part > 0)) || fg_fail "$cfg fg-syncer: no uninterruptible wait under syncDisk"
			dsum=$((dsum + part)) dall=$((dall + all))

			# ---- off-CPU sampled: the default rate, and 400 stacks/s, of the fg-* threads -------
			r=$cur.offd
			record "$r" offcpu --threads 'fg-.*'
			grep -q 'left out in the kernel' "$FG_TMP/$r.err" ||
				fg_fail "$cfg: --threads left no switch-out out in the kernel"
			f=$FG_TMP/$r.folded
			! grep -v '^fg-' "$f" | head -n 3 | grep . ||
				fg_fail "$cfg: --threads 'fg-.*' kept other threads' stacks"
			all=$(us "$f" fg-sleeper . "$pre")
			part=$(us "$f" fg-sleeper "OffCpuTruth::sleeper$j;.*OffCpuTruth::sleepB$j;.*\\[off-cpu: sleeping\\]")
			need "default rate: fg-sleeper off-CPU under sleeper;sleepB (sleeping)" "$part" "$all" 95
			all=$(us "$f" fg-reader . "$pre")
			part=$(us "$f" fg-reader "OffCpuTruth::readReply$j;.*(tcp_recvmsg|sock_recvmsg|sock_read_iter)_\\[k\\];.*\\[off-cpu: sleeping\\]")
			need "default rate: fg-reader off-CPU under readReply and the socket read path" "$part" "$all" 90
			# The time, from about 200 stacks per thread: within 30% (about 4 standard errors).
			r=$cur.off400
			record "$r" offcpu --threads 'fg-.*' --switch-rate 400
			f=$FG_TMP/$r.folded
			ta=$(truth "$r" fg-sleeper computeA) tb=$(truth "$r" fg-sleeper sleepB)
			win=$(truth "$r" clock now) rec=$(rec_ms "$r")
			part=$(us "$f" fg-sleeper "OffCpuTruth::sleeper$j;.*OffCpuTruth::sleepB$j;.*\\[off-cpu: sleeping\\]")
			near "400/s: fg-sleeper off-CPU in sleepB, ms" $((part / 1000)) $((rec * tb / win)) 5
			part=$(us "$f" fg-reader "OffCpuTruth::readReply$j;.*(tcp_recvmsg|sock_recvmsg|sock_read_iter)_\\[k\\];.*\\[off-cpu: sleeping\\]")
			near "400/s: fg-reader off-CPU under readReply, ms" $((part / 1000)) \
				$((rec * $(truth "$r" fg-reader readReply) / win)) 5
		fi

		# ---- the defaults, on this machine and (once) under a load of 8 busy processes -------
		if part_on exact; then
			defaults quiet
		fi
		if part_on loaded && ((!loaded)); then
			same_window
			burn_start
			sleep 2
			fg_log "$cfg: $(awk '/^procs_running/ { print $2 }' /proc/stat) runnable tasks on $(nproc) CPUs, load average $(cut -d' ' -f1 /proc/loadavg)"
			defaults loaded
			burn_stop
			loaded=1
		fi

		if part_on exact; then
			# ---- wall ---------------------------------------------------------------------------
			r=$cur.wall
			record "$r" wall --switch-rate 0
			f=$FG_TMP/$r.folded
			grep -q 'wall: .* s on the CPU' "$FG_TMP/$r.err" || fg_fail "$cfg wall: no CPU share in the summary"
			a=$(us "$f" fg-sleeper "OffCpuTruth::computeA$j")
			b=$(us "$f" fg-sleeper "OffCpuTruth::sleepB$j")
			ta=$(truth "$r" fg-sleeper computeA) tb=$(truth "$r" fg-sleeper sleepB)
			((a + b > 0 && ta + tb > 0)) || fg_fail "$cfg wall: fg-sleeper has no computeA/sleepB time"
			got=$((a * 1000 / (a + b))) want=$((ta * 1000 / (ta + tb)))
			fg_log "$cfg wall fg-sleeper computeA share: $got per mille (truth $want)"
			d=$((got - want))
			((d < 0)) && d=$((-d))
			((d <= 50)) || fg_fail "$cfg wall: computeA:sleepB split $got per mille, truth $want (> 5 points)"
			# The whole thread is accounted for: its wall time is the recording's length, +-10%.
			near "fg-sleeper wall time, ms" $(($(us "$f" fg-sleeper) / 1000)) "$(rec_ms "$r")" 10
		fi
		fg_container_stop "$cur" || true
		part_on exact || break 2 # loaded alone: the first configuration is enough
	done
done
if part_on exact; then
	fg_pass "off-CPU and wall profiles match the known answers; fsync: $dsum of $dall us in D state"
else
	fg_pass "$cfg: off-CPU and wall recorded at once agree, and at the defaults under a load of 8 busy processes match the known answers"
fi
