#!/bin/sh
# Render benchmark: `fgcollect flamegraph` vs FlameGraph's flamegraph.pl on generated Java-like
# folded stacks (bench/gen_folded.c): 25 MB / 10k unique stacks and 250 MB / 100k unique stacks,
# depths 20-80. Prints wall time, peak RSS (GNU time) and ratios measured in the same run.
#   bench/render.sh BUILD_DIR        env: FLAMEGRAPH_DIR (default /work/FlameGraph),
#                                         RENDER_BENCH_SIZES (default "25:10000 250:100000")
set -u
build=${1:-build}
fg=$build/collector/fgcollect
gen=$build/bench/gen_folded
pl=${FLAMEGRAPH_DIR:-/work/FlameGraph}/flamegraph.pl
sizes=${RENDER_BENCH_SIZES:-"25:10000 250:100000"}
[ -x "$fg" ] && [ -x "$gen" ] || { echo "render: build fgcollect and gen_folded first" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "render: /usr/bin/time (Debian package time) is missing" >&2; exit 1; }
have_pl=1
if [ ! -r "$pl" ] || ! command -v perl >/dev/null; then
	have_pl=0
	echo "render: baseline unavailable ($pl or perl missing): printing our figures only"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run LABEL CMD... : wall seconds and max RSS (KB) into $wall / $rss
run() {
	/usr/bin/time -f '%e %M' -o "$tmp/time" "$@" > "$tmp/out.svg" 2>/dev/null
	read -r wall rss < "$tmp/time"
}

printf '%-8s %-8s %10s %10s %12s %10s %10s %8s %9s\n' input unique ours_s ours_MB rss/input \
	pl_s pl_MB speedup frames
for s in $sizes; do
	mb=${s%%:*}
	uniq=${s#*:}
	"$gen" "$mb" "$uniq" > "$tmp/in.folded"
	bytes=$(stat -c %s "$tmp/in.folded")
	run "$fg" flamegraph "$tmp/in.folded"
	ow=$wall
	orss=$rss
	frames=$(grep -c '^<g >' "$tmp/out.svg")
	pw=- prss=- ratio=-
	if [ $have_pl = 1 ]; then
		run perl "$pl" "$tmp/in.folded"
		pw=$wall
		prss=$(awk "BEGIN{printf \"%.0f\", $rss/1024}")
		ratio=$(awk "BEGIN{printf \"%.1fx\", $pw/($ow>0?$ow:0.01)}")
		pframes=$(grep -c '^<g >' "$tmp/out.svg")
		[ "$pframes" = "$frames" ] || frames="$frames(pl:$pframes)"
	fi
	printf '%-8s %-8s %10s %10.0f %12.2f %10s %10s %8s %9s\n' "${mb}MB" "$uniq" "$ow" \
		"$(awk "BEGIN{print $orss/1024}")" "$(awk "BEGIN{print $orss*1024/$bytes}")" \
		"$pw" "$prss" "$ratio" "$frames"
done
echo "targets: speedup >= 30x, rss/input <= 2"
