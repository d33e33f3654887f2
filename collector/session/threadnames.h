/* SPDX-License-Identifier: MIT */
/*
 * threadnames.h - thread id -> name for the thread frames of a recording: from COMM records as
 * they arrive, from /proc/<pid>/task/<tid>/comm for threads that existed before.
 *
 * Invariant: a name, once known, is only replaced by a later COMM (threadnames_set); a thread
 * whose name cannot be read is named "[tid N]" once, never looked up again.
 */
#ifndef FG_THREADNAMES_H
#define FG_THREADNAMES_H

#include <stddef.h>
#include <stdint.h>

#include "htab.h"

#define THREADNAMES_NAME 16 /* bytes kept per name, NUL included (the kernel's TASK_COMM_LEN) */
#define THREADNAMES_MAX (1u << 20)

struct threadnames {
	struct htab idx; /* tid -> index into names */
	char (*names)[THREADNAMES_NAME];
	size_t n, cap;
};

/* An empty set; no allocation until the first name. */
void threadnames_init(struct threadnames *t);
void threadnames_fini(struct threadnames *t);

/*
 * Name tid (cut to THREADNAMES_NAME - 1 bytes). Past THREADNAMES_MAX threads, or out of
 * memory, the name is not kept (the thread is then "[tid N]").
 */
void threadnames_set(struct threadnames *t, uint32_t tid, const char *name);

/* Every thread of pid that /proc lists now. */
void threadnames_load(struct threadnames *t, uint32_t pid);

/*
 * tid's name, asking /proc/<pid>/task/<tid>/comm once when unknown. The pointer is borrowed
 * until the next threadnames_set/load/get; NULL only when even "[tid N]" could not be kept.
 */
const char *threadnames_get(struct threadnames *t, uint32_t pid, uint32_t tid);

#endif
