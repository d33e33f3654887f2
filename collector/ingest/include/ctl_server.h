/* SPDX-License-Identifier: MIT */
/*
 * ctl_server.h - the daemon's side of the control channel (see ctl.h): a listener, up to
 * CTL_MAX_CLIENTS root clients, each served LIST and SUBSCRIBE from a jvmset it observes.
 *
 * Invariant: single-threaded, driven by the caller's poll loop; no call blocks on a client.
 */
#ifndef FG_CTL_SERVER_H
#define FG_CTL_SERVER_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl.h"
#include "jvmset.h"

#define CTL_MAX_CLIENTS 16

struct ctl_server;

struct ctl_server_stats {
	uint64_t accepted, refused_uid, overflowed, bad_requests, frames_out;
	unsigned clients;
};

/*
 * Create path's directory if missing (0700), check it (ours, no group/other access, not a
 * symlink), replace a stale socket, listen (socket 0600), and observe set. 0, -EPERM (unsafe
 * directory), -EADDRINUSE (a live daemon answers there), or another negative errno. set is
 * borrowed and must outlive the server.
 */
int ctl_server_open(const char *path, struct jvmset *set, struct ctl_server **out);
/* Close clients and the socket; unlinks the socket file. NULL is ok. */
void ctl_server_close(struct ctl_server *srv);

/* Descriptors to poll (listener + clients, POLLOUT when output is queued); returns the count. */
size_t ctl_server_pollfds(struct ctl_server *srv, struct pollfd *fds, size_t cap);
/* Handle what poll() reported on the fds that ctl_server_pollfds filled, then flush output. */
void ctl_server_handle(struct ctl_server *srv, const struct pollfd *fds, size_t n);
/* Flush batched live records (call after each batch of agent messages). */
void ctl_server_flush(struct ctl_server *srv);
void ctl_server_stats(const struct ctl_server *srv, struct ctl_server_stats *out);

#endif
