/* SPDX-License-Identifier: MIT */
/*
 * session_src.h - where a recording's code tables come from: the listen source (our own
 * receive socket feeding a jvmset) or the ctl source (a watch daemon's control channel, copied
 * into per-target tables). A source is driven through its ops vector, the way nng drives a
 * transport: it works on the targets and the note queue it was given at open and reports what
 * the recording must act on (tables changed, new targets to sample) in the events of a pump.
 * It never calls into the recording; a test drives the recording with a fake source.
 *
 * Invariant: a pump that may have changed a table says so (events.changed): JIT names cached
 * by pointer are stale after it.
 */
#ifndef FG_SESSION_SRC_H
#define FG_SESSION_SRC_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct codetab;
struct jvm_event;
struct jvm_evwant;
struct jvm_info;
struct notes;
struct session_opts;
struct targets;

/* Where a recording's code tables come from (session_opts.src, --src). */
enum session_src {
	SESSION_SRC_AUTO, /* ctl when the daemon answers, else listen */
	SESSION_SRC_LISTEN,
	SESSION_SRC_CTL,
};

/* What a source works on, borrowed for the life of the source. */
struct session_src_env {
	const struct session_opts *o; /* target, pid, src, socket_path, ctl_path */
	struct targets *targets;      /* the recording's targets: the source labels them and, with
					 SESSION_TARGET_ALL, adds the JVMs it hears of */
	struct notes *notes;	      /* where it tells the user what happened */
	uint64_t (*now)(void);	      /* the clock (fg_now_ns) */
	const uint64_t *start_ns;     /* when the recording started, on that clock (set when
					 sampling starts, after the source opened) */
	/* Agent events: what the recording wants of its targets' agents (on 0: none), and where
	 * the source hands their events (a target's only; called from pump, borrowed). */
	const struct jvm_evwant *evw;
	void (*ev)(void *arg, const struct jvm_event *ev);
	void *ev_arg;
};

/* What one pump asks the recording to do. */
struct session_src_events {
	bool changed;		 /* a code table may have changed */
	const uint32_t *adopted; /* targets added by this pump: sample them from now on */
	size_t nadopted;	 /* (the array is the source's, valid until its next pump) */
};

/*
 * The events of want (FGP_EVM_*) a JVM cannot give by its agent's hello flags (FGP_HELLO_NO_ALLOC:
 * alloc and live; FGP_HELLO_NO_LOCK: lock); 0 for an agent without FGP_HELLO_EVENTS (it said
 * nothing of its JVM).
 */
uint32_t session_src_jvm_cannot(uint32_t want, uint32_t hello_flags);

/*
 * Whether want (FGP_EVM_*) asks for allocation, live or lock events: what an agent without
 * FGP_HELLO_EVENTS is told it cannot send. The virtual-thread bits (the mounts, their waits,
 * a CPU recording's mounts alone) are not: a JVM has virtual threads or not.
 */
bool session_src_asks_events(uint32_t want);

struct session_source;

struct session_source_ops {
	/* The code table of pid, NULL when none (yet). */
	const struct codetab *(*table)(const struct session_source *src, uint32_t pid);
	/* Fill fds (room for 3) with what the source wants polled (POLLIN); how many. 0: the
	 * source has nothing left to wait for. */
	nfds_t (*pollfds)(const struct session_source *src, struct pollfd *fds);
	/* Handle whatever is ready, without waiting; *ev says what the recording must do. */
	void (*pump)(struct session_source *src, struct session_src_events *ev);
	/* Still streaming the history of its tables (samples wait, lookups are not final). */
	bool (*streaming)(const struct session_source *src);
	/* The source closed during the recording: the tables it gave are all there will be. */
	bool (*lost)(const struct session_source *src);
	/* The agent's own view of pid (drop counters, table sizes): true with *out, or false. */
	bool (*jvm_info)(const struct session_source *src, uint32_t pid, struct jvm_info *out);
	/* pid exited and its samples are all named: let go of its table if the source keeps one
	 * for the recording (the ctl source's copy). May be NULL. */
	void (*forget)(struct session_source *src, uint32_t pid);
	/* Close and free (tables owned by targets stay); accepts NULL. */
	void (*close)(struct session_source *src);
};

struct session_source {
	const struct session_source_ops *ops;
	enum session_src kind; /* SESSION_SRC_LISTEN or SESSION_SRC_CTL */
};

/*
 * Open the code-table source env->o->src asks for: the daemon's control channel, else our own
 * listener on the agent socket (SESSION_SRC_AUTO tries both, see session_src.c). 0 with *out,
 * or a negative errno with why naming every path tried. env must outlive the source.
 */
int session_src_open(const struct session_src_env *env, struct session_source **out, char *why,
		     size_t whylen);

/* The code table of pid from source src (a struct session_source, or NULL: none yet), NULL
 * when it has none: the resolvers' table_of (resolve.h), which thus never calls the session. */
const struct codetab *session_src_table(void *src, uint32_t pid);

#endif
