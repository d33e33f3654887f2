#!/bin/sh
# SPDX-License-Identifier: MIT
# glibc_versions.sh LIBFGAGENT: the agent asks glibc for no symbol version newer than
# GLIBC_2.17, so it loads on every glibc from 2.17 (jvmti-agent/glibc217.c). Reads the
# version of every dynamic symbol and every version the file requires (objdump -T, -p); fails
# on one newer than 2.17 or not a release number (GLIBC_PRIVATE, GLIBC_ABI_DT_RELR), naming
# the symbols that ask for it.
set -eu
lib=$1
max=2.17
[ -f "$lib" ] || {
	echo "FAIL: $lib does not exist" >&2
	exit 1
}
syms=$(objdump -T "$lib") || {
	echo "FAIL: objdump -T $lib failed" >&2
	exit 1
}
refs=$(objdump -p "$lib" | sed -n '/^Version References:/,$p' | awk 'NF == 4 { print $4 }')
vers=$( (
	printf '%s\n' "$syms" | grep -oE '\(?GLIBC_[A-Za-z0-9_.]+\)?' | tr -d '()'
	printf '%s\n' "$refs"
) | grep '^GLIBC_' | sort -uV)
[ -n "$vers" ] || {
	echo "FAIL: $lib names no GLIBC_ version (not a dynamically linked agent?)" >&2
	exit 1
}
bad=""
for v in $vers; do
	n=${v#GLIBC_}
	if printf '%s\n' "$n" | grep -qE '^[0-9]+(\.[0-9]+)+$' &&
		[ "$(printf '%s\n%s\n' "$n" "$max" | sort -V | tail -n 1)" = "$max" ]; then
		continue
	fi
	bad="$bad $v"
	echo "FAIL: $lib requires $v, newer than GLIBC_$max or not a release:" >&2
	printf '%s\n' "$syms" | v="$v" awk 'BEGIN { v = ENVIRON["v"] } $0 ~ "[( ]" v "[) ]" { print "    " $NF }' | sort -u >&2
done
[ -z "$bad" ] || exit 1
echo "ok: $lib requires glibc versions up to $(printf '%s\n' "$vers" | sed 's/^GLIBC_//' | sort -V | tail -n 1) (at most $max): $(printf '%s\n' "$vers" | tr '\n' ' ')"
