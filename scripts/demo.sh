#!/bin/bash
# SPDX-License-Identifier: MIT
#
# demo.sh BUILD_DIR - `make demo`: a flame graph with Java method names of a JVM in a container.
#
#   1. starts `fgcollect watch` on a temporary socket directory;
#   2. runs the bundled PrimeService (tests/java, JDK only) in a namespace container
#      (tests/harness/fgcontainer: own PID/mount/net namespaces, pivot_root, uid 4242, JDK at
#      /opt/jdk), as PID 1, with -XX:+PreserveFramePointer and the agent, under load from its
#      own client threads;
#   3. profiles it for FG_DEMO_SECONDS (default 5) and writes BUILD_DIR/demo/primes.svg;
#   4. prints where the SVG and the perf map are, and cleans up.
#
# Profiling (FG_DEMO_MODE, default auto):
#   record  fgcollect record --pid HOSTPID --duration S -o primes.folded   (its own sampler)
#   perf    the stock pipeline a user can run by hand:
#             perf record -F 99 -g -p HOSTPID -- sleep S
#             perf script -F comm,pid,tid,time,event,ip,sym,dso |
#                 fgcollect collapse --all > primes.folded
#   auto    record if this fgcollect has it, else perf.
# Rendering: fgcollect flamegraph --colors java primes.folded > primes.svg. Where a stage is
# missing from this build, the FlameGraph scripts (stackcollapse-perf.pl, flamegraph.pl) are
# used if they are on PATH, and the demo says so.
set -euo pipefail

BUILD_DIR=${1:?usage: scripts/demo.sh BUILD_DIR}
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
export FG_SOURCE_DIR=$SRC FG_BUILD_DIR=$BUILD_DIR
export FGCOLLECT=${FGCOLLECT:-$BUILD_DIR/collector/fgcollect}
export FGAGENT=${FGAGENT:-$BUILD_DIR/jvmti-agent/libfgagent.so}
SECONDS_TO_PROFILE=${FG_DEMO_SECONDS:-5}
MODE=${FG_DEMO_MODE:-auto}
OUT=$BUILD_DIR/demo

# shellcheck source=tests/harness/lib.sh
. "$SRC/tests/harness/lib.sh"
FG_KEEP_TMP=0
fg_init demo
fg_require_built
mkdir -p "$OUT"
rm -f "$OUT"/primes.* "$OUT"/perf-*.map

say() {
	printf 'demo: %s\n' "$*" >&2
}
# has CMD: this fgcollect implements the subcommand (placeholders answer --help with failure).
has() {
	"$FGCOLLECT" "$1" --help >/dev/null 2>&1
}

# 1. The host daemon, on a private socket directory (the containers' /var/run/fgcollect).
fg_watch_start
say "fgcollect watch is serving $FG_SOCK (log: $FG_WATCH_LOG)"

# 2. The sample service, under load, in its container.
fg_jvm_start primes PrimeService --load 2 --n 20000 --seconds $((SECONDS_TO_PROFILE + 60))
pid=$FG_HOSTPID
FG_CLEAN_FILES=() # the demo leaves /tmp/perf-<pid>.map in place for the user to look at
fg_wait_log primes 20 'PrimeService listening'
say "PrimeService runs in container 'primes' as PID 1, host PID $pid, uid 4242, JDK at /opt/jdk"
fg_wait 20 fg_map_ok "$pid" 'PrimeService::' ||
	fg_fail "no perf map naming PrimeService:: for host pid $pid after 20 s"
sleep 2 # let the load warm the JIT up
say "the collector keeps $(fg_map_path "$pid") current ($(fg_map_lines "$pid") entries)"

# 3. Profile.
profile_record() {
	say "profiling $SECONDS_TO_PROFILE s: fgcollect record --pid $pid"
	# The daemon's private control channel and socket (a default install needs neither).
	local -a rec=(--socket "$FG_SOCK")
	[[ -n $FG_CTL ]] && rec+=(--ctl "$FG_CTL")
	"$FGCOLLECT" record "${rec[@]}" --pid "$pid" --duration "$SECONDS_TO_PROFILE" \
		-o "$OUT/primes.folded" && [[ -s $OUT/primes.folded ]]
}
if [[ $MODE == auto ]]; then
	MODE=perf
	if has record; then
		if profile_record; then
			MODE=record
		else
			say "fgcollect record failed (above): falling back to the stock perf pipeline"
		fi
	fi
elif [[ $MODE == record ]]; then
	profile_record || fg_fail "fgcollect record --pid $pid failed"
fi
case $MODE in
record) ;;
perf)
	say "profiling $SECONDS_TO_PROFILE s with stock perf: perf record -F 99 -g -p $pid"
	perf record -q -F 99 -g -p "$pid" -o "$OUT/primes.perf.data" -- sleep "$SECONDS_TO_PROFILE" \
		>/dev/null 2>"$FG_TMP/perf-record.err" || { cat "$FG_TMP/perf-record.err" >&2; fg_fail "perf record failed"; }
	# No period field: stackcollapse-perf.pl (and fgcollect collapse) then count samples, not ns.
	perf script -i "$OUT/primes.perf.data" -F comm,pid,tid,time,event,ip,sym,dso \
		>"$OUT/primes.perf.txt" 2>/dev/null || fg_fail "perf script failed"
	if has collapse; then
		"$FGCOLLECT" collapse --all <"$OUT/primes.perf.txt" >"$OUT/primes.folded"
	elif command -v stackcollapse-perf.pl >/dev/null; then
		say "this fgcollect has no 'collapse' yet: using stackcollapse-perf.pl --all"
		stackcollapse-perf.pl --all <"$OUT/primes.perf.txt" >"$OUT/primes.folded"
	else
		fg_fail "this fgcollect has no 'collapse' and stackcollapse-perf.pl is not on PATH"
	fi
	;;
*) fg_fail "FG_DEMO_MODE must be auto, record or perf, not '$MODE'" ;;
esac
[[ -s $OUT/primes.folded ]] || fg_fail "no stacks collected from pid $pid"

# 4. Render.
title="PrimeService in a container (host PID $pid)"
if has flamegraph; then
	"$FGCOLLECT" flamegraph --title "$title" --colors java "$OUT/primes.folded" >"$OUT/primes.svg"
elif command -v flamegraph.pl >/dev/null; then
	say "this fgcollect has no 'flamegraph' yet: using flamegraph.pl --color=java"
	flamegraph.pl --title "$title" --color=java "$OUT/primes.folded" >"$OUT/primes.svg"
else
	fg_fail "this fgcollect has no 'flamegraph' and flamegraph.pl is not on PATH"
fi
cp "$(fg_map_path "$pid")" "$OUT/perf-$pid.map"

total=$(awk '{ n += $NF } END { print n + 0 }' "$OUT/primes.folded")
java_pct=$(awk '/PrimeService::/ { j += $NF } { n += $NF } END { print (n ? int(j * 100 / n) : 0) }' "$OUT/primes.folded")
# C2 inlines isPrime into countPrimes: stock perf shows countPrimes, fgcollect record both.
grep -qE 'PrimeService::(countPrimes|isPrime)' "$OUT/primes.svg" ||
	fg_fail "the flame graph does not name PrimeService::countPrimes or ::isPrime"
# The request path above the hot method is interpreted code (the executor, the HTTP handler,
# PrimeService::primes): `record` names it from stack copies; stock perf can only say Interpreter.
anon=$(awk '$0 ~ /PrimeService::(countPrimes|isPrime)/ && $0 ~ /(^|;)Interpreter;/ { n += $NF } END { print n + 0 }' "$OUT/primes.folded")
if [[ $MODE == record ]]; then
	((anon == 0)) || fg_fail "$anon samples have an anonymous Interpreter frame above the hot method"
	grep -qE '_\[0\];.*PrimeService::(countPrimes|isPrime)' "$OUT/primes.folded" ||
		fg_fail "no interpreted (_[0]) frame named on the request path above the hot method"
	path_note="the request path above it named (interpreted frames _[0]), no anonymous Interpreter frame"
else
	path_note="$anon of them under anonymous Interpreter frames (stock perf cannot name interpreted code)"
fi
fg_container_stop primes || true
fg_watch_stop || true

cat <<EOF
fgcollect demo ($MODE pipeline): $total samples, $java_pct% of them in PrimeService:: methods,
  $path_note
  flame graph:    $OUT/primes.svg
  folded stacks:  $OUT/primes.folded
  perf map:       $(fg_map_path "$pid") (written by fgcollect watch; a copy in $OUT/perf-$pid.map)
Open the SVG in a browser: click to zoom, Ctrl-F to search.
EOF
