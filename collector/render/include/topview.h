/* SPDX-License-Identifier: MIT */
/*
 * topview.h - the hottest symbols of an aggregate, perf-top style: self and total share.
 *
 * self  = samples whose leaf frame is the symbol;
 * total = samples with the symbol anywhere on the stack, counted once per sample even when the
 *         symbol recurses.
 * Root frames (process and thread names) are not symbols and never listed.
 *
 * Invariant: for every row, self <= total <= samples.
 */
#ifndef FG_TOPVIEW_H
#define FG_TOPVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct stackagg;

struct topview_row {
	uint32_t id; /* stackagg frame id */
	uint64_t self, total;
};

struct topview {
	struct topview_row *rows; /* sorted: self desc, then total desc, then name */
	size_t n;
	uint64_t samples; /* samples counted in the aggregate (its counts' sum) */
	/* The counts are microseconds (off-CPU and wall profiles): topview_print shows the self
	 * time in milliseconds ("SELF-MS") instead of SAMPLES. Set by the caller. */
	bool time_us;
	/* The counts are bytes (allocation and live profiles): "SELF-KB", in KiB. */
	bool bytes;
};

/* Compute the rows of a's counted stacks into *tv (freed with topview_fini). 0 or -ENOMEM. */
int topview_build(const struct stackagg *a, struct topview *tv);
void topview_fini(struct topview *tv);

/*
 * Print a header line and at most max_rows rows, each no wider than width columns (>= 40):
 *   "  SELF%  TOTAL%  SAMPLES  SYMBOL" (SELF-MS with tv->time_us)
 * Names carry their FlameGraph suffix (_[j], _[i], _[k]). 0 or -EIO.
 */
int topview_print(FILE *f, const struct stackagg *a, const struct topview *tv, size_t max_rows,
		  unsigned int width);

#endif
