/* SPDX-License-Identifier: MIT */
/*
 * roller.h - rolling profiles for `watch --profile-every`: a thread of its own samples every
 * connected JVM through the daemon's control channel (the record pipeline: session -> sampler
 * -> symbolizer -> stackagg) and, every interval, cuts one profile per JVM and hands it to the
 * profile directory (folded, SVG, optional pprof) and to the Pyroscope pusher.
 *
 * The ingest loop never waits for it: the roller is just another client of the control
 * channel, which never blocks the daemon (a client that falls behind is disconnected; the
 * roller then opens a new session, backing off from 10 s to 5 min when sessions keep failing
 * soon, since each one makes the daemon send every JVM's code history). An exited JVM's
 * sampling descriptors are closed by the session 2 s after its exit, and its code table and
 * process maps are let go once its samples are named (session_opts.let_go); the tables of the
 * JVMs that run keep a minute of unloaded code. Every recycle_ns, if some JVM has exited, the
 * session is replaced by a new one so that what remains of exited JVMs (their places among
 * the session's targets) goes too (a few milliseconds of samples are lost then).
 *
 * Invariant: memory is bounded by one interval's stacks (session_rotate hands them over and
 * they are freed after writing) plus the live code tables and a minute of their history.
 */
#ifndef FG_ROLLER_H
#define FG_ROLLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct profdir;
struct push;
struct roller;
struct roller_stats;
struct session_seams;

struct roller_opts {
	const char *ctl_path; /* the daemon's control socket */
	uint64_t interval_ns; /* profile length */
	unsigned freq_hz;     /* 0 = 99 */
	bool pprof_files;     /* also write STEM.pb.gz to dir */
	struct profdir *dir;  /* NULL: no files (the roller owns it from here: it writes) */
	struct push *push;    /* NULL: no push */
	const char *hostname;
	/* For messages: the profile directory's and the push server's names (borrowed until
	 * roller_stop; NULL: none). */
	const char *dir_name, *push_url;
	uint64_t recycle_ns; /* 0 = 1 h */
	/* Log lines (one per call, no newline), called from the roller's thread. May be NULL. */
	void (*log)(void *arg, const char *line);
	void *log_arg;
	bool verbose; /* also pass on the session's notes (connects, exits) */
	/* What the profiles measure (enum fg_event, evkind.h): cpu samples, or time off the CPU /
	 * on and off it in microseconds (pprof: ("off_cpu"|"wall", "nanoseconds")), or the agents'
	 * events: allocated or live bytes, lock waits in microseconds (pprof: evkind.h's
	 * types). One roller per event: watch --event cpu,offcpu runs two. */
	unsigned event;
	uint64_t min_block_ns;	/* offcpu/wall: waits shorter than this are left out */
	unsigned switch_period; /* offcpu/wall: session_opts' (0 = 1) ... */
	unsigned switch_rate;	/* ... (SESSION_SWITCH_RATE_AUTO: the default, or 0 with a
				 * switch_period) */
	bool merge_threads;	/* no thread-name root frame (--no-per-thread) */
	/* alloc, live, lock (session_opts'): 0 = the defaults */
	uint64_t alloc_interval;
	unsigned alloc_depth;
	uint64_t lock_threshold_us;
	uint32_t alloc_budget_ppm;
	/* Tests: the session's sampler, source and clock, and the roller's monotonic clock
	 * (session_seam.h). NULL: the real ones. Borrowed until roller_stop. */
	const struct session_seams *seams;
};

/* Start the thread. 0 or a negative errno. */
int roller_start(const struct roller_opts *o, struct roller **out);

/*
 * Stop: cut the running interval (written when it holds samples), join, free; the final
 * counters go to *final when it is not NULL. NULL is fine.
 */
void roller_stop(struct roller *r, struct roller_stats *final);

struct roller_stats {
	uint64_t intervals;	 /* intervals cut */
	uint64_t profiles;	 /* per-JVM profiles produced */
	uint64_t samples;	 /* samples in them */
	uint64_t other_samples;	 /* samples of processes that are not a known JVM */
	uint64_t write_errors;	 /* profiles the directory refused */
	uint64_t push_refused;	 /* profiles the pusher refused (too big, no memory) */
	uint64_t sessions;	 /* sessions opened */
	uint64_t session_errors; /* failed opens (retried) */
};

void roller_stats(struct roller *r, struct roller_stats *out);

#endif
