#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_alloc.sh - allocation profiles against known answers, on every JDK under /usr/lib/jvm,
# each JVM in a namespace container running AllocTruth (tests/java): four threads allocating one
# class each in a method of its own at paced rates (fg-bytes byte[] in makeBytes 96 MB/s,
# fg-longs long[] of 8 KiB..1 MiB in makeLongs 48 MB/s, fg-particles AllocTruth$Particle in
# makeParticles 24 MB/s, fg-strings java.lang.String in makeStrings 12 MB/s) during a burst
# inside each recording, and the JVM's own count of every thread's bytes in the burst
# (ThreadMXBean.getThreadAllocatedBytes; events_lib.sh). `record --event alloc`:
#  - at --alloc-interval 64 KiB (~3000 samples/s: the sampling error is well under the goals),
#    a 5 s burst: each thread's share of the four threads' bytes within 2 points of the
#    truth's, their total within 5%, >= 99% of each thread's bytes under its method with its
#    class as the leaf;
#  - the same, the recording stopped (SIGSTOP) twice for 0.4 s during the burst (first JDK):
#    >= 5% of the bytes lapped in its ring, counted under [lost before read] from the ring's
#    sums, none of unknown weight, and the shares and total hold as above;
#  - at the defaults, a 7 s burst: >= 99% under the method and class, the summary's count of
#    samples what a mean interval of 512 KiB gives for the burst's bytes (within 10%); shares
#    within 4 points and the total within 10% (about 4 standard
#    errors of ~2500 samples: the defaults' sampling error, not the goal's, bounds a short
#    recording);
#    (both with --alloc-budget 0: the interval stays the one asked);
#  - --alloc-interval 64 KiB --alloc-budget 10, an 8 s burst: sampling at 64 KiB costs this
#    paced JVM (a fraction of a core) more than 10% of its CPU, so the agent widens the interval
#    mid-recording; the summary lists 64 KiB and at least one other interval (a thread's first
#    sample may stand for the interval of an earlier recording), and the shares and total hold
#    as at the defaults (4 points, 10%);
#  - --lines --threads 'fg-bytes|fg-strings': only those threads, >= 99% of fg-bytes' bytes at
#    the source line of its `new byte[len]`;
#  - pprof: sample types alloc_objects/count and alloc_space/bytes, alloc_space's sum the bytes
#    of its 1 s burst within 25% (a few hundred samples: bytes, not KiB or samples).
# Then, on the first JDK only, `watch --event cpu,alloc --profile-every 2s`: rolling allocation
# profiles (STEM.alloc.folded beside the cpu ones) hold fg-bytes' byte[] under makeBytes, and
# `top --event alloc` through the daemon names makeBytes.
# The JVM of those checks runs the agent's default options: it copies its samples' stacks into
# its agent's ring (allocstack=auto: every recording here says it reads the ring), which the
# collector walks: every summary says the ring took >= 99% of the samples. Two JVMs
# started beside it, each on a socket and bursts' directory of its own, get the fine recording
# and its answers after it (a 3 s burst: ~6000 samples): one of the same JDK taking its stacks with GetStackTrace
# (allocstack=jvmti; its summary says no ring was read), and one of Temurin 25 copying them
# (FG_TEMURIN25, default /usr/lib/jvm/temurin-25-jdk-amd64).
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_alloc
fg_require_built
. "$(dirname "$0")/events_lib.sh"

fg_sock_dir
sock=$FG_SOCK_DIR/fgcollect.sock
noctl=$FG_TMP/no-daemon/ctl.sock # never another test's watch daemon
src=$FG_SOURCE_DIR/tests/java/AllocTruth.java
j='_\[[0ij]\]' # any Java frame's mark
threads="fg-bytes fg-longs fg-particles fg-strings"
declare -A method=([fg-bytes]=makeBytes [fg-longs]=makeLongs [fg-particles]=makeParticles
	[fg-strings]=makeStrings)
declare -A class=([fg-bytes]='byte[]' [fg-longs]='long[]' [fg-particles]='AllocTruth$Particle'
	[fg-strings]=java.lang.String)

# check NAME SHARE_PTS TOTAL_PCT: the recording NAME ($FG_TMP/NAME.folded) against the truth
# of its burst: shares within SHARE_PTS points, the total (with the bytes of copies lost before
# they were read, under [lost before read]) within TOTAL_PCT%, each thread's bytes >= 99% under
# its method and class.
check() {
	local name=$1 pts=$2 pct=$3 f=$FG_TMP/$1.folded t all=0 want=0 d lost
	local -A g=() w=()
	for t in $threads; do
		g[$t]=$(ev_sum "$f" "$t")
		w[$t]=$(ev_truth "$name" "$t")
		all=$((all + g[$t])) want=$((want + w[$t]))
		ev_need "$name: $t bytes under AllocTruth::${method[$t]} with ${class[$t]} as the leaf" \
			"$(ev_sum "$f" "$t" "AllocTruth::${method[$t]}$j;[^;]*\$" "${class[$t]}")" "${g[$t]}" 99
	done
	((want > 0)) || fg_fail "$cfg $name: the truth says nothing was allocated"
	((all > 0)) || fg_fail "$cfg $name: the profile holds none of the fg-* threads' bytes"
	for t in $threads; do
		# shares in hundredths of a point
		d=$((g[$t] * 10000 / all - w[$t] * 10000 / want))
		fg_log "$cfg $name: $t share $(ev_pct "${g[$t]}" "$all")% (truth $(ev_pct "${w[$t]}" "$want")%)"
		((${d#-} <= pts * 100)) ||
			fg_fail "$cfg $name: $t has $(ev_pct "${g[$t]}" "$all")% of the bytes, the truth $(ev_pct "${w[$t]}" "$want")% (> $pts points apart)"
	done
	# with what copies lapped before they were read weighed (their threads unknown)
	lost=$(ev_sum "$f" "[lost before read]")
	ev_near "$name: the fg-* threads' bytes and those lost before read ($lost)" \
		"$((all + lost))" "$want" "$pct"
}

# path NAME WAY: the summary of the recording NAME says its stacks came the way WAY (copy: the
# agents' rings took >= 99% of the samples; jvmti: no ring was read).
path() {
	local line ring all
	line=$(grep 'allocation stacks: ' "$FG_TMP/$1.err" || true)
	fg_log "$cfg $1: $line"
	if [[ $2 == jvmti ]]; then
		[[ $line == *"taken by the agents with GetStackTrace (no agent copied"* ]] ||
			fg_fail "$cfg $1: allocstack=jvmti, yet the summary says: $line"
		return
	fi
	ring=$(sed -n 's/.*allocation stacks: \([0-9]*\) copied .*/\1/p' <<<"$line")
	all=$(sed -n 's/.*: \([0-9]*\) allocation samples in .*/\1/p' "$FG_TMP/$1.err")
	[[ -n $ring && -n $all ]] && ((all > 0 && ring * 100 >= all * 99)) ||
		fg_fail "$cfg $1: stacks to be copied, yet the rings took ${ring:-?} of ${all:-?} samples: $line"
}

# side_start NAME JDK WAY: a JVM beside the main one, allocstack=WAY, on a socket and bursts'
# directory of its own ($FG_TMP/sock-NAME, $FG_TMP/ctl-NAME); its host PID in side_pid[NAME].
declare -A side_pid=()
side_start() {
	mkdir -p "$FG_TMP/ctl-$1" "$FG_TMP/sock-$1"
	chmod 0755 "$FG_TMP/ctl-$1" "$FG_TMP/sock-$1"
	FG_CT_OPTS=(--bind "$FG_TMP/ctl-$1:/ctl:ro")
	FG_SOCK_DIR=$FG_TMP/sock-$1 FG_AGENT_OPTS=allocstack=$3 FG_JDK=$2 \
		fg_jvm_start "$1" AllocTruth 300 /ctl
	FG_CT_OPTS=()
	side_pid[$1]=$FG_HOSTPID
}

# side_fine NAME LABEL WAY: the fine recording of the side JVM NAME (a 3 s burst) and its
# answers; run in a subshell beside the other side JVM's (fg_fail ends the subshell).
side_fine() {
	local cur=$1 cfg=$2 ctldir=$FG_TMP/ctl-$1 sock=$FG_TMP/sock-$1/fgcollect.sock
	local FG_HOSTPID=${side_pid[$1]}
	fg_wait_log "$cur" 60 'AllocTruth ready'
	ev_record "$1" "$FG_TMP/$1.folded" alloc 3000 --event alloc --alloc-interval 65536 \
		--alloc-budget 0
	check "$1" 2 5
	interval "$1" 65536
	path "$1" "$3"
}

temurin=${FG_TEMURIN25:-/usr/lib/jvm/temurin-25-jdk-amd64}
[[ -x $temurin/bin/java ]] || fg_fail "no Temurin 25 at $temurin (scripts/install-deps.sh installs it)"
side_start jvmti17 "$FG_DEFAULT_JDK" jvmti
side_start copy25 "$temurin" copy

# interval NAME BYTES: the recording NAME sampled at a mean interval of BYTES: the samples its
# summary counts are within 10% of what the burst's bytes give at that interval (about 5
# standard errors at the defaults). An object of s bytes is sampled with a chance of
# 1 - exp(-s / BYTES): per byte, that chance over s averaged over each thread's sizes (byte[]
# of 16 + 16..16384 bytes, long[] of 16 + 8 x 1024..131071; a Particle's 40 and a String's 24
# bytes are sampled at 1 / BYTES a byte).
interval() {
	local got want
	got=$(sed -n 's/.*: \([0-9]*\) allocation samples in .*/\1/p' "$FG_TMP/$1.err")
	[[ -n $got ]] || fg_fail "$cfg $1: the summary does not count the allocation samples: $(grep -i sample "$FG_TMP/$1.err" | head -n 2)"
	want=$(I="$2" small=$(($(ev_truth "$1" fg-particles) + $(ev_truth "$1" fg-strings))) \
		bytes=$(ev_truth "$1" fg-bytes) longs=$(ev_truth "$1" fg-longs) awk '
	# per byte: the mean chance over the mean size, arrays of 16 + k * lo..hi bytes
	function rate(k, lo, hi,   len, b, p, s) {
		for (len = lo; len <= hi; len += (hi - lo) / 4096) {
			b = 16 + k * int(len); p += 1 - exp(-b / I); s += b
		}
		return p / s
	}
	BEGIN {
		I = ENVIRON["I"]
		printf "%.0f\n", ENVIRON["small"] / I + ENVIRON["bytes"] * rate(1, 16, 16384) + \
			ENVIRON["longs"] * rate(8, 1024, 131071)
	}')
	ev_near "$1: allocation samples at a mean interval of $2 bytes" "$got" "$want" 10
}

first=1
for jdk in $(fg_jdks); do
	major=$(fg_jdk_major "$jdk")
	cfg="JDK $major"
	cur=alloc$major
	ev_ctl_dir
	FG_CT_OPTS=(--bind "$ctldir:/ctl:ro")
	FG_AGENT_OPTS= FG_JDK=$jdk fg_jvm_start "$cur" AllocTruth 300 /ctl # the default: auto
	FG_CT_OPTS=()
	fg_wait_log "$cur" 60 'AllocTruth ready'

	# ---- fine sampling: the goals ------------------------------------------------------------
	ev_record fine "$FG_TMP/fine.folded" alloc 5000 --event alloc --alloc-interval 65536 \
		--alloc-budget 0
	check fine 2 5
	interval fine 65536
	path fine copy

	# ---- a recording stopped twice for 0.4 s in its burst (first JDK): what was lapped weighs in
	if ((first)); then
		EV_STALL="400 400" ev_record stall "$FG_TMP/stall.folded" alloc 5000 --event alloc \
			--alloc-interval 65536 --alloc-budget 0
		check stall 2 5
		lost=$(ev_sum "$FG_TMP/stall.folded" "[lost before read]") want=0
		for t in $threads; do want=$((want + $(ev_truth stall "$t"))); done
		line=$(grep 'allocation stacks: ' "$FG_TMP/stall.err" || true)
		fg_log "$cfg stall: $line"
		# 0.8 s of a 5 s burst, less the ring's 0.1 s each time: ~12% lapped
		ev_need "stall: the bytes lost before read, of the truth" "$lost" "$want" 5
		[[ $line == *"(0 of them of unknown weight, 0 weights refused)"* ]] ||
			fg_fail "$cfg stall: lost copies of unknown weight: $line"
	fi

	# ---- the defaults ------------------------------------------------------------------------
	ev_record def "$FG_TMP/def.folded" alloc 7000 --event alloc --alloc-budget 0
	check def 4 10
	interval def 524288
	path def copy
	# the agent's measured cost (ALLOC_COST): samples of this ask, a cost per sample
	cost=$(grep 'allocation sampling cost' "$FG_TMP/def.err" || true)
	fg_log "$cfg def: $cost"
	n=$(sed -n 's/.* cost \([0-9.]*\) us of CPU per sample.*(\([0-9]*\) samples, .*/\2 \1/p' <<<"$cost")
	got=$(sed -n 's/.*: \([0-9]*\) allocation samples in .*/\1/p' "$FG_TMP/def.err")
	[[ -n $n ]] && N="${n% *}" US="${n#* }" GOT="$got" awk 'BEGIN { n = ENVIRON["N"] + 0
		us = ENVIRON["US"] + 0; got = ENVIRON["GOT"] + 0
		exit !(n > 0 && n <= got * 1.1 + 10 && us > 0 && us < 10000) }' ||
		fg_fail "$cfg def: the summary does not say what the $got samples cost: $cost"

	# ---- a cost budget moves the interval mid-recording: the totals hold ----------------------
	ev_record budget "$FG_TMP/budget.folded" alloc 8000 --event alloc --alloc-interval 65536 \
		--alloc-budget 10
	used=$(grep 'sampling intervals used' "$FG_TMP/budget.err" || true)
	fg_log "$cfg budget: $used"
	[[ $used == *"a cost budget of 10% of each JVM's CPU"* ]] ||
		fg_fail "$cfg budget: the summary does not say the budget: $used"
	# moved: 20 samples or more at another interval (a thread's first sample alone may stand
	# for an earlier recording's interval: one per thread)
	n=$(grep -o '[0-9]* bytes: [0-9]* samples' <<<"$used" | awk '$1 != 65536 && $3 >= 20' | wc -l)
	((n >= 1)) || fg_fail "$cfg budget: the interval never moved: $used"
	[[ $used =~ (: |; )65536\ bytes:\ [1-9] ]] ||
		fg_fail "$cfg budget: no samples at the interval asked: $used"
	check budget 4 10
	path budget copy

	# ---- --lines and --threads ---------------------------------------------------------------
	ev_record lines "$FG_TMP/lines.folded" alloc 2000 --event alloc --alloc-interval 65536 --lines \
		--threads 'fg-bytes|fg-strings'
	f=$FG_TMP/lines.folded
	other=$(awk -F';' '$1 != "fg-bytes" && $1 != "fg-strings"' "$f" | head -n 3)
	[[ -z $other ]] || fg_fail "$cfg: --threads 'fg-bytes|fg-strings' kept other threads: $other"
	n=$(ev_line "$src" 'ring\[i & \(RING - 1\)\] = new byte\[len\];')
	ev_need "--lines: fg-bytes bytes at AllocTruth::makeBytes:$n" \
		"$(ev_sum "$f" fg-bytes "AllocTruth::makeBytes:$n$j;[^;]*\$" 'byte[]')" "$(ev_sum "$f" fg-bytes)" 99
	(($(ev_sum "$f" fg-strings) > 0)) || fg_fail "$cfg: --threads left out fg-strings"

	# ---- pprof -------------------------------------------------------------------------------
	ev_record pprof "$FG_TMP/alloc$major.pb.gz" alloc 1000 --event alloc
	types=$(ev_pprof_types "$FG_TMP/alloc$major.pb.gz")
	fg_log "$cfg pprof sample types: $types"
	[[ $types == "alloc_objects/count alloc_space/bytes" ]] ||
		fg_fail "$cfg: the pprof sample types are '$types', not 'alloc_objects/count alloc_space/bytes'"
	grep -q 'AllocTruth::makeBytes' "$FG_TMP/alloc$major.pb.gz.raw" ||
		fg_fail "$cfg: the pprof profile has no AllocTruth::makeBytes"
	want=0
	for t in $threads; do want=$((want + $(ev_truth pprof "$t"))); done
	ev_near "pprof: alloc_space in all (a 1 s burst at the defaults: ~330 samples)" \
		"$(ev_pprof_total "$FG_TMP/alloc$major.pb.gz" alloc_space)" "$want" 25

	# ---- watch: rolling allocation profiles, top (once) -------------------------------------
	if ((first)); then
		first=0
		out=$FG_TMP/profiles
		ev_burst 20000 # allocating all along
		fg_watch_start --dir "$FG_SOCK_DIR" --profile-every 2s --event cpu,alloc --out "$out"
		fg_wait 5 grep -q 'rolling profiles every 2 s (cpu,alloc)' "$FG_WATCH_LOG" ||
			fg_fail "watch did not start both events: $(head -n 5 "$FG_WATCH_LOG")"
		# top asks the daemon for a JVM it serves: its agent has connected to the new watch.
		fg_wait 10 grep -q "connect: pid $FG_HOSTPID " "$FG_WATCH_LOG" ||
			fg_fail "the JVM's agent did not connect to watch: $(head -n 5 "$FG_WATCH_LOG")"
		"$FGCOLLECT" top --pid "$FG_HOSTPID" --ctl "$FG_CTL" --event alloc --threads 'fg-.*' \
			--interval 1 --count 2 --rows 50 >"$FG_TMP/top.out" 2>"$FG_TMP/top.err" ||
			{ cat "$FG_TMP/top.err" >&2; fg_fail "top --event alloc failed"; }
		grep -m1 'fgcollect top' "$FG_TMP/top.out" >&2 || true
		grep -q "^fgcollect top - PID $FG_HOSTPID - .* - event alloc" "$FG_TMP/top.out" ||
			fg_fail "top's header does not say the event: $(grep 'fgcollect top' "$FG_TMP/top.out" | head -n 1)"
		grep -q 'AllocTruth::makeBytes' "$FG_TMP/top.out" || fg_fail "top --event alloc does not list AllocTruth::makeBytes"
		enough() { (($(find "$out" -maxdepth 1 -name "*_${FG_HOSTPID}_*.alloc.folded" -size +0 | wc -l) >= 2)); }
		fg_wait 12 enough ||
			{ ls "$out" >&2; fg_fail "no 2 rolling allocation profiles within 12 s"; }
		fg_watch_stop_clean
		f=$(find "$out" -maxdepth 1 -name "*_${FG_HOSTPID}_*.alloc.folded" | sort | head -n 1)
		ev_need "watch: fg-bytes bytes in $(basename "$f") under makeBytes with byte[]" \
			"$(ev_sum "$f" fg-bytes "AllocTruth::makeBytes$j;[^;]*\$" 'byte[]')" "$(ev_sum "$f" fg-bytes)" 99
		ls "$out"/*"_${FG_HOSTPID}_"*.folded | grep -qv '\.alloc\.folded$' ||
			fg_fail "watch --event cpu,alloc wrote no cpu profile beside the allocation ones"
	fi
	fg_container_stop "$cur" || true
done
# ---- beside: GetStackTrace on the same JDK, the ring on Temurin 25, both at once ---------------
side_fine jvmti17 "JDK $(fg_jdk_major "$FG_DEFAULT_JDK") allocstack=jvmti" jvmti &
p1=$!
side_fine copy25 "JDK $(fg_jdk_major "$temurin") allocstack=copy" copy &
p2=$!
rc1=0 rc2=0
wait "$p1" || rc1=$?
wait "$p2" || rc2=$?
fg_container_stop jvmti17 || true
fg_container_stop copy25 || true
((rc1 == 0)) || fg_fail "allocstack=jvmti on JDK 17: its fine recording failed (above)"
((rc2 == 0)) || fg_fail "allocstack=copy on Temurin 25: its fine recording failed (above)"
fg_pass "allocation profiles match the JVM's own per-thread bytes"
