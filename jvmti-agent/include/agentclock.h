/* SPDX-License-Identifier: MIT */
/*
 * agentclock.h - the clock seam of the agent's threads: every decision that depends on time
 * (the sender's batching gaps, retries and want-file polls, the tables worker's naps, the link's
 * reopen and redial) reads CLOCK_MONOTONIC through a struct agentclock, so tests drive time by
 * hand.
 *
 * A NULL clock is the real one (fgclock.h). A fake one's nap() advances its now().
 */
#ifndef FG_AGENTCLOCK_H
#define FG_AGENTCLOCK_H

#include <stdint.h>
#include <time.h>

#include "fgclock.h"

struct agentclock {
	uint64_t (*now)(void *arg);	     /* CLOCK_MONOTONIC ns */
	void (*nap)(void *arg, uint64_t ns); /* sleep ns (ns < 1 s) */
	void *arg;
};

static inline uint64_t agentclock_now(const struct agentclock *c)
{
	return c ? c->now(c->arg) : fg_now_ns();
}

static inline void agentclock_nap(const struct agentclock *c, uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	if (c)
		c->nap(c->arg, ns);
	else
		nanosleep(&ts, NULL);
}

#endif
