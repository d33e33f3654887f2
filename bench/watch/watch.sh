#!/bin/sh
# bench/watch/watch.sh BUILD_DIR - print the watch stage's figures (see bench/watch/watch.c).
set -eu
BUILD=${1:?usage: bench/watch/watch.sh BUILD_DIR}
BIN=$(find "$BUILD" -name bench_watch -type f -perm -u+x | head -n 1)
[ -n "$BIN" ] || { echo "bench/watch/watch.sh: bench_watch not built in $BUILD" >&2; exit 1; }
exec "$BIN"
