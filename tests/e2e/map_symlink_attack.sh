#!/bin/bash
# SPDX-License-Identifier: MIT
#
# map_symlink_attack - /tmp is world-writable (and fs.protected_symlinks may
# be 0), so anyone can plant /tmp/perf-<hostpid>.map before the root collector writes it.
#   JVM 1: a symlink to a precious file, which must stay byte-for-byte and inode intact;
#   JVM 2: a dangling symlink, whose target must never be created;
#   JVM 3: a hard link to a second precious file (same filesystem), which must stay intact.
# Each map must end up a regular file owned by root with the JVM's methods (a new inode, not
# the planted one), be rewritten again while the JVM compiles more (the victims still intact
# after that), and perf must name >= 95% of JVM 1's JIT frames.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init map_symlink_attack
fg_require_built

fg_sock_dir
# JVMs first (the attacker needs their host PIDs), the collector after the plants.
fg_jvm_start sym HotLoop 40
p1=$FG_HOSTPID
fg_jvm_start dangling InlineChain 40
p2=$FG_HOSTPID
fg_jvm_start hard PrimeService --seconds 40
p3=$FG_HOSTPID

victims=$FG_TMP/victims
mkdir -m 0755 "$victims"
printf 'precious: must never be truncated or rewritten\n%.0s' {1..50} >"$victims/precious"
cp "$victims/precious" "$victims/precious2"
sum1=$(sha256sum <"$victims/precious")
sum2=$(sha256sum <"$victims/precious2")
ino1=$(stat -c '%i %s %Y' "$victims/precious")
ino2=$(stat -c '%i %s %Y %h' "$victims/precious2")
for p in "$p1" "$p2" "$p3"; do rm -f "/tmp/perf-$p.map"; done
ln -s "$victims/precious" "/tmp/perf-$p1.map"
ln -s "$victims/created-by-collector" "/tmp/perf-$p2.map"
ln "$victims/precious2" "/tmp/perf-$p3.map"
planted=$(stat -c '%i' "/tmp/perf-$p1.map" "/tmp/perf-$p2.map" "/tmp/perf-$p3.map" | paste -sd' ')
fg_log "planted: perf-$p1.map -> precious, perf-$p2.map -> (dangling), perf-$p3.map == hard link of precious2 ($(sysctl -n fs.protected_symlinks 2>/dev/null || echo ?) protected_symlinks)"

fg_watch_start
regular() { # PID REGEX: the map is now a regular root-owned file with the JVM's methods
	local f
	f=$(fg_map_path "$1")
	[[ -f $f && ! -L $f && $(stat -c %u "$f") == 0 && $(stat -c %h "$f") == 1 ]] && fg_map_ok "$1" "$2"
}
fg_wait 15 regular "$p1" 'HotLoop::' || fg_fail "map of pid $p1 is not a regular file naming HotLoop:: ($(ls -l "/tmp/perf-$p1.map" 2>&1))"
fg_wait 15 regular "$p2" 'InlineChain::' || fg_fail "map of pid $p2 is not a regular file naming InlineChain:: ($(ls -l "/tmp/perf-$p2.map" 2>&1))"
fg_wait 15 regular "$p3" '::' || fg_fail "map of pid $p3 is not a regular file ($(ls -l "/tmp/perf-$p3.map" 2>&1))"
now=$(stat -c '%i' "/tmp/perf-$p1.map" "/tmp/perf-$p2.map" "/tmp/perf-$p3.map" | paste -sd' ')
read -r -a a <<<"$planted"
read -r -a b <<<"$now"
for i in 0 1 2; do
	[[ ${a[i]} != "${b[i]}" ]] || fg_fail "map $((i + 1)) still has the planted inode ${a[i]}"
done
# Later writes (appends or a rewrite under a new name) must go to the collector's own file too:
# wait for one more change of the inode, size or mtime of the maps of the two JVMs that keep
# compiling (InlineChain settles within a second), then check the victims. A JVM may have
# compiled all it will by then (a loaded machine starts the collector late): a restarted
# collector writes every map again from the agents' replay, so the check never waits on the JIT.
state() { stat -c '%i %s %y' "$(fg_map_path "$1")" 2>/dev/null; }
changed() { [[ $(state "$1") != "$2" ]]; }
s1=$(state "$p1") s3=$(state "$p3")
if ! fg_wait 10 changed "$p1" "$s1" || ! fg_wait 10 changed "$p3" "$s3"; then
	fg_log "no new code within 10 s: restarting the collector to have the maps written again"
	fg_watch_stop_clean
	fg_watch_start
fi
fg_wait 30 changed "$p1" "$s1" || fg_fail "map of pid $p1 not written again in 30 s"
fg_wait 30 changed "$p3" "$s3" || fg_fail "map of pid $p3 not written again in 30 s"
fg_log "maps written again after they replaced the plants: $s1 -> $(state "$p1"); $s3 -> $(state "$p3")"

[[ $(sha256sum <"$victims/precious") == "$sum1" && $(stat -c '%i %s %Y' "$victims/precious") == "$ino1" ]] ||
	fg_fail "the symlink target was modified"
[[ $(sha256sum <"$victims/precious2") == "$sum2" ]] || fg_fail "the hard-linked file was modified"
[[ $(stat -c '%i %s %Y' "$victims/precious2") == "${ino2% *}" ]] || fg_fail "the hard-linked file's inode/size/mtime changed"
[[ ! -e $victims/created-by-collector ]] || fg_fail "the collector created the dangling symlink's target"
[[ -z $(find "$victims" -newer "$FG_SOCK" -print -quit) ]] || fg_fail "something in the victims directory changed: $(ls -la "$victims")"

fg_expect_jit_named "$p1" 3 "$FG_TMP/perf" 'HotLoop::' 95
fg_pass "planted symlinks and hard link left intact; maps are regular files; perf named $FG_JIT_PCT% of JIT frames"
