#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_jdk26.sh - JDK 26 from Debian unstable's image root (its own /usr, glibc and JDK;
# tests/images/jdkroot.sh makes it once; a root that cannot be had fails the test), in a
# namespace container, `record` at its defaults on InterpChain's fixed chain main ->
# ChainA.enter -> ChainB.relay -> ChainC.pass -> ChainD.descend -> ChainE.spin:
#  - mixed mode with and without -XX:+PreserveFramePointer (the leaf's loop OSR-compiled, its
#    callers interpreted): >= 99% of the main thread's samples show the whole chain in order,
#    and >= 99% of them reach the thread's start (no `[truncated]` frame);
#  - -Xint with --lines: the same, every frame `_[0]` with a line, >= 90% of the leaves at the
#    spinning line;
#  - every run: >= 99% of the interpreted frames named, no anonymous `Interpreter` frame.
# JDK 26's interpreter frame slots are vouched for by its exported frame anchors and proved per
# frame by the ConstantPoolCache* (no release range); its C library is stripped (no debug file
# on the host), so the thread's start is the frame where the CFI ends the stack.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_jdk26
fg_require_built
fg_image_root sid 26

FG_SOCK_DIR=$FG_TMP/sock
mkdir -p "$FG_SOCK_DIR"
chmod 0755 "$FG_SOCK_DIR"
sock=$FG_SOCK_DIR/fgcollect.sock
noctl=$FG_TMP/no-daemon/ctl.sock # never another test's watch daemon

# record NAME ARGS...: fgcollect record on $FG_HOSTPID into $FG_TMP/NAME.folded.
record() {
	local name=$1
	shift
	"$FGCOLLECT" record --pid "$FG_HOSTPID" --socket "$sock" --ctl "$noctl" "$@" \
		-o "$FG_TMP/$name.folded" 2>"$FG_TMP/$name.err" ||
		{ cat "$FG_TMP/$name.err" >&2; fg_fail "$name: record failed"; }
	cat "$FG_TMP/$name.err" >&2
}

# count FILE CHAIN_REGEX [LEAF_REGEX]: "MAIN CHAIN LEAF ROOTED" sample counts of the main
# thread (the launcher's thread, "java"): all, with the whole chain, ... and the leaf regex,
# and reaching the thread's start (no [truncated] frame under the thread).
count() {
	re="$2" leaf="${3:-^$}" awk 'BEGIN { re = ENVIRON["re"]; leaf = ENVIRON["leaf"] }
		{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s) }
		s ~ /^java;/ { m += n; if (s !~ /^java;\[truncated\];/) r += n
			if (s ~ re) { c += n; if (s ~ leaf) l += n } }
		END { print m + 0, c + 0, l + 0, r + 0 }' "$1"
}

# pct PART ALL: PART * 100 / ALL, one decimal.
pct() {
	p="$1" a="$2" awk 'BEGIN { p = ENVIRON["p"]; a = ENVIRON["a"]; printf "%.1f", a ? 100 * p / a : 0 }'
}

chain_osr='InterpChain::main_\[0\];ChainA::enter_\[0\];ChainB::relay_\[0\];ChainC::pass_\[0\];ChainD::descend_\[0\];ChainE::spin_\[j\]'
chain_lines='InterpChain::main:[0-9]+_\[0\];ChainA::enter:[0-9]+_\[0\];ChainB::relay:[0-9]+_\[0\];ChainC::pass:[0-9]+_\[0\];ChainD::descend:[0-9]+_\[0\];ChainE::spin:[0-9]+_\[0\]'

summary=""
for mode in fp nofp xint; do
	case $mode in
	fp) FG_JVM_OPTS=() ;; # fg_jvm_start's -XX:+PreserveFramePointer
	nofp) FG_JVM_OPTS=(-XX:-PreserveFramePointer) ;;
	xint) FG_JVM_OPTS=(-Xint -XX:-PreserveFramePointer) ;;
	esac
	fg_jvm_start "$mode" InterpChain 30
	FG_JVM_OPTS=()
	fg_wait_log "$mode" 30 'InterpChain ready'
	if [[ $mode == xint ]]; then
		spin=$(sed -n 's/.*spin-line=\([0-9]*\).*/\1/p' "${FG_CT_LOG[$mode]}" | head -n 1)
		record "$mode" --duration 5 --lines
		read -r main chain leaf rooted < <(count "$FG_TMP/$mode.folded" "$chain_lines" \
			";ChainE::spin:$spin"'_\[0\]')
	else
		sleep 2 # the leaf's loop is OSR-compiled within a second
		record "$mode" --duration 5
		read -r main chain leaf rooted < <(count "$FG_TMP/$mode.folded" "$chain_osr")
	fi
	f=$FG_TMP/$mode.folded
	grep -q 'agent connected (.*26\.' "$FG_TMP/$mode.err" || fg_fail "$mode: the agent of a JDK 26 did not connect"
	fg_log "JDK 26 $mode: main thread $main samples, whole chain $chain ($(pct "$chain" "$main")%), rooted $rooted ($(pct "$rooted" "$main")%)"
	((main >= 40)) || fg_fail "JDK 26 $mode: only $main main-thread samples (a busy machine? expected up to ~500)"
	if ((chain * 100 < main * 99)); then
		sort -t' ' -k2 -nr "$f" | head -n 5 | sed 's/.*call_stub_stub;//' >&2
		fg_fail "JDK 26 $mode: the whole chain in only $chain of $main main-thread samples (< 99%)"
	fi
	if ((rooted * 100 < main * 99)); then
		grep -E '^java;\[truncated\];' "$f" | head -n 3 | cut -c1-300 >&2
		fg_fail "JDK 26 $mode: only $rooted of $main main-thread samples reach the thread's start (< 99%)"
	fi
	read -r named all < <(sed -n 's/.*interpreted frames: [0-9.]*% (\([0-9]*\)\/\([0-9]*\)) named.*/\1 \2/p' "$FG_TMP/$mode.err")
	[[ -n ${all:-} ]] || fg_fail "JDK 26 $mode: no interpreted-frames line in the summary"
	((named * 100 >= all * 99)) || fg_fail "JDK 26 $mode: $named of $all interpreted frames named (< 99%)"
	anon=$(grep -cE '(^|;)Interpreter(;| [0-9]+$)' "$f" || true)
	((anon == 0)) || { grep -E '(^|;)Interpreter(;| [0-9]+$)' "$f" | head -n 3 >&2; fg_fail "JDK 26 $mode: $anon stacks with an anonymous Interpreter frame"; }
	if [[ $mode == xint ]]; then
		((leaf * 100 >= chain * 90)) || fg_fail "JDK 26 -Xint: the spin line $spin in only $leaf of $chain leaves (< 90%)"
		summary+="-Xint chain $(pct "$chain" "$main")%, rooted $(pct "$rooted" "$main")%, leaf line $(pct "$leaf" "$chain")%"
	else
		summary+="$mode chain $(pct "$chain" "$main")%, rooted $(pct "$rooted" "$main")%; "
	fi
	fg_container_stop "$mode" || true
done
fg_pass "JDK 26 (sid image root): $summary"
