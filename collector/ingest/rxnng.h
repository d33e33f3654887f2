/* SPDX-License-Identifier: MIT */
/*
 * rxnng.h - the agents' nng pull0 listener itself, in whichever process runs it: the sandboxed
 * child of receive.c, or the calling process when receive_opts.in_process asks. Same contract
 * as receive.h's functions of the same names (events, stats, watchdog), without the files
 * beside the socket, which the privileged side writes.
 */
#ifndef FG_RXNNG_H
#define FG_RXNNG_H

#include "receive.h"

struct rxnng;

/* Listen as o says; o has its defaults already and its path fits a socket address (receive_open
 * checked both; the sandboxed child passes the tail of that path). */
int rxnng_open(const struct receive_opts *o, struct rxnng **out);
int rxnng_close(struct rxnng *rx);
int rxnng_pollfds(struct rxnng *rx, struct pollfd *fds);
int rxnng_next(struct rxnng *rx, struct receive_ev *ev);
int rxnng_peer_pid(struct rxnng *rx, uint32_t pipe, uint32_t *pid);
void rxnng_drop_pipe(struct rxnng *rx, uint32_t pipe);
void rxnng_stats(struct rxnng *rx, struct receive_stats *out);
void rxnng_watchdog_pause(struct rxnng *rx, bool paused);

/*
 * Call fn(arg, why) from the watchdog thread, instead of closing and listening again, once the
 * listener is found wedged (the sandboxed child exits: its restart is the re-listen). why is
 * the last probe's -errno: -ENOTCONN when the listener answered it and took no pipe.
 */
void rxnng_on_wedge(struct rxnng *rx, void (*fn)(void *arg, int why), void *arg);

#endif
