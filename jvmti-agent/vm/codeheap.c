// SPDX-License-Identifier: MIT
/*
 * codeheap.c - CodeBlob lookup through the CodeHeap segment map, and its frame facts.
 *
 * HotSpot (codeHeap.cpp): segment i of a heap covers [low + i << log2, low + (i+1) << log2);
 * segmap[i] is 0 for the first segment of a block, 0xff for an unused one, else the number of
 * segments to step back (repeatedly) to reach the block's first segment. The block starts with
 * a HeapBlock header; the CodeBlob follows it.
 *
 * Invariant: see codeheap.h; reads are bounded (CODEHEAP_MAX_HEAPS heaps, MAX_HOPS steps).
 */
#include "codeheap.h"

#include <errno.h>
#include <stdatomic.h>
#include <pthread.h>
#include <string.h>

#include "selfmem.h"

#define MAX_HOPS 4096
#define OFF_MAX 4096u

/* Copy n bytes of our own memory at src, or -EFAULT: never a SIGSEGV in the JVM. */
static int peek(void *dst, uint64_t src, size_t n)
{
	return selfmem_read(dst, src, n) == (ssize_t)n ? 0 : -EFAULT;
}

static int peek64(uint64_t src, uint64_t *v)
{
	return peek(v, src, 8);
}

static int peek32(uint64_t src, uint32_t *v)
{
	return peek(v, src, 4);
}

/*
 * What a frame read may copy without a round trip once the layout has proven itself
 * (codeheap.h, trusted): heap bytes [lo, end) and segment map bytes [seg, seg_end).
 */
struct direct {
	uint64_t lo, end, seg, seg_end;
};

static bool within(uint64_t lo, uint64_t end, uint64_t src, size_t n)
{
	return src >= lo && src <= end && n <= end - src;
}

/* d vouches for the whole of [src, src + n) (d NULL: never). */
static bool direct_has(const struct direct *d, uint64_t src, size_t n)
{
	return d && (within(d->lo, d->end, src, n) || within(d->seg, d->seg_end, src, n));
}

/* peek(), or a plain copy where d vouches for the whole range. */
static int peek_in(const struct direct *d, void *dst, uint64_t src, size_t n)
{
	if (direct_has(d, src, n)) {
		memcpy(dst, (const void *)(uintptr_t)src, n);
		return 0;
	}
	return peek(dst, src, n);
}

static bool field(const struct vmstructs *vs, const char *type, const char *name, uint32_t *off,
		  const char **ts)
{
	uint64_t o;

	if (vmstructs_field(vs, type, name, &o, ts) != 0 || o >= OFF_MAX)
		return false;
	*off = (uint32_t)o;
	return true;
}

/* A code blob kind by the name HotSpot gives it. */
struct kind_name {
	const char *name;
	enum fgp_cf_kind kind;
};

static const struct kind_name kind_names[] = {
	{ "CodeBlobKind::Nmethod", FGP_CF_NMETHOD },
	{ "CodeBlobKind::Buffer", FGP_CF_BUFFER },
	{ "CodeBlobKind::Adapter", FGP_CF_ADAPTER },
	{ "CodeBlobKind::Vtable", FGP_CF_VTABLE },
	{ "CodeBlobKind::MHAdapter", FGP_CF_MH_ADAPTER },
	{ "CodeBlobKind::RuntimeStub", FGP_CF_RUNTIME_STUB },
	{ "CodeBlobKind::Deoptimization", FGP_CF_DEOPTIMIZATION },
	{ "CodeBlobKind::Safepoint", FGP_CF_SAFEPOINT },
	{ "CodeBlobKind::Exception", FGP_CF_EXCEPTION },
	{ "CodeBlobKind::UncommonTrap", FGP_CF_UNCOMMON_TRAP },
	{ "CodeBlobKind::Upcall", FGP_CF_UPCALL },
};

/* JDK < 23 has no kind field: its singleton blobs are known by their names. */
static const struct kind_name blob_names[] = {
	{ "DeoptimizationBlob", FGP_CF_DEOPTIMIZATION },
	{ "UncommonTrapBlob", FGP_CF_UNCOMMON_TRAP },
	{ "ExceptionBlob", FGP_CF_EXCEPTION },
	{ "SafepointBlob", FGP_CF_SAFEPOINT },
	{ "vtable chunks", FGP_CF_VTABLE },
	{ "I2C/C2I adapters", FGP_CF_ADAPTER },
	{ "MethodHandles adapters", FGP_CF_MH_ADAPTER },
	{ "Interpreter", FGP_CF_BUFFER },
};

static void build_kinds(const struct vmstructs *vs, struct codeheap *h)
{
	const char *ts = NULL;

	if (!field(vs, "CodeBlob", "_kind", &h->cb_kind, &ts))
		return;
	for (size_t i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++) {
		int32_t v;

		if (vmstructs_int(vs, kind_names[i].name, &v) == 0 && v >= 0 &&
		    v < (int32_t)sizeof(h->kinds))
			h->kinds[v] = (uint8_t)kind_names[i].kind;
	}
	h->has_kind = true;
}

static void build_deopt(const struct vmstructs *vs, struct codeheap *h)
{
	h->has_deopt = field(vs, "nmethod", "_orig_pc_offset", &h->nm_orig_pc, NULL);
	h->no_deopt_mh = false;
	if (field(vs, "CompiledMethod", "_deopt_handler_begin", &h->nm_deopt, NULL) &&
	    field(vs, "CompiledMethod", "_deopt_mh_handler_begin", &h->nm_deopt_mh, NULL))
		h->deopt_abs = true;
	else if ((field(vs, "nmethod", "_deopt_handler_offset", &h->nm_deopt, NULL) &&
		  field(vs, "nmethod", "_deopt_mh_handler_offset", &h->nm_deopt_mh, NULL)) ||
		 /* JDK 8: the same offsets from the blob under other names */
		 (field(vs, "nmethod", "_deoptimize_offset", &h->nm_deopt, NULL) &&
		  field(vs, "nmethod", "_deoptimize_mh_offset", &h->nm_deopt_mh, NULL)))
		h->deopt_abs = false;
	else if (field(vs, "nmethod", "_deopt_handler_entry_offset", &h->nm_deopt, NULL)) {
		/* JDK 26: the address a deoptimised frame returns to, and no MH handler */
		h->deopt_abs = false;
		h->no_deopt_mh = true;
	} else
		h->has_deopt = false;
}

static uint32_t field_end(uint32_t now, uint32_t off, uint32_t width)
{
	return off + width > now ? off + width : now;
}

/* How many bytes from a block's start hold the header and every CodeBlob field we read. */
static uint32_t hdr_len(const struct codeheap *h)
{
	uint32_t n = h->hb_used + 1, w = h->code_abs ? 8 : 4, d = h->deopt_abs ? 8 : 4;

	n = field_end(n, h->hb_size + h->cb_frame_size, 4);
	n = field_end(n, h->hb_size + h->cb_frame_complete, h->fc_width);
	n = field_end(n, h->hb_size + h->cb_code_begin, w);
	n = field_end(n, h->hb_size + h->cb_code_end, w);
	n = field_end(n, h->hb_size + (h->has_kind ? h->cb_kind : h->cb_name), 8);
	if (h->has_deopt) {
		n = field_end(n, h->hb_size + h->nm_orig_pc, 4);
		n = field_end(n, h->hb_size + h->nm_deopt, d);
		if (!h->no_deopt_mh)
			n = field_end(n, h->hb_size + h->nm_deopt_mh, d);
	}
	return n;
}

void codeheap_build(const struct vmstructs *vs, struct codeheap *h)
{
	const char *fc_type = NULL;
	uint64_t hb;
	bool ok = true;

	memset(h, 0, sizeof(*h));
	if (vmstructs_static(vs, "CodeCache", "_heaps", &h->heaps_slot) == 0) {
		/* JDK 11 to 15 name the array's base GenericGrowableArray. */
		ok &= field(vs, "GrowableArrayBase", "_len", &h->ga_len, NULL) ||
		      field(vs, "GenericGrowableArray", "_len", &h->ga_len, NULL);
		ok &= field(vs, "GrowableArray<int>", "_data", &h->ga_data, NULL);
	} else {
		/* JDK 8: one code heap, CodeCache::_heap (a CodeHeap*). */
		ok &= vmstructs_static(vs, "CodeCache", "_heap", &h->heaps_slot) == 0;
		h->one_heap = true;
	}
	ok &= field(vs, "CodeHeap", "_memory", &h->heap_memory, NULL);
	ok &= field(vs, "CodeHeap", "_segmap", &h->heap_segmap, NULL);
	ok &= field(vs, "CodeHeap", "_log2_segment_size", &h->heap_log2, NULL);
	ok &= field(vs, "VirtualSpace", "_low", &h->vs_low, NULL);
	ok &= field(vs, "VirtualSpace", "_high", &h->vs_high, NULL);
	/* The reserved end instead, where the JVM exports it: committed memory grows up to it. */
	(void)field(vs, "VirtualSpace", "_high_boundary", &h->vs_high, NULL);
	ok &= field(vs, "HeapBlock::Header", "_used", &h->hb_used, NULL);
	ok &= vmstructs_type_size(vs, "HeapBlock", &hb) == 0 && hb > 0 && hb < 64;
	h->hb_size = (uint32_t)hb;
	ok &= field(vs, "CodeBlob", "_frame_size", &h->cb_frame_size, NULL);
	ok &= field(vs, "CodeBlob", "_frame_complete_offset", &h->cb_frame_complete, &fc_type);
	ok &= field(vs, "CodeBlob", "_name", &h->cb_name, NULL);
	h->fc_width = fc_type && strcmp(fc_type, "int16_t") == 0 ? 2 : 4;
	if (field(vs, "CodeBlob", "_code_begin", &h->cb_code_begin, NULL) &&
	    field(vs, "CodeBlob", "_code_end", &h->cb_code_end, NULL))
		h->code_abs = true;
	else
		ok &= field(vs, "CodeBlob", "_code_offset", &h->cb_code_begin, NULL) &&
		      field(vs, "CodeBlob", "_data_offset", &h->cb_code_end, NULL);
	build_kinds(vs, h);
	build_deopt(vs, h);
	h->hdr_len = hdr_len(h);
	pthread_mutex_init(&h->lock, NULL);
	h->ok = ok;
}

/* Every heap of the JVM into out[]: 0 with *n, -EFAULT or -ENOENT. */
static int heaps_read(const struct codeheap *h, struct codeheap_ref *out, uint32_t *n)
{
	uint64_t ga = 0, data = 0, heap[CODEHEAP_MAX_HEAPS];
	int32_t len = 0;

	*n = 0;
	if (h->one_heap) {
		if (peek64(h->heaps_slot, &heap[0]))
			return -EFAULT;
		len = 1;
	} else {
		if (peek64(h->heaps_slot, &ga) || peek(&len, ga + h->ga_len, 4) ||
		    peek64(ga + h->ga_data, &data))
			return -EFAULT;
		if (len <= 0 || len > CODEHEAP_MAX_HEAPS)
			return -ENOENT;
		if (peek(heap, data, 8 * (size_t)len))
			return -EFAULT;
	}
	for (int32_t i = 0; i < len; i++) {
		struct codeheap_ref *r = &out[i];

		if (peek64(heap[i] + h->heap_memory + h->vs_low, &r->lo) ||
		    peek64(heap[i] + h->heap_memory + h->vs_high, &r->hi) ||
		    peek64(heap[i] + h->heap_segmap + h->vs_low, &r->segmap) ||
		    peek32(heap[i] + h->heap_log2, &r->log2))
			return -EFAULT;
	}
	*n = (uint32_t)len;
	return 0;
}

static int heap_match(const struct codeheap_ref *heaps, uint32_t n, uint64_t addr,
		      struct codeheap_ref *r)
{
	for (uint32_t i = 0; i < n; i++) {
		if (addr < heaps[i].lo || addr >= heaps[i].hi)
			continue;
		if (heaps[i].log2 < 4 || heaps[i].log2 > 16)
			return -ENOENT;
		*r = heaps[i];
		return 0;
	}
	return -ENOENT;
}

/* The heap holding addr: from the cache, or read again (see codeheap.h). 0, -ENOENT, -EFAULT. */
static int heap_of(struct codeheap *h, uint64_t addr, struct codeheap_ref *r)
{
	struct codeheap_ref mine[CODEHEAP_MAX_HEAPS];
	uint32_t n = 0;
	int rv;

	if (pthread_mutex_trylock(&h->lock) != 0) {
		if ((rv = heaps_read(h, mine, &n)) != 0)
			return rv;
		return heap_match(mine, n, addr, r);
	}
	if (heap_match(h->heaps, h->nheaps, addr, r) == 0) {
		pthread_mutex_unlock(&h->lock);
		return 0;
	}
	h->heap_reads++;
	rv = heaps_read(h, h->heaps, &h->nheaps);
	if (rv == 0)
		rv = heap_match(h->heaps, h->nheaps, addr, r);
	pthread_mutex_unlock(&h->lock);
	return rv;
}

/* A window on the segment map: win[] holds segmap[base, base + have). */
struct segwin {
	uint8_t win[64];
	uint64_t base, have;
};

/* Where a window ending at segment idx starts, and its length. */
static void segwin_span(struct segwin *w, uint64_t idx)
{
	w->base = idx >= sizeof(w->win) - 1 ? idx - (sizeof(w->win) - 1) : 0;
	w->have = idx - w->base + 1;
}

/*
 * The first segment of the block holding segment idx: 0 with *first, -ENOENT or -EFAULT. w may
 * already hold a window (have > 0); windows further back are read as the hops need them.
 */
static int block_of(const struct codeheap_ref *r, uint64_t idx, uint64_t *first, struct segwin *w,
		    const struct direct *d)
{
	for (int i = 0; i < MAX_HOPS; i++) {
		uint8_t hop;

		if (idx < w->base || idx >= w->base + w->have) {
			segwin_span(w, idx);
			if (peek_in(d, w->win, r->segmap + w->base, w->have))
				return -EFAULT;
		}
		hop = w->win[idx - w->base];
		if (hop == 0xff)
			return -ENOENT; /* a free segment */
		if (hop == 0) {
			*first = idx;
			return 0;
		}
		if (hop > idx)
			return -ENOENT;
		idx -= hop;
	}
	return -ENOENT;
}

/*
 * A block's first bytes, read at once: HeapBlock header and the CodeBlob fields. A field past
 * what one read got (the end of committed memory, or a layout wider than buf) is peeked alone.
 */
struct hdr {
	uint64_t at; /* the block's address */
	size_t got;
	const struct direct *d; /* see peek_in */
	uint8_t buf[512];
};

static int hdr_load(const struct codeheap *h, struct hdr *b, uint64_t at)
{
	size_t want = h->hdr_len < sizeof(b->buf) ? h->hdr_len : sizeof(b->buf);
	ssize_t n;

	if (direct_has(b->d, at, want)) {
		memcpy(b->buf, (const void *)(uintptr_t)at, want);
		n = (ssize_t)want;
	} else {
		n = selfmem_read(b->buf, at, want);
	}
	b->at = at;
	b->got = n > 0 ? (size_t)n : 0;
	return b->got > 0 ? 0 : -EFAULT;
}

/* n bytes at offset off of the block (HeapBlock header included). */
static int hdr_get(const struct hdr *b, uint64_t off, void *dst, size_t n)
{
	if (off + n <= b->got) {
		memcpy(dst, b->buf + off, n);
		return 0;
	}
	return peek_in(b->d, dst, b->at + off, n);
}

/* A CodeBlob field at offset off: the same, counted from the blob. */
static int blob_get(const struct codeheap *h, const struct hdr *b, uint32_t off, void *dst,
		    size_t n)
{
	return hdr_get(b, (uint64_t)h->hb_size + off, dst, n);
}

/*
 * The segment map window ending at addr's segment and the CODEHEAP_BEHIND bytes before addr, in
 * one round trip (*back_at: where back[] starts). A compiled method's header lies right before
 * its code, so its block usually starts inside back[]: then the block's first bytes need no read
 * of their own. 0, or -EAGAIN (read them the usual way).
 */
static int prefetch(const struct codeheap_ref *r, uint64_t addr, struct segwin *w, uint8_t *back,
		    uint64_t *back_at, const struct direct *d)
{
	uint64_t idx = (addr - r->lo) >> r->log2;

	*back_at = addr - r->lo > CODEHEAP_BEHIND ? addr - CODEHEAP_BEHIND : r->lo;
	segwin_span(w, idx);
	if (d && addr > *back_at && peek_in(d, w->win, r->segmap + w->base, w->have) == 0 &&
	    peek_in(d, back, *back_at, addr - *back_at) == 0)
		return 0;
	if (addr > *back_at && selfmem_read2(w->win, r->segmap + w->base, w->have, back, *back_at,
					     addr - *back_at) == 0)
		return 0;
	w->have = 0; /* nothing in the window: block_of reads it */
	return -EAGAIN;
}

/*
 * The CodeBlob whose block holds addr, its first bytes in *b: 0, -ENOENT or -EFAULT. *d is the
 * window b->d points to while the layout is trusted.
 */
static int blob_of(struct codeheap *h, uint64_t addr, struct hdr *b, struct direct *d)
{
	struct codeheap_ref r;
	struct segwin w = { .have = 0 };
	uint8_t back[CODEHEAP_BEHIND];
	uint64_t idx, at, back_at = 0;
	uint8_t used = 0;
	bool pre;
	int rv;

	if ((rv = heap_of(h, addr, &r)) != 0)
		return rv;
	/* Once the layout has proven itself, what HotSpot keeps committed below an address it
	 * announced is copied: the heap from its start to addr, the segment map up to addr's
	 * segment (codeheap.h). */
	b->d = NULL;
	if (atomic_load_explicit(&h->trusted, memory_order_acquire)) {
		*d = (struct direct){ .lo = r.lo,
				      .end = addr,
				      .seg = r.segmap,
				      .seg_end = r.segmap + ((addr - r.lo) >> r.log2) + 1 };
		b->d = d;
	}
	pre = prefetch(&r, addr, &w, back, &back_at, b->d) == 0;
	if ((rv = block_of(&r, (addr - r.lo) >> r.log2, &idx, &w, b->d)) != 0)
		return rv;
	at = r.lo + (idx << r.log2);
	if (pre && at >= back_at && at < addr) {
		/* The block starts inside back[]: its first bytes are there (the rest, if a field
		 * lies past addr, is peeked alone by hdr_get). */
		b->at = at;
		b->got = addr - at < sizeof(b->buf) ? addr - at : sizeof(b->buf);
		memcpy(b->buf, back + (at - back_at), b->got);
	} else if (hdr_load(h, b, at)) {
		return -EFAULT;
	}
	if (hdr_get(b, h->hb_used, &used, 1))
		return -EFAULT;
	return used ? 0 : -ENOENT;
}

static enum fgp_cf_kind kind_of(const struct codeheap *h, const struct hdr *b, bool nmethod)
{
	char name[32] = { 0 };
	uint64_t p = 0;
	uint8_t k = 0;

	if (h->has_kind)
		return blob_get(h, b, h->cb_kind, &k, 1) || k >= sizeof(h->kinds) ? FGP_CF_UNKNOWN
										  : h->kinds[k];
	if (nmethod)
		return FGP_CF_NMETHOD;
	if (blob_get(h, b, h->cb_name, &p, 8) || peek(name, p, sizeof(name) - 1))
		return FGP_CF_UNKNOWN;
	for (size_t i = 0; i < sizeof(blob_names) / sizeof(blob_names[0]); i++)
		if (strcmp(name, blob_names[i].name) == 0)
			return blob_names[i].kind;
	return FGP_CF_UNKNOWN;
}

/* The nmethod's deopt handlers and orig pc slot; left 0 when they do not check out. */
static void deopt_of(const struct codeheap *h, const struct hdr *b, struct fgp_code_frame *f)
{
	uint64_t blob = b->at + h->hb_size, d = 0, dmh = 0;
	int32_t orig = 0;

	if (!h->has_deopt || blob_get(h, b, h->nm_orig_pc, &orig, 4))
		return;
	if (h->deopt_abs) {
		if (blob_get(h, b, h->nm_deopt, &d, 8) || blob_get(h, b, h->nm_deopt_mh, &dmh, 8))
			return;
	} else {
		int32_t o = 0, omh = 0;

		if (blob_get(h, b, h->nm_deopt, &o, 4) ||
		    (!h->no_deopt_mh && blob_get(h, b, h->nm_deopt_mh, &omh, 4)))
			return;
		d = o > 0 ? blob + (uint64_t)o : 0;
		dmh = omh > 0 ? blob + (uint64_t)omh : 0;
	}
	f->orig_pc_offset = orig;
	f->deopt = d;
	f->deopt_mh = dmh;
	if (fgp_code_frame_check(f) == 0)
		return;
	/* A native wrapper or a handler we cannot place: unwind without deopt rules. */
	f->deopt_mh = 0;
	if (fgp_code_frame_check(f) == 0)
		return;
	f->deopt = 0;
	f->orig_pc_offset = 0;
}

/* The blob's code range [*begin, *end): 0, -EFAULT or -EBADMSG. */
static int code_of(const struct codeheap *h, const struct hdr *b, uint64_t *begin, uint64_t *end)
{
	uint64_t blob = b->at + h->hb_size;
	int32_t ob = 0, oe = 0;

	if (h->code_abs)
		return blob_get(h, b, h->cb_code_begin, begin, 8) ||
				       blob_get(h, b, h->cb_code_end, end, 8)
			       ? -EFAULT
			       : 0;
	if (blob_get(h, b, h->cb_code_begin, &ob, 4) || blob_get(h, b, h->cb_code_end, &oe, 4))
		return -EFAULT;
	if (ob < 0 || oe < ob)
		return -EBADMSG;
	*begin = blob + (uint64_t)ob;
	*end = blob + (uint64_t)oe;
	return 0;
}

int codeheap_frame(struct codeheap *h, uint64_t addr, bool nmethod, struct fgp_code_frame *out)
{
	struct fgp_code_frame f = { .addr = addr };
	struct direct d;
	struct hdr b;
	uint64_t begin = 0, end = 0;
	int32_t fs = 0, fc = -1;
	int rv;

	if (!h->ok)
		return -ENOTSUP;
	if ((rv = blob_of(h, addr, &b, &d)) != 0 || (rv = code_of(h, &b, &begin, &end)) != 0)
		return rv;
	if (blob_get(h, &b, h->cb_frame_size, &fs, 4))
		return -EFAULT;
	if (h->fc_width == 2) {
		int16_t v = 0;

		if (blob_get(h, &b, h->cb_frame_complete, &v, 2))
			return -EFAULT;
		fc = v;
	} else if (blob_get(h, &b, h->cb_frame_complete, &fc, 4)) {
		return -EFAULT;
	}
	if (end <= begin || end - begin > UINT32_MAX || (nmethod && begin != addr) || fs < 0 ||
	    (uint64_t)fs * 8 > FGP_CF_MAX_FRAME)
		return -EBADMSG;
	f.kind = (uint16_t)kind_of(h, &b, nmethod);
	f.frame_size = (uint32_t)fs * 8;
	f.code_begin = begin;
	f.code_size = (uint32_t)(end - begin);
	f.frame_complete = fc < 0 || (uint64_t)fc > f.code_size ? -1 : fc;
	if (fgp_code_frame_check(&f) != 0)
		return -EBADMSG;
	if (nmethod) {
		deopt_of(h, &b, &f);
		/* A compiled method found where JVMTI said, by reads that cannot fault: the layout
		 * and the heaps are right, and later reads may copy (see blob_of). */
		if (!b.d)
			atomic_store_explicit(&h->trusted, true, memory_order_release);
	}
	*out = f;
	return 0;
}

static int build_of(const struct vmstructs *vs, void *out)
{
	codeheap_build(vs, out);
	return 0;
}

int codeheap_read(const void *jvm_addr, struct codeheap *out)
{
	int rv;

	memset(out, 0, sizeof(*out));
	rv = vmstructs_with(jvm_addr, build_of, out);
	return rv == 0 && !out->ok ? -ENOENT : rv;
}
