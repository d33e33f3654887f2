/* SPDX-License-Identifier: MIT */
/*
 * targets.h - the processes a recording samples: found by PID, by container id prefix, or
 * added as their agents connect (--all), each with what the session learns about it.
 *
 * Invariant: at most SESSION_MAX_TARGETS targets, one per PID; a target's address is stable
 * for the life of the set (the array never moves), so callers may keep pointers.
 */
#ifndef FG_TARGETS_H
#define FG_TARGETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jvmset.h"
#include "peer.h"
#include "session_jvm.h"

struct codetab;

struct target {
	uint32_t pid;
	bool exited;
	uint64_t exit_ts;   /* when it exited (its PERF_RECORD_EXIT), once exited */
	uint64_t forget_at; /* when its sampling events are closed after its exit; 0 none due */
	/* session_opts.let_go: its table, maps and caches let go after its exit, once its samples
	 * were named (blobs and live keep its table's last counts). */
	bool let_go;
	uint64_t blobs, live;
	bool connected;	     /* its agent has said hello to our source */
	bool replaying;	     /* between SNAPSHOT_BEGIN and END */
	struct codetab *tab; /* ctl source: our copy of the daemon's table (owned) */
	bool jvm;	     /* maps libjvm.so: an agent is expected */
	char root[48];	     /* "comm-pid", the process root frame of multi-target sessions */
	bool drops_known;    /* ctl source: the daemon sent the agent's drop counters */
	uint64_t queue_full, table_full;
	char service[JVM_SERVICE_MAX]; /* from its agent's HELLO, "" unknown */
	bool hello_known;	       /* hello_flags came from its agent */
	uint32_t hello_flags;	       /* FGP_HELLO_* */
	/* Tables on demand: its agent sends tables only when asked and has not said they are
	 * on (TABLES) yet; samples wait for them as for a replay (at most agent_wait_ns). */
	bool tables_pending;
	char container_id[PEER_CONTAINER_ID_MAX + 1]; /* "" none or unknown */
	struct session_jvm_events ev;		      /* its agent's events (alloc, live, lock) */
};

struct targets {
	struct target *v;
	size_t n;
};

/* Room for SESSION_MAX_TARGETS. 0 or -ENOMEM. */
int targets_init(struct targets *ts);
/* Frees the targets and their tables. */
void targets_fini(struct targets *ts);

struct target *targets_find(const struct targets *ts, uint32_t pid);

/*
 * pid's target, new ones named from /proc/<pid>/comm and checked for libjvm.so. *added says
 * whether it is new. NULL when the set is full.
 */
struct target *targets_add(struct targets *ts, uint32_t pid, bool *added);

/*
 * Call add(arg, pid) for every process of /proc whose container id starts with prefix and
 * which has an address space (kernel threads have none); stop when add returns non-zero.
 * 0 or the negative errno of opening /proc.
 */
int targets_scan_container(const char *prefix, int (*add)(void *arg, uint32_t pid), void *arg);

#endif
