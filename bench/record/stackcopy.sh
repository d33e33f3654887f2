#!/bin/sh
# Cost of the user-stack copy (--stack-copy, with user registers) per sample at 8, 16 and 64 KiB,
# at 99 Hz and 999 Hz, against callchain-only sampling measured in the same run (interleaved
# repetitions, medians) on a CPU-bound 2-thread workload.
#   bench/record/stackcopy.sh BUILD_DIR        (FG_BENCH_QUICK=1 for a short run)
set -eu
BUILD=${1:?usage: bench/record/stackcopy.sh BUILD_DIR}
BIN=$BUILD/bench/fg_bench_sample
if [ ! -x "$BIN" ]; then
	echo "bench/record/stackcopy.sh: $BIN not built (cmake --build $BUILD --target fg_bench_sample)" >&2
	exit 1
fi
echo "== user-stack copy cost (bench/record/stackcopy.sh)"
if [ "${FG_BENCH_QUICK:-0}" = 1 ]; then
	exec "$BIN" --stack-copies --reps 3 --work 200
fi
exec "$BIN" --stack-copies --reps 7 --work 600
