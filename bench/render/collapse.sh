#!/bin/sh
# collapse.sh BUILD_DIR - `fgcollect collapse --all` against FlameGraph's stackcollapse-perf.pl
# on generated Java-like `perf script` text, in the same run: wall time, ratio, throughput,
# peak RSS, and whether the outputs are byte-identical.
#
#   FLAMEGRAPH_DIR   FlameGraph checkout (default /work/FlameGraph); without it, no baseline
#   COLLAPSE_CASES   "MB:STACKS ..." inputs (default "25:10000 250:100000"; depths 20-80)
#   TMPDIR           where the inputs go (needs ~2x the largest case)
set -eu
build=${1:?usage: bench/render/collapse.sh BUILD_DIR}
fg=$build/collector/fgcollect
gen=$build/bench/collapse-gen
fgdir=${FLAMEGRAPH_DIR:-/work/FlameGraph}
cases=${COLLAPSE_CASES:-25:10000 250:100000}
[ -x "$fg" ] && [ -x "$gen" ] || { echo "collapse bench: build fgcollect and collapse-gen first" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fg-collapse-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# run OUT CMD... -> prints "WALL_S CPU_S MAXRSS_KB" (CPU = user + system: steadier than wall
# time on a shared machine)
run() {
	out=$1
	shift
	/usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$@" >"$out" 2>/dev/null
	awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$tmp/time"
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
	ours_cpu=$2
	ours_kb=$3
	uniq=$(wc -l <"$tmp/ours.folded")
	echo "collapse ${mb} MB perf script, ${stacks} stack paths (depth 20-80) -> ${uniq} folded stacks"
	s="$ours_s" cpu="$ours_cpu" kb="$ours_kb" b="$bytes" awk 'BEGIN { s = ENVIRON["s"]; cpu = ENVIRON["cpu"]; kb = ENVIRON["kb"]; b = ENVIRON["b"]
		if (s < 0.01) s = 0.01
		if (cpu < 0.01) cpu = 0.01
		printf "  fgcollect collapse --all:     %6.2f s wall %6.2f s CPU  %7.1f MB/s (CPU %7.1f)  peak RSS %6.1f MB (%.2fx input)\n",
		       s, cpu, b / 1048576 / s, b / 1048576 / cpu, kb / 1024, kb * 1024 / b }'
	if [ $baseline = yes ]; then
		set -- $(run "$tmp/perl.folded" perl "$fgdir/stackcollapse-perf.pl" --all "$tmp/in.txt")
		perl_s=$1
		perl_cpu=$2
		perl_kb=$3
		if cmp -s "$tmp/ours.folded" "$tmp/perl.folded"; then same=identical; else same=DIFFERENT; fi
		s="$perl_s" cpu="$perl_cpu" kb="$perl_kb" b="$bytes" o="$ours_s" ocpu="$ours_cpu" same="$same" awk 'BEGIN { s = ENVIRON["s"]; cpu = ENVIRON["cpu"]; kb = ENVIRON["kb"]; b = ENVIRON["b"]; o = ENVIRON["o"]; ocpu = ENVIRON["ocpu"]; same = ENVIRON["same"]
			if (o < 0.01) o = 0.01
			if (ocpu < 0.01) ocpu = 0.01
			printf "  stackcollapse-perf.pl --all: %6.2f s wall %6.2f s CPU  %7.1f MB/s (CPU %7.1f)  peak RSS %6.1f MB\n",
			       s, cpu, b / 1048576 / s, b / 1048576 / cpu, kb / 1024
			printf "  speedup %.1fx wall, %.1fx CPU (target >= 20x); outputs %s\n", s / o, cpu / ocpu, same }'
	fi
	rm -f "$tmp/in.txt" "$tmp/ours.folded" "$tmp/perl.folded"
done
