#!/bin/bash
# SPDX-License-Identifier: MIT
#
# fleet.sh - the seeds' scenario with real containers: podman (runc) runs the images built from
# docker/ (tests/containers/lib.sh builds them once and reuses them):
#
#   * a collector container from docker/Dockerfile.collector, `fgcollect watch`, with --pid host,
#     the host's /tmp and the socket directory, and exactly the capabilities that
#     docker/docker-compose.yml lists (the Kubernetes DaemonSet must list the same ones);
#   * two app containers from docker/Dockerfile.jvm --target sample, each JVM PID 1, uid 4242,
#     no capabilities, a read-only root, the socket directory mounted read-only;
#   * stock `perf record -g -p HOSTPID` on the host names >= 95% of each JVM's JIT frames;
#   * `fgcollect record --container ID` through `podman exec` names Java, native and kernel
#     frames, each < 5% unknown, with glibc's stripped frames (start_thread, the root of every
#     thread) named from the collector image's libc6-dbg, no network needed;
#   * a one-shot collector without those local debug files (a tmpfs over /usr/lib/debug) shows
#     the frames it cannot name as module+offset (libc.so.6+0x...), never a bare [unknown], and
#     names them again from a debuginfod server (Debian's debuginfod serving libc6-dbg,
#     reachable only on the collector's own loopback); the native unknown share without and with
#     the local debug files is measured and shown;
#   * `fgcollect top` through `podman exec` shows Java names;
#   * the collector's `watch --profile-every` writes rolling profiles of both app containers
#     while the recordings above run beside it;
#   * `fgcollect record --event offcpu` through `podman exec` takes app1's off-CPU stacks in the
#     kernel by BPF, with no tracefs in the collector container (docker-compose.yml and the
#     DaemonSet mount none): Java frames named (< 5% unknown), the waits' states as leaves
#     ([off-cpu: sleeping] under the load threads' socket reads);
#   * the collector serves the agent socket from a child that gave up root (uid 65534, no
#     capability, seccomp): SETUID, SETGID and SYS_CHROOT are for that;
#   * each other listed capability is needed: without it a one-shot collector says at start that it
#     lacks it (naming the capability and --cap-add) and fails the way docs/containers.md says; without
#     BPF an off-CPU recording takes no stack by BPF: it fails for want of tracefs, and with the
#     host's tracefs mounted it falls back to tracepoint events per thread (what the mount
#     would be for; the test mounts tracefs on the host when none is, and unmounts it after).
#
# tests/containers/docker.sh runs the same images on Docker Engine.
#
# Exit 0 pass, 1 fail, 77 only when the kernel refuses namespaces or perf_event_open.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../harness/lib.sh"
. "$HERE/lib.sh"
fg_init containers_fleet
T0=$SECONDS
P=fgct-$$
SOCK=$FG_TMP/sock
DBG_PORT=8002
DBG_PID=
TRACEFS_MOUNTED= # 1: this test mounted the host's tracefs (unmounted at the end)

ct_cleanup() {
	local rc=$? c
	for c in collector app1 app2; do
		ct_podman rm -f -t 0 "$P-$c" >/dev/null 2>&1 || true
	done
	[[ -n $DBG_PID ]] && kill "$DBG_PID" 2>/dev/null && wait "$DBG_PID" 2>/dev/null
	if [[ -n $TRACEFS_MOUNTED ]]; then
		umount /sys/kernel/tracing 2>/dev/null || umount -l /sys/kernel/tracing 2>/dev/null || true
	fi
	(exit "$rc")
	fg_cleanup
}
trap ct_cleanup EXIT

for t in podman runc mmdebstrap debuginfod readelf perf; do
	command -v "$t" >/dev/null || fg_fail "$t is not installed (scripts/install-deps.sh installs it)"
done

# ---- the capability set: docker-compose.yml's, and the DaemonSet must agree -----------------
compose=$FG_SOURCE_DIR/docker/docker-compose.yml
daemonset=$FG_SOURCE_DIR/docker/k8s/fgcollect-daemonset.yaml
caps_of() { # FILE KEY: the list after the first "KEY: [", one capability a line, sorted;
	# a "${VAR:-DEFAULT}" item is its default, "CAP_${VAR:-DEFAULT}" too
	sed -n "s/^[[:space:]]*$2:[[:space:]]*\[\([^]]*\)\].*/\1/p" "$1" | head -n 1 |
		tr -d '" ' | tr ',' '\n' | sed 's/^\(CAP_\)\{0,1\}\${[A-Za-z_]*:-\(.*\)}$/\2/' | sort
}
mapfile -t CAPS < <(caps_of "$compose" cap_add)
((${#CAPS[@]} > 0)) || fg_fail "$compose: no 'cap_add: [...]' line"
[[ $(caps_of "$compose" cap_drop) == ALL ]] || fg_fail "$compose: the collector must drop ALL capabilities first"
[[ $(caps_of "$daemonset" add) == "$(printf '%s\n' "${CAPS[@]}")" ]] ||
	fg_fail "$daemonset adds [$(caps_of "$daemonset" add | paste -sd,)], compose [$(printf '%s,' "${CAPS[@]}")]: they must be the same set"
[[ $(caps_of "$daemonset" drop) == ALL ]] || fg_fail "$daemonset: capabilities must drop ALL first"
grep -q 'seccomp=unconfined' "$compose" || fg_fail "$compose: no seccomp=unconfined"
grep -q 'type: Unconfined' "$daemonset" || fg_fail "$daemonset: no seccompProfile Unconfined"
# No tracefs: off-CPU by BPF needs none (shown below); only the fallback without BPF would.
! grep -q -- '^[[:space:]]*- /sys/kernel/tracing:' "$compose" ||
	fg_fail "$compose mounts tracefs: off-CPU by BPF needs none (this test records without it)"
! grep -q 'ath: /sys/kernel/tracing' "$daemonset" ||
	fg_fail "$daemonset mounts tracefs: off-CPU by BPF needs none (this test records without it)"
fg_log "capabilities (compose = DaemonSet): ${CAPS[*]}"

# ---- images ----------------------------------------------------------------------------------
t=$SECONDS
ct_images || fg_fail "building the images from docker/ failed (above)"
fg_log "images ready in $((SECONDS - t)) s"

# collector_args CAP...: the `podman run` options of a collector with exactly these caps, and
# the host's tracefs read-only if TRACEFS=1.
collector_args() {
	local c
	COLL=(--pid host --network none "${CT_ULIMITS[@]}" --cap-drop ALL
		--security-opt seccomp=unconfined)
	[[ ${TRACEFS:-0} == 0 ]] || COLL+=(-v /sys/kernel/tracing:/sys/kernel/tracing:ro)
	for c in "$@"; do
		COLL+=(--cap-add "$c")
	done
}

# ---- the collector and two apps ------------------------------------------------------------
mkdir -m 0755 "$SOCK"
collector_args "${CAPS[@]}"
# Rolling profiles too (the host's /tmp is the container's): sampling for them runs beside the
# recordings below, as on a node where someone records while watch keeps profiles.
mkdir -m 0755 "$FG_TMP/profiles"
# The daemon's control socket directory comes from the host, for the one-shot record below.
mkdir -m 0700 "$FG_TMP/ctl"
ct_podman run -d --name "$P-collector" "${COLL[@]}" -v "$FG_TMP/ctl:/run/fgcollect-ctl" \
	-v "$SOCK:/var/run/fgcollect" -v /tmp:/tmp "$CT_COLLECTOR" \
	watch --socket /var/run/fgcollect/fgcollect.sock --profile-every 5s --out "$FG_TMP/profiles" \
	>/dev/null || fg_fail "podman run of the collector failed"
fg_wait 20 test -S "$SOCK/fgcollect.sock" ||
	fg_fail "the collector made no socket: $(ct_podman logs "$P-collector" 2>&1 | tail -5)"
# app1 computes (Java frames); app2 answers small requests (more time in the kernel).
declare -A N=([app1]=20000 [app2]=4000) HP=() ID=()
for a in app1 app2; do
	ct_podman run -d --name "$P-$a" --network none "${CT_ULIMITS[@]}" --user 4242:4242 \
		--cap-drop ALL --read-only -v "$SOCK:/var/run/fgcollect:ro" "$CT_PRIMES" \
		--port 8080 --bind 127.0.0.1 --load 2 --n "${N[$a]}" >/dev/null ||
		fg_fail "podman run of $a failed"
	HP[$a]=$(ct_podman inspect -f '{{.State.Pid}}' "$P-$a")
	fg_clean_later "/tmp/perf-${HP[$a]}.map" # the collector is killed, its maps stay
	ID[$a]=$(ct_podman inspect -f '{{.Id}}' "$P-$a")
done
for a in app1 app2; do
	p=${HP[$a]}
	[[ $(awk '/^NSpid:/ {print $NF}' "/proc/$p/status") == 1 ]] || fg_fail "$a: host pid $p is not PID 1 in its container"
	[[ $(awk '/^Uid:/ {print $2}' "/proc/$p/status") == 4242 ]] || fg_fail "$a: host pid $p does not run as uid 4242"
	grep -q java "/proc/$p/cmdline" || fg_fail "$a: PID 1 is not java"
	! ct_podman exec "$P-$a" sh -c ': >/var/run/fgcollect/probe' 2>/dev/null ||
		fg_fail "$a: the socket directory is writable inside the container"
	fg_wait 60 fg_map_ok "$p" 'PrimeService::' ||
		fg_fail "$a: no /tmp/perf-$p.map naming PrimeService:: after 60 s"
	ct_podman logs "$P-collector" >"$FG_TMP/collector.log" 2>&1
	grep -q "pid $p (container pid 1, container ${ID[$a]:0:12})" "$FG_TMP/collector.log" ||
		fg_fail "$a: the collector's log has no connect line for host pid $p, container ${ID[$a]:0:12}"
done
fg_log "two JVMs, PID 1, uid 4242, read-only socket directory: host pids ${HP[app1]} ${HP[app2]}"
ct_sandbox_check "collector (podman)" "$(ct_podman inspect -f '{{.State.Pid}}' "$P-collector")" "$FG_TMP/collector.log"
sleep 3 # warm-up: the load's hot methods compiled

# ---- stock perf on the host ------------------------------------------------------------------
# app1 is busy in PrimeService (>= 50% of its samples show it); app2, with small requests, is
# still compiling and serving: there only the JIT frames' names are checked.
fg_expect_jit_named "${HP[app1]}" 4 "$FG_TMP/perf-app1" 'PrimeService::' 95
fg_log "app1: stock perf named $FG_JIT_PCT% of $FG_JIT_FRAMES JIT frames"
fg_perf_jit "${HP[app2]}" 4 "$FG_TMP/perf-app2"
((FG_JIT_FRAMES >= 100 && FG_JIT_PCT >= 95)) ||
	fg_fail "app2: perf named $FG_JIT_NAMED of $FG_JIT_FRAMES JIT frames ($FG_JIT_PCT%; want >= 95% of >= 100)"
fg_log "app2: stock perf named $FG_JIT_PCT% of $FG_JIT_FRAMES JIT frames"

# ---- debuginfod with libc6-dbg, on the collector's loopback only ----------------------------
libc=/proc/${HP[app2]}/root/lib/x86_64-linux-gnu/libc.so.6
bid=$(readelf -n "$libc" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
[[ -n $bid ]] || fg_fail "no build id in the image's libc ($libc)"
[[ -f /usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug ]] ||
	fg_fail "libc6-dbg on the host does not match the image's libc (build id $bid): install the libc6-dbg of the same Debian release and point release"
cnet=/proc/$(ct_podman inspect -f '{{.State.Pid}}' "$P-collector")/ns/net
# The collector has no network but its loopback: a server there is reachable by it alone.
nsenter --net="$cnet" debuginfod -F -p "$DBG_PORT" -d "$FG_TMP/debuginfod.sqlite" -t 0 -g 0 -c 1 \
	/usr/lib/debug/.build-id >"$FG_TMP/debuginfod.log" 2>&1 &
DBG_PID=$!
dbg_ready() {
	nsenter --net="$cnet" bash -c "exec 3<>/dev/tcp/127.0.0.1/$DBG_PORT &&
		printf 'GET /buildid/$bid/debuginfo HTTP/1.0\r\n\r\n' >&3 && head -n1 <&3" 2>/dev/null |
		grep -q ' 200 '
}
fg_wait 60 dbg_ready || fg_fail "debuginfod does not serve libc's debug file: $(tail -n 5 "$FG_TMP/debuginfod.log")"

# ---- fgcollect record --container through podman exec ---------------------------------------
# record_ct APP OUT [exec|oneshot] [ENV...]: sets U_JAVA/U_NATIVE/U_KERNEL ("unknown total") from
# the summary. exec: in the collector container; oneshot: a collector of its own beside it, with
# the same capabilities, sockets and network namespace but no local debug files (an empty
# tmpfs: podman would copy the image's files into it by default).
record_ct() {
	local a=$1 out=$2 how=${3:-exec} line
	local args=(record --container "${ID[$a]:0:12}" --duration 4 --freq 499 -o "$out.folded")
	shift 3 || shift $#
	if [[ $how == exec ]]; then
		ct_podman exec "$@" "$P-collector" fgcollect "${args[@]}" 2>"$out.err"
	else
		collector_args "${CAPS[@]}"
		COLL=("${COLL[@]/#none/container:$P-collector}")
		ct_podman run --rm "${COLL[@]}" --tmpfs /usr/lib/debug:notmpcopyup "$@" \
			-v "$FG_TMP/ctl:/run/fgcollect-ctl" -v "$SOCK:/var/run/fgcollect" -v /tmp:/tmp \
			"$CT_COLLECTOR" "${args[@]}" 2>"$out.err"
	fi || { cat "$out.err" >&2; fg_fail "$a: fgcollect record --container ${ID[$a]:0:12} ($how) failed"; }
	line=$(grep 'unresolved frames:' "$out.err") || { cat "$out.err" >&2; fg_fail "$a: record printed no summary"; }
	read -r U_JAVA U_NATIVE U_KERNEL < <(sed -E 's|.*java [^(]*\(([0-9]+)/([0-9]+)\).*native [^(]*\(([0-9]+)/([0-9]+)\).*kernel [^(]*\(([0-9]+)/([0-9]+)\).*|\1/\2 \3/\4 \5/\6|' <<<"$line")
	[[ $U_KERNEL == */* ]] || { cat "$out.err" >&2; fg_fail "$a: no kernel frames recorded ($line)"; }
	fg_log "$a ($how${*:+ $*}): $line"
}
pct() { f="$1" awk 'BEGIN { f = ENVIRON["f"]; split(f, x, "/"); printf "%.1f", x[2] ? 100 * x[1] / x[2] : 100 }'; }

# Without local debug files (the image's /usr/lib/debug hidden) and without a debuginfod server:
# glibc's internal frames cannot be named; they show where to look them up.
record_ct app2 "$FG_TMP/rec-app2-nodebug" oneshot
before=$U_NATIVE
f=$FG_TMP/rec-app2-nodebug.folded
grep -q ';libc\.so\.6+0x[0-9a-f]*;' "$f" ||
	fg_fail "app2 without debug files: no unnamed glibc frame shown as libc.so.6+0x... in $f"
! grep -q '\[unknown\] (libc\.so\.6)' "$f" ||
	fg_fail "app2 without debug files: a bare [unknown] (libc.so.6) in $f"
# The same, asking the debuginfod server: it has what the local files had.
record_ct app2 "$FG_TMP/rec-app2-debuginfod" oneshot -e "DEBUGINFOD_URLS=http://127.0.0.1:$DBG_PORT"
grep -q ';start_thread;' "$FG_TMP/rec-app2-debuginfod.folded" ||
	fg_fail "app2: glibc's start_thread not named in $FG_TMP/rec-app2-debuginfod.folded (debuginfod)"
grep -q 'debuginfod: [0-9]* lookups.* [1-9][0-9]* debug files found' "$FG_TMP/rec-app2-debuginfod.err" ||
	fg_fail "app2: record found no debug file on the debuginfod server: $(grep debuginfod "$FG_TMP/rec-app2-debuginfod.err")"
fg_log "app2: debuginfod named start_thread ($(pct "$U_NATIVE")% native unknown)"
# The collector image as shipped: its libc6-dbg names glibc's frames of the apps' base image.
for a in app1 app2; do
	record_ct "$a" "$FG_TMP/rec-$a" exec
	f=$FG_TMP/rec-$a.folded
	grep -Eq '^([^;]*;){1,2}start_thread;' "$f" ||
		fg_fail "$a: glibc's start_thread is not the root frame of any thread in $f (the collector image's libc6-dbg): $(grep -Eo '^([^;]*;){1,2}[^;]*' "$f" | sort | uniq -c | sort -rn | head -3)"
	for k in JAVA NATIVE KERNEL; do
		v=U_$k
		below5 "${!v}" || { cat "$FG_TMP/rec-$a.err" >&2; fg_fail "$a: ${!v} ${k,,} frames unknown (>= 5%, or none)"; }
	done
	grep -q 'PrimeService::[a-zA-Z]*_\[[ji]\]' "$f" || fg_fail "$a: no named Java frame in $f"
	grep -q '_\[k\]' "$f" || fg_fail "$a: no kernel frame in $f"
	[[ $a == app2 ]] && after=$U_NATIVE
done
fg_log "native frames unknown in app2: $before ($(pct "$before")%) without debug files, $after ($(pct "$after")%) with the collector image's"

# ---- fgcollect top through podman exec -------------------------------------------------------
timeout 60 podman --runtime runc --cgroup-manager cgroupfs exec "$P-collector" \
	fgcollect top --pid "${HP[app1]}" -n 2 >"$FG_TMP/top.out" 2>"$FG_TMP/top.err" ||
	{ cat "$FG_TMP/top.err" >&2; fg_fail "fgcollect top --pid ${HP[app1]} -n 2 through podman exec failed"; }
[[ $(grep -c '^fgcollect top - PID' "$FG_TMP/top.out") == 2 ]] || fg_fail "top printed no 2 snapshots: $(head -5 "$FG_TMP/top.out")"
grep -q 'PrimeService::[a-zA-Z]*_\[[ji]\]' "$FG_TMP/top.out" || fg_fail "top names no PrimeService method: $(head -8 "$FG_TMP/top.out")"
fg_log "top: $(grep -m1 'PrimeService::' "$FG_TMP/top.out" | tr -s ' ')"

# ---- off-CPU through podman exec: stacks taken in the kernel by BPF, no tracefs -------------
# The fallback checks below give a collector the host's tracefs: an untouched host has none
# mounted (nothing on it needs one), so the test mounts it and unmounts it at the end.
tp=/sys/kernel/tracing/events/sched/sched_switch/id
if [[ ! -e $tp ]] && ! mountpoint -q /sys/kernel/tracing; then
	mount -t tracefs nodev /sys/kernel/tracing ||
		fg_fail "the host has no tracefs at /sys/kernel/tracing and mounting one failed (the fallback checks below need it)"
	TRACEFS_MOUNTED=1
	fg_log "mounted tracefs at /sys/kernel/tracing (none was; the fallback checks below need it; unmounted at the end)"
fi
[[ -r $tp ]] || fg_fail "the host's tracefs at /sys/kernel/tracing has no readable $tp (the fallback checks below need it)"
! ct_podman exec "$P-collector" test -e "$tp" || fg_fail "the collector container sees tracefs ($tp)"
t=$(fg_ms)
ct_podman exec "$P-collector" fgcollect record --container "${ID[app1]:0:12}" --event offcpu \
	--duration 4 -o "$FG_TMP/off-app1.folded" 2>"$FG_TMP/off-app1.err" ||
	{ cat "$FG_TMP/off-app1.err" >&2; fg_fail "app1: fgcollect record --event offcpu through podman exec failed"; }
t=$(($(fg_ms) - t))
ct_offcpu_check app1 "$FG_TMP/off-app1.err" "$FG_TMP/off-app1.folded" "$t"
OFF_JAVA=$CT_OFF_JAVA

# ---- rolling profiles of both containers, written by the collector container ------------------
for a in app1 app2; do
	# grep -c reads all of ls (grep -q may stop early: SIGPIPE, a failure under pipefail)
	(($(ls "$FG_TMP/profiles" | grep -c "_${ID[$a]:0:12}_${HP[$a]}_.*\.svg$") > 0)) ||
		fg_fail "$a: no rolling profile (*_${ID[$a]:0:12}_${HP[$a]}_*.svg) in $FG_TMP/profiles: $(ls "$FG_TMP/profiles" | head -5)"
done
[[ -s $FG_TMP/profiles/index.html ]] || fg_fail "no index.html among the rolling profiles"
fg_log "rolling profiles: $(ls "$FG_TMP/profiles" | grep -c '\.svg$') SVGs for both containers, index.html"

# ---- each capability is needed ---------------------------------------------------------------
# A one-shot collector (record without a daemon, on an empty socket directory) per capability
# left out; what it cannot do without it is what docs/containers.md gives as the reason.
mkdir -m 0755 "$FG_TMP/empty"
alive() { [[ -d /proc/$1/task ]]; }
now() { echo "app2 now runs $(find "/proc/${HP[app2]}/task" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l) threads"; }
for drop in "${CAPS[@]}"; do
	# The agent socket's process needs these to give up root: the collector's was checked
	# above; without them watch says so and the child stays uid 0 (e2e_watch_sandbox).
	case $drop in SETUID | SETGID | SYS_CHROOT) continue ;; esac
	keep=()
	for c in "${CAPS[@]}"; do [[ $c == "$drop" ]] || keep+=("$c"); done
	collector_args "${keep[@]}"
	alive "${HP[app2]}" || fg_fail "app2 (host pid ${HP[app2]}) is gone before the run without $drop: $(ct_podman ps -a --filter "name=$P-app2" --format '{{.Status}}')"
	ev=()
	[[ $drop == BPF ]] && ev=(--event offcpu) # only off-CPU and wall stacks need it
	# Without SYSLOG the summary speaks of kernel symbols once a sample has a kernel frame: a
	# recording that caught app2 only in user code (it happens) is taken again, up to 3 times.
	for try in 1 2 3; do
		rc=0
		ct_podman run --rm "${COLL[@]}" -v "$FG_TMP/empty:/var/run/fgcollect" -v /tmp:/tmp \
			"$CT_COLLECTOR" record --pid "${HP[app2]}" "${ev[@]}" --duration 2 \
			-o "$FG_TMP/nocap-$drop.folded" >"$FG_TMP/nocap-$drop.err" 2>&1 || rc=$?
		[[ $drop == SYSLOG && $rc == 0 ]] && grep -q 'unresolved frames:.*kernel -$' "$FG_TMP/nocap-$drop.err" ||
			break
		fg_log "without SYSLOG: no kernel frame in recording $try, recording again"
	done
	grep -q "warning: no CAP_$drop.*--cap-add $drop" "$FG_TMP/nocap-$drop.err" ||
		{ cat "$FG_TMP/nocap-$drop.err" >&2; fg_fail "without $drop the collector does not say at start that it lacks CAP_$drop"; }
	case $drop in
	PERFMON)
		# perf_event_open of another process with kernel stacks at perf_event_paranoid 2.
		((rc != 0)) && grep -q 'perf_event_open refused' "$FG_TMP/nocap-$drop.err" ||
			{ cat "$FG_TMP/nocap-$drop.err" >&2; fg_fail "without PERFMON record should be refused perf_event_open (rc $rc; $(now))"; } ;;
	SYS_PTRACE)
		# /proc/<pid>/maps and /proc/<pid>/root of another uid's process: every native frame
		# is unknown without them, except the vDSO's (__vdso_*), which the collector names
		# from its own copy of this kernel's vDSO and needs nothing of the target for.
		nat=$(sed -nE 's|.*unresolved frames:.*native [^(]*\(([0-9]+)/([0-9]+)\).*|\1 \2|p' "$FG_TMP/nocap-$drop.err")
		vdso=$(awk '{ s = $0; sub(/ [0-9]+$/, "", s); n = split(s, f, ";"); for (i = 1; i <= n; i++) if (f[i] ~ /^__vdso_/) v += $NF } END { print v + 0 }' \
			"$FG_TMP/nocap-$drop.folded" 2>/dev/null || echo 0)
		((rc == 0)) && [[ -n $nat ]] && read -r u n <<<"$nat" && ((n > 0 && u + vdso == n)) ||
			{ cat "$FG_TMP/nocap-$drop.err" >&2; grep -v '^[^;]*\(;\[unknown\] ([^)]*)\|;[^;]*+0x[0-9a-f]*\|;__vdso_[^;]*\|;[^;]*_\[k\]\)* [0-9]*$' "$FG_TMP/nocap-$drop.folded" >&2
			fg_fail "without SYS_PTRACE every native frame but the vDSO's should be unknown (rc $rc, $vdso vDSO frames; $(now))"; }
		echo "every native frame unknown ($u/$n, $vdso more in the vDSO): /proc/<pid>/maps and /proc/<pid>/root refused" >>"$FG_TMP/nocap-$drop.err" ;;
	SYSLOG)
		# /proc/kallsyms shows zero addresses without it (kptr_restrict, perf_event_paranoid 2)
		((rc == 0)) && grep -q 'kernel symbols unavailable' "$FG_TMP/nocap-$drop.err" ||
			{ cat "$FG_TMP/nocap-$drop.err" >&2; fg_fail "without SYSLOG kernel symbols should be unavailable (rc $rc; $(now))"; } ;;
	BPF)
		# The kernel refuses the off-CPU program: its fallback, tracepoint events per thread,
		# needs tracefs, which the set does not mount: record says so and fails. With the
		# host's tracefs mounted it records by those events.
		err=$FG_TMP/nocap-$drop.err
		((rc != 0)) && grep -q 'off-CPU needs the sched:sched_switch tracepoint: no tracefs' "$err" &&
			! grep -q 'taken in the kernel by BPF' "$err" ||
			{ cat "$err" >&2; fg_fail "without BPF record --event offcpu should fail for want of tracefs (rc $rc; $(now))"; }
		# ... and say what to do: mount it (on the host, then into the container) or give BPF.
		grep -q 'no tracefs.*mount -t tracefs nodev /sys/kernel/tracing.*-v /sys/kernel/tracing:/sys/kernel/tracing:ro.*CAP_BPF (--cap-add BPF' "$err" ||
			{ cat "$err" >&2; fg_fail "without BPF and tracefs record --event offcpu does not say how to mount tracefs or to add CAP_BPF"; }
		TRACEFS=1 collector_args "${keep[@]}"
		rc=0
		ct_podman run --rm "${COLL[@]}" -v "$FG_TMP/empty:/var/run/fgcollect" -v /tmp:/tmp \
			"$CT_COLLECTOR" record --pid "${HP[app2]}" --event offcpu --duration 2 \
			-o "$FG_TMP/nocap-$drop-tracefs.folded" >"$FG_TMP/nocap-$drop-tracefs.err" 2>&1 || rc=$?
		fb=$(grep -m1 'off-CPU: .* stacks taken (every [0-9]*) by tracepoint events per thread from /sys/kernel/tracing: no BPF' \
			"$FG_TMP/nocap-$drop-tracefs.err") && ((rc == 0)) ||
			{ cat "$FG_TMP/nocap-$drop-tracefs.err" >&2; fg_fail "without BPF, with tracefs, record --event offcpu should fall back to tracepoint events (rc $rc; $(now))"; }
		echo "BPF refused: $(grep -o 'no tracefs at [^,]*' "$err"), record failed; with the host's tracefs: ${fb#*off-CPU: }" >>"$err" ;;
	*) fg_fail "no check for capability $drop: add one here and a reason in docs/containers.md" ;;
	esac
	fg_log "without $drop: $(grep -E 'refused|unavailable' "$FG_TMP/nocap-$drop.err" | tail -n 1)"
done

fg_pass "podman: 2 JVM containers + collector, perf named JIT frames, record unknown java $(pct "$U_JAVA")% native $(pct "$after")% (was $(pct "$before")% without debug files) kernel $(pct "$U_KERNEL")%, off-CPU by BPF without tracefs (java unknown $(pct "$OFF_JAVA")%), top ok, caps ${CAPS[*]} each needed; $((SECONDS - T0)) s"
