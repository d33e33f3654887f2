/* SPDX-License-Identifier: MIT */
/*
 * sender.h - the sender: drains the event queue into the live code table and, while a
 * collector is connected, batches the records into messages for it.
 *
 * On every new connection it first sends HELLO (and the records given in after_hello), then
 * SNAPSHOT_BEGIN, every record of the table
 * flagged FGP_REC_REPLAY, SNAPSHOT_END, a DROPPED record if anything was dropped, and from then
 * on the deltas, batched into messages of at most SENDER_MSG_MAX bytes and flushed when the
 * queue runs dry or a batch is older than about 1 ms. While no collector is connected only the
 * table is updated. A connection that stops taking messages, or that is replaced by a new one,
 * is reset, so no message meant for an old connection ever precedes a new connection's HELLO.
 *
 * The transport sits behind struct link_ops, so the logic runs in tests without nng.
 * Invariant: on one connection, HELLO is the first record and the snapshot the complete table.
 */
#ifndef FG_SENDER_H
#define FG_SENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue.h"

#define SENDER_MSG_MAX (64u << 10)
#define SENDER_AFTER_HELLO_MAX 4096u /* longer after_hello blobs are not sent */

struct link_ops {
	/*
	 * Send buf[0..len) as one message without blocking. Returns 0, -EAGAIN if the transport
	 * cannot take it now, or another negative errno if the connection is unusable. The buffer
	 * stays the caller's.
	 */
	int (*send)(void *link, const uint8_t *buf, size_t len);
	/* Id of the current connection (distinct for every connection), or 0 if none is up. */
	uint64_t (*state)(void *link);
	/* Drop the current connection and anything queued for it, and start dialing again. */
	void (*reset)(void *link);
};

struct sender_hello {
	uint32_t pid;
	uint32_t flags; /* FGP_HELLO_* */
	const char *jvm_version;
	const char *agent_version;
	/* Encoded records sent right after HELLO on every connection (the VM_LAYOUT), or NULL;
	 * copied by sender_new. */
	const uint8_t *after_hello;
	size_t after_hello_len;
	const char *service; /* may be NULL or "" */
};

struct sender_stats {
	uint64_t queue_dropped; /* events refused by the queue */
	uint64_t table_full;	/* blobs not kept for replay: table budget spent */
	uint64_t connections;	/* connections synced with HELLO + snapshot */
	uint64_t resets;	/* connections dropped because they stopped taking messages */
	uint64_t records_sent;	/* delta records sent (replays not included) */
	uint64_t replayed;	/* records sent in snapshots */
};

struct sender;

/*
 * A sender reading q and keeping a table of at most table_budget bytes. hello's strings are
 * copied. ops/link are borrowed until sender_free. NULL on ENOMEM.
 */
struct sender *sender_new(struct queue *q, size_t table_budget, const struct sender_hello *hello,
			  const struct link_ops *ops, void *link);

/* Free s (not q, not the link). The thread must be stopped. NULL is fine. */
void sender_free(struct sender *s);

/*
 * One round on the calling thread: follow the connection state, drain the queue, sync a new
 * connection, flush. Waits at most send_wait_ms for a transport that answers -EAGAIN before
 * resetting that connection. Returns the number of queue entries consumed.
 */
size_t sender_poll(struct sender *s, int send_wait_ms);

/* Start the thread: sender_poll, then sleep on the queue, until sender_stop. 0 or -errno. */
int sender_start(struct sender *s);

/*
 * Ask the thread to flush what is queued and exit, and wait for it at most timeout_ms.
 * Returns 0 once it exited, or -ETIMEDOUT (the thread still runs: do not free s then).
 */
int sender_stop(struct sender *s, int timeout_ms);

/* Counters so far (read from any thread; values may be a moment old). */
void sender_get_stats(struct sender *s, struct sender_stats *out);

/* The table, for tests and benchmarks on the polling thread. */
struct table *sender_table(struct sender *s);

#endif
