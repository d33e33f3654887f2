#!/bin/bash
# SPDX-License-Identifier: MIT
#
# image_bullseye.sh - the agent from this build in a Debian 11 image (glibc 2.31) with that
# image's own OpenJDK 11: the container runs on the image root's /usr (tests/images/jdkroot.sh,
# fgcontainer --root), as a JVM in a container built FROM debian:bullseye does.
#  - the JVM runs on the image's glibc 2.31 (its libc in the JVM's maps), starts with the agent
#    and connects to `fgcollect watch`, and its perf map gets Java names;
#  - `record` at its defaults on InterpChain (main -> ChainA.enter -> ChainB.relay ->
#    ChainC.pass -> ChainD.descend -> ChainE.spin, the leaf's loop compiled), with
#    -XX:+PreserveFramePointer: >= 99% of the main thread's samples hold the whole chain in
#    order, and >= 99% of all samples reached a thread root (the summary's count);
#  - the same without frame pointers is measured and printed, not checked.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init image_bullseye
fg_require_built
fg_java_jar

fg_image_root bullseye 11
glibc=$(fg_root_glibc "$FG_ROOT")
[[ $glibc == "glibc 2.31" ]] || fg_fail "the bullseye root has '$glibc', not glibc 2.31"

sock_dir=$FG_TMP/sock
mkdir -p "$sock_dir"
chmod 0755 "$sock_dir"
sock=$sock_dir/fgcollect.sock
noctl=$FG_TMP/no-daemon/ctl.sock # never another test's watch daemon

# record NAME: fgcollect record at its defaults on $FG_HOSTPID into $FG_TMP/NAME.folded.
record() {
	local name=$1
	"$FGCOLLECT" record --pid "$FG_HOSTPID" --socket "$sock" --ctl "$noctl" --duration 6 \
		-o "$FG_TMP/$name.folded" 2>"$FG_TMP/$name.err" ||
		{ cat "$FG_TMP/$name.err" >&2; fg_fail "$name: record failed"; }
	cat "$FG_TMP/$name.err" >&2
}

# chain FILE: "MAIN CHAIN" sample counts: the main thread's (JavaMain), and of them those with
# the whole chain in order (the leaf compiled or, before its loop is, interpreted).
chain_re='InterpChain::main_\[0\];ChainA::enter_\[0\];ChainB::relay_\[0\];ChainC::pass_\[0\];ChainD::descend_\[0\];ChainE::spin_\[[0j]\]'
chain() {
	re="$chain_re" awk 'BEGIN { re = ENVIRON["re"] }
		{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s) }
		s ~ /;JavaMain;/ || s ~ /ChainE::spin/ { m += n; if (s ~ re) c += n }
		END { print m + 0, c + 0 }' "$1"
}

# rooted ERRFILE: the summary's stacks that reached a thread root, "PART ALL".
rooted() {
	sed -n 's/.*reached a thread root ([^)]*): [0-9.]*% (\([0-9]*\)\/\([0-9]*\)).*/\1 \2/p' "$1"
}

# ---- the JVM on glibc 2.31 with the agent, connected to watch, its map named ---------------
fg_watch_start --dir "$sock_dir"
fg_jvm_start fp InterpChain 90
fg_wait_log fp 60 'InterpChain ready'
grep -qE ' /(usr/)?lib/x86_64-linux-gnu/libc-2\.31\.so$' "/proc/$FG_HOSTPID/maps" ||
	fg_fail "the JVM does not run on the image's libc-2.31.so: $(grep -E 'libc[.-]' "/proc/$FG_HOSTPID/maps" | head -n 1)"
fg_wait 30 grep -qE "connect: pid $FG_HOSTPID " "$FG_WATCH_LOG" ||
	fg_fail "the agent in the Debian 11 JVM did not connect to watch"
fg_wait 30 fg_map_ok "$FG_HOSTPID" 'ChainE::spin' ||
	fg_fail "the map of the Debian 11 JVM has no ChainE::spin: $(head -n 3 "$(fg_map_path "$FG_HOSTPID")" 2>&1)"
fg_log "JDK 11 on $glibc: agent connected, map has $(fg_map_lines "$FG_HOSTPID") entries"
fg_watch_stop_clean

# ---- record with frame pointers: the whole chain, rooted --------------------------------------
sleep 2 # the leaf's loop is OSR-compiled within a second
record fp
read -r main whole < <(chain "$FG_TMP/fp.folded")
read -r part all < <(rooted "$FG_TMP/fp.err")
[[ -n ${all:-} ]] || fg_fail "no thread-root line in record's summary"
fg_log "JDK 11 on $glibc, PreserveFramePointer: chain $whole/$main, rooted $part/$all"
((main >= 40)) || fg_fail "only $main main-thread samples (a busy machine? expected up to ~600)"
if ((whole * 100 < main * 99)); then
	sort -t' ' -k2 -nr "$FG_TMP/fp.folded" | head -n 5 >&2
	fg_fail "the whole chain in only $whole of $main main-thread samples (< 99%)"
fi
((all >= 40 && part * 100 >= all * 99)) || fg_fail "only $part of $all samples reached a thread root (< 99%)"
fp_chain=$((whole * 100 / main)) fp_rooted=$((part * 100 / all))
fg_container_stop fp || true

# ---- without frame pointers: measured, not checked ------------------------------------------
FG_JVM_OPTS=(-XX:-PreserveFramePointer)
fg_jvm_start nofp InterpChain 60
FG_JVM_OPTS=()
fg_wait_log nofp 60 'InterpChain ready'
sleep 2
record nofp
read -r main whole < <(chain "$FG_TMP/nofp.folded")
read -r part all < <(rooted "$FG_TMP/nofp.err")
nofp="chain $whole/$main, rooted ${part:-?}/${all:-?}"
fg_log "JDK 11 on $glibc, no frame pointers (not checked): $nofp"
fg_container_stop nofp || true

fg_pass "Debian 11 ($glibc), OpenJDK 11 with this build's agent: connects, map named; with frame pointers chain $fp_chain%, rooted $fp_rooted%; without (not checked) $nofp"
