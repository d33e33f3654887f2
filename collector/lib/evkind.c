// SPDX-License-Identifier: MIT
/*
 * evkind.c - the table of what a recording can measure (see evkind.h).
 */
#include "evkind.h"

#include <errno.h>
#include <string.h>

#include "fgproto.h"

/*
 * The agents' events under the pprof types and the Pyroscope names pyroscope-java's profiles
 * have (async-profiler's JFR events as Pyroscope converts them): memory and mutex profiles.
 * Time is pushed as nanoseconds (the profile counts microseconds, a period of 1000 ns), summed.
 */
static const struct evkind_types alloc_types = {
	"alloc_objects", "count", "alloc_space", "bytes", "space", "bytes", 1, "bytes"
};
static const struct evkind_types live_types = {
	"inuse_objects", "count", "inuse_space", "bytes", "space", "bytes", 1, "bytes"
};
static const struct evkind_types lock_types = { "contentions", "count", "delay", "nanoseconds",
						"contentions", "count", 1000,	 "us" };

static const struct evkind kinds[FG_NEVENTS] = {
	[FG_EVENT_CPU] = {
		.title = "CPU",
		.suffix = "",
		.unit = "samples",
		.what = "on the CPU",
		.mode = SAMPLER_MODE_CPU,
		.push_config = "{\"samples\":{\"units\":\"samples\",\"aggregation\":\"sum\","
			       "\"display-name\":\"cpu\",\"sampled\":true}}",
		.push_units = "samples",
		.thread = "fg-roller",
	},
	[FG_EVENT_OFFCPU] = {
		.title = "Off-CPU time (us)",
		.suffix = ".offcpu",
		.unit = "us",
		.what = "off the CPU",
		.mode = SAMPLER_MODE_OFFCPU,
		.time = true,
		.time_type = "off_cpu",
		.push_config = "{\"off_cpu\":{\"units\":\"nanoseconds\",\"aggregation\":\"sum\","
			       "\"display-name\":\"off_cpu\",\"sampled\":false}}",
		.push_units = "nanoseconds",
		.thread = "fg-roller-off",
	},
	[FG_EVENT_WALL] = {
		.title = "Wall-clock time (us)",
		.suffix = ".wall",
		.unit = "us",
		.what = "on and off the CPU",
		.mode = SAMPLER_MODE_WALL,
		.time = true,
		.cpu_time = true,
		.time_type = "wall",
		.push_config = "{\"wall\":{\"units\":\"nanoseconds\",\"aggregation\":\"sum\","
			       "\"display-name\":\"wall\",\"sampled\":false}}",
		.push_units = "nanoseconds",
		.thread = "fg-roller-wall",
	},
	[FG_EVENT_ALLOC] = {
		.title = "Allocated bytes",
		.suffix = ".alloc",
		.unit = "bytes",
		.what = "allocated",
		.mode = SAMPLER_MODE_NONE,
		.from_agent = true,
		/* its rings are read (session_ring), its samples weighed by their threads' bytes */
		.agent_on = FGP_EVM_ALLOC | FGP_EVM_RING | FGP_EVM_EXACT,
		.types = &alloc_types,
		.push_config = "{\"alloc_objects\":{\"units\":\"objects\",\"aggregation\":"
			       "\"sum\",\"display-name\":\"alloc_in_new_tlab_objects\","
			       "\"sampled\":false},\"alloc_space\":{\"units\":\"bytes\","
			       "\"aggregation\":\"sum\",\"display-name\":"
			       "\"alloc_in_new_tlab_bytes\",\"sampled\":false}}",
		.push_units = "bytes",
		.thread = "fg-roller-alloc",
	},
	[FG_EVENT_LIVE] = {
		.title = "Live bytes (not freed)",
		.suffix = ".live",
		.unit = "bytes",
		.what = "live",
		.mode = SAMPLER_MODE_NONE,
		.from_agent = true,
		.agent_on = FGP_EVM_ALLOC | FGP_EVM_LIVE,
		.types = &live_types,
		.push_config = "{\"inuse_objects\":{\"units\":\"objects\",\"aggregation\":"
			       "\"average\",\"display-name\":\"inuse_objects\",\"sampled\":"
			       "false},\"inuse_space\":{\"units\":\"bytes\",\"aggregation\":"
			       "\"average\",\"display-name\":\"inuse_space\",\"sampled\":false}}",
		.push_units = "bytes",
		.thread = "fg-roller-live",
	},
	[FG_EVENT_LOCK] = {
		.title = "Lock wait time (us)",
		.suffix = ".lock",
		.unit = "us",
		.what = "waited for monitors",
		.mode = SAMPLER_MODE_NONE,
		.from_agent = true,
		.agent_on = FGP_EVM_LOCK,
		.types = &lock_types,
		.push_config = "{\"contentions\":{\"units\":\"lock_samples\",\"aggregation\":"
			       "\"sum\",\"display-name\":\"lock_count\",\"sampled\":false},"
			       "\"delay\":{\"units\":\"lock_nanoseconds\",\"aggregation\":\"sum\","
			       "\"display-name\":\"lock_duration\",\"sampled\":false}}",
		.push_units = "lock_nanoseconds",
		.thread = "fg-roller-lock",
	},
};

static const char *const words[FG_NEVENTS] = {
#define WORD(id, word) [FG_EVENT_##id] = (word),
	FG_EVENTS(WORD)
#undef WORD
};

const struct evkind *evkind_of(enum fg_event e)
{
	return &kinds[(unsigned)e < FG_NEVENTS ? e : FG_EVENT_CPU];
}

const char *evkind_name(enum fg_event e)
{
	return (unsigned)e < FG_NEVENTS ? words[e] : "?";
}

int evkind_find(const char *name, enum fg_event *out)
{
	for (unsigned i = 0; name && i < FG_NEVENTS; i++) {
		if (!strcmp(words[i], name)) {
			*out = (enum fg_event)i;
			return 0;
		}
	}
	return -EINVAL;
}
