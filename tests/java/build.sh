#!/bin/sh
# SPDX-License-Identifier: MIT
# build.sh OUTDIR - compile the Java test workloads into OUTDIR once; recompile only when a
# source is newer than OUTDIR/.stamp. Class files target Java 11, so every JDK >= 11 runs them.
# Safe to call concurrently (flock). Prints OUTDIR.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build.sh OUTDIR}
mkdir -p "$out"
exec 9>"$out/.lock"
flock 9
stale=1
if [ -f "$out/.stamp" ]; then
	stale=0
	for f in "$here"/*.java; do
		[ "$f" -nt "$out/.stamp" ] && stale=1
	done
fi
if [ "$stale" = 1 ]; then
	javac=${JAVAC:-javac}
	[ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/javac" ] && javac=$JAVA_HOME/bin/javac
	"$javac" -nowarn --release 11 -d "$out" "$here"/*.java
	touch "$out/.stamp"
fi
echo "$out"
