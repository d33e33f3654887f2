/* SPDX-License-Identifier: MIT */
/*
 * evkind.h - what a recording can measure (--event), one row per kind: every part of the
 * collector that differs by kind (the sampler, the session, the profile files, their titles and
 * types, the Pyroscope push, `top`'s column) reads it from the kind's row instead of naming the
 * kind. Adding a kind is one enum value and one row (evkind.c), plus the file that produces its
 * samples.
 *
 * Invariant: every kind has a row with every field set (test_evkind checks it); names and file
 * suffixes are unique.
 */
#ifndef FG_EVKIND_H
#define FG_EVKIND_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The kinds and their --event words (index.html's Event column), in --event's order:
 * X(ID, word) each, ID naming FG_EVENT_ID. A new kind adds its line here and its row in evkind.c.
 */
#define FG_EVENTS(X)                                                                               \
	X(CPU, "cpu")	    /* CPU samples; a stack's count is samples */                          \
	X(OFFCPU, "offcpu") /* time off the CPU, each switch-out to the next switch-in; us */      \
	X(WALL, "wall")	    /* both on one scale: CPU samples weigh their interval; us */          \
	X(ALLOC, "alloc")   /* the agents': allocation samples weighed to their bytes */           \
	X(LIVE, "live")	    /* the allocation samples not freed at the end; bytes */               \
	X(LOCK, "lock")	    /* contended monitor entries, each by the time it waited; us */

/* clang-format off */
enum fg_event {
#define FG_EVENT_ID(id, word) FG_EVENT_##id,
	FG_EVENTS(FG_EVENT_ID)
#undef FG_EVENT_ID
	FG_NEVENTS
};
/* clang-format on */

/* What the sampler (sampler.h) records for a kind. */
enum sampler_mode {
	SAMPLER_MODE_CPU = 0, /* CPU samples at freq_hz */
	SAMPLER_MODE_OFFCPU,  /* a sample at switch-outs (sched_switch), and records that say
			       * when each thread runs again */
	SAMPLER_MODE_WALL,    /* both; the CPU clock is cpu-clock so a sample's period is ns */
	SAMPLER_MODE_NONE,    /* no perf sampling: the agents send the events */
};

/* Whether mode m takes CPU samples at freq_hz (CPU and wall). */
static inline bool sampler_mode_cpu(enum sampler_mode m)
{
	return m != SAMPLER_MODE_OFFCPU && m != SAMPLER_MODE_NONE;
}

/* Whether mode m takes samples at switch-outs (off-CPU and wall). */
static inline bool sampler_mode_switch(enum sampler_mode m)
{
	return m != SAMPLER_MODE_CPU && m != SAMPLER_MODE_NONE;
}

/*
 * An agent event profile's units (allocations, live objects, locks): each stack has a count
 * (bytes, or microseconds waited) and a second value (objects, contentions); pprof gets two
 * sample types, (t1, u1) the second value and (t2, u2) the count x period, and the period type.
 */
struct evkind_types {
	const char *t1, *u1, *t2, *u2, *ptype, *punit;
	uint64_t period;       /* t2's value per count: 1 (bytes), 1000 (microseconds -> ns) */
	const char *countname; /* what the SVG says a count is ("bytes", "us") */
};

struct evkind {
	const char *title;  /* what a profile's title starts with: "CPU", "Off-CPU time (us)" */
	const char *suffix; /* after a file's stem: "" (cpu), ".offcpu", ".wall" ... */
	const char *unit;   /* what a count is: "samples", "us", "bytes" */
	const char *what;   /* `top`'s and the rolling summary's words: "off the CPU" ... */
	enum sampler_mode mode;
	bool from_agent;   /* the agents' events: no perf sampling, no privileges */
	unsigned agent_on; /* ... what the agents are asked to turn on (FGP_EVM_*, fgproto.h) */
	bool time;	   /* counts are microseconds of time by switch-outs (offcpu, wall) */
	/* ... and the CPU samples too weigh their time (cpu-clock's period, ns), so the time on
	 * and off the CPU share one scale (wall); a thread's exact time is split the same way */
	bool cpu_time;
	const char *time_type; /* pprof's sample type of a time profile ("off_cpu"), else NULL */
	const struct evkind_types *types; /* an agent event's pprof types, else NULL */
	/* Pyroscope's sample-type config (JSON) and units of the profile's type */
	const char *push_config, *push_units;
	const char *thread; /* the rolling profiles' thread name */
};

/* The row of kind e (the CPU's for a value out of range: never NULL). */
const struct evkind *evkind_of(enum fg_event e);

/* The word of kind e in FG_EVENTS ("cpu", "offcpu" ...; "?" out of range). */
const char *evkind_name(enum fg_event e);

/* The kind whose word is name: 0 with *out set, or -EINVAL. */
int evkind_find(const char *name, enum fg_event *out);

#endif
