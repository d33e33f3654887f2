#!/bin/bash
# SPDX-License-Identifier: MIT
#
# jdk_matrix.sh IMAGE N - one cell of the JDK matrix: the agent from this build on JDK N in
# IMAGE, end to end, each JVM in a namespace container:
#   IMAGE bullseye or sid: Debian's own OpenJDK N on that image root's /usr and glibc
#     (tests/images/jdkroot.sh: the sid JDKs share one root); host: the host's OpenJDK N;
#     temurin: Eclipse Temurin N under /usr/lib/jvm. A JDK that cannot be had fails the cell.
# The checks (FG_MATRIX_CHECKS, default all that apply to N):
#   load     the agent loads and connects to `fgcollect watch`, the map names HotLoop; in
#            bullseye the JVM runs on that image's own glibc 2.31;
#   perf     stock perf names >= 95% of HotLoop's JIT frames from the map;
#   fp       record at the defaults on InterpChain (main -> ChainA.enter -> ... -> ChainE.spin)
#            with -XX:+PreserveFramePointer: the agent that connected is JDK N's, >= 99% of the
#            main thread's samples hold the whole chain in order, >= 99% of all samples reached
#            a thread root, >= 99% of the interpreted frames named and none an anonymous
#            Interpreter frame;
#   nofp     the same without frame pointers (the vm walk);
#   xint     -Xint --lines: >= 95% of the main thread's samples hold the whole chain as
#            interpreted frames, >= 90% of the leaves at the spinning line, no anonymous
#            Interpreter frame;
#   churn    ClassChurn's generations unloaded and their code addresses reused (proven from
#            --code-log): >= 98% of the samples with JIT frames have every JIT frame named,
#            every generation named;
#   offcpu   OffCpuTruth, every switch-out: >= 95% of fg-sleeper's off-CPU time under
#            sleeper;sleepB, that time the JVM's own count within 15%; fg-contender's >= 90%
#            under contend;
#   alloc    (11 and later) AllocTruth at --alloc-interval 64 KiB: each thread's share of the
#            bytes within 2 points of the JVM's own count, the total within 5%, >= 99% under
#            its method with its class as the leaf; where the running JVM's VMStructs hold
#            Thread::_allocated_bytes, Thread::_tlab and the TLAB's _start and _top
#            (vmstructs_fields.py), >= 95% of the samples weighed by their thread's exact
#            bytes, none where one is missing;
#   lock     (11 and later) LockTruth: each waiter's contended time its own count within 10%,
#            >= 95% under enterLedger with LockTruth$Ledger as the leaf;
#   noalloc  (8) `record --event alloc` says in one line that this JVM cannot sample
#            allocations, and the JVM runs on unharmed, its agent serving `record --event cpu`;
#   dbg      (sid 8: the matrix's one libjvm.so without a symbol table; Debian leaves .symtab
#            in the others) a JVM's first 3 s recorded twice (HotLoop: class loading and the
#            JIT compilers in libjvm.so): as the image is, record's summary counts the libjvm.so
#            frames it could not name and says to install openjdk-N-dbg; with that package's
#            debug file of libjvm.so under the image's /usr/lib/debug (tests/images/dbgtree.sh),
#            none is left unnamed and HotSpot's thread roots are named.
# JDK 8 runs the workloads built for Java 8 (tests/java8/fg-workloads.jar).
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
# The cell: arguments, or FG_MATRIX_CELL=IMAGE:N (ctest: tests/e2e/CMakeLists.txt).
(($#)) || IFS=: read -r -a cell_args <<<"${FG_MATRIX_CELL:-}"
(($#)) || set -- "${cell_args[@]}"
[[ $# -eq 2 && $2 =~ ^[0-9]+$ ]] || {
	echo "usage: jdk_matrix.sh bullseye|sid|host|temurin N   (or FG_MATRIX_CELL=IMAGE:N)" >&2
	exit 64
}
image=$1 n=$2
fg_init "jdk_${image}_$n"
fg_require_built

t_start=$(fg_ms)
case $image in
bullseye | sid) fg_image_root "$image" "$n" ;;
host)
	FG_JDK=/usr/lib/jvm/java-$n-openjdk-amd64
	[[ -x $FG_JDK/bin/java ]] || fg_fail "no OpenJDK $n on the host ($FG_JDK; scripts/install-deps.sh)"
	;;
temurin)
	FG_JDK=/usr/lib/jvm/temurin-$n-jdk-amd64
	[[ -x $FG_JDK/bin/java ]] || fg_fail "no Temurin $n on the host ($FG_JDK)"
	;;
*) fg_fail "unknown image '$image' (bullseye, sid, host, temurin)" ;;
esac
cfg="$image JDK $n"
if ((n < 11)); then
	FG_JAVA_JAR=$FG_BUILD_DIR/tests/java8/fg-workloads.jar
	all_checks="load perf fp nofp xint churn offcpu noalloc"
else
	all_checks="load perf fp nofp xint churn offcpu alloc lock"
fi
[[ $image != sid ]] || ((n != 8)) || all_checks+=" dbg"
fg_java_jar
checks=${FG_MATRIX_CHECKS:-$all_checks}

sock_dir=$FG_TMP/sock
mkdir -p "$sock_dir"
chmod 0755 "$sock_dir"
FG_SOCK_DIR=$sock_dir
sock=$sock_dir/fgcollect.sock
noctl=$FG_TMP/no-daemon/ctl.sock # never another test's watch daemon
j='_\[[0ij]\]'                    # any Java frame's mark
figures=()
# fig TEXT: a figure of this cell, logged now and again in the summary.
fig() {
	figures+=("$1")
	fg_log "$cfg: $1"
}

# record NAME ARGS...: fgcollect record on $FG_HOSTPID into $FG_TMP/NAME.folded.
record() {
	local name=$1
	shift
	"$FGCOLLECT" record --pid "$FG_HOSTPID" --socket "$sock" --ctl "$noctl" "$@" \
		-o "$FG_TMP/$name.folded" 2>"$FG_TMP/$name.err" ||
		{ cat "$FG_TMP/$name.err" >&2; fg_fail "$cfg $name: record failed"; }
	grep -vE '^fgcollect record: note' "$FG_TMP/$name.err" | head -n 12 >&2 || true
}

# record_main NAME MIN STACK_REGEX ARGS...: record NAME for 2 s; while the main thread has fewer
# than MIN samples in it (count), again for twice as long, up to 8 s (a busy machine).
record_main() {
	local name=$1 min=$2 re=$3 main _ secs=2
	shift 3
	while :; do
		record "$name" --duration "$secs" "$@"
		read -r main _ < <(count "$FG_TMP/$name.folded" "$re")
		((main < min && secs < 8)) || return 0
		fg_log "$cfg $name: $main samples of the main thread in $secs s (< $min): recording $((2 * secs)) s"
		secs=$((2 * secs))
	done
}

# count FILE STACK_REGEX [LEAF_REGEX]: "MAIN CHAIN LEAF" sample counts of the main thread (its
# stacks under JavaMain, or with the chain's leaf).
count() {
	re="$2" leaf="${3:-^$}" awk 'BEGIN { re = ENVIRON["re"]; leaf = ENVIRON["leaf"] }
		{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s) }
		s ~ /;JavaMain;/ || s ~ /ChainE::spin/ { m += n; if (s ~ re) { c += n; if (s ~ leaf) l += n } }
		END { print m + 0, c + 0, l + 0 }' "$1"
}

# rooted ERRFILE: the summary's stacks that reached a thread root, "PART ALL".
rooted() {
	sed -n 's/.*reached a thread root ([^)]*): [0-9.]*% (\([0-9]*\)\/\([0-9]*\)).*/\1 \2/p' "$1"
}

# jdk_said ERRFILE: record's summary names an agent in a JVM of JDK N (JDK 8's version is its
# HotSpot's, 25.x-bNN).
jdk_said() {
	local re8=', (1\.8\.[^,]*|25\.[0-9]+-b[^,]*), container'
	if ((n == 8)); then
		grep -qE "agent connected \(service [^,]*$re8" "$1"
	else
		grep -qE "agent connected \(service [^,]*, $n([.+-][^,]*)?, container" "$1" &&
			! grep -qE "agent connected \(service [^,]*$re8" "$1"
	fi
}

# interp_named ERRFILE LABEL: >= 99% of the interpreted frames named, none left anonymous.
interp_named() {
	local named all anon
	read -r named all < <(sed -n 's/.*interpreted frames: [0-9.]*% (\([0-9]*\)\/\([0-9]*\)) named.*/\1 \2/p' "$1")
	[[ -n ${all:-} ]] || fg_fail "$cfg $2: no interpreted-frames line in record's summary"
	((named * 100 >= all * 99)) || fg_fail "$cfg $2: $named of $all interpreted frames named (< 99%)"
	anon=$(grep -cE '(^|;)Interpreter(;| [0-9]+$)' "${1%.err}.folded" || true)
	((anon == 0)) || fg_fail "$cfg $2: $anon stacks with an anonymous Interpreter frame"
}

# pct PART ALL PCT LABEL: PART >= PCT% of ALL (ALL >= 40), else fail.
pct() {
	(($2 >= 40)) || fg_fail "$cfg $4: only $2 samples (a busy machine?)"
	(($1 * 100 >= $2 * $3)) || fg_fail "$cfg $4: $1 of $2 (< $3%)"
}

chain_re='InterpChain::main_\[0\];ChainA::enter_\[0\];ChainB::relay_\[0\];ChainC::pass_\[0\];ChainD::descend_\[0\];ChainE::spin_\[[0j]\]'
chain_lines='InterpChain::main:[0-9]+_\[0\];ChainA::enter:[0-9]+_\[0\];ChainB::relay:[0-9]+_\[0\];ChainC::pass:[0-9]+_\[0\];ChainD::descend:[0-9]+_\[0\];ChainE::spin:[0-9]+_\[0\]'

# ---- load, perf: the agent connects to watch, stock perf names the map's frames ---------------
check_load() {
	fg_watch_start --dir "$sock_dir"
	fg_jvm_start hot HotLoop 40
	fg_wait_log hot 60 'HotLoop ready'
	if [[ $image == bullseye ]]; then
		glibc=$(fg_root_glibc "$FG_ROOT")
		[[ $glibc == "glibc 2.31" ]] || fg_fail "$cfg: the bullseye root has '$glibc', not glibc 2.31"
		grep -qE ' /(usr/)?lib/x86_64-linux-gnu/libc-2\.31\.so$' "/proc/$FG_HOSTPID/maps" ||
			fg_fail "$cfg: the JVM does not run on the image's libc-2.31.so: $(grep -E 'libc[.-]' "/proc/$FG_HOSTPID/maps" | head -n 1)"
		fig "load: on the image's $glibc"
	fi
	fg_wait 30 grep -qE "connect: pid $FG_HOSTPID " "$FG_WATCH_LOG" ||
		fg_fail "$cfg: the agent did not connect to watch"
	fg_wait 30 fg_map_ok "$FG_HOSTPID" 'HotLoop::' ||
		fg_fail "$cfg: no well-formed map naming HotLoop:: ($(fg_map_lint "$(fg_map_path "$FG_HOSTPID")"))"
	fig "load: connected ($(grep -oE 'JVM [^,]*' "$FG_WATCH_LOG" | head -n 1)), $(fg_map_lines "$FG_HOSTPID") map entries"
	if [[ " $checks " == *" perf "* ]]; then
		fg_expect_jit_named "$FG_HOSTPID" 3 "$FG_TMP/perf" 'HotLoop::' 95
		fig "perf: $FG_JIT_NAMED/$FG_JIT_FRAMES JIT frames named ($FG_JIT_PCT%)"
	fi
	fg_container_stop hot || true
	fg_watch_stop_clean
}

# ---- fp, nofp: whole chains, rooted ----------------------------------------------------------
check_cpu() { # LABEL JVM_OPT
	local name=$1 main whole leaf part all
	FG_JVM_OPTS=("$2")
	fg_jvm_start "$name" InterpChain 60
	FG_JVM_OPTS=()
	fg_wait_log "$name" 60 'InterpChain ready'
	sleep 2 # the leaf's loop is OSR-compiled within a second
	# 499 Hz: at least 500 samples of the main thread, so that one rare stack of the agent's
	# sender thread (in clone3, whose parent side glibc leaves without CFI, or deeper than the
	# stack copy) does not decide a 99% check alone; 2 s give some 1000 on an idle CPU, else
	# (a busy machine) the recording is made again, longer
	record_main "$name" 500 "$chain_re" --freq 499
	jdk_said "$FG_TMP/$name.err" ||
		fg_fail "$cfg $name: record names no agent in a JDK $n JVM: $(grep -m1 'agent connected' "$FG_TMP/$name.err")"
	read -r main whole leaf < <(count "$FG_TMP/$name.folded" "$chain_re")
	read -r part all < <(rooted "$FG_TMP/$name.err")
	[[ -n ${all:-} ]] || fg_fail "$cfg $name: no thread-root line in record's summary"
	fg_log "$cfg $name: chain $whole/$main, rooted $part/$all"
	fig "$name: chain $whole/$main, rooted $part/$all"
	((whole * 100 >= main * 99)) || sort -t' ' -k2 -nr "$FG_TMP/$name.folded" | head -n 4 >&2
	pct "$whole" "$main" 99 "$name: the whole chain in the main thread's samples"
	pct "$part" "$all" 99 "$name: samples that reached a thread root"
	interp_named "$FG_TMP/$name.err" "$name"
	fg_container_stop "$name" || true
}

# ---- xint: interpreted frames by name and line -----------------------------------------------
check_xint() {
	local main whole leaf spin f=$FG_TMP/xint.folded
	FG_JVM_OPTS=(-Xint)
	fg_jvm_start xint InterpChain 60
	FG_JVM_OPTS=()
	fg_wait_log xint 60 'InterpChain ready'
	spin=$(sed -n 's/.*spin-line=\([0-9]*\).*/\1/p' "${FG_CT_LOG[xint]}" | head -n 1)
	# at 499 Hz, at least 500 samples of the main thread (as fp and nofp)
	record_main xint 500 "$chain_lines" --lines --freq 499
	read -r main whole leaf < <(count "$f" "$chain_lines" ";ChainE::spin:$spin"'_\[0\]')
	fig "xint: chain $whole/$main, line $spin in $leaf"
	((whole * 100 >= main * 95)) || sort -t' ' -k2 -nr "$f" | head -n 4 >&2
	pct "$whole" "$main" 95 "-Xint: the whole chain with lines"
	((whole > 0 && leaf * 100 >= whole * 90)) || fg_fail "$cfg -Xint: the spin line $spin in only $leaf of $whole leaves"
	interp_named "$FG_TMP/xint.err" -Xint
	fg_container_stop xint || true
}

# ---- churn: time-exact names across unloads and address reuse --------------------------------
check_churn() {
	local gens=6 out=$FG_TMP/churn.folded log=$FG_TMP/code.log reused jit unk g c
	FG_JVM_OPTS=(-XX:+UseSerialGC -XX:ReservedCodeCacheSize=4m)
	((n < 9)) || FG_JVM_OPTS+=(-XX:-SegmentedCodeCache) # one code heap (JDK 8 has only one)
	fg_jvm_start churn ClassChurn "$gens" 1200
	FG_JVM_OPTS=()
	"$FGCOLLECT" record --pid "$FG_HOSTPID" --freq 499 --duration 45 --socket "$sock" --ctl "$noctl" \
		-o "$out" --code-log "$log" 2>"$FG_TMP/churn.err" ||
		{ cat "$FG_TMP/churn.err" >&2; fg_fail "$cfg churn: record failed"; }
	grep -q 'ClassChurn done' "${FG_CT_LOG[churn]}" || fg_fail "$cfg churn: ClassChurn did not finish"
	reused=$(awk '$3 == "load" && $7 ~ /^ChurnGen[0-9]+::/ {
			g = substr($7, 9, 4); if (($4 in gen) && gen[$4] != g && unl[$4]) n++
			gen[$4] = g; unl[$4] = 0 }
		$3 == "unload" && $7 ~ /^ChurnGen/ { unl[$4] = 1 }
		END { print n + 0 }' "$log")
	((reused >= 1)) || fg_fail "$cfg churn: no code address was reused across generations: proves nothing"
	read -r jit unk < <(awk '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s)
		if (s ~ /\[unknown\] \(jit\)/) u += n
		if (s ~ /_\[j\]|\[unknown\] \(jit\)/) j += n }
		END { print j + 0, u + 0 }' "$out")
	fig "churn: $reused addresses reused, $((jit - unk))/$jit JIT samples named"
	((jit >= 200)) || fg_fail "$cfg churn: only $jit samples with JIT frames"
	(((jit - unk) * 100 >= jit * 98)) || fg_fail "$cfg churn: $unk of $jit JIT samples have an [unknown] JIT frame (> 2%)"
	for ((g = 2; g <= gens; g++)); do
		c=$(grep -c "ChurnGen$(printf %04d "$g")::" "$out" || true)
		((c > 0)) || fg_fail "$cfg churn: generation $g is never named"
	done
	fg_container_stop churn 5 || true
}

# ---- offcpu: known answers -------------------------------------------------------------------
# truth_at FILE THREAD METHOD: OffCpuTruth's cumulative ms of THREAD in METHOD in its last
# complete group of truth lines in FILE.
truth_group() {
	awk '/^truth clock now / { n = 0 }
	     /^truth / { g[n++] = $0; if (n == 6) { for (i = 0; i < 6; i++) last[i] = g[i]; ok = 1 } }
	     END { if (ok) for (i = 0; i < 6; i++) print last[i] }' "$1"
}
truth_ready() { # LOG: a complete group of truth lines in LOG
	[[ -n $(truth_group "$1") ]]
}
truth_at() {
	T="$2" M="$3" awk '$2 == ENVIRON["T"] && $3 == ENVIRON["M"] { print $4 }' "$1"
}
us() { # FILE THREAD [REGEX [NOT_REGEX]]
	th="$2" re="${3:-.}" nre="${4:-^$}" awk 'BEGIN { th = ENVIRON["th"]; re = ENVIRON["re"]; nre = ENVIRON["nre"] }
		{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); split(s, f, ";") }
		f[1] == th && s ~ re && s !~ nre { c += n }
		END { printf "%d\n", c + 0 }' "$1"
}
check_offcpu() {
	local f=$FG_TMP/offcpu.folded pre='\[off-cpu: preempted\]' all part tb win rec want d
	mkdir -p "$FG_TMP/disk"
	chmod 0777 "$FG_TMP/disk"
	FG_CT_OPTS=(--bind "$FG_TMP/disk:/disk")
	fg_jvm_start offcpu OffCpuTruth 150 /disk
	FG_CT_OPTS=()
	fg_wait_log offcpu 60 'OffCpuTruth ready'
	# a first complete group of truth lines (one each 100 ms)
	fg_wait 10 truth_ready "${FG_CT_LOG[offcpu]}" ||
		fg_fail "$cfg offcpu: no complete group of truth lines 10 s after OffCpuTruth ready"
	truth_group "${FG_CT_LOG[offcpu]}" >"$FG_TMP/offcpu.t0"
	record offcpu --event offcpu --switch-rate 0 --duration 4
	sleep 0.3
	truth_group "${FG_CT_LOG[offcpu]}" >"$FG_TMP/offcpu.t1"
	all=$(us "$f" fg-sleeper . "$pre")
	part=$(us "$f" fg-sleeper "OffCpuTruth::sleeper$j;.*OffCpuTruth::sleepB$j;.*\\[off-cpu: sleeping\\]")
	tb=$(($(truth_at "$FG_TMP/offcpu.t1" fg-sleeper sleepB) - $(truth_at "$FG_TMP/offcpu.t0" fg-sleeper sleepB)))
	win=$(($(truth_at "$FG_TMP/offcpu.t1" clock now) - $(truth_at "$FG_TMP/offcpu.t0" clock now)))
	rec=$(sed -n 's/.* samples in \([0-9]*\)\.\([0-9]\) s at.*/\1\200/p' "$FG_TMP/offcpu.err")
	[[ -n $rec && $win -gt 0 ]] || fg_fail "$cfg offcpu: no recording length ('$rec') or truth window ($win)"
	want=$((rec * tb / win))
	fig "offcpu: sleeper $((part / 1000))/$((all / 1000)) ms under sleepB (truth $want ms)"
	pct "$part" "$all" 95 "offcpu: fg-sleeper's off-CPU us under sleeper;sleepB"
	d=$((part / 1000 - want))
	((want > 0 && ${d#-} * 100 <= want * 15)) ||
		fg_fail "$cfg offcpu: fg-sleeper in sleepB $((part / 1000)) ms, truth $want ms (> 15% apart)"
	all=$(us "$f" fg-contender . "$pre")
	part=$(us "$f" fg-contender "OffCpuTruth::contender$j;(.*;)?OffCpuTruth::contend$j;" "$pre")
	fig "offcpu: contender $((part / 1000))/$((all / 1000)) ms under contend"
	pct "$part" "$all" 90 "offcpu: fg-contender's off-CPU us under contend"
	fg_container_stop offcpu || true
}

# ---- alloc, lock: known answers (events_lib.sh) ----------------------------------------------
check_alloc() {
	local t all=0 want=0 d f=$FG_TMP/alloc.folded
	local -A g=() w=() meth=([fg-bytes]=makeBytes [fg-longs]=makeLongs [fg-particles]=makeParticles
		[fg-strings]=makeStrings) cls=([fg-bytes]='byte[]' [fg-longs]='long[]'
		[fg-particles]='AllocTruth$Particle' [fg-strings]=java.lang.String)
	cur=alloc
	ev_ctl_dir
	FG_CT_OPTS=(--bind "$ctldir:/ctl:ro")
	fg_jvm_start alloc AllocTruth 300 /ctl
	FG_CT_OPTS=()
	fg_wait_log alloc 60 'AllocTruth ready'
	# the estimator at a fixed interval (--alloc-budget 0); e2e_record_alloc checks the totals
	# while the default cost budget moves the interval
	ev_record alloc "$f" alloc 3000 --event alloc --alloc-interval 65536 --alloc-budget 0
	for t in fg-bytes fg-longs fg-particles fg-strings; do
		g[$t]=$(ev_sum "$f" "$t")
		w[$t]=$(ev_truth alloc "$t")
		all=$((all + g[$t])) want=$((want + w[$t]))
		ev_need "alloc: $t bytes under AllocTruth::${meth[$t]} with ${cls[$t]} as the leaf" \
			"$(ev_sum "$f" "$t" "AllocTruth::${meth[$t]}$j;[^;]*\$" "${cls[$t]}")" "${g[$t]}" 99
	done
	((want > 0 && all > 0)) || fg_fail "$cfg alloc: $all bytes recorded, truth $want"
	for t in fg-bytes fg-longs fg-particles fg-strings; do
		d=$((g[$t] * 10000 / all - w[$t] * 10000 / want))
		((${d#-} <= 200)) ||
			fg_fail "$cfg alloc: $t has $(ev_pct "${g[$t]}" "$all")% of the bytes, truth $(ev_pct "${w[$t]}" "$want")%"
	done
	ev_near "alloc: the fg-* threads' bytes" "$all" "$want" 5
	fig "alloc: $all bytes, truth $want; shares within 2 points"
	check_gapweights
	fg_container_stop alloc || true
}

# The alloc recording's weights: where the running JVM's own VMStructs (vmstructs_fields.py)
# hold the fields of a thread's exact bytes, >= 95% of the samples weighed by them (all but each
# thread's first after alloc went on); where one is missing, none.
check_gapweights() {
	local fields line exact interval
	fields=$(python3 "$(dirname "$0")/vmstructs_fields.py" "$FG_HOSTPID" Thread::_allocated_bytes \
		Thread::_tlab ThreadLocalAllocBuffer::_start ThreadLocalAllocBuffer::_top) ||
		fg_fail "$cfg alloc: cannot read the JVM's VMStructs"
	line=$(grep -o "sample weights: [0-9]* by their thread's exact bytes.*, [0-9]* by the interval" \
		"$FG_TMP/alloc.err") || fg_fail "$cfg alloc: record's summary has no sample weights line"
	exact=$(sed 's/^sample weights: \([0-9]*\) .*/\1/' <<<"$line")
	interval=$(sed 's/.*, \([0-9]*\) by the interval$/\1/' <<<"$line")
	if grep -q ' missing$' <<<"$fields"; then
		((exact == 0)) || fg_fail "$cfg alloc: $exact samples weighed by exact bytes, yet the JVM's VMStructs lack $(grep ' missing$' <<<"$fields" | cut -d' ' -f1 | tr '\n' ' ')"
		fig "alloc: the JVM's VMStructs lack a thread's bytes; $interval samples weighed by the interval"
		return
	fi
	((exact > 0 && exact * 100 >= (exact + interval) * 95)) ||
		fg_fail "$cfg alloc: $exact samples weighed by their thread's exact bytes, $interval by the interval (the JVM's VMStructs: $(head -4 <<<"$fields" | tr '\n' ' '))"
	fig "alloc: $exact samples weighed by their thread's exact bytes, $interval by the interval ($(head -4 <<<"$fields" | sed 's/ offset /+/' | tr '\n' ' '))"
}

check_lock() {
	local w got want f=$FG_TMP/lock.folded
	cur=lock
	ev_ctl_dir
	FG_CT_OPTS=(--bind "$ctldir:/ctl:ro")
	fg_jvm_start lock LockTruth 300 /ctl
	FG_CT_OPTS=()
	fg_wait_log lock 60 'LockTruth ready'
	ev_record lock "$f" lock 3000 --event lock
	for w in fg-waiter1 fg-waiter2; do
		got=$(ev_sum "$f" "$w")
		want=$(($(ev_truth lock "$w") / 1000))
		ev_near "lock: $w contended time, us" "$got" "$want" 10
		ev_need "lock: $w time under LockTruth::enterLedger with LockTruth\$Ledger as the leaf" \
			"$(ev_sum "$f" "$w" "LockTruth::enterLedger$j;[^;]*\$" 'LockTruth$Ledger')" "$got" 95
		fig "lock: $w $got us, truth $want us"
	done
	fg_container_stop lock || true
}

# ---- dbg (sid 8): libjvm frames named from the image's openjdk-N-dbg -------------------------
# unnamed_jvm ERRFILE: the libjvm.so frames record's summary says it could not name (0: none).
unnamed_jvm() {
	sed -n 's/.*native frames without a name, by library: .*libjvm\.so \([0-9]*\).*/\1/p' "$1" |
		awk '{ n += $1 } END { print n + 0 }'
}

check_dbg() {
	local tree mode named without
	tree=$("$FG_SOURCE_DIR/tests/images/dbgtree.sh" "$image" "$n" 2>"$FG_TMP/dbgtree.err") ||
		fg_fail "$cfg dbg: no debug file of openjdk-$n-dbg for the root's libjvm.so: $(cat "$FG_TMP/dbgtree.err")"
	# a JVM's start keeps libjvm.so busy (class loading, the JIT compilers); the same JVM twice,
	# without and with the package's debug file where the image keeps its debug files
	for mode in nodbg dbg; do
		[[ $mode == nodbg ]] || FG_CT_OPTS=(--bind "$tree:/usr/lib/debug:ro")
		fg_jvm_start "$mode" HotLoop 20
		FG_CT_OPTS=()
		record "$mode" --duration 3 --freq 499
		fg_container_stop "$mode" || true
	done
	without=$(unnamed_jvm "$FG_TMP/nodbg.err")
	((without > 0)) ||
		fg_fail "$cfg dbg: without the debug package, record's summary names no libjvm.so frames it could not name"
	grep -q 'install its debug package in the image (openjdk-N-dbg for libjvm.so' "$FG_TMP/nodbg.err" ||
		fg_fail "$cfg dbg: without the debug package, the summary does not say how to name them"
	grep -qE 'libjvm\.so\+0x' "$FG_TMP/nodbg.folded" ||
		fg_fail "$cfg dbg: without the debug package, no libjvm.so+0x frame in the profile"
	# named libjvm.so frames: the main thread's call into Java (every sample of HotLoop's main
	# thread runs under it), or a HotSpot thread's root where one was sampled (the JIT's
	# threads may be idle by the recording)
	named=$(grep -cE '(^|;)(JavaCalls::call_helper|java_start|thread_native_entry)\(' "$FG_TMP/dbg.folded" || true)
	((named > 0)) ||
		fg_fail "$cfg dbg: with openjdk-$n-dbg, no libjvm.so frame named (JavaCalls::call_helper, java_start, thread_native_entry)"
	(($(unnamed_jvm "$FG_TMP/dbg.err") == 0)) ||
		fg_fail "$cfg dbg: with openjdk-$n-dbg, record still could not name $(unnamed_jvm "$FG_TMP/dbg.err") libjvm.so frames"
	! grep -qE 'libjvm\.so\+0x' "$FG_TMP/dbg.folded" ||
		fg_fail "$cfg dbg: with openjdk-$n-dbg, libjvm.so+0x frames remain: $(grep -oE 'libjvm\.so\+0x[0-9a-f]+' "$FG_TMP/dbg.folded" | head -n 3 | tr '\n' ' ')"
	fig "dbg: without openjdk-$n-dbg $without libjvm.so frames unnamed (the summary says why), with it none; $named stacks through JavaCalls::call_helper or HotSpot's thread root"
}

# ---- noalloc (JDK 8): refused in one line, the JVM unharmed ----------------------------------
check_noalloc() {
	local rc=0 said
	fg_jvm_start noalloc HotLoop 60
	fg_wait_log noalloc 60 'HotLoop ready'
	"$FGCOLLECT" record --pid "$FG_HOSTPID" --socket "$sock" --ctl "$noctl" --event alloc \
		--duration 4 -o "$FG_TMP/noalloc.folded" 2>"$FG_TMP/noalloc.err" || rc=$?
	cat "$FG_TMP/noalloc.err" >&2
	said=$(grep -ciE 'cannot .*alloc' "$FG_TMP/noalloc.err" || true)
	((said == 1)) || fg_fail "$cfg: record --event alloc (exit $rc) said $said lines that this JVM cannot sample allocations, not one"
	! grep -qiE 'never answered' "$FG_TMP/noalloc.err" || fg_fail "$cfg: record --event alloc waited for an answer the JVM cannot give"
	kill -0 "$FG_HOSTPID" 2>/dev/null || fg_fail "$cfg: the JVM died after record --event alloc"
	! grep -qE 'hs_err|SIGSEGV|Exception in thread' "${FG_CT_LOG[noalloc]}" || fg_fail "$cfg: the JVM was harmed"
	record noalloc-cpu --duration 3
	grep -q 'HotLoop::' "$FG_TMP/noalloc-cpu.folded" || fg_fail "$cfg: after the refusal, record --event cpu names no HotLoop frame"
	fig "noalloc: exit $rc, $(grep -iE 'cannot .*alloc' "$FG_TMP/noalloc.err")"
	fg_container_stop noalloc || true
}

. "$(dirname "$0")/events_lib.sh"
for c in $checks; do
	t0=$(fg_ms)
	case $c in
	load) check_load ;;
	perf) [[ " $checks " == *" load "* ]] || fg_fail "the perf check runs with load" ;;
	fp) check_cpu fp -XX:+PreserveFramePointer ;;
	nofp) check_cpu nofp -XX:-PreserveFramePointer ;;
	xint) check_xint ;;
	churn) check_churn ;;
	offcpu) check_offcpu ;;
	alloc) ((n >= 11)) || fg_fail "JDK $n has no SampledObjectAlloc: check noalloc"; check_alloc ;;
	lock) check_lock ;;
	noalloc) check_noalloc ;;
	dbg) check_dbg ;;
	*) fg_fail "unknown check '$c'" ;;
	esac
	fg_log "$cfg: $c done in $(($(fg_ms) - t0)) ms"
done
for f in "${figures[@]}"; do fg_log "$cfg: $f"; done
fg_pass "$cfg ($checks): all checks hold in $((($(fg_ms) - t_start) / 1000)) s"
