// SPDX-License-Identifier: MIT
/* resolve.c - stackagg resolvers over the symbolizer and the JVMs' code tables. */
#include "resolve.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

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
		out->module = r.module;
		break;
	case SYM_ANON_EXEC:
	case SYM_NO_MAPPING:
		/* The code cache is anonymous; a JVM's table decides (no table: unknown). */
		out->jit_candidate = true;
		break;
	}
	return 0;
}

static int resolve_jit(void *ctx, uint32_t pid, uint64_t addr, uint64_t ts, bool ret,
		       bool no_inline, const char **names, size_t max, enum stackagg_jit_kind *kind)
{
	struct resolve_ctx *rc = ctx;
	const struct codetab *tab = rc->table_of(rc->arg, pid);
	const struct codeblob *b;
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
	if (no_inline) {
		names[0] = b->name;
		return 1;
	}
	n = codetab_inline_chain(b, addr, ret, names, max);
	if (n <= 0) {
		names[0] = b->name;
		n = 1;
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
