# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# lib.sh - helpers for the end-to-end tests: namespace containers running real JVMs with the
# agent, a real `fgcollect watch` on a private socket directory, stock perf, and checks.
#
#   . "$(dirname "$0")/../harness/lib.sh"
#   fg_init my_test            # root check, $FG_TMP, cleanup trap
#   fg_watch_start             # fgcollect watch --socket $FG_SOCK_DIR/fgcollect.sock
#   fg_jvm_start web HotLoop 30
#   fg_wait 10 fg_map_ok "$FG_HOSTPID" 'HotLoop::'
#
# Invariant: everything a test starts (containers, watch daemons, temp files, maps of its
# JVMs) is registered here and removed by the EXIT trap, whatever way the test ends. A test
# fails (exit 1) on any unmet expectation, a missing tool included, and skips (exit 77) only
# when the kernel refuses what it needs (namespaces, perf_event_open), saying why, or when
# FG_ALLOW_MISSING_TOOLS=1 lets it skip for a tool that is not installed.
#
# Environment (set by fg_e2e_test in tests/CMakeLists.txt): FG_SOURCE_DIR, FG_BUILD_DIR,
# FGCOLLECT (path of fgcollect), FGAGENT (path of libfgagent.so). Optional: FG_JDK (JDK for
# fg_jvm_start, default JDK 17), FG_ROOT (an image root every container runs on, with FG_JDK a
# JDK inside it: fg_image_root sets both), FG_KEEP_TMP=1 keeps $FG_TMP for debugging.

FG_HARNESS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FG_SOURCE_DIR=${FG_SOURCE_DIR:-$(cd "$FG_HARNESS_DIR/../.." && pwd)}
FG_BUILD_DIR=${FG_BUILD_DIR:-$FG_SOURCE_DIR/build}
FGCOLLECT=${FGCOLLECT:-$FG_BUILD_DIR/collector/fgcollect}
FGAGENT=${FGAGENT:-$FG_BUILD_DIR/jvmti-agent/libfgagent.so}
FG_CONTAINER=$FG_HARNESS_DIR/fgcontainer
# The Java workloads (tests/java), one jar; containers see its directory at /app.
FG_JAVA_JAR=$FG_BUILD_DIR/tests/java/fg-workloads.jar
# Where the agent and the shared socket directory appear inside every container (contract).
FG_AGENT_IN_CT=/opt/fgcollect/lib/libfgagent.so
FG_SOCK_IN_CT=/var/run/fgcollect/fgcollect.sock
FG_DEFAULT_JDK=/usr/lib/jvm/java-17-openjdk-amd64

FG_TEST=${FG_TEST:-$(basename "$0" .sh)}
FG_TMP=
FG_SOCK_DIR=
FG_SOCK=
FG_WATCH_PID=
FG_WATCH_LOG=
FG_CTL=
FG_HOSTPID=
FG_WATCH_N=0
declare -gA FG_CT_FPID=()   # name -> PID of its fgcontainer process
declare -gA FG_CT_HOSTPID=() # name -> host PID of the container's command (the JVM)
declare -gA FG_CT_LOG=()    # name -> file with the container's stdout and stderr
FG_CLEAN_FILES=()
FG_VERDICT= # fail, skip or pass once fg_fail, fg_skip or fg_pass said so

# ---------------------------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------------------------
fg_log() {
	printf '[%s %(%T)T] %s\n' "$FG_TEST" -1 "$*" >&2
}

# fg_fail MSG: print MSG, the tail of the watch log and of every container log, exit 1.
# The FAIL line always carries a reason: MSG's first line that is not blank (the rest follows
# it); a blank MSG, or one ending in a colon (a capture that came back empty), names the line
# of the script that called fg_fail.
fg_fail() {
	local n msg=$* rest= at="${BASH_SOURCE[1]:-$0}:${BASH_LINENO[0]:-?}"
	at=${at##*/}
	FG_VERDICT=fail
	msg=${msg#"${msg%%[![:space:]]*}"} # leading blanks and empty lines
	if [[ $msg == *$'\n'* ]]; then
		rest=${msg#*$'\n'}
		msg=${msg%%$'\n'*}
	fi
	msg=${msg%"${msg##*[![:space:]]}"} # trailing blanks
	if [[ -z $msg ]]; then
		msg="no reason given (fg_fail called with an empty message at $at)"
	elif [[ $msg == *: ]]; then
		msg="$msg (nothing: an empty value at $at)"
	fi
	printf '[%s] FAIL: %s\n' "$FG_TEST" "$msg" >&2
	rest=${rest%"${rest##*[![:space:]]}"}
	[[ -z $rest ]] || printf '%s\n' "$rest" >&2
	if [[ -n $FG_WATCH_LOG && -s $FG_WATCH_LOG ]]; then
		echo "--- last lines of the watch log ($FG_WATCH_LOG):" >&2
		tail -n 20 "$FG_WATCH_LOG" >&2
	fi
	for n in "${!FG_CT_LOG[@]}"; do
		[[ -s ${FG_CT_LOG[$n]} ]] || continue
		echo "--- last lines of container $n:" >&2
		tail -n 10 "${FG_CT_LOG[$n]}" >&2
	done
	# A test's own detail of the failure (a function it names in FG_ON_FAIL).
	[[ -z ${FG_ON_FAIL:-} ]] || "$FG_ON_FAIL" >&2 || true
	# Once more as the last line: a log cut in the middle (CI keeps a test's head and tail)
	# still shows why.
	printf '[%s] FAIL (%s): %s\n' "$FG_TEST" "$at" "$msg" >&2
	exit 1
}

# fg_skip REASON: exit 77 (ctest SKIP_RETURN_CODE). Only for what the kernel refuses.
fg_skip() {
	FG_VERDICT=skip
	printf '[%s] SKIP: %s\n' "$FG_TEST" "$*" >&2
	exit 77
}

# fg_missing_tool WHAT: a tool `make test` installs (scripts/install-deps.sh) is missing: a
# failure, or a skip (77) when the caller set FG_ALLOW_MISSING_TOOLS=1 knowingly.
fg_missing_tool() {
	[[ ${FG_ALLOW_MISSING_TOOLS:-0} == 1 ]] && fg_skip "$* is not installed (FG_ALLOW_MISSING_TOOLS=1)"
	fg_fail "$* is not installed: scripts/install-deps.sh installs it (FG_ALLOW_MISSING_TOOLS=1 skips instead)"
}

# fg_pass MSG: the closing line of a passing test.
fg_pass() {
	FG_VERDICT=pass
	printf '[%s] PASS: %s\n' "$FG_TEST" "$*" >&2
	exit 0
}

# ---------------------------------------------------------------------------------------------
# Setup and teardown
# ---------------------------------------------------------------------------------------------
# fg_init [NAME]: check root and the built binaries, create $FG_TMP, install the cleanup trap.
fg_init() {
	[[ $# -gt 0 ]] && FG_TEST=$1
	[[ $(id -u) == 0 ]] || fg_fail "end-to-end tests run as root (namespaces, perf, /tmp maps)"
	FG_TMP=$(mktemp -d "/tmp/fge2e.$FG_TEST.XXXXXX")
	chmod 0755 "$FG_TMP"
	mkfifo -m 0600 "$FG_TMP/.sleep" # fg_sleep's
	trap fg_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	fg_check_kernel
}

# fg_check_kernel: skip (77) if this kernel refuses namespaces or perf_event_open; fail if
# perf itself is missing (see fg_missing_tool).
fg_check_kernel() {
	local err
	if ! err=$(unshare --fork --pid --mount --uts --ipc --net --cgroup true 2>&1); then
		fg_skip "the kernel refuses unshare(PID|mount|UTS|IPC|net|cgroup): $err"
	fi
	# Debian's /usr/bin/perf is a wrapper that fails when this kernel's perf is absent.
	err=$(perf --version 2>&1) || fg_missing_tool "perf (Debian package linux-perf: $err)"
	if ! err=$(perf stat -e cpu-clock -x, -- true 2>&1 >/dev/null); then
		fg_skip "perf_event_open(cpu-clock) refused: $err"
	fi
}

# fg_require_built: fgcollect and libfgagent.so must exist (absence is a failure, not a skip).
fg_require_built() {
	[[ -x $FGCOLLECT ]] || fg_fail "fgcollect not built at '$FGCOLLECT' (set FGCOLLECT)"
	[[ -f $FGAGENT ]] || fg_fail "libfgagent.so not built at '$FGAGENT' (set FGAGENT)"
}

fg_cleanup() {
	local rc=$? n p cmd=$BASH_COMMAND
	trap - EXIT INT TERM
	set +e # teardown is best effort; the test's own status is what counts
	# Ended non-zero with no verdict: a command failed under errexit (its own message, if any,
	# is above), or a signal. Say which, in the one line a reader looks for.
	if [[ $rc != 0 && $rc != 77 && -z $FG_VERDICT ]]; then
		cmd=${cmd//$'\n'/ }
		case $rc in
		130 | 143) printf '[%s] FAIL: interrupted (status %s)\n' "$FG_TEST" "$rc" >&2 ;;
		*) printf '[%s] FAIL: status %s from `%s`, which ended the test (errexit)\n' \
			"$FG_TEST" "$rc" "${cmd:0:300}" >&2 ;;
		esac
	fi
	for n in "${!FG_CT_FPID[@]}"; do
		fg_container_stop "$n" 1 >/dev/null 2>&1 || true
	done
	[[ -n $FG_WATCH_PID ]] && fg_watch_stop KILL >/dev/null 2>&1
	"$FG_CONTAINER" --gc 2>/dev/null || true
	for p in "${FG_CLEAN_FILES[@]}"; do
		rm -f -- "$p"
	done
	# A sanitizer report in any daemon's or command's log fails the test, passed or not, and
	# is shown (the e2e-asan and e2e-tsan tests' FAIL_REGULAR_EXPRESSION matches it too).
	if [[ -n $FG_TMP && -d $FG_TMP ]]; then
		for p in $(grep -rlIE 'ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer|runtime error:' \
			--include='*.log' --include='*.err' --include='*.out' "$FG_TMP" 2>/dev/null); do
			echo "[$FG_TEST] FAIL: sanitizer report in $p:" >&2
			head -n 60 "$p" >&2
			[[ $rc == 0 || $rc == 77 ]] && rc=1
		done
	fi
	if [[ -n $FG_TMP && -d $FG_TMP ]]; then
		if [[ ${FG_KEEP_TMP:-0} == 1 || ($rc != 0 && $rc != 77 && ${CI:-} != true) ]]; then
			echo "[$FG_TEST] kept $FG_TMP for inspection" >&2
		else
			rm -rf --one-file-system "$FG_TMP"
		fi
	fi
	exit "$rc"
}

# fg_clean_later FILE...: remove these files at exit.
fg_clean_later() {
	FG_CLEAN_FILES+=("$@")
}

# ---------------------------------------------------------------------------------------------
# Waiting
# ---------------------------------------------------------------------------------------------
# fg_sleep SECONDS: sleep without starting a process (a waiting loop that ran `sleep` and
# `date` every 50 ms kept a third of a CPU busy beside the JVM it waited for): a read that
# times out on a FIFO nobody writes, $FG_TMP/.sleep once fg_init made $FG_TMP, else `sleep`.
fg_sleep() {
	if [[ -n $FG_TMP && -p $FG_TMP/.sleep ]]; then
		read -rt "$1" <>"$FG_TMP/.sleep" || true
	else
		sleep "$1"
	fi
}

# fg_wait TIMEOUT_S CMD [ARG...]: run CMD every 50 ms until it succeeds; 1 on timeout.
fg_wait() {
	local timeout=$1 deadline
	shift
	deadline=$((${EPOCHREALTIME/./} + ${timeout%.*} * 1000000))
	while :; do
		"$@" && return 0
		((${EPOCHREALTIME/./} < deadline)) || return 1
		fg_sleep 0.05
	done
}

# fg_wait_file TIMEOUT_S FILE: until FILE exists and is not empty.
fg_wait_file() {
	fg_wait "$1" test -s "$2"
}

# fg_cpu_ns PID: on-CPU nanoseconds of all threads of PID (schedstat; bash builtins only, no
# fork, so it costs the measured machine next to nothing), 0 when it is gone.
fg_cpu_ns() {
	local t ns _ sum=0
	for t in /proc/"$1"/task/*; do
		read -r ns _ 2>/dev/null <"$t/schedstat" && sum=$((sum + ns))
	done
	echo "$sum"
}

# fg_free_port: a TCP port on 127.0.0.1 that nobody listens on now (for a server the test starts).
fg_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# fg_ms: CLOCK_REALTIME in milliseconds (for measuring intervals in tests).
fg_ms() {
	echo $((${EPOCHREALTIME/./} / 1000))
}

# ---------------------------------------------------------------------------------------------
# JDKs and Java workloads
# ---------------------------------------------------------------------------------------------
# fg_jdks: every JDK under /usr/lib/jvm (has bin/java and bin/javac), one line each, resolved
# through symlinks and deduplicated; the default JDK 17 first when present. FG_E2E_JDKS=default:
# only the default JDK (ctest sets it for the tests whose known answers the JDK matrix,
# tests/e2e/jdk_matrix.sh, also checks on every other JDK).
fg_jdks() {
	local d r
	declare -A seen=()
	if [[ ${FG_E2E_JDKS:-all} == default ]]; then
		readlink -f "$FG_DEFAULT_JDK"
		return
	fi
	for d in "$FG_DEFAULT_JDK" /usr/lib/jvm/*; do
		[[ -x $d/bin/java && -x $d/bin/javac ]] || continue
		r=$(readlink -f "$d")
		[[ -n ${seen[$r]:-} ]] && continue
		seen[$r]=1
		echo "$r"
	done
}

# fg_image_root SUITE N: run the containers of this test on Debian SUITE's image root with
#   OpenJDK N (tests/images/jdkroot.sh makes it once, then reuses it): that image's own /usr,
#   glibc and JDK, as a JVM in a container built FROM that image has. Sets FG_ROOT (the root's
#   host path) and FG_JDK (the JDK's path inside it, fg_root_jdk). Fails the test when the root
#   cannot be made; never skips.
fg_image_root() {
	local suite=$1 n=$2 out
	out=$("$FG_SOURCE_DIR/tests/images/jdkroot.sh" "$suite" "$n" 2>"$FG_TMP/jdkroot.err") ||
		fg_fail "no $suite image root with OpenJDK $n: $(cat "$FG_TMP/jdkroot.err")"
	FG_ROOT=$out
	FG_JDK=$(fg_root_jdk "$FG_ROOT" "$n") ||
		fg_fail "image root $FG_ROOT has no OpenJDK $n under /usr/lib/jvm"
	fg_log "image root $FG_ROOT: $(fg_root_glibc "$FG_ROOT"), JDK $FG_JDK"
}

# fg_root_jdk ROOT N: OpenJDK N's home inside the image root ROOT,
#   /usr/lib/jvm/java-N-openjdk-amd64 (a path inside the container, not on the host); fails if
#   it has no java there (JDK 8 has it under jre/bin).
fg_root_jdk() {
	local d=/usr/lib/jvm/java-$2-openjdk-amd64
	[[ -x $1$d/bin/java || -x $1$d/jre/bin/java ]] || return 1
	echo "$d"
}

# fg_root_java ROOT N: the path of OpenJDK N's java inside the image root ROOT.
fg_root_java() {
	local d
	d=$(fg_root_jdk "$1" "$2") || return 1
	if [[ -x $1$d/bin/java ]]; then echo "$d/bin/java"; else echo "$d/jre/bin/java"; fi
}

# fg_root_glibc ROOT: "glibc X.Y", the C library version of the image root ROOT.
fg_root_glibc() {
	local f
	for f in "$1"/usr/lib/x86_64-linux-gnu/libc.so.6 "$1"/lib/x86_64-linux-gnu/libc.so.6; do
		[[ -e $f ]] || continue
		LC_ALL=C grep -aoE -m1 'GNU C Library [^)]*\) (stable )?release version [0-9]+\.[0-9]+' "$f" |
			sed -E 's/.* ([0-9]+\.[0-9]+)$/glibc \1/'
		return 0
	done
	return 1
}

# fg_jdk_major JDKDIR: the feature release (17, 25, ...).
fg_jdk_major() {
	sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release" 2>/dev/null
}

# fg_java_jar: fail unless the tests/java workloads are built: the jar $FG_JAVA_JAR (CMake
# target fg_java_workloads, rebuilt by the build when a source changes).
fg_java_jar() {
	[[ -f $FG_JAVA_JAR ]] ||
		fg_fail "$FG_JAVA_JAR not built (cmake --build \$FG_BUILD_DIR --target fg_java_workloads)"
}

# ---------------------------------------------------------------------------------------------
# fgcollect watch
# ---------------------------------------------------------------------------------------------
# fg_watch_start [--dir DIR] [WATCH_ARG...]: start `fgcollect watch --socket DIR/fgcollect.sock`
# (DIR defaults to $FG_TMP/sock, created 0755) with its stderr in $FG_WATCH_LOG; wait up to 5 s
# (FG_WATCH_START_S: a sanitizer build starts slower) for the socket. Sets FG_SOCK_DIR, FG_SOCK,
# FG_WATCH_PID, and FG_CTL (the daemon's private
# control socket, when this fgcollect has --ctl).
fg_watch_start() {
	if [[ ${1-} == --dir ]]; then
		FG_SOCK_DIR=$2
		shift 2
	fi
	FG_SOCK_DIR=${FG_SOCK_DIR:-$FG_TMP/sock}
	mkdir -p "$FG_SOCK_DIR"
	chmod 0755 "$FG_SOCK_DIR"
	FG_SOCK=$FG_SOCK_DIR/fgcollect.sock
	FG_WATCH_N=$((FG_WATCH_N + 1))
	FG_WATCH_LOG=$FG_TMP/watch.$FG_WATCH_N.log
	# A private control channel (root-only directory, outside the shared one), so a test's
	# daemon never meets another daemon's or a user's; `fgcollect record --ctl $FG_CTL` uses it.
	local -a ctl=()
	# (the whole help first: grep -q leaving early would SIGPIPE a long one, failing the pipe)
	if grep -q -- '--ctl' <<<"$("$FGCOLLECT" watch --help 2>/dev/null)"; then
		mkdir -p -m 0700 "$FG_TMP/ctl"
		FG_CTL=$FG_TMP/ctl/ctl.sock
		ctl=(--ctl "$FG_CTL")
	fi
	"$FGCOLLECT" watch --socket "$FG_SOCK" "${ctl[@]}" "$@" >"$FG_TMP/watch.$FG_WATCH_N.out" 2>"$FG_WATCH_LOG" &
	FG_WATCH_PID=$!
	fg_wait "${FG_WATCH_START_S:-5}" test -S "$FG_SOCK" || {
		local why=''
		if ! kill -0 "$FG_WATCH_PID" 2>/dev/null; then
			# (its status must not end an errexit script before fg_fail shows its log)
			local st=0
			wait "$FG_WATCH_PID" || st=$?
			why=" (it exited with status $st)"
			FG_WATCH_PID=
		fi
		fg_fail "fgcollect watch did not create $FG_SOCK within ${FG_WATCH_START_S:-5} s$why"
	}
	fg_log "watch started (pid $FG_WATCH_PID, socket $FG_SOCK)"
}

# fg_watch_stop [SIGNAL]: stop the watch daemon (default TERM, 5 s, then KILL) and reap it.
# Returns its exit status (137 if it had to be killed).
fg_watch_stop() {
	local sig=${1:-TERM} rc=0
	[[ -n $FG_WATCH_PID ]] || return 0
	kill "-$sig" "$FG_WATCH_PID" 2>/dev/null || true
	if ! fg_wait 5 fg__dead "$FG_WATCH_PID"; then
		kill -KILL "$FG_WATCH_PID" 2>/dev/null || true
	fi
	wait "$FG_WATCH_PID" 2>/dev/null || rc=$?
	FG_WATCH_PID=
	return "$rc"
}

# fg_proc_state PID: the one-letter state of PID (/proc/PID/stat, after the name, which may
# hold spaces), empty when it is gone.
fg_proc_state() {
	local s
	{ read -r s <"/proc/$1/stat"; } 2>/dev/null || return 0
	s=${s##*) }
	echo "${s%% *}"
}

fg__dead() {
	local s
	kill -0 "$1" 2>/dev/null || return 0
	{ read -r s <"/proc/$1/stat"; } 2>/dev/null || return 0
	s=${s##*) }
	[[ ${s%% *} == Z ]]
}

# fg_watch_stop_clean: SIGTERM must end the daemon within 5 s, by exiting 0 or by the default
# action (143); a hang or a crash fails the test.
fg_watch_stop_clean() {
	local rc=0
	fg_watch_stop TERM || rc=$?
	[[ $rc == 0 || $rc == 143 ]] || fg_fail "fgcollect watch ended with status $rc on SIGTERM (expected 0)"
	[[ $rc == 0 ]] || fg_log "note: fgcollect watch does not handle SIGTERM (status $rc)"
}

# ---------------------------------------------------------------------------------------------
# Containers
# ---------------------------------------------------------------------------------------------
# fg_container_start NAME [FGCONTAINER_OPTION...] -- CMD [ARG...]
#   Run CMD in a namespace container (tests/harness/fgcontainer) in the background, with its
#   output in $FG_TMP/NAME.log; wait up to 15 s for it to run. Sets FG_HOSTPID (the host PID
#   of CMD), FG_CT_HOSTPID[NAME], FG_CT_LOG[NAME]. Skips if the kernel refuses namespaces.
fg_container_start() {
	local name=$1 pidfile log i
	shift
	pidfile=$FG_TMP/$name.pid
	log=$FG_TMP/$name.log
	rm -f "$pidfile"
	local -a root=()
	[[ -n ${FG_ROOT:-} ]] && root=(--root "$FG_ROOT")
	"$FG_CONTAINER" --name "$name" --pidfile "$pidfile" --cidfile "$FG_TMP/$name.cid" \
		"${root[@]}" "$@" >"$log" 2>&1 </dev/null &
	FG_CT_FPID[$name]=$!
	FG_CT_LOG[$name]=$log
	for ((i = 0; i < 300; i++)); do
		[[ -s $pidfile ]] && break
		if ! kill -0 "${FG_CT_FPID[$name]}" 2>/dev/null; then
			local rc=0
			wait "${FG_CT_FPID[$name]}" || rc=$?
			unset "FG_CT_FPID[$name]"
			[[ $rc == 77 ]] && fg_skip "container $name: $(tail -n 1 "$log")"
			fg_fail "container $name exited ($rc) before running its command"
		fi
		fg_sleep 0.05
	done
	[[ -s $pidfile ]] || fg_fail "container $name did not start within 15 s"
	FG_HOSTPID=$(<"$pidfile")
	FG_CT_HOSTPID[$name]=$FG_HOSTPID
	fg_clean_later "/tmp/perf-$FG_HOSTPID.map"
	fg_log "container $name: host pid $FG_HOSTPID, id $(cut -c1-12 "$FG_TMP/$name.cid" 2>/dev/null)"
}

# fg_container_stop NAME [TIMEOUT_S=10]: SIGTERM the container (its PID 1), wait; returns the
# container's exit status (143 for a JVM stopped by SIGTERM).
fg_container_stop() {
	local name=$1 timeout=${2:-10} fpid rc=0
	fpid=${FG_CT_FPID[$name]:-}
	[[ -n $fpid ]] || return 0
	kill -TERM "$fpid" 2>/dev/null || true
	if ! fg_wait "$timeout" fg__dead "$fpid"; then
		kill -KILL "$fpid" 2>/dev/null || true
	fi
	wait "$fpid" 2>/dev/null || rc=$?
	unset "FG_CT_FPID[$name]"
	return "$rc"
}

# fg_container_wait NAME [TIMEOUT_S=60]: wait for the container's command to exit by itself.
fg_container_wait() {
	local name=$1 timeout=${2:-60} fpid rc=0
	fpid=${FG_CT_FPID[$name]:-}
	[[ -n $fpid ]] || return 0
	fg_wait "$timeout" fg__dead "$fpid" || fg_fail "container $name still runs after ${timeout} s"
	wait "$fpid" 2>/dev/null || rc=$?
	unset "FG_CT_FPID[$name]"
	return "$rc"
}

# fg_status_text STATUS: an exit status in words ("exit 1", "killed by SIGABRT (134)").
fg_status_text() {
	local rc=$1 sig
	if ((rc > 128 && rc < 160)) && sig=$(kill -l $((rc - 128)) 2>/dev/null); then
		echo "killed by SIG$sig ($rc)"
	else
		echo "exit $rc"
	fi
}

# fg_container_alive NAME: 0 while the container's command runs. Once it has ended: reap the
# container, print its exit status in words, the JVM's fatal error report if it wrote one to
# its output (-XX:+ErrorFileToStderr) and the last lines of its output, and return 1. The
# container is then stopped as far as fg_container_stop is concerned.
fg_container_alive() {
	local name=$1 fpid hostpid rc=0 log how
	fpid=${FG_CT_FPID[$name]:-}
	hostpid=${FG_CT_HOSTPID[$name]:-}
	log=${FG_CT_LOG[$name]:-}
	if [[ -z $fpid ]]; then
		echo "container $name: not running (stopped before)" >&2
		return 1
	fi
	if [[ -n $hostpid ]] && ! fg__dead "$hostpid" && ! fg__dead "$fpid"; then
		return 0
	fi
	# The command is gone: fgcontainer tears the namespace down, then exits with its status.
	fg_wait 10 fg__dead "$fpid" || {
		echo "container $name: command $hostpid gone, fgcontainer $fpid still running" >&2
		return 1
	}
	wait "$fpid" 2>/dev/null || rc=$?
	unset "FG_CT_FPID[$name]"
	how=$(fg_status_text "$rc")
	# unshare passes a command's fatal signal on by raising it, which it cannot for SIGKILL.
	if [[ $rc == 1 && -n $log ]] && grep -q '^unshare: sigprocmask unblock failed' "$log"; then
		how="killed by SIGKILL (unshare says 'sigprocmask unblock failed' and exits 1)"
	fi
	echo "container $name (host pid $hostpid) ended: $how" >&2
	if [[ -n $log && -s $log ]]; then
		if grep -q 'A fatal error has been detected' "$log"; then
			echo "--- its fatal error report:" >&2
			grep -A 25 -m 1 'A fatal error has been detected' "$log" >&2
		fi
		echo "--- last lines of its output:" >&2
		tail -n 15 "$log" >&2
	else
		echo "--- it printed nothing" >&2
	fi
	return 1
}

# fg_container_cid NAME: the container's 64-hex id (as in /proc/PID/cgroup).
fg_container_cid() {
	cat "$FG_TMP/$1.cid"
}

# fg_agent_opt [SOCKET_IN_CONTAINER]: the -agentpath option every test JVM gets, with the agent
# options in FG_AGENT_OPTS (key=value,...) after the socket.
fg_agent_opt() {
	echo "-agentpath:$FG_AGENT_IN_CT=socket=${1:-$FG_SOCK_IN_CT}${FG_AGENT_OPTS:+,$FG_AGENT_OPTS}"
}

# fg_sock_dir: the agents' socket directory of this test, $FG_TMP/sock (0755, so a container's
#   uid reaches the socket in it), made and set as FG_SOCK_DIR.
fg_sock_dir() {
	FG_SOCK_DIR=$FG_TMP/sock
	mkdir -p "$FG_SOCK_DIR"
	chmod 0755 "$FG_SOCK_DIR"
}

# fg_jvm_start NAME MAINCLASS [ARG...]
#   A JVM in a container, the way a user deploys it: JDK at /opt/jdk (FG_JDK, default 17; with
#   FG_ROOT, the image root's JDK at its own path and /opt/jdk a symlink to it), the
#   workloads' jar at /app/fg-workloads.jar (the class path), the agent at /opt/fgcollect/lib/libfgagent.so, $FG_SOCK_DIR at
#   /var/run/fgcollect, uid 4242, the JVM as PID 1, -XX:+PreserveFramePointer and the agent.
#   Extra fgcontainer options: array FG_CT_OPTS (set it on its own line, bash cannot pass an
#   array as a command prefix); extra JVM options: array FG_JVM_OPTS; FG_NO_AGENT=1 leaves the
#   agent out. Sets FG_HOSTPID like fg_container_start.
fg_jvm_start() {
	local name=$1
	shift
	fg_java_jar
	[[ -n $FG_SOCK_DIR ]] || fg_sock_dir
	local -a ct=(--app "${FG_JAVA_JAR%/*}" --volume "$FG_SOCK_DIR")
	if [[ -z ${FG_ROOT:-} ]]; then
		ct+=(--jdk "${FG_JDK:-$FG_DEFAULT_JDK}")
	elif [[ -n ${FG_JDK:-} ]]; then
		ct+=(--jdk "$FG_JDK")
	fi
	local -a jvm=(java -XX:+PreserveFramePointer "${FG_JVM_OPTS[@]}")
	if [[ ${FG_NO_AGENT:-0} != 1 ]]; then
		[[ -f $FGAGENT ]] || fg_fail "libfgagent.so not built at '$FGAGENT'"
		ct+=(--agent "$FGAGENT")
		jvm+=("$(fg_agent_opt)")
	fi
	ct+=("${FG_CT_OPTS[@]}") # last, so a test's --volume DIR:ro overrides the default
	fg_container_start "$name" "${ct[@]}" -- "${jvm[@]}" -cp "/app/${FG_JAVA_JAR##*/}" "$@"
}
FG_CT_OPTS=()
FG_JVM_OPTS=()

# fg_wait_log NAME TIMEOUT_S REGEX: until the container's output matches REGEX.
fg_wait_log() {
	fg_wait "$2" grep -qE -- "$3" "${FG_CT_LOG[$1]}" ||
		fg_fail "container $1 did not print /$3/ within $2 s"
}

# ---------------------------------------------------------------------------------------------
# Perf maps
# ---------------------------------------------------------------------------------------------
# fg_map_path HOSTPID
fg_map_path() {
	echo "/tmp/perf-$1.map"
}

# fg_map_lint FILE: a well-formed map: a regular file (not a symlink), every line
# "START SIZE name" in hex without 0x, no two entries overlapping. The collector appends new code
# at the end between compactions, so lines are checked in address order, not file order.
fg_map_lint() {
	local f=$1
	[[ -f $f && ! -L $f ]] || { echo "$f is missing or not a regular file"; return 1; }
	LC_ALL=C awk '
	function hex(s,   i, c, v) {
		v = 0
		for (i = 1; i <= length(s); i++) {
			c = index("0123456789abcdef", substr(tolower(s), i, 1))
			v = v * 16 + c - 1
		}
		return v
	}
	!/^[0-9a-fA-F]+ [0-9a-fA-F]+ [^ ].*$/ || /^0[xX]/ || $2 ~ /^0[xX]/ {
		printf "line %d is not \"START SIZE name\": %s\n", NR, $0 > "/dev/stderr"; bad = 1; exit 1
	}
	{
		if (hex($2) == 0) { printf "line %d has size 0\n", NR > "/dev/stderr"; bad = 1; exit 1 }
		printf "%.0f %.0f %s\n", hex($1), hex($1) + hex($2), $0 > "/dev/stderr"
	}
	END { if (!bad && NR == 0) { print "map is empty" > "/dev/stderr"; exit 1 } }' "$f" 2>&1 >/dev/null |
		sort -n -k1,1 | LC_ALL=C awk '
	/^line |^map is empty/ { print; bad = 1; exit 1 }
	{
		if (NR > 1 && $1 + 0 < prev_end) {
			line = $0; sub(/^[0-9]+ [0-9]+ /, "", line)
			printf "entry overlaps another: %s (%s)\n", line, prev
			bad = 1; exit 1
		}
		prev_end = $2 + 0; prev = $0; sub(/^[0-9]+ [0-9]+ /, "", prev)
	}
	END { exit bad }'
}

# fg_map_ok HOSTPID [REGEX]: the JVM's map exists, lints clean and has a line matching REGEX.
fg_map_ok() {
	local f
	f=$(fg_map_path "$1")
	fg_map_lint "$f" >/dev/null || return 1
	[[ -z ${2-} ]] || grep -qE -- "$2" "$f"
}

# fg_map_lines HOSTPID: number of entries in the JVM's map (0 if absent).
fg_map_lines() {
	local f
	f=$(fg_map_path "$1")
	[[ -f $f ]] && wc -l <"$f" || echo 0
}

# fg_jvm_truth HOSTPID OUT: what the JVM itself says its code cache holds, as a perf map,
# taken the intrusive way users do today (jcmd Compiler.perfmap run inside the container as
# the JVM's uid). The JVM's own /tmp/perf-<nspid>.map is removed right after it is copied
# to OUT, because perf would prefer it to the collector's map.
fg_jvm_truth() {
	local pid=$1 out=$2 nspid uid inmap
	nspid=$(awk '/^NSpid:/ {print $NF}' "/proc/$pid/status")
	uid=$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")
	inmap=/proc/$pid/root/tmp/perf-$nspid.map
	nsenter -t "$pid" -a -r -w setpriv --reuid "$uid" --regid "$uid" --clear-groups -- \
		/opt/jdk/bin/jcmd "$nspid" Compiler.perfmap >"$FG_TMP/jcmd.out" 2>&1 || {
		cat "$FG_TMP/jcmd.out" >&2
		return 1
	}
	# JDK 17+ writes "0xSTART 0xSIZE ret pkg.Class.method(args)"; normalize the addresses to
	# the collector's form (hex, no 0x, no leading zeros) and keep the JVM's names.
	awk '{ a = tolower($1); sub(/^0x0*/, "", a); z = tolower($2); sub(/^0x0*/, "", z)
	       $1 = a; $2 = z; print }' "$inmap" >"$out" && rm -f "$inmap"
}

# fg_map_coverage TRUTH MAP: percentage (integer) of TRUTH's compiled Java methods (entries
# with an argument list, as jcmd names them) whose start address is also the start of an
# entry in MAP. Prints "PCT HIT TOTAL".
fg_map_coverage() {
	awk 'FNR == NR { if ($0 ~ /\(/) t[$1] = 1; next }
	     { a = tolower($1); sub(/^0*/, "", a); m[a] = 1 }
	     END { n = 0; hit = 0
		   for (a in t) { n++; if (a in m) hit++ }
		   print (n ? int(hit * 100 / n) : 0), hit, n }' "$1" "$2"
}

# ---------------------------------------------------------------------------------------------
# Stock perf
# ---------------------------------------------------------------------------------------------
# fg_perf_jit HOSTPID SECONDS OUTPREFIX [REGEX]
#   `perf record -F 499 -g -p HOSTPID` for SECONDS, then `perf script`, and count the frames
#   that fall in the JVM's JIT code (anonymous executable mappings of /proc/HOSTPID/maps, taken
#   during the recording). Sets:
#     FG_JIT_FRAMES  JIT frames seen            FG_JIT_NAMED  of them with a symbol name
#     FG_JIT_PCT     named share (integer %)    FG_SAMPLES    samples
#     FG_MATCH_PCT   share of samples with a frame whose symbol matches REGEX
#   Files: OUTPREFIX.data, OUTPREFIX.script, OUTPREFIX.maps.
fg_perf_jit() {
	local pid=$1 secs=$2 out=$3 re=${4:-^$} stats try rc
	# perf 6.1's `record -p` exits 255 without a word now and then (measured: 1 in 7 runs
	# against a JVM whose HTTP client starts and ends keep-alive threads): a thread that ends
	# while perf attaches. Up to 3 attempts, each logged.
	for try in 1 2 3; do
		perf record -q -F 499 -g -p "$pid" -o "$out.data" -- sleep "$secs" >/dev/null 2>"$out.record.err" &
		local rec=$!
		sleep 0.5
		cp "/proc/$pid/maps" "$out.maps" 2>/dev/null || true
		rc=0
		wait "$rec" || rc=$?
		((rc == 0)) && break
		fg_log "perf record -p $pid exited $rc (attempt $try): $(head -c 300 "$out.record.err")"
		kill -0 "$pid" 2>/dev/null || break
	done
	((rc == 0)) || { cat "$out.record.err" >&2; fg_fail "perf record -p $pid failed"; }
	perf script -i "$out.data" -F comm,tid,time,ip,sym,dso >"$out.script" 2>"$out.script.err" ||
		{ cat "$out.script.err" >&2; fg_fail "perf script failed"; }
	stats=$(LC_ALL=C re="$re" awk 'BEGIN { re = ENVIRON["re"] }
	function hex(s,   i, v) {
		v = 0; s = tolower(s)
		for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}
	BEGIN { n = 0 } # numeric: an unset n would index lo[""] and miss a lone mapping
	FNR == NR {
		# /proc/PID/maps: an anonymous executable mapping is JIT code (the code cache).
		if (NF == 5 && $2 ~ /x/) { split($1, r, "-"); lo[n] = hex(r[1]); hi[n] = hex(r[2]); n++ }
		next
	}
	/^[^ \t]/ { if (insample && matched) match_n++; samples++; insample = 1; matched = 0; next }
	/^[ \t]+[0-9a-f]+ / {
		a = hex($1)
		sym = $0; sub(/^[ \t]+[0-9a-f]+ /, "", sym); sub(/ \([^()]*\)$/, "", sym)
		if (re != "^$" && sym ~ re) matched = 1
		for (i = 0; i < n; i++) {
			if (a >= lo[i] && a < hi[i]) {
				jit++
				if (sym !~ /^\[unknown\]/) named++
				break
			}
		}
	}
	END {
		if (insample && matched) match_n++
		printf "%d %d %d %d %d\n", samples, jit, named, (jit ? int(named * 100 / jit) : 0),
		       (samples ? int(match_n * 100 / samples) : 0)
	}' "$out.maps" "$out.script")
	read -r FG_SAMPLES FG_JIT_FRAMES FG_JIT_NAMED FG_JIT_PCT FG_MATCH_PCT <<<"$stats"
	fg_log "perf: $FG_SAMPLES samples, $FG_JIT_FRAMES JIT frames, $FG_JIT_NAMED named ($FG_JIT_PCT%), $FG_MATCH_PCT% of samples match /$re/"
}

# fg_expect_jit_named HOSTPID SECONDS OUTPREFIX REGEX [MIN_PCT=95]
#   fg_perf_jit, then fail unless there were JIT frames, >= MIN_PCT% of them are named, and
#   >= 50% of samples have a frame matching REGEX (the hot Java method is really named).
fg_expect_jit_named() {
	local min=${5:-95}
	fg_perf_jit "$1" "$2" "$3" "$4"
	((FG_SAMPLES >= 100)) || fg_fail "only $FG_SAMPLES perf samples of pid $1: is the JVM running?"
	((FG_JIT_FRAMES >= 100)) || fg_fail "only $FG_JIT_FRAMES JIT frames in $FG_SAMPLES samples of pid $1"
	((FG_JIT_PCT >= min)) || {
		grep -m 5 -F '[unknown]' "$3.script" >&2 || true
		fg_fail "perf named $FG_JIT_NAMED of $FG_JIT_FRAMES JIT frames ($FG_JIT_PCT% < $min%) of pid $1"
	}
	((FG_MATCH_PCT >= 50)) || fg_fail "only $FG_MATCH_PCT% of samples of pid $1 show /$4/"
}
