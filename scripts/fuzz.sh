#!/bin/bash
# Run the libFuzzer targets (fuzz/fuzz_*.c, ASan+UBSan) for a set time each and print, per target,
# the executions and libFuzzer's final coverage (cov: edges, ft: features).
#
#   scripts/fuzz.sh [--build] [--no-run] [--dir DIR] [--seconds N] [--runs N] [--seed N]
#                   [--timeout S] [--jobs N] [--seeds] [TARGET...]
#     --build    configure DIR with clang (FG_FUZZ=ON) and build the targets first
#     --no-run   stop after --build
#     --dir      the fuzz build tree (default build-fuzz)
#     --seconds  time per target (default $FUZZ_SECONDS, else 60)
#     --runs     stop each target after N executions instead (--seconds is then no limit)
#     --seed     libFuzzer's random seed (default: a new one each run); with a fixed seed a
#                run repeats the same mutations, so a gate finds nothing a longer run of that
#                seed did not find first
#     --timeout  seconds one input may take before it counts as a finding (default 10; raise
#                it for runs at a low priority on a busy machine, where a starved run is slow)
#     --jobs     targets run at once (default $FUZZ_JOBS, else 1)
#     --seeds    write the structured seeds (fuzz_mkseeds) into fuzz/corpus and stop
#     TARGET     names without fuzz_ (default: all)
#
# Each target starts from fuzz/corpus/<corpus> (kept small, in the repository; plus
# fuzz/corpus/<target> when the corpus is shared) and adds what it
# finds to DIR/corpus/<target>; a crash, leak or sanitizer report leaves its input in
# DIR/artifacts/ and makes the script fail. Exit status: 0 when no target failed.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
dir=build-fuzz
seconds=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-1}
build=0
seeds=0
norun=0
targets=()
seed_opt=()
runs=0
timeout=10
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=1 ;;
	--no-run) norun=1 ;;
	--dir) dir=$2; shift ;;
	--seconds) seconds=$2; shift ;;
	--jobs) jobs=$2; shift ;;
	--seed) seed_opt=(-seed="$2"); shift ;;
	--runs) runs=$2; shift ;;
	--timeout) timeout=$2; shift ;;
	--seeds) seeds=1 ;;
	-h | --help) sed -n '2,24p' "$0"; exit 0 ;;
	-*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
	*) targets+=("$1") ;;
	esac
	shift
done

all=(fgproto fgevents ingest ctl_frame rxchan wantfile procmaps elfsym elfcfi perfring collapse folded
	interp vmstack)
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")

# The seed corpus of a target (the ELF readers share theirs).
corpus_of() {
	case $1 in
	elfsym | elfcfi) echo elf ;;
	*) echo "$1" ;;
	esac
}

if [ $build -eq 1 ]; then
	CC=clang CXX=clang++ cmake -S "$here" -B "$dir" -DFG_FUZZ=ON -DFG_E2E=OFF -DBUILD_TESTING=OFF \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 1
	cmake --build "$dir" -j"${JOBS:-2}" --target fuzz_targets >/dev/null || {
		echo "fuzz.sh: the fuzz targets do not build (cmake --build $dir --target fuzz_targets)" >&2
		exit 1
	}
fi
[ $norun -eq 1 ] && exit 0
if [ $seeds -eq 1 ]; then
	exec "$dir/fuzz/fuzz_mkseeds" "$here/fuzz/corpus"
fi

mkdir -p "$dir/corpus" "$dir/artifacts" "$dir/logs"
run_one() {
	local t=$1 bin=$dir/fuzz/fuzz_$1 log=$dir/logs/$1.log seed own
	seed=$here/fuzz/corpus/$(corpus_of "$1")
	own=()
	# a target sharing a corpus may keep inputs of its own too (e.g. fixed findings)
	[ "$(corpus_of "$1")" != "$1" ] && [ -d "$here/fuzz/corpus/$1" ] && own=("$here/fuzz/corpus/$1")
	if [ ! -x "$bin" ]; then
		echo "missing: $bin" >"$log"
		echo 99 >"$log.rc"
		return
	fi
	mkdir -p "$dir/corpus/$t"
	local limit=(-max_total_time="$seconds")
	[ "$runs" -gt 0 ] && limit=(-runs="$runs")
	"$bin" "${limit[@]}" -print_final_stats=1 -timeout="$timeout" -rss_limit_mb=2048 \
		"${seed_opt[@]}" -artifact_prefix="$dir/artifacts/$t-" "$dir/corpus/$t" "$seed" "${own[@]}" >"$log" 2>&1
	echo $? >"$log.rc"
}

running=0
for t in "${targets[@]}"; do
	run_one "$t" &
	running=$((running + 1))
	if [ $running -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

failed=0
printf '%-10s %12s %8s %6s %7s %7s  %s\n' target executions exec/s cov ft corpus result
for t in "${targets[@]}"; do
	log=$dir/logs/$t.log
	rc=$(cat "$log.rc" 2>/dev/null || echo 99)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
	corp=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$last")
	if [ "$rc" = 0 ]; then
		result=ok
	else
		result="FAILED (exit $rc; $log, $dir/artifacts/$t-*)"
		failed=1
	fi
	printf '%-10s %12s %8s %6s %7s %7s  %s\n' "$t" "${execs:--}" "${rate:--}" "${cov:--}" \
		"${ft:--}" "${corp:--}" "$result"
done
if [ $failed -ne 0 ]; then
	for t in "${targets[@]}"; do
		[ "$(cat "$dir/logs/$t.log.rc" 2>/dev/null)" = 0 ] && continue
		echo "---- $t" >&2
		grep -E -A25 '^==[0-9]+==ERROR|runtime error|^INFO: .*deadly|^==[0-9]+== ERROR' \
			"$dir/logs/$t.log" | head -40 >&2
	done
fi
exit $failed
