// SPDX-License-Identifier: MIT
/*
 * javaframes.c - interpreted frames of a sample: interpreter blob -> frame slots -> names.
 *
 * Per JVM it keeps the checked layout (redone when the agent sends a new VM_LAYOUT) and the
 * interpreter's address range (the "Interpreter" blob, generated once at JVM start; looked for
 * again at most every RESCAN_NS while unknown).
 *
 * Invariant: a frame is named only from this sample's own stack copy and from memory read
 * during this call; anything that does not check out is [unknown] (interpreted), counted.
 */
#include "javaframes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codetab.h"
#include "util.h"

#define MAX_JVMS 64
#define RESCAN_NS 100000000ull
#define ARENA (64u << 10)
#define UNKNOWN_NAME "[unknown] (interpreted)"

struct jvmstate {
	uint32_t pid; /* 0 = free */
	uint32_t layout_gen;
	bool checked; /* layout_gen's layout was looked at */
	bool usable;  /* names and frame slots */
	struct interp_layout l;
	uint64_t lo, hi;    /* interpreter blob, [lo, hi); hi == 0: not found yet */
	uint64_t next_scan; /* when to look for it again */
	const struct codetab *tab;
	uint64_t unload_count;	/* address of the JVM's unloaded-class count, 0 = not known */
	struct interp_epoch ep; /* when each value of that count held */
	uint64_t epoch_t0;	/* when its last read began (0: not read in this drain) */
	int epoch_rv;		/* that read's result */
};

struct javaframes {
	struct interp_namer *namer;
	bool lines;
	struct jvmstate jvms[MAX_JVMS];
	unsigned next_evict;
	struct framewalk_frame walk[STACKAGG_MAX_FRAMES];
	struct interp_req req[STACKAGG_MAX_FRAMES];
	uint32_t req_frame[STACKAGG_MAX_FRAMES]; /* the user frame of each request */
	char arena[ARENA];
	struct javaframes_stats st;
};

struct javaframes *javaframes_new(const struct vmmem_ops *mem, bool lines)
{
	struct javaframes *jf = calloc(1, sizeof(*jf));

	if (!jf)
		return NULL;
	jf->namer = interp_namer_new(mem);
	if (!jf->namer) {
		free(jf);
		return NULL;
	}
	jf->lines = lines;
	return jf;
}

void javaframes_free(struct javaframes *jf)
{
	if (!jf)
		return;
	interp_namer_free(jf->namer);
	free(jf);
}

void javaframes_forget(struct javaframes *jf, uint32_t pid)
{
	for (unsigned i = 0; i < MAX_JVMS; i++)
		if (jf->jvms[i].pid == pid)
			memset(&jf->jvms[i], 0, sizeof(jf->jvms[i]));
	interp_forget(jf->namer, pid);
}

void javaframes_stats(const struct javaframes *jf, struct javaframes_stats *out)
{
	*out = jf->st;
	interp_stats(jf->namer, &out->namer);
}

static struct jvmstate *jvm_of(struct javaframes *jf, uint32_t pid, const struct codetab *tab)
{
	struct jvmstate *free_slot = NULL, *j;

	for (unsigned i = 0; i < MAX_JVMS; i++) {
		if (jf->jvms[i].pid == pid && jf->jvms[i].tab == tab)
			return &jf->jvms[i];
		if (!jf->jvms[i].pid && !free_slot)
			free_slot = &jf->jvms[i];
	}
	if (!free_slot) {
		free_slot = &jf->jvms[jf->next_evict++ % MAX_JVMS];
		interp_forget(jf->namer, free_slot->pid);
	}
	j = free_slot;
	memset(j, 0, sizeof(*j));
	j->pid = pid;
	j->tab = tab;
	interp_forget(jf->namer, pid); /* a new table for pid: a new process */
	return j;
}

/* Bring j's layout and interpreter range up to date with its table. */
static void refresh(struct javaframes *jf, struct jvmstate *j)
{
	uint32_t gen = 0;
	const struct fgp_vm_layout *lay = codetab_layout(j->tab, &gen);
	const char *why = NULL;

	if (!j->checked || gen != j->layout_gen) {
		j->checked = true;
		j->layout_gen = gen;
		j->usable = false;
		interp_forget(jf->namer, j->pid);
		if (!lay) {
			jf->st.layout_why = "the agent sent no VM layout (an older agent)";
		} else if (interp_layout_init(lay, &j->l, &why) != 0 || !j->l.frames) {
			jf->st.layout_why = why;
		} else {
			j->usable = true;
		}
	}
	if (j->hi == 0) {
		uint64_t now = fg_now_ns();

		if (now < j->next_scan)
			return;
		j->next_scan = now + RESCAN_NS;
		for (size_t i = 0, n = codetab_live_count(j->tab); i < n; i++) {
			const struct codeblob *b = codetab_live_at(j->tab, i);

			if (b->kind == CODEBLOB_DYNAMIC && strcmp(b->name, "Interpreter") == 0) {
				j->lo = b->addr;
				j->hi = b->addr + b->size;
				break;
			}
		}
	}
}

/* Copy name (+ ":line") into the arena; NULL when it is full. */
static const char *arena_put(char *arena, size_t *used, const char *name, int line)
{
	size_t left = ARENA - *used;
	int n = line > 0 ? snprintf(arena + *used, left, "%s:%d", name, line)
			 : snprintf(arena + *used, left, "%s", name);
	const char *s = arena + *used;

	if (n < 0 || (size_t)n >= left)
		return NULL;
	*used += (size_t)n + 1;
	return s;
}

/* Count the namer's refusal rv under its reason; any other error is an unreadable frame. */
static void count_refusal(struct javaframes_stats *st, int rv)
{
	const struct {
		int rv;
		uint64_t *count;
	} reasons[] = {
		{ -ERANGE, &st->bad_bcp },     { -ENOEXEC, &st->bad_frame },
		{ -EDQUOT, &st->over_budget }, { -EBADMSG, &st->invalid },
		{ -ESTALE, &st->gc_since }, /* classes were unloaded while it was read */
	};
	uint64_t *count = &st->unreadable;

	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (reasons[i].rv == rv)
			count = reasons[i].count;
	(*count)++;
}

/*
 * First the frames: which of the n are the interpreter's, and their Method* and bcps as naming
 * requests in jf->req (their count in *nreq). Interpreter frames are marked unknown in out
 * until named. Returns how many frames are the interpreter's and have a stack copy.
 */
/* The word at addr in the sample's stack copy or one of the extra copies. */
static bool frame_word(const struct javaframes_in *in, uint64_t addr, uint64_t *out)
{
	if (ustack_word(in->stack, addr, out))
		return true;
	for (uint32_t i = 0; i < in->nr_extra; i++)
		if (ustack_word(&in->extra[i], addr, out))
			return true;
	return false;
}

static uint32_t find_interpreted(struct javaframes *jf, struct jvmstate *j,
				 const struct javaframes_in *in, uint32_t n,
				 struct stackagg_uframe *out, uint32_t *nreq)
{
	uint32_t named = 0;
	bool walked = false;

	for (uint32_t k = 0; k < n; k++) {
		uint64_t pc = k ? in->user[k] - 1 : in->user[k];
		const struct framewalk_frame *w;
		struct interp_req *r;
		uint64_t slot;

		if (!j->hi || pc < j->lo || pc >= j->hi)
			continue;
		jf->st.interp++;
		if (!j->usable) {
			jf->st.no_layout++;
			continue;
		}
		if (!walked && !in->walk) {
			framewalk_fp(in->regs, in->stack, in->user, n, jf->walk);
			walked = true;
		}
		w = in->walk ? &in->walk[k] : &jf->walk[k];
		if (w->state == FRAMEWALK_NO_REGS) {
			jf->st.no_regs++;
			continue; /* no copy at all: leave `Interpreter`, as without this feature */
		}
		named++;
		out[k].name = UNKNOWN_NAME;
		out[k].unresolved = true;
		if (w->state != FRAMEWALK_OK) {
			if (w->state == FRAMEWALK_DESYNC)
				jf->st.desync++;
			else
				jf->st.no_stack++;
			jf->st.unknown++;
			continue;
		}
		r = &jf->req[*nreq];
		*r = (struct interp_req){ 0 };
		if (!frame_word(in, w->fp + 8 * (int64_t)j->l.slot_method, &r->method)) {
			jf->st.no_stack++;
			jf->st.unknown++;
			continue;
		}
		if (k == 0 && in->regs->valid)
			r->bcps[r->nbcp++] = in->regs->r13; /* the leaf's live bcp */
		if (frame_word(in, w->fp + 8 * (int64_t)j->l.slot_bcp, &slot))
			r->bcps[r->nbcp++] = slot;
		if (j->l.proof)
			r->has_cache =
				frame_word(in, w->fp + 8 * (int64_t)j->l.slot_cache, &r->cache);
		jf->req_frame[(*nreq)++] = k;
	}
	return named;
}

/* Read j's unloaded-class count into its window: 0 with *v, -ENOENT (none), a read error. */
static int read_epoch(struct javaframes *jf, struct jvmstate *j, uint32_t pid, uint64_t *v)
{
	uint64_t t0 = fg_now_ns(), t1;
	int rv = interp_unload_count(jf->namer, pid, &j->l, &j->unload_count, v);

	t1 = fg_now_ns();
	j->epoch_t0 = t0 ? t0 : 1;
	j->epoch_rv = rv;
	jf->st.epoch_reads++;
	if (rv == 0)
		interp_epoch_note(&j->ep, t0, *v, t1);
	return rv;
}

void javaframes_drain(struct javaframes *jf)
{
	for (unsigned i = 0; i < MAX_JVMS; i++)
		jf->jvms[i].epoch_t0 = 0;
}

/* All nreq requests stay unknown for a GC or unloading since the sample. */
static bool unknown_since(struct javaframes *jf, uint32_t nreq)
{
	jf->st.gc_since += nreq;
	jf->st.unknown += nreq;
	return false;
}

/*
 * With the JVM's unloaded-class count: metadata is freed only after the count moved, so a sample
 * taken while the count held the value its latest read saw (a read that began after the
 * sample: javaframes_name() sees to it) is named from memory read now, as long as the count
 * still holds that value after the reads (it only grows: unchanged at both ends, it did not
 * move in between). Names read across a move are taken back; cached names tagged with the
 * value need no read at all. -ENOENT when the JVM has no count (the GC clock decides).
 */
static int name_by_epoch(struct javaframes *jf, struct jvmstate *j, const struct javaframes_in *in,
			 uint32_t nreq)
{
	uint64_t stamp, ets, v2, reads;
	struct interp_stats ns;
	int rv;

	if (!j->l.unload_slot || j->epoch_rv == -ENOENT)
		return -ENOENT;
	if (!j->epoch_t0 || j->epoch_rv != 0) {
		jf->st.unreadable += nreq;
		jf->st.unknown += nreq;
		return -EAGAIN;
	}
	/* Unloading since the sample, or no read vouches for its time: nothing to trust. */
	if (interp_epoch_at(&j->ep, in->ts, &ets) != 0 || ets != j->ep.cur) {
		unknown_since(jf, nreq);
		return -EAGAIN;
	}
	stamp = fg_now_ns();
	interp_stats(jf->namer, &ns);
	reads = ns.reads;
	interp_name_many_epoch(jf->namer, in->pid, &j->l, jf->req, nreq, jf->lines, ets, stamp);
	interp_stats(jf->namer, &ns);
	if (ns.reads == reads)
		return 0; /* every name trusted under the sample's epoch */
	rv = read_epoch(jf, j, in->pid, &v2);
	interp_epoch_settle(jf->namer, in->pid, jf->req, nreq, rv == 0 && v2 == ets);
	return 0;
}

/*
 * Then the names. Metadata is freed only by class unloading, inside a GC. With the JVM's
 * unloaded-class count, see name_by_epoch(). Without it, with the agent's GC clock (read before
 * and, if memory was read, after), a sample taken before a GC that has begun since is not named
 * at all, and cached methods read since the last GC began are trusted without a read; without
 * the clock every cached method is re-read. False when the requests must stay unknown
 * (counted).
 */
static bool name_requests(struct javaframes *jf, struct jvmstate *j, const struct javaframes_in *in,
			  uint32_t nreq)
{
	uint64_t stamp, start = 0, end = 0, s2, e2, reads;
	int rv = name_by_epoch(jf, j, in, nreq);
	struct interp_stats ns;

	if (rv != -ENOENT)
		return rv == 0;
	stamp = fg_now_ns();
	rv = interp_gc_clock(jf->namer, in->pid, &j->l, &start, &end);
	if (rv == 0 && (start > in->ts || start > end))
		return unknown_since(jf, nreq);
	if (rv != 0 && rv != -ENOENT) {
		jf->st.unreadable += nreq;
		jf->st.unknown += nreq;
		return false;
	}
	interp_stats(jf->namer, &ns);
	reads = ns.reads;
	interp_name_many(jf->namer, in->pid, &j->l, jf->req, nreq, jf->lines,
			 rv == 0 ? start : UINT64_MAX, stamp);
	interp_stats(jf->namer, &ns);
	if (rv == 0 && ns.reads != reads &&
	    (interp_gc_clock(jf->namer, in->pid, &j->l, &s2, &e2) != 0 || s2 != start || s2 > e2))
		return unknown_since(jf, nreq); /* a GC began while we read: half old, half new */
	return true;
}

uint32_t javaframes_name(struct javaframes *jf, const struct javaframes_in *in,
			 struct stackagg_uframe *out)
{
	uint32_t n = in->nr_user < STACKAGG_MAX_FRAMES ? in->nr_user : STACKAGG_MAX_FRAMES;
	struct jvmstate *j;
	uint32_t named, nreq = 0;
	size_t used = 0;

	for (uint32_t k = 0; k < in->nr_user; k++)
		out[k] = (struct stackagg_uframe){ 0 };
	if (!in->tab || n == 0)
		return 0;
	jf->st.samples++;
	j = jvm_of(jf, in->pid, in->tab);
	refresh(jf, j);
	interp_begin_sample(jf->namer);
	/* The count is read once per drain and JVM, and again for a sample taken after that
	 * read began: a sample is named only under a read that began after it. */
	if (j->usable && j->l.unload_slot && (!j->epoch_t0 || j->epoch_t0 <= in->ts)) {
		uint64_t v;

		(void)read_epoch(jf, j, in->pid, &v);
	}
	named = find_interpreted(jf, j, in, n, out, &nreq);
	if (nreq && !name_requests(jf, j, in, nreq))
		return named;
	for (uint32_t i = 0; i < nreq; i++) {
		const struct interp_req *r = &jf->req[i];
		const char *name = NULL;

		if (r->rv != 0)
			count_refusal(&jf->st, r->rv);
		if (r->rv == 0 && (name = arena_put(jf->arena, &used, r->name, r->line)) != NULL) {
			jf->st.named++;
			if (r->line > 0)
				jf->st.lines++;
			out[jf->req_frame[i]].name = name;
			out[jf->req_frame[i]].unresolved = false;
		} else {
			jf->st.unknown++;
		}
	}
	return named;
}
