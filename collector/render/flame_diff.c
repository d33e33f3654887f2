// SPDX-License-Identifier: MIT
/*
 * flame_diff.c - baseline normalization for differential graphs.
 *
 * Invariant: after normalization time_a is the sum of the scaled self_a counts, as
 * difffolded.pl's output would total.
 */
#include "flame_diff.h"

#include <errno.h>
#include <math.h>

int flame_diff_normalize(struct flame *f)
{
	double sum = 0;

	if (!f->self_a || f->time_a == f->time)
		return 0;
	if (!(f->time_a > 0))
		return -EINVAL;
	for (size_t i = 0; i < f->nnodes; i++) {
		/* same operation order as Perl: int($a * $total2 / $total1) */
		f->self_a[i] = trunc(f->self_a[i] * f->time / f->time_a);
		sum += f->self_a[i];
	}
	f->time_a = sum;
	return 0;
}
