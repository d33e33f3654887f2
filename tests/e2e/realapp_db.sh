# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# realapp_db.sh - throwaway PostgreSQL and MariaDB servers on loopback for the real-application
# service (tests/java/realapp), sourced by tests/e2e/realapp.sh and bench/record/realapp.sh. Run as
# root; the servers run as Debian's postgres and mysql users, each with its data directory,
# socket and log under a directory the caller gives, listening on 127.0.0.1 on a free port,
# with a database "fg" that user "fg" reaches without a password. Durability is off (fsync,
# synchronous commit): the data lives for one run.
#
#   ra_pg_start DIR      sets RA_PG_PORT      ra_maria_start DIR   sets RA_MARIA_PORT
#   ra_db_stop_all       stops every server started here (call it from the EXIT trap)
#
# The caller sources tests/harness/lib.sh first (fg_free_port). Each start function returns 1
# with a message on stderr when the server does not come up.

RA_PG_DIR=
RA_PG_BIN=
RA_PG_PORT=
RA_MARIA_PID=
RA_MARIA_PORT=

# ra_pg_bin: the newest PostgreSQL server's bin directory (Debian keeps them per version).
ra_pg_bin() {
	local d
	d=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)
	[[ -n $d && -x $d/initdb && -x $d/pg_ctl ]] || return 1
	echo "$d"
}

ra_pg_start() {
	local dir=$1
	RA_PG_BIN=$(ra_pg_bin) || { echo "realapp_db: no PostgreSQL server under /usr/lib/postgresql" >&2; return 1; }
	mkdir -p "$dir"
	chown postgres: "$dir"
	runuser -u postgres -- "$RA_PG_BIN/initdb" -D "$dir/data" -U fg -A trust --no-sync -E UTF8 \
		>"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; return 1; }
	# A port taken between the probe and the server's bind is tried again.
	for _ in 1 2 3; do
		RA_PG_PORT=$(fg_free_port)
		if runuser -u postgres -- "$RA_PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
			-o "-c listen_addresses=127.0.0.1 -p $RA_PG_PORT -c unix_socket_directories=$dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
			start >"$dir/pg_ctl.log" 2>&1; then
			RA_PG_DIR=$dir
			break
		fi
	done
	[[ -n $RA_PG_DIR ]] || { tail -n 20 "$dir/server.log" >&2; return 1; }
	"$RA_PG_BIN/psql" -q -h 127.0.0.1 -p "$RA_PG_PORT" -U fg -d postgres -c 'CREATE DATABASE fg' \
		>"$dir/psql.log" 2>&1 || { cat "$dir/psql.log" >&2; return 1; }
}

ra_maria_start() {
	local dir=$1 i
	mkdir -p "$dir"
	chown mysql: "$dir"
	mariadb-install-db --no-defaults --datadir="$dir/data" --user=mysql --skip-test-db \
		--auth-root-authentication-method=socket >"$dir/install.log" 2>&1 ||
		{ tail -n 20 "$dir/install.log" >&2; return 1; }
	for _ in 1 2 3; do
		RA_MARIA_PORT=$(fg_free_port)
		# No grant tables: any user, "fg" included, connects without a password (loopback only).
		mariadbd --no-defaults --user=mysql --datadir="$dir/data" --socket="$dir/sock" \
			--port="$RA_MARIA_PORT" --bind-address=127.0.0.1 --skip-grant-tables \
			--skip-name-resolve --pid-file="$dir/pid" --log-error="$dir/server.log" \
			--innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 --skip-log-bin \
			>/dev/null 2>&1 &
		RA_MARIA_PID=$!
		for ((i = 0; i < 300; i++)); do
			mariadb --no-defaults -S "$dir/sock" -e 'CREATE DATABASE IF NOT EXISTS fg' >/dev/null 2>&1 && return 0
			kill -0 "$RA_MARIA_PID" 2>/dev/null || break
			sleep 0.1
		done
		ra_maria_stop
	done
	tail -n 20 "$dir/server.log" >&2
	return 1
}

ra_maria_stop() {
	local i
	[[ -n $RA_MARIA_PID ]] || return 0
	kill -TERM "$RA_MARIA_PID" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do
		kill -0 "$RA_MARIA_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$RA_MARIA_PID" 2>/dev/null || true
	wait "$RA_MARIA_PID" 2>/dev/null || true
	RA_MARIA_PID=
}

ra_pg_stop() {
	[[ -n $RA_PG_DIR ]] || return 0
	runuser -u postgres -- "$RA_PG_BIN/pg_ctl" -D "$RA_PG_DIR/data" -m immediate -w -t 10 stop \
		>/dev/null 2>&1 || true
	RA_PG_DIR=
}

ra_db_stop_all() {
	ra_maria_stop
	ra_pg_stop
}
