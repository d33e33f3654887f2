#!/bin/bash
# SPDX-License-Identifier: MIT
#
# demo_diff - `make demo`'s first part in its short mode (1 s warm-up, 3 s per recording; the
# second part is tests/e2e/demo_db.sh): the two implementations of PrimeService's endpoint
# are profiled, both flame graphs and the differential one are written, and the printed summary names the biggest difference as the
# folded data show it: trial division's frames lose the most share to the sieve; and the time
# view page of the service under a load step is written and printed.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init demo_diff
fg_require_built
out=$FG_TMP/demo
FG_DEMO_PARTS=primes FG_DEMO_OUT=$out FG_DEMO_SHORT=1 FG_DEMO_SECONDS=3 "$FG_SOURCE_DIR/scripts/demo.sh" "$FG_BUILD_DIR" \
	>"$FG_TMP/demo.out" 2>"$FG_TMP/demo.err" ||
	{ cat "$FG_TMP/demo.err" "$FG_TMP/demo.out" >&2; fg_fail "scripts/demo.sh failed"; }
cat "$FG_TMP/demo.out" >&2
for f in primes.svg primes-sieve.svg primes-diff.svg primes-diff-negated.svg primes-diff.folded primes-timeview.html; do
	[[ -s $out/$f ]] || fg_fail "the demo wrote no $out/$f"
	grep -qF "$out/$f" "$FG_TMP/demo.out" || fg_fail "the demo did not print the path of $f"
done
for f in primes.svg primes-sieve.svg primes-diff.svg primes-diff-negated.svg; do
	python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$out/$f" ||
		fg_fail "$out/$f is not well-formed XML"
done
line=$(grep '^  biggest difference: ' "$FG_TMP/demo.out") || fg_fail "no summary line"
frame=$(sed -E 's/^  biggest difference: (.*): [0-9.]+% of samples with trial.*/\1/' <<<"$line")
read -r pa pb < <(sed -E 's/.*: ([0-9.]+)% of samples with trial division, ([0-9.]+)% with the sieve.*/\1 \2/' <<<"$line")
# Recompute from the two runs' stacks as `diff --fold --folded` made them comparable ("stack A
# B" lines): the named frame's shares must be what the summary says.
share() { # FILE FRAME COL: inclusive share (%) of FRAME in FILE's A (COL 1) or B (COL 0) counts
	LC_ALL=C fr="$2" col="$3" awk 'BEGIN { fr = ENVIRON["fr"]; col = ENVIRON["col"] + 0 } {
		c = $(NF - col); st = $0; sub(/ [^ ]+ [^ ]+$/, "", st)
		t += c; n = split(st, f, ";"); for (i = 1; i <= n; i++) if (f[i] == fr) { m += c; break }
	} END { printf "%.1f\n", t ? 100 * m / t : -1 }' "$1"
}
near() { a="$1" b="$2" awk 'BEGIN { a = ENVIRON["a"]; b = ENVIRON["b"]; d = a - b; exit !(d <= 0.05 && d >= -0.05) }'; }
s_a=$(share "$out/primes-diff.folded" "$frame" 1)
s_b=$(share "$out/primes-diff.folded" "$frame" 0)
near "$s_a" "$pa" || fg_fail "summary says $frame is $pa% of the trial run; primes-diff.folded says $s_a%"
near "$s_b" "$pb" || fg_fail "summary says $frame is $pb% of the sieve run; primes-diff.folded says $s_b%"
# The comparable stacks are the recorded ones, only renamed: same samples in each run, and the
# frame-type suffixes and root numbers folded.
col=1
for n in primes primes-sieve; do
	[[ $(awk '{ t += $NF } END { print t }' "$out/$n.folded") == $(c=$col awk 'BEGIN { c = ENVIRON["c"] + 0 } { t += $(NF - c) } END { print t }' "$out/primes-diff.folded") ]] ||
		fg_fail "primes-diff.folded does not hold the samples of $n.folded"
	col=0
done
! grep -qE '_\[[ji0]\][; ]' "$out/primes-diff.folded" || fg_fail "diff --fold left a _[j], _[i] or _[0] suffix"
# The time view under the load step: a page with its countings and a column per second.
grep -q 'id="fg-meta"' "$out/primes-timeview.html" || fg_fail "primes-timeview.html is no time view page"
grep -qE '"ncols":([5-9]|1[0-3]),' "$out/primes-timeview.html" || fg_fail "primes-timeview.html does not span most of the 12 s recorded"
[[ $frame =~ ^PrimeService::(countPrimes|isPrime)$ ]] ||
	fg_fail "the biggest difference should be trial division's frame, not '$frame'"
grep -qE "(^|;)${frame}_\[[ji0]\][; ]" "$out/primes.folded" || fg_fail "$frame is not a Java frame of primes.folded"
a="$pa" b="$pb" awk 'BEGIN { a = ENVIRON["a"]; b = ENVIRON["b"]; exit !(a - b >= 30) }' ||
	fg_fail "trial division should lose >= 30 points of share to the sieve ($pa% -> $pb%)"
fg_pass "$line"
