// SPDX-License-Identifier: MIT
/*
 * collapse.c - `perf script` text to folded stacks, matching stackcollapse-perf.pl byte for byte.
 *
 * Per line, in the script's order: '#' comments are skipped, an empty line ends a sample, an
 * event header (comm, pid[/tid], event, period) starts one, and a frame line
 * ("pc symbol+off (module)") is tidied, annotated and prepended to the sample's stack.
 * Each Perl regular expression is replaced by a hand-written scanner that finds the same match
 * the Perl engine finds (the leftmost, then greedy/lazy with backtracking); the comment above
 * each scanner gives the pattern it stands for and why the shortcut is equivalent.
 *
 * Speed: no allocation per line or per sample once buffers reached their size; frames of the
 * current sample go to one byte buffer, the folded stack is assembled once at the blank line,
 * hashed and counted (an array of distinct stacks indexed by the lib htab) whose keys live in an
 * append-only arena.
 *
 * The one invariant: every byte of output is decided by the same rule the script applies, so a
 * change here is checked against tests/golden/collapse, never against intuition.
 */
#include "collapse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__) && !defined(FG_COLLAPSE_SCALAR)
#include <emmintrin.h>
#endif

#include "array.h"
#include "htab.h"
#include "fgfree.h"
#include "util.h"

#define DEF_MAX_LINE ((size_t)1 << 20)
#define DEF_MAX_STACK ((size_t)16 << 20)
#define DEF_MAX_MEMORY ((size_t)4 << 30)
#define ARENA_FIRST ((size_t)16 << 10)
#define ARENA_CHUNK ((size_t)1 << 20)
#define TABLE_MIN 1024

/* A growable byte buffer. */
struct buf {
	char *p;
	size_t len;
	size_t cap;
};

/* One distinct folded stack. */
struct entry {
	const char *key; /* in the arena */
	size_t len;
	uint64_t count;
};

struct chunk {
	struct chunk *next;
	size_t used;
	size_t size;
	char data[];
};

struct collapse {
	struct collapse_opts o;
	char *filter;	   /* event filter in use (owned), NULL until known */
	bool filter_given; /* from the options, not defaulted from the first event */
	char *other_event;

	struct buf partial; /* a line straddling collapse_feed() chunks */
	bool partial_long;  /* ... which is already over max_line */

	/* the sample being read: the script's $pname, $m_period and @stack */
	bool have_pname;
	bool java; /* $pname =~ /^java/ */
	struct buf pname;
	uint64_t period;
	struct buf frames; /* groups of frames, each "text" then its length as a size_t */
	bool oversized;	   /* the sample outgrew max_stack: drop it at its end */

	/* --srcline: a frame line whose pieces still wait for their source line */
	bool pending;
	bool pend_unknown;   /* the script's sticky $is_unknown of that line */
	struct buf pend;     /* a copy of the frame line */
	size_t pend_next;    /* offset in pend of the next piece; > rawfunc end when done */
	size_t pend_raw_end; /* end of rawfunc in pend */
	size_t pend_pc, pend_pc_len, pend_mod, pend_mod_len;
	size_t pend_group;    /* offset in frames where the group being built starts */
	unsigned pend_pieces; /* pieces of the group done so far */

	/* folded stacks */
	struct entry *table; /* distinct stacks in order of first sight */
	size_t table_used, table_cap;
	struct htab index; /* hash of the stack -> index into table */
	struct chunk *arena;
	size_t memory;
	struct buf key;
	int error; /* sticky -E2BIG/-ENOMEM */

	struct buf mod_last; /* the module of the last mod_kind() answer */
	int mod_last_kind;   /* that answer, or -1 */

	struct collapse_stats st;
};

enum { MOD_OTHER, MOD_KERNEL, MOD_JIT };

/* ---- character classes of Perl's /d rules on byte strings ---- */

enum { CL_WS = 1, CL_DIGIT = 2, CL_WORD = 4, CL_HEXLOW = 8 };

#define CL_RANGE(a, b, v) [(a)...(b)] = (v)
static const unsigned char cls[256] = {
	[' '] = CL_WS,
	CL_RANGE('\t', '\r', CL_WS),
	CL_RANGE('0', '9', CL_DIGIT | CL_WORD | CL_HEXLOW),
	CL_RANGE('a', 'f', CL_WORD | CL_HEXLOW),
	CL_RANGE('g', 'z', CL_WORD),
	CL_RANGE('A', 'Z', CL_WORD),
	['_'] = CL_WORD,
};

static inline bool is_ws(unsigned char ch)
{
	return cls[ch] & CL_WS;
}

static inline bool is_digit(unsigned char ch)
{
	return cls[ch] & CL_DIGIT;
}

static inline bool is_word(unsigned char ch)
{
	return cls[ch] & CL_WORD;
}

/* The length of the run of \w characters at s[0, n). */
static inline size_t span_word(const char *s, size_t n)
{
	size_t i = 0;

#if defined(__SSE2__) && !defined(FG_COLLAPSE_SCALAR)
	for (; i + 16 <= n; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		__m128i low = _mm_or_si128(v, _mm_set1_epi8(0x20));
		/* signed compares: bytes >= 0x80 are negative and fail every range */
		__m128i alpha = _mm_and_si128(_mm_cmpgt_epi8(low, _mm_set1_epi8('a' - 1)),
					      _mm_cmplt_epi8(low, _mm_set1_epi8('z' + 1)));
		__m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
					      _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
		__m128i w = _mm_or_si128(_mm_or_si128(alpha, digit),
					 _mm_cmpeq_epi8(v, _mm_set1_epi8('_')));
		unsigned mask = (unsigned)_mm_movemask_epi8(w) ^ 0xffffu;

		if (mask)
			return i + (unsigned)__builtin_ctz(mask);
	}
#endif
	while (i < n && is_word((unsigned char)s[i]))
		i++;
	return i;
}

/* ---- buffers ---- */

static int buf_reserve(struct buf *b, size_t extra, size_t cap)
{
	/* The limit first: the capacity may exceed it (it doubles), the contents may not. */
	if (b->len > cap || extra > cap - b->len)
		return -E2BIG;
	return ARRAY_GROW(b->p, b->cap, b->len + extra);
}

static int buf_add(struct buf *b, const void *s, size_t n, size_t cap)
{
	int rv;

	if ((rv = buf_reserve(b, n, cap)) != 0)
		return rv;
	if (n)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	return 0;
}

static bool mem_has(const char *s, size_t n, const char *needle)
{
	return memmem(s, n, needle, strlen(needle)) != NULL;
}

/* ---- the hash table of folded stacks ---- */

static inline uint64_t mix(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t load64(const char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* A multiply-fold hash over 16-byte blocks: fast on long keys, good enough spread. */
static uint64_t hash_bytes(const char *p, size_t n)
{
	const uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull;
	uint64_t h = k0 ^ (n * k1);
	size_t i = 0;

	for (; i + 16 <= n; i += 16)
		h = mix(load64(p + i) ^ k1, load64(p + i + 8) ^ h);
	if (i + 8 <= n) {
		h = mix(load64(p + i) ^ k1, h ^ k0);
		i += 8;
	}
	if (i < n) {
		uint64_t t = 0;

		memcpy(&t, p + i, n - i);
		h = mix(t ^ k1, h ^ k0);
	}
	return mix(h ^ k0, k1 ^ n);
}

static char *arena_alloc(struct collapse *c, size_t n)
{
	struct chunk *ch = c->arena;
	char *p;

	if (!ch || ch->size - ch->used < n) {
		/* chunks double from 16 KiB to 1 MiB: a short input costs little */
		size_t size = !ch		       ? ARENA_FIRST
			      : ch->size < ARENA_CHUNK ? 2 * ch->size
						       : ARENA_CHUNK;

		if (size < n)
			size = n;
		if (size > c->o.max_memory - c->memory)
			size = c->o.max_memory - c->memory; /* the last chunk the cap allows */
		if (size < n)
			return NULL;
		ch = malloc(sizeof(*ch) + size);
		if (!ch)
			return NULL;
		ch->next = c->arena;
		ch->used = 0;
		ch->size = size;
		c->arena = ch;
		c->memory += size;
	}
	p = ch->data + ch->used;
	ch->used += n;
	return p;
}

static size_t cap_for(size_t cap, size_t need, size_t min)
{
	size_t c = cap ? cap : min;

	while (c < need)
		c *= 2;
	return c;
}

/*
 * Room for one more distinct stack. What the index and the array will grow by is charged to
 * max_memory before it is allocated (the growth rules are those documented in htab.h and
 * array.h), so -E2BIG comes before the allocation, not after.
 */
static int table_room(struct collapse *c)
{
	size_t n = c->table_used + 1;
	size_t icap = cap_for(c->index.cap, 2 * n, HTAB_MIN_CAP);
	size_t ecap = cap_for(c->table_cap, n, ARRAY_MIN_CAP);
	size_t grow = (icap - c->index.cap) * sizeof(struct htab_slot) +
		      (ecap - c->table_cap) * sizeof(struct entry);

	if (grow > c->o.max_memory - c->memory)
		return -E2BIG;
	if (htab_reserve(&c->index, n) != 0 || ARRAY_GROW(c->table, c->table_cap, n) != 0)
		return -ENOMEM;
	c->memory += grow;
	return 0;
}

static void count_add(struct collapse *c, uint64_t *count, uint64_t n)
{
	if (*count > UINT64_MAX - n) {
		*count = UINT64_MAX;
		c->st.count_overflow = true;
	} else {
		*count += n;
	}
}

static int remember(struct collapse *c, const char *key, size_t len, uint64_t n)
{
	uint64_t h = hash_bytes(key, len) & HTAB_KEY_MASK;
	const uint64_t *v;
	size_t pos = 0;
	char *copy;
	int rv;

	while ((v = htab_next(&c->index, h, &pos))) {
		struct entry *e = &c->table[*v];

		if (e->len == len && !memcmp(e->key, key, len)) {
			count_add(c, &e->count, n);
			return 0;
		}
	}
	if ((rv = table_room(c)) != 0)
		return rv;
	copy = arena_alloc(c, len ? len : 1);
	if (!copy)
		return c->memory + len > c->o.max_memory ? -E2BIG : -ENOMEM;
	memcpy(copy, key, len);
	c->table[c->table_used] = (struct entry){ .key = copy, .len = len, .count = n };
	(void)htab_add(&c->index, h, c->table_used); /* room made above */
	c->table_used++;
	c->st.stacks++;
	return 0;
}

/* ---- the sample state machine ---- */

static void sample_reset(struct collapse *c)
{
	c->have_pname = false;
	c->frames.len = 0;
	c->oversized = false;
}

/* The blank line: `remember_stack(join(";", $pname, @stack), $m_period)`, @stack reversed. */
static int sample_end(struct collapse *c)
{
	size_t pos, glen, need;
	char *k;
	int rv;

	if (!c->have_pname)
		return 0;
	if (c->oversized) {
		c->st.dropped_samples++;
		sample_reset(c);
		return 0;
	}
	need = c->pname.len + c->frames.len; /* each group's length word >= its ';' */
	c->key.len = 0;
	if ((rv = buf_reserve(&c->key, need, SIZE_MAX)) != 0)
		return rv;
	k = c->key.p;
	memcpy(k, c->pname.p, c->pname.len);
	k += c->pname.len;
	for (pos = c->frames.len; pos > 0; pos -= glen + sizeof(size_t)) {
		memcpy(&glen, c->frames.p + pos - sizeof(size_t), sizeof(size_t));
		*k++ = ';';
		memcpy(k, c->frames.p + pos - sizeof(size_t) - glen, glen);
		k += glen;
	}
	rv = remember(c, c->key.p, (size_t)(k - c->key.p), c->period);
	c->st.samples++;
	sample_reset(c);
	return rv;
}

/* Keep appending to frames while the sample fits in max_stack; mark it oversized otherwise. */
static inline bool frames_add(struct collapse *c, const void *s, size_t n)
{
	if (c->oversized)
		return false;
	if (n == 0) /* frames.p may be NULL yet */
		return true;
	if (n <= c->frames.cap - c->frames.len) {
		memcpy(c->frames.p + c->frames.len, s, n);
		c->frames.len += n;
		return true;
	}
	if (buf_add(&c->frames, s, n, c->o.max_stack) != 0) {
		c->oversized = true;
		return false;
	}
	return true;
}

/*
 * The event header: /^(\S.+?)\s+(\d+)\/ *(\d+)*\s+/ (without the space after "\/").
 * The lazy comm ends at the first e >= 2 where whitespace, digits, slashes, optional digits and
 * whitespace follow; \s and \d are disjoint, so \s+ always takes its whole run and the groups
 * are greedy runs. Every e inside one whitespace run sees the same run end, so runs are skipped.
 */
static bool parse_header(const char *l, size_t n, size_t *comm_len, const char **pid,
			 size_t *pid_len, const char **tid, size_t *tid_len)
{
	size_t e = 2, j, k, m, t;

	if (n < 2 || is_ws((unsigned char)l[0]))
		return false;
	while (e < n) {
		if (!is_ws((unsigned char)l[e])) {
			e++;
			continue;
		}
		for (j = e; j < n && is_ws((unsigned char)l[j]); j++)
			;
		for (k = j; k < n && is_digit((unsigned char)l[k]); k++)
			;
		if (k > j) {
			for (m = k; m < n && l[m] == '/'; m++)
				;
			for (t = m; t < n && is_digit((unsigned char)l[t]); t++)
				;
			if (t < n && is_ws((unsigned char)l[t])) {
				*comm_len = e;
				*pid = l + j;
				*pid_len = k - j;
				*tid = l + m;
				*tid_len = t - m;
				return true;
			}
		}
		e = j;
	}
	return false;
}

/*
 * The event and period: /:\s*(\d+)*\s+(\S+):\s*$/.
 * (\S+): followed by only whitespace must be the last token of the line less its final ':',
 * and between it and the ':' before it only "\s* digits? \s+" may stand, so there is exactly
 * one candidate and no earlier ':' can match.
 */
static bool parse_event(const char *l, size_t n, const char **ev, size_t *ev_len, const char **per,
			size_t *per_len)
{
	size_t tn = n, ts, p, d, w;

	while (tn && is_ws((unsigned char)l[tn - 1]))
		tn--;
	if (!tn || l[tn - 1] != ':')
		return false;
	for (ts = tn - 1; ts && !is_ws((unsigned char)l[ts - 1]); ts--)
		;
	if (ts == 0 || ts == tn - 1)
		return false;
	for (p = ts; p && is_ws((unsigned char)l[p - 1]); p--)
		;
	for (d = p; d && is_digit((unsigned char)l[d - 1]); d--)
		;
	for (w = d; w && is_ws((unsigned char)l[w - 1]); w--)
		;
	if (!w || l[w - 1] != ':')
		return false;
	*ev = l + ts;
	*ev_len = tn - 1 - ts;
	*per = l + d;
	*per_len = p - d;
	return true;
}

/* Perl's numeric value of a digit string, saturating; "" and "0" are false, so they mean 1. */
static uint64_t period_value(struct collapse *c, const char *s, size_t n)
{
	uint64_t v = 0;

	if (n == 0 || (n == 1 && s[0] == '0'))
		return 1;
	for (size_t i = 0; i < n; i++) {
		unsigned dgt = (unsigned)(s[i] - '0');

		if (v > (UINT64_MAX - dgt) / 10) {
			c->st.count_overflow = true;
			return UINT64_MAX;
		}
		v = v * 10 + dgt;
	}
	return v;
}

static int header_line(struct collapse *c, const char *l, size_t n, size_t comm_len,
		       const char *pid, size_t pid_len, const char *tid, size_t tid_len)
{
	const char *ev, *per = NULL;
	size_t ev_len, per_len = 0;
	int rv;

	if (parse_event(l, n, &ev, &ev_len, &per, &per_len)) {
		if (!c->filter) {
			c->filter = strndup(ev, ev_len);
			if (!c->filter)
				return -ENOMEM;
		} else if (strlen(c->filter) != ev_len || memcmp(c->filter, ev, ev_len)) {
			/* The previous sample's state stays as it is, as in the script. */
			c->st.filtered++;
			if (!c->filter_given && !c->other_event) {
				c->other_event = strndup(ev, ev_len);
				if (!c->other_event)
					return -ENOMEM;
			}
			return 0;
		}
	}
	c->period = period_value(c, per, per_len);
	/* `if (not $tid) { $tid = $pid; $pid = "?" }`: a missing or "0" tid */
	if (tid_len == 0 || (tid_len == 1 && tid[0] == '0')) {
		tid = pid;
		tid_len = pid_len;
		pid = "?";
		pid_len = 1;
	}
	c->pname.len = 0;
	if ((rv = buf_add(&c->pname, l, comm_len, SIZE_MAX)) != 0)
		return rv;
	if (c->o.tid || c->o.pid) {
		if ((rv = buf_add(&c->pname, "-", 1, SIZE_MAX)) != 0 ||
		    (rv = buf_add(&c->pname, pid, pid_len, SIZE_MAX)) != 0)
			return rv;
		if (c->o.tid && ((rv = buf_add(&c->pname, "/", 1, SIZE_MAX)) != 0 ||
				 (rv = buf_add(&c->pname, tid, tid_len, SIZE_MAX)) != 0))
			return rv;
	}
	for (size_t i = 0; i < c->pname.len; i++)
		if (c->pname.p[i] == ' ')
			c->pname.p[i] = '_';
	c->have_pname = true;
	c->java = c->pname.len >= 4 && !memcmp(c->pname.p, "java", 4);
	return 0;
}

/*
 * A frame line: /^\s*(\w+)\s*(.+) \((.*)\)/.
 * (.*)\) ends at the last ')'; greedy (.+) ends at the last " (" before it (Q). If \s* and
 * \w+ leave (.+) no room before Q they backtrack: (.+) then starts at Q-1, needing Q-1 > start.
 */
static bool parse_frame(const char *l, size_t n, size_t *pc, size_t *pc_end, size_t *raw,
			size_t *raw_end, size_t *mod, size_t *mod_end)
{
	size_t a, w, s, r, q, b;
	const char *rp;

	for (a = 0; a < n && is_ws((unsigned char)l[a]); a++)
		;
	if (a == n || !is_word((unsigned char)l[a]))
		return false;
	w = a + span_word(l + a, n - a);
	for (s = w; s < n && is_ws((unsigned char)l[s]); s++)
		;
	rp = memrchr(l, ')', n);
	if (!rp)
		return false;
	r = (size_t)(rp - l);
	if (r < a + 4)
		return false;
	/* the last "(" at q+1 in [a+3, r-1] with a ' ' before it */
	for (q = r;;) {
		const char *op = memrchr(l + a + 3, '(', q - (a + 3));

		if (!op)
			return false;
		q = (size_t)(op - l);
		if (l[q - 1] == ' ')
			break;
	}
	q--;
	if (s + 1 <= q)
		b = s;
	else if (q - 1 >= a + 1)
		b = q - 1;
	else
		return false;
	*pc = a;
	*pc_end = w < b ? w : b;
	*raw = b;
	*raw_end = q;
	*mod = q + 2;
	*mod_end = r;
	return true;
}

/* The script's "Go method name" test: /\.\(.*\)\./ ; `open` is the first '(' of s. */
static bool looks_like_go(const char *s, size_t n, const char *open)
{
	const char *end = s + n, *close;

	while (open && !(open > s && open[-1] == '.'))
		open = memchr(open + 1, '(', (size_t)(end - open - 1));
	if (!open)
		return false;
	/* then a ")." anywhere after that '(' */
	for (close = open + 1; (close = memchr(close, ')', (size_t)(end - close))) != NULL; close++)
		if (close + 1 < end && close[1] == '.')
			return true;
	return false;
}

/* Does s contain the tag "_[x]"? */
static bool has_tag(const char *s, size_t n, char x)
{
	const char *p = s, *end = s + n;

	while ((p = memchr(p, '[', (size_t)(end - p))) != NULL) {
		if (p > s && p[-1] == '_' && end - p >= 3 && p[1] == x && p[2] == ']')
			return true;
		p++;
	}
	return false;
}

/*
 * The first of ';', '(', '"', '\'' in s[0, n), or n: the characters tidying acts on. Most
 * symbols have none before their argument list, so skip 16 bytes at a time where we can.
 */
static size_t find_special(const char *s, size_t n)
{
	size_t i = 0;

#if defined(__SSE2__) && !defined(FG_COLLAPSE_SCALAR)
	const __m128i semi = _mm_set1_epi8(';'), paren = _mm_set1_epi8('('),
		      dq = _mm_set1_epi8('"'), sq = _mm_set1_epi8('\'');

	for (; i + 16 <= n; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		__m128i m = _mm_or_si128(
			_mm_or_si128(_mm_cmpeq_epi8(v, semi), _mm_cmpeq_epi8(v, paren)),
			_mm_or_si128(_mm_cmpeq_epi8(v, dq), _mm_cmpeq_epi8(v, sq)));
		unsigned mask = (unsigned)_mm_movemask_epi8(m);

		if (mask)
			return i + (unsigned)__builtin_ctz(mask);
	}
#endif
	for (; i < n; i++)
		if (s[i] == ';' || s[i] == '(' || s[i] == '"' || s[i] == '\'')
			return i;
	return n;
}

/*
 * $tidy_generic then $tidy_java, in place: ';' -> ':', cut at the first '(' that does not open
 * "(anonymous namespace)" unless the name looks like Go's, drop quotes, and drop the 'L' of a
 * JVM signature in Java processes. Returns the new length; the text may start at s + *skip.
 */
static size_t tidy(char *s, size_t n, bool java, size_t *skip)
{
	static const char anon[] = "anonymous namespace)";
	size_t end = n, i = 0;
	bool paren_seen = false, quotes = false;

	/*
	 * One pass up to the cut: ';' -> ':' is only visible before the cut, and the Go test
	 * does not care about ';' or ':'.
	 */
	while (i < end) {
		char ch;

		i += find_special(s + i, end - i);
		if (i >= end)
			break;
		ch = s[i];
		if (ch == ';') {
			s[i] = ':';
		} else if (ch == '(') {
			char *p = s + i;

			if (!paren_seen && !looks_like_go(s, n, p)) {
				while (p) {
					size_t rest = n - (size_t)(p + 1 - s);

					if (rest < sizeof(anon) - 1 ||
					    memcmp(p + 1, anon, sizeof(anon) - 1)) {
						end = (size_t)(p - s);
						break;
					}
					p = memchr(p + 1, '(', rest);
				}
			}
			paren_seen = true;
		} else {
			quotes = true;
		}
		i++;
	}
	n = end;
	*skip = 0;
	if (quotes) {
		size_t o = 0;

		for (i = 0; i < n; i++)
			if (s[i] != '"' && s[i] != '\'')
				s[o++] = s[i];
		n = o;
	}
	if (java && n && s[0] == 'L' && memchr(s, '/', n))
		*skip = 1;
	return n - *skip;
}

/* m:/tmp/perf-\d+\.map: */
static bool is_perf_map(const char *m, size_t n)
{
	static const char pre[] = "/tmp/perf-";
	const char *p = m, *end = m + n;

	while ((p = memmem(p, (size_t)(end - p), pre, sizeof(pre) - 1)) != NULL) {
		const char *d = p + sizeof(pre) - 1, *e = d;

		while (e < end && is_digit((unsigned char)*e))
			e++;
		if (e > d && end - e >= 4 && !memcmp(e, ".map", 4))
			return true;
		p++;
	}
	return false;
}

/*
 * What the annotations need to know of a module: kernel is /(^\[|vmlinux$)/ without "unknown",
 * jit is m:/tmp/perf-\d+\.map:. Frames of one module come in runs: the last answer is kept.
 */
static int mod_kind(struct collapse *c, const char *mod, size_t len)
{
	int kind = MOD_OTHER;

	if (c->mod_last.len == len && c->mod_last_kind >= 0 &&
	    (len == 0 || !memcmp(c->mod_last.p, mod, len)))
		return c->mod_last_kind;
	if (len && (mod[0] == '[' || (len >= 7 && !memcmp(mod + len - 7, "vmlinux", 7))) &&
	    !mem_has(mod, len, "unknown"))
		kind = MOD_KERNEL;
	else if (is_perf_map(mod, len))
		kind = MOD_JIT;
	c->mod_last.len = 0;
	c->mod_last_kind = -1;
	if (buf_add(&c->mod_last, mod, len, c->o.max_line) == 0)
		c->mod_last_kind = kind;
	return kind;
}

/*
 * Append one piece of a frame line (a part of the symbol between "->") to the group being
 * built: [unknown] naming, tidying and the _[i]/_[k]/_[j] annotations.
 */
static void add_piece(struct collapse *c, const char *piece, size_t plen, unsigned index,
		      const char *pc, size_t pc_len, const char *mod, size_t mod_len, bool *unknown)
{
	size_t start, n, skip;
	char *s;

	if (index > 0 && !frames_add(c, ";", 1))
		return;
	start = c->frames.len;
	if (plen == 9 && !memcmp(piece, "[unknown]", 9)) {
		const char *name = "unknown";
		size_t name_len = 7;

		if (mod_len != 9 || memcmp(mod, "[unknown]", 9)) {
			const char *slash = memrchr(mod, '/', mod_len);

			name = slash ? slash + 1 : mod;
			name_len = mod_len - (size_t)(name - mod);
		} else {
			*unknown = true;
		}
		if (!frames_add(c, "[", 1) || !frames_add(c, name, name_len))
			return;
		if (c->o.addrs && (!frames_add(c, " <", 2) || !frames_add(c, pc, pc_len) ||
				   !frames_add(c, ">", 1)))
			return;
		if (!frames_add(c, "]", 1))
			return;
	} else if (!frames_add(c, piece, plen)) {
		return;
	}
	if (c->frames.len > start) {
		s = c->frames.p + start;
		n = tidy(s, c->frames.len - start, c->java, &skip);
		if (skip)
			memmove(s, s + skip, n);
		c->frames.len = start + n;
	} else { /* an empty piece (frames.p may still be NULL) */
		static char none[1];

		s = none;
		n = 0;
	}

	if (index > 0) {
		if (!has_tag(s, n, 'i'))
			frames_add(c, "_[i]", 4);
	} else if (c->o.kernel && mod_kind(c, mod, mod_len) == MOD_KERNEL) {
		frames_add(c, "_[k]", 4);
	} else if (c->o.jit && mod_kind(c, mod, mod_len) == MOD_JIT) {
		if (!has_tag(s, n, 'j'))
			frames_add(c, "_[j]", 4);
	}
}

/* The first "->" in s, or NULL; '-' is rare in symbols, so look for it first. */
static const char *find_arrow(const char *s, size_t n)
{
	const char *p = s, *end = s + n;

	while ((p = memchr(p, '-', (size_t)(end - p))) != NULL) {
		if (end - p >= 2 && p[1] == '>')
			return p;
		p++;
	}
	return NULL;
}

/* Close the group started at `group`: its length word follows its text. */
static void group_end(struct collapse *c, size_t group)
{
	size_t glen = c->frames.len - group;

	if (!c->oversized)
		frames_add(c, &glen, sizeof(glen));
}

/*
 * Walk the pieces of a frame line from `next` on; with --srcline, stop after a piece that
 * waits for its source line (returns true then).
 */
static bool pieces(struct collapse *c, const char *l, size_t next, size_t raw_end, size_t pc,
		   size_t pc_len, size_t mod, size_t mod_len, size_t group, unsigned *count,
		   bool *unknown, size_t *stop)
{
	while (next <= raw_end) {
		const char *beg = l + next, *arrow;
		size_t plen;

		arrow = find_arrow(beg, raw_end - next);
		plen = arrow ? (size_t)(arrow - beg) : raw_end - next;
		/* Perl's split drops trailing empty fields: stop if only "->"s remain. */
		if (plen == 0) {
			const char *t = beg;

			while (t + 1 < l + raw_end && t[0] == '-' && t[1] == '>')
				t += 2;
			if (t == l + raw_end)
				break;
		}
		add_piece(c, beg, plen, *count, l + pc, pc_len, l + mod, mod_len, unknown);
		(*count)++;
		next += plen + (arrow ? 2 : 1);
		if (c->o.srcline && !*unknown) {
			*stop = next;
			return true;
		}
		if (!arrow)
			break;
	}
	if (*count)
		group_end(c, group);
	return false;
}

static int frame_line(struct collapse *c, const char *l, size_t n)
{
	size_t pc, pc_end, raw, raw_end, mod, mod_end, t, stop, group = c->frames.len;
	unsigned count = 0;
	bool unknown = false;
	int rv;

	if (!parse_frame(l, n, &pc, &pc_end, &raw, &raw_end, &mod, &mod_end)) {
		c->st.unrecognized++;
		return 0;
	}
	if (!c->have_pname)
		return 0;
	/* s/\+0x[\da-f]+$// */
	for (t = raw_end; t > raw && (cls[(unsigned char)l[t - 1]] & CL_HEXLOW); t--)
		;
	if (t < raw_end && t - raw >= 3 && !memcmp(l + t - 3, "+0x", 3))
		raw_end = t - 3;
	if (raw_end > raw && l[raw] == '(') /* process names */
		return 0;
	if (!pieces(c, l, raw, raw_end, pc, pc_end - pc, mod, mod_end - mod, group, &count,
		    &unknown, &stop))
		return 0;
	/* --srcline: keep the line until its source lines have arrived */
	c->pend.len = 0;
	if ((rv = buf_add(&c->pend, l, n, SIZE_MAX)) != 0)
		return rv;
	c->pending = true;
	c->pend_unknown = unknown;
	c->pend_next = stop;
	c->pend_raw_end = raw_end;
	c->pend_pc = pc;
	c->pend_pc_len = pc_end - pc;
	c->pend_mod = mod;
	c->pend_mod_len = mod_end - mod;
	c->pend_group = group;
	c->pend_pieces = count;
	return 0;
}

/*
 * The source line that follows a frame under --srcline: s/\[.*?\]//g, trimmed, appended as
 * ":line" unless empty; then the frame line's remaining pieces.
 */
static void srcline_line(struct collapse *c, const char *l, size_t n)
{
	size_t i = 0, o, stop, group;
	char *s;
	bool unknown = c->pend_unknown;
	unsigned count = c->pend_pieces;

	if (!c->oversized && frames_add(c, ":", 1)) {
		o = c->frames.len;
		while (i < n) {
			const char *close;

			if (l[i] == '[' && (close = memchr(l + i + 1, ']', n - i - 1)) != NULL) {
				i = (size_t)(close - l) + 1;
				continue;
			}
			if (!frames_add(c, l + i, 1))
				break;
			i++;
		}
		if (!c->oversized) {
			s = c->frames.p + o;
			size_t len = c->frames.len - o, b = 0;

			while (b < len && is_ws((unsigned char)s[b]))
				b++;
			while (len > b && is_ws((unsigned char)s[len - 1]))
				len--;
			memmove(s, s + b, len - b);
			c->frames.len = o + (len - b);
			if (len == b) /* nothing: drop the ':' too */
				c->frames.len = o - 1;
		}
	}
	group = c->pend_group;
	if (c->pend_next <= c->pend_raw_end) {
		if (pieces(c, c->pend.p, c->pend_next, c->pend_raw_end, c->pend_pc, c->pend_pc_len,
			   c->pend_mod, c->pend_mod_len, group, &count, &unknown, &stop)) {
			c->pend_next = stop;
			c->pend_pieces = count;
			c->pend_unknown = unknown;
			return;
		}
	} else {
		group_end(c, group);
	}
	c->pending = false;
}

int collapse_line(struct collapse *c, const char *l, size_t n)
{
	const char *pid, *tid;
	size_t comm_len, pid_len, tid_len;

	if (c->error)
		return c->error;
	c->st.lines++;
	if (c->pending) {
		srcline_line(c, l, n);
		return 0;
	}
	if (n && l[0] == '#')
		return 0;
	if (n == 0) {
		int rv = sample_end(c);

		if (rv)
			c->error = rv;
		return rv;
	}
	if (parse_header(l, n, &comm_len, &pid, &pid_len, &tid, &tid_len)) {
		int rv = header_line(c, l, n, comm_len, pid, pid_len, tid, tid_len);

		if (rv)
			c->error = rv;
		return rv;
	}
	int rv = frame_line(c, l, n);

	if (rv)
		c->error = rv;
	return rv;
}

static int partial_flush(struct collapse *c)
{
	int rv = 0;

	if (c->partial_long) {
		c->st.lines++;
		c->st.long_lines++;
	} else {
		rv = collapse_line(c, c->partial.p, c->partial.len);
	}
	c->partial.len = 0;
	c->partial_long = false;
	return rv;
}

static void partial_add(struct collapse *c, const char *s, size_t n)
{
	if (c->partial_long)
		return;
	if (buf_add(&c->partial, s, n, c->o.max_line) != 0) {
		c->partial_long = true;
		c->partial.len = 0;
	}
}

int collapse_feed(struct collapse *c, const char *buf, size_t len)
{
	int rv;

	if (c->error)
		return c->error;
	while (len) {
		const char *nl = memchr(buf, '\n', len);
		size_t n;

		if (!nl) {
			partial_add(c, buf, len);
			return 0;
		}
		n = (size_t)(nl - buf);
		if (c->partial.len || c->partial_long) {
			partial_add(c, buf, n);
			rv = partial_flush(c);
		} else if (n > c->o.max_line) {
			c->st.lines++;
			c->st.long_lines++;
			rv = 0;
		} else {
			rv = collapse_line(c, buf, n);
		}
		if (rv)
			return rv;
		buf = nl + 1;
		len -= n + 1;
	}
	return 0;
}

int collapse_end_input(struct collapse *c)
{
	if (c->error)
		return c->error;
	if (c->partial.len || c->partial_long)
		return partial_flush(c);
	return 0;
}

struct collapse *collapse_new(const struct collapse_opts *opts)
{
	struct collapse *c = FG_NEW_CONF(struct collapse, o, opts);

	if (!c)
		return NULL;
	FG_DEFAULT(c->o.max_line, DEF_MAX_LINE);
	FG_DEFAULT(c->o.max_stack, DEF_MAX_STACK);
	FG_DEFAULT(c->o.max_memory, DEF_MAX_MEMORY);
	c->mod_last_kind = -1;
	c->o.event_filter = NULL;
	if (opts && opts->event_filter && opts->event_filter[0]) {
		c->filter = strdup(opts->event_filter);
		c->filter_given = true;
		if (!c->filter) {
			free(c);
			return NULL;
		}
	}
	return c;
}

void collapse_free(struct collapse *c)
{
	struct chunk *ch, *next;

	if (!c)
		return;
	for (ch = c->arena; ch; ch = next) {
		next = ch->next;
		free(ch);
	}
	free(c->table);
	htab_fini(&c->index);
	FG_FREE_ALL(c->filter, c->other_event, c->partial.p, c->pname.p, c->frames.p, c->pend.p,
		    c->key.p, c->mod_last.p, c);
}

static int entry_cmp(const void *pa, const void *pb)
{
	const struct entry *a = *(const struct entry *const *)pa;
	const struct entry *b = *(const struct entry *const *)pb;
	int r = memcmp(a->key, b->key, a->len < b->len ? a->len : b->len);

	if (r)
		return r;
	return (a->len > b->len) - (a->len < b->len);
}

int collapse_foreach(struct collapse *c,
		     int (*fn)(void *arg, const char *stack, size_t len, uint64_t count), void *arg)
{
	struct entry **idx;
	size_t n = 0;
	int rv = 0;

	if (!c->table_used)
		return 0;
	idx = malloc(c->table_used * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < c->table_used; i++)
		idx[n++] = &c->table[i];
	qsort(idx, n, sizeof(*idx), entry_cmp);
	for (size_t i = 0; i < n && !rv; i++)
		rv = fn(arg, idx[i]->key, idx[i]->len, idx[i]->count);
	free(idx);
	return rv;
}

void collapse_stats(const struct collapse *c, struct collapse_stats *out)
{
	*out = c->st;
	out->event = c->filter;
	out->other_event = c->other_event;
}
