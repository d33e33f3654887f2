#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_interp.sh - interpreted Java frames are named, on every JDK under /usr/lib/jvm,
# each JVM in a namespace container, `record` listening on its own agent socket:
#  - -Xint, InterpChain's fixed chain main -> ChainA.enter -> ChainB.relay -> ChainC.pass ->
#    ChainD.descend -> ChainE.spin in five classes: >= 95% of the main thread's samples show the
#    whole chain in order as `_[0]` frames, no sample anywhere has an anonymous `Interpreter`
#    frame, and with --lines >= 90% of the chain's leaves carry the spinning line; `top` shows
#    the leaf by name;
#  - mixed mode, the same chain with the leaf's loop OSR-compiled: the interpreted callers and
#    the compiled leaf in order in >= 95% of the main thread's samples;
#  - -Xint, InterpChurn's generations of a class (ChurnGenNNNN on thread gen-NNNN) loaded,
#    run, unloaded and replaced: no sample of a gen-NNNN thread names another generation, and
#    most of them name their own.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_interp
fg_require_built

fg_sock_dir
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

# count FILE STACK_REGEX [LEAF_REGEX]: "MAIN CHAIN LEAF" sample counts of the main thread.
count() {
	re="$2" leaf="${3:-^$}" awk 'BEGIN { re = ENVIRON["re"]; leaf = ENVIRON["leaf"] }
		{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s) }
		s ~ /;JavaMain;/ { m += n; if (s ~ re) { c += n; if (s ~ leaf) l += n } }
		END { print m + 0, c + 0, l + 0 }' "$1"
}

chain_lines='InterpChain::main:[0-9]+_\[0\];ChainA::enter:[0-9]+_\[0\];ChainB::relay:[0-9]+_\[0\];ChainC::pass:[0-9]+_\[0\];ChainD::descend:[0-9]+_\[0\];ChainE::spin:[0-9]+_\[0\]'
chain_osr='InterpChain::main_\[0\];ChainA::enter_\[0\];ChainB::relay_\[0\];ChainC::pass_\[0\];ChainD::descend_\[0\];ChainE::spin_\[j\]'

n=0
summary=""
for jdk in $(fg_jdks); do
	major=$(fg_jdk_major "$jdk")

	# ---- -Xint: the whole chain, by name and line ------------------------------------------
	FG_JVM_OPTS=(-Xint)
	FG_JDK=$jdk fg_jvm_start xint$major InterpChain 60
	FG_JVM_OPTS=()
	fg_wait_log xint$major 30 'InterpChain ready'
	spin=$(sed -n 's/.*spin-line=\([0-9]*\).*/\1/p' "${FG_CT_LOG[xint$major]}" | head -n 1)
	record xint$major --duration 4 --lines
	f=$FG_TMP/xint$major.folded
	read -r main chain leaf < <(count "$f" "$chain_lines" ";ChainE::spin:$spin"'_\[0\]')
	fg_log "JDK $major -Xint: $chain/$main main-thread samples show the whole chain, $leaf of them at line $spin"
	((main >= 60)) || fg_fail "JDK $major -Xint: only $main main-thread samples (a busy machine? expected up to ~400)"
	if ((chain * 100 < main * 95)); then
		sort -t' ' -k2 -nr "$f" | head -n 5 | sed 's/.*call_stub;//' >&2
		fg_fail "JDK $major -Xint: the whole chain in only $chain of $main samples (< 95%)"
	fi
	((leaf * 100 >= chain * 90)) || fg_fail "JDK $major -Xint: the spin line $spin in only $leaf of $chain leaves (< 90%)"
	anon=$(grep -cE '(^|;)Interpreter(;| [0-9]+$)' "$f" || true)
	((anon == 0)) || { grep -E '(^|;)Interpreter(;| [0-9]+$)' "$f" | head -n 3 >&2; fg_fail "JDK $major -Xint: $anon stacks with an anonymous Interpreter frame"; }
	grep -q 'interpreted frames: ' "$FG_TMP/xint$major.err" || fg_fail "JDK $major: no interpreted-frames line in the summary"

	# `top` names the leaf too (snapshots on a pipe). Four: samples are final 1.3 s after they
	# were taken, and held until the agent's tables are in (up to 3 s after top started).
	"$FGCOLLECT" top --pid "$FG_HOSTPID" --interval 1 --count 4 --socket "$sock" --ctl "$noctl" \
		>"$FG_TMP/top$major.out" 2>"$FG_TMP/top$major.err" ||
		{ cat "$FG_TMP/top$major.err" >&2; fg_fail "JDK $major: top failed"; }
	grep -q 'ChainE::spin_\[0\]' "$FG_TMP/top$major.out" ||
		{ cat "$FG_TMP/top$major.out" >&2; fg_fail "JDK $major: top does not show ChainE::spin_[0]"; }
	! grep -qE '(^| )Interpreter( |$)' "$FG_TMP/top$major.out" || fg_fail "JDK $major: top shows an anonymous Interpreter"
	fg_container_stop xint$major || true
	xint_pct=$((chain * 100 / main))
	line_pct=$((leaf * 100 / chain))

	# ---- mixed mode: interpreted callers of an OSR-compiled leaf ---------------------------
	FG_JDK=$jdk fg_jvm_start mixed$major InterpChain 60
	fg_wait_log mixed$major 30 'InterpChain ready'
	sleep 2 # the leaf's loop is OSR-compiled within a second
	record mixed$major --duration 4
	read -r main chain _ < <(count "$FG_TMP/mixed$major.folded" "$chain_osr")
	fg_log "JDK $major mixed: $chain/$main main-thread samples show interpreted callers + compiled leaf"
	((main >= 60)) || fg_fail "JDK $major mixed: only $main main-thread samples (a busy machine? expected up to ~400)"
	if ((chain * 100 < main * 95)); then
		sort -t' ' -k2 -nr "$FG_TMP/mixed$major.folded" | head -n 5 | sed 's/.*call_stub;//' >&2
		fg_fail "JDK $major mixed: the chain in only $chain of $main samples (< 95%)"
	fi
	fg_container_stop mixed$major || true
	mixed_pct=$((chain * 100 / main))

	# ---- class unloading: no sample names another generation -------------------------------
	FG_JVM_OPTS=(-Xint)
	FG_JDK=$jdk fg_jvm_start churn$major InterpChurn 10 600
	FG_JVM_OPTS=()
	fg_wait_log churn$major 30 'InterpChurn start'
	record churn$major --duration 20 --freq 499
	read -r total named wrong < <(awk '
		{ n = $NF; s = $0 }
		s ~ /^gen-[0-9]+;/ { g = substr(s, 5, 4); t += n
			if (s ~ /ChurnGen/) { c = s; own = 1
				while (match(c, /ChurnGen[0-9][0-9][0-9][0-9]/)) {
					if (substr(c, RSTART + 8, 4) != g) { own = 0; break }
					c = substr(c, RSTART + 12) }
				if (own) ok += n; else bad += n } }
		END { print t + 0, ok + 0, bad + 0 }' "$FG_TMP/churn$major.folded")
	unloaded=$(grep -c ' unloaded$' "${FG_CT_LOG[churn$major]}" || true)
	fg_log "JDK $major churn: $unloaded generations unloaded; gen threads: $total samples, $named name their own generation, $wrong another"
	((wrong == 0)) || { grep -E '^gen-' "$FG_TMP/churn$major.folded" | grep ChurnGen | sed 's/;start_thread.*call_stub;/ ... /' | head -n 5 >&2; fg_fail "JDK $major churn: $wrong samples named another generation's class"; }
	((unloaded >= 3)) || fg_fail "JDK $major churn: only $unloaded generations were unloaded (the test needs reuse)"
	((total >= 200)) || fg_fail "JDK $major churn: only $total samples of generation threads"
	((named * 100 >= total * 50)) || fg_fail "JDK $major churn: only $named of $total samples name their generation (< 50%)"
	fg_container_stop churn$major || true

	summary+="JDK $major: -Xint chain $xint_pct%, leaf line $line_pct%, mixed $mixed_pct%, churn $named/$total own, 0 wrong; "
	n=$((n + 1))
done
((n >= 1)) || fg_fail "no JDK found under /usr/lib/jvm"
fg_pass "$summary"
