// SPDX-License-Identifier: MIT
/* evweigh.c - the weight of allocation and lock events (see evweigh.h). */
#include "evweigh.h"
#include "allocring.h"

#include <string.h>

#include <errno.h>
#include <math.h>

void evweigh_init(struct evweigh *w, uint64_t seed)
{
	memset(w, 0, sizeof(*w));
	w->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
}

static double uniform(struct evweigh *w)
{
	uint64_t x = w->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	w->rng = x;
	return (double)((x * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-53;
}

double evweigh_inv_p(uint64_t size, uint64_t interval)
{
	/* -expm1(-x) keeps p exact for the small objects, where 1 - exp(-x) cancels. */
	double p = -expm1(-(double)size / (double)interval);

	return p > 0 ? 1.0 / p : 0;
}

uint64_t evweigh_round(struct evweigh *w, double x)
{
	double f;

	if (!(x > 0))
		return 0;
	if (x >= 1.8e19)
		return UINT64_MAX;
	f = floor(x);
	return (uint64_t)f + (uniform(w) < x - f);
}

/* A sample drawn at interval, weighing bytes, in the intervals used. */
static void note_interval(struct evweigh *w, uint64_t interval, uint64_t bytes)
{
	for (int i = 0; i < EVWEIGH_MAX_INTERVALS; i++) {
		struct evweigh_iv *u = &w->used[i];

		if (u->interval != interval && u->interval != 0)
			continue;
		u->interval = interval;
		u->samples++;
		u->bytes += bytes;
		return;
	}
	w->used_other++;
}

int evweigh_alloc(struct evweigh *w, uint64_t size, uint64_t interval, uint64_t *bytes,
		  uint64_t *objects)
{
	double inv;

	if (!size || !interval || size > EVWEIGH_MAX_SIZE)
		return -EINVAL;
	inv = evweigh_inv_p(size, interval);
	if (!(inv >= 1.0))
		return -EINVAL;
	*bytes = evweigh_round(w, (double)size * inv);
	*objects = evweigh_round(w, inv);
	note_interval(w, interval, *bytes);
	return 0;
}

int evweigh_alloc_gap(struct evweigh *w, uint64_t size, uint64_t interval, uint64_t gap,
		      uint64_t *bytes, uint64_t *objects)
{
	double inv;

	if (gap && !allocring_gap_ok(gap, size, interval)) {
		w->gap_refused++;
		gap = 0;
	}
	if (!gap) {
		int rv = evweigh_alloc(w, size, interval, bytes, objects);

		if (rv == 0)
			w->interval_samples++;
		return rv;
	}
	inv = evweigh_inv_p(size, interval);
	if (!(inv >= 1.0))
		return -EINVAL;
	*bytes = gap;
	*objects = evweigh_round(w, inv);
	note_interval(w, interval, gap);
	w->gap_samples++;
	return 0;
}

uint64_t evweigh_lock_us(struct evweigh *w, uint64_t ns)
{
	return evweigh_round(w, (double)ns / 1000.0);
}
