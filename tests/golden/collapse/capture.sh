#!/bin/sh
# capture.sh - how the real-JVM inputs of the collapse golden tests were captured (run as root;
# needs perf, a JDK 17 and the kernel's permission to sample). Not run by the tests: the
# captured texts are committed, gzip'd, next to this script.
#
#   jvm-nomap.perf.txt  perf script of a hot JVM, no /tmp/perf-<pid>.map (JIT frames unknown)
#   jvm-map.perf.txt    the same recording after `jcmd <pid> Compiler.perfmap`
#   jvm-map-pidtid.perf.txt  the same with -F comm,pid,tid,... (for --pid and --tid)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'kill "$jpid" 2>/dev/null || true; rm -rf "$tmp"' EXIT
javac -d "$tmp" "$here/Hot.java"
java -XX:+PreserveFramePointer -cp "$tmp" Hot 10 >/dev/null &
jpid=$!
sleep 1
rm -f "/tmp/perf-$jpid.map"
perf record -q -F 97 -g -p "$jpid" -o "$tmp/perf.data" -- sleep 3
perf script -i "$tmp/perf.data" >"$tmp/jvm-nomap.perf.txt"
jcmd "$jpid" Compiler.perfmap >/dev/null
perf script -i "$tmp/perf.data" >"$tmp/jvm-map.perf.txt"
perf script -i "$tmp/perf.data" -F comm,pid,tid,time,period,event,ip,sym,dso \
	>"$tmp/jvm-map-pidtid.perf.txt"
rm -f "/tmp/perf-$jpid.map"
gzip -9n <"$tmp/jvm-nomap.perf.txt" >"$here/jvm-nomap.perf.txt.gz"
gzip -9n <"$tmp/jvm-map.perf.txt" >"$here/jvm-map.perf.txt.gz"
gzip -9n <"$tmp/jvm-map-pidtid.perf.txt" >"$here/jvm-map-pidtid.perf.txt.gz"
