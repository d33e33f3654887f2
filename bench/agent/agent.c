// SPDX-License-Identifier: MIT
/*
 * agent.c (bench) - the agent's costs without a JVM, each against a baseline measured here:
 *
 *   callback path   events_code_load() with a fake JVMTI (name formatting, inline table,
 *                   encoding, queue push) vs. the design we rejected: one nng send per event
 *                   from the callback (the baseline, measured against a live pull0 socket);
 *   table           livecode_put() at N live entries;
 *   replay          sender sync of N methods over nng ipc to a receiving thread that decodes
 *                   every record: time per method, and time until the receiver has them all;
 *   tables          a compile's inline table and line table filled in one walk over its pcs
 *                   (the callback's way) vs. a walk for each (the baseline), over 3000
 *                   different compiles of 50..350 pcs (cold, as HotSpot hands them over);
 *   interning       intern_add/intern_find (names/intern.c: try-locked index, names read
 *                   without a lock) vs. the collector's htab (collector/lib/htab.c) behind the
 *                   same try-lock, on the same N jmethodID-like keys: ns per insert and find.
 *
 *   bench_agent [N]     (default 20000)
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pipeline0/pull.h>
#include <nng/protocol/pipeline0/push.h>

#include <jvmti.h>
#include <jvmticmlr.h>

#include "codelines.h"
#include "events.h"
#include "fgclock.h"
#include "fgproto.h"
#include "htab.h"
#include "intern.h"
#include "link.h"
#include "livecode.h"
#include "methodset.h"
#include "queue.h"
#include "sender.h"
#include "test_agent_fakejvmti.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double last_p99;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void stats(const char *what, uint64_t *v, size_t n, double *median_out)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	printf("%-44s median %7.2f us  p99 %7.2f us  (n=%zu)\n", what, v[n / 2] / 1000.0,
	       v[n * 99 / 100] / 1000.0, n);
	if (median_out)
		*median_out = (double)v[n / 2];
	last_p99 = (double)v[n * 99 / 100];
}

/* A CompiledMethodLoad-like event: 12 pcs, chains of depth 1..3 over 3 methods. */
static jmethodID c1[1] = { FAKE_M(1) }, c2[2] = { FAKE_M(2), FAKE_M(1) },
		 c3[3] = { FAKE_M(3), FAKE_M(2), FAKE_M(1) };
static PCStackInfo pcs[12];
static jvmtiCompiledMethodLoadInlineRecord inl;

static void make_event(uintptr_t base)
{
	for (int i = 0; i < 12; i++) {
		jmethodID *c = i % 3 == 0 ? c1 : i % 3 == 1 ? c2 : c3;

		pcs[i] = (PCStackInfo){ (void *)(base + 0x20 + (uintptr_t)i * 0x20), 1 + i % 3, c,
					NULL };
	}
	inl = (jvmtiCompiledMethodLoadInlineRecord){ { JVMTI_CMLR_INLINE_INFO, 1, 0, NULL },
						     12,
						     pcs };
}

/* ---- a pull0 receiver thread that decodes and counts records ---------------------------- */

struct recv {
	nng_socket s;
	atomic_ulong records, snapshot_end;
	atomic_bool quit;
	pthread_t th;
};

static void *recv_main(void *arg)
{
	struct recv *r = arg;

	while (!atomic_load(&r->quit)) {
		nng_msg *m;
		struct fgp_reader rd;
		struct fgp_record rec;

		if (nng_recvmsg(r->s, &m, 0) != 0)
			continue;
		if (fgp_reader_init(&rd, nng_msg_body(m), nng_msg_len(m)) == 0)
			while (fgp_next(&rd, &rec) == 1) {
				atomic_fetch_add(&r->records, 1);
				if (rec.type == FGP_SNAPSHOT_END)
					atomic_fetch_add(&r->snapshot_end, 1);
			}
		nng_msg_free(m);
	}
	return NULL;
}

static int recv_start(struct recv *r, const char *url)
{
	int rv;

	memset(r, 0, sizeof(*r));
	if ((rv = nng_pull0_open(&r->s)) != 0 ||
	    (rv = nng_socket_set_ms(r->s, NNG_OPT_RECVTIMEO, 50)) != 0 ||
	    (rv = nng_socket_set_size(r->s, NNG_OPT_RECVMAXSZ, FGP_MAX_MSG)) != 0 ||
	    (rv = nng_listen(r->s, url, NULL, 0)) != 0) {
		fprintf(stderr, "bench_agent: listen %s: %s\n", url, nng_strerror(rv));
		return -1;
	}
	return pthread_create(&r->th, NULL, recv_main, r);
}

static void recv_stop(struct recv *r)
{
	atomic_store(&r->quit, true);
	pthread_join(r->th, NULL);
	nng_close(r->s);
}

/* ---- benches ----------------------------------------------------------------------------- */

/* One load as the callback makes it (methodset_of included), without lines or frame. */
static void bench_load(struct queue *q, struct intern *st, jvmtiEnv *jvmti, jmethodID m, jint size,
		       const void *addr, const void *compile_info, uint64_t ts)
{
	struct methodset set;
	struct events_load_ctx ctx = { .q = q,
				       .names = st,
				       .jvmti = jvmti,
				       .method = m,
				       .code_size = size,
				       .code_addr = addr,
				       .set = &set,
				       .ts = ts };

	methodset_of(&set, compile_info);
	events_code_load(&ctx);
	methodset_fini(&set);
}

static void bench_callback(const char *url, size_t n)
{
	struct queue *q = queue_new(256u << 20);
	jvmtiEnv *jvmti = fake_jvmti();
	uint64_t *t = malloc(n * sizeof(*t));
	struct recv r;
	nng_socket push;
	double ours, naive, ours_p99;
	struct qentry *e;

	make_event(0x7f0000000000);
	for (size_t i = 0; i < n; i++) {
		uint64_t t0 = fg_now_ns();

		bench_load(q, NULL, jvmti, FAKE_M(1 + i % 4), 0x200, (void *)0x7f0000000000, &inl,
			   t0);
		t[i] = fg_now_ns() - t0;
	}
	stats("callback: resolve+encode+queue (ours)", t, n, &ours);
	ours_p99 = last_p99;
	/* The same events with names interned (the agent's default): JVMTI only on first sight. */
	{
		struct queue *qi = queue_new(256u << 20);
		struct intern *st = intern_new(64u << 20);
		double interned;

		for (size_t i = 0; i < n; i++) {
			uint64_t t0 = fg_now_ns();

			bench_load(qi, st, jvmti, FAKE_M(1 + i % 4), 0x200, (void *)0x7f0000000000,
				   &inl, t0);
			t[i] = fg_now_ns() - t0;
		}
		stats("callback: same, names interned (CODE_LOAD_IDS)", t, n, &interned);
		printf("  interning: %.2fx the time per event\n", interned / ours);
		queue_free(qi);
		intern_free(st);
	}

	/*
	 * Baseline: the naive agent, which sends each event from the callback. A non-blocking send
	 * loses events as soon as nng's buffer is full, so the baseline blocks until nng takes the
	 * message: its time is what a JVM thread would wait.
	 */
	if (recv_start(&r, url) != 0 || nng_push0_open(&push) != 0 ||
	    nng_socket_set_int(push, NNG_OPT_SENDBUF, 16) != 0 ||
	    nng_dial(push, url, NULL, 0) != 0) {
		fprintf(stderr, "bench_agent: cannot set up the nng baseline\n");
		exit(1);
	}
	size_t sent = 0;

	for (size_t i = 0; i < n; i++) {
		uint8_t msg[4096];
		uint64_t t0 = fg_now_ns();

		e = queue_pop(q);
		fgp_encode_msg_header(msg, sizeof(msg));
		memcpy(msg + 8, e->data, e->len);
		sent += nng_send(push, msg, 8 + e->len, 0) == 0;
		t[i] = fg_now_ns() - t0;
		queue_release(q, e);
	}
	stats("callback baseline: blocking nng send/event", t, n, &naive);
	printf("%-44s median %.2f  p99 %.1f  (baseline: send only, no encode; %zu of %zu sent)\n",
	       "  ratio baseline/ours:", naive / ours, last_p99 / ours_p99, sent, n);
	nng_close(push);
	recv_stop(&r);
	queue_free(q);
	free(t);
}

static void bench_table(size_t n)
{
	struct livecode *tb = livecode_new(1u << 30);
	uint8_t rec[300] = { 0 };
	uint64_t *t = malloc(n * sizeof(*t));
	uint64_t x = 88172645463325252ull;

	for (size_t i = 0; i < n; i++) {
		uint64_t t0;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		t0 = fg_now_ns();
		livecode_put(tb, (x % (240u << 20)) & ~0x3full, 0x200, rec, sizeof(rec));
		t[i] = fg_now_ns() - t0;
	}
	printf("table: %zu live entries after %zu random inserts\n", livecode_count(tb), n);
	stats("livecode_put (sender thread)", t, n, NULL);
	livecode_free(tb);
	free(t);
}

static void bench_replay(const char *url, size_t n)
{
	struct queue *q = queue_new(512u << 20);
	jvmtiEnv *jvmti = fake_jvmti();
	struct sender_hello h = {
		.pid = 1, .jvm_version = "bench", .agent_version = "bench", .service = "bench"
	};
	struct link *l;
	struct sender *s;
	struct recv r;
	uint64_t t0, t_sent, t_recv;

	/* The agent runs while no collector listens: the table fills, nothing is sent. */
	if (link_open(&l, url + strlen("ipc://"), NULL, NULL, NULL) != 0) {
		fprintf(stderr, "bench_agent: cannot open the link\n");
		exit(1);
	}
	s = sender_new(q, 1u << 30, &h, &link_nng_ops, l);
	for (size_t i = 0; i < n; i++) {
		uintptr_t base = 0x7f0000000000 + i * 0x400;

		make_event(base);
		bench_load(q, NULL, jvmti, FAKE_M(1 + i % 4), 0x200, (void *)base, &inl, i);
	}
	sender_poll(s, 1000);
	/* Then the collector starts: time the replay of the whole table to it. */
	if (recv_start(&r, url) != 0) {
		fprintf(stderr, "bench_agent: cannot start the receiver\n");
		exit(1);
	}
	while (link_nng_ops.state(l) == 0)
		usleep(1000);
	t0 = fg_now_ns();
	sender_poll(s, 1000);
	t_sent = fg_now_ns() - t0;
	while (atomic_load(&r.snapshot_end) == 0 && fg_now_ns() - t0 < 20000000000ull)
		usleep(100);
	t_recv = fg_now_ns() - t0;
	printf("replay of %zu methods (%.1f MB table): sent in %.1f ms = %.2f us/method; received "
	       "and decoded by %.1f ms = %.2f us/method\n",
	       livecode_count(sender_livecode(s)), livecode_used(sender_livecode(s)) / 1e6,
	       t_sent / 1e6, t_sent / 1e3 / (double)n, t_recv / 1e6, t_recv / 1e3 / (double)n);
	sender_free(s);
	link_close(l);
	recv_stop(&r);
	queue_free(q);
}

/* ---- inline and line tables: one walk over a compile's pcs or two ------------------------- */

#define TABLE_COMPILES 3000

/* A compile of 50..350 pcs, chains of depth 1..5 over methods 1, 2, 4, 5 (all with lines). */
static jvmtiCompiledMethodLoadInlineRecord *table_compile(void)
{
	static const int ids[4] = { 1, 2, 4, 5 };
	jvmtiCompiledMethodLoadInlineRecord *r = calloc(1, sizeof(*r));
	int n = 50 + rand() % 300;
	PCStackInfo *p = calloc((size_t)n, sizeof(*p));

	for (int i = 0; i < n; i++) {
		int d = 1 + rand() % 5;

		p[i].pc = (void *)(uintptr_t)(0x10000 + i * 8);
		p[i].numstackframes = d;
		p[i].methods = calloc((size_t)d, sizeof(jmethodID));
		p[i].bcis = calloc((size_t)d, sizeof(jint));
		for (int k = 0; k < d; k++) {
			p[i].methods[k] = FAKE_M(ids[(k + i / 7) % 4]);
			p[i].bcis[k] = rand() % 60;
		}
	}
	r->header.kind = JVMTI_CMLR_INLINE_INFO;
	r->numpcs = n;
	r->pcinfo = p;
	return r;
}

static double table_round(jvmtiCompiledMethodLoadInlineRecord **recs, bool one_walk,
			  struct intern *st, struct codelines *cl)
{
	struct queue *q = queue_new(1u << 30);
	jvmtiEnv *jvmti = fake_jvmti();
	void *addr = (void *)0x10000;
	uint64_t t0 = cpu_ns();
	struct qentry *e;

	for (int i = 0; i < TABLE_COMPILES; i++) {
		struct methodset set;

		struct events_load_ctx ctx = { .q = q,
					       .names = st,
					       .lines = one_walk ? cl : NULL,
					       .jvmti = jvmti,
					       .method = FAKE_M(1),
					       .code_size = 0x4000,
					       .code_addr = addr,
					       .set = &set,
					       .ts = 1 };

		methodset_of(&set, recs[i]);
		events_code_load(&ctx);
		if (!one_walk)
			codelines_push_set(cl, q, jvmti, 0x4000, addr, &set, 1);
		methodset_fini(&set);
		while ((e = queue_pop(q)))
			queue_release(q, e);
	}
	queue_free(q);
	return (double)(cpu_ns() - t0) / TABLE_COMPILES / 1000.0;
}

static void bench_tables(void)
{
	jvmtiCompiledMethodLoadInlineRecord **recs = calloc(TABLE_COMPILES, sizeof(*recs));
	struct intern *st = intern_new(64u << 20);
	struct codelines *cl = codelines_new(64u << 20);
	double one[5], two[5], r[5];

	srand(1);
	for (int i = 0; i < 64; i++)
		fake_t5[i] = (jvmtiLineNumberEntry){ i, 100 + i };
	fake_n5 = 64;
	for (int i = 0; i < TABLE_COMPILES; i++)
		recs[i] = table_compile();
	(void)table_round(recs, true, st, cl); /* names and line tables cached, as in a storm */
	for (int k = 0; k < 5; k++) {
		two[k] = table_round(recs, false, st, cl);
		one[k] = table_round(recs, true, st, cl);
		r[k] = one[k] / two[k];
	}
	qsort(one, 5, sizeof(one[0]), cmp_double);
	qsort(two, 5, sizeof(two[0]), cmp_double);
	qsort(r, 5, sizeof(r[0]), cmp_double);
	printf("inline + line tables, one walk over the pcs: %.2f us per compile; a walk each "
	       "(baseline): %.2f us; ratio %.3f (median of 5 interleaved rounds, %.3f..%.3f)\n",
	       one[2], two[2], r[2], r[0], r[4]);
	for (int i = 0; i < TABLE_COMPILES; i++) {
		for (jint k = 0; k < recs[i]->numpcs; k++) {
			free(recs[i]->pcinfo[k].methods);
			free(recs[i]->pcinfo[k].bcis);
		}
		free(recs[i]->pcinfo);
		free(recs[i]);
	}
	free(recs);
	codelines_free(cl);
	intern_free(st);
}

/* ---- interning vs. the collector's htab ------------------------------------------------------ */

#define INTERN_FINDS 8 /* finds per key: a storm inlines the same methods again and again */

#define INTERN_ROUNDS 5

static double intern_ns(uint64_t t0, size_t ops)
{
	return (double)(fg_now_ns() - t0) / (double)ops;
}

static int dbl_cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* One round: ns per intern add, intern find, htab put, htab get (into out[0..3]). */
static uint64_t intern_round(const void **keys, size_t n, double *out)
{
	struct intern *in = intern_new(1u << 30);
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	struct htab h;
	uint64_t t0, sum = 0;

	t0 = fg_now_ns();
	for (size_t i = 0; i < n; i++)
		sum += intern_add(in, keys[i], "a.B::method", 11);
	out[0] = intern_ns(t0, n);
	t0 = fg_now_ns();
	for (int r = 0; r < INTERN_FINDS; r++)
		for (size_t i = 0; i < n; i++)
			sum += intern_find(in, keys[i]);
	out[1] = intern_ns(t0, n * INTERN_FINDS);
	htab_init(&h);
	t0 = fg_now_ns();
	for (size_t i = 0; i < n; i++) {
		if (pthread_mutex_trylock(&mu) != 0)
			continue;
		if (htab_put(&h, (uint64_t)(uintptr_t)keys[i], i + 1) == 0)
			sum++;
		pthread_mutex_unlock(&mu);
	}
	out[2] = intern_ns(t0, n);
	t0 = fg_now_ns();
	for (int r = 0; r < INTERN_FINDS; r++)
		for (size_t i = 0; i < n; i++) {
			uint64_t *v;

			if (pthread_mutex_trylock(&mu) != 0)
				continue;
			v = htab_get(&h, (uint64_t)(uintptr_t)keys[i]);
			sum += v ? *v : 0;
			pthread_mutex_unlock(&mu);
		}
	out[3] = intern_ns(t0, n * INTERN_FINDS);
	htab_fini(&h);
	intern_free(in);
	return sum;
}

static void bench_intern(size_t n)
{
	const void **keys = malloc(n * sizeof(*keys));
	double v[4][INTERN_ROUNDS], one[4], med[4];
	uint64_t sum = 0;

	/* jmethodIDs are pointers to 8-byte slots in blocks the VM allocates per class. */
	for (size_t i = 0; i < n; i++)
		keys[i] = (const void *)(uintptr_t)(0x7f1200000000ull + (i / 64) * 4096 +
						    (i % 64) * 8);
	for (int r = 0; r < INTERN_ROUNDS; r++) {
		sum += intern_round(keys, n, one);
		for (int k = 0; k < 4; k++)
			v[k][r] = one[k];
	}
	for (int k = 0; k < 4; k++) {
		qsort(v[k], INTERN_ROUNDS, sizeof(double), dbl_cmp);
		med[k] = v[k][INTERN_ROUNDS / 2];
	}
	printf("interning, %zu keys (median of %d rounds): intern add %.1f ns, find %.1f ns; htab "
	       "put %.1f ns, get %.1f ns (same try-lock; check %llu)\n",
	       n, INTERN_ROUNDS, med[0], med[1], med[2], med[3], (unsigned long long)(sum & 1));
	free(keys);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
	char url[128];

	if (n < 100)
		n = 100;
	snprintf(url, sizeof(url), "ipc:///tmp/fgbench-agent-%d.sock", (int)getpid());
	bench_callback(url, n);
	bench_table(n);
	snprintf(url, sizeof(url), "ipc:///tmp/fgbench-agent-replay-%d.sock", (int)getpid());
	bench_replay(url, n);
	unlink(url + 6);
	bench_tables();
	bench_intern(n * 10);
	snprintf(url, sizeof(url), "/tmp/fgbench-agent-%d.sock", (int)getpid());
	unlink(url);
	return 0;
}
