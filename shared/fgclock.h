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

/*
 * The first whole second of CLOCK_MONOTONIC at or after t (ns). The daemon's once-a-second
 * check and the agent socket's ping fall there, so an idle collector wakes once for both.
 */
static inline uint64_t fg_whole_second_ns(uint64_t t)
{
	const uint64_t sec = 1000000000ull;

	return (t + sec - 1) / sec * sec;
}

/* *ts = clock now + ms: the deadline of a timed wait on that clock. */
static inline void fg_deadline_ms_on(clockid_t clock, struct timespec *ts, long ms)
{
	clock_gettime(clock, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/*
 * *ts = CLOCK_REALTIME now + ms: the deadline of a pthread timed wait or join (those take the
 * realtime clock unless a condition variable was made with another).
 */
static inline void fg_deadline_ms(struct timespec *ts, int ms)
{
	fg_deadline_ms_on(CLOCK_REALTIME, ts, ms);
}

#endif
