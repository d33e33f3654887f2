// SPDX-License-Identifier: MIT
/* resolve.c - stackagg resolvers over the symbolizer and the JVMs' code tables. */
#include "resolve.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "codetab.h"
#include "symbolizer.h"

static int resolve_kernel(void *ctx, uint64_t addr, const char **name, const char **module)
{
	struct resolve_ctx *rc = ctx;
	struct sym_result r;

	symbolizer_lookup(rc->sz, 0, addr, false, &r);
	*module = r.module;
	if (r.status != SYM_RESOLVED || !r.name)
		return -ENOENT;
	*name = r.name;
	return 0;
}

static int resolve_native(void *ctx, uint32_t pid, uint64_t addr, bool ret,
			  struct stackagg_nsym *out)
{
	struct resolve_ctx *rc = ctx;
	struct sym_result r;

	symbolizer_lookup(rc->sz, (pid_t)pid, addr, ret, &r);
	switch (r.status) {
	case SYM_RESOLVED:
		out->name = r.name;
		out->module = r.module;
		break;
	case SYM_UNKNOWN_IN_MODULE:
		if (r.module && strcmp(r.module, "[anon]") == 0) {
			/*
			 * Anonymous memory not executable in our view of the maps: a JVM's code
			 * cache commits its reserved (---p) range as it grows, and the mmap record
			 * that says so can be lost with a full ring. The code table decides.
			 */
			out->jit_candidate = true;
			break;
		}
		out->module = r.module;
		/* "libc.so.6+0x8a9b2": where to look it up, still counted as unresolved. */
		symbolizer_format(&r, SYMBOLIZER_STYLE_PERF, rc->label, sizeof(rc->label));
		out->name = rc->label;
		out->unresolved = true;
		break;
	case SYM_ANON_EXEC:
	case SYM_NO_MAPPING:
		/* The code cache is anonymous; a JVM's table decides (no table: unknown). */
		out->jit_candidate = true;
		break;
	}
	return 0;
}

/*
 * The lines of the n frames names[] holds for addr in compiled blob b, innermost first: the
 * agent's line chain at addr, when it is as deep as the inline chain (n == depth), or, for a
 * frame named by the blob alone (n == 1 without an inline chain, or no_inline), the line in the
 * compiled method itself, its chain's outermost. Zeros where nothing matches.
 */
static void jit_lines(const struct codeblob *b, uint64_t addr, bool chain, int n, uint16_t *lines)
{
	uint16_t l[STACKAGG_MAX_INLINE];
	int d = codetab_lines_at(b, addr, l, STACKAGG_MAX_INLINE);

	if (d <= 0 || d > (int)STACKAGG_MAX_INLINE)
		return;
	if (chain && d == n)
		for (int i = 0; i < n; i++)
			lines[i] = l[i];
	else if (!chain && n == 1)
		lines[0] = l[d - 1];
}

static int resolve_jit(void *ctx, uint32_t pid, uint64_t addr, uint64_t ts, bool ret,
		       bool no_inline, const char **names, size_t max, enum stackagg_jit_kind *kind,
		       uint16_t *lines)
{
	struct resolve_ctx *rc = ctx;
	const struct codetab *tab = rc->table_of(rc->arg, pid);
	const struct codeblob *b;
	bool chain = false;
	int n;

	if (!tab)
		return -ENOENT;
	/* A return address can be one past a blob whose last instruction is a call. */
	b = codetab_lookup(tab, ret ? addr - 1 : addr, ts);
	if (!b)
		return 0;
	if (b->kind == CODEBLOB_DYNAMIC) {
		*kind = STACKAGG_JIT_DYNAMIC;
		names[0] = b->name;
		return 1;
	}
	*kind = STACKAGG_JIT_COMPILED;
	n = no_inline ? 0 : codetab_inline_chain(b, addr, names, max);
	if (n <= 0) {
		names[0] = b->name;
		n = 1;
	} else {
		chain = true;
	}
	if (lines) {
		memset(lines, 0, (size_t)n * sizeof(*lines));
		jit_lines(b, addr, chain, n, lines);
	}
	return n;
}

void resolve_init(struct stackagg_resolver *res, struct resolve_ctx *rc)
{
	res->ctx = rc;
	res->kernel = resolve_kernel;
	res->native = resolve_native;
	res->jit = resolve_jit;
}
