// SPDX-License-Identifier: MIT
/*
 * interp.c - name interpreted frames from a JVM's metadata read from outside (see interp.h).
 *
 * A miss resolves a Method* with about six dependent reads (the method's ConstMethod pointer,
 * the ConstMethod header, the pool holder and method-name slot, the holder's name Symbol and
 * both Symbols' bytes, the line table when asked). A hit re-reads all of those in one
 * process_vm_readv call (one iovec each) and compares them with what the name was made from.
 *
 * Invariant: a name is returned only when every pointer and byte it was derived from was read
 * (again) during the current call and is equal to what the name was made from.
 */
#include "interp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fghash.h"
#define OFF_MAX 4096u
#define HDR_MAX 256u	      /* largest ConstMethod header we accept */
#define SYM_PEEK 256u	      /* bytes of a Symbol read before its length is known */
#define SLOT_MAX 64	      /* |frame slot| in words */
#define USER_TOP (1ull << 47) /* x86-64 user addresses lie below */

struct ment {
	uint32_t pid; /* 0 = empty slot */
	uint64_t method, cm, cp, holder, hsym, msym;
	uint16_t code_size, name_index, sig_index, idnum;
	uint32_t flags;
	uint16_t hlen, mlen, llen;
	bool lines_read;
	uint64_t stamp;	    /* when last read and found valid (interp_name_many's stamp) */
	uint32_t valid_gen; /* == the namer's call_gen: revalidated by this call's batch */
	uint32_t sched_gen; /* == call_gen: already in this call's batch */
	bool stale;	    /* the batch found it changed */
	uint8_t *bytes;	    /* holder name (hlen) | method name (mlen) | line table (llen) */
	char *name;
};

struct interp_namer {
	struct vmmem_ops mem;
	struct ment *tab;
	size_t cap, n;
	unsigned budget;
	struct interp_stats st;
	uint32_t call_gen;
	uint64_t cur_stamp;    /* stamp of the current call (0: none) */
	struct reval *rv;      /* INTERP_BATCH revalidation buffers */
	struct iovec *bl, *br; /* INTERP_BATCH * REVAL_IOVS iovecs */
};

static bool ptr_ok(uint64_t p);

/* Where one entry's revalidation reads land (7 ranges, see reval_plan). */
struct reval {
	uint64_t cm, holder, msym, hsym;
	uint8_t hdr[HDR_MAX];
	uint8_t hs[64 + INTERP_MAX_CLASS_NAME], ms[64 + INTERP_MAX_METHOD_NAME];
};

#define REVAL_IOVS 7

/* ---- layout ---------------------------------------------------------------------------- */

static bool fits(uint32_t off, uint32_t width, uint32_t size)
{
	return off < size && width <= size - off;
}

int interp_layout_init(const struct fgp_vm_layout *l, struct interp_layout *o, const char **why)
{
	static const enum fgp_vml_key need[] = {
		FGP_VML_METHOD_CONSTMETHOD,	FGP_VML_CONSTMETHOD_CONSTANTS,
		FGP_VML_CONSTMETHOD_NAME_INDEX, FGP_VML_CONSTMETHOD_SIGNATURE_INDEX,
		FGP_VML_CONSTMETHOD_CODE_SIZE,	FGP_VML_CONSTMETHOD_IDNUM,
		FGP_VML_CONSTMETHOD_SIZE,	FGP_VML_CONSTPOOL_HOLDER,
		FGP_VML_CONSTPOOL_SIZE,		FGP_VML_KLASS_NAME,
		FGP_VML_SYMBOL_LENGTH,		FGP_VML_SYMBOL_BODY,
	};

	memset(o, 0, sizeof(*o));
	if (!(l->caps & FGP_VML_CAP_NAMES)) {
		*why = "the agent could not read this JVM's VMStructs";
		return -ENOTSUP;
	}
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		if (!fgp_vml_has(l, need[i]) || fgp_vml_get(l, need[i]) >= OFF_MAX) {
			*why = "the agent's VM layout lacks a field or has an insane offset";
			return -ENOTSUP;
		}
	}
	o->m_cm = fgp_vml_get(l, FGP_VML_METHOD_CONSTMETHOD);
	o->cm_cp = fgp_vml_get(l, FGP_VML_CONSTMETHOD_CONSTANTS);
	o->cm_name = fgp_vml_get(l, FGP_VML_CONSTMETHOD_NAME_INDEX);
	o->cm_sig = fgp_vml_get(l, FGP_VML_CONSTMETHOD_SIGNATURE_INDEX);
	o->cm_code_size = fgp_vml_get(l, FGP_VML_CONSTMETHOD_CODE_SIZE);
	o->cm_idnum = fgp_vml_get(l, FGP_VML_CONSTMETHOD_IDNUM);
	o->cm_size = fgp_vml_get(l, FGP_VML_CONSTMETHOD_SIZE);
	o->cp_holder = fgp_vml_get(l, FGP_VML_CONSTPOOL_HOLDER);
	o->cp_size = fgp_vml_get(l, FGP_VML_CONSTPOOL_SIZE);
	o->k_name = fgp_vml_get(l, FGP_VML_KLASS_NAME);
	o->sym_len = fgp_vml_get(l, FGP_VML_SYMBOL_LENGTH);
	o->sym_body = fgp_vml_get(l, FGP_VML_SYMBOL_BODY);
	if (o->cm_size > HDR_MAX || !fits(o->cm_cp, 8, o->cm_size) ||
	    !fits(o->cm_name, 2, o->cm_size) || !fits(o->cm_sig, 2, o->cm_size) ||
	    !fits(o->cm_code_size, 2, o->cm_size) || !fits(o->cm_idnum, 2, o->cm_size) ||
	    o->sym_len + 2 > o->sym_body || o->sym_body > 64 || o->cp_size == 0) {
		*why = "the agent's VM layout is inconsistent";
		return -ENOTSUP;
	}
	o->names = true;
	if ((l->caps & FGP_VML_CAP_LINES) && fgp_vml_has(l, FGP_VML_CONSTMETHOD_FLAGS) &&
	    fgp_vml_has(l, FGP_VML_CONSTMETHOD_FLAGS_SIZE) &&
	    fgp_vml_has(l, FGP_VML_CONSTMETHOD_HAS_LINES) &&
	    fgp_vml_has(l, FGP_VML_LINES_UNSIGNED5_X)) {
		o->cm_flags = fgp_vml_get(l, FGP_VML_CONSTMETHOD_FLAGS);
		o->cm_flags_size = fgp_vml_get(l, FGP_VML_CONSTMETHOD_FLAGS_SIZE);
		o->cm_has_lines = fgp_vml_get(l, FGP_VML_CONSTMETHOD_HAS_LINES);
		o->u5_x = fgp_vml_get(l, FGP_VML_LINES_UNSIGNED5_X);
		o->lines = (o->cm_flags_size == 2 || o->cm_flags_size == 4) &&
			   fits(o->cm_flags, o->cm_flags_size, o->cm_size) && o->cm_has_lines &&
			   o->u5_x <= 1;
	}
	if ((l->caps & FGP_VML_CAP_INTERP_FRAME) && fgp_vml_has(l, FGP_VML_INTERP_METHOD_SLOT) &&
	    fgp_vml_has(l, FGP_VML_INTERP_BCP_SLOT)) {
		o->slot_method = (int32_t)fgp_vml_get(l, FGP_VML_INTERP_METHOD_SLOT);
		o->slot_bcp = (int32_t)fgp_vml_get(l, FGP_VML_INTERP_BCP_SLOT);
		o->frames = o->slot_method >= -SLOT_MAX && o->slot_method <= SLOT_MAX &&
			    o->slot_bcp >= -SLOT_MAX && o->slot_bcp <= SLOT_MAX &&
			    o->slot_method != 0 && o->slot_bcp != 0;
	}
	if ((l->caps & FGP_VML_CAP_GC_CLOCK) && fgp_vml_has(l, FGP_VML_GC_CLOCK_LO) &&
	    fgp_vml_has(l, FGP_VML_GC_CLOCK_HI)) {
		o->gc_clock = (uint64_t)fgp_vml_get(l, FGP_VML_GC_CLOCK_HI) << 32 |
			      fgp_vml_get(l, FGP_VML_GC_CLOCK_LO);
		if (!ptr_ok(o->gc_clock))
			o->gc_clock = 0;
	}
	if (!o->frames)
		*why = "the agent does not know this JDK's interpreter frame layout";
	return 0;
}

/* ---- line tables ----------------------------------------------------------------------- */

/* One UNSIGNED5 value (HotSpot's CompressedReadStream): 1..5 bytes. -1 when malformed. */
static int u5(const uint8_t *p, size_t len, size_t *pos, uint32_t x, uint32_t *out)
{
	const uint32_t low = 192; /* bytes below x + low end a value */
	uint32_t sum = 0;

	for (unsigned i = 0, shift = 0; i < 5; i++, shift += 6) {
		uint8_t b;

		if (*pos >= len)
			return -1;
		b = p[(*pos)++];
		if (b < x)
			return -1;
		sum += (uint32_t)(b - x) << shift;
		if (b < low || i == 4)
			break;
	}
	*out = sum;
	return 0;
}

static int32_t unzig(uint32_t v)
{
	return (int32_t)(v >> 1) ^ -(int32_t)(v & 1);
}

/* Walk tab; end at the 0 terminator. Sets *end (bytes used) and the best line for bci. */
static int line_walk(const uint8_t *tab, size_t len, uint32_t x, uint32_t bci, int *line,
		     size_t *end)
{
	uint32_t cur_bci = 0, best_bci = 0;
	int32_t cur_line = 0, best_line = -1;
	size_t pos = 0;

	for (;;) {
		uint8_t b;

		if (pos >= len)
			return -EBADMSG;
		b = tab[pos++];
		if (b == 0)
			break;
		if (b == 0xff) {
			uint32_t db, dl;

			if (u5(tab, len, &pos, x, &db) || u5(tab, len, &pos, x, &dl))
				return -EBADMSG;
			cur_bci += (uint32_t)unzig(db);
			cur_line += unzig(dl);
		} else {
			cur_bci += b >> 3;
			cur_line += b & 7;
		}
		if (cur_bci <= bci && (best_line < 0 || cur_bci >= best_bci)) {
			best_bci = cur_bci;
			best_line = cur_line;
		}
	}
	*end = pos;
	if (best_line <= 0)
		return -ENOENT;
	*line = best_line;
	return 0;
}

int interp_line_of(const uint8_t *tab, size_t len, uint32_t x, uint32_t bci, int *line)
{
	size_t end;

	return line_walk(tab, len, x, bci, line, &end);
}

/* ---- reading --------------------------------------------------------------------------- */

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static uint32_t getflags(const struct interp_layout *l, const uint8_t *hdr)
{
	uint32_t v = 0;

	if (!l->lines)
		return 0;
	memcpy(&v, hdr + l->cm_flags, l->cm_flags_size); /* little-endian */
	return v;
}

static bool ptr_ok(uint64_t p)
{
	return p != 0 && (p & 7) == 0 && p < USER_TOP;
}

/* One read call of cnt ranges; *got = bytes read. 0, -EDQUOT or the reader's -errno. */
static int rd(struct interp_namer *n, uint32_t pid, struct iovec *loc, struct iovec *rem,
	      unsigned cnt, size_t *got)
{
	ssize_t r;

	if (n->budget == 0) {
		n->st.over_budget++;
		return -EDQUOT;
	}
	n->budget--;
	n->st.reads++;
	r = n->mem.readv(n->mem.ctx, (pid_t)pid, loc, cnt, rem, cnt);
	if (r < 0)
		return r == -ESRCH ? -ESRCH : -EFAULT;
	n->st.read_bytes += (uint64_t)r;
	*got = (size_t)r;
	return 0;
}

/* rd() that wants every byte. */
static int rd_all(struct interp_namer *n, uint32_t pid, struct iovec *loc, struct iovec *rem,
		  unsigned cnt)
{
	size_t want = 0, got;
	int rv;

	for (unsigned i = 0; i < cnt; i++)
		want += rem[i].iov_len;
	if ((rv = rd(n, pid, loc, rem, cnt, &got)) != 0)
		return rv;
	return got == want ? 0 : -EFAULT;
}

#define IOV(vec, i, addr, buf, len)                                                                \
	do {                                                                                       \
		(vec##_loc)[i].iov_base = (buf);                                                   \
		(vec##_loc)[i].iov_len = (len);                                                    \
		(vec##_rem)[i].iov_base = (void *)(uintptr_t)(addr);                               \
		(vec##_rem)[i].iov_len = (len);                                                    \
	} while (0)

/* Modified UTF-8 of a believable name: no NUL, no control bytes, well-formed sequences. */
static bool name_ok(const uint8_t *p, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len;) {
		uint8_t c = p[i];
		size_t k;

		if (c < 0x20 || c == 0x7f)
			return false;
		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0)
			k = 1;
		else if ((c & 0xf0) == 0xe0)
			k = 2;
		else
			return false;
		for (size_t j = 1; j <= k; j++)
			if (i + j >= len || (p[i + j] & 0xc0) != 0x80)
				return false;
		i += k + 1;
	}
	return true;
}

/* ---- cache ----------------------------------------------------------------------------- */

static uint64_t hkey(uint32_t pid, uint64_t method)
{
	return fg_hash64(method ^ ((uint64_t)pid << 48) ^ pid);
}

static void ment_clear(struct ment *e)
{
	free(e->bytes);
	free(e->name);
	memset(e, 0, sizeof(*e));
}

static struct ment *slot_of(struct interp_namer *n, uint32_t pid, uint64_t method)
{
	size_t mask = n->cap - 1;

	for (size_t i = hkey(pid, method) & mask;; i = (i + 1) & mask) {
		struct ment *e = &n->tab[i];

		if (e->pid == 0 || (e->pid == pid && e->method == method))
			return e;
	}
}

/* Delete e, shifting later entries of its probe run back (linear probing has no tombstones). */
static void ment_delete(struct interp_namer *n, struct ment *e)
{
	size_t mask = n->cap - 1, i = (size_t)(e - n->tab), j = i;

	ment_clear(e);
	n->n--;
	for (;;) {
		size_t k;

		j = (j + 1) & mask;
		if (!n->tab[j].pid)
			return;
		k = hkey(n->tab[j].pid, n->tab[j].method) & mask;
		/* An entry whose home lies cyclically in (i, j] stays where it is. */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		n->tab[i] = n->tab[j];
		memset(&n->tab[j], 0, sizeof(n->tab[j]));
		i = j;
	}
}

static void flush_all(struct interp_namer *n)
{
	for (size_t i = 0; i < n->cap; i++)
		if (n->tab[i].pid)
			ment_clear(&n->tab[i]);
	n->n = 0;
}

/* Rebuild without the entries of pid (open addressing has no cheap delete). */
void interp_forget(struct interp_namer *n, uint32_t pid)
{
	struct ment *old = n->tab;
	struct ment *nt = calloc(n->cap, sizeof(*nt));

	if (!nt) {
		flush_all(n);
		return;
	}
	n->tab = nt;
	n->n = 0;
	for (size_t i = 0; i < n->cap; i++) {
		if (!old[i].pid)
			continue;
		if (old[i].pid == pid) {
			ment_clear(&old[i]);
			continue;
		}
		*slot_of(n, old[i].pid, old[i].method) = old[i];
		n->n++;
	}
	free(old);
}

struct interp_namer *interp_namer_new(const struct vmmem_ops *mem)
{
	struct interp_namer *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->mem = *mem;
	n->cap = (size_t)2 * INTERP_MAX_CACHED;
	n->tab = calloc(n->cap, sizeof(*n->tab));
	if (!n->tab) {
		free(n);
		return NULL;
	}
	n->rv = calloc(INTERP_BATCH, sizeof(*n->rv));
	n->bl = calloc((size_t)INTERP_BATCH * REVAL_IOVS, sizeof(*n->bl));
	n->br = calloc((size_t)INTERP_BATCH * REVAL_IOVS, sizeof(*n->br));
	if (!n->rv || !n->bl || !n->br) {
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
	if (n->tab)
		flush_all(n);
	free(n->tab);
	free(n->rv);
	free(n->bl);
	free(n->br);
	free(n);
}

void interp_begin_sample(struct interp_namer *n)
{
	n->budget = INTERP_MAX_READS;
}

void interp_stats(const struct interp_namer *n, struct interp_stats *out)
{
	*out = n->st;
}

/* ---- resolving ------------------------------------------------------------------------- */

/* What a resolution read, before it becomes an entry. */
struct fresh {
	uint64_t cm, cp, holder, hsym, msym;
	uint16_t code_size, name_index, sig_index, idnum, hlen, mlen;
	uint32_t flags;
	uint8_t hbody[INTERP_MAX_CLASS_NAME], mbody[INTERP_MAX_METHOD_NAME];
};

static int take_header(const struct interp_layout *l, const uint8_t *hdr, struct fresh *f)
{
	f->cp = get64(hdr + l->cm_cp);
	f->code_size = get16(hdr + l->cm_code_size);
	f->name_index = get16(hdr + l->cm_name);
	f->sig_index = get16(hdr + l->cm_sig);
	f->idnum = get16(hdr + l->cm_idnum);
	f->flags = getflags(l, hdr);
	return ptr_ok(f->cp) && f->name_index > 0 ? 0 : -EBADMSG;
}

/* Read a Symbol at sym: length and body into body (cap bytes at most). */
static int read_symbol(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
		       uint64_t sym, uint8_t *body, size_t cap, uint16_t *len)
{
	uint8_t peek[SYM_PEEK + 64];
	struct iovec v_loc[1], v_rem[1];
	size_t got, have;
	uint16_t slen;
	int rv;

	if (!ptr_ok(sym))
		return -EBADMSG;
	IOV(v, 0, sym, peek, l->sym_body + SYM_PEEK);
	/* A Symbol near the end of a mapping reads partially: enough if it covers the body. */
	if ((rv = rd(n, pid, v_loc, v_rem, 1, &got)) != 0)
		return rv;
	if (got < l->sym_body)
		return -EFAULT;
	slen = get16(peek + l->sym_len);
	if (slen == 0 || slen > cap)
		return -EBADMSG;
	have = got - l->sym_body;
	if (have >= slen) {
		memcpy(body, peek + l->sym_body, slen);
	} else {
		memcpy(body, peek + l->sym_body, have);
		IOV(v, 0, sym + l->sym_body + have, body + have, slen - have);
		if ((rv = rd_all(n, pid, v_loc, v_rem, 1)) != 0)
			return rv;
	}
	if (!name_ok(body, slen))
		return -EBADMSG;
	*len = slen;
	return 0;
}

static int resolve(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
		   uint64_t method, struct fresh *f)
{
	uint8_t hdr[HDR_MAX];
	uint64_t w[2];
	struct iovec v_loc[2], v_rem[2];
	int rv;

	IOV(v, 0, method + l->m_cm, &f->cm, 8);
	if ((rv = rd_all(n, pid, v_loc, v_rem, 1)) != 0)
		return rv;
	if (!ptr_ok(f->cm))
		return -EBADMSG;
	IOV(v, 0, f->cm, hdr, l->cm_size);
	if ((rv = rd_all(n, pid, v_loc, v_rem, 1)) != 0)
		return rv;
	if ((rv = take_header(l, hdr, f)) != 0)
		return rv;
	IOV(v, 0, f->cp + l->cp_holder, &w[0], 8);
	IOV(v, 1, f->cp + l->cp_size + 8ull * f->name_index, &w[1], 8);
	if ((rv = rd_all(n, pid, v_loc, v_rem, 2)) != 0)
		return rv;
	f->holder = w[0];
	f->msym = w[1];
	if (!ptr_ok(f->holder))
		return -EBADMSG;
	IOV(v, 0, f->holder + l->k_name, &f->hsym, 8);
	if ((rv = rd_all(n, pid, v_loc, v_rem, 1)) != 0)
		return rv;
	if ((rv = read_symbol(n, pid, l, f->hsym, f->hbody, INTERP_MAX_CLASS_NAME, &f->hlen)))
		return rv;
	return read_symbol(n, pid, l, f->msym, f->mbody, INTERP_MAX_METHOD_NAME, &f->mlen);
}

/* The ranges to re-read for e: everything its name was made from. */
static void reval_plan(const struct interp_layout *l, const struct ment *e, struct reval *r,
		       struct iovec *v_loc, struct iovec *v_rem)
{
	IOV(v, 0, e->method + l->m_cm, &r->cm, 8);
	IOV(v, 1, e->cm, r->hdr, l->cm_size);
	IOV(v, 2, e->cp + l->cp_holder, &r->holder, 8);
	IOV(v, 3, e->cp + l->cp_size + 8ull * e->name_index, &r->msym, 8);
	IOV(v, 4, e->holder + l->k_name, &r->hsym, 8);
	IOV(v, 5, e->hsym, r->hs, l->sym_body + e->hlen);
	IOV(v, 6, e->msym, r->ms, l->sym_body + e->mlen);
}

/* 0 when what was re-read equals what e was made from, else -EBADMSG. */
static int reval_check(const struct interp_layout *l, const struct ment *e, const struct reval *r)
{
	struct fresh f;

	if (r->cm != e->cm || take_header(l, r->hdr, &f) != 0 || f.cp != e->cp ||
	    f.code_size != e->code_size || f.name_index != e->name_index ||
	    f.sig_index != e->sig_index || f.idnum != e->idnum || f.flags != e->flags ||
	    r->holder != e->holder || r->msym != e->msym || r->hsym != e->hsym ||
	    get16(r->hs + l->sym_len) != e->hlen || get16(r->ms + l->sym_len) != e->mlen ||
	    memcmp(r->hs + l->sym_body, e->bytes, e->hlen) != 0 ||
	    memcmp(r->ms + l->sym_body, e->bytes + e->hlen, e->mlen) != 0)
		return -EBADMSG;
	return 0;
}

/* Re-read everything e was made from in one call; 0 when all of it is unchanged. */
static int revalidate(struct interp_namer *n, const struct interp_layout *l, struct ment *e)
{
	struct iovec v_loc[REVAL_IOVS], v_rem[REVAL_IOVS];
	int rv;

	reval_plan(l, e, n->rv, v_loc, v_rem);
	if ((rv = rd_all(n, e->pid, v_loc, v_rem, REVAL_IOVS)) != 0)
		return rv;
	return reval_check(l, e, n->rv);
}

static char *make_name(const struct fresh *f)
{
	char *s = malloc((size_t)f->hlen + 2 + f->mlen + 1);
	size_t k = 0;

	if (!s)
		return NULL;
	/*
	 * Internal form to the agent's (JVMTI signature) form: '/' separates packages, and a
	 * hidden class's '+' (Foo$$Lambda$5+0x0000000800c0b000) is '.' in signatures, so an
	 * interpreted frame and a compiled one of the same method carry the same name.
	 */
	for (uint16_t i = 0; i < f->hlen; i++) {
		char c = (char)f->hbody[i];

		s[k++] = c == '/' || c == '+' ? '.' : c;
	}
	s[k++] = ':';
	s[k++] = ':';
	memcpy(s + k, f->mbody, f->mlen);
	s[k + f->mlen] = '\0';
	return s;
}

static int fill(struct ment *e, uint32_t pid, uint64_t method, const struct fresh *f)
{
	e->bytes = malloc((size_t)f->hlen + f->mlen);
	e->name = make_name(f);
	if (!e->bytes || !e->name) {
		free(e->bytes);
		free(e->name);
		e->bytes = NULL;
		e->name = NULL;
		return -ENOMEM;
	}
	memcpy(e->bytes, f->hbody, f->hlen);
	memcpy(e->bytes + f->hlen, f->mbody, f->mlen);
	e->pid = pid;
	e->method = method;
	e->cm = f->cm;
	e->cp = f->cp;
	e->holder = f->holder;
	e->hsym = f->hsym;
	e->msym = f->msym;
	e->code_size = f->code_size;
	e->name_index = f->name_index;
	e->sig_index = f->sig_index;
	e->idnum = f->idnum;
	e->flags = f->flags;
	e->hlen = f->hlen;
	e->mlen = f->mlen;
	e->llen = 0;
	e->lines_read = false;
	return 0;
}

/* Read e's compressed line table (once); it follows the bytecodes inside the ConstMethod. */
static void load_lines(struct interp_namer *n, const struct interp_layout *l, struct ment *e)
{
	uint8_t buf[INTERP_MAX_LINE_TABLE];
	struct iovec v_loc[1], v_rem[1];
	size_t got, end;
	uint8_t *nb;
	int line;

	if (e->lines_read || !l->lines || !(e->flags & l->cm_has_lines))
		return;
	IOV(v, 0, e->cm + l->cm_size + e->code_size, buf, sizeof(buf));
	if (rd(n, e->pid, v_loc, v_rem, 1, &got) != 0)
		return; /* try again next time */
	e->lines_read = true;
	if (line_walk(buf, got, l->u5_x, 0, &line, &end) == -EBADMSG)
		return;
	nb = realloc(e->bytes, (size_t)e->hlen + e->mlen + end);
	if (!nb)
		return;
	memcpy(nb + e->hlen + e->mlen, buf, end);
	e->bytes = nb;
	e->llen = (uint16_t)end;
}

int interp_gc_clock(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
		    uint64_t *start_ns, uint64_t *end_ns)
{
	uint64_t v[2];
	struct iovec v_loc[1], v_rem[1];
	ssize_t r;

	if (!l->gc_clock)
		return -ENOENT;
	IOV(v, 0, l->gc_clock, v, sizeof(v));
	n->st.reads++;
	r = n->mem.readv(n->mem.ctx, (pid_t)pid, v_loc, 1, v_rem, 1);
	if (r != (ssize_t)sizeof(v))
		return r < 0 ? (int)r : -EFAULT;
	n->st.read_bytes += sizeof(v);
	*start_ns = v[0];
	*end_ns = v[1];
	return 0;
}

static int name_one(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
		    uint64_t method, const uint64_t *bcps, size_t nbcp, bool want_line,
		    const char **name, int *line)
{
	struct ment *e;
	struct fresh f;
	uint64_t code;
	int rv, bci = -1;

	n->st.lookups++;
	*line = -1;
	if (!l->names)
		return -ENOTSUP;
	if (pid == 0 || !ptr_ok(method)) {
		n->st.invalid++;
		return -EBADMSG;
	}
	e = slot_of(n, pid, method);
	if (e->pid && e->valid_gen == n->call_gen) {
		n->st.hits++; /* revalidated (or trusted) by this call's batch */
	} else if (e->pid) {
		rv = e->stale ? -EBADMSG : revalidate(n, l, e);
		if (rv == 0) {
			n->st.hits++;
			e->stamp = n->cur_stamp;
		} else {
			if (rv == -EDQUOT)
				return rv; /* not known to be stale: keep it */
			ment_delete(n, e);
			if (rv != -EBADMSG) {
				n->st.unreadable++;
				return rv;
			}
			/* The same Method* now holds something else (unloaded, reused). */
			n->st.changed++;
			e = slot_of(n, pid, method);
		}
	}
	if (!e->pid) {
		rv = resolve(n, pid, l, method, &f);
		if (rv != 0) {
			if (rv == -EBADMSG)
				n->st.invalid++;
			else if (rv != -EDQUOT)
				n->st.unreadable++;
			return rv;
		}
		n->st.misses++;
		if (n->n + 1 > INTERP_MAX_CACHED) {
			flush_all(n);
			n->st.evictions++;
			e = slot_of(n, pid, method);
		}
		if ((rv = fill(e, pid, method, &f)) != 0)
			return rv;
		e->stamp = n->cur_stamp;
		n->n++;
	}
	/* Native methods have no bytecode (and a zero bcp): nothing to check or locate. */
	code = e->cm + l->cm_size;
	if (e->code_size) {
		for (size_t i = 0; i < nbcp && bci < 0; i++)
			if (bcps[i] >= code && bcps[i] < code + e->code_size)
				bci = (int)(bcps[i] - code);
		if (bci < 0) {
			n->st.bad_bcp++;
			return -ERANGE;
		}
	}
	if (want_line && bci >= 0) {
		load_lines(n, l, e);
		if (e->llen && interp_line_of(e->bytes + e->hlen + e->mlen, e->llen, l->u5_x,
					      (uint32_t)bci, line) == 0)
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
	return name_one(n, pid, l, method, bcps, nbcp, want_line, name, line);
}

void interp_name_many(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
		      struct interp_req *reqs, size_t nreq, bool want_line, uint64_t trust_since,
		      uint64_t stamp)
{
	struct ment *sched[INTERP_BATCH];
	size_t ns = 0, got = 0, at = 0;

	/* One read call revalidates every cached method of the batch (a partial read leaves the
	 * ones after the failure to be checked one by one). */
	if (++n->call_gen == 0)
		n->call_gen = 1;
	n->cur_stamp = stamp;
	/* Room for every request now: a flush in the middle would free names handed out. */
	if (n->n + nreq > INTERP_MAX_CACHED) {
		flush_all(n);
		n->st.evictions++;
	}
	for (size_t i = 0; i < nreq && l->names && pid; i++) {
		struct ment *e;

		if (!ptr_ok(reqs[i].method))
			continue;
		e = slot_of(n, pid, reqs[i].method);
		if (!e->pid || e->sched_gen == n->call_gen)
			continue;
		e->sched_gen = n->call_gen;
		e->stale = false;
		/* Read after the last GC began, recently: its memory cannot have been freed. */
		if (trust_since != UINT64_MAX && e->stamp > trust_since && stamp >= e->stamp &&
		    stamp - e->stamp < INTERP_TRUST_NS) {
			e->valid_gen = n->call_gen;
			n->st.trusted++;
			continue;
		}
		if (ns == INTERP_BATCH)
			continue;
		reval_plan(l, e, &n->rv[ns], n->bl + ns * REVAL_IOVS, n->br + ns * REVAL_IOVS);
		sched[ns++] = e;
	}
	if (ns && rd(n, pid, n->bl, n->br, (unsigned)(ns * REVAL_IOVS), &got) == 0) {
		for (size_t j = 0; j < ns; j++) {
			size_t len = 0;

			for (unsigned k = 0; k < REVAL_IOVS; k++)
				len += n->br[j * REVAL_IOVS + k].iov_len;
			if (at + len > got)
				break; /* not covered by the partial read: checked alone later */
			at += len;
			if (reval_check(l, sched[j], &n->rv[j]) == 0) {
				sched[j]->valid_gen = n->call_gen;
				sched[j]->stamp = stamp;
			} else
				sched[j]->stale = true;
		}
	}
	for (size_t i = 0; i < nreq; i++)
		reqs[i].rv = name_one(n, pid, l, reqs[i].method, reqs[i].bcps, reqs[i].nbcp,
				      want_line, &reqs[i].name, &reqs[i].line);
	/* Names of earlier requests stay valid: interp_name only frees an entry it found stale,
	 * and a stale entry is found before its name was handed out in this call. */
}
