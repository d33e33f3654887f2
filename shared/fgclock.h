/* SPDX-License-Identifier: MIT */
/*
 * fgclock.h - the one clock of fgcollect, for the agent and the collector alike:
 * CLOCK_MONOTONIC in nanoseconds. The wire format's timestamps are taken with it, and the
 * sampler asks perf_event_open to stamp samples with it (use_clockid), so a sample and a code
 * event order exactly.
 */
#ifndef FG_CLOCK_H
#define FG_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC now, in ns. Cannot fail for this clock on Linux. */
static inline uint64_t fg_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
