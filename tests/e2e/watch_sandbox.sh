#!/bin/bash
# SPDX-License-Identifier: MIT
#
# watch_sandbox - the agent socket's confined process. `watch` serves a JVM compiling new code
# all the time (ClassChurn: a class generation every 700 ms); its child that runs the socket
# must hold no privilege (/proc/PID/status: uid and gid not 0, no capability in the effective,
# permitted and bounding sets, seccomp filter mode, no_new_privs). The child is killed with
# SIGSEGV, then SIGKILL, then made to call a system call its filter forbids (test trigger:
# FG_TEST_SANDBOX_TRIP, SIGUSR1), then stopped (SIGSTOP: hung): each time a new child runs within
# 1 s (2.5 s for the hang: pinged on the next whole second after 0.5 s without a frame, no
# answer within 0.5 s), watch says why, the parent never dies, the JVM reconnects within 4 s,
# the map covers >= 95% of what jcmd Compiler.perfmap lists within 2 s, and a class generation
# compiled after the reconnect is in the map within 2 s. The exit summary counts every restart
# by its cause. Without CAP_SETUID, CAP_SETGID and CAP_SYS_CHROOT (setpriv drops them) watch
# warns of each and the child stays uid 0 with no capability and seccomp on. In a socket
# directory only root may search (0700), watch says once that the child cannot probe its socket,
# and does not restart it.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init watch_sandbox
fg_require_built
# Under ASan (the e2e-asan run) the signals below must end the child as in a plain build: they
# are not faults, and ASan's report of a SIGSEGV would fail the run.
[[ -z ${ASAN_OPTIONS:-} ]] || export ASAN_OPTIONS=$ASAN_OPTIONS:handle_segv=0

export FG_TEST_SANDBOX_TRIP=1
fg_watch_start
unset FG_TEST_SANDBOX_TRIP

# The running child of watch whose name is fg-sandbox (none: status 1). A child that ended and
# is not reaped yet (a zombie) is not it; two running at once is a failure.
sandbox_pid() {
	local p st found=
	for p in $(pgrep -P "$FG_WATCH_PID" 2>/dev/null); do
		[[ $(cat "/proc/$p/comm" 2>/dev/null) == fg-sandbox ]] || continue
		st=$(fg_proc_state "$p")
		[[ -n $st && $st != [ZX] ]] || continue
		[[ -z $found ]] || fg_fail "two fg-sandbox children of watch run: $found and $p"
		found=$p
	done
	[[ -n $found ]] && echo "$found"
}
field() { K="$2:" awk '$1 == ENVIRON["K"] {$1 = ""; print substr($0, 2)}' "/proc/$1/status"; }
confined() {
	local p=$1 f
	for f in Uid Gid; do
		for v in $(field "$p" $f); do
			[[ $v != 0 ]] || fg_fail "child $p: $f is '$(field "$p" $f)' (a 0 in it)"
		done
	done
	for f in CapEff CapPrm CapBnd CapAmb; do
		[[ $(field "$p" $f) == 0000000000000000 ]] || fg_fail "child $p: $f $(field "$p" $f)"
	done
	[[ $(field "$p" Seccomp) == 2 ]] || fg_fail "child $p: Seccomp $(field "$p" Seccomp), not 2 (filter)"
	[[ $(field "$p" NoNewPrivs) == 1 ]] || fg_fail "child $p: NoNewPrivs $(field "$p" NoNewPrivs)"
	[[ $(readlink "/proc/$p/root") == "$FG_SOCK_DIR" ]] || fg_fail "child $p: root is $(readlink "/proc/$p/root"), not $FG_SOCK_DIR"
}
alive() { kill -0 "$FG_WATCH_PID" 2>/dev/null || fg_fail "fgcollect watch died: $1"; }

fg_wait 3 sandbox_pid >/dev/null || fg_fail "no fg-sandbox child of watch $FG_WATCH_PID"
c=$(sandbox_pid)
confined "$c"
fg_log "child $c: uid/gid $(field "$c" Uid | cut -f1)/$(field "$c" Gid | cut -f1), no capability, seccomp filter, no_new_privs, root $FG_SOCK_DIR"

# Neither process maps libcurl or libdebuginfod (nor the TLS, Kerberos and LDAP libraries they
# bring): a watch without --push and without DEBUGINFOD_URLS never opens them.
libs() { awk '$6 ~ /\.so/ {print $6}' "/proc/$1/maps" | sort -u; }
for p in "$FG_WATCH_PID" "$c"; do
	if libs "$p" | grep -E 'lib(curl|debuginfod)'; then
		fg_fail "process $p maps libcurl or libdebuginfod (above), which only --push and DEBUGINFOD_URLS need"
	fi
done
fg_log "libraries mapped: parent $(libs "$FG_WATCH_PID" | wc -l), child $(libs "$c" | wc -l)"

# Idle (no JVM yet): the child is never taken for hung, and it is not woken to prove it: the
# parent sees it asleep in its poll (/proc/PID/syscall). Each side's wakeups (its main thread's
# runs, /proc/PID/schedstat): about 1 a second for the parent (its check), none for the child
# (at most 1 in 4 s is let pass).
runs() { local r; read -r _ _ r <"/proc/$1/schedstat" && echo "$r"; }
rp0=$(runs "$FG_WATCH_PID")
rc0=$(runs "$c")
sleep 4
[[ $(sandbox_pid) == "$c" ]] || fg_fail "idle for 4 s, the child $c was replaced by $(sandbox_pid): $(grep 'sandboxed process ended' "$FG_WATCH_LOG")"
rc=$(($(runs "$c") - rc0))
((rc <= 1)) || fg_fail "idle for 4 s, the child's main thread ran $rc times (woken for nothing)"
fg_log "idle 4 s: the same child; wakeups a second: parent $(awk "BEGIN { printf \"%.1f\", ($(runs "$FG_WATCH_PID") - $rp0) / 4 }"), child $(awk "BEGIN { printf \"%.2f\", $rc / 4 }")"
# Its counters still reach the exit summary: asked for them at the end, the idle child tells
# the probes its watchdog made (one a second).
fg_watch_stop_clean
np=$(sed -n 's/.*watchdog \([0-9]*\) probes.*/\1/p' "$FG_WATCH_LOG" | tail -1)
((${np:-0} >= 3)) || fg_fail "after 4 s idle the summary counts ${np:-no} watchdog probes (the child's counters were not asked for): $(grep summary "$FG_WATCH_LOG")"
fg_log "idle child's counters in the summary: $np watchdog probes"
export FG_TEST_SANDBOX_TRIP=1
fg_watch_start
unset FG_TEST_SANDBOX_TRIP
fg_wait 3 sandbox_pid >/dev/null || fg_fail "no fg-sandbox child of the second watch $FG_WATCH_PID"

fg_jvm_start churn ClassChurn 400 700
pid=$FG_HOSTPID
map=$(fg_map_path "$pid")
fg_wait_log churn 30 'ClassChurn gen 2 start'
fg_wait 10 fg_map_ok "$pid" 'ChurnGen' || fg_fail "no map naming ChurnGen for pid $pid"

gen_now() { sed -n 's/^ClassChurn gen \([0-9]*\) start.*/\1/p' "${FG_CT_LOG[churn]}" | tail -1; }
gen_after() { (($(gen_now) > $1)); }
connects() { grep -c "watch: connect: pid $pid (" "$FG_WATCH_LOG" || true; }
reconnected() { (($(connects) > $1)); }
complete() {
	local cov
	fg_map_ok "$pid" 'ChurnGen' || return 1
	read -r cov _ <<<"$(fg_map_coverage "$FG_TMP/truth.map" "$map")"
	((cov >= 95))
}
in_map() { grep -q "ChurnGen$(printf %04d "$1")" "$map" 2>/dev/null; }
# What the map holds of ClassChurn: its lines, and the generations it names (a failure's detail).
map_gens() {
	echo "$(wc -l <"$map" 2>/dev/null || echo no) lines, generations $(grep -o 'ChurnGen[0-9]*' "$map" 2>/dev/null | sort -u | sed 's/ChurnGen0*//' | sort -n | tr '\n' ' ')"
}
worst=0
declare -A why=([SEGV]='killed by a signal' [KILL]='killed by a signal'
	[USR1]='killed for a forbidden system call' [STOP]='hung: no answer to a ping')
# Restarts the watchdog made on its own: a listener that stopped accepting.
wedged_now() { grep -cF "ended (its listener stopped accepting" "$FG_WATCH_LOG" || true; }
n=0
counted_wedged=0
for how in SEGV KILL USR1 STOP; do
	n=$((n + 1))
	old=$(sandbox_pid) || fg_fail "$how: no child before the kill"
	conns=$(connects)
	t0=$(fg_ms)
	kill "-$how" "$old"
	if [[ $how == STOP ]]; then
		stopped() { [[ $(fg_proc_state "$old") == [Tt] ]]; }
		fg_wait 1 stopped || fg_fail "STOP: child $old is not stopped (state '$(fg_proc_state "$old")')"
	fi
	new_child() { local n; n=$(sandbox_pid) && [[ $n != "$old" ]]; }
	# A stopped child is a hung one: found out by a ping it does not answer (within 2 s of
	# its last frame).
	lim=1
	[[ $how == STOP ]] && lim=3
	fg_wait "$lim" new_child || fg_fail "$how: no new child within $lim s of the signal (old $old)"
	c=$(sandbox_pid)
	ms=$(($(fg_ms) - t0))
	fg_log "$how: child $old replaced by $c in $ms ms"
	# the hang: the unanswered ping, then the restart, as fast as after a crash
	[[ $how != STOP ]] || ((ms <= 2500)) || fg_fail "STOP: the hung child was replaced after $ms ms (> 2500)"
	alive "after $how"
	confined "$c"
	# The restart this kill caused, numbered after every earlier one: those of the kills before,
	# and any the watchdog made on its own (a listener that stopped accepting: nng 1.5.2's
	# listener can stall when a dial is closed in mid-handshake, and the child is restarted).
	said="the agent socket's sandboxed process ended (${why[$how]}); started again"
	said_now() {
		local last
		last=$(grep -F "$said" "$FG_WATCH_LOG" | tail -n 1 | sed -n 's/.*started again (\([0-9]*\) restarts so far).*/\1/p')
		[[ -n $last ]] && ((last >= n))
	}
	fg_wait 2 said_now || fg_fail "$how: watch did not say '$said (at least $n restarts so far)' within 2 s of the new child"
	wedged=$(wedged_now)
	((wedged == 0)) || fg_log "$how: the watchdog restarted a stalled listener $wedged time(s) so far"
	n=$((n + wedged - counted_wedged))
	counted_wedged=$wedged
	# The agent reconnects: it redials within 0.5 s, and a socket whose dial nng gave up (one
	# that reached the dying child) is replaced once the new child's socket file is there
	# (jvmti-agent/stream/link.c). Code that lived and died wholly before then is never named
	# (the replay sends the live code).
	fg_wait 4 reconnected "$conns" || fg_fail "$how: the JVM (pid $pid) did not reconnect within 4 s of the new child"
	rc_ms=$(($(fg_ms) - t0))
	g0=$(gen_now)
	# A generation started after the reconnect: its code is compiled after it, and must be named.
	fg_wait 5 gen_after "$g0" || fg_fail "$how: ClassChurn made no new generation"
	g=$(gen_now)
	t1=$(fg_ms)
	fg_wait 3 in_map "$g" || fg_fail "$how: ChurnGen$(printf %04d "$g"), compiled after the reconnect, not in the map within 3 s (map: $(map_gens); ClassChurn at generation $(gen_now))"
	lat=$(($(fg_ms) - t1))
	fg_jvm_truth "$pid" "$FG_TMP/truth.map" || fg_fail "jcmd Compiler.perfmap failed"
	t2=$(fg_ms)
	fg_wait 2 complete || fg_fail "$how: map below 95% of jcmd's within 2 s: $(fg_map_coverage "$FG_TMP/truth.map" "$map") ($(fg_map_lint "$map"))"
	cov_ms=$(($(fg_ms) - t2))
	fg_log "$how: the JVM reconnected $rc_ms ms after the signal; generation $g named $lat ms after it started; coverage $(fg_map_coverage "$FG_TMP/truth.map" "$map") after $cov_ms ms"
	((lat > worst)) && worst=$lat
	((lat <= 2000)) || fg_fail "$how: generation $g took $lat ms (> 2000) to reach the map"
done
alive "at the end"
fg_watch_stop_clean
wedged=$(wedged_now)
grep -q "sandbox $((4 + wedged)) restarts (2 crashed, 1 forbidden system calls, 1 hung, $wedged wedged" "$FG_WATCH_LOG" ||
	fg_fail "summary does not count $((4 + wedged)) restarts by cause ($wedged of a stalled listener): $(grep summary "$FG_WATCH_LOG")"

# Without CAP_SETUID, CAP_SETGID and CAP_SYS_CHROOT (a container given only what profiling
# needs): watch says what the child could not shed and how to lift it; the child stays uid 0,
# with no capability and seccomp on, and the JVM's agent reconnects to it.
real=$FGCOLLECT
printf '#!/bin/sh\nexec setpriv --bounding-set -setuid,-setgid,-sys_chroot "%s" "$@"\n' "$real" >"$FG_TMP/nocaps"
chmod +x "$FG_TMP/nocaps"
FGCOLLECT=$FG_TMP/nocaps fg_watch_start
fg_wait 3 sandbox_pid >/dev/null || fg_fail "without SETUID/SETGID/SYS_CHROOT: no fg-sandbox child"
c=$(sandbox_pid)
for w in 'runs as uid 0 .*--cap-add SETUID --cap-add SETGID' 'a chroot needs CAP_SYS_CHROOT (--cap-add SYS_CHROOT)'; do
	grep -q "warning: the agent socket's process .*$w" "$FG_WATCH_LOG" ||
		fg_fail "without SETUID/SETGID/SYS_CHROOT watch does not warn '$w': $(grep warning "$FG_WATCH_LOG")"
done
read -r u _ <<<"$(field "$c" Uid)"
[[ $u == 0 ]] || fg_fail "without SETUID: child $c has uid $(field "$c" Uid)"
for f in CapEff CapPrm CapBnd; do
	[[ $(field "$c" $f) == 0000000000000000 ]] || fg_fail "without SETUID: child $c $f $(field "$c" $f)"
done
[[ $(field "$c" Seccomp) == 2 ]] || fg_fail "without SETUID: child $c Seccomp $(field "$c" Seccomp)"
fg_wait 10 grep -q "connect: pid $pid (" "$FG_WATCH_LOG" || fg_fail "without SETUID: the JVM (pid $pid) did not reconnect"
fg_log "without SETUID/SETGID/SYS_CHROOT: child $c uid 0, no capability, seccomp filter; $(grep -c "warning: the agent socket's process" "$FG_WATCH_LOG") warnings; the JVM reconnected"
fg_watch_stop_clean
FGCOLLECT=$real

# A socket directory only root may search (mode 0700): the child, at its own uid, cannot reach
# its socket to probe it. watch says so once and keeps the child: a probe refused by the
# directory is no sign of a stalled listener, and restarting would only make the agents that
# can connect (root's) reconnect and replay every second.
closed=$FG_TMP/closed
mkdir -m 0700 "$closed"
"$FGCOLLECT" watch --socket "$closed/fgcollect.sock" --ctl "$FG_TMP/ctl/closed.sock" 2>"$FG_TMP/closed.log" &
cpid=$!
fg_wait 5 test -S "$closed/fgcollect.sock" || fg_fail "0700 socket directory: watch did not listen: $(cat "$FG_TMP/closed.log")"
sleep 4
kill -0 "$cpid" 2>/dev/null || fg_fail "0700 socket directory: watch exited: $(cat "$FG_TMP/closed.log")"
kill -TERM "$cpid"
wait "$cpid" || true
grep -q "sandboxed process (--sandbox-uid) cannot reach $closed/fgcollect.sock: Permission denied on its directory.*chmod 0755 or 0711" "$FG_TMP/closed.log" ||
	fg_fail "0700 socket directory: watch does not say why its child cannot probe: $(cat "$FG_TMP/closed.log")"
[[ $(grep -c 'cannot reach' "$FG_TMP/closed.log") == 1 ]] || fg_fail "0700 socket directory: said more than once: $(cat "$FG_TMP/closed.log")"
if grep -q 'sandboxed process ended' "$FG_TMP/closed.log" || ! grep -q 'sandbox 0 restarts' "$FG_TMP/closed.log"; then
	fg_fail "0700 socket directory: the child was restarted: $(cat "$FG_TMP/closed.log")"
fi
fg_log "0700 socket directory: said once why the child cannot probe its socket, no restart in 4 s"

fg_pass "child confined; SIGSEGV, SIGKILL and a forbidden system call each restarted it within 1 s, SIGSTOP (a hang) within 2.5 s; new code named within $worst ms; a socket directory closed to the child said once, no restart"
