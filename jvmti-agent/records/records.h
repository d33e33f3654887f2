/* SPDX-License-Identifier: MIT */
/*
 * records.h - the one way a record of this part enters the queue (private to records/).
 *
 * Reserve, encode, push; or cancel. Every drop is counted once, in queue_dropped(): a refused
 * reservation by the queue itself, a record that cannot be encoded here, unless the caller has
 * a smaller form of it to try (last false).
 */
#ifndef FG_RECORDS_H
#define FG_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue.h"

/* An fgp_encode_* of one record kind: bytes written to dst, or a negative errno. */
typedef int (*records_encode_fn)(uint8_t *dst, size_t cap, const void *in);

/*
 * Encode in (size bytes at most, FGP_MAX_RECORD at most) into a fresh queue entry and push it.
 * Returns 0 (pushed), -ENOBUFS (the queue refused it: counted as dropped), or -EMSGSIZE (too big
 * or refused by the encoder: nothing pushed; counted as dropped only when last is true).
 */
int records_push(struct queue *q, size_t size, records_encode_fn encode, const void *in, bool last);

#endif
