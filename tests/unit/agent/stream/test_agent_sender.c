// SPDX-License-Identifier: MIT
/*
 * test_agent_sender.c - the sender over a fake transport: nothing leaves while disconnected,
 * every connection starts with HELLO + a complete snapshot (decoded with the shared decoder),
 * deltas follow, stalled or replaced connections are reset, drops are reported; events go
 * out only between the EVENTS records that open and close them, after their frames' NAMEs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agentclock.h"
#include "fgproto.h"
#include "fgsocket.h"
#include "intern.h"
#include "livecode.h"
#include "queue.h"
#include "sender.h"
#include "wantfile.h"

/* ---- fake transport: records every message, decoded ---------------------------------------- */

#define MAX_RECS 80000
/* Record counts below that fill several batches scale with the batch size (64 KiB: 1). */
#define SCALE ((int)(SENDER_MSG_MAX / (64u << 10)))
/* pcs of ten bytes (depth 2) making a CODE_LOAD just under FGP_MAX_RECORD */
#define HUGE_PCS ((FGP_MAX_RECORD - 4096) / 10)

struct got {
	uint16_t type, flags;
	uint64_t addr;
	uint32_t size, count;
	char name[64];
	uint32_t pid, hello_flags;
	char service[64];
	uint64_t queue_full, table_full;
	uint32_t n_pcs;
	uint64_t token; /* HELLO */
	size_t msg;	/* index of the message it came in */
};

struct fake {
	uint64_t conn;
	int eagain;	       /* answer -EAGAIN to every send */
	size_t attempts;       /* sends tried, refused ones included */
	int fail_after;	       /* >0: the n-th send from now fails with -EPIPE */
	int intern;	       /* the collector reads interned records */
	int tables;	       /* the collector reads FG_FEATURE_TABLES ... */
	uint64_t listed;       /* ... and its want file lists this token (0: none) */
	int events;	       /* the collector reads FG_FEATURE_EVENTS ... */
	struct want_events ev; /* ... and asks these of every token */
	size_t wanted_calls;
	int resets;
	size_t msgs, max_msg_len;
	struct got rec[MAX_RECS];
	size_t n;
};

static int fake_send(void *link, const uint8_t *buf, size_t len)
{
	struct fake *f = link;
	struct fgp_reader r;
	struct fgp_record rec;
	int rv;

	f->attempts++;
	if (f->eagain)
		return -EAGAIN;
	if (f->fail_after > 0 && --f->fail_after == 0)
		return -EPIPE;
	assert_int_equal(fgp_reader_init(&r, buf, len), 0);
	assert_true(len <= FGP_MAX_MSG);
	if (len > f->max_msg_len)
		f->max_msg_len = len;
	while ((rv = fgp_next(&r, &rec)) != 0) {
		struct got *g = &f->rec[f->n];

		assert_int_equal(rv, 1); /* everything we send decodes */
		assert_true(f->n < MAX_RECS);
		memset(g, 0, sizeof(*g));
		g->type = rec.type;
		g->flags = rec.flags;
		g->msg = f->msgs;
		switch (rec.type) {
		case FGP_HELLO:
			g->pid = rec.u.hello.pid;
			g->hello_flags = rec.u.hello.flags;
			g->token = rec.u.hello.token;
			snprintf(g->name, sizeof(g->name), "%.*s", rec.u.hello.jvm_version.len,
				 rec.u.hello.jvm_version.ptr);
			snprintf(g->service, sizeof(g->service), "%.*s", rec.u.hello.service.len,
				 rec.u.hello.service.ptr);
			break;
		case FGP_CODE_LOAD:
			g->addr = rec.u.load.addr;
			g->size = rec.u.load.size;
			g->n_pcs = rec.u.load.n_pcs;
			snprintf(g->name, sizeof(g->name), "%.*s", rec.u.load.name.len,
				 rec.u.load.name.ptr);
			break;
		case FGP_DYNAMIC_CODE:
			g->addr = rec.u.dyn.addr;
			g->size = rec.u.dyn.size;
			snprintf(g->name, sizeof(g->name), "%.*s", rec.u.dyn.name.len,
				 rec.u.dyn.name.ptr);
			break;
		case FGP_CODE_UNLOAD:
			g->addr = rec.u.unload.addr;
			break;
		case FGP_NAME:
			g->count = rec.u.name.id;
			snprintf(g->name, sizeof(g->name), "%.*s", rec.u.name.name.len,
				 rec.u.name.name.ptr);
			break;
		case FGP_CODE_LOAD_IDS:
			g->addr = rec.u.load.addr;
			g->size = rec.u.load.size;
			g->count = rec.u.load.name_id;
			g->n_pcs = rec.u.load.n_pcs;
			break;
		case FGP_SNAPSHOT_BEGIN:
		case FGP_SNAPSHOT_END:
			g->count = rec.u.snap.count;
			break;
		case FGP_CODE_LINES:
			g->addr = rec.u.lines.addr;
			g->size = rec.u.lines.size;
			g->n_pcs = rec.u.lines.n_pcs;
			break;
		case FGP_DROPPED:
			g->queue_full = rec.u.dropped.queue_full;
			g->table_full = rec.u.dropped.table_full;
			break;
		case FGP_STACK_EVENT:
			g->addr = rec.u.ev.ts;
			g->count = rec.u.ev.depth;
			snprintf(g->name, sizeof(g->name), "%.*s", rec.u.ev.cls.len,
				 rec.u.ev.cls.ptr);
			break;
		}
		f->n++;
	}
	f->msgs++;
	return 0;
}

static uint64_t fake_state(void *link)
{
	return ((struct fake *)link)->conn;
}

static void fake_reset(void *link)
{
	struct fake *f = link;

	f->resets++;
	f->conn = 0;
}

static bool fake_reads(void *link, const char *feature)
{
	const struct fake *f = link;

	return (f->intern && strcmp(feature, FG_FEATURE_INTERN) == 0) ||
	       (f->tables && strcmp(feature, FG_FEATURE_TABLES) == 0) ||
	       (f->events && strcmp(feature, FG_FEATURE_EVENTS) == 0);
}

static void fake_wanted_events(void *link, uint64_t token, struct want_events *out)
{
	struct fake *f = link;

	(void)token;
	*out = f->ev;
}

static int fake_wanted(void *link, uint64_t token)
{
	struct fake *f = link;

	f->wanted_calls++;
	return f->listed && f->listed == token;
}

static const struct link_ops fake_ops = { fake_send,  fake_state,  fake_reset,
					  fake_reads, fake_wanted, fake_wanted_events };

/* ---- producing events --------------------------------------------------------------------- */

static void push_load_pcs(struct queue *q, uint64_t addr, uint32_t size, const char *name,
			  uint32_t n_pcs)
{
	static const uint16_t chain[2] = { 0, 1 };
	struct fgp_str methods[2] = { { "a.B::inner", 10 }, { "a.B::outer", 10 } };
	struct fgp_pc_in *pcs = calloc(n_pcs ? n_pcs : 1, sizeof(*pcs));
	struct fgp_code_load_in c = {
		.addr = addr,
		.size = size,
		.ts = 1,
		.name = { name, (uint16_t)strlen(name) },
		.n_methods = n_pcs ? 2 : 0,
		.methods = methods,
		.n_pcs = n_pcs,
		.pcs = pcs,
	};
	struct qentry *e;

	for (uint32_t i = 0; i < n_pcs; i++)
		pcs[i] = (struct fgp_pc_in){ i % size, 2, chain };
	for (uint32_t i = 1; i < n_pcs; i++)
		if (pcs[i].pc_off < pcs[i - 1].pc_off)
			pcs[i].pc_off = pcs[i - 1].pc_off;
	e = queue_reserve(q, fgp_code_load_size(&c));
	assert_non_null(e);
	assert_true(fgp_encode_code_load(e->data, e->len, &c) > 0);
	queue_push(q, e);
	free(pcs);
}

static void push_load(struct queue *q, uint64_t addr, uint32_t size, const char *name)
{
	push_load_pcs(q, addr, size, name, 0);
}

static void push_unload(struct queue *q, uint64_t addr)
{
	struct fgp_code_unload u = { addr, 2 };
	struct qentry *e = queue_reserve(q, FGP_CODE_UNLOAD_SIZE);

	assert_non_null(e);
	assert_int_equal(fgp_encode_code_unload(e->data, e->len, &u), FGP_CODE_UNLOAD_SIZE);
	queue_push(q, e);
}

static void push_dyn(struct queue *q, uint64_t addr, uint32_t size, const char *name)
{
	struct fgp_dynamic_code d = { addr, size, 3, { name, (uint16_t)strlen(name) } };
	struct qentry *e = queue_reserve(q, fgp_dynamic_code_size(&d));

	assert_non_null(e);
	assert_true(fgp_encode_dynamic_code(e->data, e->len, &d) > 0);
	queue_push(q, e);
}

/* ---- fixture ------------------------------------------------------------------------------ */

/* The sender's clock: time moves only when a test or the sender's own nap moves it. */
struct fakeclock {
	uint64_t ns;
};

static uint64_t fake_now(void *arg)
{
	return ((struct fakeclock *)arg)->ns;
}

static void fake_nap(void *arg, uint64_t ns)
{
	((struct fakeclock *)arg)->ns += ns;
}

struct fix {
	struct queue *q;
	struct sender *s;
	struct fake *f;
	struct fakeclock fc;
	struct agentclock clock;
};

static uint64_t now(const struct fix *x)
{
	return x->fc.ns;
}

static void tick(struct fix *x, uint64_t ns)
{
	x->fc.ns += ns;
}

static const struct sender_hello hello = { .pid = 4242,
					   .flags = FGP_HELLO_PRESERVE_FRAME_POINTER,
					   .jvm_version = "17.0.99+1",
					   .agent_version = "fgagent test",
					   .service = "shop-web",
					   .token = 0xfeedf00d12345678ull };

static int setup(void **state)
{
	struct fix *x = calloc(1, sizeof(*x));

	x->q = queue_new(8 << 20);
	x->f = calloc(1, sizeof(*x->f));
	x->s = sender_new(x->q, 16 << 20, &hello, &fake_ops, x->f);
	x->fc.ns = 1000 * 1000000000ull; /* a monotonic clock is far from 0 */
	x->clock = (struct agentclock){ fake_now, fake_nap, &x->fc };
	if (x->s)
		sender_set_clock(x->s, &x->clock);
	*state = x;
	return x->q && x->s ? 0 : -1;
}

static int teardown(void **state)
{
	struct fix *x = *state;

	sender_free(x->s);
	queue_free(x->q);
	free(x->f);
	free(x);
	return 0;
}

/* Index of the first record of type after from, or -1. */
static long find(const struct fake *f, size_t from, uint16_t type)
{
	for (size_t i = from; i < f->n; i++)
		if (f->rec[i].type == type)
			return (long)i;
	return -1;
}

/* ---- tests -------------------------------------------------------------------------------- */

static void test_nothing_is_sent_while_disconnected(void **state)
{
	struct fix *x = *state;

	push_load(x->q, 0x1000, 0x100, "a.B::m");
	push_dyn(x->q, 0x9000, 0x40, "Interpreter");
	assert_int_equal(sender_poll(x->s, 10), 2);
	assert_int_equal(x->f->n, 0);
	assert_int_equal(livecode_count(sender_livecode(x->s)), 2);
	assert_int_equal(queue_used(x->q), 0);
}

static void test_connection_starts_with_hello_then_complete_snapshot(void **state)
{
	struct fix *x = *state;
	struct fake *f = x->f;
	long b, e;

	push_load(x->q, 0x2000, 0x100, "a.B::two");
	push_load(x->q, 0x1000, 0x100, "a.B::one");
	push_dyn(x->q, 0x9000, 0x40, "Interpreter");
	push_load(x->q, 0x3000, 0x100, "a.B::gone");
	push_unload(x->q, 0x3000);
	sender_poll(x->s, 10);
	f->conn = 1;
	sender_poll(x->s, 10);
	assert_true(f->n >= 6);
	assert_int_equal(f->rec[0].type, FGP_HELLO);
	assert_int_equal(f->rec[0].pid, 4242);
	assert_int_equal(f->rec[0].hello_flags, FGP_HELLO_PRESERVE_FRAME_POINTER);
	assert_string_equal(f->rec[0].name, "17.0.99+1");
	assert_string_equal(f->rec[0].service, "shop-web");
	b = find(f, 0, FGP_SNAPSHOT_BEGIN);
	e = find(f, 0, FGP_SNAPSHOT_END);
	assert_int_equal(b, 1);
	assert_int_equal(e, 5);
	assert_int_equal(f->rec[b].count, 3);
	assert_int_equal(f->rec[e].count, 3);
	/* Address order, all flagged as replay, the unloaded blob absent. */
	assert_string_equal(f->rec[2].name, "a.B::one");
	assert_string_equal(f->rec[3].name, "a.B::two");
	assert_string_equal(f->rec[4].name, "Interpreter");
	assert_int_equal(f->rec[4].type, FGP_DYNAMIC_CODE);
	for (long i = b + 1; i < e; i++)
		assert_true(f->rec[i].flags & FGP_REC_REPLAY);
	assert_int_equal(find(f, 0, FGP_DROPPED), -1); /* nothing dropped: nothing said */

	/* Then deltas, not flagged. */
	push_load(x->q, 0x4000, 0x10, "a.B::later");
	push_unload(x->q, 0x1000);
	sender_poll(x->s, 10);
	assert_int_equal(f->rec[6].type, FGP_CODE_LOAD);
	assert_false(f->rec[6].flags & FGP_REC_REPLAY);
	assert_string_equal(f->rec[6].name, "a.B::later");
	assert_int_equal(f->rec[7].type, FGP_CODE_UNLOAD);
	assert_int_equal(f->rec[7].addr, 0x1000);
	assert_int_equal(f->resets, 0);
}

static void test_reconnection_resets_and_replays_the_current_table(void **state)
{
	struct fix *x = *state;
	struct fake *f = x->f;
	size_t before;
	long h;

	f->conn = 1;
	push_load(x->q, 0x1000, 0x100, "a.B::one");
	push_load(x->q, 0x2000, 0x100, "a.B::two");
	sender_poll(x->s, 10);
	/* The collector restarts: a new connection id appears. */
	push_unload(x->q, 0x1000);
	f->conn = 0;
	sender_poll(x->s, 10);
	assert_int_equal(f->resets, 1);
	before = f->n;
	f->conn = 2;
	sender_poll(x->s, 10);
	h = find(f, before, FGP_HELLO);
	assert_int_equal(h, (long)before);
	assert_int_equal(f->rec[h + 1].type, FGP_SNAPSHOT_BEGIN);
	assert_int_equal(f->rec[h + 1].count, 1);
	assert_string_equal(f->rec[h + 2].name, "a.B::two");
	assert_int_equal(f->rec[h + 3].type, FGP_SNAPSHOT_END);
	/* A connection replaced without a gap is reset too, then synced on the next round. */
	f->conn = 3;
	sender_poll(x->s, 10);
	assert_int_equal(f->resets, 2);
	f->conn = 4;
	before = f->n;
	sender_poll(x->s, 10);
	assert_int_equal(f->rec[before].type, FGP_HELLO);
}

static void test_stalled_connection_is_reset_and_resynced(void **state)
{
	struct fix *x = *state;
	struct fake *f = x->f;
	struct sender_stats st;
	size_t before;

	f->conn = 1;
	push_load(x->q, 0x1000, 0x100, "a.B::one");
	sender_poll(x->s, 10);
	f->eagain = 1;
	push_load(x->q, 0x2000, 0x100, "a.B::two");
	sender_poll(x->s, 5);
	assert_int_equal(f->resets, 1);
	sender_get_stats(x->s, &st);
	assert_int_equal(st.resets, 1);
	/* The table kept the delta that could not be sent: the next snapshot has it. */
	f->eagain = 0;
	f->conn = 2;
	before = f->n;
	sender_poll(x->s, 10);
	assert_int_equal(f->rec[before].type, FGP_HELLO);
	assert_int_equal(f->rec[before + 1].count, 2);
}

static void test_step_keeps_a_refused_batch_without_blocking(void **state)
{
	struct fix *x = *state;
	struct fake *f = x->f;
	uint64_t t0, at;
	size_t before;

	f->conn = 1;
	sender_poll(x->s, 1000); /* synced; a refusal may last 1 s before a reset */
	before = f->n;
	f->eagain = 1;
	push_load(x->q, 0x1000, 0x100, "a.B::one");
	tick(x, 10000ull * 1000); /* past the gap: the step tries to send at once */
	t0 = now(x);
	at = sender_step(x->s);
	assert_true(now(x) == t0); /* no nap: the old sender waited here */
	assert_true(at != 0);	   /* a retry is scheduled */
	assert_int_equal(f->resets, 0);
	assert_int_equal(f->n, before);
	f->eagain = 0;
	tick(x, 3000ull * 1000);
	assert_int_equal(sender_step(x->s), 0);
	assert_int_equal(f->n, before + 1);
	assert_string_equal(f->rec[before].name, "a.B::one");
}

/*
 * A refused batch is tried again after as long as the refusal has lasted (2 ms, then longer, at
 * most 64 ms): each attempt copies the whole batch, and a frozen collector must not cost one
 * every 2 ms. A sent batch starts the count again.
 */
static void test_refused_batch_is_retried_less_and_less_often(void **state)
{
	struct fix *x = *state;
	struct fake *f = x->f;
	uint64_t t0, at, prev = 0;
	size_t tries;

	f->conn = 1;
	sender_poll(x->s, 1000); /* synced; a refusal may last 1 s before a reset */
	f->eagain = 1;
	push_load(x->q, 0x1000, 0x100, "a.B::one");
	tick(x, 10000ull * 1000); /* past the gap */
	tries = f->attempts;
	t0 = now(x);
	at = sender_step(x->s);
	while (now(x) - t0 < 500000000ull) {
		uint64_t t = now(x), wait = at > t ? at - t : 0;

		assert_true(wait <= 64000000ull + 1000000ull);
		assert_true(wait + 1000000ull >= prev); /* never sooner than the last time */
		prev = wait;
		tick(x, wait);
		at = sender_step(x->s);
	}
	/* 0, 2, 4, 8, 16, 32, 64 ms, then every 64 ms: ~12 in 0.5 s (250 at a 2 ms pace) */
	assert_true(f->attempts - tries >= 8);
	assert_true(f->attempts - tries <= 16);
	assert_true(prev >= 32000000ull);
	assert_int_equal(f->resets, 0);
	/* accepted again: sent, and the next refusal starts over at 2 ms */
	f->eagain = 0;
	tick(x, at > now(x) ? at - now(x) : 0);
	assert_int_equal(sender_step(x->s), 0);
	assert_string_equal(f->rec[f->n - 1].name, "a.B::one");
	f->eagain = 1;
	push_load(x->q, 0x2000, 0x100, "a.B::two");
	tick(x, 300000ull * 1000); /* past the longest gap */
	t0 = now(x);
	at = sender_step(x->s);
	assert_true(at > t0 && at - t0 <= 3000000ull);
}

static void test_step_resets_when_a_refused_batch_overflows(void **state)
{
	struct fix *x = *state;
	struct fake *f = x->f;

	f->conn = 1;
	sender_poll(x->s, 1000);
	f->eagain = 1;
	for (int i = 0; i < 3000 * SCALE; i++)
		push_load(x->q, 0x10000 + (uint64_t)i * 0x100, 0x100, "a.B::many_methods_here");
	tick(x, 10000ull * 1000);
	sender_step(x->s);
	assert_int_equal(f->resets, 1);
	/* Nothing was lost: the next connection's snapshot has every record. */
	f->eagain = 0;
	f->conn = 2;
	size_t before = f->n;

	sender_poll(x->s, 1000);
	assert_int_equal(f->rec[before].type, FGP_HELLO);
	assert_int_equal(f->rec[before + 1].count, 3000 * SCALE);
}

static void test_a_burst_of_events_shares_messages(void **state)
{
	struct fix *x = *state;
	struct fake *f = x->f;
	uint64_t t0, elapsed;
	size_t msgs, before;

	f->conn = 1;
	sender_poll(x->s, 1000);
	tick(x, 10000ull * 1000);
	msgs = f->msgs;
	before = f->n;
	t0 = now(x);
	for (int i = 0; i < 200; i++) {
		push_load(x->q, 0x10000 + (uint64_t)i * 0x100, 0x100, "a.B::m");
		sender_step(x->s);
		tick(x, 100ull * 1000);
	}
	elapsed = now(x) - t0;
	sender_poll(x->s, 1000);
	assert_int_equal(f->n - before, 200);
	/* The first event leaves at once, then at most one message per gap (one per event before).
	 */
	assert_true(f->msgs - msgs <= 2 + elapsed / SENDER_FLUSH_GAP_NS);
	assert_true(f->msgs - msgs < 100);
}

/* What events_code_load queues for an interned method: a CODE_LOAD_IDS inlining one method. */
static void push_load_ids(struct queue *q, uint64_t addr, uint32_t name_id, uint32_t inl_id)
{
	static const uint16_t chain[2] = { 1, 0 };
	uint32_t ids[2] = { name_id, inl_id };
	struct fgp_pc_in pc = { 0x10, 2, chain };
	struct fgp_code_load_ids_in c = { .addr = addr,
					  .size = 0x100,
					  .ts = 1,
					  .name_id = name_id,
					  .n_methods = 2,
					  .method_ids = ids,
					  .n_pcs = 1,
					  .pcs = &pc };
	struct qentry *e = queue_reserve(q, fgp_code_load_ids_size(&c));

	assert_non_null(e);
	assert_int_equal(fgp_encode_code_load_ids(e->data, e->len, &c), (int)e->len);
	queue_push(q, e);
}

static size_t count_type(const struct fake *f, size_t from, uint16_t type)
{
	size_t n = 0;

	for (size_t i = from; i < f->n; i++)
		n += f->rec[i].type == type;
	return n;
}

static void test_interned_names_go_once_per_connection_before_use(void **state)
{
	struct fix *x = *state;
	struct fake *f = x->f;
	struct intern *st = intern_new(1 << 20);
	uint32_t outer = intern_add(st, (void *)0x10, "a.B::outer", 10);
	uint32_t inner = intern_add(st, (void *)0x20, "a.B::inner", 10);
	size_t before;
	long load;

	sender_set_intern(x->s, st);
	f->intern = 1;
	f->conn = 1;
	sender_poll(x->s, 1000);
	before = f->n;
	push_load_ids(x->q, 0x1000, outer, inner);
	push_load_ids(x->q, 0x2000, outer, inner);
	sender_poll(x->s, 1000);
	/* NAME outer, NAME inner, then both loads: each name once, before its first use. */
	assert_int_equal(f->n - before, 4);
	assert_int_equal(f->rec[before].type, FGP_NAME);
	assert_int_equal(f->rec[before].count, outer);
	assert_string_equal(f->rec[before].name, "a.B::outer");
	assert_int_equal(f->rec[before + 1].type, FGP_NAME);
	assert_int_equal(f->rec[before + 1].count, inner);
	assert_int_equal(f->rec[before + 2].type, FGP_CODE_LOAD_IDS);
	assert_int_equal(f->rec[before + 3].type, FGP_CODE_LOAD_IDS);
	/* A new connection knows no ids: the replay defines them again first. */
	f->conn = 0;
	sender_poll(x->s, 1000);
	f->conn = 2;
	before = f->n;
	sender_poll(x->s, 1000);
	assert_int_equal(count_type(f, before, FGP_NAME), 2);
	load = find(f, before, FGP_CODE_LOAD_IDS);
	assert_true(load > find(f, before, FGP_NAME));
	assert_true(f->rec[load].flags & FGP_REC_REPLAY);
	sender_free(x->s); /* before the intern table it borrows */
	x->s = NULL;
	intern_free(st);
}

static void test_interned_loads_are_spelled_out_for_an_older_collector(void **state)
{
	struct fix *x = *state;
	struct fake *f = x->f;
	struct intern *st = intern_new(1 << 20);
	uint32_t outer = intern_add(st, (void *)0x10, "a.B::outer", 10);
	uint32_t inner = intern_add(st, (void *)0x20, "a.B::inner", 10);
	size_t before;

	sender_set_intern(x->s, st);
	f->intern = 0; /* no features file: a collector that predates interning */
	f->conn = 1;
	sender_poll(x->s, 1000);
	before = f->n;
	push_load_ids(x->q, 0x1000, outer, inner);
	sender_poll(x->s, 1000);
	assert_int_equal(f->n - before, 1);
	assert_int_equal(f->rec[before].type, FGP_CODE_LOAD);
	assert_string_equal(f->rec[before].name, "a.B::outer");
	assert_int_equal(f->rec[before].n_pcs, 1);
	assert_int_equal(count_type(f, 0, FGP_NAME), 0);
	sender_free(x->s);
	x->s = NULL;
	intern_free(st);
}

static void test_replayed_interned_load_keeps_its_code_frame(void **state)
{
	struct fix *x = *state;
	struct fake *f = x->f;
	struct intern *st = intern_new(1 << 20);
	uint32_t outer = intern_add(st, (void *)0x10, "a.B::outer", 10);
	uint32_t inner = intern_add(st, (void *)0x20, "a.B::inner", 10);
	struct fgp_code_frame cf = { .addr = 0x1000,
				     .frame_size = 32,
				     .code_begin = 0x1000,
				     .code_size = 0x100,
				     .frame_complete = -1 };
	struct qentry *e = queue_reserve(x->q, FGP_CODE_FRAME_SIZE);
	size_t before;
	long load;

	sender_set_intern(x->s, st);
	push_load_ids(x->q, 0x1000, outer, inner);
	assert_non_null(e);
	assert_int_equal(fgp_encode_code_frame(e->data, e->len, &cf), FGP_CODE_FRAME_SIZE);
	queue_push(x->q, e);
	sender_poll(x->s, 1000); /* no collector yet: both go into the table, the frame attached */
	for (int intern = 0; intern < 2; intern++) {
		f->intern = intern;
		f->conn = (uint64_t)intern + 1;
		before = f->n;
		sender_poll(x->s, 1000);
		load = find(f, before, intern ? FGP_CODE_LOAD_IDS : FGP_CODE_LOAD);
		assert_true(load > 0);
		assert_true(f->rec[load].flags & FGP_REC_REPLAY);
		assert_int_equal(f->rec[load].addr, 0x1000);
		assert_int_equal(f->rec[load + 1].type, FGP_CODE_FRAME); /* right after its load */
		f->conn = 0;
		sender_poll(x->s, 1000);
	}
	sender_free(x->s);
	x->s = NULL;
	intern_free(st);
}

/* A CODE_LINES for addr with the given load ts (one pc, one line). */
static void push_lines(struct queue *q, uint64_t addr, uint32_t size, uint64_t ts)
{
	static const uint16_t line[1] = { 42 };
	static const struct fgp_pc_in pc[1] = { { 0x10, 1, line } };
	struct fgp_code_lines_in l = {
		.addr = addr, .size = size, .ts = ts, .n_pcs = 1, .pcs = pc
	};
	struct qentry *e = queue_reserve(q, fgp_code_lines_size(&l));

	assert_non_null(e);
	assert_true(fgp_encode_code_lines(e->data, e->len, &l) > 0);
	queue_push(q, e);
}

static void test_code_lines_replay_with_their_own_load_only(void **state)
{
	struct fix *x = *state;
	struct fake *f = x->f;
	struct fgp_code_frame cf = { .addr = 0x1000,
				     .frame_size = 32,
				     .code_begin = 0x1000,
				     .code_size = 0x100,
				     .frame_complete = -1 };
	struct qentry *e;
	long load;

	push_load(x->q, 0x1000, 0x100, "a.B::m"); /* load ts 1 */
	e = queue_reserve(x->q, FGP_CODE_FRAME_SIZE);
	assert_non_null(e);
	assert_int_equal(fgp_encode_code_frame(e->data, e->len, &cf), FGP_CODE_FRAME_SIZE);
	queue_push(x->q, e);
	push_lines(x->q, 0x1000, 0x100, 1);
	push_lines(x->q, 0x1000, 0x100, 1); /* sent again: replaces, never doubles */
	push_load(x->q, 0x2000, 0x100, "a.B::n");
	push_lines(x->q, 0x2000, 0x100, 5); /* computed for a load the table does not hold */
	push_lines(x->q, 0x3000, 0x100, 1); /* no load there at all */
	sender_poll(x->s, 1000);
	for (int round = 0; round < 2; round++) {
		size_t before = f->n;

		f->conn = (uint64_t)round + 1;
		sender_poll(x->s, 1000);
		load = find(f, before, FGP_CODE_LOAD);
		assert_true(load > 0);
		assert_int_equal(f->rec[load].addr, 0x1000);
		assert_int_equal(f->rec[load + 1].type, FGP_CODE_FRAME);
		assert_int_equal(f->rec[load + 2].type, FGP_CODE_LINES);
		assert_int_equal(f->rec[load + 2].addr, 0x1000);
		assert_int_equal(f->rec[load + 3].type, FGP_CODE_LOAD);
		assert_int_equal(f->rec[load + 3].addr, 0x2000);
		assert_int_equal(f->rec[load + 4].type, FGP_SNAPSHOT_END);
		f->conn = 0;
		sender_poll(x->s, 1000);
	}
	/* while connected, lines go out live right after their load */
	f->conn = 9;
	sender_poll(x->s, 1000);
	load = (long)f->n;
	push_load(x->q, 0x4000, 0x100, "a.B::o");
	push_lines(x->q, 0x4000, 0x100, 1);
	sender_poll(x->s, 1000);
	assert_int_equal(f->rec[load].type, FGP_CODE_LOAD);
	assert_int_equal(f->rec[load + 1].type, FGP_CODE_LINES);
	assert_false(f->rec[load + 1].flags & FGP_REC_REPLAY);
}

static void test_failed_send_during_snapshot_resets(void **state)
{
	struct fix *x = *state;
	struct fake *f = x->f;

	for (int i = 0; i < 2000 * SCALE; i++)
		push_load(x->q, 0x10000 + (uint64_t)i * 0x100, 0x100, "a.B::many_methods_here");
	sender_poll(x->s, 10);
	f->conn = 1;
	f->fail_after = 2; /* the second message of the snapshot fails */
	sender_poll(x->s, 10);
	assert_int_equal(f->resets, 1);
	assert_int_equal(find(f, 0, FGP_SNAPSHOT_END), -1);
}

static void test_drops_are_reported_once_per_change(void **state)
{
	struct fix *x = *state;
	struct fake *f = x->f;
	long d;

	f->conn = 1;
	sender_poll(x->s, 10);
	queue_count_drop(x->q);
	queue_count_drop(x->q);
	sender_poll(x->s, 10);
	d = find(f, 0, FGP_DROPPED);
	assert_true(d >= 0);
	assert_int_equal(f->rec[d].queue_full, 2);
	assert_int_equal(f->rec[d].table_full, 0);
	sender_poll(x->s, 10);
	assert_int_equal(find(f, (size_t)d + 1, FGP_DROPPED), -1);
	/* A new connection hears the counters again after its snapshot. */
	f->conn = 2;
	sender_poll(x->s, 10);
	f->conn = 3;
	sender_poll(x->s, 10);
	d = find(f, (size_t)d + 1, FGP_DROPPED);
	assert_true(d >= 0);
	assert_int_equal(f->rec[d - 1].type, FGP_SNAPSHOT_END);
}

static void test_table_full_is_counted_but_delta_still_sent(void **state)
{
	struct queue *q = queue_new(1 << 20);
	struct fake *f = calloc(1, sizeof(*f));
	struct sender *s = sender_new(q, 256 * 32 + 200, &hello, &fake_ops, f);
	struct sender_stats st;
	long d;

	(void)state;
	f->conn = 1;
	sender_poll(s, 10); /* synced with an empty table: what follows are deltas */
	for (int i = 0; i < 20; i++)
		push_load(q, 0x1000 + (uint64_t)i * 0x100, 0x100, "a.B::m");
	sender_poll(s, 10);
	sender_get_stats(s, &st);
	assert_true(st.table_full > 0);
	assert_int_equal(st.records_sent, 20);
	d = find(f, 0, FGP_DROPPED);
	assert_true(d >= 0);
	assert_int_equal(f->rec[d].table_full, st.table_full);
	sender_free(s);
	queue_free(q);
	free(f);
}

static void test_large_snapshot_is_split_into_bounded_messages(void **state)
{
	struct fix *x = *state;
	struct fake *f = x->f;
	long b, e;

	for (int i = 0; i < 5000 * SCALE; i++)
		push_load(x->q, 0x100000 + (uint64_t)i * 0x100, 0x100,
			  "com.example.Something::run");
	/* One blob with an inline table near the largest record a message must still hold. */
	push_load_pcs(x->q, 0x1000, 0x1000, "a.B::huge", HUGE_PCS);
	sender_poll(x->s, 10);
	f->conn = 1;
	sender_poll(x->s, 10);
	b = find(f, 0, FGP_SNAPSHOT_BEGIN);
	e = find(f, 0, FGP_SNAPSHOT_END);
	assert_int_equal(e - b - 1, 5000 * SCALE + 1);
	assert_int_equal(f->rec[b].count, 5000 * SCALE + 1);
	assert_true(f->msgs > 5);
	assert_true(f->max_msg_len <= SENDER_MSG_MAX);
	assert_true(f->max_msg_len > FGP_MAX_RECORD - 8192); /* the huge one */
	assert_int_equal(f->rec[b + 1].n_pcs, HUGE_PCS);
	for (long i = b + 1; i < e; i++)
		assert_true(f->rec[i].flags & FGP_REC_REPLAY);
}

static void test_after_hello_records_follow_every_hello(void **state)
{
	struct fix *x = *state;
	struct fgp_vm_layout l = { .caps = FGP_VML_CAP_NAMES };
	struct sender_hello h = hello;
	uint8_t rec[256];
	struct sender *s;
	struct fake *f = x->f;
	int n;

	fgp_vml_set(&l, FGP_VML_JDK_MAJOR, 17);
	n = fgp_encode_vm_layout(rec, sizeof(rec), &l);
	assert_true(n > 0);
	h.after_hello = rec;
	h.after_hello_len = (size_t)n;
	s = sender_new(x->q, 1 << 20, &h, &fake_ops, f);
	assert_non_null(s);
	memset(rec, 0, sizeof(rec)); /* copied: the caller's buffer may go */
	push_load(x->q, 0x1000, 0x100, "a.B::one");
	f->conn = 1;
	sender_poll(s, 10);
	assert_int_equal(f->rec[0].type, FGP_HELLO);
	assert_int_equal(f->rec[1].type, FGP_VM_LAYOUT);
	assert_int_equal(f->rec[2].type, FGP_SNAPSHOT_BEGIN);
	/* A new connection gets it again, after its own HELLO. */
	f->conn = 2; /* the sender resets the old connection first (the fake drops to 0) */
	sender_poll(s, 10);
	f->conn = 3;
	sender_poll(s, 10);
	long hh = find(f, 1, FGP_HELLO);

	assert_true(hh > 0);
	assert_int_equal(f->rec[hh + 1].type, FGP_VM_LAYOUT);
	sender_free(s);
}

static void test_thread_starts_and_stops_within_bound(void **state)
{
	struct fix *x = *state;

	x->f->conn = 0;
	sender_set_clock(x->s, NULL); /* a thread of its own: the real clock */
	assert_int_equal(sender_start(x->s), 0);
	push_load(x->q, 0x1000, 0x100, "a.B::m");
	assert_int_equal(sender_stop(x->s, 2000), 0);
	assert_int_equal(livecode_count(sender_livecode(x->s)), 1);
}

/* What on_want was told, in order: 'Y' for true, 'N' for false. */
struct wants {
	char seq[32];
	size_t n;
};

static void note_want(void *arg, bool want)
{
	struct wants *w = arg;

	assert_true(w->n < sizeof(w->seq) - 1);
	w->seq[w->n++] = want ? 'Y' : 'N';
}

static void nap_past_want_poll(struct fix *x)
{
	tick(x, WANTFILE_POLL_SLOW_NS + 20000000ull);
}

/*
 * An idle thread wakes only for the want file: every WANTFILE_POLL_NS in a connection's first
 * WANTFILE_FAST_FOR_NS, every WANTFILE_POLL_SLOW_NS after, and at most once a second without
 * a collector that reads it.
 */
static void test_an_idle_sender_sleeps_until_the_want_file_is_due(void **state)
{
	struct fix *x = *state;
	struct fake *f = x->f;
	uint64_t t0, wakes = 0;

	assert_int_equal(sender_idle_ns(x->s), 1000000000ull); /* no collector */
	f->tables = 1;
	f->conn = 1;
	assert_int_equal(sender_step(x->s), 0);
	assert_int_equal(f->wanted_calls, 1); /* asked at the sync */
	assert_int_equal(sender_idle_ns(x->s), WANTFILE_POLL_NS);
	/* Ten idle seconds, sleeping as the thread does. */
	t0 = now(x);
	while (now(x) - t0 < 10000000000ull) {
		uint64_t ns = sender_idle_ns(x->s);

		assert_true(ns > 0);
		tick(x, ns);
		assert_int_equal(sender_step(x->s), 0);
		wakes++;
	}
	/* 20 in the first 2 s, then one per 500 ms: 16 more (100 at a 100 ms pace). */
	assert_int_equal(f->wanted_calls - 1,
			 WANTFILE_FAST_FOR_NS / WANTFILE_POLL_NS +
				 (10000000000ull - WANTFILE_FAST_FOR_NS) / WANTFILE_POLL_SLOW_NS);
	assert_int_equal(wakes, f->wanted_calls - 1);
	/* An older collector is never asked: the thread sleeps a second at a time. */
	f->tables = 0;
	f->conn = 2;
	sender_step(x->s);
	f->conn = 2;
	sender_step(x->s);
	assert_int_equal(sender_idle_ns(x->s), 1000000000ull);
}

static void test_want_follows_the_collector(void **state)
{
	struct fix *x = *state;
	struct fake *f = x->f;
	struct wants w = { 0 };

	sender_on_want(x->s, note_want, &w);
	/* No collector: nobody wants anything. */
	sender_poll(x->s, 10);
	assert_string_equal(w.seq, "");
	/* An older collector (no "tables" feature) reads every table: wanted after its sync. */
	f->conn = 1;
	sender_poll(x->s, 10);
	assert_string_equal(w.seq, "Y");
	assert_int_equal(f->rec[0].type, FGP_HELLO);
	assert_int_equal(f->rec[0].token, hello.token);
	assert_int_equal(f->wanted_calls, 0); /* its want file is never read */
	/* Lost: not wanted. */
	f->conn = 0;
	sender_poll(x->s, 10);
	assert_string_equal(w.seq, "YN");
	/* A newer collector that does not list us: still not wanted, and it is asked. */
	f->tables = 1;
	f->conn = 2;
	sender_poll(x->s, 10);
	assert_string_equal(w.seq, "YN");
	assert_true(f->wanted_calls >= 1);
	/* Another agent's token is listed: not us. */
	f->listed = hello.token + 1;
	nap_past_want_poll(x);
	sender_poll(x->s, 10);
	assert_string_equal(w.seq, "YN");
	/* Listed: wanted at the next poll; unlisted: not wanted at the one after. */
	f->listed = hello.token;
	nap_past_want_poll(x);
	sender_poll(x->s, 10);
	assert_string_equal(w.seq, "YNY");
	f->listed = 0;
	nap_past_want_poll(x);
	sender_poll(x->s, 10);
	assert_string_equal(w.seq, "YNYN");
	/* A new connection of a collector that lists us: off at its start, on after its sync. */
	f->listed = hello.token;
	f->conn = 3;
	sender_poll(x->s, 10); /* the old connection is reset (the fake drops the new one too) */
	f->conn = 3;
	sender_poll(x->s, 10);
	assert_string_equal(w.seq, "YNYNY");
	f->conn = 4;
	sender_poll(x->s, 10);
	assert_string_equal(w.seq, "YNYNYN");
	f->conn = 4;
	sender_poll(x->s, 10);
	assert_string_equal(w.seq, "YNYNYNY");
}

/* Events on demand: what on_events was told, in order. */
struct evs {
	int n;
	struct want_events w[8];
	uint64_t conn[8];
};

static void note_events(void *arg, const struct want_events *w, uint64_t conn)
{
	struct evs *e = arg;

	assert_true(e->n < 8);
	e->w[e->n] = *w;
	e->conn[e->n++] = conn;
}

static void push_rec(struct queue *q, const uint8_t *rec, int n)
{
	struct qentry *e;

	assert_true(n > 0);
	e = queue_reserve(q, (size_t)n);
	assert_non_null(e);
	memcpy(e->data, rec, (size_t)n);
	queue_push(q, e);
}

static void push_events_rec(struct queue *q, uint32_t on)
{
	struct fgp_events ev = { .ts = 1, .on = on, .alloc_interval = on ? 512 : 0 };
	uint8_t rec[FGP_EVENTS_SIZE];
	int n = fgp_encode_events(rec, sizeof(rec), &ev);

	push_rec(q, rec, n);
}

static void push_alloc(struct queue *q, uint32_t id0, uint32_t id1)
{
	struct fgp_frame_in fr[2] = { { id0, 12 }, { id1, 0 } };
	struct fgp_stack_event_in e = { .ts = 2,
					.tid = 7,
					.kind = FGP_EV_ALLOC,
					.value = 16,
					.interval = 512,
					.cls = { "byte[]", 6 },
					.depth = 2,
					.frames = fr };
	uint8_t rec[256];
	int n = fgp_encode_stack_event(rec, sizeof(rec), &e);

	push_rec(q, rec, n);
}

static void push_free(struct queue *q)
{
	static const uint64_t tags[] = { 1, 2 };
	uint8_t rec[64];
	int n = fgp_encode_object_free(rec, sizeof(rec), tags, 2);

	push_rec(q, rec, n);
}

static void test_events_follow_the_collector_between_their_events_records(void **state)
{
	struct fix *x = *state;
	struct fake *f = x->f;
	struct intern *st = intern_new(1 << 20);
	uint32_t a = intern_add(st, (void *)0x10, "a.B::alloc", 10);
	uint32_t b = intern_add(st, (void *)0x20, "a.B::main", 9);
	struct sender_stats ss;
	struct evs evs = { 0 };
	size_t before;

	sender_set_intern(x->s, st);
	sender_on_events(x->s, note_events, &evs);
	f->intern = 1;
	f->events = 1;
	f->ev = (struct want_events){ FGP_EVM_ALLOC | FGP_EVM_LIVE, 512, 0, 16, 0 };
	f->conn = 1;
	sender_poll(x->s, 10);
	assert_int_equal(evs.n, 1); /* asked at the sync, with the connection's id */
	assert_int_equal(evs.w[0].on, FGP_EVM_ALLOC | FGP_EVM_LIVE);
	assert_int_equal(evs.w[0].depth, 16);
	assert_int_equal(evs.conn[0], 1);
	/* Before the agent's EVENTS on: nothing of them goes out. */
	before = f->n;
	push_alloc(x->q, a, b);
	push_free(x->q);
	sender_poll(x->s, 10);
	assert_int_equal(f->n, before);
	sender_get_stats(x->s, &ss);
	assert_int_equal(ss.events_unsent, 2);
	/* EVENTS on, then the names of the frames, the event, the frees. */
	push_events_rec(x->q, FGP_EVM_ALLOC | FGP_EVM_LIVE);
	push_alloc(x->q, a, b);
	push_free(x->q);
	push_alloc(x->q, b, a); /* the names are not sent again */
	sender_poll(x->s, 10);
	assert_int_equal(f->n - before, 6);
	assert_int_equal(f->rec[before].type, FGP_EVENTS);
	assert_int_equal(f->rec[before + 1].type, FGP_NAME);
	assert_int_equal(f->rec[before + 1].count, a);
	assert_int_equal(f->rec[before + 2].type, FGP_NAME);
	assert_int_equal(f->rec[before + 2].count, b);
	assert_int_equal(f->rec[before + 3].type, FGP_STACK_EVENT);
	assert_int_equal(f->rec[before + 4].type, FGP_OBJECT_FREE);
	assert_int_equal(f->rec[before + 5].type, FGP_STACK_EVENT);
	/* EVENTS off closes them again. */
	before = f->n;
	push_events_rec(x->q, 0);
	push_alloc(x->q, a, b);
	sender_poll(x->s, 10);
	assert_int_equal(f->n - before, 1);
	assert_int_equal(f->rec[before].type, FGP_EVENTS);
	/* The ask changes at the next poll; losing the connection asks nothing. */
	f->ev.on = FGP_EVM_LOCK;
	nap_past_want_poll(x);
	sender_poll(x->s, 10);
	assert_int_equal(evs.n, 2);
	assert_int_equal(evs.w[1].on, FGP_EVM_LOCK);
	f->conn = 0;
	sender_poll(x->s, 10);
	assert_int_equal(evs.n, 3);
	assert_int_equal(evs.w[2].on, 0);
	assert_int_equal(evs.conn[2], 0);
	/* A new connection opens nothing by itself: its names go again after its EVENTS on. */
	f->conn = 2;
	sender_poll(x->s, 10);
	assert_int_equal(evs.n, 4);
	assert_int_equal(evs.conn[3], 2);
	before = f->n;
	push_alloc(x->q, a, b);
	push_events_rec(x->q, FGP_EVM_ALLOC);
	push_alloc(x->q, a, b);
	sender_poll(x->s, 10);
	assert_int_equal(f->n - before, 4);
	assert_int_equal(f->rec[before].type, FGP_EVENTS);
	assert_int_equal(f->rec[before + 1].type, FGP_NAME);
	/* A collector that does not read events is never asked. */
	f->events = 0;
	f->conn = 3;
	sender_poll(x->s, 10);
	f->conn = 3;
	sender_poll(x->s, 10);
	assert_int_equal(evs.n, 5); /* the reset of connection 2 */
	assert_int_equal(evs.w[4].on, 0);
	sender_free(x->s);
	x->s = NULL;
	intern_free(st);
}

/* A carrier's mounts gathered in one entry (evbatch.h): n records, named NAME0.. at ts 1..n. */
static void push_mounts(struct queue *q, int n)
{
	uint8_t rec[1024] = { 0 };
	size_t len = 0;

	for (int i = 0; i < n; i++) {
		char name[8] = { 'v', 't', (char)('0' + i), 0 };
		struct fgp_stack_event_in e = { .ts = (uint64_t)i + 1,
						.tid = 7,
						.kind = FGP_EV_VMOUNT,
						.value = 5,
						.cls = { name, 3 } };
		int k = fgp_encode_stack_event(rec + len, sizeof(rec) - len, &e);

		assert_true(k > 0);
		len += (size_t)k;
	}
	push_rec(q, rec, (int)len);
}

/* An entry of several STACK_EVENTs goes out as its records, each alone and in order, and
 * counts each when events are closed. */
static void test_a_threads_gathered_events_go_out_one_by_one(void **state)
{
	struct fix *x = *state;
	struct fake *f = x->f;
	struct intern *st = intern_new(1 << 20);
	struct sender_stats ss;
	uint64_t sent;
	size_t before;

	sender_set_intern(x->s, st);
	f->intern = 1;
	f->events = 1;
	f->ev = (struct want_events){ FGP_EVM_VTHREAD | FGP_EVM_VMOUNT | FGP_EVM_VCPU, 0, 0, 16,
				      0 };
	f->conn = 1;
	sender_poll(x->s, 10);
	push_mounts(x->q, 3);
	sender_poll(x->s, 10);
	sender_get_stats(x->s, &ss);
	assert_int_equal(ss.events_unsent, 3);
	before = f->n;
	sender_get_stats(x->s, &ss);
	sent = ss.records_sent;
	push_events_rec(x->q, FGP_EVM_VTHREAD | FGP_EVM_VMOUNT | FGP_EVM_VCPU);
	push_mounts(x->q, 3);
	push_mounts(x->q, 1);
	sender_poll(x->s, 10);
	assert_int_equal(f->n - before, 5);
	sender_get_stats(x->s, &ss);
	assert_int_equal(ss.records_sent - sent, 5); /* each record, not each entry */
	assert_int_equal(f->rec[before].type, FGP_EVENTS);
	for (int i = 0; i < 4; i++) {
		char want[8] = { 'v', 't', (char)('0' + i % 3), 0 };

		assert_int_equal(f->rec[before + 1 + (size_t)i].type, FGP_STACK_EVENT);
		assert_string_equal(f->rec[before + 1 + (size_t)i].name, want);
		assert_int_equal(f->rec[before + 1 + (size_t)i].addr, i % 3 + 1);
	}
	sender_free(x->s);
	x->s = NULL;
	intern_free(st);
}

/* A storm of compiles for 3 s, one every ms: the widest gap between two of its messages. */
static uint64_t storm_widest_gap(struct fix *x, uint64_t addr)
{
	struct fake *f = x->f;
	uint64_t last = 0, widest = 0;
	size_t msgs = f->msgs;

	for (int i = 0; i < 3000; i++, addr += 0x100) {
		push_load(x->q, addr, 0x100, "a.B::m");
		sender_step(x->s);
		if (f->msgs != msgs) {
			if (last && now(x) - last > widest)
				widest = now(x) - last;
			last = now(x);
			msgs = f->msgs;
		}
		tick(x, 1000000ull);
	}
	return widest;
}

static void test_a_storm_widens_the_gap_less_while_events_flow(void **state)
{
	struct fix *x = *state;
	struct fake *f = x->f;
	struct intern *st = intern_new(1 << 20);
	uint64_t widest;

	sender_set_intern(x->s, st);
	f->intern = 1;
	f->events = 1;
	f->conn = 1;
	sender_poll(x->s, 10);
	/* Nobody takes events: the gap widens to SENDER_FLUSH_GAP_MAX_NS. */
	widest = storm_widest_gap(x, 0x100000);
	assert_true(widest >= SENDER_FLUSH_GAP_MAX_NS);
	assert_true(widest <= SENDER_FLUSH_GAP_MAX_NS + 1000000ull);
	/* Events on: the storm's messages are at most SENDER_FLUSH_GAP_EV_MAX_NS apart. */
	push_events_rec(x->q, FGP_EVM_ALLOC);
	widest = storm_widest_gap(x, 0x10000000);
	assert_true(widest >= SENDER_FLUSH_GAP_EV_MAX_NS);
	assert_true(widest <= SENDER_FLUSH_GAP_EV_MAX_NS + 1000000ull);
	assert_true(SENDER_FLUSH_GAP_EV_MAX_NS < SENDER_FLUSH_GAP_MAX_NS);
	f->conn = 0;
	sender_poll(x->s, 10);
	sender_set_intern(x->s, NULL);
	intern_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nothing_is_sent_while_disconnected, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_connection_starts_with_hello_then_complete_snapshot, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_reconnection_resets_and_replays_the_current_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stalled_connection_is_reset_and_resynced,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_send_during_snapshot_resets, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_step_keeps_a_refused_batch_without_blocking,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_batch_is_retried_less_and_less_often,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_step_resets_when_a_refused_batch_overflows,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_storm_widens_the_gap_less_while_events_flow,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_burst_of_events_shares_messages, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_interned_names_go_once_per_connection_before_use, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_events_follow_the_collector_between_their_events_records, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_a_threads_gathered_events_go_out_one_by_one,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_interned_loads_are_spelled_out_for_an_older_collector, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_code_lines_replay_with_their_own_load_only,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_replayed_interned_load_keeps_its_code_frame,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_drops_are_reported_once_per_change, setup,
						teardown),
		cmocka_unit_test(test_table_full_is_counted_but_delta_still_sent),
		cmocka_unit_test_setup_teardown(test_large_snapshot_is_split_into_bounded_messages,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_an_idle_sender_sleeps_until_the_want_file_is_due, setup, teardown),
		cmocka_unit_test_setup_teardown(test_after_hello_records_follow_every_hello, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_want_follows_the_collector, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_starts_and_stops_within_bound, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
