/* SPDX-License-Identifier: MIT */
/*
 * samplefix.h - the correction of JDK 11's heap sampler, which samples too often after a
 * sample.
 *
 * HotSpot samples a thread's allocations at distances drawn from an exponential law of mean I
 * (SetHeapSamplingInterval): an object of s bytes is sampled with p = 1 - exp(-s / I), which
 * the collector's weights invert (evweigh.h). JDK 11's ThreadHeapSampler breaks that law after
 * each sample taken where an object crosses its TLAB's sample point: the TLAB reports the whole
 * distance to that point as allocated, so the "overflow" it then takes off the next distance X
 * is the whole object (s), and when X <= s it keeps X unshortened. The next sample then comes
 * X <= s bytes after the object instead of X - s (on average I - s exp(-s / I) bytes after it,
 * not I): each sample of s bytes brings, on average, s exp(-s / I) bytes' worth of samples too
 * many. For byte[] of 16 B to 16 KiB at I = 64 KiB that is 15-20% too many bytes; objects far
 * below I (a few dozen bytes) or far above it are barely touched. JDK 13's sampler draws the
 * next distance from the sampled object's end, unshortened, and is exact.
 *
 * The agent corrects it where the sample arrives: it drops the thread's next sample (of n
 * bytes, weighed w(n) = n / (1 - exp(-n / I))) with the chance s exp(-s / I) / w(n), s being
 * the thread's previous sample, so what it keeps weighs, on average, s exp(-s / I) less: the
 * samples the shortened distance added. Dropping, not reweighing, keeps the wire and the live
 * profile as they are (a dropped sample is never tracked).
 *
 * Invariant: pure arithmetic (no libm: the agent asks for no newer glibc than 2.17, and libm's
 * exp moved to GLIBC_2.29).
 */
#ifndef FG_SAMPLEFIX_H
#define FG_SAMPLEFIX_H

#include <stdbool.h>
#include <stdint.h>

/* Does the heap sampler of a JVM of feature release jdk_major (0: unknown) shorten the next
 * distance by the whole sampled object? JDK 11 and 12 (the sampler as JDK 11 shipped it); not
 * 13 and later, nor an unknown release. */
bool samplefix_needed(unsigned jdk_major);

/* exp(-x) for x >= 0 (1 for anything else), within 1e-10 relative. */
double samplefix_exp_neg(double x);

/*
 * The chance, in [0, 1], of dropping a sample of size bytes on a thread whose previous sample
 * was prev bytes (0: none yet, chance 0), the distance between them drawn at mean interval
 * (the interval in force at the previous sample, which the sample stands for). 0 when size or
 * interval is 0.
 */
double samplefix_drop_chance(uint64_t prev, uint64_t size, uint64_t interval);

#endif
