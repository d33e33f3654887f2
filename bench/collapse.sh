#!/bin/sh
# collapse.sh BUILD_DIR - `fgcollect collapse --all` against FlameGraph's stackcollapse-perf.pl
# on generated Java-like `perf script` text, in the same run: wall time, ratio, throughput,
# peak RSS, and whether the outputs are byte-identical.
#
#   FLAMEGRAPH_DIR   FlameGraph checkout (default /work/FlameGraph); without it, no baseline
#   COLLAPSE_CASES   "MB:STACKS ..." inputs (default "25:10000 250:100000"; depths 20-80)
#   TMPDIR           where the inputs go (needs ~2x the largest case)
set -eu
build=${1:?usage: bench/collapse.sh BUILD_DIR}
fg=$build/collector/fgcollect
gen=$build/bench/collapse-gen
fgdir=${FLAMEGRAPH_DIR:-/work/FlameGraph}
cases=${COLLAPSE_CASES:-25:10000 250:100000}
[ -x "$fg" ] && [ -x "$gen" ] || { echo "collapse bench: build fgcollect and collapse-gen first" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fg-collapse-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# run OUT CMD... -> prints "SECONDS MAXRSS_KB"
run() {
	out=$1
	shift
	/usr/bin/time -f "%e %M" -o "$tmp/time" "$@" >"$out" 2>/dev/null
	cat "$tmp/time"
}

baseline=yes
if [ ! -f "$fgdir/stackcollapse-perf.pl" ]; then
	baseline=no
	echo "collapse bench: $fgdir/stackcollapse-perf.pl not found: baseline unavailable (set FLAMEGRAPH_DIR)"
fi

for c in $cases; do
	mb=${c%%:*}
	stacks=${c#*:}
	"$gen" "$mb" "$stacks" >"$tmp/in.txt"
	bytes=$(stat -c %s "$tmp/in.txt")
	set -- $(run "$tmp/ours.folded" "$fg" collapse --all "$tmp/in.txt")
	ours_s=$1
	ours_kb=$2
	uniq=$(wc -l <"$tmp/ours.folded")
	echo "collapse ${mb} MB perf script, ${stacks} stack paths (depth 20-80) -> ${uniq} folded stacks"
	awk -v s="$ours_s" -v kb="$ours_kb" -v b="$bytes" 'BEGIN {
		if (s < 0.01) s = 0.01
		printf "  fgcollect collapse --all: %7.2f s  %8.1f MB/s  peak RSS %6.1f MB (%.2fx input)\n",
		       s, b / 1048576 / s, kb / 1024, kb * 1024 / b }'
	if [ $baseline = yes ]; then
		set -- $(run "$tmp/perl.folded" perl "$fgdir/stackcollapse-perf.pl" --all "$tmp/in.txt")
		perl_s=$1
		perl_kb=$2
		if cmp -s "$tmp/ours.folded" "$tmp/perl.folded"; then same=identical; else same=DIFFERENT; fi
		awk -v s="$perl_s" -v kb="$perl_kb" -v b="$bytes" -v o="$ours_s" -v same="$same" 'BEGIN {
			if (o < 0.01) o = 0.01
			printf "  stackcollapse-perf.pl --all: %5.2f s  %8.1f MB/s  peak RSS %6.1f MB\n",
			       s, b / 1048576 / s, kb / 1024
			printf "  speedup %.1fx (target >= 20x); outputs %s\n", s / o, same }'
	fi
	rm -f "$tmp/in.txt" "$tmp/ours.folded" "$tmp/perl.folded"
done
