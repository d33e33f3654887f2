/* SPDX-License-Identifier: MIT */
/*
 * session_seam.h - what a recording is built from, replaceable for tests: the sampler
 * (sampler.h), the code-table source (session_src.h) and the clock. session_open() uses the
 * real ones; a test opens a recording over a fake sampler that delivers records it made, a fake
 * source and a clock it moves, so the conductor runs without a JVM or perf. For tests only:
 * the roller takes seams for its own tests (roller_opts.seams).
 */
#ifndef FG_SESSION_SEAM_H
#define FG_SESSION_SEAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sampler.h"
#include "session_src.h"
#include "switchbpf.h"

struct session;
struct session_opts;

/* The sampler's calls as the recording makes them; smp is what open returned. */
struct session_sampler_ops {
	int (*open)(const struct sampler_opts *o, const pid_t *pids, size_t n, void **smp);
	int (*fd)(const void *smp);
	int (*poll)(void *smp, int timeout_ms, sampler_cb cb, void *ctx);
	void (*disable)(void *smp);
	int (*add_pid)(void *smp, pid_t pid);
	int (*remove_pid)(void *smp, pid_t pid); /* NULL: targets are never closed early */
	const struct sampler_info *(*info)(const void *smp);
	void (*stats)(const void *smp, struct sampler_stats *out);
	void (*close)(void *smp); /* accepts NULL */
	/* sampler_keep_name; NULL: the sampler filters no thread names */
	int (*keep_name)(void *smp, const char *comm, bool keep);
	/* sampler_totals and sampler_forget_thread; NULL: no thread's waits are counted */
	int (*totals)(const void *smp, switchbpf_total_cb cb, void *ctx);
	int (*forget_thread)(void *smp, uint32_t tid);
	/* sampler_carrier; NULL: carriers share the switch rate */
	int (*carrier)(void *smp, uint32_t tid);
};

struct session_seams {
	const struct session_sampler_ops *sampler; /* NULL: sampler.h */
	/* NULL: session_src_open */
	int (*src_open)(const struct session_src_env *env, struct session_source **out, char *why,
			size_t whylen);
	uint64_t (*now)(void); /* NULL: fg_now_ns */
};

/*
 * What session_step(s, timeout_ms) would do now: the milliseconds it would wait (-1: until
 * something happens), and in *rings whether a record in the sampler's rings would wake it.
 */
int session_step_wait(const struct session *s, int timeout_ms, bool *rings);

/* session_open() over seams (NULL or any NULL member: the real one). */
int session_open_seams(const struct session_opts *o, const struct session_seams *seams,
		       struct session **out, char *why, size_t whylen);

#endif
