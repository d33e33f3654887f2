#!/bin/sh
# SPDX-License-Identifier: MIT
# build_configs.sh SOURCE_DIR WORK_DIR [CMAKE_ARG...] - the build a packager runs:
#   cmake -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF
# must configure without looking for cmocka, build exactly libfgagent.so and fgcollect (no test
# binaries, no benchmarks), and compile warning-free at -O3 (FG_WERROR=ON here; a packager's
# build leaves it OFF). WORK_DIR is kept between runs, so a rerun only rebuilds what changed.
set -eu
src=${1:?usage: build_configs.sh SOURCE_DIR WORK_DIR [CMAKE_ARG...]}
work=${2:?usage: build_configs.sh SOURCE_DIR WORK_DIR [CMAKE_ARG...]}
shift 2
dir=$work/release-notest

fail() {
	echo "build_configs: FAIL: $*" >&2
	exit 1
}

mkdir -p "$dir"
cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DFG_WERROR=ON \
	"$@" >"$dir.configure.log" 2>&1 || {
	cat "$dir.configure.log" >&2
	fail "Release with BUILD_TESTING=OFF does not configure"
}
grep -qi cmocka "$dir/CMakeCache.txt" && fail "BUILD_TESTING=OFF still looks for cmocka"
cmake --build "$dir" -j2 >"$dir.build.log" 2>&1 || {
	grep -E -B2 -A8 'error|warning' "$dir.build.log" | head -n 80 >&2
	fail "Release with BUILD_TESTING=OFF does not build (log: $dir.build.log)"
}
# What `all` built: the two binaries and nothing else that runs.
built=$(find "$dir" -type f \( -name '*.so' -o -perm -u+x \) ! -path '*/CMakeFiles/*' \
	-printf '%f\n' | sort | tr '\n' ' ')
[ "$built" = "fgcollect libfgagent.so " ] ||
	fail "BUILD_TESTING=OFF built '$built', expected 'fgcollect libfgagent.so '"
n=$(ctest --test-dir "$dir" -N | sed -n 's/^Total Tests: //p')
[ "$n" = 0 ] || fail "BUILD_TESTING=OFF registered $n tests"
"$dir/collector/fgcollect" --version >/dev/null || fail "the Release fgcollect does not run"
echo "build_configs: Release, BUILD_TESTING=OFF: fgcollect and libfgagent.so only, no cmocka, -Werror clean"
