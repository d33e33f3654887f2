#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_old_jdks.sh - JDK 8 and JDK 11 from Debian's archive, each JVM in a namespace container
# on a Debian unstable image root (tests/images/jdkroot.sh: that image's own glibc, stripped C
# library and JDK), `record` at its defaults on InterpChain's chain (main -> ChainA.enter ->
# ChainB.relay -> ChainC.pass -> ChainD.descend -> ChainE.spin, the leaf's loop hot):
#  - without frame pointers (the vm unwinder on the release's code heap and frame layout) and
#    with them: >= 99% of the main thread's samples show the whole chain in order below
#    call_stub, and >= 99% of all samples reached a thread root;
#  - -Xint with --lines: the whole chain named in >= 99% of the main thread's samples, the
#    leaf at its spinning line in >= 90% of them;
#  - JDK 8: `--event alloc` says in one line that this JVM cannot (SampledObjectAlloc came with
#    JDK 11), and the JVM runs on, its agent still streaming (the -Xint recording follows).
# A root that cannot be made fails the test: it never skips.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_old_jdks
fg_require_built

FG_SOCK_DIR=$FG_TMP/sock
mkdir -p "$FG_SOCK_DIR"
chmod 0755 "$FG_SOCK_DIR"
sock=$FG_SOCK_DIR/fgcollect.sock
noctl=$FG_TMP/no-daemon/ctl.sock # never another test's watch daemon
jar11=$FG_JAVA_JAR
jar8=$FG_BUILD_DIR/tests/java8/fg-workloads.jar
[[ -f $jar8 ]] || fg_fail "$jar8 not built (cmake --build \$FG_BUILD_DIR --target fg_java8_workloads)"

# record NAME ARGS...: fgcollect record on $FG_HOSTPID into $FG_TMP/NAME.folded.
record() {
	local name=$1
	shift
	"$FGCOLLECT" record --pid "$FG_HOSTPID" --socket "$sock" --ctl "$noctl" "$@" \
		-o "$FG_TMP/$name.folded" 2>"$FG_TMP/$name.err" ||
		{ cat "$FG_TMP/$name.err" >&2; fg_fail "$name: record failed"; }
	cat "$FG_TMP/$name.err" >&2
}

# start NAME [JVM_OPT...]: InterpChain in a container on the image root, until it spins.
start() {
	local name=$1
	shift
	FG_JVM_OPTS=("$@")
	fg_jvm_start "$name" InterpChain 60
	FG_JVM_OPTS=()
	fg_wait_log "$name" 30 'InterpChain ready'
}

# count FILE STACK_REGEX [LEAF_REGEX]: "MAIN CHAIN LEAF" sample counts of the main thread
# (named java: JDK 8's launcher library is stripped, its JavaMain unnamed).
count() {
	re="$2" leaf="${3:-^$}" awk 'BEGIN { re = ENVIRON["re"]; leaf = ENVIRON["leaf"] }
		{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s) }
		s ~ /^java;/ { m += n; if (s ~ re) { c += n; if (s ~ leaf) l += n } }
		END { print m + 0, c + 0, l + 0 }' "$1"
}

# rooted ERRFILE: the summary's share of stacks that reached a thread root, "PART ALL".
rooted() {
	sed -n 's/.*reached a thread root ([^)]*): [0-9.]*% (\([0-9]*\)\/\([0-9]*\)).*/\1 \2/p' "$1"
}

# need LABEL PART ALL PCT: PART >= PCT% of ALL, and ALL >= 40 samples.
need() {
	local label=$1 part=$2 all=$3 want=$4
	fg_log "JDK $n $label: $part/$all"
	((all >= 40)) || fg_fail "JDK $n $label: only $all samples (a busy machine?)"
	((part * 100 >= all * want)) || fg_fail "JDK $n $label: $part of $all (< $want%)"
}

chain='call_stub;InterpChain::main_\[0\];ChainA::enter_\[0\];ChainB::relay_\[0\];ChainC::pass_\[0\];ChainD::descend_\[0\];ChainE::spin_\[[0j]\]'
chain_lines='call_stub;InterpChain::main:[0-9]+_\[0\];ChainA::enter:[0-9]+_\[0\];ChainB::relay:[0-9]+_\[0\];ChainC::pass:[0-9]+_\[0\];ChainD::descend:[0-9]+_\[0\];ChainE::spin:[0-9]+_\[0\]'

summary=""
for n in 8 11; do
	fg_image_root sid "$n"
	if ((n == 8)); then FG_JAVA_JAR=$jar8; else FG_JAVA_JAR=$jar11; fi

	# ---- compiled leaf, without and with frame pointers ------------------------------------
	for fp in - +; do
		name=fp$fp$n
		name=${name/+/on}
		name=${name/-/off}
		start "$name" "-XX:${fp}PreserveFramePointer"
		sleep 2 # the leaf's loop is OSR-compiled within a second
		# 8 s: enough samples on a loaded machine (40 and more) that the one sample a thread
		# creation may leave in clone3's system call (no CFI covers it) stays under 1%.
		record "$name" --duration 8
		read -r main part _ < <(count "$FG_TMP/$name.folded" "$chain")
		if ((part * 100 < main * 99)); then
			sort -t' ' -k2 -nr "$FG_TMP/$name.folded" | head -n 5 >&2
		fi
		need "${fp}PreserveFramePointer: main-thread samples with the whole chain" "$part" "$main" 99
		summary+="JDK $n ${fp}PreserveFramePointer: chain $part/$main, "
		read -r part all < <(rooted "$FG_TMP/$name.err")
		need "${fp}PreserveFramePointer: samples that reached a thread root" "${part:-0}" "${all:-0}" 99
		summary+="rooted $part/$all; "
		fg_container_stop "$name" || true
	done

	# ---- -Xint with lines (JDK 8: alloc refused first) -------------------------------------
	start xint$n -Xint
	spin=$(sed -n 's/.*spin-line=\([0-9]*\).*/\1/p' "${FG_CT_LOG[xint$n]}" | head -n 1)
	if ((n == 8)); then
		"$FGCOLLECT" record --pid "$FG_HOSTPID" --socket "$sock" --ctl "$noctl" --event alloc \
			--duration 1 -o "$FG_TMP/alloc8.folded" 2>"$FG_TMP/alloc8.err" || true
		cat "$FG_TMP/alloc8.err" >&2
		said=$(grep -c "PID $FG_HOSTPID: this JVM cannot sample allocations (JVMTI SampledObjectAlloc came with JDK 11)" "$FG_TMP/alloc8.err" || true)
		((said == 1)) || fg_fail "JDK 8 --event alloc: not said once that the JVM cannot ($said)"
		! grep -q 'never answered' "$FG_TMP/alloc8.err" || fg_fail "JDK 8 --event alloc: 'never answered' said too"
		kill -0 "$FG_HOSTPID" || fg_fail "JDK 8: the JVM died after --event alloc"
		! grep -q 'fgagent:' "${FG_CT_LOG[xint$n]}" || fg_fail "JDK 8: the agent complained: $(grep 'fgagent:' "${FG_CT_LOG[xint$n]}")"
	fi
	record xint$n --duration 4 --lines
	read -r main part leaf < <(count "$FG_TMP/xint$n.folded" "$chain_lines" ";ChainE::spin:$spin"'_\[0\]')
	if ((part * 100 < main * 99)); then
		sort -t' ' -k2 -nr "$FG_TMP/xint$n.folded" | head -n 5 >&2
	fi
	need "-Xint: main-thread samples with the whole chain and lines" "$part" "$main" 99
	need "-Xint: chain leaves at the spin line $spin" "$leaf" "$part" 90
	kill -0 "$FG_HOSTPID" || fg_fail "JDK $n: the JVM died"
	fg_container_stop xint$n || true
	summary+="JDK $n -Xint: chain with lines $part/$main, spin line $leaf; "
done
fg_pass "$summary"
