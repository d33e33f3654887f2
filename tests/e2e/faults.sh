#!/bin/bash
# SPDX-License-Identifier: MIT
#
# faults.sh - the daemon's fault matrix: one `fgcollect watch` with rolling profiles (--out and
# --push) in a mount namespace of its own whose /tmp (the maps) and --out are small tmpfs, JVMs
# in namespace containers, and one fault after another. For each: the message (grep of the
# watch log), nothing lost that could be kept, and recovery once the fault clears.
#   1. /tmp full: the map cannot be written ("No space left on device ... retrying"); once space
#      returns the map is complete (>= 95% of what jcmd Compiler.perfmap lists) and watch says
#      it writes again.
#   2. --out full: one message (not one per profile), the failures counted; profiles written
#      again once space returns, and watch says so.
#   3. push server answering 500, then 4. answering in 10 s: watch says the server fails and
#      when it delivers again; profiles that waited are delivered once each, the rest counted
#      as dropped at the queue cap (sent + dropped + unsent + rejected = made).
#   5. the socket directory removed and recreated: watch says it listens again, writes its
#      features file again, and a JVM started after gets its map. The JVM whose container still
#      mounts the removed directory lives on through every later fault (checked after each, and
#      its exit status on SIGTERM at the end); a JVM that dies is reported with its exit status
#      and output.
#   6. descriptors exhausted (RLIMIT_NOFILE lowered on the running daemon): a clear message,
#      and the JVM that came meanwhile gets its map once the limit is raised.
#   7. a JVM SIGKILLed while it streams its code: its connection ends without a malformed
#      record, its map is kept, then expired (--keep-exited 3s); the other JVM is unharmed.
#   8. watch SIGKILLed in the middle of a map write (strace injects SIGKILL at the rename):
#      the map at the name is never partial, the restarted watch writes it complete and removes
#      the temporary file the killed one left.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init faults
fg_require_built
command -v strace >/dev/null || fg_missing_tool "strace"
command -v prlimit >/dev/null || fg_missing_tool "prlimit (util-linux)"
# A JVM's fatal error report goes to its output (kept in $FG_TMP), not to its container's /tmp.
major=$(fg_jdk_major "${FG_JDK:-$FG_DEFAULT_JDK}")
((${major:-0} >= 13)) && FG_JVM_OPTS=(-XX:+ErrorFileToStderr)

holder='' rpid='' sockdir=''
# (set +e: under errexit a failing kill would end the trap before fg_cleanup)
# shellcheck disable=SC2154
trap 'rc=$?; set +e; [[ -n $rpid ]] && kill "$rpid" 2>/dev/null; [[ -n $FG_WATCH_PID ]] && fg_watch_stop KILL
	[[ -n $holder ]] && kill "$holder" 2>/dev/null; [[ -n $sockdir ]] && rm -rf "$sockdir"; (exit $rc); fg_cleanup' EXIT

# The daemon's mount namespace, held by a sleeping process so that a restarted daemon finds the
# same /tmp: a 2 MiB tmpfs for the maps, a 1 MiB one at /tmp/out for the profiles. The agent
# socket lives outside /tmp (containers mount its directory).
unshare -m --propagation private sleep 600 &
holder=$!
fg_wait 5 bash -c "[[ \$(readlink /proc/$holder/ns/mnt) != \$(readlink /proc/self/ns/mnt) ]]" ||
	fg_fail "no mount namespace for the daemon"
nsenter -t "$holder" -m -- sh -c "mount -t tmpfs -o size=2m,mode=1777 fgfaults-tmp /tmp &&
	mkdir -m 0755 /tmp/out && mount -t tmpfs -o size=1m,mode=0755 fgfaults-out /tmp/out &&
	mkdir -p -m 0700 '$FG_TMP/ctl'" || fg_fail "cannot mount the daemon's tmpfs"
root=/proc/$holder/root
# The daemon's /tmp hides a build tree under /tmp (a CI checkout): it runs the binary through
# this script's root, /proc/$$/root, which names the host's files from any mount namespace.
real=$(realpath "$FGCOLLECT")
FGCOLLECT=$FG_TMP/fgcollect-ns
printf '#!/bin/sh\nexec nsenter -t %s -m -- /proc/%s/root%s "$@"\n' "$holder" "$$" "$real" >"$FGCOLLECT"
chmod 0755 "$FGCOLLECT"
sockdir=$(mktemp -d /run/fgfaults.XXXXXX)
chmod 0755 "$sockdir"

nsmap() { echo "$root/tmp/perf-$1.map"; }
map_ok() { fg_map_lint "$(nsmap "$1")" >/dev/null && grep -qE -- "$2" "$(nsmap "$1")"; }
# fill DIR: write DIR/fill until the filesystem is full
fill() { dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null || true; }
log_has() { grep -qE -- "$1" "$FG_WATCH_LOG"; }
# alive NAME WHEN: the JVM of container NAME still runs, else fail with its status and output.
alive() { fg_container_alive "$1" || fg_fail "JVM ${FG_CT_HOSTPID[$1]} (container $1) died $2"; }
wait_log() { fg_wait "$1" log_has "$2" || fg_fail "watch never said /$2/ within $1 s"; }
count_log() { grep -cE -- "$1" "$FG_WATCH_LOG" || true; }

port=$(fg_free_port)
recv=$FG_TMP/received
mode=$FG_TMP/recv.mode
echo ok >"$mode"
python3 "$FG_SOURCE_DIR/tests/e2e/pyroscope_receiver.py" "$port" "$recv" "$mode" >"$FG_TMP/recv.log" 2>&1 &
rpid=$!
fg_wait 5 grep -q listening "$FG_TMP/recv.log" || fg_fail "the receiver did not start: $(cat "$FG_TMP/recv.log")"
got() { find "$recv" -name '*.json' | wc -l; }

watch_args=(--keep-exited 3s --profile-every 1s --out /tmp/out --push "http://127.0.0.1:$port"
	--push-queue 4 --max-bytes 384k --host-name faults)
fg_watch_start --dir "$sockdir" "${watch_args[@]}"
logs=("$FG_WATCH_LOG")

# ---- 1. /tmp full: no map while full, a complete one after -------------------------------
fill "$root/tmp"
# Runs until the end of the test, which stops it (the duration is only a bound) and wants its
# exit status for SIGTERM: 20 s before fgcontainer's SIGKILL on a loaded machine.
FG_CT_OPTS=(--stop-timeout 20)
fg_jvm_start a HotLoop 1800
FG_CT_OPTS=()
pa=$FG_HOSTPID
fg_wait_log a 25 'HotLoop ready'
wait_log 15 "cannot write the perf map of pid $pa: No space left on device \(old map kept, retrying\)"
rm -f "$root/tmp/fill"
fg_wait 10 map_ok "$pa" 'HotLoop::' || fg_fail "no map of pid $pa 10 s after /tmp had room again"
wait_log 5 "perf map of pid $pa written again"
fg_jvm_truth "$pa" "$FG_TMP/truth.map" || fg_fail "jcmd Compiler.perfmap failed in the container"
complete() {
	local cov
	map_ok "$1" "$2" || return 1
	read -r cov _ <<<"$(fg_map_coverage "$FG_TMP/truth.map" "$(nsmap "$1")")"
	((cov >= 95))
}
fg_wait 10 complete "$pa" 'HotLoop::' ||
	fg_fail "map of pid $pa incomplete after /tmp had room again: $(fg_map_coverage "$FG_TMP/truth.map" "$(nsmap "$pa")")"
fg_log "1. /tmp full: map written once there was room: coverage $(fg_map_coverage "$FG_TMP/truth.map" "$(nsmap "$pa")") (pct hit total)"

# ---- 2. --out full -----------------------------------------------------------------------
out=$root/tmp/out
has_profile() { [[ -n $(find "$out" -name "*_${pa}_*.svg" -newer "$1" -print -quit) ]]; }
touch "$FG_TMP/t0"
fg_wait 10 has_profile "$FG_TMP/t0" || fg_fail "no profile of pid $pa in --out"
fill "$out"
wait_log 10 "profiles: cannot write the profile of PID $pa .*No space left on device"
sleep 3 # three more intervals with no room
n=$(count_log "profiles: cannot write")
((n == 1)) || fg_fail "$n messages for a full --out in 3 s (want one until it can write again)"
touch "$FG_TMP/t1"
rm -f "$out/fill"
fg_wait 10 has_profile "$FG_TMP/t1" || fg_fail "no profile written 10 s after --out had room again"
wait_log 5 "profiles: writing again to /tmp/out after [0-9]+ profiles could not be written"
fg_log "2. --out full: $(grep -m1 'writing again' "$FG_WATCH_LOG")"

# ---- 3. push server answering 500 --------------------------------------------------------
fg_wait 10 bash -c "(( \$(find '$recv' -name '*.json' | wc -l) >= 2 ))" || fg_fail "no profile pushed before the faults"
echo 500 >"$mode"
fg_wait 15 test -s "$recv/refused.count" || fg_fail "the pusher never reached the server answering 500"
wait_log 10 "push: http://127.0.0.1:$port fails \(HTTP status 500\)"
n0=$(got)
sleep 4
echo ok >"$mode"
wait_log 20 "push: delivering again"
fg_wait 20 bash -c "(( \$(find '$recv' -name '*.json' | wc -l) >= $n0 + 4 ))" ||
	fg_fail "profiles that waited during the 500s never arrived ($(got) after $n0)"
fg_log "3. push 500: $(cat "$recv/refused.count") answers 500, then $(($(got) - n0)) delivered"

# ---- 4. push server answering in 10 s ----------------------------------------------------
# Slower than profiles come (1 s) but within the request timeout (30 s): nothing fails, the
# queue (4) fills and drops its oldest profiles, counted; once the server is fast again the
# queue empties and every waiting profile arrives once.
episodes_over() { (($(count_log 'push: the queue is full') == $(count_log 'keeps up again'))); }
fg_wait 15 episodes_over || fg_fail "the queue did not empty after the 500s"
echo "slow 10" >"$mode"
n0=$(got)
nf=$(count_log 'push: the queue is full')
more_full() { (($(count_log "push: the queue is full: the oldest waiting profiles are dropped until http://127.0.0.1:$port keeps up") > nf)); }
fg_wait 25 more_full || fg_fail "watch never said the queue dropped profiles for the slow server"
echo ok >"$mode"
n1=$(count_log "keeps up again")
fg_wait 30 bash -c "(( \$(grep -c 'keeps up again' '$FG_WATCH_LOG') > $n1 ))" ||
	fg_fail "the queue never emptied after the server was fast again"
fg_wait 10 bash -c "(( \$(find '$recv' -name '*.json' | wc -l) >= $n0 + 4 ))" ||
	fg_fail "the profiles that waited for the slow server never arrived ($(got) after $n0)"
fg_log "4. push slow: $(grep 'queue is full' "$FG_WATCH_LOG" | tail -n 1 | sed 's/.*(//'); $(($(got) - n0)) delivered since"

# ---- 5. socket directory removed and recreated -------------------------------------------
rm -rf "$sockdir"
mkdir -m 0755 "$sockdir"
wait_log 15 "listening again on $sockdir/fgcollect.sock"
fg_wait 5 test -S "$sockdir/fgcollect.sock" || fg_fail "no socket in the recreated directory"
fg_wait 5 test -s "$sockdir/fgcollect.sock.features" || fg_fail "no features file in the recreated directory"
FG_SOCK_DIR=$sockdir # the volume of the JVMs from here on (lib.sh)
fg_jvm_start b InlineChain 1800
pb=$FG_HOSTPID
fg_wait 15 map_ok "$pb" 'InlineChain::' || fg_fail "no map for a JVM started after the directory was recreated"
map_ok "$pa" 'HotLoop::' || fg_fail "map of pid $pa lost when the socket directory went"
alive a "when the socket directory went"
fg_log "5. socket directory recreated: new JVM $pb mapped, map of $pa kept"
# JVM a's container still mounts the removed directory: it can never reach the collector again,
# and must live on unharmed; checked after every later fault, stopped at the end.

# ---- 6. descriptors exhausted ------------------------------------------------------------
# A limit below the descriptors open: every new one fails (EMFILE) while the low ones stay used.
nfd=$(find "/proc/$FG_WATCH_PID/fd" -mindepth 1 | wc -l)
low=16
lim=$(prlimit --pid "$FG_WATCH_PID" --nofile --raw --noheadings -o SOFT,HARD | awk '{print $1 ":" $2}')
prlimit --pid "$FG_WATCH_PID" --nofile=$low:"${lim#*:}"
fg_jvm_start c PrimeService --seconds 60
pc=$FG_HOSTPID
# The daemon runs out where it opens files for an agent: its /proc, its map (the agent socket's
# own descriptors are its confined child's, which has a limit of its own).
nofd="out of file descriptors \(Too many open files, limit $low\)|cannot read /proc/$pc: Too many open files"
wait_log 20 "$nofd"
fg_log "6. limit $low with $nfd open: $(grep -m1 -E "$nofd" "$FG_WATCH_LOG")"
sleep 2
prlimit --pid "$FG_WATCH_PID" --nofile="$lim"
fg_wait 20 map_ok "$pc" '::' || fg_fail "no map of pid $pc 20 s after the descriptor limit was raised"
! grep -q 'out of file descriptors' "$FG_WATCH_LOG" || wait_log 10 "file descriptors available again"
alive b "while the daemon had no descriptors"
alive a "after its socket directory went (6.)"
fg_log "6. descriptors back: map of pid $pc written"

# ---- 7. a JVM SIGKILLed while it streams -------------------------------------------------
fg_jvm_start d JavacWorkload 300 3 60
pd=$FG_HOSTPID
lines_at_least() { [[ -f $(nsmap "$1") ]] && (($(wc -l <"$(nsmap "$1")") >= $2)); }
fg_wait 30 lines_at_least "$pd" 200 || fg_fail "the compile storm of pid $pd did not start"
kill -KILL "$pd"
# The connection may end before /proc shows the process gone: then "exit:" follows.
wait_log 10 "exit: pid $pd |disconnect: pid $pd .*process exited"
grep -E "disconnect: pid $pd " "$FG_WATCH_LOG" | grep -q ' 0 malformed' ||
	fg_fail "the killed JVM's connection ended with malformed records: $(grep -E "disconnect: pid $pd " "$FG_WATCH_LOG")"
fg_map_lint "$(nsmap "$pd")" >/dev/null || fg_fail "map of the killed JVM not kept: $(fg_map_lint "$(nsmap "$pd")")"
wait_log 10 "expire: pid $pd: map removed"
[[ ! -e $(nsmap "$pd") ]] || fg_fail "map of the killed JVM still there after --keep-exited"
map_ok "$pb" 'InlineChain::' || fg_fail "map of pid $pb broke when pid $pd was killed"
alive b "when JVM $pd was SIGKILLed"
alive a "after its socket directory went (7.)"
fg_log "7. JVM $pd SIGKILLed mid-stream: map kept, then expired; no malformed record"
fg_container_stop d 2 || true

# ---- 8. watch SIGKILLed in the middle of a map write --------------------------------------
fg_jvm_start e InlineChain 60
pe=$FG_HOSTPID
fg_wait 15 map_ok "$pe" 'InlineChain::' || fg_fail "no map for pid $pe"
fg_container_stop e 5 || true
# The next map write (a new JVM's) renames its complete temporary file into place: SIGKILL then.
strace -f -qq -p "$FG_WATCH_PID" -e trace=renameat2 -e inject=renameat2:signal=SIGKILL \
	-o /dev/null 2>"$FG_TMP/strace.err" &
spid=$!
sleep 1
fg_jvm_start f HotLoop 60
pf=$FG_HOSTPID
fg_wait 20 fg__dead "$FG_WATCH_PID" || fg_fail "watch was not killed at a map write"
wait "$spid" 2>/dev/null || true
fg_watch_stop KILL || true
temps=$(find "$root/tmp" -maxdepth 1 -name ".perf-*.map.*" | wc -l)
((temps >= 1)) || fg_fail "no temporary map file left by the killed watch: the kill missed the write"
if [[ -e $(nsmap "$pf") ]]; then
	fg_map_lint "$(nsmap "$pf")" >/dev/null || fg_fail "a partial map at the name after the kill: $(fg_map_lint "$(nsmap "$pf")")"
fi
# The killed daemon's files are older than anything a running one is writing.
find "$root/tmp" -maxdepth 1 -name ".perf-*.map.*" -exec touch -d '-1 min' {} +
fg_watch_start --dir "$sockdir" "${watch_args[@]}"
logs+=("$FG_WATCH_LOG")
fg_wait 15 map_ok "$pf" 'HotLoop::' || fg_fail "no map of pid $pf after the restart"
fg_wait 10 bash -c "[[ -z \$(find '$root/tmp' -maxdepth 1 -name '.perf-*.map.*' -print -quit) ]]" ||
	fg_fail "the restarted watch left the killed one's temporary map files: $(ls -a "$root/tmp")"
wait_log 5 "removed [0-9]+ temporary map files? a killed collector left"
alive b "when watch was SIGKILLed"
alive a "after its socket directory went (8.)"
fg_log "8. watch SIGKILLed at a rename: $temps temporary file(s) left, removed by the next one; map of $pf complete"
# The JVM cut off from the collector since 5. ends as any JVM does on SIGTERM.
rc=0
fg_container_stop a 30 || rc=$?
((rc == 143)) || fg_fail "JVM $pa (cut off from the collector since 5.) ended with $(fg_status_text "$rc") on SIGTERM (want 143); its output: $(tail -n 5 "${FG_CT_LOG[a]}")"

# ---- the books -----------------------------------------------------------------------------
fg_watch_stop_clean
for l in "${logs[@]}"; do grep -h -E 'push:|profiles:|summary:' "$l" | tail -n 3 >&2; done
line=$(grep 'push: [0-9]* profiles sent' "$FG_WATCH_LOG")
sent=$(sed -n 's/.*push: \([0-9]*\) profiles sent.*/\1/p' <<<"$line")
dropped=$(sed -n 's/.* \([0-9]*\) dropped with the queue full.*/\1/p' <<<"$line")
unsent=$(sed -n 's/.* \([0-9]*\) unsent at exit.*/\1/p' <<<"$line")
rejected=$(sed -n 's/.* \([0-9]*\) rejected by the server.*/\1/p' <<<"$line")
made=$(sed -n 's/.*profiles: [0-9]* intervals, \([0-9]*\) profiles.*/\1/p' "$FG_WATCH_LOG")
((sent + dropped + unsent + rejected == made)) ||
	fg_fail "last watch: $made profiles made but $sent sent + $dropped dropped + $unsent unsent + $rejected rejected"
dups=$(python3 - "$recv" <<'PY'
import glob, json, sys
seen = {}
for f in glob.glob(sys.argv[1] + "/*.json"):
    q = json.load(open(f))
    k = (q["labels"]["host_pid"], q["from"])
    seen[k] = seen.get(k, 0) + 1
print(sum(v - 1 for v in seen.values()))
PY
)
((dups == 0)) || fg_fail "$dups profiles reached the server twice"
[[ ! -s $recv/errors.log ]] || { cat "$recv/errors.log" >&2; fg_fail "requests broke the ingest API"; }
fg_pass "8 faults: each said, nothing kept lost, each recovered; $(got) profiles received, none twice"
