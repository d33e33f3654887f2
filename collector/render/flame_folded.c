// SPDX-License-Identifier: MIT
/*
 * flame_folded.c - the folded text format (FlameGraph's collapsed stacks) on both sides of the
 * trie: parse lines and files into it, write it back out (see flame_fold.h).
 *
 * A line is split in place into spans, hashing every name in the same word-at-a-time pass
 * that looks for ';', and handed to flame_insert(); nothing is allocated per line. Input is
 * read in large blocks, never mmap'ed, so resident memory is the trie and not the file.
 *
 * Invariant: parsing follows flamegraph.pl's regular expressions exactly (the one deliberate
 * difference, CRLF lines, is marked where it is made).
 */
#include "flame_trie.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"

#define READ_BLOCK (256u << 10)
/*
 * Reading a regular file of at least RESERVE_MIN bytes sizes the trie up front for one node per
 * BYTES_PER_NODE bytes: generated and collapsed Java stacks take about 120 bytes of input per
 * distinct frame. An input with fewer frames wastes that (<= 0.6x its size); one with more
 * grows as usual.
 */
#define RESERVE_MIN (4u << 20)
#define BYTES_PER_NODE 128u

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
 * Split s[0..len) (len > 0) at ';' into f->spans, hashing each name on the way (one pass, a
 * word at a time, instead of memchr and then the hash); *n is the number of spans.
 */
static int split_hash(struct flame *f, const char *s, size_t len, size_t *n)
{
	const char *p = s, *end = s + len;
	size_t k = 0;
	int rv;

	for (;;) {
		const char *q = p;
		uint64_t h = FLAME_NAME_SEED, tail = 0;
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
				h = flame_hash_word(h, w);
				q += 8;
				continue;
			}
			b = (unsigned)__builtin_ctzll(m) >> 3;
			tail = b ? w & (~0ull >> (64 - 8 * b)) : 0;
			q += b;
			more = true;
			break;
		}
		if (k >= f->cap_spans && (rv = flame_reserve_spans(f, f->cap_spans * 2 + 64)) != 0)
			return rv;
		f->spans[k].p = p;
		f->spans[k].len = (size_t)(q - p);
		f->spans[k].hash = flame_hash_fin(h, tail, (size_t)(q - p));
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

/* difffolded.pl -s: s/0x[0-9a-fA-F]+/0x.../g into f->hexbuf. */
static int strip_hex(struct flame *f, const char **s, size_t *n)
{
	const char *p = *s;
	size_t len = *n, o = 0;
	int rv;

	/* "0x" + one digit (3 bytes) becomes 5 bytes at most: 5/3 of the input suffices */
	if ((rv = flame_reserve_hexbuf(f, len / 3 * 5 + 8)) != 0)
		return rv;
	for (size_t i = 0; i < len;) {
		size_t j = i + 2;

		if (p[i] == '0' && i + 2 < len && p[i + 1] == 'x') {
			while (j < len && ((p[j] >= '0' && p[j] <= '9') ||
					   ((p[j] | 0x20) >= 'a' && (p[j] | 0x20) <= 'f')))
				j++;
		}
		if (j > i + 2 && p[i] == '0' && p[i + 1] == 'x') {
			memcpy(f->hexbuf + o, "0x...", 5);
			o += 5;
			i = j;
		} else {
			f->hexbuf[o++] = p[i++];
		}
	}
	*s = f->hexbuf;
	*n = o;
	return 0;
}

int flame_add_line_in(struct flame *f, const char *line, size_t len, enum flame_in in)
{
	double c1, c0, a = 0, b;
	size_t sl, sl2, n = 0;
	bool has_a = false;
	int rv;

	f->lines++;
	if (len && line[len - 1] == '\n')
		len--;
	/* Deliberate difference: flamegraph.pl ignores every line of a CRLF file. */
	if (len && line[len - 1] == '\r')
		len--;
	if (len > FLAME_MAX_LINE)
		return -E2BIG;
	if (!tail_count(line, len, &c1, &sl)) {
		f->ignored++;
		return -EINVAL;
	}
	b = c1;
	if (in == FLAME_IN_AUTO && tail_count(line, sl, &c0, &sl2)) {
		a = c0;
		has_a = true;
		sl = sl2;
	} else if (in == FLAME_IN_A) {
		a = c1;
		b = 0;
		has_a = true;
	}
	if ((f->flags & FLAME_STRIP_HEX) && (rv = strip_hex(f, &line, &sl)) != 0)
		return rv;
	/* Perl's split drops trailing empty fields; --reverse splits twice, dropping both ends. */
	while (sl && line[sl - 1] == ';')
		sl--;
	if (f->flags & FLAME_REVERSE) {
		while (sl && line[0] == ';') {
			line++;
			sl--;
		}
	}
	if (sl && (rv = split_hash(f, line, sl, &n)) != 0)
		return rv;
	if (f->flags & FLAME_REVERSE)
		flame_reverse_spans(f->spans, n);
	return flame_insert(f, f->spans, n, a, b, has_a);
}

int flame_add_line(struct flame *f, const char *line, size_t len)
{
	return flame_add_line_in(f, line, len, FLAME_IN_AUTO);
}

int flame_read_fd(struct flame *f, int fd, enum flame_in in, uint64_t *lineno)
{
	size_t cap = READ_BLOCK, have = 0;
	char *buf = malloc(cap);
	struct stat st;
	uint64_t ln = 0;
	bool eof = false;
	int rv = 0;

	if (!buf)
		return -ENOMEM;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= RESERVE_MIN) {
		off_t pos = lseek(fd, 0, SEEK_CUR);
		uint64_t left =
			(uint64_t)st.st_size - (pos > 0 && pos < st.st_size ? (uint64_t)pos : 0);

		/* a hint only: a failure here shows again, at the same point, when nodes are added
		 */
		(void)flame_reserve_nodes(f, f->nnodes + (size_t)(left / BYTES_PER_NODE));
	}
	while (!eof) {
		size_t off = 0;
		ssize_t r;

		if (have == cap) {
			if (cap > FLAME_MAX_LINE) {
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
			rv = flame_add_line_in(f, buf + off, end - off, in);
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

double flame_total(const struct flame *f)
{
	return f->time;
}

uint64_t flame_lines(const struct flame *f)
{
	return f->lines;
}

uint64_t flame_ignored(const struct flame *f)
{
	return f->ignored;
}

static int cmp_names(const void *x, const void *y, void *arg)
{
	const struct flame *f = arg;
	size_t la, lb;
	const char *a = flame_node_name(f, *(const uint32_t *)x, &la);
	const char *b = flame_node_name(f, *(const uint32_t *)y, &lb);
	int c = memcmp(a, b, la < lb ? la : lb);

	if (c)
		return c;
	return la < lb ? -1 : la > lb;
}

static void put_count(FILE *out, double v)
{
	/* In range before the conversion: a huge count (or NaN) has no int64_t. */
	if (v < 9007199254740992.0 && v > -9007199254740992.0 && v == (double)(int64_t)v)
		fprintf(out, " %lld", (long long)v);
	else
		fprintf(out, " %.17g", v);
}

int flame_write_folded(const struct flame *f, FILE *out)
{
	/* Depth-first: stack of nodes, each with the path length before its name. */
	uint32_t *stack = malloc(f->nnodes * sizeof(*stack));
	size_t *plen = malloc(f->nnodes * sizeof(*plen));
	uint32_t *kids = malloc(f->nnodes * sizeof(*kids));
	size_t sp = 0, pcap = 4096, pathlen = 0;
	char *path = malloc(pcap);
	int rv = 0;

	if (!stack || !plen || !kids || !path) {
		rv = -ENOMEM;
		goto out;
	}
	stack[sp] = 0;
	plen[sp++] = 0;
	while (sp) {
		uint32_t node = stack[--sp];
		size_t k = 0, len;
		const char *nm = flame_node_name(f, node, &len);

		pathlen = plen[sp];
		if (node) {
			if (ARRAY_GROW(path, pcap, pathlen + len + 1) != 0) {
				rv = -ENOMEM;
				goto out;
			}
			if (f->nodes[node].parent)
				path[pathlen++] = ';';
			memcpy(path + pathlen, nm, len);
			pathlen += len;
		}
		if (f->nodes[node].flags & FLAME_NODE_LEAF) {
			fwrite(path, 1, pathlen, out);
			if (f->self_a)
				put_count(out, f->self_a[node]);
			put_count(out, f->nodes[node].self);
			fputc('\n', out);
		}
		for (uint32_t c = f->nodes[node].child; c; c = f->nodes[c].next)
			kids[k++] = c;
		if (!(f->flags & FLAME_CHART))
			qsort_r(kids, k, sizeof(*kids), cmp_names, (void *)f);
		else
			for (size_t i = 0; i < k / 2; i++) {
				uint32_t t = kids[i];

				kids[i] = kids[k - 1 - i];
				kids[k - 1 - i] = t;
			}
		/* push in reverse so the first child is written first */
		while (k) {
			stack[sp] = kids[--k];
			plen[sp++] = pathlen;
		}
	}
	if (fflush(out) != 0 || ferror(out))
		rv = -EIO;
out:
	free(stack);
	free(plen);
	free(kids);
	free(path);
	return rv;
}
