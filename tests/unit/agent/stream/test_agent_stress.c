// SPDX-License-Identifier: MIT
/*
 * test_agent_stress.c - the agent's threaded parts together, as inside a JVM: load, unload and
 * dynamic-code callbacks on several threads at once (the load path as agent.c's callback runs
 * it: tables_begin, the inline and line tables when on, interned names, the queue) against the
 * real sender thread and the real tables worker, whose rounds announce the live code again from
 * their own thread, over a fake link whose collector connects, reads interned names or not,
 * wants the tables or not, and goes away, all while the callbacks run.
 *
 * Checked on every connection: HELLO first, a complete snapshot, a NAME before every id it
 * uses; at the end: nothing dropped, and a new connection's snapshot is exactly the live code
 * every callback thread left behind, with the names it was loaded with. Under ThreadSanitizer
 * (label tsan, tests/tsan.cmake) the same run proves the parts free of data races.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <jvmti.h>
#include <jvmticmlr.h>

#include "agent/test_agent_fakejvmti.h"
#include "codelines.h"
#include "events.h"
#include "fgclock.h"
#include "fgproto.h"
#include "fgsocket.h"
#include "intern.h"
#include "methodset.h"
#include "queue.h"
#include "sender.h"
#include "tables.h"

#define THREADS 4	     /* callback threads */
#define SLOTS 64	     /* code addresses per callback thread */
#define EVENTS 4000	     /* callbacks per thread, at least */
#define MIN_CYCLES 8	     /* connections synced while the callbacks run, at least */
#define STABLE 32	     /* blobs loaded once, announced again by every tables round */
#define BLOB 0x800u	     /* size of every blob */
#define MAX_IDS (1u << 16)   /* name ids a connection may have had */
#define WAIT_LIMIT_S 60	     /* a hang guard only: the checks below are not about time */
#define BASE 0x7f0000000000u /* first blob */

static const char *const method_names[] = { NULL, "com.acme.Hot::loop", "com.acme.Hot$Inner::step",
					    "java.lang.Math::max", "Hot::main" };

static uint64_t slot_addr(unsigned thread, unsigned slot)
{
	return BASE + ((uint64_t)(thread + 1) << 24) + (uint64_t)slot * 0x1000u;
}

static uint64_t stable_addr(unsigned i)
{
	return BASE + (uint64_t)i * 0x1000u;
}

/* ---- the agent's parts, wired as agent.c wires them ------------------------------------------ */

static struct {
	struct queue *q;
	struct intern *names;
	struct codelines *lines;
	struct tables tabs;
	struct sender *s;
	jvmtiEnv *jvmti;	  /* the fake, set up once before any thread starts */
	atomic_uint rounds_again; /* loads announced again by the tables worker */
} ag;

/* One CompiledMethodLoad, as agent.c's on_code_load runs it. */
static void code_load(uint64_t addr, unsigned method, uint16_t flags)
{
	jmethodID chain[2] = { FAKE_M(method), FAKE_M(1) };
	PCStackInfo pcs[2] = {
		{ (void *)(uintptr_t)(addr + 0x10), 1, chain + 1, NULL },
		{ (void *)(uintptr_t)(addr + 0x40), 2, chain, NULL },
	};
	jvmtiCompiledMethodLoadInlineRecord inl = { { JVMTI_CMLR_INLINE_INFO, 1, 0, NULL },
						    2,
						    pcs };
	struct events_load_ctx ctx = {
		.q = ag.q,
		.names = ag.names,
		.jvmti = ag.jvmti,
		.method = FAKE_M(method),
		.code_size = BLOB,
		.code_addr = (const void *)(uintptr_t)addr,
		.ts = fg_now_ns(),
		.flags = flags,
	};
	bool tables = tables_begin(&ag.tabs);
	struct methodset set;

	if (tables)
		ctx.lines = ag.lines;
	methodset_of(&set, tables ? &inl : NULL);
	ctx.set = &set;
	events_code_load(&ctx);
	methodset_fini(&set);
	if (!tables)
		tables_lean_done(&ag.tabs);
}

/* The tables worker's round: what JVMTI GenerateEvents does, on the worker's thread. */
static int generate(void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < STABLE; i++) {
		code_load(stable_addr(i), 1 + i % 4, FGP_REC_AGAIN);
		atomic_fetch_add(&ag.rounds_again, 1);
	}
	return 0;
}

static void announce(void *arg, bool on, uint64_t ts)
{
	(void)arg;
	events_tables(ag.q, on, ts);
}

static void on_want(void *arg, bool want)
{
	(void)arg;
	tables_want(&ag.tabs, want);
}

/* ---- the fake link: a collector that comes and goes ------------------------------------------ */

struct conn_log {
	uint64_t id;
	bool hello, snap_begin, snap_end, tables_on;
	uint32_t snap_count, replayed;
};

static struct {
	atomic_uint_fast64_t conn;  /* current connection id, 0: none (the collector thread) */
	atomic_bool want;	    /* the want file lists us */
	atomic_bool intern_feature; /* the collector reads interned names */
	atomic_bool stop;
	atomic_uint_fast64_t tables_on; /* last connection that got TABLES on after its snapshot */
	atomic_uint_fast64_t synced;	/* last connection that got its whole snapshot */
	atomic_uint cycles;		/* connections the collector thread saw synced */
	/* The rest only on the sender thread, then read after it stopped. */
	uint64_t seen; /* the connection the sender last saw (state) */
	uint64_t cur;  /* the connection fk.log is about */
	struct conn_log log;
	uint64_t connections, loads, records;
	bool *ids; /* MAX_IDS: a NAME came on this connection */
	/* The last connection's snapshot: address -> method name seen (NULL: not in it). */
	const char *snap_name[THREADS + 1][SLOTS];
	bool snap_dyn[THREADS + 1][SLOTS];
	char name_text[MAX_IDS][48];
} fk;

static int fk_slot(uint64_t addr, unsigned *t, unsigned *s)
{
	if (addr < BASE || (addr - BASE) % 0x1000u)
		return -1;
	*t = (unsigned)((addr - BASE) >> 24);
	*s = (unsigned)(((addr - BASE) & 0xffffffu) / 0x1000u);
	if (*t > THREADS || *s >= SLOTS || (*t == 0 && *s >= STABLE))
		return -1;
	return 0;
}

static const char *known_name(const char *s, size_t len)
{
	for (unsigned i = 1; i < sizeof(method_names) / sizeof(method_names[0]); i++)
		if (strlen(method_names[i]) == len && !memcmp(method_names[i], s, len))
			return method_names[i];
	return NULL;
}

static void fk_new_conn(uint64_t id)
{
	memset(&fk.log, 0, sizeof(fk.log));
	fk.log.id = id;
	memset(fk.ids, 0, MAX_IDS * sizeof(*fk.ids));
	memset(fk.snap_name, 0, sizeof(fk.snap_name));
	memset(fk.snap_dyn, 0, sizeof(fk.snap_dyn));
	fk.cur = id;
}

/* In a snapshot: note what the collector would now map at addr. */
static void fk_snap(uint64_t addr, const char *name, bool dyn)
{
	unsigned t = 0, s = 0;

	if (!fk.log.snap_begin || fk.log.snap_end)
		return;
	if (fk_slot(addr, &t, &s) != 0)
		fail_msg("snapshot of an address nobody loaded: %llx", (unsigned long long)addr);
	assert_null(fk.snap_name[t][s]); /* one entry per address */
	fk.snap_name[t][s] = name;
	fk.snap_dyn[t][s] = dyn;
	fk.log.replayed++;
}

static int fk_send(void *link, const uint8_t *buf, size_t len)
{
	uint64_t id = atomic_load(&fk.conn);
	struct fgp_reader r;
	struct fgp_record rec;
	int rv;

	(void)link;
	if (id == 0 || id != fk.seen)
		return -EPIPE; /* replaced since the sender looked: its messages go nowhere */
	if (id != fk.cur)
		fk_new_conn(id);
	assert_int_equal(fgp_reader_init(&r, buf, len), 0);
	while ((rv = fgp_next(&r, &rec)) != 0) {
		const char *name = NULL;

		assert_int_equal(rv, 1);
		fk.records++;
		if (!fk.log.hello)
			assert_int_equal(rec.type, FGP_HELLO); /* HELLO first on every connection */
		switch (rec.type) {
		case FGP_HELLO:
			assert_false(fk.log.hello);
			fk.log.hello = true;
			fk.connections++;
			break;
		case FGP_SNAPSHOT_BEGIN:
			fk.log.snap_begin = true;
			fk.log.snap_count = rec.u.snap.count;
			break;
		case FGP_SNAPSHOT_END:
			assert_true(fk.log.snap_begin);
			fk.log.snap_end = true;
			assert_int_equal(fk.log.replayed, fk.log.snap_count);
			atomic_store(&fk.synced, id);
			break;
		case FGP_NAME:
			assert_true(rec.u.name.id < MAX_IDS);
			fk.ids[rec.u.name.id] = true;
			snprintf(fk.name_text[rec.u.name.id], sizeof(fk.name_text[0]), "%.*s",
				 rec.u.name.name.len, rec.u.name.name.ptr);
			break;
		case FGP_CODE_LOAD_IDS:
			/* A NAME for the id came first on this connection. */
			assert_true(rec.u.load.name_id < MAX_IDS && fk.ids[rec.u.load.name_id]);
			name = known_name(fk.name_text[rec.u.load.name_id],
					  strlen(fk.name_text[rec.u.load.name_id]));
			assert_non_null(name);
			fk.loads++;
			if (rec.flags & FGP_REC_REPLAY)
				fk_snap(rec.u.load.addr, name, false);
			break;
		case FGP_CODE_LOAD:
			name = known_name(rec.u.load.name.ptr, rec.u.load.name.len);
			assert_non_null(name);
			fk.loads++;
			if (rec.flags & FGP_REC_REPLAY)
				fk_snap(rec.u.load.addr, name, false);
			break;
		case FGP_DYNAMIC_CODE:
			if (rec.flags & FGP_REC_REPLAY)
				fk_snap(rec.u.dyn.addr, "dyn", true);
			break;
		case FGP_TABLES:
			fk.log.tables_on = rec.u.tables.on;
			if (rec.u.tables.on && fk.log.snap_end)
				atomic_store(&fk.tables_on, id);
			break;
		default:
			break;
		}
	}
	return 0;
}

static uint64_t fk_state(void *link)
{
	(void)link;
	fk.seen = atomic_load(&fk.conn);
	return fk.seen;
}

static void fk_reset(void *link)
{
	(void)link;
}

static bool fk_reads(void *link, const char *feature)
{
	(void)link;
	if (!strcmp(feature, FG_FEATURE_INTERN))
		return atomic_load(&fk.intern_feature);
	return !strcmp(feature, FG_FEATURE_TABLES);
}

static int fk_wanted(void *link, uint64_t token)
{
	(void)link;
	(void)token;
	return atomic_load(&fk.want) ? 1 : 0;
}

static const struct link_ops fk_ops = {
	.send = fk_send,
	.state = fk_state,
	.reset = fk_reset,
	.reads = fk_reads,
	.wanted = fk_wanted,
};

static void nap_us(unsigned us)
{
	struct timespec ts = { 0, (long)us * 1000 };

	nanosleep(&ts, NULL);
}

/* The collector: connects, wants the tables, stops wanting them, goes away, comes back. */
static void *collector_main(void *arg)
{
	uint64_t id = 100;

	(void)arg;
	while (!atomic_load(&fk.stop)) {
		atomic_store(&fk.intern_feature, id % 3 != 0);
		atomic_store(&fk.conn, ++id);
		/* Until the sender synced this connection: every cycle exercises a snapshot. */
		while (atomic_load(&fk.synced) != id && !atomic_load(&fk.stop))
			nap_us(500);
		atomic_fetch_add(&fk.cycles, 1);
		nap_us(3000);
		atomic_store(&fk.want, true);
		nap_us(5000);
		atomic_store(&fk.want, false);
		nap_us(2000);
		atomic_store(&fk.want, true);
		nap_us(4000);
		if (id % 2)
			atomic_store(&fk.conn, 0); /* gone for a moment */
		nap_us(1000);
	}
	return NULL;
}

/* ---- the callback threads -------------------------------------------------------------------- */

struct worker {
	unsigned idx;
	uint32_t seed;
	/* The state this thread left each of its slots in: 0 none/unloaded, else method or 9. */
	unsigned state[SLOTS];
};

static uint32_t rnd(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static void *callbacks_main(void *arg)
{
	struct worker *w = arg;

	/* At least EVENTS, and on until the collector came and went MIN_CYCLES times. */
	for (unsigned i = 0; i < EVENTS || atomic_load(&fk.cycles) < MIN_CYCLES; i++) {
		unsigned slot = rnd(&w->seed) % SLOTS, what = rnd(&w->seed) % 10;
		uint64_t addr = slot_addr(w->idx, slot);

		if (what < 6) {
			unsigned m = 1 + rnd(&w->seed) % 4;

			code_load(addr, m, 0);
			w->state[slot] = m;
		} else if (what < 9) {
			events_code_unload(ag.q, (const void *)(uintptr_t)addr, fg_now_ns());
			w->state[slot] = 0;
		} else {
			events_dynamic_code(ag.q, "Interpreter", (const void *)(uintptr_t)addr,
					    BLOB, fg_now_ns());
			w->state[slot] = 9;
		}
		if (i % 8 == 0)
			nap_us(300); /* let the collector's changes land mid-stream */
	}
	return NULL;
}

/*
 * Until connection id has had its snapshot and then TABLES on (a hang guard with a generous
 * limit, not a check of time).
 */
static void wait_tables_on(uint64_t id)
{
	for (int i = 0; i < WAIT_LIMIT_S * 1000; i++) {
		if (atomic_load(&fk.tables_on) == id)
			return;
		nap_us(1000);
	}
	fail_msg("connection %llu had no TABLES on after its snapshot within %d s",
		 (unsigned long long)id, WAIT_LIMIT_S);
}

static void test_callbacks_sender_and_tables_worker_together(void **state)
{
	struct sender_hello hello = { .pid = 4242, .jvm_version = "17", .agent_version = "t" };
	struct tables_ops tops = { generate, announce, NULL, NULL, NULL };
	struct worker w[THREADS];
	pthread_t th[THREADS], coll;
	struct sender_stats st;
	struct tables_stats ts;
	const uint64_t last = 1u << 30;

	(void)state;
	fk.ids = calloc(MAX_IDS, sizeof(*fk.ids));
	assert_non_null(fk.ids);
	ag.jvmti = fake_jvmti();
	ag.q = queue_new(64u << 20);
	ag.names = intern_new(4u << 20);
	ag.lines = codelines_new(4u << 20);
	assert_non_null(ag.q);
	assert_non_null(ag.names);
	assert_non_null(ag.lines);
	assert_int_equal(tables_init(&ag.tabs, &tops), 0);
	hello.flags = FGP_HELLO_TABLES_ON_DEMAND;
	ag.s = sender_new(ag.q, 64u << 20, &hello, &fk_ops, NULL);
	assert_non_null(ag.s);
	sender_set_intern(ag.s, ag.names);
	sender_on_want(ag.s, on_want, NULL);
	assert_int_equal(sender_start(ag.s), 0);

	for (unsigned i = 0; i < STABLE; i++)
		code_load(stable_addr(i), 1 + i % 4, 0);
	assert_int_equal(pthread_create(&coll, NULL, collector_main, NULL), 0);
	for (unsigned k = 0; k < THREADS; k++) {
		memset(&w[k], 0, sizeof(w[k]));
		w[k].idx = k;
		w[k].seed = 0x9e3779b9u * (k + 1);
		assert_int_equal(pthread_create(&th[k], NULL, callbacks_main, &w[k]), 0);
	}
	for (unsigned k = 0; k < THREADS; k++)
		assert_int_equal(pthread_join(th[k], NULL), 0);
	atomic_store(&fk.stop, true);
	assert_int_equal(pthread_join(coll, NULL), 0);

	/* A last collector: reads interned names and wants the tables. */
	atomic_store(&fk.intern_feature, true);
	atomic_store(&fk.want, true);
	atomic_store(&fk.conn, last);
	queue_kick(ag.q);
	wait_tables_on(last);
	assert_int_equal(sender_stop(ag.s, 10000), 0);
	assert_int_equal(tables_stop(&ag.tabs, 10000), 0);

	/* Nothing dropped; the last snapshot is exactly the live code, with its names. */
	sender_get_stats(ag.s, &st);
	assert_int_equal(st.queue_dropped, 0);
	assert_int_equal(st.table_full, 0);
	assert_true(st.connections >= 2);
	assert_int_equal(fk.cur, last);
	assert_true(fk.log.snap_end);
	for (unsigned i = 0; i < STABLE; i++) {
		assert_non_null(fk.snap_name[0][i]);
		assert_string_equal(fk.snap_name[0][i], method_names[1 + i % 4]);
	}
	for (unsigned k = 0; k < THREADS; k++)
		for (unsigned sl = 0; sl < SLOTS; sl++) {
			const char *got = fk.snap_name[k + 1][sl];
			unsigned want = w[k].state[sl];

			if (want == 0) {
				if (got)
					fail_msg("thread %u slot %u: unloaded, but replayed as %s",
						 k, sl, got);
			} else if (want == 9) {
				assert_true(got && fk.snap_dyn[k + 1][sl]);
			} else {
				if (!got || fk.snap_dyn[k + 1][sl] ||
				    strcmp(got, method_names[want]))
					fail_msg("thread %u slot %u: want %s, replayed as %s", k,
						 sl, method_names[want], got ? got : "nothing");
			}
		}
	tables_get_stats(&ag.tabs, &ts);
	assert_true(ts.rounds >= 1);
	assert_true(atomic_load(&ag.rounds_again) >= STABLE);
	assert_int_equal(fake_live_strings, 0); /* every JVMTI string given back, on every thread */
	assert_true(st.connections >= MIN_CYCLES);
	print_message("stress: %u callback threads x %u+ events, %llu connections, %llu records, "
		      "%llu tables rounds\n",
		      THREADS, EVENTS, (unsigned long long)st.connections,
		      (unsigned long long)fk.records, (unsigned long long)ts.rounds);

	sender_free(ag.s);
	tables_fini(&ag.tabs);
	codelines_free(ag.lines);
	intern_free(ag.names);
	queue_free(ag.q);
	free(fk.ids);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_callbacks_sender_and_tables_worker_together),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
