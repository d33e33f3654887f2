#!/bin/bash
# SPDX-License-Identifier: MIT
#
# demo.sh BUILD_DIR - `make demo`: a flame graph with Java method names of a JVM in a container,
# then the seed's comparison: the same service in two configurations, and their differential.
#
#   1. starts `fgcollect watch` on a temporary socket directory;
#   2. runs the bundled PrimeService (tests/java, JDK only) in a namespace container
#      (tests/harness/fgcontainer: own PID/mount/net namespaces, pivot_root, uid 4242, JDK at
#      /opt/jdk), as PID 1, with -XX:+PreserveFramePointer and the agent, under load from its
#      own client threads;
#   3. profiles it for FG_DEMO_SECONDS (default 5) and writes OUT/primes.svg;
#   4. runs it again with the other implementation of its endpoint (GET /primes?n=N counts the
#      primes below N by trial division, then by a sieve: same answers), under the same load,
#      profiled the same way (OUT/primes-sieve.svg);
#   5. writes the differential flame graph of the two (fgcollect diff --normalize: the shape of
#      the sieve run, red where it spends a larger share of its samples, blue a smaller one;
#      OUT/primes-diff.svg) and a one-line summary of the biggest difference, computed from the
#      folded stacks: the frame whose inclusive share of samples (the frame or anything it
#      calls) changed most;
#   6. records the service idle, under a load step (ab) and idle again as one time view page
#      (OUT/primes-timeview.html, `record -o x.html`; with `record` only, not stock perf);
#      prints where everything is, and cleans up.
#
#   7. then a service that waits on something real, in two configurations: the Jetty + JDBC
#      service of tests/java/realapp on PostgreSQL and on MariaDB (servers on 127.0.0.1 from
#      Debian's packages), each recorded with `fgcollect record --event cpu` and `--event wall`
#      at once, their CPU and wall flame graphs, the differential of the two wall profiles and a
#      per-request summary line (scripts/demo_db.sh).
#
# OUT is BUILD_DIR/demo, or FG_DEMO_OUT. FG_DEMO_SHORT=1 (the make test variant) shortens the
# warm-up; FG_DEMO_SECONDS sets each recording's length. FG_DEMO_PARTS (default "primes db")
# picks the parts: primes (steps 2-5) and db (step 7).
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
OUT=${FG_DEMO_OUT:-$BUILD_DIR/demo}
WARMUP=2
[[ ${FG_DEMO_SHORT:-0} == 1 ]] && WARMUP=1
PARTS=${FG_DEMO_PARTS:-primes db}
want() {
	[[ " $PARTS " == *" $1 "* ]]
}
want primes || want db || { echo "demo: FG_DEMO_PARTS names neither primes nor db" >&2; exit 64; }

# shellcheck source=tests/harness/lib.sh
. "$SRC/tests/harness/lib.sh"
# shellcheck source=scripts/demo_db.sh
. "$SRC/scripts/demo_db.sh"
FG_KEEP_TMP=0
fg_init demo
demo_exit() {
	local rc=$?
	set +e
	demo_db_cleanup
	(exit "$rc")
	fg_cleanup
}
trap demo_exit EXIT
fg_require_built
# The demo's JVMs load the agent as an image would: never a sanitizer build or one that asks for a
# glibc newer than 2.17 (FGAGENT=build-asan/... stops here, saying why).
"$SRC/scripts/agent-shippable.sh" "$FGAGENT" >/dev/null || {
	echo "demo: refusing $FGAGENT (above): use the agent of the plain build (make build)" >&2
	exit 1
}
mkdir -p "$OUT"
want primes && rm -f "$OUT"/primes.* "$OUT"/primes-* "$OUT"/perf-*.map

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
if ! want primes; then
	demo_db_run
	fg_watch_stop || true
	printf 'fgcollect demo (record pipeline):%s\n' "$DB_REPORT"
	exit 0
fi

# 2. The sample service, under load, in its container.
# start_service NAME IMPL: PrimeService --impl IMPL as PID 1 of container NAME; sets pid.
start_service() {
	fg_jvm_start "$1" PrimeService --load 2 --n 20000 --impl "$2" \
		--seconds $((SECONDS_TO_PROFILE + 60))
	pid=$FG_HOSTPID
	fg_wait_log "$1" 20 'PrimeService listening'
	say "PrimeService ($2) runs in container '$1' as PID 1, host PID $pid, uid 4242, JDK at /opt/jdk"
	fg_wait 20 fg_map_ok "$pid" 'PrimeService::' ||
		fg_fail "no perf map naming PrimeService:: for host pid $pid after 20 s"
	sleep "$WARMUP" # let the load warm the JIT up
	say "the collector keeps $(fg_map_path "$pid") current ($(fg_map_lines "$pid") entries)"
}
start_service primes trial
FG_CLEAN_FILES=() # the demo leaves /tmp/perf-<pid>.map in place for the user to look at

# 3. Profile.
# profile_record NAME: fgcollect record of $pid into OUT/NAME.folded.
profile_record() {
	say "profiling $SECONDS_TO_PROFILE s: fgcollect record --pid $pid"
	# The daemon's private control channel and socket (a default install needs neither).
	local -a rec=(--socket "$FG_SOCK")
	[[ -n $FG_CTL ]] && rec+=(--ctl "$FG_CTL")
	"$FGCOLLECT" record "${rec[@]}" --pid "$pid" --duration "$SECONDS_TO_PROFILE" \
		-o "$OUT/$1.folded" && [[ -s $OUT/$1.folded ]]
}
# profile_perf NAME: the stock perf pipeline for $pid into OUT/NAME.folded.
profile_perf() {
	local n=$1
	say "profiling $SECONDS_TO_PROFILE s with stock perf: perf record -F 99 -g -p $pid"
	perf record -q -F 99 -g -p "$pid" -o "$OUT/$n.perf.data" -- sleep "$SECONDS_TO_PROFILE" \
		>/dev/null 2>"$FG_TMP/perf-record.err" || { cat "$FG_TMP/perf-record.err" >&2; fg_fail "perf record failed"; }
	# No period field: stackcollapse-perf.pl (and fgcollect collapse) then count samples, not ns.
	perf script -i "$OUT/$n.perf.data" -F comm,pid,tid,time,event,ip,sym,dso \
		>"$OUT/$n.perf.txt" 2>/dev/null || fg_fail "perf script failed"
	if has collapse; then
		"$FGCOLLECT" collapse --all <"$OUT/$n.perf.txt" >"$OUT/$n.folded"
	elif command -v stackcollapse-perf.pl >/dev/null; then
		say "this fgcollect has no 'collapse' yet: using stackcollapse-perf.pl --all"
		stackcollapse-perf.pl --all <"$OUT/$n.perf.txt" >"$OUT/$n.folded"
	else
		fg_fail "this fgcollect has no 'collapse' and stackcollapse-perf.pl is not on PATH"
	fi
}
if [[ $MODE == auto ]]; then
	MODE=perf
	if has record; then
		if profile_record primes; then
			MODE=record
		else
			say "fgcollect record failed (above): falling back to the stock perf pipeline"
		fi
	fi
elif [[ $MODE == record ]]; then
	profile_record primes || fg_fail "fgcollect record --pid $pid failed"
fi
case $MODE in
record) ;;
perf) profile_perf primes ;;
*) fg_fail "FG_DEMO_MODE must be auto, record or perf, not '$MODE'" ;;
esac
[[ -s $OUT/primes.folded ]] || fg_fail "no stacks collected from pid $pid"

# 4. Render.
# render NAME TITLE: OUT/NAME.folded -> OUT/NAME.svg
render() {
	if has flamegraph; then
		"$FGCOLLECT" flamegraph --title "$2" --colors java "$OUT/$1.folded" >"$OUT/$1.svg"
	elif command -v flamegraph.pl >/dev/null; then
		say "this fgcollect has no 'flamegraph' yet: using flamegraph.pl --color=java"
		flamegraph.pl --title "$2" --color=java "$OUT/$1.folded" >"$OUT/$1.svg"
	else
		fg_fail "this fgcollect has no 'flamegraph' and flamegraph.pl is not on PATH"
	fi
}
render primes "PrimeService in a container (host PID $pid)"
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
pid_a=$pid
fg_container_stop primes || true

# 5. The same service with the sieve, under the same load, profiled the same way.
start_service primes-sieve sieve
case $MODE in
record) profile_record primes-sieve || fg_fail "fgcollect record --pid $pid failed" ;;
perf) profile_perf primes-sieve ;;
esac
[[ -s $OUT/primes-sieve.folded ]] || fg_fail "no stacks collected from pid $pid"
render primes-sieve "PrimeService with the sieve (host PID $pid)"
fg_container_stop primes-sieve || true

# 5b. When it happened: the service idle, then loaded by ab for STEP_S seconds, then idle
# again, recorded as one time view page (record -o x.html, docs/timeview.md): its heatmap shows
# the load step, and a drag across it gives the flame graph of the loaded seconds.
STEP_S=4
timeview_step() {
	local port rec_pid
	local -a rec=(--socket "$FG_SOCK")
	[[ -n $FG_CTL ]] && rec+=(--ctl "$FG_CTL")
	command -v ab >/dev/null || fg_fail "ab is not installed (apache2-utils: scripts/install-deps.sh)"
	FG_CT_OPTS=(--host-net)
	fg_jvm_start primes-step PrimeService --load 0 --n 20000 --impl trial --seconds 90
	FG_CT_OPTS=()
	pid=$FG_HOSTPID
	fg_wait_log primes-step 20 'PrimeService listening'
	port=$(sed -n 's/.*PrimeService listening on \([0-9]*\).*/\1/p' "${FG_CT_LOG[primes-step]}" | head -n 1)
	ab -k -c 2 -t "$WARMUP" -n 10000000 "http://127.0.0.1:$port/primes?n=20000" >/dev/null 2>&1 # warm the JIT
	say "time view: record --pid $pid for $((3 * STEP_S)) s, ab -k -c 2 from ${STEP_S} s to $((2 * STEP_S)) s"
	"$FGCOLLECT" record "${rec[@]}" --pid "$pid" --duration $((3 * STEP_S)) \
		-o "$OUT/primes-timeview.html" &
	rec_pid=$!
	sleep "$STEP_S"
	ab -k -c 2 -t "$STEP_S" -n 10000000 "http://127.0.0.1:$port/primes?n=20000" >"$FG_TMP/step.ab" 2>&1
	wait "$rec_pid" || fg_fail "fgcollect record -o $OUT/primes-timeview.html failed"
	grep -q '^Complete requests' "$FG_TMP/step.ab" || { cat "$FG_TMP/step.ab" >&2; fg_fail "ab (the load step) failed"; }
	grep -q 'id="fg-meta"' "$OUT/primes-timeview.html" || fg_fail "no time view page in $OUT/primes-timeview.html"
	fg_container_stop primes-step || true
	TV_REPORT="  time view:      $OUT/primes-timeview.html (idle, ab -c 2 from ${STEP_S} s to $((2 * STEP_S)) s, idle: drag across the step)"
}
TV_REPORT=
[[ $MODE == record ]] && timeview_step
want db && demo_db_run
fg_watch_stop || true

# The differential, from the two runs' stacks made comparable by `diff --fold`
# (docs/reading-graphs.md): the roots lose their numbers (the process root "java-<pid>" of the
# perf pipeline, pool threads' numbers), a Java method compares as itself whether it ran
# interpreted (_[0]), compiled (_[j]) or inlined (_[i]), which differs from run to run with the
# JIT's timing, and a lambda's hidden class loses its address. The "stack A B" lines keep raw
# counts (the shares below need no scaling; --normalize rounds).
"$FGCOLLECT" diff --fold --strip-hex --folded \
	"$OUT/primes.folded" "$OUT/primes-sieve.folded" >"$OUT/primes-diff.folded" ||
	fg_fail "fgcollect diff --folded failed"
"$FGCOLLECT" diff --fold --normalize --strip-hex \
	--title "PrimeService: trial division -> sieve" \
	--subtitle "shape of the sieve run; red: larger share of samples with the sieve, blue: smaller" \
	"$OUT/primes.folded" "$OUT/primes-sieve.folded" >"$OUT/primes-diff.svg" ||
	fg_fail "fgcollect diff failed"
# A frame that vanished has no place in the shape of B: the negated graph (shape of the trial
# run, blue where the sieve spends a smaller share) shows what went away.
"$FGCOLLECT" diff --fold --normalize --strip-hex --negate \
	--title "PrimeService: trial division -> sieve, negated" \
	--subtitle "shape of the trial-division run; blue: smaller share of samples with the sieve, red: larger" \
	"$OUT/primes-sieve.folded" "$OUT/primes.folded" >"$OUT/primes-diff-negated.svg" ||
	fg_fail "fgcollect diff --negate failed"
grep -q 'PrimeService::countPrimesSieve' "$OUT/primes-diff.svg" ||
	fg_fail "the differential flame graph does not name PrimeService::countPrimesSieve"
grep -qE 'PrimeService::(countPrimes|isPrime)[^S]' "$OUT/primes-diff-negated.svg" ||
	fg_fail "the negated differential flame graph does not name trial division's frames"

# Each frame's inclusive share of the samples of A and of B ("stack A B" lines; a frame counts
# once per stack however often it recurs); the largest change in percentage points wins.
summary=$(LC_ALL=C awk '
	{
		b = $NF; a = $(NF - 1); st = $0
		sub(/ [^ ]+ [^ ]+$/, "", st)
		ta += a; tb += b
		n = split(st, f, ";")
		split("", seen)
		for (i = 1; i <= n; i++) {
			if (f[i] in seen)
				continue
			seen[f[i]] = 1; fa[f[i]] += a; fb[f[i]] += b
		}
	}
	END {
		if (!ta || !tb)
			exit 1
		for (k in fa) {
			d = fb[k] / tb - fa[k] / ta
			if (d < 0)
				d = -d
			if (d > best || name == "") { best = d; name = k }
		}
		pa = 100 * fa[name] / ta; pb = 100 * fb[name] / tb
		printf "%s: %.1f%% of samples with trial division, %.1f%% with the sieve (%+.1f points; %s)\n", name, pa, pb, pb - pa, pb < pa ? "blue in primes-diff-negated.svg" : "red in primes-diff.svg"
	}' "$OUT/primes-diff.folded") || fg_fail "no difference computed from $OUT/primes-diff.folded (an empty run?)"

cat <<EOF
fgcollect demo ($MODE pipeline): $total samples, $java_pct% of them in PrimeService:: methods,
  $path_note
  flame graph:    $OUT/primes.svg
  folded stacks:  $OUT/primes.folded
  perf map:       $(fg_map_path "$pid_a") (written by fgcollect watch; a copy in $OUT/perf-$pid_a.map)
Open the SVG in a browser: click to zoom, Ctrl-F to search.

The same endpoint counting primes with a sieve instead of trial division (same answers, same load):
  flame graph:    $OUT/primes-sieve.svg
  differential:   $OUT/primes-diff.svg (shape of the sieve run, red: grew)
                  $OUT/primes-diff-negated.svg (shape of the trial run, blue: shrank)
                  $OUT/primes-diff.folded ("stack A B" lines of the two runs' stacks
                  made comparable by fgcollect diff --fold)
  biggest difference: $summary
EOF
[[ -z $TV_REPORT ]] || printf 'The service under a load step, when each stack ran:\n%s\n' "$TV_REPORT"
[[ -z $DB_REPORT ]] || printf '%s\n' "$DB_REPORT"
