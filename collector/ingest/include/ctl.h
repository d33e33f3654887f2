/* SPDX-License-Identifier: MIT */
/*
 * ctl.h - the root-only control channel of a `watch` daemon, used by `fgcollect record` to get
 * code tables when the daemon owns the agent socket.
 *
 * Where: a SOCK_STREAM unix socket (default CTL_DEFAULT_PATH) in a directory that must be owned
 * by us and closed to group and others (0700); never in the directory shared with containers.
 * Peers are accepted only when SO_PEERCRED says uid 0 or our own uid.
 *
 * Frames (both ways, little-endian): u32 size (whole frame) | u16 kind | u16 flags |
 * u32 host_pid | payload; at most CTL_MAX_FRAME bytes.
 *   client -> daemon   LIST                      -> JVM frames, then LIST_END
 *                      SUBSCRIBE host_pid (0=all) -> per matching JVM: a JVM frame, then RECORDS
 *                         frames with its history in time order (a HELLO, every load with its
 *                         original ts, every unload with its ts, then a DROPPED with the agent's
 *                         drop counters so far), then live RECORDS as the
 *                         agent sends them; a JVM frame when a JVM (re)connects; GONE when its
 *                         connection ends (flags & CTL_GONE_EXITED when the process is gone).
 *   RECORDS payload = one fgproto message (shared/fgproto.h).
 *   JVM payload = u32 ns_pid | u32 hello_flags | u64 start_time | u64 connect_ts | u64 exit_ts |
 *                 u8 connected | u8 exited | u16 0 | str container_id | str jvm_version |
 *                 str agent_version   (str = u16 length + bytes)
 *
 * Invariant: the daemon never blocks on a client: output is queued up to a cap, and a client
 * that lets it overflow is disconnected (counted).
 */
#ifndef FG_CTL_H
#define FG_CTL_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fgproto.h"
#include "jvmset.h"

#define CTL_DEFAULT_PATH "/run/fgcollect-ctl/ctl.sock"
#define CTL_MAX_FRAME (12u + (1u << 20))
#define CTL_MAX_CLIENTS 16

enum ctl_kind {
	CTL_LIST = 1,
	CTL_SUBSCRIBE = 2,
	CTL_JVM = 3,
	CTL_LIST_END = 4,
	CTL_RECORDS = 5,
	CTL_GONE = 6,
};

#define CTL_GONE_EXITED 1u

/* ---- daemon side ----------------------------------------------------------------------- */

struct ctl_server;

struct ctl_server_stats {
	uint64_t accepted, refused_uid, overflowed, bad_requests, frames_out;
	unsigned clients;
};

/*
 * Create path's directory if missing (0700), check it (ours, no group/other access, not a
 * symlink), replace a stale socket, listen (socket 0600), and observe set. 0, -EPERM (unsafe
 * directory), -EADDRINUSE (a live daemon answers there), or another negative errno.
 */
int ctl_server_open(const char *path, struct jvmset *set, struct ctl_server **out);
/* Close clients and the socket; unlinks the socket file. */
void ctl_server_close(struct ctl_server *srv);

/* Descriptors to poll (listener + clients, POLLOUT when output is queued); returns the count. */
size_t ctl_server_pollfds(struct ctl_server *srv, struct pollfd *fds, size_t cap);
/* Handle what poll() reported on the fds that ctl_server_pollfds filled, then flush output. */
void ctl_server_handle(struct ctl_server *srv, const struct pollfd *fds, size_t n);
/* Flush batched live records (call after each batch of agent messages). */
void ctl_server_flush(struct ctl_server *srv);
void ctl_server_stats(const struct ctl_server *srv, struct ctl_server_stats *out);

/* ---- client side (the record command) ---------------------------------------------------- */

struct ctl_client;
struct codetab;

/* Connect to a daemon's control socket. 0, -ENOENT (no daemon), -EACCES, or negative errno. */
int ctl_connect(const char *path, struct ctl_client **out);
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
	void *arg;
};

/* Ask for host_pid's history and live records (0 = every JVM). 0 or negative errno. */
int ctl_subscribe(struct ctl_client *c, uint32_t host_pid);

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
