#!/bin/bash
# SPDX-License-Identifier: MIT
#
# soak - everything at once for SOAK_MINUTES (default 3; `make soak`: 30) or SOAK_SECONDS,
# then the books:
#
#   * JVM_LANES (3) lanes of JVMs in namespace containers, each running ClassChurn (a class
#     loader per generation: code loaded, unloaded, its addresses reused) for 20-50 s, then
#     stopped; before each stop the JVM's own list of compiled methods (jcmd Compiler.perfmap)
#     must be in the collector's map (>= 95% of its start addresses, as map_collector_restart);
#   * `fgcollect watch` with rolling profiles every 10 s written to a directory and pushed to a
#     local ingest server (pyroscope_receiver.py), restarted (SIGTERM, clean stop required)
#     every SOAK_RESTART_S (40 s; 180 s when the soak is longer than 5 minutes);
#   * the daemon's sandboxed child (the agent socket's process) killed once a minute, SIGSEGV
#     and SIGKILL in turn;
#   * rogue peers (hostile_client.py: floods, half handshakes, wrong protocols, oversize and
#     garbage messages, forged hellos, idle connections) every 10 s;
#   * a `fgcollect record --all` through the daemon 10 s into each collector's life (cpu, and
#     off-CPU too when this fgcollect's `record --help` lists an offcpu event).
#
# At the end: the collector's RSS and open descriptors, sampled every 2 s, with their least-
# squares slopes per minute (see "Slopes" below) printed and checked flat (|RSS| <
# SOAK_RSS_KB_MIN, 4096 KiB/min; |fds| < SOAK_FD_MIN, 8/min within lives, SOAK_FD_LIVES_MIN,
# 32/min for the peaks across lives); every JVM's map complete at its end; no /tmp/perf-PID.map left for an
# exited JVM once --keep-exited (5 s) passed; no crash (JVM logs, clean collector stops,
# recordings' exit codes); and every drop counted: the daemons', the pusher's, the agents' and
# the recordings' counts are printed.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
fg_init soak
fg_require_built
fg_java_jar

MINUTES=${SOAK_MINUTES:-3}
SOAK_S=${SOAK_SECONDS:-$((MINUTES * 60))}
if [[ -n ${SOAK_RESTART_S:-} ]]; then
	RESTART_S=$SOAK_RESTART_S
elif ((SOAK_S > 300)); then
	RESTART_S=180
else
	RESTART_S=40
fi
LANES=${JVM_LANES:-3}
RSS_MAX=${SOAK_RSS_KB_MIN:-4096}
FD_MAX=${SOAK_FD_MIN:-8}
# A life's peak descriptors follow the JVM threads sampled at that moment (a perf event each).
FD_LIVES_MAX=${SOAK_FD_LIVES_MIN:-32}
RSS_PEAK_MAX=${SOAK_RSS_PEAK_KB:-131072} # bounds of any sample: 128 MiB, 1024 descriptors
FD_PEAK_MAX=${SOAK_FD_PEAK:-1024}
hostile=$FG_SOURCE_DIR/tests/e2e/hostile_client.py
port=$(fg_free_port)
recv=$FG_TMP/received
samples=$FG_TMP/samples.txt # t_s instance rss_kb fds anon_kb file_kb
rpid=
spid=
# (set +e: under errexit a failing kill or `(exit $rc)` would end the trap before fg_cleanup)
trap 'rc=$?; set +e; [[ -n $rpid ]] && kill "$rpid" 2>/dev/null; [[ -n $spid ]] && kill "$spid" 2>/dev/null; (exit $rc); fg_cleanup' EXIT

offcpu=0
# (the whole help first: grep -q leaving early would SIGPIPE it, failing the pipe)
grep -q 'offcpu' <<<"$("$FGCOLLECT" record --help 2>&1)" && offcpu=1

python3 "$FG_SOURCE_DIR/tests/e2e/pyroscope_receiver.py" "$port" "$recv" >"$FG_TMP/recv.log" 2>&1 &
rpid=$!
fg_wait 30 grep -q listening "$FG_TMP/recv.log" || fg_fail "the ingest server did not start"

instance=0
born=0
recorded=0
start_watch() {
	fg_watch_start --keep-exited 5s --profile-every 10s --out "$FG_TMP/profiles" \
		--keep-profiles 100 --push "http://127.0.0.1:$port" --host-name soak-node
	instance=$((instance + 1))
	born=$SECONDS
	recorded=0
	echo "$FG_WATCH_PID $instance" >"$cur.tmp"
	mv "$cur.tmp" "$cur"
}

declare -A lane_name=() lane_pid=() lane_until=()
exited=()
jvms=0
coverage_min=100
checked=0
start_jvm() {
	local l=$1 name
	jvms=$((jvms + 1))
	name=j$jvms
	fg_jvm_start "$name" ClassChurn 100000 400
	lane_name[$l]=$name
	lane_pid[$l]=$FG_HOSTPID
	lane_until[$l]=$((SECONDS + 20 + RANDOM % 31))
}

# The JVM's own compiled methods must be in the map before it goes.
stop_jvm() {
	local l=$1
	local name=${lane_name[$l]} pid=${lane_pid[$l]} cov
	map=$(fg_map_path "$pid")
	if fg_jvm_truth "$pid" "$FG_TMP/truth.$pid.map"; then
		complete() {
			read -r cov _ <<<"$(fg_map_coverage "$FG_TMP/truth.$pid.map" "$map")"
			((cov >= 95))
		}
		fg_wait 20 complete ||
			fg_fail "JVM $pid: map not complete at its end: coverage (pct hit total) $(fg_map_coverage "$FG_TMP/truth.$pid.map" "$map")"
		read -r cov _ <<<"$(fg_map_coverage "$FG_TMP/truth.$pid.map" "$map")"
		((cov < coverage_min)) && coverage_min=$cov
		checked=$((checked + 1))
	else
		fg_fail "jcmd Compiler.perfmap failed in JVM $pid"
	fi
	local rc=0
	fg_container_stop "$name" 10 || rc=$?
	[[ $rc == 0 || $rc == 143 ]] || fg_fail "JVM $pid ($name) ended with status $rc"
	exited+=("$pid")
	unset "lane_name[$l]"
}

# The sampler: a loop of its own (the main loop waits on jcmd, containers and recordings), every
# 2 s, reading the collector's PID and life from $cur.
cur=$FG_TMP/watch.current
sampler() {
	local w i rss fds anon file
	set +e +o pipefail # a collector that just went is no reason to stop sampling
	while :; do
		if read -r w i <"$cur" 2>/dev/null; then
			# VmRSS, and its parts: anonymous memory (the heap) and mapped files (the ELF
			# and debug files symbolization reads, pages the kernel may drop).
			read -r rss anon file < <(awk '/^VmRSS:/ { r = $2 } /^RssAnon:/ { a = $2 }
				/^RssFile:/ { f = $2 } END { print r, a, f }' "/proc/$w/status" 2>/dev/null)
			fds=$(find "/proc/$w/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
			[[ -n $rss && -n $file && $fds -gt 0 ]] &&
				echo "$SECONDS $i $rss $fds $anon $file" >>"$samples"
		fi
		sleep 2
	done
}

recs=0
record_now() {
	local ev=cpu out rc=0
	local -a extra=()
	recs=$((recs + 1))
	if ((offcpu && recs % 2 == 0)); then
		ev=offcpu
		extra=(--event offcpu)
	fi
	out=$FG_TMP/rec.$recs.folded
	"$FGCOLLECT" record --ctl "$FG_CTL" --all --duration 3 "${extra[@]}" -o "$out" \
		2>"$FG_TMP/rec.$recs.err" || rc=$?
	((rc == 0)) || fg_fail "record #$recs ($ev) failed ($rc): $(tail -n 3 "$FG_TMP/rec.$recs.err")"
	fg_log "record #$recs ($ev): $(grep -m1 ' samples in ' "$FG_TMP/rec.$recs.err" | sed 's/^fgcollect record: //')"
}

rogue=0
rogue_now() {
	local mode
	rogue=$((rogue + 1))
	case $((rogue % 4)) in
	0) mode=(all) ;;
	1) mode=(flood 30) ;;
	2) mode=(idle 4 3) ;;
	3) mode=(forged 1 Rogue::claim) ;;
	esac
	python3 "$hostile" "$FG_SOCK" "${mode[@]}" >>"$FG_TMP/rogue.out" 2>&1 ||
		fg_fail "rogue peer (${mode[*]}) did not run: $(tail -n 3 "$FG_TMP/rogue.out")"
}

# Once a minute the daemon's sandboxed child (the agent socket's process) is killed, SIGSEGV and
# SIGKILL in turn: the daemon starts another, agents reconnect and replay, and every check
# below holds all the same.
child_kills=0
kill_child_now() {
	local p sig=SEGV
	((child_kills % 2)) && sig=KILL
	for p in $(pgrep -P "$FG_WATCH_PID"); do
		[[ $(cat "/proc/$p/comm" 2>/dev/null) == fg-sandbox ]] || continue
		kill "-$sig" "$p" && child_kills=$((child_kills + 1))
		fg_log "soak: killed the sandboxed child $p with SIG$sig"
		return 0
	done
	return 1 # a daemon between lives, or its child between two: tried again shortly
}

start_watch
sampler &
spid=$!
end=$((SECONDS + SOAK_S))
next_rogue=$((SECONDS + 5))
next_child_kill=$((SECONDS + 60))
fg_log "soak: $SOAK_S s, $LANES JVM lanes, collector restarted every $RESTART_S s, offcpu recordings: $offcpu"
# Past the end while fewer than three collector lives have run, the last for 20 s (ten of the
# sampler's rounds): a busy machine lengthens the soak rather than leave its lives unchecked.
# Past the end no JVM starts, and the collector restarts only for a missing life.
while ((SECONDS < end || instance < 3 || SECONDS - born < 20)); do
	for ((l = 0; l < LANES; l++)); do
		if [[ -z ${lane_name[$l]:-} ]]; then
			((SECONDS >= end)) || start_jvm "$l"
		elif ((SECONDS >= lane_until[$l])); then
			stop_jvm "$l"
		fi
	done
	((SECONDS >= next_rogue)) && { rogue_now; next_rogue=$((SECONDS + 10)); }
	if ((SECONDS >= next_child_kill)); then
		next_child_kill=$((SECONDS + 2))
		kill_child_now && next_child_kill=$((SECONDS + 60))
	fi
	if ((!recorded && SECONDS - born >= 10)); then
		record_now
		recorded=1
	fi
	if ((SECONDS - born >= RESTART_S && (SECONDS < end || instance < 3))); then
		fg_watch_stop_clean
		start_watch
	fi
	sleep 1
done
for ((l = 0; l < LANES; l++)); do
	[[ -n ${lane_name[$l]:-} ]] && stop_jvm "$l"
done

# No map left behind for an exited JVM: each goes once the daemon saw the exit and
# --keep-exited (5 s) passed (60 s allowed: a JVM's shutdown and its detection take their time).
kill "$spid" 2>/dev/null || true
wait "$spid" 2>/dev/null || true
spid=
gone() {
	local p
	for p in "${exited[@]}"; do
		[[ ! -e $(fg_map_path "$p") ]] || return 1
	done
}
left=()
if ! fg_wait 60 gone; then
	for p in "${exited[@]}"; do
		[[ -e $(fg_map_path "$p") ]] && left+=("$p")
	done
fi
fg_watch_stop_clean
kill "$rpid" 2>/dev/null || true
wait "$rpid" 2>/dev/null || true
rpid=

# Slopes (least squares, per minute): within each collector's life after its first WARM_S
# (pooled over lives: JVMs reconnect and replay, and new ones arrive, at each start), checked
# when lives are long enough to have a steady part (SOAK_RESTART_S >= 120); and across lives,
# checked with 8 lives or more. Every sample is also checked against a bound.
if ((RESTART_S >= 120)); then WARM_S=60; else WARM_S=15; fi
read -r rss_slope fd_slope n_used anon_slope file_slope < <(WARM_S=$WARM_S awk '
	BEGIN { w = ENVIRON["WARM_S"] + 0 }
	{ t[NR] = $1; g[NR] = $2; r[NR] = $3; f[NR] = $4; a[NR] = $5; m[NR] = $6
	  if (!($2 in first)) first[$2] = $1 }
	END {
		for (i = 1; i <= NR; i++) if (t[i] - first[g[i]] >= w) {
			k = g[i]; n[k]++; st[k] += t[i]; sr[k] += r[i]; sf[k] += f[i]
			sa[k] += a[i]; sm[k] += m[i]; used++ }
		for (i = 1; i <= NR; i++) if (t[i] - first[g[i]] >= w) {
			k = g[i]; dt = t[i] - st[k] / n[k]
			sxx += dt * dt; sxr += dt * (r[i] - sr[k] / n[k]); sxf += dt * (f[i] - sf[k] / n[k])
			sxa += dt * (a[i] - sa[k] / n[k]); sxm += dt * (m[i] - sm[k] / n[k]) }
		if (sxx == 0) { print "0 0 0 0 0"; exit }
		printf "%.1f %.2f %d %.1f %.1f\n", sxr / sxx * 60, sxf / sxx * 60, used,
			sxa / sxx * 60, sxm / sxx * 60
	}' "$samples")
# Across lives: each life's peak RSS and peak descriptors against the middle of that life (a
# restart starts from nothing, so growth that survives restarts shows here).
read -r run_rss_slope run_fd_slope run_n < <(awk '
	{ if (!($2 in a)) { a[$2] = $1; k[++nl] = $2 }
	  b[$2] = $1; c[$2]++
	  if ($3 > r[$2]) r[$2] = $3
	  if ($4 > f[$2]) f[$2] = $4 }
	END {
		for (i = 1; i <= nl; i++) { g = k[i]; if (c[g] < 5) continue
			x = (a[g] + b[g]) / 2; n++; sx += x; sy += r[g]; sf += f[g]
			sxx += x * x; sxy += x * r[g]; sxf += x * f[g] }
		d = n * sxx - sx * sx
		if (n < 2 || d == 0) { print "0 0 0"; exit }
		printf "%.1f %.2f %d\n", (n * sxy - sx * sy) / d * 60, (n * sxf - sx * sf) / d * 60, n }' "$samples")
read -r rss_lo rss_hi fd_lo fd_hi < <(awk 'NR == 1 { a = b = $3; c = d = $4 }
	{ if ($3 < a) a = $3; if ($3 > b) b = $3; if ($4 < c) c = $4; if ($4 > d) d = $4 }
	END { print a, b, c, d }' "$samples")

# Counts: daemons, pusher, agents, recordings.
sum() { # sum REGEX FILES...: the sum of the first group of REGEX (sed -n) over the files
	local re=$1
	shift
	cat "$@" 2>/dev/null | sed -n "s/$re/\1/p" | awk '{ s += $1 } END { print s + 0 }'
}
logs=("$FG_TMP"/watch.*.log)
conns=$(sum '.*summary: \([0-9]*\) connections.*' "${logs[@]}")
malformed=$(sum '.* \([0-9]*\) dropped for malformed input.*' "${logs[@]}")
refused=$(sum '.*(\([0-9]*\) refused at the cap.*' "${logs[@]}")
profiles=$(sum '.*profiles: [0-9]* intervals, \([0-9]*\) profiles.*' "${logs[@]}")
notwritten=$(sum '.*, \([0-9]*\) not written;.*' "${logs[@]}")
sent=$(sum '.*push: \([0-9]*\) profiles sent.*' "${logs[@]}")
pfailed=$(sum '.* \([0-9]*\) failed attempts.*' "${logs[@]}")
pdropped=$(sum '.* \([0-9]*\) dropped with the queue full.*' "${logs[@]}")
punsent=$(sum '.* \([0-9]*\) unsent at exit.*' "${logs[@]}")
prejected=$(sum '.* \([0-9]*\) rejected by the server.*' "${logs[@]}")
received=$(find "$recv" -name '*.json' | wc -l)
agent_dropped=$(sum '.*agent dropped \([0-9]*\) events.*' "$FG_TMP"/rec.*.err)
rec_lost=$(sum '.* \([0-9]*\) lost records.*' "$FG_TMP"/rec.*.err)
jvm_dropped=$(sum '.*fgagent: dropped \([0-9]*\) code events.*' "$FG_TMP"/j*.log)

fg_log "soak: $SOAK_S s, $instance collector lives, $jvms JVMs ($checked checked at their end, worst map coverage $coverage_min%), $rogue rogue peer rounds, $recs recordings"
fg_log "soak: collector RSS $rss_lo-$rss_hi KiB, open fds $fd_lo-$fd_hi ($(wc -l <"$samples") samples every 2 s)"
fg_log "soak: slope of each life's peak across $run_n lives: RSS $run_rss_slope KiB/min, fds $run_fd_slope /min"
fg_log "soak: slope within lives (after ${WARM_S} s, $n_used samples): RSS $rss_slope KiB/min (anonymous $anon_slope, mapped files $file_slope), fds $fd_slope /min"
fg_log "soak: daemons: $conns connections, $refused refused at the cap, $malformed peers dropped for malformed input; agents dropped $jvm_dropped code events (queue or table full), $agent_dropped as the recordings saw them"
fg_log "soak: profiles: $profiles made, $notwritten not written; push: $sent sent ($received received), $pfailed failed attempts, $pdropped dropped with the queue full, $prejected rejected, $punsent unsent at exit; recordings: $rec_lost lost records"

# Checks.
grep -lE 'SIGSEGV|SIGBUS|hs_err_pid|Internal Error' "$FG_TMP"/j*.log && fg_fail "a JVM crashed (see above)"
if ((${#left[@]})); then
	why=
	for p in "${left[@]}"; do
		w=$(grep -l "exit: pid $p " "$FG_TMP"/watch.*.log | head -n 1)
		[[ -n $w && $w != "$FG_TMP/watch.$FG_WATCH_N.log" ]] &&
			why+=" $p exited under ${w##*/} and was not expired before that collector stopped;"
	done
	fg_fail "maps left behind for exited JVMs: ${left[*]}${why:+ (}${why}${why:+ the next collector did not remove it either)}"
fi
((checked >= 1)) || fg_fail "no JVM reached its end"
((sent == received)) || fg_fail "watch says $sent profiles sent, the server has $received"
((sent + pdropped + punsent + prejected == profiles)) ||
	fg_fail "$profiles profiles made but $sent sent + $pdropped dropped + $punsent unsent + $prejected rejected"
((notwritten == 0)) || fg_fail "$notwritten profiles not written"
((run_n >= 3)) || fg_fail "only $run_n collector lives with samples"
flat() { # flat SLOPE LIMIT
	awk "BEGIN { exit !($1 < $2 && $1 > -$2) }"
}
# Every life's peak under a bound; with 8 lives or more (the 30-minute run has 10), their slope
# flat too: fewer are noise (a life's peak descriptors follow the JVM threads a recording samples
# at that moment, and an off-CPU recording opens a ring per thread and CPU: 45 /min over 5
# lives of a 3-minute run, alternating cpu and offcpu recordings).
((rss_hi < RSS_PEAK_MAX)) || fg_fail "collector RSS reached $rss_hi KiB (bound $RSS_PEAK_MAX)"
((fd_hi < FD_PEAK_MAX)) || fg_fail "collector descriptors reached $fd_hi (bound $FD_PEAK_MAX)"
if ((run_n >= 8)); then
	flat "$run_rss_slope" "$RSS_MAX" || fg_fail "collector peak RSS drifts $run_rss_slope KiB/min across lives (limit $RSS_MAX)"
	flat "$run_fd_slope" "$FD_LIVES_MAX" || fg_fail "collector peak descriptors drift $run_fd_slope /min across lives (limit $FD_LIVES_MAX)"
fi
if ((RESTART_S >= 120)); then
	((n_used >= 10)) || fg_fail "only $n_used samples in the steady part of the lives"
	flat "$rss_slope" "$RSS_MAX" || fg_fail "collector RSS grows $rss_slope KiB/min within a life (limit $RSS_MAX)"
	flat "$fd_slope" "$FD_MAX" || fg_fail "collector descriptors drift $fd_slope /min within a life (limit $FD_MAX)"
fi
# One kill a minute from the first minute on, the last one perhaps not yet (within 30 s of the
# end).
kills_due=$(((SOAK_S - 30) / 60))
((child_kills >= kills_due)) ||
	fg_fail "the sandboxed child was killed $child_kills times in $SOAK_S s (one a minute expected: $kills_due)"
fg_pass "$SOAK_S s: peak RSS slope $run_rss_slope KiB/min, peak fd slope $run_fd_slope /min across lives, $jvms JVMs with complete maps (worst $coverage_min%), no map left behind, $instance clean collector stops, every drop counted, $child_kills sandboxed children killed"
