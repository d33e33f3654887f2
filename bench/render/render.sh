#!/bin/sh
# Render benchmark: `fgcollect flamegraph` vs FlameGraph's flamegraph.pl on generated Java-like
# folded stacks (bench/render/gen_folded.c): 25 MB / 10k unique stacks and 250 MB / 100k unique stacks,
# depths 20-80. Prints wall and CPU time, peak RSS (GNU time) and ratios from the same run.
#   bench/render/render.sh BUILD_DIR        env: FLAMEGRAPH_DIR (default /work/FlameGraph),
#                                         RENDER_BENCH_SIZES (default "25:10000 250:100000"),
#                                         RENDER_BENCH_REPS (default 5: ours is the median run)
set -u
build=${1:-build}
fg=$build/collector/fgcollect
gen=$build/bench/gen_folded
pl=${FLAMEGRAPH_DIR:-/work/FlameGraph}/flamegraph.pl
sizes=${RENDER_BENCH_SIZES:-"25:10000 250:100000"}
reps=${RENDER_BENCH_REPS:-5}
[ -x "$fg" ] && [ -x "$gen" ] || { echo "render: build fgcollect and gen_folded first" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "render: /usr/bin/time (Debian package time) is missing" >&2; exit 1; }
have_pl=1
if [ ! -r "$pl" ] || ! command -v perl >/dev/null; then
	have_pl=0
	echo "render: baseline unavailable ($pl or perl missing): printing our figures only"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run CMD... : sets wall (s), cpu (user+sys s), rss (KB); output in $tmp/out.svg
run() {
	rm -f "$tmp/out.svg" # outside the timing: dropping the last 10-30 MB SVG is not rendering
	/usr/bin/time -f '%e %M %U %S' -o "$tmp/time" "$@" > "$tmp/out.svg" 2>/dev/null
	read -r wall rss usr sys < "$tmp/time"
	cpu=$(u="$usr" s="$sys" awk 'BEGIN { u = ENVIRON["u"]; s = ENVIRON["s"]; printf "%.2f", u + s }')
}

# run_median CMD... : like run, $reps times, keeping the run of median wall time. Wall time
# comes from date(1) in ms (GNU time's 10 ms steps are too coarse for a 60 ms run).
run_median() {
	: > "$tmp/runs"
	for _ in $(seq "$reps"); do
		rm -f "$tmp/out.svg"
		t0=$(date +%s%N)
		run "$@"
		t1=$(date +%s%N)
		echo "$(( (t1 - t0) / 1000000 )) $cpu $rss" >> "$tmp/runs"
	done
	read -r ms cpu rss <<EOF2
$(sort -n "$tmp/runs" | sed -n "$(( (reps + 1) / 2 ))p")
EOF2
	wall=$(m="$ms" awk 'BEGIN { m = ENVIRON["m"]; printf "%.3f", m / 1000 }')
}
ratio() { a="$1" b="$2" awk 'BEGIN { a = ENVIRON["a"]; b = ENVIRON["b"]; printf "%.1fx", a / (b > 0 ? b : 0.01) }'; }

printf '%-6s %-7s %7s %8s %7s %9s %7s %7s %7s %8s %8s %s\n' input unique ours_s ours_cpu \
	ours_MB rss/input pl_s pl_cpu pl_MB speedup cpu_x frames
for s in $sizes; do
	mb=${s%%:*}
	uniq=${s#*:}
	"$gen" "$mb" "$uniq" > "$tmp/in.folded"
	bytes=$(stat -c %s "$tmp/in.folded")
	run_median "$fg" flamegraph "$tmp/in.folded"
	ow=$wall oc=$cpu orss=$rss
	frames=$(grep -c '^<g >' "$tmp/out.svg")
	pw=- pc=- prss=- wr=- cr=-
	if [ $have_pl = 1 ]; then
		run perl "$pl" "$tmp/in.folded"
		pw=$wall pc=$cpu
		prss=$((rss / 1024))
		wr=$(ratio "$pw" "$ow")
		cr=$(ratio "$pc" "$oc")
		pframes=$(grep -c '^<g >' "$tmp/out.svg")
		[ "$pframes" = "$frames" ] || frames="$frames(pl:$pframes)"
	fi
	printf '%-6s %-7s %7s %8s %7s %9s %7s %7s %7s %8s %8s %s\n' "${mb}MB" "$uniq" "$ow" "$oc" \
		"$((orss / 1024))" "$(r="$orss" b="$bytes" awk 'BEGIN { r = ENVIRON["r"]; b = ENVIRON["b"]; printf "%.2f", r * 1024 / b }')" \
		"$pw" "$pc" "$prss" "$wr" "$cr" "$frames"
done
echo "ours: median of $reps runs; flamegraph.pl: one run"
echo "speedup: wall-time ratio; cpu_x: CPU-time (user+sys) ratio; targets >= 30x, rss/input <= 2"
echo "$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
