// SPDX-License-Identifier: MIT
/*
 * evbudget.c - the cost budget of allocation sampling (see evbudget.h).
 */
#include "evbudget.h"

#include <string.h>

static void note_used(struct evbudget *b)
{
	for (int i = 0; i < EVBUDGET_MAX_STEPS; i++) {
		if (b->used[i] == b->interval)
			return;
		if (b->used[i] == 0) {
			b->used[i] = b->interval;
			return;
		}
	}
}

void evbudget_reset(struct evbudget *b, uint64_t base, uint32_t ppm)
{
	memset(b, 0, sizeof(*b));
	b->base = base ? base : 1;
	b->interval = b->base;
	b->ppm = ppm > EVBUDGET_PPM_MAX ? EVBUDGET_PPM_MAX : ppm;
	note_used(b);
}

/* May the interval grow by one more power of two? */
static bool can_grow(const struct evbudget *b)
{
	return b->shift < 62 && (b->base << (b->shift + 1)) >> (b->shift + 1) == b->base &&
	       (b->base << (b->shift + 1)) <= EVBUDGET_MAX_INTERVAL;
}

static void decide(struct evbudget *b)
{
	/* In ppm of the window's CPU; the 128-bit-free form: cost * 1e6 fits for cost < 1.8e13. */
	uint64_t cost = b->win_cost_ns, cpu = b->win_cpu_ns;
	uint64_t r = cost >= (UINT64_MAX / 1000000u) ? UINT64_MAX : cost * 1000000u / cpu;
	uint64_t aim = (uint64_t)b->ppm * EVBUDGET_AIM_PCT / 100u;
	uint32_t old = b->shift;

	if (r > b->ppm) {
		for (uint32_t up = 0; up < EVBUDGET_MAX_UP && r > aim && can_grow(b); up++) {
			b->shift++;
			r /= 2;
		}
	} else if (r * 2 < aim && b->shift > 0) {
		b->shift--;
	}
	if (b->shift != old) {
		b->interval = b->base << b->shift;
		b->changes++;
		note_used(b);
	}
}

uint64_t evbudget_tick(struct evbudget *b, uint64_t samples, uint64_t copied, uint64_t cost_ns,
		       uint64_t cpu_ns, uint64_t wall_ns)
{
	uint64_t out, c;

	if (copied > samples)
		copied = samples;
	out = (samples - copied) * EVBUDGET_OUTSIDE_NS + copied * EVBUDGET_COPY_OUTSIDE_NS;
	c = cost_ns + out;
	b->samples += samples;
	b->copied += copied;
	b->outside_ns += out;
	b->cost_ns += c;
	b->cpu_ns += cpu_ns;
	if (b->ppm == 0)
		return b->interval;
	b->win_cost_ns += c;
	b->win_cpu_ns += cpu_ns;
	b->win_ns += wall_ns;
	if (b->win_ns < EVBUDGET_WINDOW_NS ||
	    (b->win_cpu_ns < EVBUDGET_WINDOW_CPU_NS && b->win_ns < EVBUDGET_WINDOW_LONG_NS))
		return b->interval;
	if (b->win_cpu_ns > 0)
		decide(b);
	b->win_cost_ns = b->win_cpu_ns = b->win_ns = 0;
	return b->interval;
}

uint32_t evbudget_cost_ppm(const struct evbudget *b)
{
	if (b->cpu_ns == 0)
		return 0;
	if (b->cost_ns >= b->cpu_ns)
		return EVBUDGET_PPM_MAX;
	return (uint32_t)(b->cost_ns >= UINT64_MAX / 1000000u ? b->cost_ns / (b->cpu_ns / 1000000u)
							      : b->cost_ns * 1000000u / b->cpu_ns);
}
