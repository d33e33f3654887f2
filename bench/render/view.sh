#!/bin/sh
# The time view of a day of rolling profiles: `fgcollect view DIR` over 1440 one-minute profiles
# of one JVM as `watch --out DIR` writes them (tests/browser/rolling_gen.py, STACKS distinct
# stacks each). Prints the page's size and writing time, and Chromium's time to open it and to
# redraw a selection (bench/render/timeview_load.py; its "1 s" selection is one interval), and
# the same for a page of one profile as the baseline (the browser's fixed cost).
#   bench/render/view.sh BUILD_DIR      env: VIEW_BENCH="COUNT INTERVAL_S STACKS" (default
#                                     "1440 60 1000")
set -u
build=${1:-build}
fg=$build/collector/fgcollect
here=$(dirname "$0")
set -- ${VIEW_BENCH:-1440 60 1000}
[ -x "$fg" ] || { echo "view: build fgcollect first (make build)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$here/../../tests/browser/rolling_gen.py" "$tmp/profiles" "$1" "$2" "$3" || exit 1
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
echo "rolling profiles: $1 of $2 s, $3 stacks each: $(du -sm "$tmp/profiles" | cut -f1) MiB of .folded"
t0=$(date +%s%N)
"$fg" view "$tmp/profiles" >"$tmp/pages" || exit 1
t1=$(date +%s%N)
page=$(head -n 1 "$tmp/pages")
sz=$(stat -c %s "$page")
echo "page: $sz bytes ($(echo "scale=2; $sz / 1048576" | bc) MiB), written in $(echo "scale=2; ($t1 - $t0) / 1000000000" | bc) s"
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
	# the baseline, in the same run: a page of one profile (the browser's fixed cost)
	python3 "$here/../../tests/browser/rolling_gen.py" "$tmp/one" 1 "$2" "$3" || exit 1
	"$fg" view "$tmp/one" >"$tmp/onepage" || exit 1
	echo "the baseline is a page of one profile (the browser's fixed cost)"
	python3 "$here/timeview_load.py" --baseline "$(head -n 1 "$tmp/onepage")" "$page"
else
	echo "view: chromium or chromedriver missing: no load times"
fi
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
