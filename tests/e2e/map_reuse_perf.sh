#!/bin/bash
# SPDX-License-Identifier: MIT
#
# map_reuse_perf - the perf map stays exact when the code cache reuses addresses, although the
# collector appends new code to the map between compactions. ClassChurn runs generations of a
# class that are unloaded in turn; a small code cache makes later generations' code land on
# addresses freed by earlier ones. With `fgcollect watch` live:
#   - the map never has overlapping entries (linted every 100 ms during the whole run);
#   - reuse happened: a line of a later generation overlaps a line an earlier snapshot of the
#     map gave to an earlier generation (else the test proves nothing and fails);
#   - stock perf recording generation 5 names >= 90% of JIT frames, the hot method as
#     ChurnGen0005 in >= 50% of samples, and never as an earlier generation;
#   - watch appended (it compacted fewer times than it wrote the map).
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init map_reuse_perf
fg_require_built
fg_watch_start

FG_JVM_OPTS=(-XX:+UseSerialGC -XX:ReservedCodeCacheSize=4m -XX:-SegmentedCodeCache)
fg_jvm_start churn ClassChurn 6 4000
pid=$FG_HOSTPID
map=$(fg_map_path "$pid")

# Lint the map every 100 ms while the JVM runs; a copy of the first bad map is kept.
(
	while kill -0 "$pid" 2>/dev/null; do
		if [[ -f $map ]] && ! why=$(fg_map_lint "$map"); then
			cp "$map" "$FG_TMP/bad.map" 2>/dev/null || true
			echo "$why" >"$FG_TMP/lint.fail"
			exit 0
		fi
		sleep 0.1
	done
) &
linter=$!

for g in 1 2 3 4 5; do
	fg_wait_log churn 60 "ClassChurn gen $g start"
	sleep 1
	cp "$map" "$FG_TMP/gen$g.map"
done
fg_expect_jit_named "$pid" 1.5 "$FG_TMP/perf" 'ChurnGen0005::' 90
old=$(grep -cE 'ChurnGen000[1-4]::' "$FG_TMP/perf.script" || true)
((old == 0)) || {
	grep -m 5 -E 'ChurnGen000[1-4]::' "$FG_TMP/perf.script" >&2
	fg_fail "perf named $old frames during generation 5 after earlier generations (stale map lines)"
}

# Reuse: a ChurnGen0005 line overlapping a line of an earlier generation in an earlier snapshot.
reused=$(cat "$FG_TMP"/gen[1-4].map | LC_ALL=C now="$FG_TMP/gen5.map" awk 'BEGIN { now = ENVIRON["now"] }
	function hex(s,   i, v) {
		v = 0; s = tolower(s)
		for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}
	$3 ~ /^ChurnGen000[1-4]::/ { lo[n] = hex($1); hi[n] = lo[n] + hex($2); n++ }
	END {
		while ((getline l < now) > 0) {
			split(l, f, " ")
			if (f[3] !~ /^ChurnGen0005::/) continue
			a = hex(f[1]); e = a + hex(f[2])
			for (i = 0; i < n; i++) if (a < hi[i] && lo[i] < e) { r++; break }
		}
		print r + 0
	}')
fg_log "generation 5 lines on addresses an earlier generation had: $reused"
((reused >= 1)) || fg_fail "no code address was reused across generations: the test proves nothing"

fg_wait_log churn 60 'ClassChurn done'
wait "$linter" || true
[[ ! -e $FG_TMP/lint.fail ]] || fg_fail "the map had overlapping or malformed entries: $(cat "$FG_TMP/lint.fail")"
# Well formed at the end; no generation's name is required: every generation is unloaded
# before the end, and whether its lines are still there depends on when HotSpot posts the
# unload of its code (at the class unloading, or later when the code is flushed).
fg_map_ok "$pid" || fg_fail "final map: $(fg_map_lint "$map")"
fg_watch_stop_clean
read -r writes compactions < <(sed -nE 's/.* ([0-9]+) map writes \(([0-9]+) compactions.*/\1 \2/p' "$FG_WATCH_LOG")
fg_log "watch: $writes map writes, $compactions compactions"
((compactions >= 2 && compactions < writes)) || fg_fail "expected appends and several compactions, got $writes writes / $compactions compactions"
fg_pass "no overlap in the map through $reused reused addresses; perf named generation 5 ($FG_JIT_PCT% of JIT frames)"
