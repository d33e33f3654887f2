# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# demo_db.sh - the second part of `make demo` (sourced by scripts/demo.sh): a service that
# waits on something real, in two configurations, CPU and wall-clock profiles of each and the
# differential of the two wall profiles.
#
# The service is the real-application one of tests/java/realapp (embedded Jetty 9, one servlet
# running four JDBC queries per request; Debian's jetty9, PostgreSQL and MariaDB driver jars).
# demo_db_run:
#   1. starts a throwaway PostgreSQL and a MariaDB server (Debian's packages) on 127.0.0.1, at
#      once (tests/e2e/realapp_db.sh; data, sockets and logs in the demo's temporary directory);
#   2. starts the service twice, in namespace containers sharing the host's network, one on each
#      database (tables filled with DB_CUSTOMERS customers), with the agent;
#   3. for each in turn: loads it with `ab -k -c 4` for WARMUP + 1 s, then, under the same load,
#      records it from the host for SECONDS_TO_PROFILE s twice at once:
#        fgcollect record --pid P --event cpu  --freq 499             -o realapp-DB-cpu.folded
#        fgcollect record --pid P --event wall --threads 'rq-.*'      -o realapp-DB-wall.folded
#      (rq-N: the service's Jetty pool: its request threads) and renders both;
#   4. stops the services and the servers; writes the differential of the two wall profiles
#      (fgcollect diff --normalize --countname us: the shape of the MariaDB run, red where it
#      spends a larger share of its wall time) and the per-request summary (demo_db_summary).
# Sets DB_REPORT (the lines demo.sh prints). Uses demo.sh's OUT, FG_SOCK, FG_CTL, say,
# SECONDS_TO_PROFILE and WARMUP.

# shellcheck disable=SC2034 # FG_CT_OPTS is read by lib.sh, DB_REPORT by demo.sh
# shellcheck source=tests/e2e/realapp_db.sh
. "$SRC/tests/e2e/realapp_db.sh"

DB_FREQ=499
DB_CUSTOMERS=1000
DB_REPORT=
# Both servers are stopped whatever happens; PostgreSQL may have been started by a subshell.
demo_db_cleanup() {
	[[ -z $RA_PG_DIR && -s ${FG_TMP:-/nonexistent}/pg.vars ]] &&
		read -r RA_PG_DIR RA_PG_BIN RA_PG_PORT <"$FG_TMP/pg.vars"
	ra_db_stop_all
}

# demo_db_summary PG_CPU PG_WALL PG_RPS MARIA_CPU MARIA_WALL MARIA_RPS CPU_HZ
# The per-request line, from the folded profiles and each run's request rate:
#   requests  N = RPS x the wall window (the wall profile's time per thread: on and off the
#             CPU, every thread is counted for the whole recording);
#   reads     the wall time (us) of the servlet's stacks in the driver's socket reads
#             (java.net.Socket's stream or NioSocketImpl under RealAppServlet::doGet), / N;
#   share     reads / all the wall time under RealAppServlet::doGet;
#   cpu       CPU samples under RealAppServlet::doGet x 1e6 / CPU_HZ, / N.
demo_db_summary() {
	local hz=$7 pg maria
	pg=$(demo_db_figures "$1" "$2" "$3" "$hz") || return 1
	maria=$(demo_db_figures "$4" "$5" "$6" "$hz") || return 1
	local pr ps pc mr ms mc
	read -r pr ps pc <<<"$pg"
	read -r mr ms mc <<<"$maria"
	printf 'per request: PostgreSQL %s µs of wall in the JDBC driver'"'"'s socket reads (%s%% of the servlet'"'"'s wall), %s µs of CPU in the servlet; MariaDB %s µs (%s%%), %s µs CPU (%s and %s requests/s)\n' \
		"$pr" "$ps" "$pc" "$mr" "$ms" "$mc" "$3" "$6"
}

# demo_db_figures CPU WALL RPS HZ: "READS_US SHARE_PCT CPU_US" per request (see above).
demo_db_figures() {
	cpu_hz=$4 rps=$3 LC_ALL=C awk '
	function is_req(s) { return s ~ /(^|;)RealAppServlet::doGet_\[[ji0]\](;|$)/ }
	function is_read(s) { return s ~ /;(java\.net\.Socket\$SocketInputStream|sun\.nio\.ch\.NioSocketImpl)::read_\[[ji0]\](;|$)/ }
	FNR == 1 { file++ }
	{
		n = $NF; s = $0; sub(/ [0-9]+$/, "", s)
		if (file == 1) {
			if (is_req(s))
				cpu += n
			next
		}
		root = s; sub(/;.*/, "", root)
		threads[root] = 1; all += n
		if (!is_req(s))
			next
		req += n
		if (is_read(s))
			reads += n
	}
	END {
		for (t in threads)
			nt++
		rps = ENVIRON["rps"] + 0; hz = ENVIRON["cpu_hz"] + 0
		if (!nt || !req || rps <= 0 || hz <= 0)
			exit 1
		# The window in seconds: the wall profile counts microseconds.
		w = all / nt / 1e6; nreq = rps * w
		if (nreq < 1)
			exit 1
		printf "%.0f %.0f %.0f\n", reads / nreq, 100 * reads / req, cpu * 1e6 / hz / nreq
	}' "$1" "$2"
}

# demo_db_load NAME PORT SECONDS: ab -k -c 4 on the service for SECONDS (0: until killed with
# SIGINT), in the background (sets abpid), its report in $FG_TMP/NAME.ab.
demo_db_load() {
	local -a t=(-t 3600)
	(($3 > 0)) && t=(-t "$3")
	ab -k -c 4 "${t[@]}" -n 10000000 -s 10 "http://127.0.0.1:$2/q" >"$FG_TMP/$1.ab" 2>&1 &
	abpid=$!
}

# demo_db_check_ab NAME: ab's report must show requests and no errors.
demo_db_check_ab() {
	grep -q '^Complete requests' "$FG_TMP/$1.ab" || { cat "$FG_TMP/$1.ab" >&2; fg_fail "$1: ab failed"; }
	! grep -q '^Non-2xx responses' "$FG_TMP/$1.ab" || {
		grep -E '^(Complete|Non-2xx)' "$FG_TMP/$1.ab" >&2
		fg_fail "$1: the service answered errors"
	}
}

demo_db_run() {
	local db name port hp abpid r1 r2 rc warm=$((WARMUP + 1))
	declare -A hostpid=() rps=() label=([pg]=PostgreSQL [maria]=MariaDB)
	FG_JAVA_JAR=$BUILD_DIR/tests/java/fg-realapp.jar
	[[ -f $FG_JAVA_JAR ]] || fg_fail "$FG_JAVA_JAR is not built (it needs libjetty9-java, libpostgresql-jdbc-java and libmariadb-java: scripts/install-deps.sh)"
	command -v ab >/dev/null || fg_fail "ab is not installed (apache2-utils: scripts/install-deps.sh)"
	ra_pg_bin >/dev/null || fg_fail "no PostgreSQL server under /usr/lib/postgresql (postgresql: scripts/install-deps.sh)"
	command -v mariadbd >/dev/null || fg_fail "no mariadbd (mariadb-server: scripts/install-deps.sh)"
	rm -f "$OUT"/realapp-*

	# 1. The servers, both at once (PostgreSQL's start in a subshell: its settings come back in
	# a file).
	(ra_pg_start "$FG_TMP/pg" && echo "$RA_PG_DIR $RA_PG_BIN $RA_PG_PORT" >"$FG_TMP/pg.vars") \
		2>"$FG_TMP/pg.err" &
	local pgjob=$!
	ra_maria_start "$FG_TMP/maria" || fg_fail "MariaDB did not start"
	wait "$pgjob" || { cat "$FG_TMP/pg.err" >&2; fg_fail "PostgreSQL did not start"; }
	read -r RA_PG_DIR RA_PG_BIN RA_PG_PORT <"$FG_TMP/pg.vars"
	say "PostgreSQL $("$RA_PG_BIN/postgres" --version | awk '{ print $3 }') on 127.0.0.1:$RA_PG_PORT, MariaDB $(mariadbd --version | awk '{ print $3 }' | cut -d- -f1) on 127.0.0.1:$RA_MARIA_PORT"

	# 2. The service on each, both starting at once (the idle one waits in epoll and accept).
	for db in pg maria; do
		port=$RA_PG_PORT
		[[ $db == maria ]] && port=$RA_MARIA_PORT
		FG_CT_OPTS=(--host-net)
		fg_jvm_start "realapp-$db" RealApp "$db" "$port" 4 "$DB_CUSTOMERS"
		FG_CT_OPTS=()
		hostpid[$db]=$FG_HOSTPID
	done

	# 3. Each in turn: load, warm up, record CPU and wall at once, render.
	for db in pg maria; do
		name=realapp-$db
		fg_wait_log "$name" 60 'RealApp ready port='
		hp=$(sed -n 's/.*RealApp ready port=\([0-9]*\).*/\1/p' "${FG_CT_LOG[$name]}" | head -n 1)
		say "RealApp (Jetty + JDBC) on ${label[$db]} runs in container '$name' as PID 1, host PID ${hostpid[$db]}, http://127.0.0.1:$hp/q; ab -k -c 4 for $warm s"
		demo_db_load "$name-warm" "$hp" "$warm"
		wait "$abpid" || true
		demo_db_check_ab "$name-warm"
		demo_db_load "$name" "$hp" 0
		say "profiling $SECONDS_TO_PROFILE s under the same load: fgcollect record --pid ${hostpid[$db]} --event cpu, and --event wall --threads 'rq-.*' at the same time"
		local -a rec=(--socket "$FG_SOCK" --pid "${hostpid[$db]}" --duration "$SECONDS_TO_PROFILE")
		[[ -n $FG_CTL ]] && rec+=(--ctl "$FG_CTL")
		"$FGCOLLECT" record "${rec[@]}" --event cpu --freq "$DB_FREQ" -o "$OUT/$name-cpu.folded" \
			2>"$FG_TMP/$name-cpu.err" &
		r1=$!
		"$FGCOLLECT" record "${rec[@]}" --event wall --threads 'rq-.*' -o "$OUT/$name-wall.folded" \
			2>"$FG_TMP/$name-wall.err" &
		r2=$!
		rc=0
		wait "$r1" || rc=$?
		wait "$r2" || rc=$((rc ? rc : $?))
		kill -INT "$abpid" 2>/dev/null || true
		wait "$abpid" || true
		((rc == 0)) || { cat "$FG_TMP/$name-cpu.err" "$FG_TMP/$name-wall.err" >&2; fg_fail "fgcollect record --pid ${hostpid[$db]} failed"; }
		demo_db_check_ab "$name"
		rps[$db]=$(sed -n 's/^Requests per second: *\([0-9.]*\).*/\1/p' "$FG_TMP/$name.ab")
		[[ -s $OUT/$name-cpu.folded && -s $OUT/$name-wall.folded ]] ||
			fg_fail "no stacks collected from pid ${hostpid[$db]}"
		grep -q ';RealAppServlet::doGet_\[' "$OUT/$name-wall.folded" ||
			fg_fail "the wall profile of pid ${hostpid[$db]} has no RealAppServlet::doGet"
		"$FGCOLLECT" flamegraph --colors java \
			--title "RealApp on ${label[$db]}: CPU samples at $DB_FREQ Hz (host PID ${hostpid[$db]})" \
			"$OUT/$name-cpu.folded" >"$OUT/$name-cpu.svg" || fg_fail "fgcollect flamegraph failed"
		"$FGCOLLECT" flamegraph --colors java --countname us \
			--title "RealApp on ${label[$db]}: wall-clock time (us), request threads rq-* (host PID ${hostpid[$db]})" \
			--subtitle "on and off the CPU; [off-cpu: ...] frames: why a thread waited" \
			"$OUT/$name-wall.folded" >"$OUT/$name-wall.svg" || fg_fail "fgcollect flamegraph failed"
		fg_container_stop "$name" || true
	done
	demo_db_cleanup

	# 4. The differential of the wall profiles, their stacks made comparable as the first
	# part's (thread names lose their numbers: rq-13 and rq-21 are the same pool's threads).
	# shellcheck disable=SC2016 # $$Lambda is text, not a shell expansion
	for db in pg maria; do
		sed -E 's/^([^;]*)-[0-9]+;/\1;/; s/_\[[ji0]\](;| )/\1/g; s/(\$\$Lambda\$[0-9]+)[.+\/]0x[0-9a-f]+/\1/g' \
			"$OUT/realapp-$db-wall.folded" >"$OUT/realapp-$db-wall.cmp.folded"
	done
	"$FGCOLLECT" diff --normalize --strip-hex --countname us \
		--title "RealApp wall-clock time (us): PostgreSQL -> MariaDB" \
		--subtitle "shape of the MariaDB run; red: larger share of wall time with MariaDB, blue: smaller" \
		"$OUT/realapp-pg-wall.cmp.folded" "$OUT/realapp-maria-wall.cmp.folded" >"$OUT/realapp-wall-diff.svg" ||
		fg_fail "fgcollect diff failed"
	local summary
	summary=$(demo_db_summary "$OUT/realapp-pg-cpu.folded" "$OUT/realapp-pg-wall.folded" "${rps[pg]}" \
		"$OUT/realapp-maria-cpu.folded" "$OUT/realapp-maria-wall.folded" "${rps[maria]}" "$DB_FREQ") ||
		fg_fail "no per-request figures from the profiles (no requests recorded?)"
	DB_REPORT=$(
		cat <<EOF

A service that waits on something real: Jetty + JDBC (tests/java/realapp) on PostgreSQL and on
MariaDB (servers on 127.0.0.1, stopped now), loaded with ab -k -c 4, recorded from the host:
  CPU flame graphs:   $OUT/realapp-pg-cpu.svg
                      $OUT/realapp-maria-cpu.svg
  wall flame graphs:  $OUT/realapp-pg-wall.svg (us, on and off the CPU)
                      $OUT/realapp-maria-wall.svg
  wall differential:  $OUT/realapp-wall-diff.svg (shape of the MariaDB run, red: larger share)
  folded stacks:      $OUT/realapp-{pg,maria}-{cpu,wall}.folded
  $summary
EOF
	)
}
