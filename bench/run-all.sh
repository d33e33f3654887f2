#!/bin/sh
# Run every benchmark (bench/<area>.sh BUILD_DIR) and print their figures.
# Benchmarks print ratios against baselines measured in the same run; nothing here asserts time.
set -u
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
status=0
for b in "$here"/*.sh; do
	[ "$(basename "$b")" = run-all.sh ] && continue
	echo "=== $(basename "$b" .sh)"
	"$b" "$build" || { echo "!!! $(basename "$b") failed (exit $?)"; status=1; }
	echo
done
exit $status
