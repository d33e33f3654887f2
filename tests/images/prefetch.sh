#!/bin/bash
# SPDX-License-Identifier: MIT
#
# prefetch.sh - make (or find current) every image root the end-to-end tests use, one after
# the other, at low priority: Debian 11 with OpenJDK 11, and Debian unstable with the JDK
# matrix's OpenJDKs in one root (jdkroot.sh); then the debug file of unstable's JDK 8 libjvm.so
# from openjdk-8-dbg (dbgtree.sh, some 2 MB: the matrix's dbg check). `make test` starts it in the background as it
# begins, its log in the build tree, so that mmdebstrap's minutes overlap the unit tests; a test
# that needs a root waits on jdkroot.sh's lock for it, and fails if it could not be made.
#
# Exit: 0 when every root is there, 1 when one could not be made (each is still tried).
set -uo pipefail
here=$(dirname "$0")
rc=0
for root in "bullseye 11" "sid 21"; do
	t0=$SECONDS
	# shellcheck disable=SC2086 # "SUITE N"
	if out=$(nice -n 10 "$here/jdkroot.sh" $root); then
		echo "prefetch: $root: $out ($((SECONDS - t0)) s)"
	else
		echo "prefetch: $root: FAILED ($((SECONDS - t0)) s)"
		rc=1
	fi
done
t0=$SECONDS
if out=$(nice -n 10 "$here/dbgtree.sh" sid 8); then
	echo "prefetch: openjdk-8-dbg: $out ($((SECONDS - t0)) s)"
else
	echo "prefetch: openjdk-8-dbg: FAILED ($((SECONDS - t0)) s)"
	rc=1
fi
exit $rc
