#!/bin/bash
# SPDX-License-Identifier: MIT
#
# docker.sh - the containers of docker/ on Docker Engine as Debian 12 ships it (docker.io 20.10
# and docker-compose 1.29), on a daemon of the test's own (vfs storage, no iptables, no bridge,
# its own data root and socket) with the images tests/containers/lib.sh builds with podman,
# moved over by `podman save | docker load`:
#
#   * docker-compose reads docker/docker-compose.yml; as written (PERFMON, BPF) the engine
#     refuses to start the collector ("unknown capability: CAP_PERFMON", or CAP_BPF: compose
#     sorts the list it merges with the override below; Docker before 23.0), and with
#     FGCOLLECT_PERF_CAP=SYS_ADMIN, as the compose file and docs/containers.md say, it starts
#     with SYS_ADMIN, SYS_PTRACE, SYSLOG, SETUID, SETGID and SYS_CHROOT and nothing else, serves
#     its socket from a child of uid 65534 with no capability and warns of no missing capability;
#   * an app container (JVM PID 1, uid 4242, no capabilities, read-only root, the socket
#     directory read-only) connects; `fgcollect record --container ID` through `docker exec`
#     names Java, native and kernel frames (< 5% unknown each) and `top --container` shows Java
#     names;
#   * `fgcollect record --event offcpu` through `docker exec` takes the app's off-CPU stacks in
#     the kernel by BPF (SYS_ADMIN standing for BPF), with no tracefs in the container: Java
#     frames named (< 5% unknown), the waits' states as leaves;
#   * without SYS_ADMIN (the stand-in for PERFMON and BPF) a one-shot collector says at start
#     which capabilities it lacks and how to add them on this engine; record is refused
#     perf_event_open, and record --event offcpu takes no stack by BPF (it fails for want of
#     tracefs, which its fallback needs).
#
# Exit 0 pass, 1 fail, 77 only when the kernel refuses namespaces or perf_event_open.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../harness/lib.sh"
. "$HERE/lib.sh"
fg_init containers_docker
T0=$SECONDS
P=fgdk$$
SOCK=$FG_TMP/sock
# Debian's docker.io client: /usr/local/bin/docker, earlier on PATH, may be another one.
DOCKER=/usr/bin/docker
DK=
DK_PID=

dk() {
	"$DOCKER" -H "unix://$DK/docker.sock" "$@"
}

dk_cleanup() {
	local rc=$?
	set +e
	if [[ -n $DK_PID ]]; then
		dk ps -aq 2>/dev/null | xargs -r "$DOCKER" -H "unix://$DK/docker.sock" rm -f >/dev/null 2>&1
		kill "$DK_PID" 2>/dev/null && wait "$DK_PID" 2>/dev/null
	fi
	# vfs layers are plain directories; the exec root may still hold a mount after a crash
	# (the data root is a tmpfs: unmounting it frees the layers at once, where deleting vfs's
	# copies from a disk took minutes)
	[[ -n $DK ]] && {
		umount -R "$DK/exec" 2>/dev/null
		umount -R "$DK/data" 2>/dev/null
		rm -rf --one-file-system "$DK"
	}
	(exit "$rc")
	fg_cleanup
}
trap dk_cleanup EXIT

for t in dockerd "$DOCKER" docker-compose podman runc mmdebstrap; do
	command -v "$t" >/dev/null || fg_fail "$t is not installed (scripts/install-deps.sh installs docker.io and docker-compose)"
done
engine=$(dpkg-query -W -f='${Version}' docker.io 2>/dev/null || echo unknown)

# ---- images (podman's, reused) and the engine ------------------------------------------------
t=$SECONDS
ct_images || fg_fail "building the images from docker/ failed (above)"
fg_log "images ready in $((SECONDS - t)) s"

# A short path: containerd's socket lives under the exec root (sun_path is 108 bytes).
DK=$(mktemp -d /var/tmp/fgdk.XXXXXX)
mkdir "$DK/data"
mount -t tmpfs -o size=16g,mode=0711 fgdk "$DK/data" || fg_fail "cannot mount a tmpfs for dockerd's data root"
t=$(fg_ms)
dockerd --storage-driver vfs --iptables=false --ip6tables=false --bridge=none \
	--data-root "$DK/data" --exec-root "$DK/exec" --pidfile "$DK/dockerd.pid" \
	-H "unix://$DK/docker.sock" >"$FG_TMP/dockerd.log" 2>&1 &
DK_PID=$!
fg_wait 60 dk info >/dev/null 2>&1 || fg_fail "dockerd did not answer in 60 s: $(tail -n 5 "$FG_TMP/dockerd.log")"
fg_log "dockerd $engine ($(dk version -f '{{.Server.Version}}')) up in $(($(fg_ms) - t)) ms"
t=$(fg_ms)
for img in "$CT_COLLECTOR" "$CT_PRIMES"; do
	ct_podman save --format docker-archive "$img" | dk load -q >/dev/null ||
		fg_fail "podman save $img | docker load failed"
done
# The names docker-compose.yml gives the images.
dk tag "$CT_COLLECTOR" fgcollect/collector:latest
dk tag "$CT_PRIMES" fgcollect/primes:latest
fg_log "images loaded (podman save | docker load) in $(($(fg_ms) - t)) ms"

# ---- the collector, as docker-compose.yml describes it ---------------------------------------
mkdir -m 0755 "$SOCK"
# Only the host directories differ (compose merges volumes by their container path) and the
# network: this engine runs without a bridge.
cat >"$FG_TMP/override.yml" <<EOF
services:
  fgcollect:
    network_mode: none
    volumes:
      - $SOCK:/var/run/fgcollect
EOF
compose() {
	DOCKER_HOST=unix://$DK/docker.sock docker-compose -p "$P" -f "$FG_SOURCE_DIR/docker/docker-compose.yml" \
		-f "$FG_TMP/override.yml" "$@"
}
compose config -q 2>"$FG_TMP/compose-config.err" ||
	fg_fail "docker-compose $(docker-compose version --short) cannot read docker/docker-compose.yml: $(cat "$FG_TMP/compose-config.err")"
t=$(fg_ms)
if compose up -d --no-build --no-deps fgcollect >"$FG_TMP/compose-perfmon.out" 2>&1; then
	# An engine that knows PERFMON and BPF: the documented variant is not needed there.
	[[ $(dk version -f '{{.Server.Version}}') != 2[0-2].* ]] ||
		fg_fail "docker $engine started the collector with PERFMON and BPF: docs/containers.md says it refuses"
	compose down -t 0 >/dev/null 2>&1
else
	grep -q 'unknown capability: "\?CAP_\(PERFMON\|BPF\)' "$FG_TMP/compose-perfmon.out" ||
		fg_fail "docker-compose up with PERFMON and BPF failed otherwise than docs/containers.md says: $(tail -n 3 "$FG_TMP/compose-perfmon.out")"
	fg_log "as written (PERFMON, BPF): $(grep -o 'invalid CapAdd: unknown capability: "\?CAP_[A-Z]*"\?' "$FG_TMP/compose-perfmon.out" | head -n 1)"
	compose rm -f -s >/dev/null 2>&1 || true
fi
t=$(fg_ms)
FGCOLLECT_PERF_CAP=SYS_ADMIN compose up -d --no-build --no-deps fgcollect >"$FG_TMP/compose.out" 2>&1 ||
	fg_fail "FGCOLLECT_PERF_CAP=SYS_ADMIN docker-compose up failed: $(tail -n 5 "$FG_TMP/compose.out")"
COLL=$(compose ps -q fgcollect)
[[ -n $COLL ]] || fg_fail "docker-compose started no fgcollect container"
fg_wait 30 test -S "$SOCK/fgcollect.sock" ||
	fg_fail "the collector made no socket: $(dk logs "$COLL" 2>&1 | tail -n 5)"
fg_log "collector (docker-compose, SYS_ADMIN for PERFMON and BPF) serving in $(($(fg_ms) - t)) ms"
# The compose file names SYS_ADMIN twice then, spelled two ways: the process gets it once,
# with SYS_PTRACE, SYSLOG, SETUID, SETGID and SYS_CHROOT, and nothing else.
cp=$(dk inspect -f '{{.State.Pid}}' "$COLL")
# SYS_ADMIN, SYS_PTRACE, SYSLOG, SETUID, SETGID, SYS_CHROOT
want=$(printf '%016x' $(((1 << 21) | (1 << 19) | (1 << 34) | (1 << 7) | (1 << 6) | (1 << 18))))
got=$(awk '/^CapEff:/ {print $2}' "/proc/$cp/status")
[[ $got == "$want" ]] ||
	fg_fail "the collector's effective capabilities are $got, not $want (SYS_ADMIN SYS_PTRACE SYSLOG SETUID SETGID SYS_CHROOT): CapAdd $(dk inspect -f '{{.HostConfig.CapAdd}}' "$COLL")"
fg_log "collector capabilities: CapAdd $(dk inspect -f '{{.HostConfig.CapAdd}}' "$COLL"), CapEff $got"
dk logs "$COLL" >"$FG_TMP/collector.log" 2>&1
! grep -q 'warning: no CAP_\|warning: kernel' "$FG_TMP/collector.log" ||
	fg_fail "the collector warns of a missing capability: $(grep warning "$FG_TMP/collector.log")"
ct_sandbox_check "collector (docker-compose)" "$cp" "$FG_TMP/collector.log"

# ---- an app container ------------------------------------------------------------------------
APP=$(dk run -d --name "$P-app" --network none "${CT_ULIMITS[@]}" --user 4242:4242 --cap-drop ALL \
	--read-only --tmpfs /tmp -v "$SOCK:/var/run/fgcollect:ro" fgcollect/primes \
	--port 8080 --bind 127.0.0.1 --load 2 --n 20000) || fg_fail "docker run of the app failed"
HP=$(dk inspect -f '{{.State.Pid}}' "$APP")
fg_clean_later "/tmp/perf-$HP.map"
[[ $(awk '/^NSpid:/ {print $NF}' "/proc/$HP/status") == 1 ]] || fg_fail "host pid $HP is not PID 1 in its container"
[[ $(awk '/^Uid:/ {print $2}' "/proc/$HP/status") == 4242 ]] || fg_fail "host pid $HP does not run as uid 4242"
fg_wait 60 fg_map_ok "$HP" 'PrimeService::' || fg_fail "no /tmp/perf-$HP.map naming PrimeService:: after 60 s"
dk logs "$COLL" >"$FG_TMP/collector.log" 2>&1
grep -q "pid $HP (container pid 1, container ${APP:0:12})" "$FG_TMP/collector.log" ||
	fg_fail "the collector's log has no connect line for host pid $HP, container ${APP:0:12}"
fg_log "app: JVM PID 1, uid 4242, read-only, host pid $HP, connected"
sleep 3 # warm-up: the load's hot methods compiled

# ---- record and top through docker exec ------------------------------------------------------
dk exec "$COLL" fgcollect record --container "${APP:0:12}" --duration 4 --freq 499 \
	-o "$FG_TMP/rec.folded" 2>"$FG_TMP/rec.err" ||
	{ cat "$FG_TMP/rec.err" >&2; fg_fail "fgcollect record --container ${APP:0:12} through docker exec failed"; }
line=$(grep 'unresolved frames:' "$FG_TMP/rec.err") || { cat "$FG_TMP/rec.err" >&2; fg_fail "record printed no summary"; }
read -r UJ UN UK < <(sed -E 's|.*java [^(]*\(([0-9]+)/([0-9]+)\).*native [^(]*\(([0-9]+)/([0-9]+)\).*kernel [^(]*\(([0-9]+)/([0-9]+)\).*|\1/\2 \3/\4 \5/\6|' <<<"$line")
for k in UJ UN UK; do
	below5 "${!k}" || { cat "$FG_TMP/rec.err" >&2; fg_fail "record: ${!k} $k frames unknown (>= 5%, or none): $line"; }
done
grep -q 'PrimeService::[a-zA-Z]*_\[[ji]\]' "$FG_TMP/rec.folded" || fg_fail "no named Java frame in $FG_TMP/rec.folded"
grep -q '_\[k\]' "$FG_TMP/rec.folded" || fg_fail "no kernel frame in $FG_TMP/rec.folded"
fg_log "record --container: $line"
timeout 60 "$DOCKER" -H "unix://$DK/docker.sock" exec "$COLL" fgcollect top --container "${APP:0:12}" -n 2 \
	>"$FG_TMP/top.out" 2>"$FG_TMP/top.err" ||
	{ cat "$FG_TMP/top.err" >&2; fg_fail "fgcollect top --container through docker exec failed"; }
[[ $(grep -c "^fgcollect top - container ${APP:0:12} " "$FG_TMP/top.out") == 2 ]] ||
	fg_fail "top printed no 2 snapshots of the container: $(head -5 "$FG_TMP/top.out")"
grep -q 'PrimeService::[a-zA-Z]*_\[[ji]\]' "$FG_TMP/top.out" || fg_fail "top names no PrimeService method: $(head -8 "$FG_TMP/top.out")"
fg_log "top --container: $(grep -m1 'PrimeService::' "$FG_TMP/top.out" | tr -s ' ')"

# ---- off-CPU through docker exec: stacks taken in the kernel by BPF, no tracefs ---------------
tp=/sys/kernel/tracing/events/sched/sched_switch/id
! dk exec "$COLL" test -e "$tp" || fg_fail "the collector container sees tracefs ($tp)"
t=$(fg_ms)
dk exec "$COLL" fgcollect record --container "${APP:0:12}" --event offcpu --duration 4 \
	-o "$FG_TMP/off.folded" 2>"$FG_TMP/off.err" ||
	{ cat "$FG_TMP/off.err" >&2; fg_fail "fgcollect record --event offcpu through docker exec failed"; }
t=$(($(fg_ms) - t))
ct_offcpu_check app "$FG_TMP/off.err" "$FG_TMP/off.folded" "$t"
OJ=$CT_OFF_JAVA

# ---- without SYS_ADMIN (the stand-in for PERFMON and BPF here) -------------------------------
mkdir -m 0755 "$FG_TMP/empty"
# nocap NAME [OPTION...]: a one-shot record of the app by a collector without SYS_ADMIN; rc in RC.
nocap() {
	local name=$1
	shift
	RC=0
	dk run --rm --pid host --network none "${CT_ULIMITS[@]}" --cap-drop ALL --cap-add SYS_PTRACE \
		--cap-add SYSLOG --security-opt seccomp=unconfined -v "$FG_TMP/empty:/var/run/fgcollect" \
		-v /tmp:/tmp fgcollect/collector record --pid "$HP" "$@" --duration 2 \
		-o "$FG_TMP/$name.folded" >"$FG_TMP/$name.err" 2>&1 || RC=$?
}
nocap nocap
((RC != 0)) && grep -q 'perf_event_open refused' "$FG_TMP/nocap.err" ||
	{ cat "$FG_TMP/nocap.err" >&2; fg_fail "without SYS_ADMIN record should be refused perf_event_open (rc $RC)"; }
grep -q 'warning: no CAP_PERFMON.*--cap-add SYS_ADMIN' "$FG_TMP/nocap.err" ||
	{ cat "$FG_TMP/nocap.err" >&2; fg_fail "without SYS_ADMIN the collector does not say at start what it lacks"; }
fg_log "without SYS_ADMIN: $(grep -m1 'warning: no CAP_PERFMON' "$FG_TMP/nocap.err" | cut -c1-110)..."
# Off-CPU: the kernel refuses the BPF program; its fallback needs tracefs, which is not there.
nocap nocap-offcpu --event offcpu
err=$FG_TMP/nocap-offcpu.err
grep -q 'warning: no CAP_BPF.*--cap-add SYS_ADMIN' "$err" ||
	{ cat "$err" >&2; fg_fail "without SYS_ADMIN record --event offcpu does not say at start that it lacks CAP_BPF"; }
((RC != 0)) && grep -q 'off-CPU needs the sched:sched_switch tracepoint: no tracefs' "$err" &&
	! grep -q 'taken in the kernel by BPF' "$err" ||
	{ cat "$err" >&2; fg_fail "without SYS_ADMIN record --event offcpu should fail for want of tracefs (rc $RC)"; }
grep -q 'no tracefs.*mount -t tracefs nodev /sys/kernel/tracing.*-v /sys/kernel/tracing:/sys/kernel/tracing:ro.*Docker Engine before 23.0: SYS_ADMIN' "$err" ||
	{ cat "$err" >&2; fg_fail "without SYS_ADMIN and tracefs record --event offcpu does not say how to mount tracefs or which capability to add"; }
fg_log "without SYS_ADMIN, off-CPU: $(grep -m1 'warning: no CAP_BPF' "$err" | cut -c1-80)...; $(grep -o 'no tracefs at [^,]*' "$err")"

fg_pass "docker $engine: compose as written refused (PERFMON, BPF), with SYS_ADMIN serves a uid-4242 read-only JVM; record unknown java $UJ native $UN kernel $UK, off-CPU by BPF without tracefs (java unknown $OJ), top ok, SYS_ADMIN needed; $((SECONDS - T0)) s"
