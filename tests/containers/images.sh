#!/bin/bash
# SPDX-License-Identifier: MIT
#
# images.sh - build the images the container tests run (tests/containers/lib.sh: the base
# images from Debian's archive, then docker/'s Dockerfiles), or find them current, holding an
# exclusive lock on $CT_LOCK meanwhile (one build at a time on the machine; a caller that finds
# a build under way waits for it, then finds its images current). ctest's containers_images
# runs it beside the unit tests, so that the end-to-end tests, which run alone, do not wait
# for the builds: e2e_containers_fleet and e2e_containers_docker need it (a fixture), and
# through ct_images run it again, which then only checks that the images are current (or
# builds them, when run outside ctest).
#
# Exit 0 when the images are current, 1 when one could not be built (its log is printed) or the
# lock stayed taken for 30 minutes.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
if [[ -z ${CT_LOCKED:-} ]]; then
	CT_LOCKED=1 flock -w 1800 -o "$CT_LOCK" "$0" "$@" && exit 0
	rc=$?
	ct_say "the images were not made (above), or $CT_LOCK stayed locked for 30 minutes (exit $rc)"
	exit 1
fi
for t in podman runc mmdebstrap; do
	command -v "$t" >/dev/null || { ct_say "$t is not installed (scripts/install-deps.sh installs it)"; exit 1; }
done
t0=$SECONDS
ct__images || exit 1
ct_say "images current in $((SECONDS - t0)) s ($(ct_inputs_hash))"
