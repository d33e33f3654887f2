#!/bin/sh
# SPDX-License-Identifier: MIT
# agent_shippable.sh CC [SANITIZED_AGENT]: scripts/agent-shippable.sh, the guard in front of
# every image and demo that takes libfgagent.so, refuses an agent built with a sanitizer and one
# that asks glibc for a symbol version newer than 2.17, each with its reason. The refused
# libraries are made here with CC from a tiny source: one linked with -fsanitize=address, one
# with -fsanitize=undefined, one that asks for pthread_create@GLIBC_2.34 (what an unpinned
# build on glibc 2.34 or later asks for). SANITIZED_AGENT, when given (the ASan+UBSan build's
# own libfgagent.so), must be refused too. The plain agent's acceptance is agent_glibc_versions.
set -eu
cc=$1
san_agent=${2:-}
src=$(cd "$(dirname "$0")/../../.." && pwd)
check=$src/scripts/agent-shippable.sh
tmp=$(mktemp -d /tmp/fg-shippable.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
cat >"$tmp/lib.c" <<'C'
#include <pthread.h>
#include <stdlib.h>
static void *run(void *arg) { return arg; }
int fg_tiny(int n)
{
	pthread_t t;
	char *p = malloc((size_t)n + 1);
	if (!p || pthread_create(&t, NULL, run, p) != 0)
		return -1;
	pthread_join(t, NULL);
	p[n] = 0;
	free(p);
	return n;
}
C
# refused LIB WORD: the guard exits 1 and its reason holds WORD.
refused() {
	if "$check" "$1" >"$tmp/out" 2>&1; then
		cat "$tmp/out" >&2
		fail "scripts/agent-shippable.sh accepted $1"
	fi
	grep -q "$2" "$tmp/out" || { cat "$tmp/out" >&2; fail "$1 refused, but not for '$2'"; }
	echo "ok: refused $(basename "$1"): $(head -n 1 "$tmp/out")"
}
"$cc" -shared -fPIC -O1 -fsanitize=address -o "$tmp/asan.so" "$tmp/lib.c" -lpthread ||
	fail "cannot build an ASan library with $cc (libasan missing? scripts/install-deps.sh)"
refused "$tmp/asan.so" "sanitizer build"
"$cc" -shared -fPIC -O1 -fsanitize=undefined -o "$tmp/ubsan.so" "$tmp/lib.c" -lpthread ||
	fail "cannot build a UBSan library with $cc"
refused "$tmp/ubsan.so" "sanitizer build"
"$cc" -shared -fPIC -O1 -o "$tmp/plain.so" "$tmp/lib.c" -lpthread || fail "cannot build with $cc"
if objdump -T "$tmp/plain.so" | grep -q 'GLIBC_2\.3[4-9]\|GLIBC_2\.[4-9][0-9]'; then
	refused "$tmp/plain.so" "newer than GLIBC_2.17"
else
	echo "note: this glibc gives pthread_create an old version; no newer-glibc case here"
	ldd --version | head -n 1
	fail "cannot make a library that asks for a glibc newer than 2.17 with $cc"
fi
if [ -n "$san_agent" ]; then
	refused "$san_agent" "sanitizer build"
fi
echo "ok: the guard refuses sanitizer builds and glibc versions newer than 2.17"
