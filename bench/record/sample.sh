#!/bin/sh
# Sampling overhead at 99 Hz and 999 Hz on a CPU-bound 2-thread workload's wall time, against
# an unsampled baseline measured in the same run (interleaved repetitions, medians).
#   bench/record/sample.sh BUILD_DIR        (FG_BENCH_QUICK=1 for a short run)
set -eu
BUILD=${1:?usage: bench/record/sample.sh BUILD_DIR}
BIN=$BUILD/bench/fg_bench_sample
if [ ! -x "$BIN" ]; then
	echo "bench/record/sample.sh: $BIN not built (cmake --build $BUILD --target fg_bench_sample)" >&2
	exit 1
fi
echo "== sampling overhead (bench/record/sample.sh)"
if [ "${FG_BENCH_QUICK:-0}" = 1 ]; then
	exec "$BIN" --reps 3 --work 200
fi
exec "$BIN" --reps 9 --work 1000
