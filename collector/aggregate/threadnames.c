// SPDX-License-Identifier: MIT
/* threadnames.c - thread id -> name (see threadnames.h). */
#include "threadnames.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "util.h"

struct tidname {
	uint32_t tid; /* 0 = empty */
	char name[THREADNAMES_NAME];
};

void threadnames_init(struct threadnames *t)
{
	t->tab = NULL;
	t->n = t->cap = 0;
}

void threadnames_fini(struct threadnames *t)
{
	free(t->tab);
	threadnames_init(t);
}

static uint64_t tid_hash(uint32_t tid)
{
	return (tid * 0x9e3779b97f4a7c15ull) >> 20;
}

static struct tidname *slot(const struct threadnames *t, uint32_t tid)
{
	size_t mask = t->cap - 1;

	for (size_t j = tid_hash(tid) & mask;; j = (j + 1) & mask) {
		if (t->tab[j].tid == tid || t->tab[j].tid == 0)
			return &t->tab[j];
	}
}

void threadnames_set(struct threadnames *t, uint32_t tid, const char *name)
{
	struct tidname *e;

	if (tid == 0)
		return;
	if ((t->n + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct tidname *old = t->tab, *n;
		size_t oldcap = t->cap;

		if (t->n >= THREADNAMES_MAX || !(n = calloc(cap, sizeof(*n))))
			return; /* the thread keeps "[tid N]" */
		t->tab = n;
		t->cap = cap;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].tid)
				*slot(t, old[i].tid) = old[i];
		free(old);
	}
	e = slot(t, tid);
	if (!e->tid)
		t->n++;
	e->tid = tid;
	snprintf(e->name, sizeof(e->name), "%s", name);
}

static const char *lookup(const struct threadnames *t, uint32_t tid)
{
	const struct tidname *e;

	if (!t->cap)
		return NULL;
	e = slot(t, tid);
	return e->tid ? e->name : NULL;
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
