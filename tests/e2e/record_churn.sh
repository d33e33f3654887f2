#!/bin/bash
# SPDX-License-Identifier: MIT
#
# record_churn.sh - time-exact JIT symbolization under class unloading and code address reuse.
#
# ClassChurn runs generations ChurnGen0001..N, each defined by its own class loader, hot for a
# fixed time, then unloaded; a small code cache (-XX:ReservedCodeCacheSize, one segment, serial
# GC) makes the next generations' code land on addresses freed by earlier ones. The test:
#   - proves the reuse happened, from record's own code-table history (--code-log): an address
#     that hosted one generation's method and later another generation's (else it is
#     meaningless and fails);
#   - every generation gets its fair share of the samples: >= 40% of what its CPU time would
#     get at the samples per CPU second of all the generations, less the samples record counts
#     as lost (a busy machine can leave its rings undrained longer than they hold; the kernel
#     counts what it drops). Each generation runs for the same wall time, but on a busy machine
#     one may get a fraction of the CPU another gets, so its share is weighed by the CPU time
#     ClassChurn measures on the thread that runs it;
#   - the generations' samples and the counted losses make up >= 85% of what their CPU time
#     is due at 499 Hz: a sample lost without being counted fails here, even when the counted
#     losses would cover it in the check above;
#   - fewer than 1% of the samples with JIT frames have an [unknown] JIT frame.
# ClassChurn starts generation 1 once the recording has the agent's tables (a gate file the
# test creates when record says so), so every generation runs inside the recording.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init record_churn
fg_require_built

GENS=6
FREQ=499
fg_sock_dir
gate=$FG_TMP/gate
mkdir -p "$gate"
chmod 0755 "$gate"
FG_CT_OPTS=(--bind "$gate:/gate:ro")
FG_JVM_OPTS=(-XX:+UseSerialGC -XX:ReservedCodeCacheSize=4m -XX:-SegmentedCodeCache)
fg_jvm_start churn ClassChurn "$GENS" 1200 /gate/go
FG_CT_OPTS=()

out=$FG_TMP/churn.folded
log=$FG_TMP/code.log
# Until the JVM exits (well within --duration): every generation is recorded.
"$FGCOLLECT" record --pid "$FG_HOSTPID" --freq "$FREQ" --duration 60 --socket "$FG_SOCK_DIR/fgcollect.sock" \
	-o "$out" --code-log "$log" 2>"$FG_TMP/record.err" &
rec=$!
# The gate opens once record has the agent's tables: JIT frames are named from then on.
fg_wait 40 grep -q 'agent sends its inline and line tables' "$FG_TMP/record.err" ||
	{ cat "$FG_TMP/record.err" >&2; fg_fail "record did not get the agent's tables within 40 s"; }
touch "$gate/go"
wait "$rec" || { cat "$FG_TMP/record.err" >&2; fg_fail "record failed"; }
cat "$FG_TMP/record.err" >&2
grep -q 'ClassChurn gate open' "${FG_CT_LOG[churn]}" || fg_fail "ClassChurn did not see its gate open"
grep -q 'ClassChurn done' "${FG_CT_LOG[churn]}" || fg_fail "ClassChurn did not finish"
unloaded=$(grep -c ' unloaded ' "${FG_CT_LOG[churn]}" || true)
((unloaded >= GENS - 1)) || fg_fail "only $unloaded of $GENS generations were unloaded by the JVM"

# Reuse: an address loaded by generation A, unloaded, then loaded by generation B != A.
reused=$(awk '$3 == "load" && $7 ~ /^ChurnGen[0-9]+::/ {
		g = substr($7, 9, 4)
		if (($4 in gen) && gen[$4] != g && unl[$4]) { n++; print $4, gen[$4], g > "/dev/stderr" }
		gen[$4] = g; unl[$4] = 0
	}
	$3 == "unload" && $7 ~ /^ChurnGen/ { unl[$4] = 1 }
	END { print n + 0 }' "$log" 2>"$FG_TMP/reuse.txt")
fg_log "code addresses reused by a later generation: $reused ($(head -n 3 "$FG_TMP/reuse.txt" | tr '\n' ' '))"
((reused >= 1)) || fg_fail "no code address was reused across generations: the test proves nothing"

# Per-generation samples and unknown JIT frames.
awk '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s)
	if (match(s, /ChurnGen[0-9]+::/)) c[substr(s, RSTART + 8, 4) + 0] += n
	if (s ~ /\[unknown\] \(jit\)/) u += n
	if (s ~ /_\[j\]|\[unknown\] \(jit\)/) j += n }
	END { for (g in c) print "gen", g, c[g]; print "jit", j + 0, u + 0 }' "$out" >"$FG_TMP/counts"
cat "$FG_TMP/counts" >&2
read -r _ jit unk < <(grep '^jit ' "$FG_TMP/counts")
((jit >= 200)) || fg_fail "only $jit samples with JIT frames"
((unk * 100 < jit)) || fg_fail "$unk of $jit JIT samples have an [unknown] JIT frame (>= 1%)"
# Each generation's CPU time (ns), from ClassChurn's own "gen N end T cpu NS" lines.
sed -n 's/^ClassChurn gen \([0-9]*\) end [0-9]* cpu \([0-9-]*\)$/cpu \1 \2/p' "${FG_CT_LOG[churn]}" >>"$FG_TMP/counts"
# fair: "G N CPU_MS EXPECTED" per generation and a last line "all SAMPLES CPU_MS", EXPECTED
# being what G's CPU time gets at the samples per CPU second of all the generations.
gens=$GENS awk '
	$1 == "gen" { n[$2] = $3 } $1 == "cpu" { c[$2] = $3 }
	END {
		for (g = 1; g <= ENVIRON["gens"]; g++) { sn += n[g]; sc += (c[g] > 0 ? c[g] : 0) }
		for (g = 1; g <= ENVIRON["gens"]; g++)
			printf "%d %d %s %.0f\n", g, n[g], (g in c) ? sprintf("%.0f", c[g] / 1e6) : "-",
				(sc > 0 && c[g] > 0) ? sn * c[g] / sc : -1
		printf "all %d %.0f\n", sn, sc / 1e6
	}' "$FG_TMP/counts" >"$FG_TMP/fair"
fg_log "per generation: samples, CPU ms, samples its CPU time is due: $(grep -v '^all' "$FG_TMP/fair" | tr '\n' ',')"
read -r _ total cpu_ms < <(grep '^all ' "$FG_TMP/fair")
# What record counts as not in the profile: events the kernel lost, samples it dropped.
lost=$(sed -n 's/^fgcollect record: [0-9]* samples in .*(\([0-9]*\) events lost), \([0-9]*\) dropped.*/\1 \2/p' \
	"$FG_TMP/record.err" | awk '{ print $1 + $2 }')
[[ -n $lost ]] || fg_fail "record's summary gives no count of lost events and dropped samples"
while read -r g n c due; do
	[[ $g == all ]] && continue
	((n > 0)) || fg_fail "generation $g got no samples"
	[[ $c != - ]] && ((due >= 0)) || fg_fail "ClassChurn gave no CPU time for generation $g (its end line)"
	(((n + lost) * 100 >= due * 40)) ||
		fg_fail "generation $g got $n samples (and $lost counted lost), under 40% of the $due its $c ms of CPU time are due ($total samples in $cpu_ms ms of the generations' CPU time)"
done <"$FG_TMP/fair"
# At 499 samples per CPU second (cpu-clock), the generations' CPU time is due this many.
nominal=$((cpu_ms * FREQ / 1000))
(((total + lost) * 100 >= nominal * 85)) ||
	fg_fail "the generations' $cpu_ms ms of CPU time got $total samples and $lost counted lost, under 85% of the $nominal they are due at $FREQ Hz: samples went missing uncounted"
fg_pass "$reused reused addresses; $GENS generations with fair shares of $total samples for their $cpu_ms ms of CPU time ($lost lost; $nominal due at $FREQ Hz); $unk/$jit JIT samples unknown"
