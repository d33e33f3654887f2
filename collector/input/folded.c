// SPDX-License-Identifier: MIT
/*
 * folded.c - the folded text format read into stacks (see folded.h): lines split into frames
 * and counts, handed to the sink.
 *
 * A line is split in place into spans, hashing every name in the same word-at-a-time pass
 * that looks for ';' (framespan.h's hash, the one the flame graph trie interns names by);
 * nothing is allocated per line. Input is read in large blocks, never mmap'ed, so resident
 * memory is the sink's and not the file.
 *
 * Invariant: parsing follows flamegraph.pl's regular expressions exactly (the one deliberate
 * difference, CRLF lines, is marked where it is made).
 */
#include "folded.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "fgfree.h"

#define READ_BLOCK (256u << 10)

struct folded {
	unsigned flags;
	struct stack_sink sink;
	uint64_t lines, ignored;
	/* scratch, reused across lines: frame spans, strip-hex copy */
	struct frame_span *spans;
	size_t cap_spans;
	char *hexbuf;
	size_t cap_hexbuf;
	char *foldbuf; /* FOLDED_FOLD's copy */
	size_t cap_foldbuf;
};

struct folded *folded_new(unsigned flags, const struct stack_sink *sink)
{
	struct folded *rd = calloc(1, sizeof(*rd));

	if (!rd)
		return NULL;
	rd->flags = flags;
	rd->sink = *sink;
	return rd;
}

void folded_free(struct folded *rd)
{
	if (!rd)
		return;
	FG_FREE_ALL(rd->spans, rd->hexbuf, rd->foldbuf, rd);
}

uint64_t folded_lines(const struct folded *rd)
{
	return rd->lines;
}

uint64_t folded_ignored(const struct folded *rd)
{
	return rd->ignored;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/*
 * Split s[0..len) (len > 0) at ';' into rd->spans, hashing each name on the way (one pass, a
 * word at a time, instead of memchr and then the hash); *n is the number of spans.
 */
static int split_hash(struct folded *rd, const char *s, size_t len, size_t *n)
{
	const char *p = s, *end = s + len;
	size_t k = 0;
	int rv;

	for (;;) {
		const char *q = p;
		uint64_t h = FRAME_HASH_SEED, tail = 0;
		bool more;

		for (;;) {
			uint64_t w, m;
			unsigned b;

			if (end - q < 8) {
				const char *e = memchr(q, ';', (size_t)(end - q));
				size_t r = e ? (size_t)(e - q) : (size_t)(end - q);

				memcpy(&tail, q, r);
				q += r;
				more = e != NULL;
				break;
			}
			memcpy(&w, q, 8);
			m = w ^ (ONES * ';');
			m = (m - ONES) & ~m & HIGHS; /* lowest set bit: the first ';' byte */
			if (!m) {
				h = frame_hash_word(h, w);
				q += 8;
				continue;
			}
			b = (unsigned)__builtin_ctzll(m) >> 3;
			tail = b ? w & (~0ull >> (64 - 8 * b)) : 0;
			q += b;
			more = true;
			break;
		}
		if (k >= rd->cap_spans && (rv = frame_spans_reserve(&rd->spans, &rd->cap_spans,
								    rd->cap_spans * 2 + 64)) != 0)
			return rv;
		rd->spans[k].p = p;
		rd->spans[k].len = (size_t)(q - p);
		rd->spans[k].hash = frame_hash_fin(h, tail, (size_t)(q - p));
		k++;
		if (!more)
			break;
		p = q + 1;
	}
	*n = k;
	return 0;
}

/*
 * flamegraph.pl's /^(.*)\s+?(\d+(?:\.\d*)?)$/ from the end of s[0..n): the count and the
 * length of the stack before the one whitespace byte that precedes it.
 */
static bool tail_count(const char *s, size_t n, double *val, size_t *stack_len)
{
	size_t i = n, start;
	char buf[512];

	while (i && is_digit(s[i - 1]))
		i--;
	if (i && s[i - 1] == '.') {
		start = i - 1;
		while (start && is_digit(s[start - 1]))
			start--;
		if (start == i - 1)
			return false;
	} else {
		if (i == n)
			return false;
		start = i;
	}
	if (start == 0 || !is_space(s[start - 1]))
		return false;
	if (n - start <= 15 && i == start) {
		uint64_t v = 0;

		for (size_t k = start; k < n; k++)
			v = v * 10 + (uint64_t)(s[k] - '0');
		*val = (double)v;
	} else {
		if (n - start >= sizeof(buf))
			return false;
		memcpy(buf, s + start, n - start);
		buf[n - start] = '\0';
		*val = strtod(buf, NULL);
	}
	*stack_len = start - 1;
	return true;
}

/* difffolded.pl -s: s/0x[0-9a-fA-F]+/0x.../g into rd->hexbuf. */
static int strip_hex(struct folded *rd, const char **s, size_t *n)
{
	const char *p = *s;
	size_t len = *n, o = 0;
	int rv;

	/* "0x" + one digit (3 bytes) becomes 5 bytes at most: 5/3 of the input suffices */
	if ((rv = ARRAY_GROW(rd->hexbuf, rd->cap_hexbuf, len / 3 * 5 + 8)) != 0)
		return rv;
	for (size_t i = 0; i < len;) {
		size_t j = i + 2;

		if (p[i] == '0' && i + 2 < len && p[i + 1] == 'x') {
			while (j < len && ((p[j] >= '0' && p[j] <= '9') ||
					   ((p[j] | 0x20) >= 'a' && (p[j] | 0x20) <= 'f')))
				j++;
		}
		if (j > i + 2 && p[i] == '0' && p[i + 1] == 'x') {
			memcpy(rd->hexbuf + o, "0x...", 5);
			o += 5;
			i = j;
		} else {
			rd->hexbuf[o++] = p[i++];
		}
	}
	*s = rd->hexbuf;
	*n = o;
	return 0;
}

static bool is_hex(char c)
{
	return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/* s[i..n) starts "0x" and a hex digit, after one of '/', '.' or '+': the span to drop, or 0. */
static size_t lambda_addr(const char *s, size_t i, size_t n)
{
	size_t j = i + 3;

	if (j >= n || (s[i] != '/' && s[i] != '.' && s[i] != '+') || s[i + 1] != '0' ||
	    s[i + 2] != 'x' || !is_hex(s[j]))
		return 0;
	while (j < n && is_hex(s[j]))
		j++;
	return j - i;
}

size_t folded_fold_stack(const char *s, size_t n, char *out)
{
	static const char lambda[] = "$$Lambda";
	const size_t ll = sizeof(lambda) - 1;
	size_t o = 0, frame = 0;

	for (size_t i = 0; i < n;) {
		char c = s[i];

		if (c == ';') {
			frame++;
		} else if (frame < 2 && is_digit(c)) {
			while (i < n && is_digit(s[i]))
				i++;
			out[o++] = '*';
			continue;
		} else if (c == '_' && i + 4 <= n && s[i + 1] == '[' && s[i + 3] == ']' &&
			   (s[i + 2] == 'j' || s[i + 2] == 'i' || s[i + 2] == '0') &&
			   (i + 4 == n || s[i + 4] == ';')) {
			i += 4;
			continue;
		} else if (c == '$' && n - i >= ll && memcmp(s + i, lambda, ll) == 0) {
			size_t j = i + ll, d;

			if (j + 1 < n && s[j] == '$' && is_digit(s[j + 1]))
				for (j++; j < n && is_digit(s[j]);)
					j++;
			memcpy(out + o, s + i, j - i);
			o += j - i;
			i = j + ((d = lambda_addr(s, j, n)) ? d : 0);
			continue;
		}
		out[o++] = c;
		i++;
	}
	return o;
}

/* The stack line[0..sl) split (and reversed) into rd->spans, then to the sink. */
static int add_stack(struct folded *rd, const char *line, size_t sl, double a, double b, bool has_a)
{
	size_t n = 0;
	int rv;

	if (rd->flags & FOLDED_FOLD) {
		if ((rv = ARRAY_GROW(rd->foldbuf, rd->cap_foldbuf, sl + 1)) != 0)
			return rv;
		sl = folded_fold_stack(line, sl, rd->foldbuf);
		line = rd->foldbuf;
	}
	if ((rd->flags & FOLDED_STRIP_HEX) && (rv = strip_hex(rd, &line, &sl)) != 0)
		return rv;
	/* Perl's split drops trailing empty fields; --reverse splits twice, dropping both ends. */
	while (sl && line[sl - 1] == ';')
		sl--;
	if (rd->flags & FOLDED_REVERSE) {
		while (sl && line[0] == ';') {
			line++;
			sl--;
		}
	}
	if (sl && (rv = split_hash(rd, line, sl, &n)) != 0)
		return rv;
	if (rd->flags & FOLDED_REVERSE)
		frame_spans_reverse(rd->spans, n);
	return rd->sink.stack(rd->sink.arg, rd->spans, n, a, b, has_a);
}

int folded_add_line(struct folded *rd, const char *line, size_t len, enum folded_in in)
{
	double c1, c0, a = 0, b;
	size_t sl, sl2;
	bool has_a = false;

	rd->lines++;
	if (len && line[len - 1] == '\n')
		len--;
	/* Deliberate difference: flamegraph.pl ignores every line of a CRLF file. */
	if (len && line[len - 1] == '\r')
		len--;
	if (len > FOLDED_MAX_LINE)
		return -E2BIG;
	if (!tail_count(line, len, &c1, &sl)) {
		rd->ignored++;
		return -EINVAL;
	}
	b = c1;
	if (in == FOLDED_IN_AUTO && tail_count(line, sl, &c0, &sl2)) {
		a = c0;
		has_a = true;
		sl = sl2;
	} else if (in == FOLDED_IN_A) {
		a = c1;
		b = 0;
		has_a = true;
	}
	return add_stack(rd, line, sl, a, b, has_a);
}

/* Tell the sink how much a regular file has left to read (a sizing hint). */
static void expect_rest(const struct folded *rd, int fd)
{
	struct stat st;
	off_t pos;

	if (!rd->sink.expect || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	pos = lseek(fd, 0, SEEK_CUR);
	rd->sink.expect(rd->sink.arg,
			(uint64_t)st.st_size - (pos > 0 && pos < st.st_size ? (uint64_t)pos : 0));
}

int folded_read_fd(struct folded *rd, int fd, enum folded_in in, uint64_t *lineno)
{
	size_t cap = READ_BLOCK, have = 0;
	char *buf = malloc(cap);
	uint64_t ln = 0;
	bool eof = false;
	int rv = 0;

	if (!buf)
		return -ENOMEM;
	expect_rest(rd, fd);
	while (!eof) {
		size_t off = 0;
		ssize_t r;

		if (have == cap) {
			if (cap > FOLDED_MAX_LINE) {
				rv = -E2BIG;
				ln++;
				goto out;
			}
			if (ARRAY_GROW(buf, cap, cap + 1) != 0) {
				rv = -ENOMEM;
				goto out;
			}
		}
		r = read(fd, buf + have, cap - have);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rv = -errno;
			goto out;
		}
		if (r == 0)
			eof = true;
		have += (size_t)r;
		for (;;) {
			char *nl = memchr(buf + off, '\n', have - off);
			size_t end = nl ? (size_t)(nl - buf) : have;

			if (!nl && (!eof || off == have))
				break;
			ln++;
			rv = folded_add_line(rd, buf + off, end - off, in);
			if (rv != 0 && rv != -EINVAL)
				goto out;
			rv = 0;
			off = nl ? end + 1 : have;
		}
		memmove(buf, buf + off, have - off);
		have -= off;
	}
out:
	if (lineno)
		*lineno = ln;
	free(buf);
	return rv;
}
