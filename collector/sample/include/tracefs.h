/* SPDX-License-Identifier: MIT */
/*
 * tracefs.h - what the sampler needs of the kernel's tracing file system for the
 * sched:sched_switch tracepoint: its event id and where prev_state sits in its raw record,
 * read from the tracepoint's `id` and `format` files, never assumed.
 *
 * The parser takes text so tests can feed a format file of their own.
 */
#ifndef FG_TRACEFS_H
#define FG_TRACEFS_H

#include <stddef.h>
#include <stdint.h>

/* Where tracefs is looked for, in order (the second is debugfs's view of it). */
#define TRACEFS_DIRS                                                                               \
	{                                                                                          \
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing"                                 \
	}

struct tracefs_switch {
	uint64_t id;	     /* PERF_TYPE_TRACEPOINT config */
	uint32_t state_off;  /* prev_state: offset in the raw record ... */
	uint32_t state_size; /* ... and size (4 or 8) */
	char dir[64];	     /* the tracefs directory it came from */
	int mounted;	     /* 1: we mounted tracefs at dir ourselves */
};

/*
 * The offset and size of field `name` in a tracepoint format file's text (len bytes, need not
 * be NUL-terminated). 0, or -ENOENT (no such field), -EBADMSG (unparsable), -ERANGE (size not
 * 1, 2, 4 or 8).
 */
int tracefs_field(const char *text, size_t len, const char *name, uint32_t *off, uint32_t *size);

/*
 * Find sched:sched_switch: its id and prev_state. When no tracefs is mounted, mount one at
 * /sys/kernel/tracing (root only). 0, or -ENOENT (no tracefs and it could not be mounted, or
 * no such tracepoint: CONFIG_TRACEPOINTS), -EACCES (not allowed to read it), -EBADMSG.
 */
int tracefs_sched_switch(struct tracefs_switch *out);

/* Task states in sched_switch's prev_state (include/linux/sched.h's TASK_* bits). */
#define TRACEFS_TASK_INTERRUPTIBLE 0x1
#define TRACEFS_TASK_UNINTERRUPTIBLE 0x2
#define TRACEFS_TASK_STOPPED 0x4
#define TRACEFS_TASK_TRACED 0x8
#define TRACEFS_TASK_PARKED 0x40
#define TRACEFS_TASK_IDLE 0x80 /* TASK_NOLOAD as the tracepoint reports it ("I") */

/* The synthetic leaf frame for a prev_state: "[off-cpu: sleeping]", ... (static). */
const char *tracefs_state_frame(uint64_t prev_state);

#endif
