#!/bin/bash
# SPDX-License-Identifier: MIT
#
# watch_profiles.sh - `watch --profile-every` with two containers at once: a HotLoop labelled by
# OTEL_SERVICE_NAME=checkout and an InlineChain labelled by its main class. Every 2 s each JVM
# gets a folded, SVG and pprof profile whose file name, SVG title and index entry carry its
# service, container id, host PID and host name, with only its own Java frames. Retention
# (--keep-profiles 6) holds at every moment while profiles keep coming, then by bytes
# (--max-bytes) across a restart; maps stay current while the roller samples; each JVM's time
# view page is kept current and covers the intervals on disk.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init watch_profiles
fg_require_built
command -v go >/dev/null || fg_fail "go (golang-go) is not installed: needed for go tool pprof"

out=$FG_TMP/profiles
FG_CT_OPTS=(--env OTEL_SERVICE_NAME=checkout)
fg_jvm_start one HotLoop 90
p1=$FG_HOSTPID
FG_CT_OPTS=()
fg_jvm_start two InlineChain 90
p2=$FG_HOSTPID
c1=$(fg_container_cid one)
c2=$(fg_container_cid two)
fg_wait_log one 25 'HotLoop ready'
fg_wait_log two 25 'InlineChain ready'
fg_watch_start --profile-every 2s --out "$out" --pprof --keep-profiles 6 --host-name test-node
fg_wait 10 fg_map_ok "$p1" 'HotLoop::' || fg_fail "no map for pid $p1"
fg_wait 10 fg_map_ok "$p2" 'InlineChain::' || fg_fail "no map for pid $p2"

s1="_checkout_${c1:0:12}_${p1}_test-node"
s2="_InlineChain_${c2:0:12}_${p2}_test-node"
# 12 s: ~6 intervals x 2 JVMs = 12 sets for a directory that keeps 6; count them all along.
max=0
view1=$out/view$s1.html live_view=0
deadline=$(($(date +%s) + 12))
while (($(date +%s) < deadline)); do
	n=$(find "$out" -maxdepth 1 -name '*.svg' | wc -l)
	((n > max)) && max=$n
	[[ -s $view1 ]] && live_view=1
	sleep 0.1
done
# The page thread runs at nice 19: on a machine whose CPUs are all busy (an ASan fgcollect
# beside another test) its first page can take longer than the 12 s; it must come while watch runs.
deadline=$(($(date +%s) + 60))
while ((!live_view && $(date +%s) < deadline)); do
	[[ -s $view1 ]] && live_view=1
	sleep 0.2
done
n1=$(find "$out" -maxdepth 1 -name "*$s1.svg" | wc -l)
n2=$(find "$out" -maxdepth 1 -name "*$s2.svg" | wc -l)
fg_log "sets on disk: $n1 of checkout (pid $p1), $n2 of InlineChain (pid $p2); at most $max at once"
((max <= 6)) || fg_fail "retention broken: $max SVGs at once with --keep-profiles 6"
((n1 >= 2 && n2 >= 2)) || { ls "$out" >&2; fg_fail "expected profiles of both JVMs (got $n1 and $n2)"; }
# the maps kept being written while the roller sampled (a JIT event still reaches the map)
fg_map_ok "$p1" 'HotLoop::' || fg_fail "the map of pid $p1 broke while profiling"
fg_watch_stop_clean
grep -E 'profiles: [0-9]+ intervals' "$FG_WATCH_LOG" >&2 || fg_fail "no profiles summary line"
removed=$(sed -n 's/.* (\([0-9]*\) removed by retention.*/\1/p' "$FG_WATCH_LOG")
((removed >= 4)) || fg_fail "retention removed only '$removed' sets"

# Each JVM's time view page was there while watch ran, and now covers the intervals on disk:
# its columns run from the oldest profile kept to the newest. The columns are a grid of the
# 2 s interval from the oldest: a profile that started a second late (a slow collector) is in
# the column nearest its start, so the last column is within a second of the newest.
((live_view)) || fg_fail "no time view page $view1 while watch ran"
[[ -s $out/view$s2.html ]] || fg_fail "no time view page of InlineChain"
unix_of() { local b=${1##*/}; date -u -d "${b:0:8} ${b:9:2}:${b:11:2}:${b:13:2}" +%s; }
cols=$(sed -n 's/.*"columns":\[\([0-9,]*\)\].*/\1/p' "$view1")
oldest=$(unix_of "$(find "$out" -maxdepth 1 -name "*$s1.folded" | sort | head -n 1)")
newest=$(unix_of "$(find "$out" -maxdepth 1 -name "*$s1.folded" | sort | tail -n 1)")
fg_log "checkout's time view page: columns $cols (profiles on disk from $oldest to $newest)"
last=${cols##*,}
[[ ${cols%%,*} == "$oldest" && -n $last ]] && ((last - newest <= 1 && newest - last <= 1)) ||
	fg_fail "the time view page's columns ($cols) do not run from $oldest to $newest"

# Each JVM's newest profile: labels in name, title and index; only its own frames.
f1=$(find "$out" -maxdepth 1 -name "*$s1.folded" | sort | tail -n 1)
f2=$(find "$out" -maxdepth 1 -name "*$s2.folded" | sort | tail -n 1)
[[ -s ${f1%.folded}.svg && -s ${f1%.folded}.pb.gz ]] || fg_fail "incomplete set ${f1%.folded}"
grep -q 'HotLoop::[a-z]*_\[[ji]\]' "$f1" || fg_fail "checkout's profile has no HotLoop frames"
! grep -q 'InlineChain::' "$f1" || fg_fail "checkout's profile has the other JVM's frames"
grep -q 'InlineChain::[a-z]*_\[[ji]\]' "$f2" || fg_fail "InlineChain's profile has no InlineChain frames"
! grep -q 'HotLoop::' "$f2" || fg_fail "InlineChain's profile has the other JVM's frames"
grep -q "CPU: checkout | container ${c1:0:12} | PID $p1 | host test-node" "${f1%.folded}.svg" ||
	fg_fail "SVG title of $f1 lacks its labels"
grep -q "CPU: InlineChain | container ${c2:0:12} | PID $p2 | host test-node" "${f2%.folded}.svg" ||
	fg_fail "SVG title of $f2 lacks its labels"
idx=$out/index.html
for c in "$c1" "$c2"; do
	grep -q "data-container=\"${c:0:12}\"" "$idx" || fg_fail "index.html has no section for container $c"
	grep -q "<code>$c</code>" "$idx" || fg_fail "index.html does not name container $c"
done
grep -q "<td class=\"service\">checkout</td><td class=\"event\">cpu</td><td class=\"pid\">$p1</td><td class=\"host\">test-node</td>" "$idx" ||
	fg_fail "index.html lacks checkout's labels"
grep -q "href=\"$(basename "${f1%.folded}").svg\"" "$idx" || fg_fail "index.html does not link $f1's SVG"
# rows newest first within the first section
awk '/<section/ {s++} s == 1 && /data-stem=/ {match($0, /data-stem="[^"]*"/); print substr($0, RSTART + 11, 16)}' "$idx" >"$FG_TMP/order"
sort -r -c "$FG_TMP/order" || fg_fail "index.html rows are not newest first: $(tr '\n' ' ' <"$FG_TMP/order")"
export HOME=$FG_TMP GOCACHE=$FG_TMP/gocache GOFLAGS=-mod=mod GOTOOLCHAIN=local
go tool pprof -top "${f1%.folded}.pb.gz" >"$FG_TMP/top.txt" 2>"$FG_TMP/pprof.err" ||
	{ cat "$FG_TMP/pprof.err" >&2; fg_fail "go tool pprof cannot read ${f1%.folded}.pb.gz"; }
grep -q 'HotLoop::' "$FG_TMP/top.txt" || fg_fail "go tool pprof -top lists no HotLoop method"
go tool pprof -comments "${f1%.folded}.pb.gz" >"$FG_TMP/comments.txt" 2>&1 || fg_fail "go tool pprof -comments failed"
for want in service=checkout "container_id=$c1" "host_pid=$p1" hostname=test-node; do
	grep -qx -- "$want" "$FG_TMP/comments.txt" || fg_fail "the pprof file lacks the comment $want: $(cat "$FG_TMP/comments.txt")"
done

# Retention by bytes: a restart with --max-bytes below what is there trims at once, oldest first.
newest=$(find "$out" -maxdepth 1 -name '*.svg' | sort | tail -n 1)
fg_watch_start --profile-every 60s --out "$out" --max-bytes 64k --host-name test-node
fg_wait 5 grep -q 'rolling profiles every' "$FG_WATCH_LOG" || fg_fail "watch did not start profiles"
bytes=$(find "$out" -maxdepth 1 \( -name '*.svg' -o -name '*.folded' -o -name '*.pb.gz' \) -printf '%s\n' | awk '{s += $1} END {print s + 0}')
fg_log "after the restart with --max-bytes 64k: $bytes bytes"
((bytes <= 65536)) || fg_fail "retention by bytes broken: $bytes bytes > 64 KiB"
[[ -e $newest ]] || fg_fail "retention removed the newest set $newest before older ones"
fg_watch_stop_clean
fg_pass "two containers profiled every 2 s with their labels and time view pages; retention held (max $max sets at once, $removed removed; $bytes bytes under 64 KiB)"
