#!/bin/sh
# Time view benchmark: a synthetic recording of 10 minutes at 99 Hz of 50 threads (about 3
# million samples, tests/browser/timeview_gen.c) written as the time view page, speedscope's
# file, and (the baseline) the flame graph SVG and folded stacks of the same stacks without their
# times. Prints each file's size and writing time, and Chromium's time to open the page and to
# redraw a selection (bench/render/timeview_load.py), next to its time to open the SVG and to
# open a page of 1 s of one thread (what any page costs the browser).
#   bench/render/timeview.sh BUILD_DIR      env: TIMEVIEW_BENCH="SECONDS HZ THREADS" (default
#                                         "600 99 50")
set -u
build=${1:-build}
gen=$build/tests/timeview_gen
here=$(dirname "$0")
set -- ${TIMEVIEW_BENCH:-600 99 50}
[ -x "$gen" ] || { echo "timeview: build timeview_gen first (make build)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "recording: $1 s at $2 Hz of $3 threads ($(( $1 * $2 * $3 )) samples)"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
printf '%-18s %10s %8s\n' file MiB write_s
for f in page.html page.speedscope.json page.svg page.folded; do
	t0=$(date +%s%N)
	"$gen" "$tmp/$f" "$@" || exit 1
	t1=$(date +%s%N)
	sz=$(stat -c %s "$tmp/$f")
	printf '%-18s %10s %8s\n' "$f" "$(echo "scale=2; $sz / 1048576" | bc)" \
		"$(echo "scale=2; ($t1 - $t0) / 1000000000" | bc)"
done
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
	# the browser's own cost of opening a page (the baseline): a page of 1 s of one thread
	"$gen" "$tmp/tiny.html" 1 99 1 || exit 1
	echo "the baseline is a page of 1 s of one thread (the browser's fixed cost)"
	python3 "$here/timeview_load.py" --baseline "$tmp/tiny.html" "$tmp/page.html" "$tmp/page.svg"
else
	echo "timeview: chromium or chromedriver missing: no load times"
fi
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
