// SPDX-License-Identifier: MIT
/*
 * topview.c - self/total per symbol from the counted stacks of a stackagg.
 *
 * Invariant: a frame is added to a stack's total at most once (a per-stack generation mark).
 */
#include "topview.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "framelabel.h"
#include "stackagg.h"
#include "fgfree.h"

struct build {
	const struct stackagg *a;
	uint64_t *self, *total;
	uint32_t *mark;
	uint32_t gen;
	uint64_t samples;
};

static int visit(void *arg, const uint32_t *ids, size_t n, uint64_t count)
{
	struct build *b = arg;
	uint32_t leaf;

	b->samples += count;
	if (++b->gen == 0) { /* wrapped: forget every mark */
		memset(b->mark, 0, stackagg_frame_count(b->a) * sizeof(*b->mark));
		b->gen = 1;
	}
	leaf = ids[n - 1];
	if (stackagg_frame_kind(b->a, leaf) != STACKAGG_ROOT)
		b->self[leaf] += count;
	for (size_t i = 0; i < n; i++) {
		if (b->mark[ids[i]] == b->gen || stackagg_frame_kind(b->a, ids[i]) == STACKAGG_ROOT)
			continue;
		b->mark[ids[i]] = b->gen;
		b->total[ids[i]] += count;
	}
	return 0;
}

static const struct stackagg *sort_agg;

static int row_cmp(const void *x, const void *y)
{
	const struct topview_row *p = x, *q = y;

	if (p->self != q->self)
		return p->self < q->self ? 1 : -1;
	if (p->total != q->total)
		return p->total < q->total ? 1 : -1;
	return strcmp(stackagg_frame_name(sort_agg, p->id), stackagg_frame_name(sort_agg, q->id));
}

int topview_build(const struct stackagg *a, struct topview *tv)
{
	size_t nf = stackagg_frame_count(a);
	struct build b = { .a = a };
	int rv = -ENOMEM;

	memset(tv, 0, sizeof(*tv));
	b.self = calloc(nf ? nf : 1, sizeof(*b.self));
	b.total = calloc(nf ? nf : 1, sizeof(*b.total));
	b.mark = calloc(nf ? nf : 1, sizeof(*b.mark));
	if (!b.self || !b.total || !b.mark)
		goto out;
	stackagg_foreach(a, visit, &b);
	tv->rows = calloc(nf ? nf : 1, sizeof(*tv->rows));
	if (!tv->rows)
		goto out;
	for (size_t i = 0; i < nf; i++) {
		if (b.total[i])
			tv->rows[tv->n++] = (struct topview_row){ .id = (uint32_t)i,
								  .self = b.self[i],
								  .total = b.total[i] };
	}
	sort_agg = a;
	qsort(tv->rows, tv->n, sizeof(*tv->rows), row_cmp);
	sort_agg = NULL;
	tv->samples = b.samples;
	rv = 0;
out:
	FG_FREE_ALL(b.self, b.total, b.mark);
	return rv;
}

void topview_fini(struct topview *tv)
{
	free(tv->rows);
	memset(tv, 0, sizeof(*tv));
}

int topview_print(FILE *f, const struct stackagg *a, const struct topview *tv, size_t max_rows,
		  unsigned int width)
{
	double all = tv->samples ? (double)tv->samples : 1.0;
	int namew;

	if (width < 40)
		width = 40;
	namew = (int)width - 28;
	if (fprintf(f, "%7s %7s %9s  %s\n", "SELF%", "TOTAL%",
		    tv->bytes	  ? "SELF-KB"
		    : tv->time_us ? "SELF-MS"
				  : "SAMPLES",
		    "SYMBOL") < 0)
		return -EIO;
	for (size_t i = 0; i < tv->n && i < max_rows; i++) {
		const struct topview_row *r = &tv->rows[i];
		const char *suf = stackagg_suffix(stackagg_frame_kind(a, r->id));
		char lab[STACKAGG_MAX_NAME + 8];
		int ll = (int)framelabel_format(stackagg_frame_name(a, r->id), suf, lab,
						sizeof(lab));
		int sl = (int)strlen(suf), nl;
		char self[32];

		if (tv->bytes)
			snprintf(self, sizeof(self), "%9.1f", (double)r->self / 1024.0);
		else if (tv->time_us)
			snprintf(self, sizeof(self), "%9.1f", (double)r->self / 1000.0);
		else
			snprintf(self, sizeof(self), "%9llu", (unsigned long long)r->self);
		if (ll > (int)sizeof(lab) - 1)
			ll = (int)sizeof(lab) - 1;
		nl = ll - sl;
		if (ll > namew) {
			/* Keep the end of the name: for Java, Class::method is what matters. */
			int keep = namew - sl - 3;

			if (keep < 1)
				keep = 1;
			if (fprintf(f, "%6.2f%% %6.2f%% %s  ...%s\n", 100.0 * r->self / all,
				    100.0 * r->total / all, self,
				    lab + nl - (keep < nl ? keep : nl)) < 0)
				return -EIO;
			continue;
		}
		if (fprintf(f, "%6.2f%% %6.2f%% %s  %s\n", 100.0 * r->self / all,
			    100.0 * r->total / all, self, lab) < 0)
			return -EIO;
	}
	return 0;
}
