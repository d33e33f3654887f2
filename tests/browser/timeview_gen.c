// SPDX-License-Identifier: MIT
/*
 * timeview_gen - a synthetic recording written as a time view page, speedscope's file or (the
 * same stacks without times) an SVG or folded stacks, for bench/render/timeview.sh and the
 * browser test of the page. The same arguments give the same recording.
 *
 *   timeview_gen OUT.html|.speedscope.json|.svg|.folded SECONDS HZ THREADS [--phases TRUTH]
 *                [--block-cols N]
 *
 * THREADS threads each sampled HZ times a second (±1 ms jitter) for SECONDS, every sample a
 * Java-like stack of depth 20-50 drawn from 300 per thread (skewed: a few hot, a long tail; the
 * 300 a call tree, see make_stacks), its frames from a pool of 3000 method names; what runs
 * drifts every 30 s.
 * --phases adds a thread "phases" whose hot method is known: Phase.a during seconds [0, 3),
 * Phase.b [3, 6), Phase.c [6, 9), Phase.d [9, 12), then again from a; each of its samples is
 * main;Phase.run;Phase.X;Phase.work (2% of them main;Phase.run;Phase.idle instead). TRUTH gets a
 * line "Phase.X START_NS END_NS" per phase (the samples' clock), as timeview_browser.py reads.
 * --block-cols N gives the page time blocks of N columns (seconds) each.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profout.h"
#include "stackagg.h"

#define POOL 3000
#define PER_THREAD 300
#define MAXD 50

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static char pool[POOL][64];

struct gstack {
	int n;
	int f[MAXD];
};

static int add(struct stackagg *a, uint32_t tid, const char *thread, uint64_t ts,
	       const char *const *names, int n)
{
	struct stackagg_nframe fr[MAXD];
	struct stackagg_named nm = {
		.tid = tid, .thread = thread, .frames = fr, .n = (size_t)n, .ts = ts
	};

	for (int i = 0; i < n; i++)
		fr[i] = (struct stackagg_nframe){ names[i], strlen(names[i]), 0 };
	return stackagg_named(a, &nm, 1, 0);
}

/*
 * Thread t's stacks, a call tree: the first from the pool; each later one shares a prefix of
 * an earlier one (a third of it or more) and goes on with frames of its own, as code that
 * calls on from the same place does.
 */
static void make_stacks(struct gstack *s, int t)
{
	for (int k = 0; k < PER_THREAD; k++) {
		int from = 2;

		s[k].n = 20 + (int)(next() % (MAXD - 20));
		s[k].f[0] = t % 7;
		s[k].f[1] = 7 + (t % 13);
		if (k > 0) {
			const struct gstack *e = &s[next() % (unsigned)k];
			int m = e->n < s[k].n ? e->n : s[k].n;

			from = m / 3 + (int)(next() % (unsigned)(m - m / 3));
			memcpy(s[k].f, e->f, (size_t)from * sizeof(int));
		}
		for (int i = from; i < s[k].n; i++)
			s[k].f[i] =
				i < 6 ? 20 + (int)(next() % 40) : 60 + (int)(next() % (POOL - 60));
	}
}

static int phases(struct stackagg *a, unsigned seconds, unsigned hz, const char *truth)
{
	static const char *const ph[] = { "Phase.a", "Phase.b", "Phase.c", "Phase.d" };
	uint64_t period = 1000000000ull / hz;
	FILE *f = fopen(truth, "w");

	if (!f)
		return -errno;
	for (unsigned k = 0; k * 3 < seconds; k++)
		fprintf(f, "%s %llu %llu\n", ph[k % 4], 1000000000ull + k * 3000000000ull,
			1000000000ull +
				(k * 3 + 3 < seconds ? k * 3 + 3 : seconds) * 1000000000ull);
	if (fclose(f) != 0)
		return -EIO;

	for (uint64_t ts = 1000000000ull; ts < 1000000000ull + seconds * 1000000000ull;
	     ts += period) {
		unsigned sec = (unsigned)((ts - 1000000000ull) / 1000000000ull);
		const char *st[4] = { "main", "Phase.run", ph[(sec / 3) % 4], "Phase.work" };
		int rv;

		if (next() % 100 < 2) {
			st[2] = "Phase.idle";
			rv = add(a, 99999, "phases", ts, st, 3);
		} else {
			rv = add(a, 99999, "phases", ts, st, 4);
		}
		if (rv)
			return rv;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct stackagg_opts o = { .timeline = true };
	struct stackagg *a = stackagg_new(&o, NULL);
	struct profout p = { .title = "CPU: synthetic recording", .subtitle = "timeview_gen" };
	struct gstack *stk;
	unsigned seconds, hz, threads;
	const char *truth = NULL;
	int rv = 0;

	if (argc < 5 || !a) {
		fprintf(stderr, "usage: timeview_gen OUT SECONDS HZ THREADS [--phases TRUTH] "
				"[--block-cols N]\n");
		return 64;
	}
	for (int i = 5; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--phases"))
			truth = argv[i + 1];
		else if (!strcmp(argv[i], "--block-cols"))
			p.block_cols = (size_t)atoi(argv[i + 1]);
		else
			return 64;
	}
	if (profout_format(argv[1], &p.fmt) != 0) {
		fprintf(stderr, "timeview_gen: %s: give .html, .speedscope.json, .svg or .folded\n",
			argv[1]);
		return 64;
	}
	seconds = (unsigned)atoi(argv[2]);
	hz = (unsigned)atoi(argv[3]);
	threads = (unsigned)atoi(argv[4]);
	p.freq = hz;
	if (!hz || !seconds || threads > 10000)
		return 64;
	for (int i = 0; i < POOL; i++)
		snprintf(pool[i], sizeof(pool[i]), "com.example.svc%d.Class%d.method%d", i % 17,
			 i % 211, i);
	stk = calloc((size_t)PER_THREAD * (threads ? threads : 1), sizeof(*stk));
	if (!stk)
		return 1;
	for (unsigned t = 0; t < threads; t++)
		make_stacks(&stk[(size_t)t * PER_THREAD], (int)t);
	for (unsigned t = 0; t < threads && rv == 0; t++) {
		char name[32];
		uint64_t period = 1000000000ull / hz;

		snprintf(name, sizeof(name), "worker-%u", t);
		for (uint64_t ts = 1000000000ull + t * 7919ull;
		     ts < 1000000000ull + seconds * 1000000000ull && rv == 0; ts += period) {
			/* skewed pick: min of two uniform draws, shifted every 30 s */
			unsigned r1 = (unsigned)(next() % PER_THREAD),
				 r2 = (unsigned)(next() % PER_THREAD);
			unsigned k = (r1 < r2 ? r1 : r2);
			unsigned drift = (unsigned)((ts / 30000000000ull) * 37);
			const struct gstack *g =
				&stk[(size_t)t * PER_THREAD + (k + drift) % PER_THREAD];
			const char *names[MAXD];
			uint64_t at = ts + next() % 2000000ull - 1000000ull;

			for (int i = 0; i < g->n; i++)
				names[i] = pool[g->f[i]];
			rv = add(a, 1000 + t, name, at, names, g->n);
		}
	}
	if (rv == 0 && truth)
		rv = phases(a, seconds, hz, truth);
	if (rv == 0)
		rv = profout_write_file(argv[1], a, &p);
	if (rv != 0)
		fprintf(stderr, "timeview_gen: %s: %s\n", argv[1], strerror(-rv));
	free(stk);
	stackagg_free(a);
	return rv ? 1 : 0;
}
