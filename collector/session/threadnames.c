// SPDX-License-Identifier: MIT
/* threadnames.c - thread id -> name (see threadnames.h). */
#include "threadnames.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "array.h"
#include "util.h"

void threadnames_init(struct threadnames *t)
{
	htab_init(&t->idx);
	t->names = NULL;
	t->n = t->cap = 0;
}

void threadnames_fini(struct threadnames *t)
{
	htab_fini(&t->idx);
	free(t->names);
	threadnames_init(t);
}

void threadnames_set(struct threadnames *t, uint32_t tid, const char *name)
{
	uint64_t *v;

	if (tid == 0)
		return;
	v = htab_get(&t->idx, tid);
	if (!v) {
		/* Out of room or memory: the thread keeps "[tid N]". */
		if (t->n >= THREADNAMES_MAX || ARRAY_GROW(t->names, t->cap, t->n + 1) != 0 ||
		    htab_put(&t->idx, tid, t->n) != 0)
			return;
		v = htab_get(&t->idx, tid);
		t->n++;
	}
	snprintf(t->names[*v], THREADNAMES_NAME, "%s", name);
}

static const char *lookup(const struct threadnames *t, uint32_t tid)
{
	const uint64_t *v = htab_get(&t->idx, tid);

	return v ? t->names[*v] : NULL;
}

const char *threadnames_get(struct threadnames *t, uint32_t pid, uint32_t tid)
{
	const char *n = lookup(t, tid);
	char path[64], name[64];

	if (n)
		return n;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	if (fg_read_small(path, name, sizeof(name)) != 0)
		snprintf(name, sizeof(name), "[tid %u]", tid);
	threadnames_set(t, tid, name);
	return lookup(t, tid);
}

void threadnames_load(struct threadnames *t, uint32_t pid)
{
	char path[64], name[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		uint64_t tid;

		if (fg_parse_u64(de->d_name, 1, UINT32_MAX, &tid) != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, (unsigned)tid);
		if (fg_read_small(path, name, sizeof(name)) == 0)
			threadnames_set(t, (uint32_t)tid, name);
	}
	closedir(d);
}
