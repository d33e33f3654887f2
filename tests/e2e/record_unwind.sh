#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_unwind.sh - whole Java stacks without -XX:+PreserveFramePointer, on every JDK
# under /usr/lib/jvm, each JVM in a namespace container, `record` on its own agent socket:
#  - answer key: with frame pointers on, UnwindMix's mixed workload (deep Java chain, libz,
#    writes to /dev/null) recorded with --unwind-check: the vm unwinder agrees frame for frame
#    with every intact kernel chain in >= 99% of the samples compared (>= 100 of them);
#  - frame pointers off (vm unwinding by default): the demo service and the deep chain reach a
#    thread root in >= 90% of samples, with the whole Java chain in order;
#  - hard cases, each with >= 95% of the main thread's samples rooted and whole (a sample in
#    code whose events have not arrived yet stops short, counted, never guessed): a method
#    deoptimised while on the stack (counted, named from its original pc), a megamorphic call
#    through a vtable stub, JNI into a library built without frame pointers and back into
#    Java; exceptions through compiled frames (>= 90%: see there);
#  - a stack deeper than a small copy ends in a `[truncated]` frame, counted, never garbage.
# A recording whose check has fewer than twice the samples it needs (a busy machine, another
# test beside this one) is made again, twice as long, up to four times as long.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_unwind
fg_require_built
[[ -f ${FG_UNWINDJNI:-} ]] || fg_fail "FG_UNWINDJNI (the JNI fixture) not built"

FG_SOCK_DIR=$FG_TMP/sock
mkdir -p "$FG_SOCK_DIR" "$FG_TMP/jni"
chmod 0755 "$FG_SOCK_DIR" "$FG_TMP/jni"
cp "$FG_UNWINDJNI" "$FG_TMP/jni/libunwindjni.so"
chmod 0755 "$FG_TMP/jni/libunwindjni.so"
sock=$FG_SOCK_DIR/fgcollect.sock
noctl=$FG_TMP/no-daemon/ctl.sock # never another test's watch daemon
nofp=(-XX:-PreserveFramePointer)

# record NAME ARGS...: fgcollect record on $FG_HOSTPID into $FG_TMP/NAME.folded. At record's
# 99 Hz, 3 s give about 300 samples of the busy main thread (150 on a loaded machine) where a
# check needs 40; 5 s for the answer key: about 400 compared (300 loaded) where it needs 100.
record() {
	local name=$1
	shift
	"$FGCOLLECT" record --pid "$FG_HOSTPID" --socket "$sock" --ctl "$noctl" "$@" \
		-o "$FG_TMP/$name.folded" 2>"$FG_TMP/$name.err" ||
		{ cat "$FG_TMP/$name.err" >&2; fg_fail "$name: record failed"; }
	cat "$FG_TMP/$name.err" >&2
}

# record_enough NAME SECONDS MIN COUNT [ARG...]: record NAME for SECONDS; while the command
# COUNT NAME prints fewer than MIN (the samples a check reads: twice what it needs), again for
# twice as long, up to 4 times as long. The JVM's work is steady, so a longer recording only
# gives a check the samples that a busy machine (another test beside this one) took from it.
record_enough() {
	local name=$1 secs=$2 min=$3 count=$4 most=$((4 * $2)) n
	shift 4
	while :; do
		record "$name" --duration "$secs" "$@"
		n=$("$count" "$name")
		((${n:-0} < min && secs < most)) || break
		fg_log "JDK $major $name: ${n:-0} samples in $secs s (< $min): recording $((2 * secs)) s"
		secs=$((2 * secs))
	done
}

# checked NAME, scoped NAME: the samples the answer key compared; the samples of the recording's
# scope ($scope: lines matching it).
checked() {
	sed -n 's/.*unwind check: [0-9.]*% ([0-9]*\/\([0-9]*\)).*/\1/p' "$FG_TMP/$1.err"
}
scoped() {
	share "$FG_TMP/$1.folded" . "$scope" | cut -d' ' -f1
}

# start NAME MODE DEPTH [JVM_OPT...]: UnwindMix MODE in a container, until it is warm.
start() {
	local name=$1 mode=$2 depth=$3
	shift 3
	FG_JVM_OPTS=("$@")
	FG_CT_OPTS=(--bind "$FG_TMP/jni:/jni:ro")
	FG_JDK=$jdk fg_jvm_start "$name" UnwindMix "$mode" "$depth" 120 /jni/libunwindjni.so
	FG_JVM_OPTS=()
	FG_CT_OPTS=()
	fg_wait_log "$name" 60 'UnwindMix ready'
}

# share FILE REGEX [SCOPE_REGEX]: "SCOPE MATCH" sample counts (scope: lines matching
# SCOPE_REGEX, default every line).
share() {
	re="$2" scope="${3:-.}" awk 'BEGIN { re = ENVIRON["re"]; scope = ENVIRON["scope"] }
		{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s) }
		s ~ scope { m += n; if (s ~ re) c += n }
		END { print m + 0, c + 0 }' "$1"
}

# need LABEL PART ALL PCT: PART >= PCT% of ALL, and ALL >= 40 samples.
need() {
	local label=$1 part=$2 all=$3 want=$4
	fg_log "JDK $major $label: $part/$all"
	((all >= 40)) || fg_fail "JDK $major $label: only $all samples (a busy machine?)"
	((part * 100 >= all * want)) || fg_fail "JDK $major $label: $part of $all (< $want%)"
}

# rooted_pct ERRFILE: the summary's share of stacks that reached a thread root, "PART ALL".
rooted() {
	sed -n 's/.*reached a thread root ([^)]*): [0-9.]*% (\([0-9]*\)\/\([0-9]*\)).*/\1 \2/p' "$1"
}

root='^[^;]*;__clone3;start_thread;'
main='^[^;]*;__clone3;start_thread;ThreadJavaMain;JavaMain;'
j='_\[[0ij]\];' # any Java frame's mark

for jdk in $(fg_jdks); do
	major=$(fg_jdk_major "$jdk")

	# ---- answer key: frame pointers on, the kernel's chain is the truth ---------------------
	start key$major mix 30
	record_enough key$major 5 200 checked --unwind-check
	read -r agree checked < <(sed -n 's/.*unwind check: [0-9.]*% (\([0-9]*\)\/\([0-9]*\)).*/\1 \2/p' "$FG_TMP/key$major.err")
	[[ -n ${checked:-} ]] || fg_fail "JDK $major: no unwind check line in the summary"
	fg_log "JDK $major answer key: $agree/$checked samples agree frame for frame"
	((checked >= 100)) || fg_fail "JDK $major answer key: only $checked samples compared"
	((agree * 100 >= checked * 99)) || fg_fail "JDK $major answer key: $agree of $checked agree (< 99%)"
	grep -q 'user stacks: 0.0% (0/' "$FG_TMP/key$major.err" || fg_fail "JDK $major: with frame pointers on, stacks were not the kernel's chain"
	fg_container_stop key$major || true

	# ---- frame pointers off: the deep chain and the demo service ----------------------------
	start deep$major deep 40 "${nofp[@]}"
	scope='^java;'
	record_enough deep$major 3 80 scoped
	read -r part all < <(rooted "$FG_TMP/deep$major.err")
	need "deep chain: samples that reached a thread root" "$part" "$all" 90
	# Samples are walked the vm way; one the walk cannot take (the kernel gave it no registers
	# or stack copy) keeps the kernel's chain.
	read -r vmw allw < <(sed -n 's/.*user stacks: [0-9.]*% (\([0-9]*\)\/\([0-9]*\)) unwound from the stack copy.*/\1 \2/p' "$FG_TMP/deep$major.err")
	[[ -n ${allw:-} ]] || fg_fail "JDK $major: no user-stacks line in the summary"
	need "deep chain, frame pointers off: samples unwound the vm way" "$vmw" "$allw" 99
	levels=$(printf "UnwindMix::level${j}%.0s" {1..41}) # mawk has no {41}
	read -r all part < <(share "$FG_TMP/deep$major.folded" \
		"${main}.*call_stub;UnwindMix::main${j}UnwindMix::deep${j}${levels}" '^java;')
	need "deep chain: main-thread samples with all 41 levels in order, rooted" "$part" "$all" 90
	fg_container_stop deep$major || true

	FG_JVM_OPTS=("${nofp[@]}")
	FG_JDK=$jdk fg_jvm_start prime$major PrimeService --load 2 --seconds 120
	FG_JVM_OPTS=()
	fg_wait_log prime$major 30 'PrimeService listening'
	sleep 3 # the load warms up and compiles
	scope='PrimeService::isPrime_'
	record_enough prime$major 3 80 scoped
	read -r part all < <(rooted "$FG_TMP/prime$major.err")
	need "demo service: samples that reached a thread root" "$part" "$all" 90
	read -r all part < <(share "$FG_TMP/prime$major.folded" \
		"${root}thread_native_entry.*call_stub;java\\.lang\\.Thread::run${j}.*PrimeService::primes${j}(.*;)?PrimeService::countPrimes${j}" \
		'PrimeService::isPrime_')
	need "demo service: isPrime samples with the request path from the thread's start" "$part" "$all" 90
	fg_container_stop prime$major || true

	# ---- hard cases -------------------------------------------------------------------------
	# The frame is deoptimised once, 0.8 s after the JVM is warm: a recording with too few samples
	# is made again from a new JVM's start, twice as long.
	scope='^java;' secs=3 d=deopt$major
	while :; do
		start "$d" deopt 10 "${nofp[@]}" -XX:CompileCommand=quiet \
			-XX:CompileCommand=dontinline,UnwindMix::inner
		record "$d" --duration "$secs"
		n=$(scoped "$d")
		((n < 80 && secs < 12)) || break
		fg_log "JDK $major $d: $n samples in $secs s (< 80): a new JVM, recording $((2 * secs)) s"
		fg_container_stop "$d" || true
		secs=$((2 * secs)) d=${d}x
	done
	deopt=$(sed -n 's/.*deoptimised frames \([0-9]*\).*/\1/p' "$FG_TMP/$d.err")
	((${deopt:-0} > 0)) || fg_fail "JDK $major deopt: no deoptimised frame was met"
	read -r all part < <(share "$FG_TMP/$d.folded" \
		"${main}.*call_stub;UnwindMix::main${j}UnwindMix::deopt${j}UnwindMix::outer${j}UnwindMix::inner_" '^java;')
	need "deopt ($deopt deoptimised frames): main-thread samples with main;deopt;outer;inner, rooted" "$part" "$all" 95
	fg_container_stop "$d" || true

	start mega$major mega 10 "${nofp[@]}"
	scope='^java;'
	record_enough mega$major 3 80 scoped
	read -r all part < <(share "$FG_TMP/mega$major.folded" \
		"${main}.*call_stub;UnwindMix::main${j}UnwindMix::mega${j}" '^java;')
	need "megamorphic: main-thread samples with main;mega, rooted" "$part" "$all" 95
	read -r all part < <(share "$FG_TMP/mega$major.folded" 'UnwindMix\$P[1-5]::f_' "$main")
	((part > 0)) || fg_fail "JDK $major megamorphic: no sample in the five receivers"
	fg_container_stop mega$major || true

	start jni$major jni 10 "${nofp[@]}"
	scope='^java;'
	record_enough jni$major 3 80 scoped
	read -r all part < <(share "$FG_TMP/jni$major.folded" \
		"${main}.*call_stub;UnwindMix::main${j}(UnwindMix::jni${j})?UnwindMix::nativeSum_\\[j\\];Java_UnwindMix_nativeSum;" '^java;')
	need "JNI: main-thread samples with main;jni;nativeSum (C), rooted" "$part" "$all" 95
	read -r all back < <(share "$FG_TMP/jni$major.folded" \
		"Java_UnwindMix_nativeSum;.*;call_stub;UnwindMix::callback${j}" "$main")
	((back * 100 >= all * 20)) || fg_fail "JDK $major JNI: only $back of $all samples back in Java (callback) through the C frames"
	fg_container_stop jni$major || true

	start exc$major exc 12 "${nofp[@]}"
	scope='^java;'
	record_enough exc$major 3 80 scoped
	read -r all part < <(share "$FG_TMP/exc$major.folded" "${main}.*call_stub;UnwindMix::main${j}" '^java;')
	# 90%: a few samples inside HotSpot's exception blob or rethrow stub, or in libjvm under
	# them, still end early (counted as lost or [truncated], never guessed)
	need "exceptions: main-thread samples rooted at the thread's start through main" "$part" "$all" 90
	read -r all part < <(share "$FG_TMP/exc$major.folded" \
		"${main}.*call_stub;UnwindMix::main${j}UnwindMix::exc${j}(UnwindMix::thrower${j})+" '^java;')
	need "exceptions: ... of them inside exc;thrower..." "$part" "$all" 50
	grep -qE 'fillInStackTrace|_rethrow_Java|OptoRuntime|SharedRuntime|exception' "$FG_TMP/exc$major.folded" ||
		fg_fail "JDK $major exceptions: no sample in the exception machinery"
	fg_container_stop exc$major || true

	# ---- deeper than the copy ---------------------------------------------------------------
	start trunc$major deep 3000 "${nofp[@]}" -Xss64m
	scope='UnwindMix::level_'
	record_enough trunc$major 3 80 scoped --stack-copy 4096
	cut=$(sed -n 's/.*\[truncated\] by the 4096-byte copy \([0-9]*\).*/\1/p' "$FG_TMP/trunc$major.err")
	((${cut:-0} > 0)) || fg_fail "JDK $major: no walk counted as [truncated] with a 4096-byte copy"
	read -r all part < <(share "$FG_TMP/trunc$major.folded" '^[^;]*;\[truncated\];' 'UnwindMix::level_')
	need "small copy: deep-chain samples that end in [truncated]" "$part" "$all" 90
	# never garbage: after the marker, every frame is named (an interpreted frame whose method
	# could not be read stays `[unknown] (interpreted)`, counted), and every Java frame is the
	# chain's own (the leaf may be anywhere the chain calls: libjvm, libc, the kernel). A walk
	# that stopped in code whose load was never announced in time is shown there too, its
	# outermost frame `[unknown] (jit)`: no more of them than the summary counts.
	bad=$(awk '/;\[truncated\];/ { s = $0; sub(/ [0-9]+$/, "", s); sub(/^[^;]*;\[truncated\];/, "", s)
		n = split(s, f, ";")
		if (f[1] == "[unknown] (jit)_[j]") { lost += $NF; i0 = 2 } else i0 = 1
		for (i = i0; i <= n; i++)
			if ((f[i] ~ /\[unknown\]/ && f[i] !~ /^\[unknown\] \(interpreted\)_\[0\]$/) ||
			    (f[i] ~ /_\[[0ij]\]$/ && f[i] !~ /^(UnwindMix|java\.|jdk\.|\[unknown\] \(interpreted\))/)) {
				print f[i]; break } }
		END { print "lost " lost + 0 }' \
		"$FG_TMP/trunc$major.folded")
	lost=$(sed -n 's/^lost //p' <<<"$bad")
	bad=$(sed '/^lost /d' <<<"$bad" | head -n 3)
	[[ -z $bad ]] || fg_fail "JDK $major: a [truncated] stack holds a foreign frame: $bad"
	unann=$(sed -n 's/.*code not announced yet \([0-9]*\).*/\1/p' "$FG_TMP/trunc$major.err")
	((lost <= ${unann:-0})) ||
		fg_fail "JDK $major: $lost [truncated] samples end in [unknown] (jit), ${unann:-0} counted as in code not announced yet"
	fg_container_stop trunc$major || true
done
fg_pass "vm unwinding: answer key, root reach, deopt, megamorphic, JNI, exceptions and truncation on every JDK"
