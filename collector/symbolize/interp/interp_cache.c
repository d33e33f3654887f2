// SPDX-License-Identifier: MIT
/*
 * interp_cache.c - the interpreted-frame namer's cache: per (pid, Method*), a name and
 * everything it was made from, for interp_reval.c to compare (see interp.h).
 *
 * The entries are allocated one by one and found through shared/htab as a multimap: key a hash
 * of (pid, Method*), value the entry's address; equality is checked on the entry.
 *
 * Invariant: an entry's name stays at the same address until the entry is removed or flushed,
 * whatever else the cache gains or loses (interp_name_many hands names out across calls).
 */
#include "interp_namer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fghash.h"
#include "fgfree.h"

static uint64_t method_key(uint32_t pid, uint64_t method)
{
	return fg_hash64(method ^ ((uint64_t)pid << 48) ^ pid) & HTAB_KEY_MASK;
}

static struct interp_cached_method *entry_at(const uint64_t *val)
{
	return (struct interp_cached_method *)(uintptr_t)*val;
}

static void entry_free(struct interp_cached_method *e)
{
	FG_FREE_ALL(e->bytes, e->name, e);
}

struct interp_cached_method *interp_cache_find(struct interp_namer *n, uint32_t pid,
					       uint64_t method)
{
	size_t pos = 0;
	uint64_t *v;

	while ((v = htab_next(&n->methods, method_key(pid, method), &pos)) != NULL) {
		struct interp_cached_method *e = entry_at(v);

		if (e->pid == pid && e->method == method)
			return e;
	}
	return NULL;
}

/* "pkg.Class::method" from what r read. */
static char *make_name(const struct interp_method_read *r)
{
	char *s = malloc((size_t)r->src.holder_len + 2 + r->src.name_len + 1);
	size_t k = 0;

	if (!s)
		return NULL;
	/*
	 * Internal form to the agent's (JVMTI signature) form: '/' separates packages, and a
	 * hidden class's '+' (Foo$$Lambda$5+0x0000000800c0b000) is '.' in signatures, so an
	 * interpreted frame and a compiled one of the same method carry the same name.
	 */
	for (uint16_t i = 0; i < r->src.holder_len; i++) {
		char c = (char)r->holder_name[i];

		s[k++] = c == '/' || c == '+' ? '.' : c;
	}
	s[k++] = ':';
	s[k++] = ':';
	memcpy(s + k, r->method_name, r->src.name_len);
	s[k + r->src.name_len] = '\0';
	return s;
}

int interp_cache_add(struct interp_namer *n, uint32_t pid, uint64_t method,
		     const struct interp_method_read *r, struct interp_cached_method **out)
{
	struct interp_cached_method *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->bytes = malloc((size_t)r->src.holder_len + r->src.name_len);
	e->name = make_name(r);
	if (!e->bytes || !e->name ||
	    htab_add(&n->methods, method_key(pid, method), (uint64_t)(uintptr_t)e) != 0) {
		entry_free(e);
		return -ENOMEM;
	}
	memcpy(e->bytes, r->holder_name, r->src.holder_len);
	memcpy(e->bytes + r->src.holder_len, r->method_name, r->src.name_len);
	e->pid = pid;
	e->method = method;
	e->src = r->src;
	*out = e;
	return 0;
}

void interp_cache_remove(struct interp_namer *n, struct interp_cached_method *e)
{
	size_t pos = 0;
	uint64_t *v;

	while ((v = htab_next(&n->methods, method_key(e->pid, e->method), &pos)) != NULL) {
		if (entry_at(v) == e) {
			htab_remove(&n->methods, v);
			break;
		}
	}
	entry_free(e);
}

void interp_cache_flush(struct interp_namer *n)
{
	size_t pos = 0;
	uint64_t *v;

	while ((v = htab_each(&n->methods, &pos, NULL)) != NULL)
		entry_free(entry_at(v));
	htab_clear(&n->methods);
}

/* Rebuild without the entries of pid (all of them go when there is no memory to rebuild). */
void interp_forget(struct interp_namer *n, uint32_t pid)
{
	struct htab kept = { 0 };
	size_t pos = 0;
	uint64_t key, *v;

	if (htab_reserve(&kept, htab_count(&n->methods)) != 0) {
		interp_cache_flush(n);
		return;
	}
	while ((v = htab_each(&n->methods, &pos, &key)) != NULL) {
		if (entry_at(v)->pid == pid)
			entry_free(entry_at(v));
		else
			(void)htab_add(&kept, key, *v); /* cannot fail: reserved */
	}
	htab_fini(&n->methods);
	n->methods = kept;
}
