# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# lib.sh - podman on a machine like CI's: the flags every podman call needs here, and the
# images of docker/ built once and reused.
#
#   . tests/containers/lib.sh
#   ct_images            # base images + fgcollect/collector + fgcollect/primes (and their
#                        # build stage, fgcollect/build), cached; tests/containers/images.sh
#   ct_podman run ...    # podman with the runtime flags below
#
# Why the flags: crun refuses this machine's hybrid (v1 + v2) cgroup layout and runc with the
# cgroupfs manager does not; builds need the host network (no bridge networking here); the
# sandbox refuses to raise rlimits, so every container gets limits at or below the host's.
#
# Images (all local, no registry): docker.io/library/debian:12 and :12-slim from Debian's
# archive (mmdebstrap --variant=minbase bookworm), then docker/Dockerfile.collector and
# docker/Dockerfile.jvm --target sample. An image is rebuilt only when the files it is built
# from changed: each carries a label with the hash of the Dockerfiles and the sources compiled
# into it; podman's layer cache keeps the apt layers across rebuilds. The build stage the two
# Dockerfiles share (the toolchain's apt layer, the same in both) is no layer of either image,
# so it is kept as an image of its own, $CT_BUILDER: pruning superseded layers would remove it
# otherwise, and every rebuild would install the toolchain again (2 to 3 minutes here).

CT_SRC=${FG_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
CT_BASE=docker.io/library/debian
CT_COLLECTOR=localhost/fgcollect/collector:test
CT_PRIMES=localhost/fgcollect/primes:test
CT_BUILDER=localhost/fgcollect/build:test
CT_ULIMITS=(--ulimit nofile=1024:1024 --ulimit nproc=4096:4096)
CT_STAMP_LABEL=org.fgcollect.inputs
CT_LOCK=/run/lock/fgcollect-ct-images.lock
CT_STAMP_DIR=/var/cache/fgcollect-test/ct-stamps # IMAGE.STAMP: the id its last build made

ct_podman() {
	podman --runtime runc --cgroup-manager cgroupfs "$@"
}

ct_say() {
	printf '[containers %(%T)T] %s\n' -1 "$*" >&2
}

# ct_inputs_hash: sha256 over the names and contents of what the images are built from.
ct_inputs_hash() {
	(
		cd "$CT_SRC" &&
			find docker/Dockerfile.* cmake shared jvmti-agent collector CMakeLists.txt \
				tests/java/PrimeService.java scripts/agent-shippable.sh -type f ! -name '*.o' ! -name '*.a' ! -name '*.so' -print0 |
			LC_ALL=C sort -z | xargs -0 sha256sum
	) | sha256sum | cut -c1-16
}

# ct_base_images: debian:12 and debian:12-slim from Debian's archive, unless present.
ct_base_images() {
	local tmp t0
	if ct_podman image exists "$CT_BASE:12" && ct_podman image exists "$CT_BASE:12-slim"; then
		return 0
	fi
	command -v mmdebstrap >/dev/null || { ct_say "mmdebstrap missing (scripts/install-deps.sh)"; return 1; }
	t0=$SECONDS
	tmp=$(mktemp -d /var/tmp/fgct-base.XXXXXX)
	ct_say "building $CT_BASE:12 with mmdebstrap --variant=minbase bookworm"
	if ! mmdebstrap --quiet --variant=minbase bookworm "$tmp/rootfs.tar" >"$tmp/log" 2>&1; then
		tail -n 20 "$tmp/log" >&2
		rm -rf "$tmp"
		return 1
	fi
	ct_podman import --quiet "$tmp/rootfs.tar" "$CT_BASE:12" >/dev/null &&
		ct_podman tag "$CT_BASE:12" "$CT_BASE:12-slim" || { rm -rf "$tmp"; return 1; }
	rm -rf "$tmp"
	ct_say "base image ready in $((SECONDS - t0)) s"
}

# ct_build IMAGE STAMP DOCKERFILE [podman build args...]: build unless IMAGE is current for
# STAMP: it carries STAMP as its label, or it is the very image (by id) that the last build of
# IMAGE from STAMP made. (When every layer of a build comes from the cache, podman hands back
# the earlier image with the label of the build that made it: a change of the inputs that leaves
# an image's contents as they were, e.g. the collector's sources for the JVM image, keeps the
# older label, and without the record every run would build that image again.)
ct_build() {
	local image=$1 stamp=$2 file=$3 have id rec t0 log
	shift 3
	rec=$CT_STAMP_DIR/${image//[\/:]/_}
	have=$(ct_podman image inspect --format "{{index .Labels \"$CT_STAMP_LABEL\"}} {{.Id}}" "$image" 2>/dev/null || true)
	id=${have##* } have=${have% *}
	if [[ $have == "$stamp" || ( -n $id && $(cat "$rec.$stamp" 2>/dev/null) == "$id" ) ]]; then
		ct_say "$image is current ($stamp)"
		return 0
	fi
	t0=$SECONDS
	log=$(mktemp /var/tmp/fgct-build.XXXXXX)
	ct_say "building $image from $file ($stamp)"
	if ! ct_podman build --network host "${CT_ULIMITS[@]}" --layers \
		--ignorefile "$CT_SRC/$file.dockerignore" -f "$CT_SRC/$file" \
		--label "$CT_STAMP_LABEL=$stamp" -t "$image" "$@" "$CT_SRC" >"$log" 2>&1; then
		tail -n 40 "$log" >&2
		ct_say "podman build of $image failed (full log: $log)"
		return 1
	fi
	rm -f "$log"
	id=$(ct_podman image inspect --format '{{.Id}}' "$image") || return 1
	mkdir -p "$CT_STAMP_DIR" && rm -f "$rec".* && echo "$id" >"$rec.$stamp" || return 1
	ct_say "$image built in $((SECONDS - t0)) s"
}

# ct_images: everything the container tests need, built or reused, by one caller at a time
# (tests/containers/images.sh under an exclusive lock on $CT_LOCK: ctest's containers_images
# may still be building them when a test asks, or a test run from another tree).
ct_images() {
	"$CT_SRC/tests/containers/images.sh"
}

# ct__images: what ct_images does, without the lock (images.sh holds it).
ct__images() {
	local stamp
	ct_base_images || return 1
	stamp=$(ct_inputs_hash) || return 1
	# First: the collector's build then finds every layer of its build stage made.
	ct_build "$CT_BUILDER" "$stamp" docker/Dockerfile.collector --target build || return 1
	ct_build "$CT_COLLECTOR" "$stamp" docker/Dockerfile.collector || return 1
	ct_build "$CT_PRIMES" "$stamp" docker/Dockerfile.jvm --target sample || return 1
	# Layers of superseded builds: keep the disk bounded across many runs.
	ct_podman image prune -f >/dev/null 2>&1 || true
}

# below5 "U/N": U (unknown frames, or time under them) of N, N > 0, is under 5%.
below5() { f="$1" awk 'BEGIN { f = ENVIRON["f"]; split(f, x, "/"); exit !(x[2] > 0 && x[1] * 100 < 5 * x[2]) }'; }

# ct_offcpu_check LABEL ERR FOLDED MS: what `record --event offcpu` of a PrimeService container,
# run in the collector container in MS ms, must show in its summary ERR and profile FOLDED:
# stacks taken in the kernel by BPF, Java frames, under 5% of the off-CPU time under a stack with
# an [unknown] frame (time, as a flame graph's widths: one stack of 256 unknown frames the kernel's
# walk found in a broken frame-pointer chain weighs its few hundred microseconds, not 256 frames),
# a load thread waiting for its answer ([off-cpu: sleeping] under PrimeService::load). Logs its
# figures; sets CT_OFF_JAVA to the unknown Java frames ("U/N").
ct_offcpu_check() {
	local label=$1 err=$2 f=$3 t=$4 bpf line unk states
	bpf=$(grep -m1 'off-CPU: .* stacks taken in the kernel by BPF' "$err") ||
		{ cat "$err" >&2; fg_fail "$label: off-CPU stacks were not taken by BPF in the collector container"; }
	line=$(grep 'unresolved frames:' "$err") || { cat "$err" >&2; fg_fail "$label: off-CPU record printed no summary"; }
	CT_OFF_JAVA=$(sed -nE 's|.*java [^(]*\(([0-9]+)/([0-9]+)\).*|\1/\2|p' <<<"$line")
	[[ ${CT_OFF_JAVA#*/} =~ ^[1-9] ]] || { cat "$err" >&2; fg_fail "$label off-CPU: no Java frame: $line"; }
	grep -q 'PrimeService::load_\[[0ij]\];.*;\[off-cpu: sleeping\]_\[k\] [0-9]*$' "$f" ||
		fg_fail "$label off-CPU: no load thread waiting for its answer ([off-cpu: sleeping] under PrimeService::load) in $f"
	# Share of the off-CPU time whose stack has an [unknown] frame, and the states at the leaves.
	unk=$(awk '{ a += $NF } /\[unknown\]/ { u += $NF } END { printf "%d/%d", u, a }' "$f")
	below5 "$unk" || { cat "$err" >&2; fg_fail "$label off-CPU: $unk of the time under an [unknown] frame (>= 5%, or none): $line"; }
	unk=$(f="$unk" awk 'BEGIN { split(ENVIRON["f"], x, "/"); printf "%.1f", 100 * x[1] / x[2] }')
	states=$(grep -o '\[off-cpu: [^]]*\]' "$f" | sort | uniq -c | sort -rn | awk '{ $1 = $1 } 1' | paste -sd, -)
	fg_log "$label off-CPU in $t ms: ${bpf#*off-CPU: }"
	fg_log "$label off-CPU: $line; $unk% of the time under an [unknown] frame; leaves: $states"
}

# ct_sandbox_check LABEL PID LOG: the collector at host PID PID (watch, its log in LOG) serves
# the agent socket from a child that gave up root: uid and gid 65534, no capability in its
# effective, permitted, inheritable and ambient sets, seccomp filter mode, no_new_privs; and the
# log warns of no partial confinement. (Its bounding set stays the container's: dropping it
# needs CAP_SETPCAP, which the container does not give; with no_new_privs and execve forbidden
# nothing can be gained from it.) Logs what it found.
ct_sandbox_check() {
	local label=$1 pid=$2 log=$3 c p= f
	for c in $(pgrep -P "$pid" 2>/dev/null); do
		[[ $(cat "/proc/$c/comm" 2>/dev/null) == fg-sandbox ]] && p=$c
	done
	[[ -n $p ]] || fg_fail "$label: the collector (host pid $pid) has no fg-sandbox child"
	for f in Uid Gid; do
		[[ $(K=$f: awk '$1 == ENVIRON["K"] { print $2 $3 $4 $5 }' "/proc/$p/status") == 65534655346553465534 ]] ||
			fg_fail "$label: the socket's process $p has $(grep "^$f:" "/proc/$p/status")"
	done
	for f in CapEff CapPrm CapInh CapAmb; do
		[[ $(K=$f: awk '$1 == ENVIRON["K"] { print $2 }' "/proc/$p/status") == 0000000000000000 ]] ||
			fg_fail "$label: the socket's process $p has $(grep "^$f:" "/proc/$p/status")"
	done
	[[ $(awk '$1 == "Seccomp:" { print $2 }' "/proc/$p/status") == 2 &&
		$(awk '$1 == "NoNewPrivs:" { print $2 }' "/proc/$p/status") == 1 ]] ||
		fg_fail "$label: the socket's process $p: $(grep -E '^(Seccomp|NoNewPrivs):' "/proc/$p/status" | paste -sd' ')"
	! grep -q "warning: the agent socket's process" "$log" ||
		fg_fail "$label: $(grep -m1 "warning: the agent socket's process" "$log")"
	fg_log "$label: the agent socket's process $p runs as uid 65534, no capability (bounding set $(awk '$1 == "CapBnd:" { print $2 }' "/proc/$p/status")), seccomp filter, no_new_privs"
}
