// SPDX-License-Identifier: MIT
/*
 * interp.c - name interpreted frames from a JVM's metadata read from outside (see interp.h):
 * the entry points. A miss resolves the Method* from scratch (interp_read.c) and caches the
 * name (interp_cache.c); a hit re-reads everything the name was made from in one read call and
 * compares it (interp_reval.c); --lines adds the line of the bcp (interp_lines.c).
 *
 * Invariant: a name is returned only when every pointer and byte it was derived from was read
 * (again) during the current call and is equal to what the name was made from.
 */
#include "interp_namer.h"
#include "fgfree.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>

struct interp_namer *interp_namer_new(const struct vmmem_ops *mem)
{
	struct interp_namer *n = FG_NEW_CONF(struct interp_namer, mem, mem);

	if (!n)
		return NULL;
	htab_init(&n->methods);
	n->reval = calloc(INTERP_BATCH, sizeof(*n->reval));
	n->reval_local = calloc((size_t)INTERP_BATCH * INTERP_REVAL_IOVS, sizeof(*n->reval_local));
	n->reval_remote =
		calloc((size_t)INTERP_BATCH * INTERP_REVAL_IOVS, sizeof(*n->reval_remote));
	if (!n->reval || !n->reval_local || !n->reval_remote) {
		interp_namer_free(n);
		return NULL;
	}
	n->budget = INTERP_MAX_READS;
	return n;
}

void interp_namer_free(struct interp_namer *n)
{
	if (!n)
		return;
	interp_cache_flush(n);
	htab_fini(&n->methods);
	FG_FREE_ALL(n->reval, n->reval_local, n->reval_remote, n);
}

void interp_begin_sample(struct interp_namer *n)
{
	n->budget = INTERP_MAX_READS;
}

void interp_stats(const struct interp_namer *n, struct interp_stats *out)
{
	*out = n->st;
}

/* The cached entry of (pid, method) valid for this call, or NULL with *rv = 0 when there is none.
 */
static struct interp_cached_method *cached_valid(struct interp_namer *n, uint32_t pid,
						 const struct interp_layout *l, uint64_t method,
						 int *rv)
{
	struct interp_cached_method *e = interp_cache_find(n, pid, method);

	*rv = 0;
	if (!e)
		return NULL;
	if (e->valid_gen == n->call_gen) {
		n->st.hits++; /* revalidated (or trusted) by this call's batch */
		return e;
	}
	*rv = e->stale ? -EBADMSG : interp_reval_one(n, l, e);
	if (*rv == 0) {
		n->st.hits++;
		e->stamp = n->cur_stamp;
		return e;
	}
	if (*rv == -EDQUOT)
		return NULL; /* not known to be stale: keep it */
	interp_cache_remove(n, e);
	if (*rv != -EBADMSG) {
		n->st.unreadable++;
		return NULL;
	}
	/* The same Method* now holds something else (unloaded, reused): resolve it again. */
	n->st.changed++;
	*rv = 0;
	return NULL;
}

/* A new cache entry for (pid, method), resolved from scratch. */
static int resolve_and_cache(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
			     uint64_t method, struct interp_cached_method **out)
{
	struct interp_method_read r;
	int rv = interp_read_method(n, pid, l, method, &r);

	if (rv != 0) {
		if (rv == -EBADMSG)
			n->st.invalid++;
		else if (rv != -EDQUOT)
			n->st.unreadable++;
		return rv;
	}
	n->st.misses++;
	if (interp_cache_count(n) + 1 > INTERP_MAX_CACHED) {
		interp_cache_flush(n);
		n->st.evictions++;
	}
	if ((rv = interp_cache_add(n, pid, method, &r, out)) != 0)
		return rv;
	(*out)->stamp = n->cur_stamp;
	return 0;
}

/*
 * Name method with the first of bcps inside its bytecode. frame (NULL: a method, no frame) is
 * the request whose ConstantPoolCache* must be the method's when the layout has proof.
 */
static int name_one(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
		    uint64_t method, const uint64_t *bcps, size_t nbcp, bool want_line,
		    const struct interp_req *frame, const char **name, int *line)
{
	struct interp_cached_method *e;
	uint64_t code;
	int rv, bci = -1;

	n->st.lookups++;
	*line = -1;
	if (!l->names)
		return -ENOTSUP;
	if (pid == 0 || !interp_ptr_ok(method)) {
		n->st.invalid++;
		return -EBADMSG;
	}
	e = cached_valid(n, pid, l, method, &rv);
	if (rv != 0)
		return rv;
	if (!e && (rv = resolve_and_cache(n, pid, l, method, &e)) != 0)
		return rv;
	/* A slot that is not where the layout says, or a frame still being pushed: no name. */
	if (frame && l->proof && (!frame->has_cache || frame->cache != e->src.cache)) {
		n->st.bad_frame++;
		return -ENOEXEC;
	}
	/* Native methods have no bytecode (and a zero bcp): nothing to check or locate. */
	code = e->src.const_method + l->cm_size;
	if (e->src.header.code_size) {
		for (size_t i = 0; i < nbcp && bci < 0; i++)
			if (bcps[i] >= code && bcps[i] < code + e->src.header.code_size)
				bci = (int)(bcps[i] - code);
		if (bci < 0) {
			n->st.bad_bcp++;
			return -ERANGE;
		}
	}
	if (want_line && bci >= 0) {
		interp_lines_load(n, l, e);
		if (e->lines_len &&
		    interp_line_of(e->bytes + e->src.holder_len + e->src.name_len, e->lines_len,
				   l->lines_excluded, (uint32_t)bci, line) == 0)
			n->st.lines++;
	}
	*name = e->name;
	return 0;
}

int interp_name(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
		uint64_t method, const uint64_t *bcps, size_t nbcp, bool want_line,
		const char **name, int *line)
{
	if (++n->call_gen == 0)
		n->call_gen = 1;
	n->cur_stamp = 0;
	n->by_epoch = false;
	return name_one(n, pid, l, method, bcps, nbcp, want_line, NULL, name, line);
}

static void name_many(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
		      struct interp_req *reqs, size_t nreq, bool want_line, uint64_t trust_since,
		      uint64_t stamp)
{
	if (++n->call_gen == 0)
		n->call_gen = 1;
	n->cur_stamp = stamp;
	/* Room for every request now: a flush in the middle would free names handed out. */
	if (interp_cache_count(n) + nreq > INTERP_MAX_CACHED) {
		interp_cache_flush(n);
		n->st.evictions++;
	}
	/* One read call revalidates every cached method of the batch (a partial read leaves the
	 * ones after the failure to be checked one by one). */
	interp_reval_batch(n, pid, l, reqs, nreq, trust_since, stamp);
	for (size_t i = 0; i < nreq; i++)
		reqs[i].rv = name_one(n, pid, l, reqs[i].method, reqs[i].bcps, reqs[i].nbcp,
				      want_line, &reqs[i], &reqs[i].name, &reqs[i].line);
	/* Names of earlier requests stay valid: interp_name only frees an entry it found stale,
	 * and a stale entry is found before its name was handed out in this call. */
}

void interp_name_many(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
		      struct interp_req *reqs, size_t nreq, bool want_line, uint64_t trust_since,
		      uint64_t stamp)
{
	n->by_epoch = false;
	name_many(n, pid, l, reqs, nreq, want_line, trust_since, stamp);
}

void interp_name_many_epoch(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
			    struct interp_req *reqs, size_t nreq, bool want_line, uint64_t epoch,
			    uint64_t stamp)
{
	n->by_epoch = true;
	n->epoch = epoch;
	name_many(n, pid, l, reqs, nreq, want_line, UINT64_MAX, stamp);
}
