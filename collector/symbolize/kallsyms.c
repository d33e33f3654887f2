// SPDX-License-Identifier: MIT
/*
 * kallsyms.c - /proc/kallsyms text symbols as a sorted array with binary search.
 *
 * Invariant: syms[] sorted by addr, unique addr, addr < end; names and module names in pools
 * owned by the table.
 */
#include "kallsyms.h"
#include "array.h"
#include "fgsearch.h"
#include "util.h"
#include "fgfree.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_MODULES 65536

struct ksym {
	uint64_t addr;
	uint64_t end;
	uint32_t name;	 /* offset in names */
	uint16_t module; /* index in modules; 0 = the kernel image */
	uint8_t rank;
};

struct kallsyms {
	struct ksym *syms;
	uint64_t *addrs; /* syms[i].addr, packed for the binary search */
	size_t n;
	char *names;
	size_t names_len;
	char **modules; /* "[kernel.kallsyms]", "[ext4]", ... */
	size_t nmodules, cap_modules;
};

void kallsyms_free(struct kallsyms *ks)
{
	if (!ks)
		return;
	for (size_t i = 0; i < ks->nmodules; i++)
		free(ks->modules[i]);
	FG_FREE_ALL(ks->modules, ks->syms, ks->addrs, ks->names, ks);
}

static int module_index(struct kallsyms *ks, const char *name, size_t len, uint16_t *idx)
{
	char **nm;

	/* Lines come grouped by module: the last one is nearly always the answer. */
	for (size_t i = ks->nmodules; i-- > 1;) {
		const char *m = ks->modules[i];

		if (strlen(m) == len + 2 && memcmp(m + 1, name, len) == 0) {
			*idx = (uint16_t)i;
			return 0;
		}
	}
	if (ks->nmodules == MAX_MODULES)
		return -E2BIG;
	if (ARRAY_GROW(ks->modules, ks->cap_modules, ks->nmodules + 1) != 0)
		return -ENOMEM;
	nm = ks->modules;
	nm[ks->nmodules] = malloc(len + 3);
	if (!nm[ks->nmodules])
		return -ENOMEM;
	nm[ks->nmodules][0] = '[';
	memcpy(nm[ks->nmodules] + 1, name, len);
	memcpy(nm[ks->nmodules] + 1 + len, "]", 2);
	*idx = (uint16_t)ks->nmodules++;
	return 0;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->rank > y->rank ? -1 : x->rank < y->rank;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* "addr type name[\t[module]]" */
static int parse_all(struct kallsyms *ks, const char *buf, size_t len, size_t *nzero)
{
	const char *p = buf, *end = buf + len;
	size_t cap = 0, ncap = 0;
	int rv;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
		const char *name, *ne, *mod = NULL, *me = NULL;
		uint64_t addr = 0;
		int digits = 0, d;
		char type;
		uint16_t midx = 0;

		if (le == p) {
			p = le + 1;
			continue;
		}
		while (p < le && (d = hexval(*p)) >= 0) {
			if (++digits > 16)
				return -EINVAL;
			addr = addr << 4 | (uint64_t)d;
			p++;
		}
		if (!digits || le - p < 3 || p[0] != ' ' || p[2] != ' ')
			return -EINVAL;
		type = p[1];
		name = p + 3;
		for (ne = name; ne < le && *ne != '\t' && *ne != ' '; ne++)
			;
		if (ne == name)
			return -EINVAL;
		if (ne < le) {
			mod = ne;
			while (mod < le && (*mod == '\t' || *mod == ' '))
				mod++;
			if (mod < le) {
				if (*mod != '[' || le[-1] != ']' || le - mod < 3)
					return -EINVAL;
				me = le - 1;
				mod++;
			} else {
				mod = NULL;
			}
		}
		p = nl ? nl + 1 : end;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (addr == 0) {
			(*nzero)++;
			continue;
		}
		if (mod && (rv = module_index(ks, mod, (size_t)(me - mod), &midx)) != 0)
			return rv;
		if (ks->n == KALLSYMS_MAX_SYMBOLS)
			return -E2BIG;
		if (ARRAY_GROW(ks->syms, cap, ks->n + 1) != 0 ||
		    ARRAY_GROW(ks->names, ncap, ks->names_len + (size_t)(ne - name) + 1) != 0)
			return -ENOMEM;
		memcpy(ks->names + ks->names_len, name, (size_t)(ne - name));
		ks->names[ks->names_len + (size_t)(ne - name)] = '\0';
		ks->syms[ks->n++] = (struct ksym){
			.addr = addr,
			.name = (uint32_t)ks->names_len,
			.module = midx,
			.rank = (uint8_t)(type == 'T'	? 3
					  : type == 't' ? 2
					  : type == 'W' ? 1
							: 0),
		};
		ks->names_len += (size_t)(ne - name) + 1;
	}
	return 0;
}

int kallsyms_parse(const char *buf, size_t len, struct kallsyms **out)
{
	struct kallsyms *ks = calloc(1, sizeof(*ks));
	size_t nzero = 0, o = 0;
	uint16_t kidx;
	int rv;

	if (!ks)
		return -ENOMEM;
	/* Index 0 is the kernel image. */
	if ((rv = module_index(ks, "kernel.kallsyms", 15, &kidx)) != 0)
		goto fail;
	if ((rv = parse_all(ks, buf, len, &nzero)) != 0)
		goto fail;
	if (ks->n == 0) {
		rv = nzero ? -EACCES : -ENOENT;
		goto fail;
	}
	qsort(ks->syms, ks->n, sizeof(*ks->syms), cmp_ksym);
	for (size_t i = 0; i < ks->n; i++) {
		if (o && ks->syms[o - 1].addr == ks->syms[i].addr)
			continue;
		ks->syms[o++] = ks->syms[i];
	}
	ks->n = o;
	for (size_t i = 0; i < ks->n; i++) {
		struct ksym *s = &ks->syms[i];
		bool same = i + 1 < ks->n && ks->syms[i + 1].module == s->module;
		uint64_t limit = same ? KALLSYMS_MAX_EXTENT : KALLSYMS_MAX_TAIL;
		uint64_t gap = i + 1 < ks->n ? ks->syms[i + 1].addr - s->addr : limit;

		s->end = s->addr + (gap < limit ? gap : limit);
		if (s->end < s->addr) /* wrapped past the top of the address space */
			s->end = UINT64_MAX;
	}
	ks->addrs = malloc(ks->n * sizeof(*ks->addrs));
	if (!ks->addrs) {
		rv = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < ks->n; i++)
		ks->addrs[i] = ks->syms[i].addr;
	*out = ks;
	return 0;
fail:
	kallsyms_free(ks);
	return rv;
}

int kallsyms_load(const char *path, struct kallsyms **out)
{
	size_t len;
	char *buf;
	int rv;

	rv = fg_read_file(path ? path : "/proc/kallsyms", 1 << 20, KALLSYMS_MAX_FILE, &buf, &len);
	if (rv)
		return rv;
	rv = kallsyms_parse(buf, len, out);
	free(buf);
	return rv;
}

static bool at_or_below(const uint64_t *a, uint64_t v)
{
	return *a <= v;
}
FG_LOWER_BOUND(addr_upper_bound, uint64_t, uint64_t, at_or_below)

int kallsyms_lookup(const struct kallsyms *ks, uint64_t addr, const char **name,
		    const char **module, uint64_t *off)
{
	size_t i = addr_upper_bound(ks->addrs, ks->n, addr);

	if (i == 0 || addr >= ks->syms[i - 1].end)
		return -ENOENT;
	*name = ks->names + ks->syms[i - 1].name;
	*module = ks->modules[ks->syms[i - 1].module];
	*off = addr - ks->syms[i - 1].addr;
	return 0;
}

size_t kallsyms_count(const struct kallsyms *ks)
{
	return ks->n;
}
