// SPDX-License-Identifier: MIT
/*
 * records.c - reserve, encode, push or cancel: the one path of every record into the queue.
 */
#include "records.h"

#include <errno.h>

#include "fgproto.h"

int records_push(struct queue *q, size_t size, records_encode_fn encode, const void *in, bool last)
{
	struct qentry *e;
	int n;

	if (size > FGP_MAX_RECORD)
		goto too_big;
	e = queue_reserve(q, size);
	if (e == NULL)
		return -ENOBUFS; /* counted as dropped by the queue */
	n = encode(e->data, size, in);
	if (n < 0) {
		queue_cancel(q, e);
		goto too_big;
	}
	e->len = (uint32_t)n;
	queue_push(q, e);
	return 0;
too_big:
	if (last)
		queue_count_drop(q);
	return -EMSGSIZE;
}
