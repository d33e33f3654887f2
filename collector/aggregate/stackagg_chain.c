// SPDX-License-Identifier: MIT
/*
 * stackagg_chain.c - a sample's call chain, or a stack named by the caller, made into frame ids
 * and counted in the tables of stackagg.c.
 *
 * Addresses are resolved through two direct-mapped caches (kernel; pid+native), cleared when
 * mappings change, so a hot address costs one hash probe instead of a symbol search. JIT
 * frames are named by the code table at the sample's time, so samples with JIT candidates wait
 * in a FIFO of u64 words until stackagg_settle():
 *   [ts] [pid | n << 32] [weight] [tid] n x entry,  entry = frame id, or PENDING_JIT | ret << 62 |
 * address.
 * A JIT miss may wait once more (opts.retry_misses), for the end of the recording.
 */
#include "stackagg_priv.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "array.h"
#include "fghash.h"

/* ---- caches ---------------------------------------------------------------------------- */

void stackagg_maps_changed(struct stackagg *a)
{
	memset(a->ncache, 0, CACHE_SIZE * sizeof(*a->ncache));
}

void stackagg_jit_changed(struct stackagg *a)
{
	if (++a->jit_gen == 0) { /* wrapped: no stale entry may match generation 0 again */
		memset(a->pcache, 0, CACHE_SIZE * sizeof(*a->pcache));
		a->jit_gen = 1;
	}
}

/* sagg_intern_str() of a JIT name (with ":line" when line > 0), through the pointer cache. */
static int64_t intern_jit(struct stackagg *a, enum stackagg_kind kind, const char *name,
			  uint16_t line)
{
	uint64_t key = fg_mix64((uint64_t)(uintptr_t)name ^ kind ^ ((uint64_t)line << 40));
	struct ptrent *e = &a->pcache[key & (CACHE_SIZE - 1)];
	char buf[STACKAGG_MAX_NAME + 8];
	int64_t id;

	if (e->p == name && e->gen == a->jit_gen && e->kind == kind && e->line == line)
		return e->id;
	if (line == 0) {
		id = sagg_intern_str(a, kind, name);
	} else {
		/* A name at the length cap loses its tail, not its line. */
		int n = snprintf(buf, sizeof(buf), "%.*s:%u", STACKAGG_MAX_NAME - 8, name,
				 (unsigned)line);

		id = n > 0 ? sagg_intern(a, kind, false, buf, (size_t)n) : -EINVAL;
	}
	if (id >= 0)
		*e = (struct ptrent){ .p = name,
				      .id = (uint32_t)id,
				      .gen = a->jit_gen,
				      .line = line,
				      .kind = (uint8_t)kind };
	return id;
}
/* ---- resolution ------------------------------------------------------------------------ */

static void note_frame(struct stackagg *a, enum stackagg_class c, bool unresolved)
{
	a->st.frames[c]++;
	if (unresolved)
		a->st.unresolved[c]++;
}

/* The st.unnamed slot (1-based) of library lib, taken when new; 0 when the table is full. */
static uint8_t unnamed_lib(struct stackagg *a, const char *lib)
{
	uint32_t i;

	for (i = 0; i < a->st.n_unnamed_libs; i++)
		if (strncmp(a->st.unnamed[i].lib, lib, STACKAGG_LIB_NAME - 1) == 0)
			return (uint8_t)(i + 1);
	if (i == STACKAGG_UNNAMED_LIBS)
		return 0;
	snprintf(a->st.unnamed[i].lib, STACKAGG_LIB_NAME, "%s", lib);
	a->st.n_unnamed_libs++;
	return (uint8_t)(i + 1);
}

/* A native frame counted: its library's tally too when it has no name. */
static void note_native(struct stackagg *a, const struct frame *f)
{
	note_frame(a, STACKAGG_CLASS_NATIVE, f->unresolved);
	if (f->unresolved && f->lib)
		a->st.unnamed[f->lib - 1].frames++;
}

static int64_t resolve_kernel(struct stackagg *a, uint64_t addr)
{
	uint64_t key = fg_mix64(addr ^ 0x6b65726eull);
	struct cacheent *c = &a->kcache[key & (CACHE_SIZE - 1)];
	const char *name = NULL, *module = NULL;
	int64_t id;

	if (c->used && c->addr == addr) {
		note_frame(a, STACKAGG_CLASS_KERNEL, a->frames[c->id].unresolved);
		return c->id;
	}
	if (a->r.kernel && a->r.kernel(a->r.ctx, addr, &name, &module) == 0 && name)
		id = sagg_intern_str(a, STACKAGG_KERNEL, name);
	else
		id = sagg_intern_unknown(a, STACKAGG_KERNEL, module, "kernel");
	if (id < 0)
		return id;
	*c = (struct cacheent){ .key = key, .addr = addr, .id = (uint32_t)id, .used = 1 };
	note_frame(a, STACKAGG_CLASS_KERNEL, a->frames[id].unresolved);
	return id;
}

/* A frame id, or CACHE_JIT for an address to look up in the code table later. */
static int64_t resolve_native(struct stackagg *a, uint32_t pid, uint64_t addr, bool ret)
{
	uint64_t key = fg_mix64(addr ^ ((uint64_t)pid << 40) ^ ret);
	struct cacheent *c = &a->ncache[key & (CACHE_SIZE - 1)];
	struct stackagg_nsym ns = { 0 };
	int64_t id;

	if (c->used && c->addr == addr && c->pid == pid && c->ret == ret) {
		if (c->id != CACHE_JIT)
			note_native(a, &a->frames[c->id]);
		return c->id;
	}
	if (!a->r.native || a->r.native(a->r.ctx, pid, addr, ret, &ns) != 0)
		ns = (struct stackagg_nsym){ .jit_candidate = false };
	if (ns.jit_candidate) {
		id = CACHE_JIT;
	} else {
		if (ns.name)
			id = sagg_intern(a, STACKAGG_NATIVE, ns.unresolved, ns.name,
					 strlen(ns.name));
		else
			id = sagg_intern_unknown(a, STACKAGG_NATIVE, ns.module, "unmapped");
		if (id < 0)
			return id;
		if (a->frames[id].unresolved && ns.module && ns.module[0] && !a->frames[id].lib)
			a->frames[id].lib = unnamed_lib(a, ns.module);
		note_native(a, &a->frames[id]);
	}
	*c = (struct cacheent){
		.key = key, .addr = addr, .pid = pid, .id = (uint32_t)id, .ret = ret, .used = 1
	};
	return id;
}

/*
 * Append the frames of JIT candidate addr to buf at *n (outermost first). Returns 0 or -errno.
 */
static int resolve_jit(struct stackagg *a, uint32_t pid, uint64_t addr, uint64_t ts, bool ret,
		       uint32_t *buf, size_t *n, bool *missed)
{
	const char *names[STACKAGG_MAX_INLINE];
	uint16_t lines[STACKAGG_MAX_INLINE] = { 0 };
	enum stackagg_jit_kind kind = STACKAGG_JIT_COMPILED;
	int k = -ENOENT;
	int64_t id;

	if (a->r.jit)
		k = a->r.jit(a->r.ctx, pid, addr, ts, ret, a->opts.no_inline, names,
			     STACKAGG_MAX_INLINE, &kind, a->opts.lines ? lines : NULL);
	if (k > (int)STACKAGG_MAX_INLINE)
		k = STACKAGG_MAX_INLINE;
	if (k <= 0) {
		/* No code table: anonymous code of a non-JVM (or a JVM without the agent). */
		bool jvm = k == 0;

		if (jvm)
			*missed = true;

		id = sagg_intern_unknown(a, jvm ? STACKAGG_JAVA : STACKAGG_NATIVE,
					 jvm ? "jit" : NULL, "anon");
		if (id < 0)
			return (int)id;
		note_frame(a, jvm ? STACKAGG_CLASS_JAVA : STACKAGG_CLASS_NATIVE, true);
		if (*n >= STACKAGG_MAX_FRAMES)
			return -E2BIG;
		buf[(*n)++] = (uint32_t)id;
		return 0;
	}
	if (kind == STACKAGG_JIT_DYNAMIC) {
		id = intern_jit(a, STACKAGG_STUB, names[0], 0);
		if (id < 0)
			return (int)id;
		note_frame(a, STACKAGG_CLASS_JAVA, false);
		if (*n >= STACKAGG_MAX_FRAMES)
			return -E2BIG;
		buf[(*n)++] = (uint32_t)id;
		return 0;
	}
	/* names[k - 1] is the compiled method; the ones before it were inlined into it. */
	for (int i = k - 1; i >= (a->opts.no_inline ? k - 1 : 0); i--) {
		enum stackagg_kind fk = i == k - 1 ? STACKAGG_JAVA : STACKAGG_INLINED;

		id = intern_jit(a, fk, names[i], a->opts.lines ? lines[i] : 0);
		if (id < 0)
			return (int)id;
		note_frame(a, STACKAGG_CLASS_JAVA, false);
		if (a->opts.lines && lines[i])
			a->st.jit_lines++;
		else if (a->opts.lines)
			a->st.jit_no_line++;
		if (fk == STACKAGG_INLINED)
			a->st.inlined++;
		if (*n >= STACKAGG_MAX_FRAMES)
			return -E2BIG;
		buf[(*n)++] = (uint32_t)id;
	}
	return 0;
}

/* ---- pending samples ------------------------------------------------------------------- */

static int pend_push(struct stackagg *a, uint64_t ts, uint64_t pidv, uint64_t tidv, uint64_t w,
		     const uint64_t *e, size_t n)
{
	size_t need = n + PEND_HDR;

	if ((a->pend_len - a->pend_head + a->retry_len + need) * sizeof(uint64_t) >
	    STACKAGG_MAX_PENDING)
		return -E2BIG;
	if (a->pend_len + need > a->pend_cap) {
		/* Compact first: settled words at the front are dead. */
		if (a->pend_head) {
			memmove(a->pend, a->pend + a->pend_head,
				(a->pend_len - a->pend_head) * sizeof(uint64_t));
			a->pend_len -= a->pend_head;
			a->pend_head = 0;
		}
		if (ARRAY_GROW(a->pend, a->pend_cap, a->pend_len + need) != 0)
			return -ENOMEM;
	}
	a->pend[a->pend_len++] = ts;
	a->pend[a->pend_len++] = pidv | ((uint64_t)n << 32);
	a->pend[a->pend_len++] = w;
	a->pend[a->pend_len++] = tidv;
	memcpy(&a->pend[a->pend_len], e, n * sizeof(*e));
	a->pend_len += n;
	return 0;
}

/*
 * Resolve and count the pending record at rec (ts, pid|n, weight, tid|aux, n entries). A record
 * with a JIT miss is not counted when it may be retried (retry_misses, not final): it goes to the
 * retry list for the end of the recording, when the code table has every late event, and the frame
 * statistics of this attempt are rolled back. Returns the record's length in words.
 */
static size_t settle_rec(struct stackagg *a, const uint64_t *rec, bool final, bool retried)
{
	uint64_t ts = rec[0];
	uint32_t pid = (uint32_t)rec[1];
	size_t ne = PEND_N(rec[1]);
	uint64_t w = rec[2];
	uint32_t tid = (uint32_t)rec[3];
	uint64_t aux = rec[3] >> PEND_AUX_SHIFT;
	const uint64_t *e = &rec[PEND_HDR];
	struct stackagg_stats before = a->st;
	bool missed = false;
	size_t n = 0, vat = SIZE_MAX, pin = SIZE_MAX;
	int64_t vid = -1, pid_pin = -1;
	int rv = 0;

	if ((rec[1] & PEND_VROOT) && a->r.vroot) {
		const char *root = a->r.vroot(a->r.vctx, pid, tid, ts);

		if (root && (vid = sagg_intern_str(a, STACKAGG_ROOT, root)) >= 0) {
			vat = (rec[1] & PEND_VROOT_AT) ? 1 : 0;
			pin = (rec[1] >> PEND_PIN_SHIFT) & PEND_PIN_MASK;
			pin = pin ? pin - 1 : SIZE_MAX;
			if (pin != SIZE_MAX &&
			    (pid_pin = sagg_intern(a, STACKAGG_STUB, false, STACKAGG_PINNED,
						   sizeof(STACKAGG_PINNED) - 1)) < 0)
				pin = SIZE_MAX;
		}
	}
	for (size_t i = 0; i < ne && rv == 0; i++) {
		if (i == pin && n < STACKAGG_MAX_FRAMES)
			a->buf[n++] = (uint32_t)pid_pin;
		if (i == vat) {
			/* the virtual thread's root in place of the carrier's */
			a->buf[n++] = (uint32_t)vid;
		} else if (e[i] & PENDING_JIT) {
			rv = resolve_jit(a, pid, e[i] & PENDING_ADDR_MASK, ts,
					 (e[i] & PENDING_RET) != 0, a->buf, &n, &missed);
		} else if (n < STACKAGG_MAX_FRAMES) {
			a->buf[n++] = (uint32_t)e[i];
		} else {
			rv = -E2BIG;
		}
	}
	if (missed && !final && a->opts.retry_misses) {
		size_t words = a->retry_len + PEND_HDR + ne;

		if ((words + a->pend_len - a->pend_head) * sizeof(uint64_t) <=
		    STACKAGG_MAX_PENDING) {
			if (ARRAY_GROW(a->retry, a->retry_cap, words) == 0) {
				memcpy(&a->retry[a->retry_len], rec,
				       (PEND_HDR + ne) * sizeof(*rec));
				a->retry_len = words;
				before.retried++;
				a->st = before; /* this attempt did not happen */
				return PEND_HDR + ne;
			}
		}
		a->st.forced++; /* no room to wait: counted with what we know now */
	}
	if (retried && !missed)
		a->st.late_resolved++;
	if (rv == -E2BIG) {
		a->st.truncated++;
		rv = 0;
	}
	/* rooted under a virtual thread: its weight is that thread's mounted time */
	if (rv == 0 && vid >= 0 && a->r.vstratum && n && (a->buf[n - 1] & STRATUM_BIT))
		a->buf[n - 1] =
			STRATUM_BIT |
			(a->r.vstratum(a->r.vctx, a->buf[n - 1] & ~STRATUM_BIT, w) & ~STRATUM_BIT);
	if (rv == 0)
		rv = sagg_count_stack(a, a->buf, n, w, aux, ts, tid);
	if (rv != 0)
		a->st.dropped++;
	a->st.pending--;
	return PEND_HDR + ne;
}

/* Settle the record at the head of the pending FIFO. */
static void settle_one(struct stackagg *a, bool final)
{
	a->pend_head += settle_rec(a, &a->pend[a->pend_head], final, false);
	if (a->pend_head == a->pend_len)
		a->pend_head = a->pend_len = 0;
}

size_t stackagg_settle(struct stackagg *a, uint64_t upto)
{
	bool final = upto == UINT64_MAX;
	size_t done = 0;

	while (a->pend_head < a->pend_len && a->pend[a->pend_head] <= upto) {
		const uint64_t *rec = &a->pend[a->pend_head];

		/* A carrier's sample waits for the mounts around its time, in its place. */
		if (!final && (rec[1] & PEND_VROOT) && a->r.vready &&
		    !a->r.vready(a->r.vctx, (uint32_t)rec[1], (uint32_t)rec[3], rec[0]))
			break;
		settle_one(a, final);
		done++;
	}
	if (final && a->retry_len) {
		/* The end: JIT misses get their second and last lookup, with the whole history. */
		for (size_t off = 0; off < a->retry_len; done++)
			off += settle_rec(a, &a->retry[off], true, true);
		a->retry_len = 0;
	}
	return done;
}

bool stackagg_next_pending(const struct stackagg *a, uint64_t *ts)
{
	if (a->pend_head >= a->pend_len)
		return false;
	*ts = a->pend[a->pend_head];
	return true;
}

/* ---- adding a sample ------------------------------------------------------------------- */

/* The pending entries of the sample being added (a->ebuf), root first. */
struct entries {
	uint64_t *e;
	size_t n, njit;
	bool truncated;
	uint64_t vroot; /* PEND_VROOT and its places, or 0 */
};

static inline void push(struct entries *en, uint64_t v)
{
	if (en->n < STACKAGG_MAX_FRAMES)
		en->e[en->n++] = v;
	else
		en->truncated = true;
}

/* The process (multi-target sessions) and thread root frames. 0 or a negative errno. */
static int64_t push_roots(struct stackagg *a, const struct stackagg_sample *s, struct entries *en)
{
	int64_t id;

	if (s->process && *s->process) {
		id = sagg_intern_str(a, STACKAGG_ROOT, s->process);
		if (id < 0)
			return id;
		push(en, (uint64_t)id);
	}
	if (a->opts.no_thread)
		return 0;
	if (s->thread && *s->thread) {
		id = sagg_intern_str(a, STACKAGG_ROOT, s->thread);
	} else {
		char b[32];

		snprintf(b, sizeof(b), "[tid %u]", s->tid);
		id = sagg_intern_str(a, STACKAGG_ROOT, b);
	}
	if (id < 0)
		return id;
	push(en, (uint64_t)id);
	return 0;
}

/*
 * The user chain, outermost first: interpreted frames named by the caller, native frames
 * resolved now, JIT candidates left pending. 0 or a negative errno.
 */
static int64_t push_user(struct stackagg *a, const struct stackagg_sample *s, struct entries *en)
{
	int64_t id;

	for (uint32_t i = s->nr_user; i-- > 0;) {
		uint64_t addr = s->user[i];
		bool ret = i != 0;

		/* A zero or a kernel-half address in a user chain is junk from a broken unwind. */
		if (addr == 0 || addr >= (1ull << 62))
			continue;
		if (s->uframes && s->uframes[i].name && s->uframes[i].marker) {
			/* Where an unwind stopped short ("[truncated]"): a frame of its own kind.
			 */
			id = sagg_intern(a, STACKAGG_STUB, true, s->uframes[i].name,
					 strlen(s->uframes[i].name));
			if (id < 0)
				return id;
			a->frames[id].mark = MARK_STOP;
			a->st.markers++;
			push(en, (uint64_t)id);
			continue;
		}
		if (s->uframes && s->uframes[i].name) {
			const struct stackagg_uframe *u = &s->uframes[i];

			id = sagg_intern(a, STACKAGG_INTERP, u->unresolved, u->name,
					 strlen(u->name));
			if (id < 0)
				return id;
			note_frame(a, STACKAGG_CLASS_JAVA, u->unresolved);
			a->st.interpreted++;
			push(en, (uint64_t)id);
			continue;
		}
		id = resolve_native(a, s->pid, addr, ret);
		if (id < 0)
			return id;
		if (s->user_rooted && i == s->nr_user - 1 && id != CACHE_JIT &&
		    a->frames[id].name[0] != '[')
			a->frames[id].root = true; /* by address ("libc.so.6+0x112f97") or name */
		if (id == CACHE_JIT) {
			push(en, PENDING_JIT | (ret ? PENDING_RET : 0) | addr);
			en->njit++;
		} else {
			push(en, (uint64_t)id);
		}
	}
	return 0;
}

/* Count a resolved sample now, or queue one with JIT frames for settling. 0 or -errno. */
static int finish_sample(struct stackagg *a, const struct stackagg_sample *s,
			 const struct entries *en)
{
	uint64_t aux = s->aux < UINT32_MAX ? s->aux : UINT32_MAX;
	uint64_t tidv = s->tid | aux << PEND_AUX_SHIFT;
	int rv;

	if (en->njit == 0 && !en->vroot) {
		for (size_t i = 0; i < en->n; i++)
			a->buf[i] = (uint32_t)en->e[i];
		rv = sagg_count_stack(a, a->buf, en->n, s->weight ? s->weight : 1, aux, s->ts,
				      s->tid);
		if (rv != 0)
			a->st.dropped++;
		return rv;
	}
	a->st.deferred++;
	rv = pend_push(a, s->ts, s->pid | en->vroot, tidv, s->weight ? s->weight : 1, en->e, en->n);
	if (rv == -E2BIG && a->pend_head < a->pend_len) {
		/* Over the pending cap: settle the oldest early (with the history we have). */
		while (a->pend_head < a->pend_len &&
		       (a->pend_len - a->pend_head + en->n + PEND_HDR) * sizeof(uint64_t) >
			       STACKAGG_MAX_PENDING) {
			settle_one(a, true);
			a->st.forced++;
		}
		rv = pend_push(a, s->ts, s->pid | en->vroot, tidv, s->weight ? s->weight : 1, en->e,
			       en->n);
	}
	if (rv != 0) {
		a->st.dropped++;
		return rv;
	}
	a->st.pending++;
	return 0;
}

int stackagg_sample(struct stackagg *a, const struct stackagg_sample *s)
{
	struct entries en = { .e = a->ebuf };
	int64_t id;

	a->st.samples++;
	if ((id = push_roots(a, s, &en)) < 0)
		goto drop;
	if (s->vroot && a->r.vroot && !a->opts.no_thread && en.n)
		en.vroot = PEND_VROOT | (en.n > 1 ? PEND_VROOT_AT : 0);
	if (s->mark) {
		/* In place of the stack (none was taken): a frame that says so. */
		id = sagg_intern(a, STACKAGG_STUB, true, s->mark, strlen(s->mark));
		if (id < 0)
			goto drop;
		a->frames[id].mark = MARK_NOSTACK;
		a->st.markers++;
		push(&en, (uint64_t)id);
	}
	if ((id = push_user(a, s, &en)) < 0)
		goto drop;
	if (!a->opts.no_kernel) {
		for (uint32_t i = s->nr_kernel; i-- > 0;) {
			id = resolve_kernel(a, s->kernel[i]);
			if (id < 0)
				goto drop;
			push(&en, (uint64_t)id);
		}
	}
	if (s->leaf) {
		id = s->leaf_stub ? sagg_intern(a, STACKAGG_STUB, false, s->leaf, strlen(s->leaf))
				  : sagg_intern_str(a, STACKAGG_KERNEL, s->leaf);
		if (id < 0)
			goto drop;
		if (en.vroot && s->pin && en.n < STACKAGG_MAX_FRAMES)
			en.vroot |= (uint64_t)(en.n + 1) << PEND_PIN_SHIFT;
		push(&en, (uint64_t)id);
	}
	if (s->stratum && !en.truncated) {
		if (en.n >= STACKAGG_MAX_FRAMES)
			en.n--; /* the stratum counts more than the innermost frame */
		push(&en, STRATUM_BIT | (s->stratum & ~STRATUM_BIT));
	}
	if (en.truncated)
		a->st.truncated++;
	return finish_sample(a, s, &en);
drop:
	a->st.dropped++;
	return (int)id;
}

/* ---- stacks named by the caller ------------------------------------------------------- */

/* A Java frame as the CPU profiles label a compiled one: name (":LINE" with opts.lines). */
static int64_t intern_named(struct stackagg *a, const struct stackagg_nframe *f)
{
	char buf[STACKAGG_MAX_NAME + 16];
	size_t len = f->len < STACKAGG_MAX_NAME ? f->len : STACKAGG_MAX_NAME;
	int n;

	if (!a->opts.lines || f->line <= 0)
		return sagg_intern(a, STACKAGG_JAVA, false, f->name, len);
	/* A name at the length cap loses its tail, not its line. */
	n = snprintf(buf, sizeof(buf), "%.*s:%d",
		     (int)(len < STACKAGG_MAX_NAME - 12 ? len : STACKAGG_MAX_NAME - 12), f->name,
		     (int)f->line);
	return n > 0 ? sagg_intern(a, STACKAGG_JAVA, false, buf, (size_t)n) : -EINVAL;
}

/* A frame as folded text labels it: its kind from its suffix. */
static int64_t intern_label(struct stackagg *a, const struct stackagg_nframe *f)
{
	static const enum stackagg_kind kinds[] = { STACKAGG_JAVA, STACKAGG_INLINED,
						    STACKAGG_KERNEL, STACKAGG_INTERP };
	size_t len = f->len;

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if (len > 4 && !memcmp(f->name + len - 4, stackagg_suffix(kinds[k]), 4))
			return sagg_intern(a, kinds[k], false, f->name,
					   len - 4 < STACKAGG_MAX_NAME ? len - 4
								       : STACKAGG_MAX_NAME);
	return sagg_intern(a, STACKAGG_NATIVE, false, f->name,
			   len < STACKAGG_MAX_NAME ? len : STACKAGG_MAX_NAME);
}

int stackagg_named_ids(struct stackagg *a, const struct stackagg_named *s, uint32_t *ids, size_t *n)
{
	struct entries en = { .e = a->ebuf };
	struct stackagg_sample roots = { .tid = s->tid,
					 .process = s->process,
					 .thread = s->thread };
	int64_t id;

	if ((id = push_roots(a, &roots, &en)) < 0)
		return (int)id;
	if (s->truncated) {
		id = sagg_intern(a, STACKAGG_STUB, true, "[truncated]", 11);
		if (id < 0)
			return (int)id;
		a->frames[id].mark = MARK_STOP;
		a->st.markers++;
		push(&en, (uint64_t)id);
	}
	for (size_t i = 0; i < s->n; i++) {
		if ((id = s->labelled ? intern_label(a, &s->frames[i])
				      : intern_named(a, &s->frames[i])) < 0)
			return (int)id;
		note_frame(a, STACKAGG_CLASS_JAVA, false);
		if (a->opts.lines && s->frames[i].line > 0)
			a->st.jit_lines++;
		else if (a->opts.lines)
			a->st.jit_no_line++;
		push(&en, (uint64_t)id);
	}
	if (s->leaf) {
		if ((id = sagg_intern(a, STACKAGG_STUB, false, s->leaf, strlen(s->leaf))) < 0)
			return (int)id;
		if (en.n == STACKAGG_MAX_FRAMES)
			en.n--; /* the leaf says more than the outermost-but-one frame */
		en.e[en.n++] = (uint64_t)id;
	}
	if (en.truncated)
		a->st.truncated++;
	for (size_t i = 0; i < en.n; i++)
		ids[i] = (uint32_t)en.e[i];
	*n = en.n;
	return 0;
}

int stackagg_named(struct stackagg *a, const struct stackagg_named *s, uint64_t w, uint64_t aux)
{
	size_t n = 0;
	int rv = stackagg_named_ids(a, s, a->buf, &n);

	if (rv != 0) {
		a->st.samples++;
		a->st.dropped++;
		return rv;
	}
	return stackagg_add_ids_at(a, a->buf, n, w, aux, s->ts, s->tid);
}
