// SPDX-License-Identifier: MIT
/*
 * procmaps.c - a process's mappings as a sorted, non-overlapping array with binary search.
 *
 * Invariant: maps[0..n) sorted by start, maps[i].end <= maps[i + 1].start, each path owned.
 */
#include "procmaps.h"
#include "array.h"
#include "fgsearch.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct procmaps {
	struct procmap *maps;
	size_t n;
	size_t cap;
};

static const char deleted_suffix[] = " (deleted)";

struct procmaps *procmaps_new(void)
{
	return calloc(1, sizeof(struct procmaps));
}

static void procmaps_clear(struct procmaps *pm)
{
	for (size_t i = 0; i < pm->n; i++)
		free(pm->maps[i].path);
	pm->n = 0;
}

void procmaps_free(struct procmaps *pm)
{
	if (!pm)
		return;
	procmaps_clear(pm);
	free(pm->maps);
	free(pm);
}

enum procmap_kind procmaps_classify(const char *path, size_t len, bool *deleted)
{
	bool del = false;

	if (len >= sizeof(deleted_suffix) - 1 &&
	    memcmp(path + len - (sizeof(deleted_suffix) - 1), deleted_suffix,
		   sizeof(deleted_suffix) - 1) == 0) {
		del = true;
		len -= sizeof(deleted_suffix) - 1;
	}
	if (deleted)
		*deleted = del;
	if (len == 0 || (len == 6 && memcmp(path, "//anon", 6) == 0))
		return PROCMAP_ANON;
	if (path[0] == '[') {
		if (len >= 6 && memcmp(path, "[anon:", 6) == 0)
			return PROCMAP_ANON;
		if (len == 6 && memcmp(path, "[heap]", 6) == 0)
			return PROCMAP_HEAP;
		if (len >= 6 && memcmp(path, "[stack", 6) == 0)
			return PROCMAP_STACK;
		if (len == 6 && memcmp(path, "[vdso]", 6) == 0)
			return PROCMAP_VDSO;
		if (len == 10 && memcmp(path, "[vsyscall]", 10) == 0)
			return PROCMAP_VSYSCALL;
		return PROCMAP_SPECIAL;
	}
	/* Shared anonymous memory (MAP_SHARED|MAP_ANONYMOUS) shows as an unlinked /dev/zero. */
	if (del && len == 9 && memcmp(path, "/dev/zero", 9) == 0)
		return PROCMAP_ANON;
	if (len >= 7 && memcmp(path, "/memfd:", 7) == 0)
		return PROCMAP_MEMFD;
	return del ? PROCMAP_DELETED : PROCMAP_FILE;
}

/* Fill m's path/base/kind from the raw maps or MMAP2 name. */
static int procmap_set_path(struct procmap *m, const char *raw, size_t len)
{
	bool del;
	size_t keep;

	if (len > PROCMAPS_MAX_PATH)
		return -EINVAL;
	m->kind = procmaps_classify(raw, len, &del);
	keep = del ? len - (sizeof(deleted_suffix) - 1) : len;
	if (m->kind == PROCMAP_ANON && (len == 0 || raw[0] != '['))
		keep = 0; /* "", "//anon" and /dev/zero all mean anonymous memory */
	m->path = malloc(keep + 1);
	if (!m->path)
		return -ENOMEM;
	memcpy(m->path, raw, keep);
	m->path[keep] = '\0';
	if (m->path[0] == '/') {
		const char *slash = strrchr(m->path, '/');

		m->base = slash + 1;
	} else {
		m->base = m->path;
	}
	return 0;
}

static int reserve(struct procmap **arr, size_t *cap, size_t need)
{
	if (need > PROCMAPS_MAX_MAPPINGS)
		return -E2BIG;
	return ARRAY_GROW(*arr, *cap, need);
}

/* Parse a hex number of at most 16 digits; advances *s. */
static int parse_hex(const char **s, const char *end, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;
	int digits = 0;

	while (p < end) {
		int c = (unsigned char)*p, d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		if (++digits > 16)
			return -EINVAL;
		v = v << 4 | (uint64_t)d;
		p++;
	}
	if (!digits)
		return -EINVAL;
	*s = p;
	*out = v;
	return 0;
}

static int parse_dec(const char **s, const char *end, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;

	if (p >= end || *p < '0' || *p > '9')
		return -EINVAL;
	while (p < end && *p >= '0' && *p <= '9') {
		if (v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
		p++;
	}
	*s = p;
	*out = v;
	return 0;
}

static int expect(const char **s, const char *end, char c)
{
	if (*s >= end || **s != c)
		return -EINVAL;
	(*s)++;
	return 0;
}

static void skip_spaces(const char **s, const char *end)
{
	while (*s < end && (**s == ' ' || **s == '\t'))
		(*s)++;
}

/* One line "start-end perms offset maj:min inode [path]" without its newline. */
static int parse_line(const char *p, const char *end, struct procmap *m)
{
	uint64_t maj, min;
	int rv;

	memset(m, 0, sizeof(*m));
	if ((rv = parse_hex(&p, end, &m->start)) || (rv = expect(&p, end, '-')) ||
	    (rv = parse_hex(&p, end, &m->end)) || (rv = expect(&p, end, ' ')))
		return rv;
	if (end - p < 5 || p[4] != ' ')
		return -EINVAL;
	if (p[0] == 'r')
		m->prot |= PROCMAP_R;
	if (p[1] == 'w')
		m->prot |= PROCMAP_W;
	if (p[2] == 'x')
		m->prot |= PROCMAP_X;
	p += 5;
	if ((rv = parse_hex(&p, end, &m->pgoff)) || (rv = expect(&p, end, ' ')) ||
	    (rv = parse_hex(&p, end, &maj)) || (rv = expect(&p, end, ':')) ||
	    (rv = parse_hex(&p, end, &min)) || (rv = expect(&p, end, ' ')) ||
	    (rv = parse_dec(&p, end, &m->ino)))
		return rv;
	if (m->end <= m->start || maj > UINT32_MAX || min > UINT32_MAX)
		return -EINVAL;
	m->maj = (uint32_t)maj;
	m->min = (uint32_t)min;
	if (p < end && *p != ' ' && *p != '\t')
		return -EINVAL;
	skip_spaces(&p, end);
	return procmap_set_path(m, p, (size_t)(end - p));
}

static int cmp_start(const void *a, const void *b)
{
	const struct procmap *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static bool ends_by(const struct procmap *m, uint64_t addr)
{
	return m->end <= addr;
}
FG_LOWER_BOUND(map_lower_bound, struct procmap, uint64_t, ends_by)

/* Index of the first mapping with end > addr (n if none). */
static size_t first_ending_after(const struct procmaps *pm, uint64_t addr)
{
	return map_lower_bound(pm->maps, pm->n, addr);
}

/*
 * Insert m (its path owned by the caller until success) into pm, resolving overlaps.
 * On failure pm is unchanged.
 */
static int insert_mapping(struct procmaps *pm, struct procmap *m)
{
	size_t i = first_ending_after(pm, m->start), j, nkeep_left = 0, nright = 0;
	struct procmap left = { 0 }, right = { 0 };
	int rv;

	/* maps[i..j) overlap [m->start, m->end). */
	for (j = i; j < pm->n && pm->maps[j].start < m->end; j++)
		;
	if (i < j && pm->maps[i].start < m->start) {
		left = pm->maps[i];
		left.end = m->start;
		nkeep_left = 1;
	}
	if (i < j && pm->maps[j - 1].end > m->end) {
		right = pm->maps[j - 1];
		right.pgoff += m->end - right.start;
		right.start = m->end;
		/* A split mapping needs its own copy of the path; the left piece keeps the old. */
		if (nkeep_left && j - 1 == i) {
			right.path = strdup(right.path);
			if (!right.path)
				return -ENOMEM;
			right.base = right.path + (pm->maps[j - 1].base - pm->maps[j - 1].path);
		}
		nright = 1;
	}
	{
		size_t newn = pm->n - (j - i) + nkeep_left + 1 + nright;

		if ((rv = reserve(&pm->maps, &pm->cap, newn)) != 0) {
			if (nright && nkeep_left && j - 1 == i)
				free(right.path);
			return rv;
		}
	}
	/* Free paths of mappings dropped entirely (not reused by left/right pieces). */
	for (size_t k = i; k < j; k++) {
		bool reused =
			(k == i && nkeep_left) || (k == j - 1 && nright && !(nkeep_left && k == i));

		if (!reused)
			free(pm->maps[k].path);
	}
	{
		size_t nnew = nkeep_left + 1 + nright, tail = pm->n - j;

		memmove(&pm->maps[i + nnew], &pm->maps[j], tail * sizeof(*pm->maps));
		if (nkeep_left)
			pm->maps[i++] = left;
		pm->maps[i++] = *m;
		if (nright)
			pm->maps[i++] = right;
		pm->n = i + tail;
	}
	return 0;
}

int procmaps_parse(struct procmaps *pm, const char *buf, size_t len)
{
	struct procmaps tmp = { 0 };
	const char *p = buf, *end = buf + len;
	bool sorted = true;
	int rv = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		struct procmap m;

		if (le == p) { /* empty line */
			p = le + 1;
			continue;
		}
		if ((rv = parse_line(p, le, &m)) != 0)
			goto fail;
		if ((rv = reserve(&tmp.maps, &tmp.cap, tmp.n + 1)) != 0) {
			free(m.path);
			goto fail;
		}
		if (tmp.n && tmp.maps[tmp.n - 1].end > m.start)
			sorted = false;
		tmp.maps[tmp.n++] = m;
		p = nl ? nl + 1 : end;
	}
	if (!sorted) {
		/* Rare (not from the kernel): rebuild through insert_mapping to drop overlaps. */
		struct procmaps fixed = { 0 };

		qsort(tmp.maps, tmp.n, sizeof(*tmp.maps), cmp_start);
		for (size_t i = 0; i < tmp.n; i++) {
			if ((rv = insert_mapping(&fixed, &tmp.maps[i])) != 0) {
				for (size_t k = i; k < tmp.n; k++)
					free(tmp.maps[k].path);
				tmp.n = 0;
				procmaps_clear(&fixed);
				free(fixed.maps);
				goto fail;
			}
		}
		free(tmp.maps);
		tmp = fixed;
	}
	procmaps_clear(pm);
	free(pm->maps);
	*pm = tmp;
	return 0;
fail:
	procmaps_clear(&tmp);
	free(tmp.maps);
	return rv;
}

int procmaps_read_file(struct procmaps *pm, const char *path)
{
	size_t len;
	char *buf;
	int rv;

	rv = fg_read_file(path, 1 << 16, PROCMAPS_MAX_FILE, &buf, &len);
	if (rv)
		return rv;
	rv = procmaps_parse(pm, buf, len);
	free(buf);
	return rv;
}

int procmaps_read(struct procmaps *pm, pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	return procmaps_read_file(pm, path);
}

int procmaps_add(struct procmaps *pm, const struct procmap_update *u)
{
	struct procmap m = { 0 };
	size_t flen;
	int rv;

	if (!u->filename || u->len == 0 || u->start + u->len < u->start)
		return -EINVAL;
	flen = strnlen(u->filename, PROCMAPS_MAX_PATH + 1);
	m.start = u->start;
	m.end = u->start + u->len;
	m.pgoff = u->pgoff;
	m.maj = u->maj;
	m.min = u->min;
	m.ino = u->ino;
	m.prot = (uint8_t)(((u->prot & PROT_READ) ? PROCMAP_R : 0) |
			   ((u->prot & PROT_WRITE) ? PROCMAP_W : 0) |
			   ((u->prot & PROT_EXEC) ? PROCMAP_X : 0));
	if ((rv = procmap_set_path(&m, u->filename, flen)) != 0)
		return rv;
	if ((rv = insert_mapping(pm, &m)) != 0)
		free(m.path);
	return rv;
}

struct procmap *procmaps_find(const struct procmaps *pm, uint64_t addr)
{
	size_t i = first_ending_after(pm, addr);

	if (i < pm->n && pm->maps[i].start <= addr)
		return &pm->maps[i];
	return NULL;
}

size_t procmaps_count(const struct procmaps *pm)
{
	return pm->n;
}

struct procmap *procmaps_at(const struct procmaps *pm, size_t i)
{
	return i < pm->n ? &pm->maps[i] : NULL;
}
