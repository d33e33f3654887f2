// SPDX-License-Identifier: MIT
/* samplefix.c - the correction of JDK 11's heap sampler (see samplefix.h). */
#include "samplefix.h"

bool samplefix_needed(unsigned jdk_major)
{
	return jdk_major == 11 || jdk_major == 12;
}

double samplefix_exp_neg(double x)
{
	double y, t, sum;
	int halvings = 0;

	if (!(x > 0))
		return 1.0;
	if (x > 745.0)
		return 0.0; /* below the smallest double */
	/* exp(-x) = exp(-x / 2^k)^(2^k): a short series where it converges fast, then squares. */
	y = x;
	while (y > 1.0 / 64) {
		y /= 2;
		halvings++;
	}
	t = 1.0;
	sum = 1.0;
	for (int i = 1; i <= 10; i++) {
		t *= -y / i;
		sum += t;
	}
	while (halvings-- > 0)
		sum *= sum;
	return sum;
}

double samplefix_drop_chance(uint64_t prev, uint64_t size, uint64_t interval)
{
	double iv = (double)interval, s = (double)size, p = (double)prev, took, weight, q;

	if (!prev || !size || !interval)
		return 0;
	/* the sample's weight, size / (1 - exp(-size / I)): the series keeps small objects exact */
	q = s / iv;
	took = q < 1e-3 ? q * (1 - q / 2 + q * q / 6) : 1 - samplefix_exp_neg(q);
	if (!(took > 0))
		return 0;
	weight = s / took;
	/* the bytes' worth of samples the shortened distance after prev adds, on average */
	took = p * samplefix_exp_neg(p / iv) / weight;
	return took < 0 ? 0 : took > 1 ? 1 : took;
}
