// SPDX-License-Identifier: MIT
/*
 * sender.c - queue -> live code table -> batched messages, with a full replay per connection.
 *
 * Batching: the first event after a quiet spell leaves at once; while events keep flowing the
 * gap between messages doubles from SENDER_FLUSH_GAP_NS up to SENDER_FLUSH_GAP_MAX_NS
 * (SENDER_FLUSH_GAP_EV_MAX_NS while allocation or lock events flow), and between messages the
 * thread sleeps without being woken by each event, so a JIT storm costs a few wake-ups and
 * messages a second instead of one per compiled method. A transport that
 * refuses a message (-EAGAIN: the collector is behind or frozen) is retried without blocking, less
 * and less often while the refusal lasts; when
 * the batch is full or the refusal lasts send_wait_ms the connection is reset: the records are in
 * the table, and the next connection's snapshot carries them. The thread never waits on the
 * collector outside a snapshot.
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

#include "agentclock.h"
#include "agentthread.h"
#include "fgproto.h"
#include "fgsocket.h"
#include "intern.h"
#include "livecode.h"
#include "wantfile.h"
#include "fgfree.h"

#define RETRY_NS 2000000ull	 /* retry a refused message after 2 ms at first ... */
#define RETRY_MAX_NS 64000000ull /* ... and at most 64 ms (see retry_after) */
/*
 * No collector: look for one every 500 ms (the link opens its socket once the collector's file is
 * there, LINK_REOPEN_EVERY_NS, and a new connection kicks us). Events wait in the queue until
 * then, or until it is half full, and are folded into the table in one go.
 */
#define UNSYNCED_NAP_NS 500000000ull
/* Nothing queued on a synced connection: the next event, pipe change or want-file ask wakes us. */
#define IDLE_WAIT_NS 1000000000ull
#define WAIT_NAP_NS 1000000ull /* while a snapshot waits for the transport */

_Static_assert(SENDER_MSG_MAX <= FGP_MAX_MSG, "a message a collector refuses");

struct sender {
	struct queue *q;
	struct livecode *t;
	const struct link_ops *ops;
	void *link;
	char *jvm_version, *agent_version, *service;
	uint32_t pid, hello_flags;
	int send_wait_ms;
	bool wait;	      /* flushes wait out -EAGAIN (snapshots, sender_poll) */
	bool intern;	      /* this connection's collector reads NAME + CODE_LOAD_IDS */
	bool ondemand;	      /* this connection's collector reads FG_FEATURE_TABLES */
	bool want;	      /* what on_want was last told */
	uint64_t want_polled; /* when the want file was last asked */
	uint64_t synced_at;   /* when this connection was synced */
	uint64_t token;
	void (*on_want)(void *arg, bool want);
	void *want_arg;
	bool evread;	       /* this connection's collector reads FG_FEATURE_EVENTS */
	bool ev_open;	       /* an EVENTS on went out on this connection (and no off since) */
	struct want_events ev; /* what on_events was last told */
	void (*on_events)(void *arg, const struct want_events *w, uint64_t conn);
	void *events_arg;
	uint8_t *after_hello; /* records sent after HELLO, or NULL */
	size_t after_hello_len;

	uint64_t synced; /* connection id that has HELLO + snapshot, or 0 */
	uint8_t *batch;	 /* SENDER_MSG_MAX bytes: message header + records */
	size_t batch_len;
	uint64_t last_flush;	/* when the last message left */
	uint64_t gap;		/* between messages while events flow */
	bool waited;		/* the batch waited for the gap */
	uint64_t stalled_since; /* when the transport began refusing the batch, or 0 */
	uint64_t sent_queue_dropped, sent_table_full; /* last DROPPED values this connection saw */

	/* Interned names: which ids this connection has had a NAME for, when it reads them. */
	struct intern *names;		/* borrowed; NULL: the queue holds no CODE_LOAD_IDS */
	const struct agentclock *clock; /* borrowed; NULL: the real one */
	uint64_t *sent_ids;		/* bit per id */
	size_t sent_words;
	uint8_t *conv;		  /* FGP_MAX_RECORD: an interned record spelled out */
	struct fgp_str *resolved; /* FGP_MAX_INLINE_METHODS names */

	/* Read by other threads. */
	SENDER_COUNTERS(AGENTCOUNT_ATOMIC)
	pthread_t thread;
	atomic_bool stop, running;
};

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
	s->token = hello->token;
	s->send_wait_ms = 1000;
	s->gap = SENDER_FLUSH_GAP_NS;
	s->hello_flags = hello->flags;
	s->t = livecode_new(table_budget);
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
	livecode_free(s->t);
	FG_FREE_ALL(s->batch, s->jvm_version, s->agent_version, s->after_hello, s->service,
		    s->sent_ids, s->conv, s->resolved, s);
}

void sender_set_intern(struct sender *s, struct intern *st)
{
	s->names = st;
}

void sender_set_clock(struct sender *s, const struct agentclock *clock)
{
	s->clock = clock;
}

struct livecode *sender_livecode(struct sender *s)
{
	return s->t;
}

void sender_get_stats(struct sender *s, struct sender_stats *out)
{
	struct sender *src = s;

	out->queue_dropped = queue_dropped(s->q);
	SENDER_COUNTERS(AGENTCOUNT_LOAD)
}

/* ---- transport ---------------------------------------------------------------------------- */

/*
 * Send one message. Without s->wait a refusal (-EAGAIN) is returned at once, or -ETIMEDOUT once
 * the transport has refused messages for send_wait_ms; with it, -EAGAIN is waited out (in 1 ms
 * naps) for at most send_wait_ms. 0 or negative errno.
 */
static int send_msg(struct sender *s, const uint8_t *buf, size_t len)
{
	uint64_t now = agentclock_now(s->clock);
	int rv;

	for (;;) {
		rv = s->ops->send(s->link, buf, len);
		if (rv != -EAGAIN) {
			s->stalled_since = 0;
			if (rv == 0)
				s->last_flush = now;
			return rv;
		}
		if (!s->stalled_since)
			s->stalled_since = now;
		if (now - s->stalled_since >= (uint64_t)s->send_wait_ms * 1000000ull)
			return -ETIMEDOUT;
		if (!s->wait)
			return -EAGAIN;
		agentclock_nap(s->clock, WAIT_NAP_NS); /* the collector is behind */
		now = agentclock_now(s->clock);
	}
}

static void set_want(struct sender *s, bool want)
{
	if (s->want == want)
		return;
	s->want = want;
	if (s->on_want)
		s->on_want(s->want_arg, want);
}

static bool want_events_eq(const struct want_events *a, const struct want_events *b)
{
	return a->on == b->on && a->alloc_interval == b->alloc_interval &&
	       a->lock_ns == b->lock_ns && a->depth == b->depth;
}

/* What connection conn asks of events is w (all zero: nothing). */
static void set_events(struct sender *s, const struct want_events *w, uint64_t conn)
{
	if (want_events_eq(&s->ev, w))
		return;
	s->ev = *w;
	if (s->on_events)
		s->on_events(s->events_arg, w, conn);
}

/* Ask the want file what this connection's collector wants: tables, events, or both. */
static void poll_want(struct sender *s, uint64_t now, uint64_t conn)
{
	struct want_events w = { 0 };

	s->want_polled = now;
	if (s->ondemand)
		set_want(s, s->ops->wanted && s->ops->wanted(s->link, s->token) == 1);
	if (s->evread && s->ops->wanted_events) {
		s->ops->wanted_events(s->link, s->token, &w);
		set_events(s, &w, conn);
	}
}

void sender_on_events(struct sender *s,
		      void (*fn)(void *arg, const struct want_events *w, uint64_t conn), void *arg)
{
	s->on_events = fn;
	s->events_arg = arg;
}

void sender_on_want(struct sender *s, void (*fn)(void *arg, bool want), void *arg)
{
	s->on_want = fn;
	s->want_arg = arg;
}

/*
 * The only way out of a synced connection: tables go off here, so a new connection, synced only
 * after this, starts with them off (fgproto.h).
 */
static void reset_conn(struct sender *s)
{
	static const struct want_events none = { 0 };

	set_want(s, false);
	set_events(s, &none, 0);
	s->ev_open = false;
	s->ops->reset(s->link);
	s->synced = 0;
	s->batch_len = 0;
	s->stalled_since = 0;
}

/*
 * When to try a refused batch again: after as long as the refusal has lasted, from RETRY_NS up
 * to RETRY_MAX_NS. Each attempt copies the whole batch into a message; a collector frozen for
 * the second before its reset costs ~20 attempts instead of 500.
 */
static uint64_t retry_after(const struct sender *s, uint64_t now)
{
	uint64_t d = s->stalled_since && now > s->stalled_since ? now - s->stalled_since : 0;

	return now + (d < RETRY_NS ? RETRY_NS : d > RETRY_MAX_NS ? RETRY_MAX_NS : d);
}

/* Send the batch. 0 (sent or empty), -EAGAIN (kept: the transport refused it) or -errno. */
static int flush(struct sender *s)
{
	int rv;

	if (s->batch_len <= FGP_MSG_HEADER_SIZE)
		return 0;
	rv = send_msg(s, s->batch, s->batch_len);
	if (rv != -EAGAIN)
		s->batch_len = 0;
	return rv;
}

/*
 * Append one encoded record (at most FGP_MAX_RECORD bytes, as our encoders make them), flushing
 * first if it does not fit. flags are OR-ed into it. -ENOBUFS when the batch is full and the
 * transport refuses it: this connection cannot take the record any more.
 */
static int append(struct sender *s, const uint8_t *rec, size_t len, uint16_t flags)
{
	int rv;

	if (len > FGP_MAX_RECORD)
		return 0; /* never ours; a collector would refuse it anyway */
	if (s->batch_len + len > SENDER_MSG_MAX && (rv = flush(s)) != 0)
		return rv == -EAGAIN ? -ENOBUFS : rv;
	if (s->batch_len == 0) {
		fgp_encode_msg_header(s->batch, SENDER_MSG_MAX);
		s->batch_len = FGP_MSG_HEADER_SIZE;
	}
	memcpy(s->batch + s->batch_len, rec, len);
	fgp_rec_add_flags(s->batch + s->batch_len, flags);
	s->batch_len += len;
	return 0;
}

/* ---- the table ---------------------------------------------------------------------------- */

/*
 * Does rec (ours) ride along with the table's entry at its address? A CODE_FRAME always; a
 * CODE_LINES only when that entry is the load it was computed for (same ts): after a lost or
 * refused load the entry there is an older blob, whose replay must not carry these lines.
 */
static bool attachable(struct sender *s, const uint8_t *rec, size_t len)
{
	const uint8_t *own;
	uint64_t ts, own_ts;
	size_t own_len;

	if (len < FGP_REC_HEADER_SIZE + 8)
		return false;
	if (fgp_rec_type(rec) == FGP_CODE_FRAME)
		return true;
	if (fgp_rec_type(rec) != FGP_CODE_LINES || fgp_rec_code_ts(rec, len, &ts) != 1)
		return false;
	own = livecode_record(s->t, fgle_get64(rec + FGP_REC_HEADER_SIZE), &own_len);
	return own && fgp_rec_code_ts(own, own_len, &own_ts) == 1 && own_ts == ts;
}

/*
 * Apply a popped queue entry to the table and release it: a load's entry moves into the table
 * as it is (no copy, and no free on this thread of memory another thread allocated).
 */
static void apply(struct sender *s, struct qentry *e)
{
	uint64_t addr;
	uint32_t size;
	int rv;

	switch (fgp_rec_code_range(e->data, e->len, &addr, &size)) {
	case 1:
		queue_detach(s->q, e);
		rv = livecode_put_owned(s->t, addr, size, e->data, e->len, e);
		if (rv == -ENOSPC || rv == -ENOMEM)
			atomic_fetch_add(&s->table_full, 1);
		return;
	case 2:
		livecode_remove(s->t, addr);
		break;
	default:
		if (attachable(s, e->data, e->len)) {
			/* Replayed together with the CODE_LOAD / DYNAMIC_CODE at its address. */
			rv = livecode_attach(s->t, fgle_get64(e->data + FGP_REC_HEADER_SIZE),
					     e->data, e->len);
			if (rv == -ENOSPC || rv == -ENOMEM)
				atomic_fetch_add(&s->table_full, 1);
		}
		break;
	}
	queue_release(s->q, e);
}

/* Has this connection had a NAME for id? Marks it as sent. -ENOMEM if the bitmap cannot grow. */
static int name_sent(struct sender *s, uint32_t id, bool *was)
{
	size_t w = id / 64;

	if (w >= s->sent_words) {
		size_t n = s->sent_words ? s->sent_words : 1024;
		uint64_t *b;

		while (n <= w)
			n *= 2;
		b = realloc(s->sent_ids, n * sizeof(*b));
		if (!b)
			return -ENOMEM;
		memset(b + s->sent_words, 0, (n - s->sent_words) * sizeof(*b));
		s->sent_ids = b;
		s->sent_words = n;
	}
	*was = (s->sent_ids[w] >> (id % 64)) & 1;
	s->sent_ids[w] |= 1ull << (id % 64);
	return 0;
}

/* A NAME for id unless this connection has one. */
static int append_name(struct sender *s, uint32_t id)
{
	uint8_t rec[FGP_REC_HEADER_SIZE + 8 + 2 + FGP_MAX_STR];
	bool was;
	int n, rv;

	if ((rv = name_sent(s, id, &was)) != 0 || was)
		return rv;
	n = fgp_encode_name(rec, sizeof(rec), id, intern_name(s->names, id));
	if (n < 0)
		return n;
	atomic_fetch_add(&s->names_sent, 1);
	return append(s, rec, (size_t)n, 0);
}

/*
 * Append one record of ours. A CODE_LOAD_IDS goes after the NAMEs of its ids this connection
 * has not had yet, or, to a collector that does not read interned records, spelled out as a
 * CODE_LOAD.
 */
static int append_event(struct sender *s, const uint8_t *rec, size_t len)
{
	struct fgp_record r;
	uint32_t id;
	int32_t line;
	int rv;

	switch (fgp_rec_type(rec)) {
	case FGP_EVENTS:
		if (len >= FGP_EVENTS_SIZE)
			s->ev_open = fgle_get32(rec + FGP_REC_HEADER_SIZE + 8) != 0;
		return append(s, rec, len, 0);
	case FGP_OBJECT_FREE:
	case FGP_ALLOC_COST:
		break;
	default: /* STACK_EVENT: its frames' names first */
		if (!s->ev_open || !s->names || !s->intern || fgp_decode_record(rec, len, &r) != 1)
			break;
		for (uint16_t i = 0; i < r.u.ev.depth; i++) {
			fgp_event_frame(&r.u.ev, i, &id, &line);
			if ((rv = append_name(s, id)) != 0)
				return rv;
		}
		return append(s, rec, len, 0);
	}
	if (s->ev_open)
		return append(s, rec, len, 0);
	atomic_fetch_add(&s->events_unsent, 1);
	return 0;
}

/* A thread's gathered STACK_EVENTs (evbatch.h: whole records one after another), each alone;
 * each after the first counted as a record sent (drain counts the entry's first). */
static int append_events(struct sender *s, const uint8_t *rec, size_t len)
{
	size_t off = 0, own;
	int rv;

	while (len - off >= FGP_REC_HEADER_SIZE &&
	       (own = fgp_rec_size(rec + off)) >= FGP_REC_HEADER_SIZE && own <= len - off) {
		if ((rv = append_event(s, rec + off, own)) != 0)
			return rv;
		if (off)
			atomic_fetch_add(&s->records_sent, 1);
		off += own;
	}
	return 0;
}

static int append_rec(struct sender *s, const uint8_t *rec, size_t len, uint16_t flags)
{
	struct fgp_record r;
	struct fgp_code_load *l = &r.u.load;
	int n, rv;

	size_t own = fgp_rec_size(rec);
	uint16_t type = fgp_rec_type(rec);

	if (type == FGP_STACK_EVENT && own < len)
		return append_events(s, rec, len);
	if (type == FGP_STACK_EVENT || type == FGP_OBJECT_FREE || type == FGP_EVENTS ||
	    type == FGP_ALLOC_COST)
		return append_event(s, rec, len);
	if (type != FGP_CODE_LOAD_IDS || !s->names)
		return append(s, rec, len, flags);
	/* A replayed record may carry attachments (its CODE_FRAME) after its own bytes. */
	if (own > len || fgp_decode_record(rec, own, &r) != 1)
		return 0; /* cannot happen: we encoded it */
	if (s->intern) {
		if ((rv = append_name(s, l->name_id)) != 0)
			return rv;
		for (unsigned i = 0; i < l->n_methods; i++)
			if ((rv = append_name(s, fgp_load_method_id(l, i))) != 0)
				return rv;
		return append(s, rec, len, flags);
	}
	if ((!s->conv && !(s->conv = malloc(FGP_MAX_RECORD))) ||
	    (!s->resolved &&
	     !(s->resolved = malloc(FGP_MAX_INLINE_METHODS * sizeof(*s->resolved)))))
		return -ENOMEM;
	l->name = intern_name(s->names, l->name_id);
	for (unsigned i = 0; i < l->n_methods; i++)
		s->resolved[i] = intern_name(s->names, fgp_load_method_id(l, i));
	l->methods = s->resolved;
	n = fgp_encode_code_load_resolved(s->conv, FGP_MAX_RECORD, l, r.flags);
	if (n < 0)
		return 0; /* over FGP_MAX_RECORD spelled out: lost for this connection only */
	if ((rv = append(s, s->conv, (size_t)n, flags)) != 0 || own == len)
		return rv;
	return append(s, rec + own, len - own, 0);
}

static int replay_one(void *arg, uint64_t addr, uint32_t size, const uint8_t *rec, size_t len)
{
	struct sender *s = arg;

	(void)addr;
	(void)size;
	atomic_fetch_add(&s->replayed, 1);
	return append_rec(s, rec, len, FGP_REC_REPLAY);
}

static int append_dropped(struct sender *s, bool force)
{
	struct fgp_dropped d = { agentclock_now(s->clock), queue_dropped(s->q),
				 atomic_load(&s->table_full) };
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
		.ts = agentclock_now(s->clock),
		.jvm_version = { s->jvm_version, (uint16_t)strnlen(s->jvm_version, FGP_MAX_STR) },
		.agent_version = { s->agent_version,
				   (uint16_t)strnlen(s->agent_version, FGP_MAX_STR) },
		.service = { s->service, (uint16_t)strnlen(s->service, FGP_MAX_STR) },
		.token = s->token,
	};
	struct fgp_snapshot snap = { h.ts, (uint32_t)livecode_count(s->t) };
	uint8_t small[FGP_SNAPSHOT_SIZE];
	uint8_t hello[3 * FGP_MAX_STR + 64];
	int n, rv;

	s->batch_len = 0;
	s->stalled_since = 0;
	/* A new connection knows no ids; and it may be a collector of another version. */
	if (s->sent_ids)
		memset(s->sent_ids, 0, s->sent_words * sizeof(*s->sent_ids));
	s->intern = s->names && s->ops->reads && s->ops->reads(s->link, FG_FEATURE_INTERN);
	s->ondemand = s->ops->reads && s->ops->reads(s->link, FG_FEATURE_TABLES);
	s->evread = s->intern && s->ops->reads(s->link, FG_FEATURE_EVENTS);
	s->ev_open = false;
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
	if ((rv = livecode_each(s->t, replay_one, s)) != 0)
		return rv;
	snap.ts = agentclock_now(s->clock);
	fgp_encode_snapshot(small, sizeof(small), FGP_SNAPSHOT_END, &snap);
	if ((rv = append(s, small, sizeof(small), 0)) != 0)
		return rv;
	s->sent_queue_dropped = 0;
	s->sent_table_full = 0;
	if ((rv = append_dropped(s, false)) != 0)
		return rv;
	return flush(s);
}

/*
 * Follow the connection, sync a new one (HELLO + snapshot, waiting for the transport), and move
 * every queued record into the table and, while synced, into the batch. A connection that
 * cannot take the batch any more is reset. Returns the number of queue entries consumed.
 */
static size_t drain(struct sender *s)
{
	uint64_t cur = s->ops->state(s->link);
	size_t consumed = 0;
	struct qentry *e;

	if (s->synced && cur != s->synced) {
		/* Lost or replaced: drop whatever nng still queues for the old peer. */
		reset_conn(s);
		cur = 0;
	}
	for (;;) {
		if (!s->synced && cur) {
			bool wait = s->wait;
			int rv;

			/* Fold what is already queued into the table so the snapshot is current. */
			while ((e = queue_pop(s->q)) != NULL) {
				apply(s, e);
				consumed++;
			}
			s->wait = true;
			rv = sync_conn(s);
			s->wait = wait;
			if (rv != 0) {
				atomic_fetch_add(&s->resets, 1);
				reset_conn(s);
				return consumed;
			}
			s->synced = cur;
			s->synced_at = agentclock_now(s->clock);
			atomic_fetch_add(&s->connections, 1);
			/* An older collector reads every table; a newer one says whose it wants. */
			if (!s->ondemand)
				set_want(s, true);
			poll_want(s, s->synced_at, cur);
		}
		e = queue_pop(s->q);
		if (e == NULL)
			break;
		if (s->synced) {
			int rv = append_rec(s, e->data, e->len, 0);

			if (rv != 0) {
				atomic_fetch_add(&s->resets, 1);
				reset_conn(s);
				cur = 0; /* the next connection is synced in a later round */
			} else {
				atomic_fetch_add(&s->records_sent, 1);
			}
		}
		apply(s, e); /* after the append: the table may own (or free) e from here */
		consumed++;
	}
	if (s->synced && (s->ondemand || s->evread)) {
		uint64_t now = agentclock_now(s->clock);

		if (wantfile_due(s->synced_at, s->want_polled, now))
			poll_want(s, now, s->synced);
	}
	return consumed;
}

size_t sender_poll(struct sender *s, int send_wait_ms)
{
	size_t consumed;

	s->send_wait_ms = send_wait_ms;
	s->wait = true;
	consumed = drain(s);
	if (s->synced && (append_dropped(s, false) != 0 || flush(s) != 0)) {
		atomic_fetch_add(&s->resets, 1);
		reset_conn(s);
	}
	s->wait = false;
	return consumed;
}

/* The widest gap between messages now (sender.h). */
static uint64_t gap_max(const struct sender *s)
{
	return s->ev_open ? SENDER_FLUSH_GAP_EV_MAX_NS : SENDER_FLUSH_GAP_MAX_NS;
}

uint64_t sender_step(struct sender *s)
{
	uint64_t now;
	int rv;

	s->wait = false;
	drain(s);
	now = agentclock_now(s->clock);
	if (!s->synced)
		return now + UNSYNCED_NAP_NS;
	if (append_dropped(s, false) != 0) {
		atomic_fetch_add(&s->resets, 1);
		reset_conn(s);
		return now + UNSYNCED_NAP_NS;
	}
	if (s->batch_len <= FGP_MSG_HEADER_SIZE)
		return 0;
	/*
	 * The gap between messages doubles (up to gap_max) while events keep waiting for it, and
	 * falls back to SENDER_FLUSH_GAP_NS after a quiet spell: a storm costs a few messages a
	 * second, a trickle leaves at once.
	 */
	if (now - s->last_flush >= 4 * s->gap)
		s->gap = SENDER_FLUSH_GAP_NS;
	if (s->gap > gap_max(s))
		s->gap = gap_max(s); /* allocation or lock events came on while it was wider */
	if (!s->stalled_since && now - s->last_flush < s->gap) {
		s->waited = true;
		return s->last_flush + s->gap;
	}
	rv = flush(s);
	if (rv == -EAGAIN)
		return retry_after(s, agentclock_now(s->clock));
	if (rv != 0) {
		atomic_fetch_add(&s->resets, 1);
		reset_conn(s);
		return now + UNSYNCED_NAP_NS;
	}
	if (s->waited && s->gap < gap_max(s))
		s->gap *= 2;
	s->waited = false;
	return 0;
}

uint64_t sender_idle_ns(const struct sender *s)
{
	uint64_t now, next;

	if (!s->synced || !(s->ondemand || s->evread))
		return IDLE_WAIT_NS;
	now = agentclock_now(s->clock);
	next = wantfile_next(s->synced_at, s->want_polled);
	if (next <= now)
		return 0;
	return next - now < IDLE_WAIT_NS ? next - now : IDLE_WAIT_NS;
}

/* ---- the thread --------------------------------------------------------------------------- */

static void *sender_main(void *arg)
{
	struct sender *s = arg;

	/* Named for perf and top; nng's threads are "nng:*". */
	pthread_setname_np(pthread_self(), "fg-sender");
	s->send_wait_ms = 1000;
	while (!atomic_load(&s->stop)) {
		uint64_t at = sender_step(s), now;

		if (at == 0) {
			/* The next event wakes us. */
			queue_wait(s->q, (int)((sender_idle_ns(s) + 999999) / 1000000));
			continue;
		}
		now = agentclock_now(s->clock);
		/* Events do not wake us before at; a queue filling past half its budget does. */
		if (at > now)
			queue_doze(s->q, at - now, queue_budget(s->q) / 2);
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
	int rv;

	if (!atomic_load(&s->running))
		return 0;
	atomic_store(&s->stop, true);
	queue_kick(s->q);
	if ((rv = agentthread_stop(s->thread, timeout_ms)) != 0)
		return rv;
	atomic_store(&s->running, false);
	return 0;
}
