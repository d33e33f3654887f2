#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_vthread_stacks.sh - whole CPU stacks of mounted virtual threads whose callers are
# still frozen in heap stack chunks, each under its virtual thread's root: VThreadDeep
# (tests/java), 4 virtual threads recursing 120 deep through descend() and then computing in
# spin() and yielding in a loop (each mount thaws only the top frames back; by the time the
# collector reads the chunks the thread has often frozen again). One recording at the defaults
# per JVM: Temurin 25 with -XX:+PreserveFramePointer (--event cpu) and without it (--event
# wall), then OpenJDK 21 of Debian sid's image root with it (wall) and without it (cpu)
# (FG_VTHREAD_JDK21=0 leaves those out; FG_VTS_EVENTS="cpu wall" records both on each):
#  - every sample in spin is whole (all 120 descend frames below VThreadDeep::body and
#    java.lang.VirtualThread::run, no [truncated] marker) or marked [truncated], never a stack
#    with fewer descend frames and no marker;
#  - >= 90% of spin's CPU samples whole (a wall profile's off-CPU stacks in spin are logged);
#  - >= 80% of them whole and under "[virtual threads] vdeep-N", not the carrier's name, of
#    those after the agent turned the mounts on (the summary says when, and in a CPU
#    recording how many samples came before: those stay under the carrier). The shares are
#    logged for every recording.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_vthread_stacks
fg_require_built

fg_sock_dir
sock=$FG_SOCK_DIR/fgcollect.sock
noctl=$FG_TMP/no-daemon/ctl.sock # never another test's watch daemon
D=${FG_VTS_SECONDS:-3}            # seconds per recording
WANT=${FG_VTS_WANT:-90}           # % of spin's CPU samples whole
ROOTED=${FG_VTS_ROOTED:-80}       # % of those after the mounts are on whole and under their thread
DEPTH=120
temurin=${FG_TEMURIN25:-/usr/lib/jvm/temurin-25-jdk-amd64}
[[ -x $temurin/bin/java ]] || fg_fail "no Temurin 25 at $temurin (scripts/install-deps.sh installs it)"

# check CFG EVENT: one recording of the JVM started last, its spin samples checked.
check() {
	local cfg=$1-$2 ev=$2 f=$FG_TMP/$1-$2.folded min=30
	[[ $ev == wall ]] && min=200000 # microseconds
	fg_wait_log "$cur" 60 '^VThreadDeep ready'
	"$FGCOLLECT" record --pid "$FG_HOSTPID" --socket "$sock" --ctl "$noctl" --event "$ev" \
		--duration "$D" -o "$f" 2>"$FG_TMP/$cfg.err" ||
		{ cat "$FG_TMP/$cfg.err" >&2; fg_fail "$cfg: record failed"; }
	grep -E 'virtual threads|unwound|return barrier' "$FG_TMP/$cfg.err" >&2 || true
	# Each CPU sample through spin (its count: samples, or microseconds in a wall profile;
	# a wall profile's [off-cpu: …] stacks are logged apart): whole = DEPTH descend frames,
	# then body and VirtualThread.run nearer the root, and no [truncated]; marked =
	# [truncated], or cut there and given the callers of whole stacks ([callers as in whole
	# stacks]); wrong = neither. rooted: under the virtual thread's root, not the carrier's
	# name (ForkJoinPool-1-worker-N).
	read -r all whole wrong both off offwhole <<<"$(depth=$DEPTH wrongf=$FG_TMP/$cfg.wrong awk '{ n = $NF; line = $0 }
		/VThreadDeep::spin_\[[0ij]\]/ {
			cpu = line !~ /;\[off-cpu: [^;]*\]_\[k\] [0-9]+$/
			r = line ~ /^\[virtual threads\] vdeep-N;/
			if (cpu)
				all += n
			else
				off += n
			d = gsub(/;VThreadDeep::descend_\[[0ij]\]/, "&", line)
			if (line ~ /\[truncated\]|\[callers as in whole stacks\]/)
				next
			if (d == ENVIRON["depth"] + 0 &&
			    line ~ /java\.lang\.VirtualThread::run_\[[0ij]\];.*VThreadDeep::body_\[[0ij]\];VThreadDeep::descend_/) {
				if (cpu) {
					whole += n
					both += r ? n : 0
				} else
					offwhole += n
			} else {
				wrong += n
				print $0 > ENVIRON["wrongf"]
			}
		}
		END { printf "%d %d %d %d %d %d\n", all, whole, wrong, both, off, offwhole }' "$f")"
	# The mounts root the samples from when the agent turned them on (the summary says
	# when, if after the start): the bound on those rooted leaves the part before out.
	local gap_ms
	gap_ms=$(sed -n 's/.*\(waits counted\|mounts known\) from \([0-9.]*\) s after the start.*/\2/p' \
		"$FG_TMP/$cfg.err" | awk '$1 * 1000 > g { g = $1 * 1000 } END { printf "%d", g }')
	fg_log "$cfg: of $all in spin, $whole whole ($DEPTH descend frames), $both of them under [virtual threads] vdeep-N (mounts from $gap_ms ms); $wrong neither whole nor [truncated]; off the CPU: $offwhole of $off whole"
	if ((all < min)); then
		head -c 3000 "$f" >&2
		fg_fail "$cfg: only $all in VThreadDeep::spin"
	fi
	if ((wrong > 0)); then
		head -n 5 "$FG_TMP/$cfg.wrong" | cut -c1-3000 >&2
		fg_fail "$cfg: $wrong samples in spin neither whole nor marked [truncated]"
	fi
	if ((whole * 100 < all * WANT)); then
		awk '/VThreadDeep::spin_/' "$f" | sort -t' ' -k2 -n -r | head -3 | cut -c1-2000 >&2 || true
		fg_fail "$cfg: $whole of $all in spin whole (< $WANT%)"
	fi
	# A CPU recording's summary counts the samples taken before the mounts were known: those
	# leave the bound, however unevenly the JVM ran (a busy machine); a wall profile's weights
	# are times, whose part before is taken in proportion to the time.
	local before
	before=$(sed -n "s/.*mounts known from .* s after the start, when the first one received began: \([0-9]*\) samples of the JVMs' threads taken before.*/\1/p" \
		"$FG_TMP/$cfg.err" | head -n 1)
	if [[ $ev == cpu && -n $before ]]; then
		((both * 100 >= (all - before) * ROOTED)) ||
			fg_fail "$cfg: $both of $all in spin whole and under their virtual thread (< $ROOTED% of those after the $before samples taken before the mounts were known)"
	else
		((both * 100 * D * 1000 >= all * ROOTED * (D * 1000 - gap_ms))) ||
			fg_fail "$cfg: $both of $all in spin whole and under their virtual thread (< $ROOTED% of those after $gap_ms ms)"
	fi
}

FG_JDK=$temurin
for fp in ${FG_VTS_FPS:-fp nofp}; do
	cur=t25$fp
	[[ $fp == nofp ]] && FG_JVM_OPTS=(-XX:-PreserveFramePointer)
	fg_jvm_start "$cur" VThreadDeep 4 "$DEPTH"
	# frame pointers: CPU; without: wall (OpenJDK 21 the other way round)
	for ev in ${FG_VTS_EVENTS:-$([[ $fp == fp ]] && echo cpu || echo wall)}; do
		check "temurin25-$fp" "$ev"
	done
	fg_container_stop "$cur" || true # a JVM stopped by SIGTERM exits 143
	FG_JVM_OPTS=()
done

if [[ ${FG_VTHREAD_JDK21:-1} == 1 ]]; then
	fg_image_root sid 21
	for fp in fp nofp; do
		cur=j21$fp
		[[ $fp == nofp ]] && FG_JVM_OPTS=(-XX:-PreserveFramePointer)
		fg_jvm_start "$cur" VThreadDeep 4 "$DEPTH"
		for ev in ${FG_VTS_EVENTS:-$([[ $fp == fp ]] && echo wall || echo cpu)}; do
			check "openjdk21-$fp" "$ev"
		done
		fg_container_stop "$cur" || true
		FG_JVM_OPTS=()
	done
fi
fg_pass
