/* SPDX-License-Identifier: MIT */
/*
 * daemon.h - `fgcollect watch`'s conductor: serve every JVM on this host and keep its
 * /tmp/perf-<hostpid>.map current, answer `record` on the control channel, and optionally cut
 * rolling profiles. Wires receive -> jvmset (code tables, maps) -> ctl_server, the maps an
 * earlier watch left (handoff, leftovers) and the rollers of export/.
 *
 * Exit (SIGINT/SIGTERM): dirty maps are written one last time and every map stays in place: the
 * map of a running JVM stays valid for stock perf (its code changes from then on are not
 * tracked) until a restarted collector, replayed by the agents, replaces it; maps of exited JVMs
 * are expired by the next watch (the list it leaves, handoff.h). A summary of counters is logged.
 *
 * Invariant: the one thread that runs daemon_run's loop is the only one touching the JVM set
 * and the control server. The daemon never prints: every line for the user goes to opts.log.
 */
#ifndef FG_DAEMON_H
#define FG_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

struct daemon_opts {
	const char *socket;  /* the agents' socket */
	const char *ctl;     /* the root-only control socket (its directory keeps the handoff) */
	const char *map_dir; /* where perf maps go ("/tmp") */
	uint64_t keep_exited_ns; /* an exited JVM's map is kept this long */
	uint64_t max_jvms;	 /* connections served at once */
	uint64_t watchdog_ms;	 /* listener self-check period, 0 = off */
	uint64_t sandbox_uid;	 /* the agent socket's process: uid, gid (0 = 65534) */
	uint64_t sandbox_gid;
	bool no_sandbox; /* the agent socket in this process (not confined) */
	bool quiet;	 /* no per-JVM log lines */
	/* Rolling profiles (export/roller.h): none when profile_ns is 0. */
	uint64_t profile_ns;
	const char *out_dir; /* profile directory, or NULL */
	bool pprof;	     /* also STEM.pb.gz */
	const char *push_url, *push_app;
	uint64_t push_queue;
	uint64_t keep_profiles, max_bytes;
	uint64_t freq;
	const char *host_name; /* NULL: this host's name */
	unsigned events;       /* 1 << FG_EVENT_x each (evkind.h): one roller per event */
	uint64_t min_block_ns;
	uint64_t switch_period; /* 0: not given */
	uint64_t switch_rate;	/* SESSION_SWITCH_RATE_AUTO: not given */
	bool merge_threads;
	uint64_t alloc_interval;    /* alloc, live: 0 = FG_ALLOC_INTERVAL_DEFAULT */
	uint64_t alloc_depth;	    /* alloc, live, lock: 0 = SESSION_DEFAULT_ALLOC_DEPTH */
	uint64_t lock_threshold_us; /* lock: shorter waits are left out */
	uint32_t alloc_budget_ppm;  /* alloc, live: session_opts' */
	/* Log lines (one per call, no newline), from the daemon's thread or, for the rollers'
	 * lines and the close guard's, from theirs. Required. */
	void (*log)(void *arg, const char *line);
	void *log_arg;
};

/* The defaults of every option (watch's usage text states them); log is left NULL. */
void daemon_opts_init(struct daemon_opts *o);

/*
 * Run until SIGINT or SIGTERM, then stop as the header says. Blocks SIGINT and SIGTERM in the
 * calling thread first (before any thread exists, so all of them inherit the mask). Returns the
 * exit status: FG_EXIT_OK, or FG_EXIT_FAIL when the daemon could not start or its loop failed
 * (logged).
 */
int daemon_run(const struct daemon_opts *o);

#endif
