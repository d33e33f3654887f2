#!/bin/bash
# SPDX-License-Identifier: MIT
#
# watch_events.sh - `watch --profile-every 2s --event cpu,offcpu` on one JVM (OffCpuTruth, whose
# fg-sleeper thread sleeps in sleepB 60 ms out of every 80):
#   - every interval gives a cpu set (STEM.folded/.svg/.pb.gz, the names as before) and an
#     off-CPU set (STEM.offcpu.*), both non-empty; the off-CPU one holds fg-sleeper's sleep under
#     OffCpuTruth::sleepB, its SVG says microseconds, its pprof's sample type is
#     off_cpu/nanoseconds while the cpu one keeps samples/count + cpu/nanoseconds;
#   - index.html lists both with their event;
#   - the pushes (tests/e2e/pyroscope_receiver.py) carry per event the profile type APP.cpu
#     with units samples, APP.off_cpu with units nanoseconds;
#   - `top --event offcpu` through the daemon prints its event and time unit and the sleeping
#     method.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init watch_events
fg_require_built
command -v go >/dev/null || fg_fail "go (golang-go) is not installed: needed for go tool pprof"

rpid=
trap 'rc=$?; set +e; [[ -n $rpid ]] && kill "$rpid" 2>/dev/null; (exit $rc); fg_cleanup' EXIT
port=$(fg_free_port)
recv=$FG_TMP/received
out=$FG_TMP/profiles
python3 "$FG_SOURCE_DIR/tests/e2e/pyroscope_receiver.py" "$port" "$recv" >"$FG_TMP/recv.log" 2>&1 &
rpid=$!

FG_CT_OPTS=(--env OTEL_SERVICE_NAME=truth)
fg_jvm_start one OffCpuTruth 60
pid=$FG_HOSTPID
FG_CT_OPTS=()
fg_wait_log one 30 'OffCpuTruth ready'
fg_wait 5 grep -q listening "$FG_TMP/recv.log" || fg_fail "the receiver did not start: $(cat "$FG_TMP/recv.log")"
# Every switch-out's stack (--switch-rate 0): the 2 s profiles' times are exact, not sampled.
fg_watch_start --profile-every 2s --event cpu,offcpu --switch-rate 0 --out "$out" --pprof \
	--push "http://127.0.0.1:$port" --host-name test-node
fg_wait 5 grep -q 'rolling profiles every 2 s (cpu,offcpu)' "$FG_WATCH_LOG" ||
	fg_fail "watch did not start both events: $(cat "$FG_WATCH_LOG")"
# top asks the daemon for a JVM it serves: its agent has connected to the new watch.
fg_wait 10 grep -q "connect: pid $pid " "$FG_WATCH_LOG" ||
	fg_fail "the JVM's agent did not connect to watch: $(cat "$FG_WATCH_LOG")"

# top --event offcpu through the daemon's control channel, two 1 s tables (not a terminal).
"$FGCOLLECT" top --pid "$pid" --ctl "$FG_CTL" --event offcpu --threads 'fg-.*' --interval 1 --count 2 --rows 400 \
	>"$FG_TMP/top.out" 2>"$FG_TMP/top.err" || { cat "$FG_TMP/top.err" >&2; fg_fail "top --event offcpu failed"; }
grep -m1 'fgcollect top' "$FG_TMP/top.out" >&2
grep -q "^fgcollect top - PID $pid - .* - event offcpu (time, ms) - interval 2: [0-9.]* ms off the CPU" "$FG_TMP/top.out" ||
	fg_fail "top's header does not say the event and its unit: $(grep 'fgcollect top' "$FG_TMP/top.out")"
grep -q 'SELF-MS' "$FG_TMP/top.out" || fg_fail "top's columns do not say milliseconds"
grep -q 'OffCpuTruth::sleepB_\[[0ij]\]' "$FG_TMP/top.out" || fg_fail "top --event offcpu does not list OffCpuTruth::sleepB"

sets() { find "$out" -maxdepth 1 -name "*_${pid}_test-node$1" -size +0 | wc -l; }
enough() { (($(sets .folded) >= 3 && $(sets .offcpu.folded) >= 3)); }
fg_wait 12 enough || { ls "$out" >&2; fg_fail "not 3 profiles of each event within 12 s"; }
fg_watch_stop_clean
kill "$rpid" 2>/dev/null || true
wait "$rpid" 2>/dev/null || true
rpid=
grep -E 'profiles: [0-9]+ intervals' "$FG_WATCH_LOG" >&2 || fg_fail "no profiles summary line"

# Per interval, both events; cpu names as before (no suffix). Each event samples in a session of
# its own, started apart: an interval's two sets start within a second of each other.
for f in "$out"/*_"${pid}"_test-node.folded; do
	[[ -s ${f%.folded}.svg && -s ${f%.folded}.pb.gz ]] || fg_fail "incomplete cpu set ${f%.folded}"
done
for f in "$out"/*_"${pid}"_test-node.offcpu.folded; do
	[[ -s ${f%.folded}.svg && -s ${f%.folded}.pb.gz ]] || fg_fail "incomplete off-CPU set ${f%.folded}"
done
pairs=$(cd "$out" && python3 - "$pid" <<'PY'
import calendar, glob, sys, time
def starts(pat):
    return [calendar.timegm(time.strptime(f[:16], "%Y%m%dT%H%M%SZ")) for f in glob.glob(pat)]
cpu = starts("*_%s_test-node.folded" % sys.argv[1])
off = starts("*_%s_test-node.offcpu.folded" % sys.argv[1])
print(sum(1 for c in cpu if any(abs(c - o) <= 1 for o in off)))
PY
)
((pairs >= 2)) || { ls "$out" >&2; fg_fail "only $pairs intervals have both a cpu and an off-CPU profile"; }
off=$(find "$out" -maxdepth 1 -name "*_${pid}_test-node.offcpu.folded" | sort | tail -n 2 | head -n 1)
cpu=$(find "$out" -maxdepth 1 -name "*_${pid}_test-node.folded" | sort | tail -n 2 | head -n 1)
stem=${off%.offcpu.folded}
cstem=${cpu%.folded}
grep -q '^fg-sleeper;.*OffCpuTruth::computeA_\[[0ij]\]' "$cpu" || fg_fail "the cpu profile $cpu lacks fg-sleeper's computeA"
# fg-sleeper's sleep, in microseconds: 60 ms out of every 80 of a ~2 s interval.
slept=$(awk '/^fg-sleeper;.*OffCpuTruth::sleepB_\[[0ij]\];.*\[off-cpu: sleeping\]/ { s += $NF } END { print s + 0 }' "$off")
fg_log "fg-sleeper slept $slept us under sleepB in $(basename "$off")"
((slept >= 500000)) || fg_fail "the off-CPU profile has $slept us of fg-sleeper under sleepB (want >= 0.5 s of ~1.5 s)"
grep -q "Off-CPU time (us): truth | container .* | PID $pid | host test-node" "$stem.offcpu.svg" ||
	fg_fail "the off-CPU SVG's title does not say the unit"
grep -q 'countname: "us"' "$stem.offcpu.svg" && grep -q '<title>all ([0-9,]* us, 100%)' "$stem.offcpu.svg" ||
	fg_fail "the off-CPU SVG does not count microseconds"
grep -q "CPU: truth | container" "$cstem.svg" || fg_fail "the cpu SVG's title changed"
grep -q 'class="event">offcpu<' "$out/index.html" || fg_fail "index.html has no offcpu row"
grep -q 'class="event">cpu<' "$out/index.html" || fg_fail "index.html has no cpu row"
export HOME=$FG_TMP GOCACHE=$FG_TMP/gocache GOFLAGS=-mod=mod GOTOOLCHAIN=local
go tool pprof -raw "$stem.offcpu.pb.gz" >"$FG_TMP/off.raw" 2>"$FG_TMP/pprof.err" ||
	{ cat "$FG_TMP/pprof.err" >&2; fg_fail "go tool pprof cannot read $stem.offcpu.pb.gz"; }
go tool pprof -raw "$cstem.pb.gz" >"$FG_TMP/cpu.raw" 2>>"$FG_TMP/pprof.err" ||
	{ cat "$FG_TMP/pprof.err" >&2; fg_fail "go tool pprof cannot read $cstem.pb.gz"; }
grep -A1 '^Samples:' "$FG_TMP/off.raw" | grep -qE '^off_cpu/nanoseconds(\[dflt\])?$' ||
	fg_fail "off-CPU pprof sample types: $(grep -A1 '^Samples:' "$FG_TMP/off.raw" | tr '\n' ' ')"
grep -A1 '^Samples:' "$FG_TMP/cpu.raw" | grep -qE '^samples/count(\[dflt\])? +cpu/nanoseconds(\[dflt\])?$' ||
	fg_fail "cpu pprof sample types: $(grep -A1 '^Samples:' "$FG_TMP/cpu.raw" | tr '\n' ' ')"
go tool pprof -top "$stem.offcpu.pb.gz" 2>/dev/null | grep -q 'OffCpuTruth::sleepB' ||
	fg_fail "go tool pprof -top of the off-CPU profile lists no sleepB"

# The pushes: both profile types, with their units, every request per the ingest API.
[[ ! -s $recv/errors.log ]] || { cat "$recv/errors.log" >&2; fg_fail "requests broke the ingest API"; }
read -r ncpu noff < <(python3 - "$recv" <<'PY'
import glob, json, sys
n = {"cpu": 0, "off": 0}
for f in glob.glob(sys.argv[1] + "/*.json"):
    q = json.load(open(f))
    want = {"truth.cpu": ("samples", "samples"), "truth.off_cpu": ("off_cpu", "nanoseconds")}
    if q["profile_type"] not in want or (q["sample_type"], q.get("units")) != want[q["profile_type"]] \
            or q.get("aggregationType") != "sum" or q["app"] != "truth":
        sys.exit("bad push %s: %r" % (f, q))
    n["cpu" if q["profile_type"] == "truth.cpu" else "off"] += 1
print(n["cpu"], n["off"])
PY
) || fg_fail "a push carries the wrong profile type or units"
((ncpu >= 2 && noff >= 2)) || fg_fail "pushed $ncpu cpu and $noff off-CPU profiles (want >= 2 each)"
fg_pass "cpu + offcpu every 2 s: $pairs intervals with both sets, fg-sleeper $slept us under sleepB; pushed $ncpu truth.cpu (samples) and $noff truth.off_cpu (nanoseconds); top --event offcpu in ms"
