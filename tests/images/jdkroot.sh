#!/bin/bash
# SPDX-License-Identifier: MIT
#
# jdkroot.sh SUITE N - a Debian image root with OpenJDK N from Debian's archive, made once and
# cached; prints its path.
#
#   tests/images/jdkroot.sh bullseye 11   # -> /var/cache/fgcollect-test/roots/bullseye-openjdk-11
#   tests/images/jdkroot.sh sid 21        # -> .../roots/sid-openjdk-8-11-21-25-26 (all of SID_JDKS)
#
# The root is what `mmdebstrap --variant=minbase --include=openjdk-N-jre-headless,procps SUITE`
# makes from http://deb.debian.org/debian: that distribution's own glibc, JDK and tools. The
# namespace harness runs a JVM on it (fgcontainer --root, lib.sh fg_image_root).
#
# The JDKs of the test matrix on Debian unstable (SID_JDKS below) share ONE root holding all of
# them, made by one mmdebstrap run: the packages they share are fetched and unpacked once, and
# `jdkroot.sh sid N` for any N of the list prints that root's path. Any other SUITE N gets a
# root of its own with that one JDK.
#
# Cache: FG_ROOTS_DIR (default /var/cache/fgcollect-test/roots)/NAME, NAME = SUITE-openjdk-N
# (or sid-openjdk-8-11-21-25-26: the list), complete when it holds the stamp file
# .fg-root-complete; it is made in NAME.tmp and renamed into place, so a root that exists with
# its stamp is whole. A complete root is reused when its
# inputs are unchanged: its apt sources name SUITE and the same mirror, and every package of
# the include list is installed in it. Otherwise it is made again. FG_ROOT_REBUILD=1 makes it
# again in any case. One lock per root serializes concurrent callers.
#
# Exit: 0 and the path on stdout; 1 when the root cannot be made (mmdebstrap missing, the
# archive unreachable, the suite without that JDK), saying why and showing mmdebstrap's last
# lines. It never skips: a test that needs a root it cannot get fails.
set -euo pipefail

readonly MIRROR=${FG_DEBIAN_MIRROR:-http://deb.debian.org/debian}
readonly ROOTS=${FG_ROOTS_DIR:-/var/cache/fgcollect-test/roots}

die() {
	echo "jdkroot: $*" >&2
	exit 1
}

[[ $# -eq 2 ]] || {
	echo "usage: jdkroot.sh SUITE N   (e.g. bullseye 11, sid 8)" >&2
	exit 64
}
suite=$1 n=$2
[[ $suite =~ ^[a-z][a-z0-9-]{1,30}$ ]] || die "suite '$suite' is not a Debian suite name"
[[ $n =~ ^[0-9]{1,3}$ ]] || die "JDK '$n' is not a feature release number"
# The matrix's JDKs on Debian unstable, all in one root.
readonly SID_JDKS=(8 11 21 25 26)
jdks=("$n")
if [[ $suite == sid && " ${SID_JDKS[*]} " == *" $n "* ]]; then
	jdks=("${SID_JDKS[@]}")
fi
PKGS=()
for j in "${jdks[@]}"; do PKGS+=("openjdk-$j-jre-headless"); done
PKGS+=(procps)
readonly PKGS
dir=$ROOTS/$suite-openjdk-$(
	IFS=-
	echo "${jdks[*]}"
)
stamp=$dir/.fg-root-complete

# root_current: DIR is complete and made from these inputs.
root_current() {
	local p
	[[ -f $stamp && -d $dir/usr/lib/jvm ]] || return 1
	grep -qsE "^deb +$MIRROR/? +$suite( |$)" "$dir"/etc/apt/sources.list || return 1
	for p in "${PKGS[@]}"; do
		dpkg-query --admindir="$dir/var/lib/dpkg" -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || return 1
	done
}

[[ $(id -u) == 0 ]] || die "needs root (mmdebstrap makes the root as root; the cache is $ROOTS)"
mkdir -p "$ROOTS"
exec 9>"$dir.lock"
flock 9
if [[ ${FG_ROOT_REBUILD:-0} != 1 ]] && root_current; then
	echo "$dir"
	exit 0
fi

command -v mmdebstrap >/dev/null ||
	die "mmdebstrap is not installed (scripts/install-deps.sh installs it)"
log=$dir.log
rm -rf --one-file-system "$dir.tmp"
echo "jdkroot: making $dir (mmdebstrap $suite, ${PKGS[*]}; a minute or more per JDK)" >&2
t0=$SECONDS
include=$(
	IFS=,
	echo "${PKGS[*]}"
)
if ! mmdebstrap --variant=minbase --aptopt='Acquire::Check-Valid-Until "false"' \
	--include="$include" "$suite" "$dir.tmp" "$MIRROR" >"$log" 2>&1; then
	rm -rf --one-file-system "$dir.tmp"
	echo "jdkroot: mmdebstrap could not make the $suite root with ${PKGS[*]}:" >&2
	tail -n 15 "$log" >&2
	die "no root ${dir##*/} (full log: $log)"
fi
rm -rf --one-file-system "$dir"
mv "$dir.tmp" "$dir"
touch "$stamp"
root_current || die "$dir was made but does not hold ${PKGS[*]} from $suite (log: $log)"
echo "jdkroot: $dir made in $((SECONDS - t0)) s" >&2
echo "$dir"
