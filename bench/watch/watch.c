// SPDX-License-Identifier: MIT
/*
 * bench/watch/watch.c - figures for the watch stage, all in one process over a real nng socket:
 *   1. latency from a JIT event (the moment the agent's callback queues its record) to its map
 *      line being visible (inotify watcher), median and p99, at a steady rate and with
 *      10k-method tables, through the agent's own queue, sender thread (with its batching)
 *      and nng link;
 *   2. replay ingest cost per method (codetab_apply of a 10k-method snapshot with inline info);
 *   3. codetab_lookup throughput (baseline: the same number of binary searches on a sorted
 *      array of the live set);
 *   4. table memory per JVM for 10k methods.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pipeline0/push.h>

#include "link.h"
#include "queue.h"
#include "sender.h"

#include "codetab.h"
#include "fgclock.h"
#include "fgproto.h"
#include "jvmset.h"
#include "perfmap.h"
#include "receive.h"

#define N_EVENTS 600
#define BASE_METHODS 10000

static char dir[64], sock[96], mappath[128];
static atomic_int stop;
static uint64_t sent_ts[N_EVENTS], seen_ts[N_EVENTS];

static void *collector(void *arg)
{
	struct receive *rx = arg;
	struct perfmap_dir *maps;
	struct jvmset *set;
	struct jvmset_opts jo = { 0 };

	perfmap_dir_open(dir, &maps);
	jo.maps = maps;
	jvmset_new(&jo, &set);
	while (!atomic_load(&stop)) {
		struct pollfd p[2];
		uint64_t t = fg_now_ns(), next = jvmset_tick(set, t);
		int to = next > t ? (int)((next - t + 999999) / 1000000) : 0;

		receive_pollfds(rx, p);
		poll(p, 2, to > 50 ? 50 : to);
		jvmset_pump(set, rx, fg_now_ns());
	}
	jvmset_free(set);
	perfmap_dir_close(maps);
	return NULL;
}

static void *watcher(void *arg)
{
	int in = inotify_init1(IN_NONBLOCK);
	static char text[4 << 20];
	(void)arg;

	/* Compactions rename a new map into place; appends modify it. */
	inotify_add_watch(in, dir, IN_MOVED_TO | IN_MODIFY);
	while (!atomic_load(&stop)) {
		struct pollfd p = { .fd = in, .events = POLLIN };
		char ev[4096];

		if (poll(&p, 1, 20) <= 0)
			continue;
		while (read(in, ev, sizeof(ev)) > 0)
			;
		uint64_t t = fg_now_ns();
		FILE *f = fopen(mappath, "r");

		if (!f)
			continue;
		size_t n = fread(text, 1, sizeof(text) - 1, f);

		fclose(f);
		text[n] = '\0';
		for (char *s = strstr(text, "Ev::m"); s; s = strstr(s + 1, "Ev::m")) {
			int i = atoi(s + 5);

			if (i >= 0 && i < N_EVENTS && !seen_ts[i])
				seen_ts[i] = t;
		}
	}
	close(in);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* What a CompiledMethodLoad callback does: encode the record into a queue entry and push it. */
static void push_loads(struct queue *q, int from, int to, const char *prefix, uint64_t base)
{
	char name[64];

	for (int i = from; i < to; i++) {
		struct fgp_code_load_in in = { .addr = base + (uint64_t)i * 0x400,
					       .size = 0x300,
					       .ts = fg_now_ns() };
		struct qentry *e;

		snprintf(name, sizeof(name), "%s%d", prefix, i);
		in.name = (struct fgp_str){ name, (uint16_t)strlen(name) };
		e = queue_reserve(q, fgp_code_load_size(&in));
		if (!e)
			continue;
		e->len = (uint32_t)fgp_encode_code_load(e->data, e->len, &in);
		queue_push(q, e);
	}
}

static void kick(void *arg)
{
	queue_kick(arg);
}

static void latency(int gap_us, int n_events)
{
	struct receive_opts ro = { .allow_self_peer = 1, .watchdog_ms = 1000 };
	struct receive *rx;
	pthread_t ct, wt;
	struct sender_hello h = { .pid = (uint32_t)getpid(),
				  .jvm_version = "bench",
				  .agent_version = "b" };
	struct queue *q = queue_new(8u << 20);
	struct sender *snd;
	struct link *l;
	uint64_t lat[N_EVENTS];
	int got = 0;

	memset(seen_ts, 0, sizeof(seen_ts));
	ro.path = sock;
	if (receive_open(&ro, &rx) != 0) {
		fprintf(stderr, "bench: cannot listen on %s\n", sock);
		exit(1);
	}
	atomic_store(&stop, 0);
	pthread_create(&ct, NULL, collector, rx);
	pthread_create(&wt, NULL, watcher, NULL);
	/* A realistic JVM: 10k methods compiled before the collector (the replay), then steady
	 * compiles. */
	push_loads(q, 0, BASE_METHODS, "Base::m", 0x7f0000000000ull);
	if (!q || link_open(&l, sock, NULL, kick, q) != 0 ||
	    !(snd = sender_new(q, 64u << 20, &h, &link_nng_ops, l)) || sender_start(snd) != 0) {
		fprintf(stderr, "bench: cannot start the agent's sender for %s\n", sock);
		exit(1);
	}
	usleep(500000);
	for (int i = 0; i < n_events; i++) {
		sent_ts[i] = fg_now_ns();
		push_loads(q, i, i + 1, "Ev::m", 0x7f8000000000ull);
		usleep((useconds_t)gap_us);
	}
	usleep(200000);
	sender_stop(snd, 2000);
	atomic_store(&stop, 1);
	pthread_join(ct, NULL);
	pthread_join(wt, NULL);
	link_close(l);
	sender_free(snd);
	queue_free(q);
	receive_close(rx);
	for (int i = 0; i < n_events; i++) {
		if (seen_ts[i])
			lat[got++] = seen_ts[i] - sent_ts[i];
		if (getenv("FG_BENCH_TRACE") && seen_ts[i] && seen_ts[i] - sent_ts[i] > 10000000)
			fprintf(stderr, "event %d: %.2f ms\n", i, (seen_ts[i] - sent_ts[i]) / 1e6);
	}
	qsort(lat, (size_t)got, sizeof(lat[0]), cmp_u64);
	printf("map latency, %d events at 1 per %d us over a %d-method table: seen %d, "
	       "median %.2f ms, p99 %.2f ms, max %.2f ms\n",
	       n_events, gap_us, BASE_METHODS, got, got ? lat[got / 2] / 1e6 : 0,
	       got ? lat[got * 99 / 100] / 1e6 : 0, got ? lat[got - 1] / 1e6 : 0);
	unlink(mappath);
}

static void ingest_and_lookup(void)
{
	static const struct fgp_str methods[] = { { "pkg.Outer::run", 14 },
						  { "pkg.Mid::step", 13 },
						  { "pkg.Leaf::calc", 14 } };
	static const uint16_t c0[] = { 0 }, c1[] = { 1, 0 }, c2[] = { 2, 1, 0 };
	struct fgp_pc_in pcs[24];
	static uint8_t buf[1 << 12];
	struct codetab *t = codetab_new(NULL);
	struct codetab_stats st;
	char name[64];
	uint64_t t0, t1, sum = 0;

	for (int k = 0; k < 24; k++)
		pcs[k] = (struct fgp_pc_in){ (uint32_t)(k + 1) * 0x20, (uint16_t)(k % 3 + 1),
					     k % 3 == 0	  ? c0
					     : k % 3 == 1 ? c1
							  : c2 };
	t0 = fg_now_ns();
	for (int i = 0; i < BASE_METHODS; i++) {
		struct fgp_code_load_in in = { .addr = 0x7f0000000000ull +
						       (uint64_t)(i * 7919 % BASE_METHODS) * 0x400,
					       .size = 0x300,
					       .ts = (uint64_t)i + 1,
					       .flags = FGP_REC_REPLAY,
					       .n_methods = 3,
					       .methods = methods,
					       .n_pcs = 24,
					       .pcs = pcs };
		struct fgp_reader r;
		struct fgp_record rec;
		size_t n = (size_t)fgp_encode_msg_header(buf, sizeof(buf));

		snprintf(name, sizeof(name), "pkg.Class%d::method", i);
		in.name = (struct fgp_str){ name, (uint16_t)strlen(name) };
		n += (size_t)fgp_encode_code_load(buf + n, sizeof(buf) - n, &in);
		fgp_reader_init(&r, buf, n);
		fgp_next(&r, &rec);
		codetab_apply(t, &rec);
	}
	t1 = fg_now_ns();
	codetab_stats(t, &st);
	printf("replay ingest (decode + codetab_apply), %d methods with 24-pc inline tables: "
	       "%.0f ns per method\n",
	       BASE_METHODS, (double)(t1 - t0) / BASE_METHODS);
	printf("table memory for %d methods with inline tables: %.1f MiB (%.0f bytes/method)\n",
	       BASE_METHODS, st.bytes / 1048576.0, (double)st.bytes / BASE_METHODS);
	/* Lookups vs a plain binary search over the live set. */
	enum { Q = 2000000 };
	uint64_t *starts = malloc(BASE_METHODS * sizeof(*starts));

	for (size_t i = 0; i < codetab_live_count(t); i++)
		starts[i] = codetab_live_at(t, i)->addr;
	srand(1);
	t0 = fg_now_ns();
	for (int q = 0; q < Q; q++) {
		uint64_t a = 0x7f0000000000ull + (uint64_t)(rand() % BASE_METHODS) * 0x400 + 0x10;
		const struct codeblob *b = codetab_lookup(t, a, (uint64_t)BASE_METHODS + 5);

		sum += b ? b->size : 0;
	}
	t1 = fg_now_ns();
	double ours = (double)(t1 - t0) / Q;

	srand(1);
	t0 = fg_now_ns();
	for (int q = 0; q < Q; q++) {
		uint64_t a = 0x7f0000000000ull + (uint64_t)(rand() % BASE_METHODS) * 0x400 + 0x10;
		size_t lo = 0, hi = codetab_live_count(t);

		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (starts[mid] <= a)
				lo = mid + 1;
			else
				hi = mid;
		}
		sum += lo;
	}
	t1 = fg_now_ns();
	double base = (double)(t1 - t0) / Q;

	printf("codetab_lookup (addr, ts) over %d blobs: %.0f ns/lookup = %.1f M lookups/s; "
	       "baseline binary search of the live set: %.0f ns (ratio %.2f) [%llu]\n",
	       BASE_METHODS, ours, 1e3 / ours, base, ours / base, (unsigned long long)(sum & 1));
	free(starts);
	codetab_free(t);
}

int main(int argc, char **argv)
{
	/* The agent socket's sandboxed receiver: a child of this program, as of fgcollect. */
	if (argc > 1 && !strcmp(argv[1], RECEIVE_CHILD_ARG))
		return receive_child_main(argc, argv);
	strcpy(dir, "/tmp/fgbench.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	snprintf(sock, sizeof(sock), "%s/s.sock", dir);
	snprintf(mappath, sizeof(mappath), "%s/perf-%d.map", dir, getpid());
	ingest_and_lookup();
	latency(50000, 200);	 /* 20 compiles/s: a warm service, normal load */
	latency(5000, N_EVENTS); /* 200 compiles/s: a busy warm-up */
	latency(500, N_EVENTS);	 /* 2000 compiles/s: a JIT storm */
	rmdir(dir);
	return 0;
}
