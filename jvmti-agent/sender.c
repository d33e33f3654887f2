// SPDX-License-Identifier: MIT
/*
 * sender.c - queue -> live code table -> batched messages, with a full replay per connection.
 *
 * Invariant: s->synced is the id of the connection that has received HELLO and the complete
 * snapshot, or 0; records are put into a batch only while it is non-zero, and any change of
 * connection resets the transport first, so no stale message can precede a HELLO.
 */
#include "sender.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fgclock.h"
#include "fgproto.h"
#include "table.h"

#define FLUSH_AGE_NS 1000000ull /* flush a batch at least every 1 ms while events flow */
#define IDLE_WAIT_MS 100	/* sleep between rounds when nothing happens */

struct sender {
	struct queue *q;
	struct table *t;
	const struct link_ops *ops;
	void *link;
	char *jvm_version, *agent_version, *service;
	uint32_t pid, hello_flags;
	uint8_t *after_hello; /* records sent after HELLO, or NULL */
	size_t after_hello_len;

	uint64_t synced; /* connection id that has HELLO + snapshot, or 0 */
	uint8_t *batch;	 /* SENDER_MSG_MAX bytes: message header + records */
	size_t batch_len;
	uint64_t batch_born;
	uint64_t sent_queue_dropped, sent_table_full; /* last DROPPED values this connection saw */
	int send_wait_ms;

	/* Read by other threads. */
	atomic_uint_fast64_t table_full, connections, resets, records_sent, replayed;
	atomic_bool stop;
	pthread_t thread;
	atomic_bool running;
};

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

struct sender *sender_new(struct queue *q, size_t table_budget, const struct sender_hello *hello,
			  const struct link_ops *ops, void *link)
{
	struct sender *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->q = q;
	s->ops = ops;
	s->link = link;
	s->pid = hello->pid;
	s->hello_flags = hello->flags;
	s->t = table_new(table_budget);
	s->batch = malloc(SENDER_MSG_MAX);
	s->jvm_version = dup_or_empty(hello->jvm_version);
	s->agent_version = dup_or_empty(hello->agent_version);
	if (hello->after_hello && hello->after_hello_len &&
	    hello->after_hello_len <= SENDER_AFTER_HELLO_MAX &&
	    (s->after_hello = malloc(hello->after_hello_len)) != NULL) {
		memcpy(s->after_hello, hello->after_hello, hello->after_hello_len);
		s->after_hello_len = hello->after_hello_len;
	}
	s->service = dup_or_empty(hello->service);
	if (!s->t || !s->batch || !s->jvm_version || !s->agent_version || !s->service) {
		sender_free(s);
		return NULL;
	}
	return s;
}

void sender_free(struct sender *s)
{
	if (s == NULL)
		return;
	table_free(s->t);
	free(s->batch);
	free(s->jvm_version);
	free(s->agent_version);
	free(s->after_hello);
	free(s->service);
	free(s);
}

struct table *sender_table(struct sender *s)
{
	return s->t;
}

void sender_get_stats(struct sender *s, struct sender_stats *out)
{
	out->queue_dropped = queue_dropped(s->q);
	out->table_full = atomic_load(&s->table_full);
	out->connections = atomic_load(&s->connections);
	out->resets = atomic_load(&s->resets);
	out->records_sent = atomic_load(&s->records_sent);
	out->replayed = atomic_load(&s->replayed);
}

/* ---- transport ---------------------------------------------------------------------------- */

/* Send one message, waiting out -EAGAIN for at most send_wait_ms. 0 or negative errno. */
static int send_msg(struct sender *s, const uint8_t *buf, size_t len)
{
	uint64_t deadline = fg_now_ns() + (uint64_t)s->send_wait_ms * 1000000ull;
	int rv;

	while ((rv = s->ops->send(s->link, buf, len)) == -EAGAIN) {
		struct timespec pause = { 0, 200000 }; /* the collector is behind: give it 0.2 ms */

		if (fg_now_ns() >= deadline)
			return -ETIMEDOUT;
		nanosleep(&pause, NULL);
	}
	return rv;
}

static void reset_conn(struct sender *s)
{
	s->ops->reset(s->link);
	s->synced = 0;
	s->batch_len = 0;
}

static int flush(struct sender *s)
{
	int rv;

	if (s->batch_len <= FGP_MSG_HEADER_SIZE)
		return 0;
	rv = send_msg(s, s->batch, s->batch_len);
	s->batch_len = 0;
	return rv;
}

/* Append one encoded record, flushing first if it does not fit. flags are OR-ed into it. */
static int append(struct sender *s, const uint8_t *rec, size_t len, uint16_t flags)
{
	int rv;

	if (s->batch_len == 0) {
		fgp_encode_msg_header(s->batch, SENDER_MSG_MAX);
		s->batch_len = FGP_MSG_HEADER_SIZE;
		s->batch_born = fg_now_ns();
	}
	if (s->batch_len + len > SENDER_MSG_MAX) {
		if ((rv = flush(s)) != 0)
			return rv;
		if (FGP_MSG_HEADER_SIZE + len > SENDER_MSG_MAX) {
			/* A record with a huge inline table travels alone. */
			uint8_t *big = malloc(FGP_MSG_HEADER_SIZE + len);

			if (big == NULL)
				return 0; /* lost for this connection; the table still has it */
			fgp_encode_msg_header(big, FGP_MSG_HEADER_SIZE);
			memcpy(big + FGP_MSG_HEADER_SIZE, rec, len);
			big[FGP_MSG_HEADER_SIZE + 2] |= (uint8_t)flags;
			rv = send_msg(s, big, FGP_MSG_HEADER_SIZE + len);
			free(big);
			return rv;
		}
		return append(s, rec, len, flags);
	}
	memcpy(s->batch + s->batch_len, rec, len);
	s->batch[s->batch_len + 2] |= (uint8_t)flags; /* record flags: u16 LE at offset 2 */
	s->batch_len += len;
	return 0;
}

/* ---- the table ---------------------------------------------------------------------------- */

/* Apply one record of ours (already valid: we encoded it) to the table. */
static void apply(struct sender *s, const uint8_t *rec, size_t len)
{
	uint16_t type = rd16(rec);

	if ((type == FGP_CODE_LOAD || type == FGP_DYNAMIC_CODE) &&
	    len >= FGP_REC_HEADER_SIZE + 12) {
		uint64_t addr = rd64(rec + FGP_REC_HEADER_SIZE);
		uint32_t size = rd32(rec + FGP_REC_HEADER_SIZE + 8);
		int rv = table_put(s->t, addr, size, rec, len);

		if (rv == -ENOSPC || rv == -ENOMEM)
			atomic_fetch_add(&s->table_full, 1);
	} else if (type == FGP_CODE_FRAME && len >= FGP_REC_HEADER_SIZE + 8) {
		/* Replayed together with the CODE_LOAD / DYNAMIC_CODE at its address. */
		int rv = table_attach(s->t, rd64(rec + FGP_REC_HEADER_SIZE), rec, len);

		if (rv == -ENOSPC || rv == -ENOMEM)
			atomic_fetch_add(&s->table_full, 1);
	} else if (type == FGP_CODE_UNLOAD && len >= FGP_REC_HEADER_SIZE + 8) {
		table_remove(s->t, rd64(rec + FGP_REC_HEADER_SIZE));
	}
}

static int replay_one(void *arg, uint64_t addr, uint32_t size, const uint8_t *rec, size_t len)
{
	struct sender *s = arg;

	(void)addr;
	(void)size;
	atomic_fetch_add(&s->replayed, 1);
	return append(s, rec, len, FGP_REC_REPLAY);
}

static int append_dropped(struct sender *s, bool force)
{
	struct fgp_dropped d = { fg_now_ns(), queue_dropped(s->q), atomic_load(&s->table_full) };
	uint8_t rec[FGP_DROPPED_SIZE];
	int rv;

	if (!force && d.queue_full == s->sent_queue_dropped && d.table_full == s->sent_table_full)
		return 0;
	if (fgp_encode_dropped(rec, sizeof(rec), &d) < 0)
		return 0;
	if ((rv = append(s, rec, sizeof(rec), 0)) != 0)
		return rv;
	s->sent_queue_dropped = d.queue_full;
	s->sent_table_full = d.table_full;
	return 0;
}

/* HELLO, the snapshot of the table, and the drop counters if any: a new connection's start. */
static int sync_conn(struct sender *s)
{
	struct fgp_hello h = {
		.proto_version = FGP_VERSION,
		.pid = s->pid,
		.flags = s->hello_flags,
		.ts = fg_now_ns(),
		.jvm_version = { s->jvm_version, (uint16_t)strnlen(s->jvm_version, FGP_MAX_STR) },
		.agent_version = { s->agent_version,
				   (uint16_t)strnlen(s->agent_version, FGP_MAX_STR) },
		.service = { s->service, (uint16_t)strnlen(s->service, FGP_MAX_STR) },
	};
	struct fgp_snapshot snap = { h.ts, (uint32_t)table_count(s->t) };
	uint8_t small[FGP_SNAPSHOT_SIZE];
	uint8_t hello[3 * FGP_MAX_STR + 64];
	int n, rv;

	s->batch_len = 0;
	n = fgp_encode_hello(hello, sizeof(hello), &h);
	if (n < 0)
		return n;
	if ((rv = append(s, hello, (size_t)n, 0)) != 0)
		return rv;
	if (s->after_hello && (rv = append(s, s->after_hello, s->after_hello_len, 0)) != 0)
		return rv;
	fgp_encode_snapshot(small, sizeof(small), FGP_SNAPSHOT_BEGIN, &snap);
	if ((rv = append(s, small, sizeof(small), 0)) != 0)
		return rv;
	if ((rv = table_each(s->t, replay_one, s)) != 0)
		return rv;
	snap.ts = fg_now_ns();
	fgp_encode_snapshot(small, sizeof(small), FGP_SNAPSHOT_END, &snap);
	if ((rv = append(s, small, sizeof(small), 0)) != 0)
		return rv;
	s->sent_queue_dropped = 0;
	s->sent_table_full = 0;
	if ((rv = append_dropped(s, false)) != 0)
		return rv;
	return flush(s);
}

size_t sender_poll(struct sender *s, int send_wait_ms)
{
	uint64_t cur = s->ops->state(s->link);
	size_t consumed = 0;
	struct qentry *e;

	s->send_wait_ms = send_wait_ms;
	if (s->synced && cur != s->synced) {
		/* Lost or replaced: drop whatever nng still queues for the old peer. */
		reset_conn(s);
		cur = 0;
	}
	for (;;) {
		if (!s->synced && cur) {
			/* Fold what is already queued into the table so the snapshot is current. */
			while ((e = queue_pop(s->q)) != NULL) {
				apply(s, e->data, e->len);
				queue_release(s->q, e);
				consumed++;
			}
			if (sync_conn(s) != 0) {
				atomic_fetch_add(&s->resets, 1);
				reset_conn(s);
				return consumed;
			}
			s->synced = cur;
			atomic_fetch_add(&s->connections, 1);
		}
		e = queue_pop(s->q);
		if (e == NULL)
			break;
		apply(s, e->data, e->len);
		if (s->synced) {
			int rv = append(s, e->data, e->len, 0);

			if (rv == 0 && fg_now_ns() - s->batch_born >= FLUSH_AGE_NS)
				rv = flush(s);
			if (rv != 0) {
				atomic_fetch_add(&s->resets, 1);
				reset_conn(s);
				cur = 0; /* the next connection is synced in a later round */
			} else {
				atomic_fetch_add(&s->records_sent, 1);
			}
		}
		queue_release(s->q, e);
		consumed++;
	}
	if (s->synced && (append_dropped(s, false) != 0 || flush(s) != 0)) {
		atomic_fetch_add(&s->resets, 1);
		reset_conn(s);
	}
	return consumed;
}

/* ---- the thread --------------------------------------------------------------------------- */

static void *sender_main(void *arg)
{
	struct sender *s = arg;

	while (!atomic_load(&s->stop)) {
		sender_poll(s, 1000);
		queue_wait(s->q, IDLE_WAIT_MS);
	}
	sender_poll(s, 50); /* last events before the JVM goes: bounded */
	return NULL;
}

int sender_start(struct sender *s)
{
	pthread_attr_t attr;
	int rv;

	if ((rv = pthread_attr_init(&attr)) != 0)
		return -rv;
	pthread_attr_setstacksize(&attr, 256u << 10);
	rv = pthread_create(&s->thread, &attr, sender_main, s);
	pthread_attr_destroy(&attr);
	if (rv != 0)
		return -rv;
	atomic_store(&s->running, true);
	return 0;
}

int sender_stop(struct sender *s, int timeout_ms)
{
	struct timespec deadline;
	int rv;

	if (!atomic_load(&s->running))
		return 0;
	atomic_store(&s->stop, true);
	queue_kick(s->q);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	rv = pthread_timedjoin_np(s->thread, NULL, &deadline);
	if (rv != 0)
		return -ETIMEDOUT;
	atomic_store(&s->running, false);
	return 0;
}
