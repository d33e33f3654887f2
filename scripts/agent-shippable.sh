#!/bin/sh
# SPDX-License-Identifier: MIT
# agent-shippable.sh LIBFGAGENT: may this libfgagent.so go into an image (or a demo's JVMs)?
# Exit 0 and one "ok:" line when it may; exit 1 and a "FAIL:" line per reason when not:
#   - it was built with a sanitizer (ASan, UBSan, TSan, LSan, MSan): it needs the sanitizer's
#     runtime and the build host's glibc (GLIBC_2.34 and later), and a stock JVM cannot load it;
#   - it asks glibc for a symbol version newer than GLIBC_2.17, or for one that is not a release
#     number (GLIBC_PRIVATE, GLIBC_ABI_DT_RELR): a JVM on an older glibc then stops at
#     -agentpath (jvmti-agent/glibc217.c pins the plain build's versions).
# Reads the file with objdump only (binutils): the NEEDED entries, the version references and
# the version of every dynamic symbol, naming the symbols that ask for a refused version.
# Used by docker/Dockerfile.* (the build stage), scripts/demo.sh and ctest agent_glibc_versions.
set -eu
lib=${1:?usage: scripts/agent-shippable.sh LIBFGAGENT}
max=2.17
[ -f "$lib" ] || {
	echo "FAIL: $lib does not exist" >&2
	exit 1
}
command -v objdump >/dev/null || {
	echo "FAIL: objdump (binutils) is needed to check $lib" >&2
	exit 1
}
syms=$(objdump -T "$lib") || {
	echo "FAIL: objdump -T $lib failed" >&2
	exit 1
}
priv=$(objdump -p "$lib") || {
	echo "FAIL: objdump -p $lib failed" >&2
	exit 1
}
bad=""

# A sanitizer's runtime, linked dynamically (NEEDED libasan.so.N, ...) or statically (its
# entry points among the dynamic symbols, defined or wanted).
san=$( (
	printf '%s\n' "$priv" | awk '$1 == "NEEDED" { print $2 }' |
		grep -E '^lib(asan|ubsan|tsan|lsan|msan|hwasan)[.]so|^libclang_rt[.](asan|ubsan|tsan|msan)' || true
	printf '%s\n' "$syms" | awk '{ print $NF }' |
		grep -oE '^__(asan|ubsan|tsan|lsan|msan|hwasan)_' | sort -u | sed 's/$/*/' || true
) | tr '\n' ' ' | sed 's/ $//')
if [ -n "$san" ]; then
	bad=1
	echo "FAIL: $lib is a sanitizer build (it needs $san): a stock JVM cannot load it and" \
		"its runtime needs the build host's glibc; ship the plain build's agent" \
		"(make build: build/jvmti-agent/libfgagent.so)" >&2
fi

refs=$(printf '%s\n' "$priv" | sed -n '/^Version References:/,$p' | awk 'NF == 4 { print $4 }')
vers=$( (
	printf '%s\n' "$syms" | grep -oE '\(?GLIBC_[A-Za-z0-9_.]+\)?' | tr -d '()' || true
	printf '%s\n' "$refs"
) | grep '^GLIBC_' | sort -uV || true)
[ -n "$vers" ] || {
	echo "FAIL: $lib names no GLIBC_ version (not a dynamically linked agent?)" >&2
	exit 1
}
for v in $vers; do
	n=${v#GLIBC_}
	if printf '%s\n' "$n" | grep -qE '^[0-9]+(\.[0-9]+)+$' &&
		[ "$(printf '%s\n%s\n' "$n" "$max" | sort -V | tail -n 1)" = "$max" ]; then
		continue
	fi
	bad=1
	echo "FAIL: $lib requires $v, newer than GLIBC_$max or not a release:" >&2
	printf '%s\n' "$syms" | v="$v" awk 'BEGIN { v = ENVIRON["v"] } $0 ~ "[( ]" v "[) ]" { print "    " $NF }' | sort -u >&2
done
[ -z "$bad" ] || exit 1
echo "ok: $lib has no sanitizer and requires glibc versions up to $(printf '%s\n' "$vers" | sed 's/^GLIBC_//' | sort -V | tail -n 1) (at most $max): $(printf '%s\n' "$vers" | tr '\n' ' ')"
