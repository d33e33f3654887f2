// SPDX-License-Identifier: MIT
/*
 * fgproto.c - encode and decode the fgcollect wire format (see fgproto.h).
 *
 * Invariant: the decoder touches a byte only after checking it lies inside the record it is
 * decoding, and a record only after checking it lies inside the message; every read goes
 * through struct cur, whose helpers fail (and stay failed) instead of reading past the end.
 * The encoder mirrors it: every write goes through struct put, and a record's size is what the
 * same body function puts when only counting. Each record's fields are put and taken from its
 * table in fgproto.h (FGP_<TYPE>_FIELDS), so the two sides cannot disagree on a field.
 */
#include "fgproto.h"
#include "fgle.h"
#include "allocring.h"

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

/* The put-cursor's helpers and the record wrappers are inlined into every encoder, so each
 * body is specialised for counting and for writing: a call per field cost the agent's load
 * callback ~0.1 us (fg_bench_agent). */
#define FGP_INLINE __attribute__((always_inline))

static const uint8_t magic[4] = { 'F', 'G', 'C', 'P' };

/* ---- encoding ------------------------------------------------------------------------- */

static int bad_byte(uint8_t c)
{
	return c < 0x20 || c == 0x7f;
}

static uint16_t str_len(struct fgp_str s)
{
	if (!s.ptr)
		return 0;
	return s.len > FGP_MAX_STR ? FGP_MAX_STR : s.len;
}

/*
 * A bounded write cursor, the mirror of the decoder's struct cur: once a write would pass the
 * end it fails and stays failed. With p == NULL it only counts, so a record's size comes from
 * the same code that writes it: every record is one body function, run counting (put_sizing)
 * for fgp_*_size() and writing into the buffer (put_writing) to encode.
 */
struct put {
	uint8_t *p; /* next byte, or NULL when only counting */
	size_t n;   /* bytes put so far */
	size_t cap; /* bytes that may be put */
	int bad;
};

static inline FGP_INLINE struct put put_sizing(void)
{
	struct put w = { NULL, 0, SIZE_MAX, 0 };

	return w;
}

static inline FGP_INLINE struct put put_writing(uint8_t *dst, size_t cap)
{
	struct put w = { dst, 0, cap, 0 };

	return w;
}

/* Room for n more bytes: where to write them, or NULL (counting only, or failed). */
static inline FGP_INLINE uint8_t *give(struct put *w, size_t n)
{
	uint8_t *p = w->p;

	if (w->bad || w->cap - w->n < n) {
		w->bad = 1;
		return NULL;
	}
	w->n += n;
	if (p)
		w->p += n;
	return p;
}

static inline FGP_INLINE void put16(struct put *w, uint16_t v)
{
	uint8_t *p = give(w, 2);

	if (p)
		fgle_put16(p, v);
}

static inline FGP_INLINE void put32(struct put *w, uint32_t v)
{
	uint8_t *p = give(w, 4);

	if (p)
		fgle_put32(p, v);
}

static inline FGP_INLINE void put64(struct put *w, uint64_t v)
{
	uint8_t *p = give(w, 8);

	if (p)
		fgle_put64(p, v);
}

static inline FGP_INLINE void put_bytes(struct put *w, const void *src, size_t n)
{
	uint8_t *p = give(w, n);

	if (p && n)
		memcpy(p, src, n);
}

/* A string, sanitised and truncated to FGP_MAX_STR. */
static void put_str(struct put *w, struct fgp_str s)
{
	uint16_t n = str_len(s);
	uint8_t *p;

	put16(w, n);
	p = give(w, n);
	if (!p)
		return;
	for (uint16_t i = 0; i < n; i++) {
		uint8_t c = (uint8_t)s.ptr[i];

		p[i] = bad_byte(c) ? '?' : c;
	}
}

/*
 * The pc entries of an inline or line table, without their count. One give() per entry, then
 * plain stores into it: a cursor check per chain element made the load callback's encoding
 * ~10% slower (fg_bench_agent), and counting walks the entries without touching the chains.
 */
static void put_pc_entries(struct put *w, const struct fgp_pc_in *pcs, uint32_t n_pcs)
{
	for (uint32_t i = 0; i < n_pcs; i++) {
		uint16_t depth = pcs[i].depth;
		uint8_t *p = give(w, 6 + 2 * (size_t)depth);

		if (!p)
			continue;
		fgle_put32(p, pcs[i].pc_off);
		fgle_put16(p + 4, depth);
		for (uint16_t d = 0; d < depth; d++)
			fgle_put16(p + 6 + 2 * (size_t)d, pcs[i].chain[d]);
	}
}

/* A record body: writes (or counts) everything after the record header. */
typedef void put_body_fn(struct put *w, const void *arg);

/* The size of the record whose body put_body writes. */
static inline FGP_INLINE size_t record_size(put_body_fn *put_body, const void *arg)
{
	struct put w = put_sizing();

	put_body(&w, arg);
	return FGP_REC_HEADER_SIZE + w.n;
}

/*
 * Every encoder's body: a record over FGP_MAX_RECORD is -EINVAL, one over cap -ENOSPC (then
 * the bytes of dst are unspecified, but nothing past dst + cap is written), else header and
 * body are written at dst and its size returned. One pass writes the record with the cursor
 * bounded by cap and FGP_MAX_RECORD and then fills in the size; only a record that did not
 * fit is counted, to tell the two errors apart.
 */
static inline FGP_INLINE int encode_record(uint8_t *dst, size_t cap, uint16_t type, uint16_t flags,
					   put_body_fn *put_body, const void *arg)
{
	struct put w = put_writing(dst, cap < FGP_MAX_RECORD ? cap : FGP_MAX_RECORD);
	uint8_t *size_at;

	put16(&w, type);
	put16(&w, flags);
	size_at = give(&w, 4);
	put_body(&w, arg);
	if (w.bad)
		return record_size(put_body, arg) > FGP_MAX_RECORD ? -EINVAL : -ENOSPC;
	fgle_put32(size_at, (uint32_t)w.n);
	return (int)w.n;
}

/*
 * A record's fields from its table (FIELDS(PUT)), in a body function whose cursor is `w` and
 * whose record is `s`: the encoder's half of each table in fgproto.h.
 */
#define PUT_U16(m) put16(w, s->m);
#define PUT_U32(m) put32(w, s->m);
#define PUT_U64(m) put64(w, s->m);
#define PUT_I32(m) put32(w, (uint32_t)s->m);
#define PUT_STR(m) put_str(w, s->m);
#define PUT_PAD32(m) put32(w, 0);
#define PUT_ZERO32(m) put32(w, 0);
#define PUT(kind, m) PUT_##kind(m)

/*
 * put_NAME: the fields of FIELDS from a T, a whole record body (a put_body_fn) for a record
 * that has nothing after them, or the start of one.
 */
#define DEFINE_PUT(name, T, FIELDS)                                                                \
	static inline FGP_INLINE void put_##name(struct put *w, const void *arg)                   \
	{                                                                                          \
		const T *s = arg;                                                                  \
                                                                                                   \
		FIELDS(PUT)                                                                        \
	}

DEFINE_PUT(code_load_fields, struct fgp_code_load_in, FGP_CODE_LOAD_FIELDS)
DEFINE_PUT(code_load_ids_fields, struct fgp_code_load_ids_in, FGP_CODE_LOAD_IDS_FIELDS)
DEFINE_PUT(code_load_resolved_fields, struct fgp_code_load, FGP_CODE_LOAD_FIELDS)
DEFINE_PUT(code_unload, struct fgp_code_unload, FGP_CODE_UNLOAD_FIELDS)
DEFINE_PUT(dynamic_code, struct fgp_dynamic_code, FGP_DYNAMIC_CODE_FIELDS)
DEFINE_PUT(snapshot, struct fgp_snapshot, FGP_SNAPSHOT_FIELDS)
DEFINE_PUT(tables, struct fgp_tables, FGP_TABLES_FIELDS)
DEFINE_PUT(dropped, struct fgp_dropped, FGP_DROPPED_FIELDS)
DEFINE_PUT(name, struct fgp_name, FGP_NAME_FIELDS)
DEFINE_PUT(vm_layout_fields, struct fgp_vm_layout, FGP_VM_LAYOUT_FIELDS)
DEFINE_PUT(code_frame, struct fgp_code_frame, FGP_CODE_FRAME_FIELDS)
DEFINE_PUT(code_lines_fields, struct fgp_code_lines_in, FGP_CODE_LINES_FIELDS)
DEFINE_PUT(stack_event_fields, struct fgp_stack_event_in, FGP_STACK_EVENT_FIELDS)
DEFINE_PUT(events, struct fgp_events, FGP_EVENTS_FIELDS)
DEFINE_PUT(alloc_cost, struct fgp_alloc_cost, FGP_ALLOC_COST_FIELDS)

size_t fgp_msg_header_size(void)
{
	return FGP_MSG_HEADER_SIZE;
}

static void put_msg_header(struct put *w, const void *arg)
{
	(void)arg;
	put_bytes(w, magic, 4);
	put16(w, FGP_VERSION);
	put16(w, FGP_MSG_HEADER_SIZE);
}

int fgp_encode_msg_header(uint8_t *dst, size_t cap)
{
	struct put w = put_sizing();

	put_msg_header(&w, NULL);
	if (w.n > cap)
		return -ENOSPC;
	w = put_writing(dst, cap);
	put_msg_header(&w, NULL);
	assert(!w.bad && w.n == FGP_MSG_HEADER_SIZE);
	return (int)w.n;
}

static void put_hello(struct put *w, const void *arg)
{
	const struct fgp_hello *s = arg;

	FGP_HELLO_FIELDS(PUT)
	FGP_HELLO_OPTIONAL(PUT)
}

size_t fgp_hello_size(const struct fgp_hello *h)
{
	return record_size(put_hello, h);
}

int fgp_encode_hello(uint8_t *dst, size_t cap, const struct fgp_hello *h)
{
	return encode_record(dst, cap, FGP_HELLO, 0, put_hello, h);
}

static void put_code_load(struct put *w, const void *arg)
{
	const struct fgp_code_load_in *c = arg;

	put_code_load_fields(w, c);
	put16(w, c->n_methods);
	for (uint16_t i = 0; i < c->n_methods; i++)
		put_str(w, c->methods[i]);
	put32(w, c->n_pcs);
	put_pc_entries(w, c->pcs, c->n_pcs);
}

size_t fgp_code_load_size(const struct fgp_code_load_in *c)
{
	return record_size(put_code_load, c);
}

/* An inline table an encoder takes: counts, order, depths and chain indexes. */
static int check_inline(uint32_t size, uint16_t n_methods, const void *methods,
			const struct fgp_pc_in *pcs, uint32_t n_pcs)
{
	uint32_t prev = 0;

	if (n_methods > FGP_MAX_INLINE_METHODS || n_pcs > FGP_MAX_INLINE_PCS)
		return -EINVAL;
	if ((n_methods && !methods) || (n_pcs && !pcs))
		return -EINVAL;
	for (uint32_t i = 0; i < n_pcs; i++) {
		const struct fgp_pc_in *pc = &pcs[i];

		if (pc->pc_off < prev || pc->pc_off > size)
			return -EINVAL;
		if (pc->depth == 0 || pc->depth > FGP_MAX_INLINE_DEPTH || !pc->chain)
			return -EINVAL;
		for (uint16_t d = 0; d < pc->depth; d++)
			if (pc->chain[d] >= n_methods)
				return -EINVAL;
		prev = pc->pc_off;
	}
	return 0;
}

int fgp_encode_code_load(uint8_t *dst, size_t cap, const struct fgp_code_load_in *c)
{
	int rv;

	if ((rv = check_inline(c->size, c->n_methods, c->methods, c->pcs, c->n_pcs)) != 0)
		return rv;
	return encode_record(dst, cap, FGP_CODE_LOAD, c->flags, put_code_load, c);
}

int fgp_encode_code_unload(uint8_t *dst, size_t cap, const struct fgp_code_unload *u)
{
	return encode_record(dst, cap, FGP_CODE_UNLOAD, 0, put_code_unload, u);
}

size_t fgp_dynamic_code_size(const struct fgp_dynamic_code *d)
{
	return record_size(put_dynamic_code, d);
}

int fgp_encode_dynamic_code(uint8_t *dst, size_t cap, const struct fgp_dynamic_code *d)
{
	return encode_record(dst, cap, FGP_DYNAMIC_CODE, 0, put_dynamic_code, d);
}

int fgp_encode_snapshot(uint8_t *dst, size_t cap, uint16_t type, const struct fgp_snapshot *s)
{
	if (type != FGP_SNAPSHOT_BEGIN && type != FGP_SNAPSHOT_END)
		return -EINVAL;
	return encode_record(dst, cap, type, 0, put_snapshot, s);
}

int fgp_encode_tables(uint8_t *dst, size_t cap, const struct fgp_tables *t)
{
	if (t->on > 1)
		return -EINVAL;
	return encode_record(dst, cap, FGP_TABLES, 0, put_tables, t);
}

int fgp_encode_dropped(uint8_t *dst, size_t cap, const struct fgp_dropped *d)
{
	return encode_record(dst, cap, FGP_DROPPED, 0, put_dropped, d);
}

size_t fgp_name_size(struct fgp_str name)
{
	struct fgp_name b = { 1, name };

	return record_size(put_name, &b);
}

int fgp_encode_name(uint8_t *dst, size_t cap, uint32_t id, struct fgp_str name)
{
	struct fgp_name b = { id, name };

	if (id == 0)
		return -EINVAL;
	return encode_record(dst, cap, FGP_NAME, 0, put_name, &b);
}

static void put_code_load_ids(struct put *w, const void *arg)
{
	const struct fgp_code_load_ids_in *c = arg;

	put_code_load_ids_fields(w, c);
	put16(w, c->n_methods);
	for (uint16_t i = 0; i < c->n_methods; i++)
		put32(w, c->method_ids[i]);
	put32(w, c->n_pcs);
	put_pc_entries(w, c->pcs, c->n_pcs);
}

size_t fgp_code_load_ids_size(const struct fgp_code_load_ids_in *c)
{
	return record_size(put_code_load_ids, c);
}

int fgp_encode_code_load_ids(uint8_t *dst, size_t cap, const struct fgp_code_load_ids_in *c)
{
	int rv;

	if (c->name_id == 0 || (c->n_methods && !c->method_ids))
		return -EINVAL;
	for (uint16_t i = 0; i < c->n_methods; i++)
		if (c->method_ids[i] == 0)
			return -EINVAL;
	if ((rv = check_inline(c->size, c->n_methods, c->method_ids, c->pcs, c->n_pcs)) != 0)
		return rv;
	return encode_record(dst, cap, FGP_CODE_LOAD_IDS, c->flags, put_code_load_ids, c);
}

/* A decoded load re-encoded as a CODE_LOAD: names resolved, pc entries copied as they came. */
static void put_code_load_resolved(struct put *w, const void *arg)
{
	const struct fgp_code_load *l = arg;
	struct fgp_inline_iter it;
	struct fgp_str m;

	put_code_load_resolved_fields(w, l);
	put16(w, l->n_methods);
	fgp_methods_begin(l, &it);
	while (fgp_methods_next(&it, &m) == 1)
		put_str(w, m);
	put32(w, l->n_pcs);
	put_bytes(w, l->pcs_raw, l->pcs_len);
}

int fgp_encode_code_load_resolved(uint8_t *dst, size_t cap, const struct fgp_code_load *l,
				  uint16_t flags)
{
	if (l->name_id && !l->name.ptr)
		return -EINVAL;
	if (l->n_methods && l->name_id && !l->methods)
		return -EINVAL;
	return encode_record(dst, cap, FGP_CODE_LOAD, flags, put_code_load_resolved, l);
}

void fgp_vml_set(struct fgp_vm_layout *l, enum fgp_vml_key k, uint32_t v)
{
	if ((unsigned)k == 0 || (unsigned)k >= FGP_VML_NKEYS)
		return;
	l->val[k] = v;
	l->present |= 1ull << k;
}

int fgp_vml_has(const struct fgp_vm_layout *l, enum fgp_vml_key k)
{
	return (unsigned)k < FGP_VML_NKEYS && (l->present >> k & 1);
}

uint32_t fgp_vml_get(const struct fgp_vm_layout *l, enum fgp_vml_key k)
{
	return fgp_vml_has(l, k) ? l->val[k] : 0;
}

static unsigned vml_count(const struct fgp_vm_layout *l)
{
	unsigned n = 0;

	for (unsigned k = 1; k < FGP_VML_NKEYS; k++)
		n += (unsigned)(l->present >> k & 1);
	return n;
}

static void put_vm_layout(struct put *w, const void *arg)
{
	const struct fgp_vm_layout *l = arg;

	put_vm_layout_fields(w, l);
	put32(w, vml_count(l));
	for (unsigned k = 1; k < FGP_VML_NKEYS; k++) {
		if (!(l->present >> k & 1))
			continue;
		put16(w, (uint16_t)k);
		put16(w, 0);
		put32(w, l->val[k]);
	}
}

size_t fgp_vm_layout_size(const struct fgp_vm_layout *l)
{
	return record_size(put_vm_layout, l);
}

int fgp_encode_vm_layout(uint8_t *dst, size_t cap, const struct fgp_vm_layout *l)
{
	return encode_record(dst, cap, FGP_VM_LAYOUT, 0, put_vm_layout, l);
}

int fgp_code_frame_check(const struct fgp_code_frame *f)
{
	uint64_t end = f->code_begin + f->code_size;
	bool deopt = f->deopt || f->deopt_mh;

	if (f->kind >= FGP_CF_NKINDS || f->flags != 0 || end < f->code_begin)
		return -EBADMSG;
	if (f->addr < f->code_begin || f->addr >= end)
		return -EBADMSG;
	if (f->frame_size % 8 || f->frame_size > FGP_CF_MAX_FRAME)
		return -EBADMSG;
	if (f->frame_complete < -1 ||
	    (f->frame_complete >= 0 && (uint32_t)f->frame_complete > f->code_size))
		return -EBADMSG;
	if ((f->deopt && (f->deopt < f->code_begin || f->deopt >= end)) ||
	    (f->deopt_mh && (f->deopt_mh < f->code_begin || f->deopt_mh >= end)))
		return -EBADMSG;
	if (deopt && (f->orig_pc_offset < 0 || f->orig_pc_offset % 8 ||
		      (uint32_t)f->orig_pc_offset + 8 > f->frame_size))
		return -EBADMSG;
	return 0;
}

int fgp_encode_code_frame(uint8_t *dst, size_t cap, const struct fgp_code_frame *f)
{
	if (fgp_code_frame_check(f) != 0)
		return -EINVAL;
	return encode_record(dst, cap, FGP_CODE_FRAME, 0, put_code_frame, f);
}

static void put_code_lines(struct put *w, const void *arg)
{
	const struct fgp_code_lines_in *l = arg;

	put_code_lines_fields(w, l);
	put_pc_entries(w, l->pcs, l->n_pcs);
}

size_t fgp_code_lines_size(const struct fgp_code_lines_in *l)
{
	return record_size(put_code_lines, l);
}

int fgp_encode_code_lines(uint8_t *dst, size_t cap, const struct fgp_code_lines_in *l)
{
	if (l->n_pcs == 0 || l->n_pcs > FGP_MAX_INLINE_PCS || !l->pcs || l->size == 0 ||
	    l->addr + l->size < l->addr)
		return -EINVAL;
	for (uint32_t i = 0; i < l->n_pcs; i++) {
		const struct fgp_pc_in *pc = &l->pcs[i];

		if ((i > 0 && pc->pc_off <= l->pcs[i - 1].pc_off) || pc->pc_off > l->size ||
		    pc->depth == 0 || pc->depth > FGP_MAX_INLINE_DEPTH || !pc->chain)
			return -EINVAL;
	}
	return encode_record(dst, cap, FGP_CODE_LINES, l->flags, put_code_lines, l);
}

/* ---- events (STACK_EVENT, OBJECT_FREE, EVENTS) ------------------------------------------ */

/* The checks fgp_next makes of a STACK_EVENT's fields (frames apart): 0 or -1. */
static int stack_event_check(uint16_t kind, uint64_t value, uint64_t interval, uint64_t tag,
			     uint16_t depth)
{
	if (depth > FGP_MAX_EVENT_DEPTH)
		return -1;
	if (kind == FGP_EV_ALLOC)
		return value > 0 && interval > 0 ? 0 : -1;
	if (kind == FGP_EV_LOCK)
		return value >= interval && tag == 0 ? 0 : -1;
	if (kind == FGP_EV_VWAIT)
		return value > 0 && interval >= FGP_VWAIT_ONE ? 0 : -1;
	if (kind == FGP_EV_VMOUNT)
		return value > 0 && interval <= value && depth == 0 ? 0 : -1;
	return -1;
}

static void put_stack_event(struct put *w, const void *arg)
{
	const struct fgp_stack_event_in *e = arg;
	uint8_t *p;

	put_stack_event_fields(w, e);
	p = give(w, 8 * (size_t)e->depth);
	for (uint16_t i = 0; p && i < e->depth; i++) {
		fgle_put32(p + 8 * (size_t)i, e->frames[i].method_id);
		fgle_put32(p + 8 * (size_t)i + 4, (uint32_t)e->frames[i].line);
	}
	if (e->flags & FGP_REC_ALLOC_GAP)
		put64(w, e->weight);
}

size_t fgp_stack_event_size(const struct fgp_stack_event_in *e)
{
	return record_size(put_stack_event, e);
}

int fgp_encode_stack_event(uint8_t *dst, size_t cap, const struct fgp_stack_event_in *e)
{
	if (e->flags & ~(FGP_REC_STACK_TRUNCATED | FGP_REC_ALLOC_GAP) || str_len(e->cls) == 0 ||
	    stack_event_check(e->kind, e->value, e->interval, e->tag, e->depth) != 0 ||
	    ((e->flags & FGP_REC_ALLOC_GAP) &&
	     (e->kind != FGP_EV_ALLOC || !allocring_gap_ok(e->weight, e->value, e->interval))) ||
	    (e->depth && !e->frames))
		return -EINVAL;
	for (uint16_t i = 0; i < e->depth; i++)
		if (e->frames[i].method_id == 0 || e->frames[i].line < 0)
			return -EINVAL;
	return encode_record(dst, cap, FGP_STACK_EVENT, e->flags, put_stack_event, e);
}

/* OBJECT_FREE's fields (the table's) and its tags. */
struct free_body {
	const uint64_t *tags;
	uint32_t n;
};

DEFINE_PUT(object_free_fields, struct free_body, FGP_OBJECT_FREE_FIELDS)

static void put_object_free(struct put *w, const void *arg)
{
	const struct free_body *b = arg;
	uint8_t *p;

	put_object_free_fields(w, b);
	p = give(w, 8 * (size_t)b->n);
	if (!p)
		return;
	for (uint32_t i = 0; i < b->n; i++)
		fgle_put64(p + 8 * (size_t)i, b->tags[i]);
}

size_t fgp_object_free_size(uint32_t n)
{
	return FGP_REC_HEADER_SIZE + FGP_FIELDS_BYTES(FGP_OBJECT_FREE_FIELDS) + 8 * (size_t)n;
}

int fgp_encode_object_free(uint8_t *dst, size_t cap, const uint64_t *tags, uint32_t n)
{
	struct free_body b = { tags, n };

	if (n == 0 || n > FGP_MAX_FREE_TAGS || !tags)
		return -EINVAL;
	return encode_record(dst, cap, FGP_OBJECT_FREE, 0, put_object_free, &b);
}

/* The checks fgp_next makes of an EVENTS record: 0 or -1. */
static int events_check(const struct fgp_events *e)
{
	if (e->on & ~FGP_EVM_ALL)
		return -1;
	if (e->on & (FGP_EVM_ALLOC | FGP_EVM_LIVE) && e->alloc_interval == 0)
		return -1;
	return 0;
}

int fgp_encode_events(uint8_t *dst, size_t cap, const struct fgp_events *e)
{
	if (events_check(e) != 0)
		return -EINVAL;
	return encode_record(dst, cap, FGP_EVENTS, 0, put_events, e);
}

int fgp_encode_alloc_cost(uint8_t *dst, size_t cap, const struct fgp_alloc_cost *e)
{
	return encode_record(dst, cap, FGP_ALLOC_COST, 0, put_alloc_cost, e);
}

int fgp_rec_code_ts(const uint8_t *rec, size_t len, uint64_t *ts)
{
	uint16_t type;

	if (len < FGP_REC_HEADER_SIZE + 24)
		return 0;
	type = fgp_rec_type(rec);
	if (type != FGP_CODE_LOAD && type != FGP_CODE_LOAD_IDS && type != FGP_CODE_LINES)
		return 0;
	*ts = fgle_get64(rec + FGP_REC_HEADER_SIZE + 16);
	return 1;
}

int fgp_rec_code_range(const uint8_t *rec, size_t len, uint64_t *addr, uint32_t *size)
{
	uint16_t type;

	if (len < FGP_REC_HEADER_SIZE + 12)
		return 0;
	type = fgp_rec_type(rec);
	*addr = fgle_get64(rec + FGP_REC_HEADER_SIZE);
	if (type == FGP_CODE_UNLOAD)
		return 2;
	if (type != FGP_CODE_LOAD && type != FGP_CODE_LOAD_IDS && type != FGP_DYNAMIC_CODE)
		return 0;
	*size = fgle_get32(rec + FGP_REC_HEADER_SIZE + 8);
	return 1;
}

/* ---- decoding ------------------------------------------------------------------------- */

/* A bounded read cursor over one record body; once failed, every read fails. */
struct cur {
	const uint8_t *p;
	const uint8_t *end;
	int bad;
};

static const uint8_t *take(struct cur *c, size_t n)
{
	const uint8_t *p = c->p;

	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = 1;
		return NULL;
	}
	c->p += n;
	return p;
}

static uint16_t take16(struct cur *c)
{
	const uint8_t *p = take(c, 2);

	return p ? fgle_get16(p) : 0;
}

static uint32_t take32(struct cur *c)
{
	const uint8_t *p = take(c, 4);

	return p ? fgle_get32(p) : 0;
}

static uint64_t take64(struct cur *c)
{
	const uint8_t *p = take(c, 8);

	return p ? fgle_get64(p) : 0;
}

/*
 * Whether p[0..n) holds a byte bad_byte() refuses, eight bytes at a time: a lane under 0x20,
 * or equal to 0x7f, makes (v - 0x20..) & ~v, or (w - 0x01..) & ~w for w = v ^ 0x7f.., set a
 * high bit (no lane of 0x80 or more does: its own high bit is set in v); a lane that borrows
 * only follows one that is bad, so the test is exact for the word (Bit Twiddling Hacks'
 * hasless and haszero).
 */
static int any_bad_byte(const uint8_t *p, size_t n)
{
	const uint64_t ones = 0x0101010101010101ull, highs = ones * 0x80;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t v, w;

		memcpy(&v, p + i, 8);
		w = v ^ (ones * 0x7f);
		if (((v - ones * 0x20) & ~v & highs) | ((w - ones) & ~w & highs))
			return 1;
	}
	for (; i < n; i++)
		if (bad_byte(p[i]))
			return 1;
	return 0;
}

static struct fgp_str take_str(struct cur *c)
{
	struct fgp_str s = { NULL, 0 };
	uint16_t n = take16(c);
	const uint8_t *p;

	if (n > FGP_MAX_STR) {
		c->bad = 1;
		return s;
	}
	p = take(c, n);
	if (!p)
		return s;
	if (any_bad_byte(p, n)) {
		c->bad = 1;
		return s;
	}
	s.ptr = (const char *)p;
	s.len = n;
	return s;
}

/*
 * A record's fields from its table (FIELDS(TAKE)), in a function whose cursor is `c` and whose
 * record is `s`: the decoder's half of each table in fgproto.h.
 */
#define TAKE_U16(m) s->m = take16(c);
#define TAKE_U32(m) s->m = take32(c);
#define TAKE_U64(m) s->m = take64(c);
#define TAKE_I32(m) s->m = (int32_t)take32(c);
#define TAKE_STR(m) s->m = take_str(c);
#define TAKE_PAD32(m) take32(c);
#define TAKE_ZERO32(m)                                                                             \
	if (take32(c) != 0)                                                                        \
		c->bad = 1;
#define TAKE(kind, m) TAKE_##kind(m)

/* An optional field is read when the record still holds its first bytes (all of an integer). */
#define OPTIONAL_BYTES_STR 1
#define OPTIONAL_BYTES_U64 8
#define TAKE_OPTIONAL(kind, m)                                                                     \
	if (c->end - c->p >= OPTIONAL_BYTES_##kind)                                                \
	TAKE_##kind(m)

/* take_NAME: the fields of FIELDS into a T (the cursor fails on a short record). */
#define DEFINE_TAKE(name, T, FIELDS)                                                               \
	static void take_##name(struct cur *c, T *s) /* NOLINT(bugprone-macro-parentheses) */      \
	{                                                                                          \
		FIELDS(TAKE)                                                                       \
	}

DEFINE_TAKE(code_load, struct fgp_code_load, FGP_CODE_LOAD_FIELDS)
DEFINE_TAKE(code_load_ids, struct fgp_code_load, FGP_CODE_LOAD_IDS_FIELDS)
DEFINE_TAKE(code_unload, struct fgp_code_unload, FGP_CODE_UNLOAD_FIELDS)
DEFINE_TAKE(dynamic_code, struct fgp_dynamic_code, FGP_DYNAMIC_CODE_FIELDS)
DEFINE_TAKE(snapshot, struct fgp_snapshot, FGP_SNAPSHOT_FIELDS)
DEFINE_TAKE(tables, struct fgp_tables, FGP_TABLES_FIELDS)
DEFINE_TAKE(dropped, struct fgp_dropped, FGP_DROPPED_FIELDS)
DEFINE_TAKE(name, struct fgp_name, FGP_NAME_FIELDS)
DEFINE_TAKE(vm_layout, struct fgp_vm_layout, FGP_VM_LAYOUT_FIELDS)
DEFINE_TAKE(code_frame, struct fgp_code_frame, FGP_CODE_FRAME_FIELDS)
DEFINE_TAKE(code_lines, struct fgp_code_lines, FGP_CODE_LINES_FIELDS)
DEFINE_TAKE(stack_event, struct fgp_stack_event, FGP_STACK_EVENT_FIELDS)
DEFINE_TAKE(object_free, struct fgp_object_free, FGP_OBJECT_FREE_FIELDS)
DEFINE_TAKE(events, struct fgp_events, FGP_EVENTS_FIELDS)
DEFINE_TAKE(alloc_cost, struct fgp_alloc_cost, FGP_ALLOC_COST_FIELDS)

int fgp_reader_init(struct fgp_reader *r, const uint8_t *buf, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->done = 1;
	if (!buf || len < FGP_MSG_HEADER_SIZE || memcmp(buf, magic, 4) != 0)
		return -EPROTO;
	if (fgle_get16(buf + 6) != FGP_MSG_HEADER_SIZE)
		return -EPROTO;
	if (fgle_get16(buf + 4) != FGP_VERSION)
		return -EPROTONOSUPPORT;
	r->buf = buf;
	r->len = len;
	r->off = FGP_MSG_HEADER_SIZE;
	r->done = 0;
	return 0;
}

static int decode_hello(struct cur *c, struct fgp_hello *s)
{
	FGP_HELLO_FIELDS(TAKE)
	/* Optional trailing fields: present only when the agent knows them. */
	FGP_HELLO_OPTIONAL(TAKE_OPTIONAL)
	if (c->bad || s->pid == 0)
		return -EBADMSG;
	c->p = c->end; /* fields of a newer agent: ignored */
	return 0;
}

/* The pc entries of an inline table (same layout in CODE_LOAD and CODE_LOAD_IDS). */
static int decode_pcs(struct cur *c, struct fgp_code_load *l)
{
	uint32_t prev = 0;

	for (uint32_t i = 0; i < l->n_pcs; i++) {
		uint32_t off = take32(c);
		uint16_t depth = take16(c);
		const uint8_t *chain;

		if (c->bad || off < prev || off > l->size || depth == 0 ||
		    depth > FGP_MAX_INLINE_DEPTH)
			return -EBADMSG;
		chain = take(c, 2 * (size_t)depth);
		if (!chain)
			return -EBADMSG;
		for (uint16_t d = 0; d < depth; d++)
			if (fgle_get16(chain + 2 * (size_t)d) >= l->n_methods)
				return -EBADMSG;
		prev = off;
	}
	return 0;
}

/*
 * Validate the inline table at the cursor and record where its parts start. Methods are strings
 * (CODE_LOAD) or non-zero u32 ids (CODE_LOAD_IDS, by_id).
 */
static int decode_inline(struct cur *c, struct fgp_code_load *l, bool by_id)
{
	int rv;

	l->n_methods = take16(c);
	if (l->n_methods > FGP_MAX_INLINE_METHODS)
		return -EBADMSG;
	l->methods_raw = c->p;
	for (uint16_t i = 0; i < l->n_methods && !c->bad; i++) {
		if (!by_id)
			take_str(c);
		else if (take32(c) == 0)
			return -EBADMSG;
	}
	l->n_pcs = take32(c);
	if (c->bad || l->n_pcs > FGP_MAX_INLINE_PCS)
		return -EBADMSG;
	l->pcs_raw = c->p;
	rv = decode_pcs(c, l);
	l->pcs_len = (size_t)(c->p - l->pcs_raw);
	return rv;
}

static int decode_code_load(struct cur *c, struct fgp_code_load *l, bool by_id)
{
	if (by_id)
		take_code_load_ids(c, l);
	else
		take_code_load(c, l);
	if (c->bad || (by_id && l->name_id == 0))
		return -EBADMSG;
	/* A zero-sized blob or one that wraps the address space can never be symbolized. */
	if (l->size == 0 || l->addr + l->size < l->addr)
		return -EBADMSG;
	return decode_inline(c, l, by_id);
}

static int decode_vm_layout(struct cur *c, struct fgp_vm_layout *l)
{
	uint64_t seen = 0;
	uint32_t n;

	take_vm_layout(c, l);
	n = take32(c);
	if (c->bad || n > FGP_VML_MAX_ENTRIES || n > (size_t)(c->end - c->p) / 8)
		return -EBADMSG;
	for (uint32_t i = 0; i < n; i++) {
		uint16_t k = take16(c);
		uint16_t z = take16(c);
		uint32_t v = take32(c);

		if (c->bad || z != 0 || k == 0)
			return -EBADMSG;
		if (k >= FGP_VML_NKEYS)
			continue; /* a key from a newer agent */
		if (seen >> k & 1)
			return -EBADMSG;
		seen |= 1ull << k;
		fgp_vml_set(l, (enum fgp_vml_key)k, v);
	}
	return 0;
}

static int decode_code_frame(struct cur *c, struct fgp_code_frame *f)
{
	take_code_frame(c, f);
	if (c->bad)
		return -EBADMSG;
	return fgp_code_frame_check(f);
}

static int decode_code_lines(struct cur *c, struct fgp_code_lines *l)
{
	uint32_t prev = 0;

	take_code_lines(c, l);
	if (c->bad || l->size == 0 || l->addr + l->size < l->addr || l->n_pcs == 0 ||
	    l->n_pcs > FGP_MAX_INLINE_PCS)
		return -EBADMSG;
	l->pcs_raw = c->p;
	for (uint32_t i = 0; i < l->n_pcs; i++) {
		uint32_t off = take32(c);
		uint16_t depth = take16(c);

		if (c->bad || (i > 0 && off <= prev) || off > l->size || depth == 0 ||
		    depth > FGP_MAX_INLINE_DEPTH || !take(c, 2 * (size_t)depth))
			return -EBADMSG;
		prev = off;
	}
	l->pcs_len = (size_t)(c->p - l->pcs_raw);
	return 0;
}

/* STACK_EVENT: flags FGP_REC_STACK_TRUNCATED, FGP_REC_ALLOC_GAP (on ALLOC) or none, fields as
 * stack_event_check, a class, frames with non-zero ids and lines >= 0, a sound gap weight. */
static int decode_stack_event(struct cur *c, uint16_t flags, struct fgp_stack_event *e)
{
	const uint8_t *w;

	take_stack_event(c, e);
	e->weight = 0;
	if (c->bad || flags & ~(FGP_REC_STACK_TRUNCATED | FGP_REC_ALLOC_GAP) || e->cls.len == 0 ||
	    ((flags & FGP_REC_ALLOC_GAP) && e->kind != FGP_EV_ALLOC) ||
	    stack_event_check(e->kind, e->value, e->interval, e->tag, e->depth) != 0)
		return -EBADMSG;
	e->frames_raw = take(c, 8 * (size_t)e->depth);
	if (!e->frames_raw)
		return -EBADMSG;
	for (uint16_t i = 0; i < e->depth; i++) {
		uint32_t id;
		int32_t line;

		fgp_event_frame(e, i, &id, &line);
		if (id == 0 || line < 0)
			return -EBADMSG;
	}
	if (!(flags & FGP_REC_ALLOC_GAP))
		return 0;
	w = take(c, 8);
	if (!w)
		return -EBADMSG;
	e->weight = fgle_get64(w);
	return allocring_gap_ok(e->weight, e->value, e->interval) ? 0 : -EBADMSG;
}

/* OBJECT_FREE: no flags, 1..FGP_MAX_FREE_TAGS tags, exactly as many as the record holds. */
static int decode_object_free(struct cur *c, uint16_t flags, struct fgp_object_free *f)
{
	take_object_free(c, f);
	if (c->bad || flags != 0 || f->n == 0 || f->n > FGP_MAX_FREE_TAGS)
		return -EBADMSG;
	f->tags_raw = take(c, 8 * (size_t)f->n);
	return f->tags_raw ? 0 : -EBADMSG;
}

static int decode_events(struct cur *c, uint16_t flags, struct fgp_events *e)
{
	take_events(c, e);
	if (c->bad || flags != 0 || events_check(e) != 0)
		return -EBADMSG;
	return 0;
}

static int decode_body(uint16_t type, struct cur *c, struct fgp_record *rec)
{
	int rv = 0;

	switch (type) {
	case FGP_HELLO:
		rv = decode_hello(c, &rec->u.hello);
		break;
	case FGP_CODE_LOAD:
	case FGP_CODE_LOAD_IDS:
		rv = decode_code_load(c, &rec->u.load, type == FGP_CODE_LOAD_IDS);
		break;
	case FGP_NAME:
		take_name(c, &rec->u.name);
		if (!c->bad && rec->u.name.id == 0)
			rv = -EBADMSG;
		break;
	case FGP_CODE_UNLOAD:
		take_code_unload(c, &rec->u.unload);
		break;
	case FGP_DYNAMIC_CODE:
		take_dynamic_code(c, &rec->u.dyn);
		if (!c->bad &&
		    (rec->u.dyn.size == 0 || rec->u.dyn.addr + rec->u.dyn.size < rec->u.dyn.addr))
			rv = -EBADMSG;
		break;
	case FGP_SNAPSHOT_BEGIN:
	case FGP_SNAPSHOT_END:
		take_snapshot(c, &rec->u.snap);
		break;
	case FGP_TABLES:
		take_tables(c, &rec->u.tables);
		if (!c->bad && rec->u.tables.on > 1)
			rv = -EBADMSG;
		break;
	case FGP_DROPPED:
		take_dropped(c, &rec->u.dropped);
		break;
	case FGP_VM_LAYOUT:
		rv = decode_vm_layout(c, &rec->u.layout);
		break;
	case FGP_CODE_FRAME:
		rv = decode_code_frame(c, &rec->u.frame);
		break;
	case FGP_CODE_LINES:
		rv = decode_code_lines(c, &rec->u.lines);
		break;
	case FGP_STACK_EVENT:
		rv = decode_stack_event(c, rec->flags, &rec->u.ev);
		break;
	case FGP_OBJECT_FREE:
		rv = decode_object_free(c, rec->flags, &rec->u.freed);
		break;
	case FGP_EVENTS:
		rv = decode_events(c, rec->flags, &rec->u.events);
		break;
	case FGP_ALLOC_COST:
		take_alloc_cost(c, &rec->u.cost);
		if (!c->bad && rec->flags != 0)
			rv = -EBADMSG;
		break;
	default:
		return 0; /* unknown type: skipped by size, body not decoded */
	}
	if (rv == 0 && c->bad)
		rv = -EBADMSG;
	/* Known records must be exactly as long as their body: trailing bytes mean a bad encoder.
	 */
	if (rv == 0 && c->p != c->end)
		rv = -EBADMSG;
	return rv;
}

/* Decode the record at h, size bytes long (checked by the caller). 1 or -EBADMSG. */
static int decode_one(const uint8_t *h, uint32_t size, struct fgp_record *rec)
{
	struct cur c;

	memset(rec, 0, sizeof(*rec));
	rec->type = fgle_get16(h);
	rec->flags = fgle_get16(h + 2);
	rec->size = size;
	c.p = h + FGP_REC_HEADER_SIZE;
	c.end = h + size;
	c.bad = 0;
	if (decode_body(rec->type, &c, rec) != 0)
		return -EBADMSG;
	return 1;
}

int fgp_next(struct fgp_reader *r, struct fgp_record *rec)
{
	const uint8_t *h;
	uint32_t size;

	if (r->done)
		return 0;
	if (r->off == r->len) {
		r->done = 1;
		return 0;
	}
	if (r->len - r->off < FGP_REC_HEADER_SIZE) {
		r->done = 1;
		return -EBADMSG;
	}
	h = r->buf + r->off;
	size = fgle_get32(h + 4);
	if (size < FGP_REC_HEADER_SIZE || size > FGP_MAX_RECORD || size > r->len - r->off) {
		r->done = 1; /* cannot find the next record: stop */
		return -EBADMSG;
	}
	r->off += size; /* in sync from here on, whatever the body holds */
	return decode_one(h, size, rec);
}

int fgp_decode_record(const uint8_t *rec, size_t len, struct fgp_record *out)
{
	if (len < FGP_REC_HEADER_SIZE || len > FGP_MAX_RECORD || fgle_get32(rec + 4) != len)
		return -EBADMSG;
	return decode_one(rec, len, out);
}

/* ---- inline table walking ------------------------------------------------------------- */

void fgp_methods_begin(const struct fgp_code_load *c, struct fgp_inline_iter *it)
{
	it->p = c->methods_raw;
	it->left = c->n_methods;
	it->names = c->methods;
}

int fgp_methods_next(struct fgp_inline_iter *it, struct fgp_str *out)
{
	if (it->left == 0)
		return 0;
	if (it->names) {
		*out = *it->names++;
		it->left--;
		return 1;
	}
	out->len = fgle_get16(it->p);
	out->ptr = (const char *)it->p + 2;
	it->p += 2 + (size_t)out->len;
	it->left--;
	return 1;
}

void fgp_pcs_begin(const struct fgp_code_load *c, struct fgp_inline_iter *it)
{
	it->p = c->pcs_raw;
	it->left = c->n_pcs;
	it->names = NULL;
}

int fgp_pcs_next(struct fgp_inline_iter *it, struct fgp_pc *out)
{
	if (it->left == 0)
		return 0;
	out->pc_off = fgle_get32(it->p);
	out->depth = fgle_get16(it->p + 4);
	out->chain_raw = it->p + 6;
	it->p += 6 + 2 * (size_t)out->depth;
	it->left--;
	return 1;
}

uint16_t fgp_pc_at(const struct fgp_pc *pc, unsigned i)
{
	return fgle_get16(pc->chain_raw + 2 * (size_t)i);
}

void fgp_lines_begin(const struct fgp_code_lines *l, struct fgp_inline_iter *it)
{
	it->p = l->pcs_raw;
	it->left = l->n_pcs;
	it->names = NULL;
}

uint32_t fgp_load_method_id(const struct fgp_code_load *c, unsigned i)
{
	return fgle_get32(c->methods_raw + 4 * (size_t)i);
}

const char *fgp_type_name(uint16_t type)
{
	switch (type) {
#define TYPE_NAME(t, name)                                                                         \
	case t:                                                                                    \
		return name;
		FGP_TYPES(TYPE_NAME)
#undef TYPE_NAME
	default:
		return "unknown";
	}
}
