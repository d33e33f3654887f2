#!/bin/sh
# SPDX-License-Identifier: MIT
# cc-launcher.sh COMPILER ARG... - the builds' compiler launcher (CMAKE_<LANG>_COMPILER_LAUNCHER,
# set by the Makefile): runs the compile through ccache when it is installed, keyed without the
# checkout's path (CCACHE_BASEDIR, CCACHE_NOHASHDIR), so that a fresh checkout of the same
# sources, at any path, reuses what an earlier one compiled; without ccache, runs the compiler.
# The cache: FG_CCACHE_DIR, default /var/cache/fgcollect-test/ccache for root (where the tests
# keep their other caches) and ccache's own default otherwise; FG_CCACHE=off compiles directly.
if [ "${FG_CCACHE:-on}" = off ] || ! command -v ccache >/dev/null 2>&1; then
	exec "$@"
fi
if [ -z "${CCACHE_DIR:-}" ]; then
	if [ -n "${FG_CCACHE_DIR:-}" ]; then
		CCACHE_DIR=$FG_CCACHE_DIR
		export CCACHE_DIR
	elif [ "$(id -u)" -eq 0 ]; then
		CCACHE_DIR=/var/cache/fgcollect-test/ccache
		export CCACHE_DIR
	fi
fi
: "${CCACHE_MAXSIZE:=3G}"
CCACHE_BASEDIR=$(cd "$(dirname "$0")/.." && pwd -P)
CCACHE_NOHASHDIR=1
export CCACHE_MAXSIZE CCACHE_BASEDIR CCACHE_NOHASHDIR
exec ccache "$@"
