#!/bin/sh
# symbol.sh BUILD_DIR - native and kernel symbolization throughput (frames/s, one core, cached
# path) on address mixes of libjvm.so + libc + kernel, against dladdr() measured in the same
# run, plus the cold cost of loading the symbol tables. Target: >= 1M frames/s per core.
#
#   LIBJVM   libjvm.so to load (default: the Debian JDK 17's)
#   FRAMES   frames per mix (default 4000000)
set -eu
build=${1:?usage: bench/symbolize/symbol.sh BUILD_DIR}
bin=$build/bench/bench_symbol
[ -x "$bin" ] || { echo "symbol bench: build the bench_symbol target first" >&2; exit 1; }
jvm=${LIBJVM:-/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so}
[ -f "$jvm" ] || { echo "symbol bench: $jvm not found (set LIBJVM)" >&2; exit 1; }
exec "$bin" "$jvm" "${FRAMES:-4000000}"
