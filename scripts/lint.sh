#!/bin/sh
# lint.sh [BUILD_DIR] - the checks `make test` runs on the sources (ctest test `lint`):
#   1. formatting: every tracked C/C++ file is what clang-format (the tree's .clang-format)
#      makes of it;
#   2. cppcheck over every tracked C file but the fuzz targets, the BPF programs and the
#      skeleton calls;
#   3. clang-tidy over the shipped code (shared/, collector/, jvmti-agent/), with the compile
#      database of BUILD_DIR (default build), FG_LINT_JOBS processes at once (default 2); a
#      file found clean before with the same input is not analysed again (scripts/lint-tidy.py).
# Prints every finding; exits 1 if any check found anything, 2 if a tool is missing.
set -u
build=${1:-build}
jobs=${FG_LINT_JOBS:-2}
cd "$(dirname "$0")/.."
for tool in clang-format cppcheck clang-tidy python3; do
	command -v $tool >/dev/null || {
		echo "lint: $tool is not installed (scripts/install-deps.sh installs it)" >&2
		exit 2
	}
done
[ -f "$build/compile_commands.json" ] || {
	echo "lint: no $build/compile_commands.json: configure $build with CMake first" >&2
	exit 2
}
files=$(git ls-files '*.c' '*.h' '*.cpp') && [ -n "$files" ] || {
	echo "lint: git lists no C files here: lint runs in a git checkout of fgcollect" >&2
	exit 2
}
status=0

# shellcheck disable=SC2086 # file names from git have no spaces here
if ! clang-format --dry-run --Werror $files; then
	echo "lint: formatting differs from .clang-format (above); fix with: clang-format -i FILE" >&2
	status=1
fi

# BPF programs (*.bpf.c) are C for the BPF target, built by clang with -Wall -Wextra -Werror
# against libbpf's headers: neither cppcheck nor the host's compile database knows them. The
# calls into the generated skeleton (*_skel.c) are libbpf's code, not analysed either.
srcs=$(git ls-files '*.c' | grep -v '^fuzz/' | grep -v '\.bpf\.c$\|_skel\.c$')
# shellcheck disable=SC2046,SC2086
cppcheck --quiet --error-exitcode=1 -j "$jobs" --enable=warning,portability,performance \
	--std=c11 --inline-suppr --suppress=missingIncludeSystem \
	-I shared -I jvmti-agent $(for d in jvmti-agent/*/; do printf -- '-I %s -I %sinclude ' $d $d; done) \
	$(for d in collector/*/; do printf -- '-I %s -I %sinclude ' $d $d; done) \
	$srcs || {
	echo "lint: cppcheck findings (above)" >&2
	status=1
}

# clang-tidy through scripts/lint-tidy.py (the checks are there): a file whose input (its text,
# every header, the flags, the tools' versions) is that of a clean run before is not analysed
# again; a finding is never remembered (FG_LINT_CACHE: where, or "off").
git ls-files 'shared/*.c' 'collector/*.c' 'jvmti-agent/*.c' | grep -v '\.bpf\.c$\|_skel\.c$' |
	xargs -P "$jobs" -n 4 scripts/lint-tidy.py "$build" || {
	echo "lint: clang-tidy findings (above)" >&2
	status=1
}
[ $status -eq 0 ] && echo "lint: clean (clang-format, cppcheck, clang-tidy)"
exit $status
