/* SPDX-License-Identifier: MIT */
/*
 * link.h - the agent's nng push0 socket to the collector, behind struct link_ops.
 *
 * Dials ipc://PATH without blocking and keeps redialing (100 ms .. 500 ms), so a collector that
 * starts late or restarts is found within half a second. Because nng 1.5.2 stops redialing
 * after a dial that a collector dropped in the SP handshake (see link.c), a socket still
 * unconnected is replaced when the collector's socket file is made anew (a restarted collector)
 * and, failing that, after 2 s. A socket carries one connection: once it has gone the socket is
 * replaced, and a second pipe its dialer brings meanwhile is refused before any byte goes out,
 * so nothing queued for the old connection reaches the new one ahead of its HELLO; a send on a
 * socket whose connection has gone fails (-EPIPE) instead of queueing. Sends never block.
 * Connections are numbered by the pipe callbacks; link_reset() closes a socket that has
 * connected (dropping every queued message) and opens a fresh one.
 *
 * Invariant: only the thread that called link_open() calls into the link afterwards (nng's
 * own threads only bump the connection counters); nng is never touched in a forked child.
 */
#ifndef FG_LINK_H
#define FG_LINK_H

#include "sender.h"

struct agentclock;
struct link;

/* Without a socket, the link looks for the collector's socket file this often. */
#define LINK_REOPEN_EVERY_NS 500000000ull
/*
 * Unconnected this long since its opening (4 x the longest redial interval), a socket whose
 * dialer may be dead is replaced even though the socket file is the same one.
 */
#define LINK_REDIAL_STALL_NS 2000000000ull

extern const struct link_ops link_nng_ops;

/*
 * Open a socket and start dialing socket_path. clock (agentclock.h; borrowed for the link's
 * life, NULL: the real one) times the reopen and redial decisions. kick(arg) is called from
 * nng's threads when a connection comes or goes. Returns 0 and *out, or a negative errno
 * (-ENAMETOOLONG for a path that does not fit, -ENOMEM); a collector that is absent is not an
 * error.
 */
int link_open(struct link **out, const char *socket_path, const struct agentclock *clock,
	      void (*kick)(void *), void *arg);

/* Close the socket and free l; NULL is fine. */
void link_close(struct link *l);

/* Mark this process as a forked child: from now on the link does nothing. */
void link_forked(void);

#endif
