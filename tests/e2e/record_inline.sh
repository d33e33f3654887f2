#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_inline.sh - inlined Java frames. InlineChain's a() -> b() -> c() is inlined by C2 into
# its caller; `record` must unfold the compiled method's inline chain from the agent's compile
# info (`..._[j];InlineChain::a_[i];InlineChain::b_[i];InlineChain::c_[i]`), and with
# --no-inline keep only compiled methods (no `_[i]` frame at all, c's time in a `_[j]` frame).
#
# Then --lines for compiled and inlined frames, on every JDK under /usr/lib/jvm: JitLines'
# loop() -> outer() -> mid() -> spin(), compiled into loop() with the rest inlined, spins on one
# line of spin(). With -XX:+DebugNonSafepoints (pc descs for every pc, not only safepoints):
# >= 90% of the main thread's JIT leaf frames are spin at its spinning line, and >= 90% of those
# samples show every inlined caller at its call-site line
# (`JitLines::loop:L_[j];JitLines::outer:L_[i];JitLines::mid:L_[i];JitLines::spin:L_[i]`), the
# lines read from the "@line" markers of JitLines.java. Once recorded by listening on the agent
# socket, once through a `watch` daemon's control channel (its history replay and live stream),
# and once more through the daemon for a JVM whose agent sent names alone until the recording
# asked for its tables (tables on demand).
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_inline
fg_require_built

fg_sock_dir
fg_jvm_start inl InlineChain 40
fg_wait_log inl 25 'InlineChain ready'
sock=$FG_SOCK_DIR/fgcollect.sock

noctl=$FG_TMP/no-daemon/ctl.sock # never another test's watch daemon
# 499 Hz: enough samples even when the machine is busy (the checks are shares); 2 s give
# about 300 main-thread samples on a loaded machine where a check needs 60 to 80.
unfolded=$FG_TMP/unfolded.folded
"$FGCOLLECT" record --pid "$FG_HOSTPID" --duration 2 --freq 499 --socket "$sock" --ctl "$noctl" -o "$unfolded" \
	2>"$FG_TMP/rec1.err" || { cat "$FG_TMP/rec1.err" >&2; fg_fail "record failed"; }
cat "$FG_TMP/rec1.err" >&2
read -r main chain < <(awk '
	{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s) }
	s ~ /;JavaMain;/ { m += n
		if (s ~ /_\[j\];InlineChain::a_\[i\];InlineChain::b_\[i\];InlineChain::c_\[i\]/) h += n }
	END { print m + 0, h + 0 }' "$unfolded")
fg_log "unfolded: $chain of $main main-thread samples show ..._[j];a_[i];b_[i];c_[i]"
((main >= 80)) || fg_fail "only $main main-thread samples"
((chain * 100 >= main * 50)) ||
	{ sort -t' ' -k2 -nr "$unfolded" | head -n 5 | cut -c1-400 >&2; fg_fail "the inline chain is not unfolded in most samples"; }

folded=$FG_TMP/folded.folded
"$FGCOLLECT" record --pid "$FG_HOSTPID" --duration 2 --freq 499 --no-inline --socket "$sock" --ctl "$noctl" -o "$folded" \
	2>"$FG_TMP/rec2.err" || { cat "$FG_TMP/rec2.err" >&2; fg_fail "record --no-inline failed"; }
! grep -q '_\[i\]' "$folded" || fg_fail "--no-inline output still has inlined (_[i]) frames"
read -r main2 java2 < <(awk '
	{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s) }
	s ~ /;JavaMain;/ { m += n; if (s ~ /InlineChain::[a-z]+_\[j\]$/) h += n }
	END { print m + 0, h + 0 }' "$folded")
((main2 >= 50)) || fg_fail "--no-inline: only $main2 main-thread samples"
((java2 * 100 >= main2 * 80)) || fg_fail "--no-inline: only $java2 of $main2 samples end in a compiled InlineChain method"
fg_container_stop inl || true
inline_summary="unfolded chain in $((chain * 100 / main))% of samples; --no-inline keeps $((java2 * 100 / main2))% in compiled frames, no _[i]"

# ---- --lines: compiled and inlined frames at their source lines ------------------------------
src=$FG_SOURCE_DIR/tests/java/JitLines.java
line_of() { grep -n "@line $1\$" "$src" | cut -d: -f1; }
Lspin=$(line_of spin) Lmid=$(line_of mid) Louter=$(line_of outer) Lloop=$(line_of loop)
[[ -n $Lspin && -n $Lmid && -n $Louter && -n $Lloop ]] || fg_fail "no @line markers in $src"

# check_lines NAME FOLDED: "LEAVES AT_LINE CHAIN MAIN" of the main thread, and the checks.
check_lines() {
	local name=$1 f=$2 leaves at chain main
	read -r main leaves at chain < <(ls="$Lspin" lm="$Lmid" lo="$Louter" ll="$Lloop" awk 'BEGIN { ls = ENVIRON["ls"]; lm = ENVIRON["lm"]; lo = ENVIRON["lo"]; ll = ENVIRON["ll"] }
		BEGIN { want = "JitLines::loop:" ll "_[j];JitLines::outer:" lo "_[i];JitLines::mid:" lm "_[i];JitLines::spin:" ls "_[i]" }
		{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s) }
		s ~ /;JavaMain;/ { m += n; k = split(s, fr, ";"); leaf = fr[k]
			if (leaf !~ /^JitLines::[a-z]+(:[0-9]+)?_\[[ij]\]$/) next
			j += n
			if (leaf != "JitLines::spin:" ls "_[i]" && leaf != "JitLines::spin:" ls "_[j]") next
			a += n
			if (substr(s, length(s) - length(want) + 1) == want) c += n }
		END { print m + 0, j + 0, a + 0, c + 0 }' "$f")
	fg_log "$name: $main main-thread samples, $leaves with a JIT leaf in JitLines, $at of them spin:$Lspin, $chain with loop:$Lloop;outer:$Louter;mid:$Lmid;spin:$Lspin"
	((main >= 60)) || fg_fail "$name: only $main main-thread samples (a busy machine?)"
	((leaves * 100 >= main * 80)) ||
		{ sort -t' ' -k2 -nr "$f" | head -n 5 | sed 's/.*call_stub;//' >&2; fg_fail "$name: only $leaves of $main samples end in a compiled JitLines frame"; }
	if ((at * 100 < leaves * 90)); then
		sort -t' ' -k2 -nr "$f" | head -n 5 | sed 's/.*call_stub;//' >&2
		fg_fail "$name: the spin line $Lspin in only $at of $leaves JIT leaf frames (< 90%)"
	fi
	((chain * 100 >= at * 90)) ||
		{ sort -t' ' -k2 -nr "$f" | head -n 5 | sed 's/.*call_stub;//' >&2; fg_fail "$name: the callers' call-site lines in only $chain of $at samples (< 90%)"; }
	grep -q 'compiled and inlined frames with a line: ' "$FG_TMP/$name.err" ||
		fg_fail "$name: no line about compiled frames' lines in the summary"
	lines_summary+="$name: spin line in $((at * 100 / leaves))% of JIT leaves, call sites in $((chain * 100 / at))%; "
}

lines_summary=""
n=0
for jdk in $(fg_jdks); do
	major=$(fg_jdk_major "$jdk")
	FG_JVM_OPTS=(-XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints)
	FG_JDK=$jdk fg_jvm_start lines$major JitLines 60
	FG_JVM_OPTS=()
	fg_wait_log lines$major 30 'JitLines ready'
	"$FGCOLLECT" record --pid "$FG_HOSTPID" --duration 2 --freq 499 --lines --socket "$sock" --ctl "$noctl" \
		-o "$FG_TMP/lines$major.folded" 2>"$FG_TMP/lines$major.err" ||
		{ cat "$FG_TMP/lines$major.err" >&2; fg_fail "JDK $major: record --lines failed"; }
	cat "$FG_TMP/lines$major.err" >&2
	check_lines "lines$major" "$FG_TMP/lines$major.folded"
	if ((n == 0)); then
		# Through a watch daemon: the agent reconnects to it and replays its table; record
		# gets the lines from the daemon's history.
		fg_watch_start
		fg_wait 10 fg_map_ok "$FG_HOSTPID" 'JitLines::' || fg_fail "the watch daemon got no JitLines code"
		"$FGCOLLECT" record --pid "$FG_HOSTPID" --duration 2 --freq 499 --lines --ctl "$FG_CTL" \
			-o "$FG_TMP/watch$major.folded" 2>"$FG_TMP/watch$major.err" ||
			{ cat "$FG_TMP/watch$major.err" >&2; fg_fail "JDK $major: record --lines via watch failed"; }
		cat "$FG_TMP/watch$major.err" >&2
		check_lines "watch$major" "$FG_TMP/watch$major.folded"
		# Tables on demand: a JVM that only ever talked to this daemon, while nobody
		# recorded it, sent names alone; the recording's subscription makes its agent
		# announce its live code again with the tables (and say so), and the perf map
		# keeps every name meanwhile.
		fg_container_stop lines$major || true
		FG_JVM_OPTS=(-XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints)
		FG_JDK=$jdk fg_jvm_start lazy$major JitLines 60
		FG_JVM_OPTS=()
		fg_wait_log lazy$major 30 'JitLines ready'
		fg_wait 10 fg_map_ok "$FG_HOSTPID" 'JitLines::loop' || fg_fail "the watch daemon got no JitLines::loop"
		sleep 1
		"$FGCOLLECT" record --pid "$FG_HOSTPID" --duration 2 --freq 499 --lines --ctl "$FG_CTL" \
			-o "$FG_TMP/lazy$major.folded" 2>"$FG_TMP/lazy$major.err" ||
			{ cat "$FG_TMP/lazy$major.err" >&2; fg_fail "JDK $major: record --lines of a JVM without tables failed"; }
		cat "$FG_TMP/lazy$major.err" >&2
		grep -q 'agent sends its inline and line tables' "$FG_TMP/lazy$major.err" ||
			fg_fail "JDK $major: the agent never said its tables were on"
		check_lines "lazy$major" "$FG_TMP/lazy$major.folded"
		fg_map_ok "$FG_HOSTPID" 'JitLines::loop' || fg_fail "the map lost JitLines::loop after the tables came"
		fg_container_stop lazy$major || true
		fg_watch_stop || true
	fi
	fg_container_stop lines$major || true
	n=$((n + 1))
done
((n >= 1)) || fg_fail "no JDK found under /usr/lib/jvm"
fg_pass "$inline_summary; $lines_summary"
