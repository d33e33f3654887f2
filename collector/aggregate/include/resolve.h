/* SPDX-License-Identifier: MIT */
/*
 * resolve.h - the resolvers stackagg calls, built on the symbolizer (kernel and native frames)
 * and the JVMs' code tables (JIT frames, time-exact). One implementation for `record`, `top`
 * and the benchmarks, so a benchmark measures what the commands run.
 *
 * Invariant: a user address that no file backs is a JIT candidate; only the code table of its
 * process (table_of) decides what was there at the sample's time.
 */
#ifndef FG_RESOLVE_H
#define FG_RESOLVE_H

#include <stdint.h>

#include "stackagg.h"

struct codetab;
struct symbolizer;

struct resolve_ctx {
	struct symbolizer *sz;
	/* The code table of process pid, or NULL when it is not a JVM we have a table for. */
	const struct codetab *(*table_of)(void *arg, uint32_t pid);
	void *arg;
	/* The label of the last unnamed native frame (symbolizer_format()). */
	char label[320];
};

/* Point res at rc's resolvers. rc is borrowed: it must outlive every use of res. */
void resolve_init(struct stackagg_resolver *res, struct resolve_ctx *rc);

#endif
