#!/bin/sh
# libfgagent.so exports exactly Agent_OnLoad, Agent_OnUnload and Agent_OnAttach, and (outside
# sanitizer builds) needs nothing but glibc: libc, and libpthread and libdl where a glibc older
# than 2.34 keeps the pthread and dl functions; nng and mbedtls are linked in statically and
# hidden.
#   agent_exports.sh LIBFGAGENT SANITIZED(0|1)
set -eu
lib=$1
sanitized=${2:-0}
syms=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sort | tr '\n' ' ')
want="Agent_OnAttach Agent_OnLoad Agent_OnUnload "
if [ "$syms" != "$want" ]; then
	echo "FAIL: $lib exports: $syms (want: $want)" >&2
	exit 1
fi
if [ "$sanitized" = 0 ]; then
	needed=$(readelf -dW "$lib" | awk '/NEEDED/ {print $NF}' | tr -d '[]' | sort | tr '\n' ' ')
	if [ "$needed" != "libc.so.6 libdl.so.2 libpthread.so.0 " ]; then
		echo "FAIL: $lib needs: $needed (want only libc.so.6 libdl.so.2 libpthread.so.0)" >&2
		exit 1
	fi
fi
echo "ok: $lib exports only $want"
