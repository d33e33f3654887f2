// SPDX-License-Identifier: MIT
/*
 * pprof.c - profile.proto writer: string/function/stack tables and a protobuf encoder.
 *
 * Field numbers are those of google/pprof's proto/profile.proto. Ids: string 0 is "";
 * function i and location i share the id i (1-based), one location per function.
 *
 * Invariant: a sample's location ids and label always refer to entries already in the
 * tables, so any prefix of pprof_add() calls encodes to a self-consistent profile.
 */
#include "pprof.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "array.h"
#include "htab.h"
#include "util.h"
#include "fgfree.h"

/* profile.proto field numbers. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUETYPE_TYPE = 1,
	VALUETYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,
	LABEL_KEY = 1,
	LABEL_STR = 2,
	LOCATION_ID = 1,
	LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
};

struct stack {
	uint32_t *fn; /* function ids, leaf first (profile.proto order) */
	uint32_t n;
	uint32_t thread; /* string index, 0 = none */
	uint64_t hash;
	int64_t count;
	int64_t aux; /* event profiles: the first sample type's value */
};

struct pprof {
	uint64_t period;
	int64_t start, duration;
	/* strings: index -> owned copy; hash table of indices */
	char **str;
	size_t nstr, capstr, strbytes;
	struct htab strtab; /* string hash -> index */
	/* function id (1-based) -> its name's string index */
	uint32_t *fname;
	size_t nfn, capfn;
	uint32_t *fnidx; /* string index -> function id, 0 = none */
	size_t capfnidx;
	struct stack *stacks;
	size_t nstacks, capstacks;
	struct htab stacktab; /* stack hash -> index */
	uint32_t s_samples, s_count, s_cpu, s_ns, s_thread;
	bool time_only;			       /* pprof_set_time_type: only (s_cpu, s_ns) */
	bool event;			       /* pprof_set_event_types: (s_samples, s_count) is
						* the aux value, (s_cpu, s_ns) count x period */
	uint32_t s_ptype, s_punit;	       /* event profiles: the period type */
	uint32_t comments[PPROF_MAX_COMMENTS]; /* string indexes */
	size_t ncomments;
};

static uint64_t fnv(const void *b, size_t n, uint64_t h)
{
	const uint8_t *p = b;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Index of string s[0..len) in the table, added if new; -errno on failure. */
static int64_t intern(struct pprof *p, const char *s, size_t len)
{
	uint64_t h = fnv(s, len, 0xcbf29ce484222325ull) & HTAB_KEY_MASK;
	const uint64_t *v;
	size_t pos = 0;
	char *c;

	if (len > PPROF_MAX_NAME)
		return -E2BIG;
	while ((v = htab_next(&p->strtab, h, &pos))) {
		const char *e = p->str[*v];

		if (strncmp(e, s, len) == 0 && e[len] == '\0')
			return (int64_t)*v;
	}
	if (p->strbytes + len + 1 > PPROF_MAX_STRING_BYTES || p->nstr >= UINT32_MAX / 2)
		return -ENOSPC;
	if (ARRAY_GROW(p->str, p->capstr, p->nstr + 1) != 0 ||
	    htab_reserve(&p->strtab, p->nstr + 1) != 0 || !(c = malloc(len + 1)))
		return -ENOMEM;
	memcpy(c, s, len);
	c[len] = '\0';
	(void)htab_add(&p->strtab, h, p->nstr); /* cannot fail after the reserve */
	p->str[p->nstr++] = c;
	p->strbytes += len + 1;
	return (int64_t)p->nstr - 1;
}

/* Function id for name s[0..len), added if new. */
static int64_t function_of(struct pprof *p, const char *s, size_t len)
{
	int64_t si = intern(p, s, len);

	if (si < 0)
		return si;
	/* fnidx is indexed by string index: keep it as long as the string table. */
	if ((size_t)si >= p->capfnidx) {
		size_t old = p->capfnidx;

		if (ARRAY_GROW(p->fnidx, p->capfnidx, (size_t)si + 1) != 0)
			return -ENOMEM;
		memset(p->fnidx + old, 0, (p->capfnidx - old) * sizeof(*p->fnidx));
	}
	if (p->fnidx[si])
		return p->fnidx[si];
	if (ARRAY_GROW(p->fname, p->capfn, p->nfn + 1) != 0)
		return -ENOMEM;
	p->fname[p->nfn++] = (uint32_t)si;
	p->fnidx[si] = (uint32_t)p->nfn;
	return (int64_t)p->nfn;
}

struct pprof *pprof_new(uint64_t period_ns)
{
	struct pprof *p = calloc(1, sizeof(*p));
	int64_t ids[5];
	static const char *const fixed[] = { "samples", "count", "cpu", "nanoseconds", "thread" };

	if (!p)
		return NULL;
	p->period = period_ns;
	if (intern(p, "", 0) != 0)
		goto fail;
	for (size_t i = 0; i < 5; i++)
		if ((ids[i] = intern(p, fixed[i], strlen(fixed[i]))) < 0)
			goto fail;
	p->s_samples = (uint32_t)ids[0];
	p->s_count = (uint32_t)ids[1];
	p->s_cpu = (uint32_t)ids[2];
	p->s_ns = (uint32_t)ids[3];
	p->s_thread = (uint32_t)ids[4];
	return p;
fail:
	pprof_free(p);
	return NULL;
}

int pprof_set_time_type(struct pprof *p, const char *type)
{
	int64_t id = intern(p, type, strlen(type));

	if (id < 0)
		return (int)id;
	p->s_cpu = (uint32_t)id;
	p->time_only = true;
	return 0;
}

int pprof_set_event_types(struct pprof *p, const char *t1, const char *u1, const char *t2,
			  const char *u2, const char *ptype, const char *punit)
{
	const char *v[6] = { t1, u1, t2, u2, ptype, punit };
	int64_t id[6];

	for (size_t i = 0; i < 6; i++)
		if ((id[i] = intern(p, v[i], strlen(v[i]))) < 0)
			return (int)id[i];
	p->s_samples = (uint32_t)id[0];
	p->s_count = (uint32_t)id[1];
	p->s_cpu = (uint32_t)id[2];
	p->s_ns = (uint32_t)id[3];
	p->s_ptype = (uint32_t)id[4];
	p->s_punit = (uint32_t)id[5];
	p->event = true;
	p->time_only = false;
	return 0;
}

void pprof_free(struct pprof *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nstr; i++)
		free(p->str[i]);
	for (size_t i = 0; i < p->nstacks; i++)
		free(p->stacks[i].fn);
	free(p->str);
	htab_fini(&p->strtab);
	FG_FREE_ALL(p->fname, p->fnidx, p->stacks);
	htab_fini(&p->stacktab);
	free(p);
}

void pprof_set_time(struct pprof *p, int64_t start_unix_ns, int64_t duration_ns)
{
	p->start = start_unix_ns;
	p->duration = duration_ns;
}

/* Merge or append the stack fn[0..n) (leaf first) with thread label `thread`. */
static int add_stack(struct pprof *p, uint32_t *fn, uint32_t n, uint32_t thread, int64_t count,
		     int64_t aux)
{
	uint64_t h = fnv(fn, n * sizeof(*fn), fnv(&thread, sizeof(thread), 0xcbf29ce484222325ull));
	const uint64_t *v;
	struct stack *st;
	size_t pos = 0;

	while ((v = htab_next(&p->stacktab, h & HTAB_KEY_MASK, &pos))) {
		st = &p->stacks[*v];
		if (st->hash == h && st->n == n && st->thread == thread &&
		    memcmp(st->fn, fn, n * sizeof(*fn)) == 0) {
			st->count = count > INT64_MAX - st->count ? INT64_MAX : st->count + count;
			st->aux = aux > INT64_MAX - st->aux ? INT64_MAX : st->aux + aux;
			return 0;
		}
	}
	if (p->nstacks >= PPROF_MAX_STACKS)
		return -ENOSPC;
	if (ARRAY_GROW(p->stacks, p->capstacks, p->nstacks + 1) != 0 ||
	    htab_reserve(&p->stacktab, p->nstacks + 1) != 0)
		return -ENOMEM;
	st = &p->stacks[p->nstacks];
	st->fn = malloc(n * sizeof(*fn));
	if (!st->fn)
		return -ENOMEM;
	memcpy(st->fn, fn, n * sizeof(*fn));
	st->n = n;
	st->thread = thread;
	st->hash = h;
	st->count = count;
	st->aux = aux;
	(void)htab_add(&p->stacktab, h & HTAB_KEY_MASK, p->nstacks); /* reserved above */
	p->nstacks++;
	return 0;
}

/* Shared by pprof_add and pprof_add_folded: frames given as (ptr, len) pairs, root first. */
static int add_frames(struct pprof *p, const char *const *s, const size_t *len, size_t n,
		      int64_t count, int64_t aux, const char *thread, size_t thread_len)
{
	uint32_t *fn;
	int64_t t = 0;
	int rv = 0;

	if (n == 0 || count < 0 || aux < 0 || (count == 0 && aux == 0))
		return -EINVAL;
	if (count == 0 && !p->event)
		return -EINVAL;
	if (n > PPROF_MAX_DEPTH)
		return -E2BIG;
	for (size_t i = 0; i < n; i++)
		if (!s[i] || len[i] == 0)
			return -EINVAL;
	if (thread && thread_len > 0 && (t = intern(p, thread, thread_len)) < 0)
		return (int)t;
	fn = malloc(n * sizeof(*fn));
	if (!fn)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int64_t f = function_of(p, s[i], len[i]);

		if (f < 0) {
			rv = (int)f;
			goto out;
		}
		fn[n - 1 - i] = (uint32_t)f; /* root first in, leaf first out */
	}
	rv = add_stack(p, fn, (uint32_t)n, (uint32_t)t, count, aux);
out:
	free(fn);
	return rv;
}

int pprof_add(struct pprof *p, const char *const *frames, size_t n, int64_t count,
	      const char *thread)
{
	return pprof_add2(p, frames, n, count, 0, thread);
}

int pprof_add2(struct pprof *p, const char *const *frames, size_t n, int64_t count, int64_t aux,
	       const char *thread)
{
	size_t *len;
	int rv;

	if (n > PPROF_MAX_DEPTH)
		return -E2BIG;
	if (n == 0)
		return -EINVAL;
	len = malloc(n * sizeof(*len));
	if (!len)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		len[i] = frames[i] ? strnlen(frames[i], PPROF_MAX_NAME + 1) : 0;
	rv = add_frames(p, frames, len, n, count, aux, thread,
			thread ? strnlen(thread, PPROF_MAX_NAME + 1) : 0);
	free(len);
	return rv;
}

int pprof_add_folded(struct pprof *p, const char *stack, size_t len, int64_t count,
		     int root_is_thread)
{
	const char **s;
	size_t *l, n = 1, k = 0, start = 0;
	int rv;

	for (size_t i = 0; i < len; i++)
		n += stack[i] == ';';
	if (n > PPROF_MAX_DEPTH)
		return -E2BIG;
	s = malloc(n * sizeof(*s));
	l = malloc(n * sizeof(*l));
	if (!s || !l) {
		free(s);
		free(l);
		return -ENOMEM;
	}
	for (size_t i = 0; i <= len; i++) {
		if (i == len || stack[i] == ';') {
			s[k] = stack + start;
			l[k++] = i - start;
			start = i + 1;
		}
	}
	rv = add_frames(p, s, l, n, count, 0, root_is_thread ? s[0] : NULL,
			root_is_thread ? l[0] : 0);
	free(s);
	free(l);
	return rv;
}

/* A growable byte buffer; `oom` is sticky so encoders check once at the end. */
struct buf {
	uint8_t *p;
	size_t n, cap;
	bool oom;
};

static void buf_put(struct buf *b, const void *d, size_t n)
{
	if (b->oom || n == 0) /* n == 0: d may be NULL (an empty message), memcpy forbids it */
		return;
	if (ARRAY_GROW(b->p, b->cap, b->n + n) != 0) {
		b->oom = true;
		return;
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void put_varint(struct buf *b, uint64_t v)
{
	uint8_t t[10];
	size_t n = 0;

	do {
		t[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			t[n] |= 0x80;
		n++;
	} while (v);
	buf_put(b, t, n);
}

/* Varint field (wire type 0); proto3 omits zero values. */
static void put_uint(struct buf *b, unsigned int field, uint64_t v)
{
	if (v == 0)
		return;
	put_varint(b, (uint64_t)field << 3);
	put_varint(b, v);
}

/* Length-delimited field (wire type 2). */
static void put_bytes(struct buf *b, unsigned int field, const void *d, size_t n)
{
	put_varint(b, (uint64_t)field << 3 | 2);
	put_varint(b, n);
	buf_put(b, d, n);
}

/* A nested message built in `tmp`, then emitted as field `field` of `b`. */
static void put_msg(struct buf *b, unsigned int field, struct buf *tmp)
{
	if (tmp->oom)
		b->oom = true;
	put_bytes(b, field, tmp->p, tmp->n);
	tmp->n = 0;
}

static void put_value_type(struct buf *b, unsigned int field, struct buf *tmp, uint32_t type,
			   uint32_t unit)
{
	put_uint(tmp, VALUETYPE_TYPE, type);
	put_uint(tmp, VALUETYPE_UNIT, unit);
	put_msg(b, field, tmp);
}

int pprof_encode(const struct pprof *p, uint8_t **out, size_t *out_len)
{
	struct buf b = { 0 }, m = { 0 }, pk = { 0 };

	if (!p->time_only)
		put_value_type(&b, PROFILE_SAMPLE_TYPE, &m, p->s_samples, p->s_count);
	put_value_type(&b, PROFILE_SAMPLE_TYPE, &m, p->s_cpu, p->s_ns);
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct stack *st = &p->stacks[i];
		uint64_t cpu = (uint64_t)st->count * p->period;

		for (uint32_t k = 0; k < st->n; k++)
			put_varint(&pk, st->fn[k]);
		put_bytes(&m, SAMPLE_LOCATION_ID, pk.p, pk.n);
		pk.n = 0;
		if (p->event)
			put_varint(&pk, (uint64_t)st->aux);
		else if (!p->time_only)
			put_varint(&pk, (uint64_t)st->count);
		put_varint(&pk, cpu);
		put_bytes(&m, SAMPLE_VALUE, pk.p, pk.n);
		pk.n = 0;
		if (st->thread) {
			put_uint(&pk, LABEL_KEY, p->s_thread);
			put_uint(&pk, LABEL_STR, st->thread);
			put_msg(&m, SAMPLE_LABEL, &pk);
		}
		put_msg(&b, PROFILE_SAMPLE, &m);
	}
	for (size_t i = 0; i < p->nfn; i++) {
		put_uint(&m, LOCATION_ID, i + 1);
		put_uint(&pk, LINE_FUNCTION_ID, i + 1);
		put_msg(&m, LOCATION_LINE, &pk);
		put_msg(&b, PROFILE_LOCATION, &m);
	}
	for (size_t i = 0; i < p->nfn; i++) {
		put_uint(&m, FUNCTION_ID, i + 1);
		put_uint(&m, FUNCTION_NAME, p->fname[i]);
		put_uint(&m, FUNCTION_SYSTEM_NAME, p->fname[i]);
		put_msg(&b, PROFILE_FUNCTION, &m);
	}
	for (size_t i = 0; i < p->nstr; i++)
		put_bytes(&b, PROFILE_STRING_TABLE, p->str[i], strlen(p->str[i]));
	put_uint(&b, PROFILE_TIME_NANOS, (uint64_t)p->start);
	put_uint(&b, PROFILE_DURATION_NANOS, (uint64_t)p->duration);
	if (p->event)
		put_value_type(&b, PROFILE_PERIOD_TYPE, &m, p->s_ptype, p->s_punit);
	else
		put_value_type(&b, PROFILE_PERIOD_TYPE, &m, p->s_cpu, p->s_ns);
	put_uint(&b, PROFILE_PERIOD, p->period);
	for (size_t i = 0; i < p->ncomments; i++)
		put_uint(&b, PROFILE_COMMENT, p->comments[i]);
	put_uint(&b, PROFILE_DEFAULT_SAMPLE_TYPE, p->s_cpu);
	free(m.p);
	free(pk.p);
	if (b.oom || m.oom || pk.oom) {
		free(b.p);
		return -ENOMEM;
	}
	*out = b.p;
	*out_len = b.n;
	return 0;
}

int pprof_add_comment(struct pprof *p, const char *text)
{
	int64_t idx;

	if (!text || !*text)
		return -EINVAL;
	if (p->ncomments == PPROF_MAX_COMMENTS)
		return -ENOSPC;
	idx = intern(p, text, strlen(text));
	if (idx < 0)
		return (int)idx;
	p->comments[p->ncomments++] = (uint32_t)idx;
	return 0;
}

#define GZ_CHUNK ((size_t)65536) /* room deflate gets per call */

int pprof_encode_gz(const struct pprof *p, uint8_t **out, size_t *out_len)
{
	uint8_t *raw, *buf = NULL;
	size_t len, cap = 0, n = 0;
	z_stream z;
	int rv, zr;

	if ((rv = pprof_encode(p, &raw, &len)) != 0)
		return rv;
	memset(&z, 0, sizeof(z));
	/* windowBits 15 + 16: a gzip header and trailer instead of zlib's. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK) {
		free(raw);
		return -ENOMEM;
	}
	z.next_in = raw;
	z.avail_in = 0;
	do {
		/* avail_in is 32-bit: feed at most 1 GiB at a time. */
		if (z.avail_in == 0 && len > 0) {
			z.avail_in = len > (1u << 30) ? (1u << 30) : (uInt)len;
			len -= z.avail_in;
		}
		if (cap - n < GZ_CHUNK && ARRAY_GROW(buf, cap, n + GZ_CHUNK) != 0) {
			rv = -ENOMEM;
			break;
		}
		z.next_out = buf + n;
		z.avail_out = (uInt)(cap - n);
		zr = deflate(&z, len == 0 ? Z_FINISH : Z_NO_FLUSH);
		if (zr == Z_STREAM_ERROR) {
			rv = -EIO;
			break;
		}
		n = cap - z.avail_out;
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	free(raw);
	if (rv != 0) {
		free(buf);
		return rv;
	}
	*out = buf;
	*out_len = n;
	return 0;
}

int pprof_write_gz(const struct pprof *p, int fd)
{
	uint8_t *gz;
	size_t len;
	int rv;

	if ((rv = pprof_encode_gz(p, &gz, &len)) != 0)
		return rv;
	rv = fg_write_all(fd, gz, len);
	free(gz);
	return rv;
}
