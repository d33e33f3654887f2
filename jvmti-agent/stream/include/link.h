/* SPDX-License-Identifier: MIT */
/*
 * link.h - the agent's nng push0 socket to the collector, behind struct link_ops.
 *
 * Dials ipc://PATH without blocking and keeps redialing (100 ms .. 500 ms), so a collector that
 * starts late or restarts is found within half a second; a socket that stayed unconnected for
 * 2 s is replaced, because nng 1.5.2 stops redialing after a dial that a collector dropped in
 * the SP handshake (see link.c). A socket carries one connection: when its dialer brings a
 * second, that pipe is refused before any byte goes out and the socket is replaced, so nothing
 * queued for the old connection reaches the new one ahead of its HELLO. Sends never block.
 * Connections are
 * numbered by the pipe callbacks; link_reset() closes the socket (dropping every queued message)
 * and opens a fresh one.
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
/* Unconnected this long (4 x the longest redial interval), the dialer may be dead: replaced. */
#define LINK_REDIAL_STALL_NS 2000000000ull

extern const struct link_ops link_nng_ops;

/*
 * Open a socket and start dialing socket_path. clock (agentclock.h; borrowed for the link's
 * life, NULL: the real one) times the reopen and redial decisions; nng's threads read it too,
 * when a connection goes. kick(arg) is called from nng's threads when a connection comes or
 * goes. Returns 0 and *out, or a negative errno (-ENAMETOOLONG for a path that does not fit,
 * -ENOMEM); a collector that is absent is not an error.
 */
int link_open(struct link **out, const char *socket_path, const struct agentclock *clock,
	      void (*kick)(void *), void *arg);

/* Close the socket and free l; NULL is fine. */
void link_close(struct link *l);

/* Mark this process as a forked child: from now on the link does nothing. */
void link_forked(void);

#endif
