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

/* 2^(k / 4) for k = 0..3, in 1/65536ths (rounded). */
static const uint32_t step_mult[EVBUDGET_STEPS_PER_2X] = { 65536, 77936, 92682, 110218 };

_Static_assert(EVBUDGET_STEPS_PER_2X == 4, "step_mult holds quarter powers of two");

uint64_t evbudget_step_interval(uint64_t base, uint32_t step)
{
	uint32_t whole = step / EVBUDGET_STEPS_PER_2X;
	uint64_t iv;

	if (base == 0 || base > EVBUDGET_MAX_INTERVAL || whole > 30 ||
	    base > (EVBUDGET_MAX_INTERVAL >> whole))
		return 0;
	/* <= 2^30 x 2^17: no overflow. */
	iv = ((base << whole) * step_mult[step % EVBUDGET_STEPS_PER_2X] + 32768u) >> 16;
	return iv <= EVBUDGET_MAX_INTERVAL ? iv : 0;
}

/*
 * r (ppm of the CPU) at the interval of step to, r being measured at the interval in force:
 * within the aim? Cost goes as 1 / interval.
 */
static bool fits(const struct evbudget *b, uint64_t r, uint64_t aim, uint32_t to)
{
	uint64_t iv = evbudget_step_interval(b->base, to);

	/* r <= 2^30 and intervals < 2^31: the products fit. */
	return iv && r * b->interval <= aim * iv;
}

static void decide(struct evbudget *b)
{
	/* In ppm of the window's CPU, capped at 1000x the CPU (the products in fits() fit). */
	uint64_t cost = b->win_cost_ns, cpu = b->win_cpu_ns;
	uint64_t r = cost / cpu >= 1000u	    ? 1000000000u
		     : cost < UINT64_MAX / 1000000u ? cost * 1000000u / cpu
						    : cost / (cpu / 1000000u);
	uint64_t aim = (uint64_t)b->ppm * EVBUDGET_AIM_PCT / 100u;
	uint32_t to = b->step;

	if (r > b->ppm) {
		/* The fewest steps that fit; as many as allowed when none does. */
		for (uint32_t up = 1; up <= EVBUDGET_MAX_UP; up++) {
			if (!evbudget_step_interval(b->base, b->step + up))
				break;
			to = b->step + up;
			if (fits(b, r, aim, to))
				break;
		}
	} else if (r < aim) {
		/* The most steps down that still fit. */
		for (uint32_t down = 1; down <= EVBUDGET_MAX_DOWN && down <= b->step; down++) {
			if (!fits(b, r, aim, b->step - down))
				break;
			to = b->step - down;
		}
	}
	/* A shrink waits for EVBUDGET_SHRINK_AFTER windows in a row that want it. */
	b->under = to < b->step ? b->under + 1 : 0;
	if (to < b->step && b->under < EVBUDGET_SHRINK_AFTER)
		return;
	b->under = 0;
	if (to != b->step) {
		uint64_t iv = evbudget_step_interval(b->base, to);

		b->step = to;
		if (iv != b->interval) { /* a base of a few bytes rounds steps together */
			b->interval = iv;
			b->changes++;
			note_used(b);
		}
	}
}

/* Does the window hold enough to decide on (evbudget.h)? */
static bool window_closes(const struct evbudget *b)
{
	if (b->win_ns >= EVBUDGET_WINDOW_LONG_NS)
		return true;
	if (b->win_ns < EVBUDGET_WINDOW_NS || b->win_cpu_ns < EVBUDGET_WINDOW_CPU_NS)
		return false;
	/* Far over the budget: no need to count more. cost > 2 ppm of cpu, without overflow. */
	return b->win_samples >= EVBUDGET_WINDOW_SAMPLES ||
	       b->win_cost_ns / 2 > b->win_cpu_ns / 1000000u * b->ppm;
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
	b->win_samples += samples;
	if (!window_closes(b))
		return b->interval;
	if (b->win_cpu_ns > 0)
		decide(b);
	b->win_cost_ns = b->win_cpu_ns = b->win_ns = b->win_samples = 0;
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
