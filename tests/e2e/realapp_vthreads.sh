#!/bin/bash
# SPDX-License-Identifier: MIT
#
# realapp_vthreads.sh - a wall profile of a real service on virtual threads against the
# service's own count: VtApp (tests/java/vtapp), the JDK's com.sun.net.httpserver on a virtual
# thread per request, whose handler (VtApp::serve) runs four JDBC queries (VtApp::queryDb)
# against a real PostgreSQL or MariaDB server this test starts on loopback
# (tests/e2e/realapp_db.sh) and renders about 30 KB (VtApp::render); the JVM in a namespace
# container as uid 4242 sharing the host's network, loaded by `ab -k -c 4` on loopback. After a
# warm-up, `fgcollect record --event wall` at the defaults records it; its summary gives the
# window it followed the virtual threads in (CLOCK_MONOTONIC ns), and the service then gives
# its own time of its calls inside that window (GET /truth?from=&to=: serve, queryDb and
# render timed with System.nanoTime, each call's entry and return kept in a ring):
#   DB share      wall time of the stacks under [virtual threads] through VtApp::serve that
#                 hold VtApp::queryDb / of those through VtApp::serve (mounted: the carriers'
#                 samples with the thread mounted, CPU, preempted or pinned; unmounted: the
#                 waits at the unmounts), against the service's win_db_ns / win_serve_ns;
#   render share  likewise with VtApp::render and win_render_ns;
#   serve total   serve's wall time per second of the window, in virtual threads, against
#                 the service's serve time in it per second.
# The virtual threads are followed from when the agent turned their events on (the summary's
# "waits counted from S s after the start") to the end of the recording: that window.
# Runs (FG_VTAPP_RUNS, DB:JDK:PFP words): Temurin 25 with -XX:+PreserveFramePointer on
# PostgreSQL, Temurin 25 without it on MariaDB, OpenJDK 21 of Debian sid's image root with it on
# PostgreSQL (whose driver reads its socket inside synchronized: pinned on JDK 21; JDK 25 does
# not pin there). The JDKs: FG_TEMURIN25 (default /usr/lib/jvm/temurin-25-jdk-amd64), and
# tests/images/jdkroot.sh's sid root for 21.
#
# Thresholds, the goals: FG_VTAPP_MAX_SHARE_DIFF=2 (points, each share in every run),
# FG_VTAPP_MAX_TOTAL_DIFF=3 (percent, serve's total in every run).
# Other knobs: FG_VTAPP_WARM (s of load before the recording, default 5), FG_VTAPP_SECS
# (record's --duration, 5), FG_VTAPP_REC_OPTS (more record options, split on spaces).
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/realapp_db.sh"
fg_init realapp_vthreads
fg_require_built

max_share=${FG_VTAPP_MAX_SHARE_DIFF:-2}
max_total=${FG_VTAPP_MAX_TOTAL_DIFF:-3}
warm=${FG_VTAPP_WARM:-5}
secs=${FG_VTAPP_SECS:-5}
read -r -a rec_opts <<<"${FG_VTAPP_REC_OPTS:-}"
temurin=${FG_TEMURIN25:-/usr/lib/jvm/temurin-25-jdk-amd64}

# The service's jar replaces the workloads' jar for fg_jvm_start (its manifest names the
# drivers' jars copied beside it).
FG_JAVA_JAR=$FG_BUILD_DIR/tests/java/fg-vtapp.jar
[[ -f $FG_JAVA_JAR ]] || fg_missing_tool "fg-vtapp.jar ($FG_JAVA_JAR, built when libpostgresql-jdbc-java and libmariadb-java are)"
command -v ab >/dev/null || fg_missing_tool "ab (apache2-utils)"
ra_pg_bin >/dev/null || fg_missing_tool "PostgreSQL (postgresql)"
{ command -v mariadbd && command -v mariadb-install-db; } >/dev/null || fg_missing_tool "MariaDB (mariadb-server)"
[[ -x $temurin/bin/java ]] || fg_fail "no Temurin 25 at $temurin (scripts/install-deps.sh installs it)"

abpid=""
vt_cleanup() {
	local rc=$?
	set +e
	[[ -n $abpid ]] && kill -INT "$abpid" 2>/dev/null
	ra_db_stop_all
	(exit "$rc")
	fg_cleanup
}
trap vt_cleanup EXIT

t_start=$(fg_ms)
ra_pg_start "$FG_TMP/pg" || fg_fail "PostgreSQL did not start"
ra_maria_start "$FG_TMP/maria" || fg_fail "MariaDB did not start"
fg_log "PostgreSQL on 127.0.0.1:$RA_PG_PORT, MariaDB on 127.0.0.1:$RA_MARIA_PORT"

fg_sock_dir
sock=$FG_SOCK_DIR/fgcollect.sock
noctl=$FG_TMP/no-daemon/ctl.sock # never another test's watch daemon

# truth_read PORT FILE FROM TO: the service's own time of its calls inside [FROM, TO]
# (CLOCK_MONOTONIC ns; GET /truth?from=&to=, "truth NAME VALUE" lines).
truth_read() {
	curl -sS --max-time 10 "http://127.0.0.1:$1/truth?from=$3&to=$4" >"$2" 2>"$2.err" ||
		fg_fail "GET /truth on port $1 failed: $(head -n 1 "$2.err")"
	grep -q '^truth win_serve_ns [0-9]' "$2" ||
		fg_fail "GET /truth on port $1 answered no win_serve_ns: $(head -c 200 "$2" | tr '\n' ' ')"
	(($(truth_get "$2" win_oldest_ns) <= $3)) ||
		fg_fail "the service's ring of calls no longer holds the window's start (win_oldest_ns $(truth_get "$2" win_oldest_ns) > $3)"
}

# truth_get FILE NAME: the value of "truth NAME".
truth_get() {
	N="$2" awk '$1 == "truth" && $2 == ENVIRON["N"] { v = $3 } END { printf "%s\n", v + 0 }' "$1"
}

# profile FOLDED: "SERVE DB RENDER SERVE_U DB_U RENDER_U ELSEWHERE NOSTACK CUT", microseconds:
# the stacks under [virtual threads] through VtApp::serve, those of them holding VtApp::queryDb
# and VtApp::render; the same three of the unmounted waits alone (leaf [off-cpu: virtual thread
# unmounted]); serve's time under any other root (a carrier's name); and the unnamed virtual
# threads' (the requests') time not through serve: at [no stack sampled], and at stacks cut
# short ([truncated]) below it.
profile() {
	LC_ALL=C awk '
	{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s) }
	index(s, "[virtual threads];") == 1 && index(s, ";VtApp::serve_[") == 0 {
		if (index(s, "[no stack sampled]"))
			ns += n
		else if (index(s, "[truncated]"))
			cut += n
	}
	index(s, ";VtApp::serve_[") == 0 { next }
	s !~ /^\[virtual threads\]/ { else_ += n; next }
	{
		u = s ~ /;\[off-cpu: virtual thread unmounted\]$/
		q += n; if (u) qu += n
		if (index(s, ";VtApp::queryDb_[")) { d += n; if (u) du += n }
		if (index(s, ";VtApp::render_[")) { r += n; if (u) ru += n }
	}
	END { printf "%.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f\n", q, d, r, qu, du, ru, else_, ns, cut }' "$1"
}

# within D M: |D| <= M.
within() {
	d=$1 m=$2 awk 'BEGIN { d = ENVIRON["d"] + 0; exit !(d <= ENVIRON["m"] + 0 && -d <= ENVIRON["m"] + 0) }'
}

summary=""
failed=""
n=0
# run DB JDK_MAJOR PFP(on|off): one service on the JDK (FG_JDK or FG_ROOT set by the caller),
# loaded, recorded and checked; its line goes to $summary, its failures to $failed.
run() {
	local db=$1 major=$2 pfp=$3 name port hp f err bad="" t0 t1
	local q d r qu du ru els nost cut from to tf tserve tdb trender twin line
	n=$((n + 1))
	name=vt$n
	port=$RA_PG_PORT
	[[ $db == maria ]] && port=$RA_MARIA_PORT
	FG_CT_OPTS=(--host-net)
	FG_JVM_OPTS=()
	[[ $pfp == off ]] && FG_JVM_OPTS+=(-XX:-PreserveFramePointer)
	fg_jvm_start "$name" VtApp "$db" "$port"
	FG_CT_OPTS=()
	FG_JVM_OPTS=()
	fg_wait_log "$name" 60 'VtApp ready port='
	hp=$(sed -n 's/.*VtApp ready port=\([0-9]*\).*/\1/p' "${FG_CT_LOG[$name]}" | head -n 1)
	# Bounded by time and count; stopped (SIGINT: it prints its figures) once the record ends.
	ab -k -c 4 -t $((warm + secs + 60)) -n 2000000 -s 10 "http://127.0.0.1:$hp/q" \
		>"$FG_TMP/$name.ab" 2>&1 &
	abpid=$!
	sleep "$warm"
	f=$FG_TMP/$name.folded
	err=$FG_TMP/$name.err
	"$FGCOLLECT" record --pid "$FG_HOSTPID" --socket "$sock" --ctl "$noctl" --event wall \
		--duration "$secs" "${rec_opts[@]}" -o "$f" 2>"$err" ||
		{ cat "$err" >&2; fg_fail "$name: record failed"; }
	read -r from to < <(sed -n 's/.*virtual threads: PID [0-9]*: followed from \([0-9]*\) to \([0-9]*\) ns of CLOCK_MONOTONIC.*/\1 \2/p' "$err" | head -n 1)
	[[ -n ${to:-} ]] || { cat "$err" >&2; fg_fail "$name: record's summary gave no window the virtual threads were followed in"; }
	tf=$FG_TMP/$name.truth
	truth_read "$hp" "$tf" "$from" "$to"
	kill -INT "$abpid" 2>/dev/null || true
	wait "$abpid" || true
	abpid=""
	grep -q '^Complete requests' "$FG_TMP/$name.ab" || { cat "$FG_TMP/$name.ab" >&2; fg_fail "$name: ab printed no 'Complete requests' (its output above)"; }
	# Failed requests of ab's "Length" kind differ in length from the first response, as
	# every customer's page does; the other kinds are failures.
	! grep -qE '^Non-2xx responses|^ +\((Connect: [1-9]|.*Receive: [1-9]|.*Exceptions: [1-9])' "$FG_TMP/$name.ab" ||
		{ grep -E '^(Complete|Failed|Non-2xx)' "$FG_TMP/$name.ab" >&2; tail -n 20 "${FG_CT_LOG[$name]}" >&2; fg_fail "$name: the service failed requests (its log above)"; }
	fg_container_stop "$name" || true # a JVM stopped by SIGTERM exits 143
	grep -E '^fgcollect record: .*samples in|virtual threads' "$err" | sed "s/^/  $name: /" >&2 || true
	read -r q d r qu du ru els nost cut < <(profile "$f")
	tserve=$(truth_get "$tf" win_serve_ns)
	tdb=$(truth_get "$tf" win_db_ns)
	trender=$(truth_get "$tf" win_render_ns)
	twin=$((to - from))
	# The figures: shares in percent and their differences in points; serve's time per second
	# of the window the virtual threads were followed in, in virtual threads, and its
	# difference in percent (the service's: its calls' time inside the same window).
	local out sdb srender stotal pd td pr tr bp bt
	out=$(q=$q d=$d r=$r T=$twin Q=$tserve D=$tdb R=$trender W=$twin awk 'BEGIN {
		q = ENVIRON["q"]; T = ENVIRON["T"] / 1e9; Q = ENVIRON["Q"]; W = ENVIRON["W"]
		td = Q ? 100 * ENVIRON["D"] / Q : 0; tr = Q ? 100 * ENVIRON["R"] / Q : 0
		pd = q ? 100 * ENVIRON["d"] / q : 0; pr = q ? 100 * ENVIRON["r"] / q : 0
		bt = W ? Q / W : 0; bp = T > 0 ? q / 1e6 / T : 0
		printf "%.2f %.2f %.2f %.1f %.1f %.1f %.1f %.3f %.3f\n",
			pd - td, pr - tr, (bt ? 100 * (bp / bt - 1) : 100), pd, td, pr, tr, bp, bt }')
	read -r sdb srender stotal pd td pr tr bp bt <<<"$out"
	line="JDK $major $db PreserveFramePointer $pfp: serve's wall time under [virtual threads]: DB $pd% (service $td%, $(printf '%+.1f' "$sdb") points), render $pr% (service $tr%, $(printf '%+.1f' "$srender") points), $bp virtual threads busy in serve over the $(w=$twin awk 'BEGIN { printf "%.3f", ENVIRON["w"] / 1e9 }') s followed (service $bt, $(printf '%+.1f' "$stotal")%); of it unmounted $((qu / 1000)) ms, at queryDb $((du / 1000)), at render $((ru / 1000)); $((els / 1000)) ms of serve under the carriers' names; the requests' time not through serve: $((nost / 1000)) ms at [no stack sampled], $((cut / 1000)) ms at [truncated] stacks; $(sed -n 's/^Requests per second: *\([0-9.]*\).*/\1/p' "$FG_TMP/$name.ab") req/s"
	fg_log "$line"
	summary+="$line"$'\n'
	if ((q == 0 || tserve == 0)); then
		bad+=" no serve time to compare (profile $q us, service $tserve ns);"
	else
		within "$sdb" "$max_share" || bad+=" DB share $sdb points from the service's (> $max_share);"
		within "$srender" "$max_share" || bad+=" render share $srender points from the service's (> $max_share);"
		within "$stotal" "$max_total" || bad+=" serve's wall total $stotal% from the service's (> $max_total%);"
	fi
	[[ -z $bad ]] || failed+=" | JDK $major $db PFP $pfp:${bad%;}"
}

if [[ -n ${FG_VTAPP_RUNS:-} ]]; then
	runs=$FG_VTAPP_RUNS
else
	runs="pg:25:on maria:25:off pg:21:on"
fi
for w in $runs; do
	IFS=: read -r db major pfp <<<"$w"
	[[ ($db == pg || $db == maria) && ($major == 21 || $major == 25) && ($pfp == on || $pfp == off) ]] ||
		fg_fail "FG_VTAPP_RUNS: bad run '$w' (DB pg|maria, JDK 21|25, PFP on|off)"
	if [[ $major == 25 ]]; then
		FG_ROOT="" FG_JDK=$temurin
	else
		fg_image_root sid 21
	fi
	run "$db" "$major" "$pfp"
	FG_ROOT="" FG_JDK=""
done
elapsed=$((($(fg_ms) - t_start) / 1000))
printf '%s' "$summary" >&2
[[ -z $failed ]] || fg_fail "out of bounds (shares within $max_share points, serve's total within $max_total%)$failed"
fg_pass "$n runs in $elapsed s: DB and render shares of serve's wall time within $max_share points of the service's, its total within $max_total%"
