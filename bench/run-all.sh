#!/bin/sh
# Run every benchmark (bench/<what it measures>/<name>.sh BUILD_DIR) and print their figures.
# Benchmarks print ratios against baselines measured in the same run; nothing here asserts time.
set -u
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
status=0
for b in "$here"/*/*.sh; do
	echo "=== $(basename "$(dirname "$b")")/$(basename "$b" .sh)"
	"$b" "$build" || { echo "!!! $(basename "$b") failed (exit $?)"; status=1; }
	echo
done
exit $status
