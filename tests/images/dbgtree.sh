#!/bin/bash
# SPDX-License-Identifier: MIT
#
# dbgtree.sh SUITE N - the debug file of the libjvm.so of jdkroot.sh's SUITE root with OpenJDK N,
# from that suite's openjdk-N-dbg package, in a debug tree: made once and cached; prints the
# tree's path, to be bound over a container's /usr/lib/debug (the image root's /usr is
# read-only in the container, and has /usr/lib/debug but no .build-id in it).
#
#   tests/images/dbgtree.sh sid 8   # -> /var/cache/fgcollect-test/roots/sid-openjdk-8-dbg
#
# Only libjvm.so's file is kept (.build-id/XX/YYYY.debug, XX/YYYY its GNU build id), not the
# rest of the package; the package is fetched with apt-get download from the root's own mirror
# and suite at the version installed in the root, into a private apt state beside the tree,
# and removed once the file is out. Cached while the root's libjvm.so keeps its build id.
# openjdk-8-dbg is some 2 MB (libjvm.so's symbol table); a newer JDK's package is some 200 MB
# with its DWARF, and Debian leaves those JDKs' libjvm.so its symbol table anyway.
#
# Exit: 0 and the path on stdout; 1 when the file cannot be had (no root, no such package, the
# archive unreachable or no longer serving the root's version, a build id that does not
# match), saying why. It never skips.
set -euo pipefail

readonly MIRROR=${FG_DEBIAN_MIRROR:-http://deb.debian.org/debian}
readonly ROOTS=${FG_ROOTS_DIR:-/var/cache/fgcollect-test/roots}

die() {
	echo "dbgtree: $*" >&2
	exit 1
}

[[ $# -eq 2 ]] || {
	echo "usage: dbgtree.sh SUITE N   (e.g. bullseye 11)" >&2
	exit 64
}
suite=$1 n=$2
root=$("$(dirname "$0")/jdkroot.sh" "$suite" "$n") || die "no $suite root with OpenJDK $n"
jvm=$root/usr/lib/jvm/java-$n-openjdk-amd64
lib=$jvm/lib/server/libjvm.so
[[ -f $lib ]] || lib=$jvm/jre/lib/amd64/server/libjvm.so
[[ -f $lib ]] || die "no libjvm.so under $jvm"
bid() { readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p' | head -n 1; }
id=$(bid "$lib")
[[ ${#id} -ge 8 ]] || die "$lib has no GNU build id"
dir=$ROOTS/$suite-openjdk-$n-dbg
file=$dir/.build-id/${id:0:2}/${id:2}.debug

mkdir -p "$ROOTS"
exec 9>"$dir.lock"
flock 9
if [[ -s $file && $(bid "$file") == "$id" ]]; then
	echo "$dir"
	exit 0
fi
command -v apt-get >/dev/null || die "apt-get is not installed"
ver=$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Version}' "openjdk-$n-jre-headless") ||
	die "openjdk-$n-jre-headless is not installed in $root"
tmp=$dir.tmp
rm -rf --one-file-system "$tmp"
mkdir -p "$tmp"/apt/{state/lists/partial,cache/archives/partial} "$tmp/x"
echo "deb $MIRROR $suite main" >"$tmp/apt/sources.list"
apt=(-o "Dir::Etc::SourceList=$tmp/apt/sources.list" -o Dir::Etc::SourceParts=-
	-o "Dir::State=$tmp/apt/state" -o "Dir::Cache=$tmp/apt/cache" -o APT::Architecture=amd64
	-o Debug::NoLocking=1 -o 'Acquire::Check-Valid-Until=false')
echo "dbgtree: fetching openjdk-$n-dbg $ver from $MIRROR $suite (once)" >&2
t0=$SECONDS
apt-get "${apt[@]}" -q update >"$tmp/apt.log" 2>&1 || {
	tail -n 5 "$tmp/apt.log" >&2
	die "apt-get update of $suite failed"
}
(cd "$tmp" && apt-get "${apt[@]}" -q download "openjdk-$n-dbg=$ver") >>"$tmp/apt.log" 2>&1 || {
	tail -n 5 "$tmp/apt.log" >&2
	die "cannot download openjdk-$n-dbg $ver from $suite (if $suite moved on from $ver, make the root again: FG_ROOT_REBUILD=1 tests/images/jdkroot.sh $suite $n)"
}
deb=$(ls "$tmp"/openjdk-"$n"-dbg_*.deb)
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp/x" "./usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ||
	die "openjdk-$n-dbg $ver has no debug file for build id $id ($lib)"
got=$tmp/x/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
[[ $(bid "$got") == "$id" ]] || die "the debug file's build id is not $id"
rm -rf --one-file-system "$dir"
mkdir -p "$(dirname "$file")"
mv "$got" "$file"
rm -rf --one-file-system "$tmp"
echo "dbgtree: $file made in $((SECONDS - t0)) s" >&2
echo "$dir"
