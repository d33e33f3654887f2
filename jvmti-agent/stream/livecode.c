// SPDX-License-Identifier: MIT
/*
 * livecode.c - live code ranges in one array sorted by start address.
 *
 * Lookups are binary searches; inserts and removals move the tail of the array, which costs
 * microseconds at tens of thousands of entries and runs on the sender thread only.
 * Invariant: entries are sorted by addr and their ranges are disjoint.
 */
#include "livecode.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fgsearch.h"

struct entry {
	uint64_t addr;
	uint32_t size;
	uint32_t len; /* rec bytes: the record (its size in its header), then attachments */
	const uint8_t *rec;
	void *mem; /* the allocation rec lives in, freed with the entry */
};

struct livecode {
	struct entry *v;
	size_t n, cap;
	size_t budget, used; /* used = record bytes + index capacity */
};

struct livecode *livecode_new(size_t budget)
{
	struct livecode *t = calloc(1, sizeof(*t));

	if (t)
		t->budget = budget;
	return t;
}

void livecode_free(struct livecode *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].mem);
	free(t->v);
	free(t);
}

static bool entry_before(const struct entry *e, uint64_t a)
{
	return e->addr < a;
}
/* entry_lower_bound(v, n, a): the index of the first entry with addr >= a. */
FG_LOWER_BOUND(entry_lower_bound, struct entry, uint64_t, entry_before)

static void remove_range(struct livecode *t, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		t->used -= t->v[i].len;
		free(t->v[i].mem);
	}
	memmove(&t->v[from], &t->v[to], (t->n - to) * sizeof(t->v[0]));
	t->n -= to - from;
}

static int grow(struct livecode *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 256;
	size_t extra = (ncap - t->cap) * sizeof(t->v[0]);
	struct entry *nv;

	if (t->used + extra > t->budget)
		return -ENOSPC;
	nv = realloc(t->v, ncap * sizeof(t->v[0]));
	if (nv == NULL)
		return -ENOMEM;
	t->v = nv;
	t->cap = ncap;
	t->used += extra;
	return 0;
}

int livecode_put(struct livecode *t, uint64_t addr, uint32_t size, const uint8_t *rec, size_t len)
{
	uint8_t *copy;

	if (size == 0 || addr + size < addr || len > UINT32_MAX)
		return -EINVAL;
	copy = malloc(len);
	if (copy == NULL)
		return -ENOMEM;
	memcpy(copy, rec, len);
	return livecode_put_owned(t, addr, size, copy, len, copy);
}

int livecode_put_owned(struct livecode *t, uint64_t addr, uint32_t size, const uint8_t *rec,
		       size_t len, void *mem)
{
	uint64_t end = addr + size;
	size_t first, last, pos;
	int rv = -ENOSPC;

	if (size == 0 || end < addr || len > UINT32_MAX) {
		free(mem);
		return -EINVAL;
	}
	/* Overlapping entries: at most one starts before addr; the rest start inside the range. */
	first = entry_lower_bound(t->v, t->n, addr);
	if (first > 0 && t->v[first - 1].addr + t->v[first - 1].size > addr)
		first--;
	last = entry_lower_bound(t->v, t->n, end);
	if (last > first)
		remove_range(t, first, last);
	pos = first;
	if (t->used + len > t->budget || (t->n == t->cap && (rv = grow(t)) != 0) ||
	    t->used + len > t->budget) {
		free(mem);
		return t->used + len > t->budget ? -ENOSPC : rv;
	}
	memmove(&t->v[pos + 1], &t->v[pos], (t->n - pos) * sizeof(t->v[0]));
	t->v[pos].addr = addr;
	t->v[pos].size = size;
	t->v[pos].len = (uint32_t)len;
	t->v[pos].rec = rec;
	t->v[pos].mem = mem; /* owned by the table from here */
	t->n++;
	t->used += len;
	return 0;
}

/* Size of the record at p (u32 at offset 4 of its header), or 0 if fewer than 8 bytes remain. */
static uint32_t rec_size_at(const uint8_t *p, size_t left)
{
	if (left < 8)
		return 0;
	return (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
}

int livecode_attach(struct livecode *t, uint64_t addr, const uint8_t *rec, size_t len)
{
	size_t i = entry_lower_bound(t->v, t->n, addr);
	struct entry *e;
	size_t nlen = 0, off;
	uint32_t own;
	uint8_t *copy;

	if (i == t->n || t->v[i].addr != addr)
		return -ENOENT;
	if (len < 8 || rec_size_at(rec, len) != len)
		return -EINVAL;
	e = &t->v[i];
	/* The record's own bytes, then whole attached records: every one kept but one of rec's
	 * type, which rec replaces. A malformed tail (cannot happen: we wrote it) is dropped. */
	own = rec_size_at(e->rec, e->len);
	if (own < 8 || own > e->len)
		own = e->len;
	nlen = own;
	for (off = own; off < e->len;) {
		uint32_t n = rec_size_at(e->rec + off, e->len - off);

		if (n < 8 || n > e->len - off)
			break;
		if (memcmp(e->rec + off, rec, 2) != 0)
			nlen += n;
		off += n;
	}
	nlen += len;
	if (nlen > UINT32_MAX || t->used - e->len + nlen > t->budget)
		return -ENOSPC;
	copy = malloc(nlen);
	if (copy == NULL)
		return -ENOMEM;
	memcpy(copy, e->rec, own);
	nlen = own;
	for (off = own; off < e->len;) {
		uint32_t n = rec_size_at(e->rec + off, e->len - off);

		if (n < 8 || n > e->len - off)
			break;
		if (memcmp(e->rec + off, rec, 2) != 0) {
			memcpy(copy + nlen, e->rec + off, n);
			nlen += n;
		}
		off += n;
	}
	memcpy(copy + nlen, rec, len);
	nlen += len;
	free(e->mem);
	t->used = t->used - e->len + nlen;
	e->rec = copy;
	e->mem = copy;
	e->len = (uint32_t)nlen;
	return 0;
}

const uint8_t *livecode_record(const struct livecode *t, uint64_t addr, size_t *len)
{
	size_t i = entry_lower_bound(t->v, t->n, addr);
	uint32_t own;

	if (i == t->n || t->v[i].addr != addr)
		return NULL;
	own = rec_size_at(t->v[i].rec, t->v[i].len);
	*len = own >= 8 && own <= t->v[i].len ? own : t->v[i].len;
	return t->v[i].rec;
}

int livecode_remove(struct livecode *t, uint64_t addr)
{
	size_t i = entry_lower_bound(t->v, t->n, addr);

	if (i == t->n || t->v[i].addr != addr)
		return -ENOENT;
	remove_range(t, i, i + 1);
	return 0;
}

size_t livecode_count(const struct livecode *t)
{
	return t->n;
}

size_t livecode_used(const struct livecode *t)
{
	return t->used;
}

int livecode_each(const struct livecode *t, livecode_fn fn, void *arg)
{
	for (size_t i = 0; i < t->n; i++) {
		int rv = fn(arg, t->v[i].addr, t->v[i].size, t->v[i].rec, t->v[i].len);

		if (rv)
			return rv;
	}
	return 0;
}
