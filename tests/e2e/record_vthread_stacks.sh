#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_vthread_stacks.sh - whole CPU stacks of mounted virtual threads whose callers are
# still frozen in heap stack chunks: VThreadDeep (tests/java), 4 virtual threads recursing 120
# deep through descend() and then computing in spin() and yielding in a loop (each mount thaws
# only the top frames back). `fgcollect record --event cpu` at the defaults, on Temurin 25 with
# -XX:+PreserveFramePointer and without it, then on OpenJDK 21 of Debian sid's image root with
# both (FG_VTHREAD_JDK21=0 leaves those out):
#  - every sample in spin is whole (all 120 descend frames below VThreadDeep::body and
#    java.lang.VirtualThread::run, no [truncated] marker) or marked [truncated];
#  - Temurin 25 with frame pointers: >= 30% of them whole (chunks frozen again or changed
#    between the sample and the collector's read are marked, not walked: the share whole
#    varies from run to run and is logged for every configuration);
#  - never a stack with fewer descend frames and no marker.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_vthread_stacks
fg_require_built

fg_sock_dir
sock=$FG_SOCK_DIR/fgcollect.sock
noctl=$FG_TMP/no-daemon/ctl.sock # never another test's watch daemon
D=${FG_VTS_SECONDS:-4}            # seconds per recording
DEPTH=120
temurin=${FG_TEMURIN25:-/usr/lib/jvm/temurin-25-jdk-amd64}
[[ -x $temurin/bin/java ]] || fg_fail "no Temurin 25 at $temurin (scripts/install-deps.sh installs it)"

# run CFG: one recording of the JVM started last, its spin samples checked.
run() {
	local cfg=$1 want=$2 f=$FG_TMP/$1.folded
	fg_wait_log "$cur" 60 '^VThreadDeep ready'
	"$FGCOLLECT" record --pid "$FG_HOSTPID" --socket "$sock" --ctl "$noctl" --event cpu \
		--duration "$D" -o "$f" 2>"$FG_TMP/$cfg.err" ||
		{ cat "$FG_TMP/$cfg.err" >&2; fg_fail "$cfg: record failed"; }
	grep -E 'virtual threads|unwound' "$FG_TMP/$cfg.err" >&2 || true
	# Each line through spin: whole = DEPTH descend frames, then body and VirtualThread.run
	# nearer the root, and no [truncated]; marked = [truncated]; wrong = neither.
	read -r all whole wrong <<<"$(depth=$DEPTH awk '{ n = $NF; line = $0 }
		/VThreadDeep::spin_\[[0ij]\]/ {
			all += n
			d = gsub(/;VThreadDeep::descend_\[[0ij]\]/, "&", line)
			if (line ~ /\[truncated\]/)
				next
			if (d == ENVIRON["depth"] + 0 &&
			    line ~ /java\.lang\.VirtualThread::run_\[[0ij]\];.*VThreadDeep::body_\[[0ij]\];VThreadDeep::descend_/)
				whole += n
			else
				wrong += n
		}
		END { printf "%d %d %d\n", all, whole, wrong }' "$f")"
	fg_log "$cfg: $whole of $all samples in spin whole ($DEPTH descend frames), $wrong neither whole nor [truncated]"
	if ((all < 50)); then
		head -c 3000 "$f" >&2
		fg_fail "$cfg: only $all samples in VThreadDeep::spin"
	fi
	((wrong == 0)) || fg_fail "$cfg: $wrong samples in spin neither whole nor marked [truncated]"
	if [[ $want == whole ]] && ((whole * 100 < all * 30)); then
		awk '/VThreadDeep::spin_/' "$f" | sort -t' ' -k2 -n -r | head -3 | cut -c1-2000 >&2 || true
		fg_fail "$cfg: $whole of $all samples in spin whole (< 30%)"
	fi
}

FG_JDK=$temurin
for fp in ${FG_VTS_FPS:-fp nofp}; do
	cur=t25$fp
	[[ $fp == nofp ]] && FG_JVM_OPTS=(-XX:-PreserveFramePointer)
	fg_jvm_start "$cur" VThreadDeep 4 "$DEPTH"
	run "temurin25-$fp" "$([[ $fp == fp ]] && echo whole || echo marked)"
	fg_container_stop "$cur" || true # a JVM stopped by SIGTERM exits 143
	FG_JVM_OPTS=()
done

if [[ ${FG_VTHREAD_JDK21:-1} == 1 ]]; then
	fg_image_root sid 21
	for fp in fp nofp; do
		cur=j21$fp
		[[ $fp == nofp ]] && FG_JVM_OPTS=(-XX:-PreserveFramePointer)
		fg_jvm_start "$cur" VThreadDeep 4 "$DEPTH"
		run "openjdk21-$fp" marked
		fg_container_stop "$cur" || true
		FG_JVM_OPTS=()
	done
fi
fg_pass
