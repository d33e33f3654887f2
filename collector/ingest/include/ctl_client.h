/* SPDX-License-Identifier: MIT */
/*
 * ctl_client.h - the record command's side of the control channel (see ctl.h): list a daemon's
 * JVMs, or subscribe to their code-table history and live records.
 *
 * Invariant: single-threaded; every call waits at most the timeout it is given.
 */
#ifndef FG_CTL_CLIENT_H
#define FG_CTL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl.h"
#include "fgproto.h"
#include "jvmset.h"

struct ctl_client;
struct codetab;

/*
 * Connect to a daemon's control socket. 0 with *out set (the caller closes it with
 * ctl_close), -ENOENT (no daemon), -EACCES, or negative errno.
 */
int ctl_connect(const char *path, struct ctl_client **out);
/* NULL is ok. */
void ctl_close(struct ctl_client *c);

/*
 * The daemon's JVMs (codetab stats not included): up to max into out, the total in *n.
 * Waits at most timeout_ms. 0, -ETIMEDOUT, -ECONNRESET, -EPROTO.
 */
int ctl_list(struct ctl_client *c, struct jvm_info *out, size_t max, size_t *n, int timeout_ms);

struct ctl_handler {
	/*
	 * A JVM was announced (history start or a (re)connection). Return the table its records
	 * go to (the caller owns it; the same table again for a JVM seen before), or NULL to
	 * ignore them.
	 */
	struct codetab *(*jvm)(void *arg, const struct jvm_info *info);
	/* Its connection ended; exited says the process is gone. May be NULL. */
	void (*gone)(void *arg, uint32_t host_pid, bool exited);
	/*
	 * The agent's cumulative drop counters (FGP_DROPPED): once in every subscription's history
	 * (zeros when it never dropped) and again whenever the agent reports new drops. May be
	 * NULL; d is borrowed for the call.
	 */
	void (*dropped)(void *arg, uint32_t host_pid, const struct fgp_dropped *d);
	/* Its agent's TABLES record (tables on demand: on or off from here). May be NULL. */
	void (*tables)(void *arg, uint32_t host_pid, bool on);
	/* One of its agent's events (ctl_events asked for them); borrowed for the call. May be
	 * NULL. */
	void (*ev)(void *arg, const struct jvm_event *ev);
	void *arg;
};

/*
 * Let go of host_pid's table: records for it are dropped from here on, until the daemon names a
 * JVM of that PID again (its table is then the one the handler's jvm returns). The table itself
 * is the caller's to free.
 */
void ctl_forget(struct ctl_client *c, uint32_t host_pid);

/* Ask for host_pid's history and live records (0 = every JVM). 0 or negative errno. */
int ctl_subscribe(struct ctl_client *c, uint32_t host_pid);

/*
 * Ask for the events w says (jvmevent.h) of the JVMs subscribed to, from now on (on 0: none);
 * the daemon asks their agents through the want file. 0 or negative errno.
 */
int ctl_events(struct ctl_client *c, const struct jvm_evwant *w);

/* The fd to poll for POLLIN. */
int ctl_fd(const struct ctl_client *c);

/*
 * Read and dispatch what arrives within timeout_ms (0 = only what is there; -1 = wait for at
 * least one frame): JVM frames go to h->jvm, records are applied to the table it returned
 * (codetab_apply), DROPPED records also to h->dropped, GONE to h->gone. Returns frames handled (>=
 * 0), -ECONNRESET when the daemon closed, -EPROTO for a malformed frame. Records that fail to
 * decode are counted in *bad_records (may be NULL).
 */
int ctl_pump(struct ctl_client *c, int timeout_ms, const struct ctl_handler *h,
	     uint64_t *bad_records);

#endif
