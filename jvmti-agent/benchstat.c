// SPDX-License-Identifier: MIT
/*
 * benchstat.c - fixed-size sample arrays for callback timings (benchmark build only).
 * Invariant: at most BENCHSTAT_MAX samples per kind are kept; later ones are ignored.
 */
#include "benchstat.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BENCHSTAT_MAX (1u << 18)
#define CLOCK_PAIRS 1001u /* back-to-back reads of the CPU clock that time it */

static uint32_t samples[3][BENCHSTAT_MAX], cpu[3][BENCHSTAT_MAX];
static atomic_uint count[3];
static uint64_t code_addr[BENCHSTAT_MAX], code_ts[BENCHSTAT_MAX];
static uint8_t code_kind[BENCHSTAT_MAX];
static atomic_uint n_code;

static uint32_t clamp32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

uint64_t benchstat_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void benchstat_add(int kind, uint64_t wall_ns, uint64_t cpu_ns)
{
	unsigned i = atomic_fetch_add_explicit(&count[kind], 1, memory_order_relaxed);

	if (i < BENCHSTAT_MAX) {
		samples[kind][i] = clamp32(wall_ns);
		cpu[kind][i] = clamp32(cpu_ns);
	}
}

void benchstat_code(int kind, uint64_t addr, uint64_t ts)
{
	unsigned i = atomic_fetch_add_explicit(&n_code, 1, memory_order_relaxed);

	if (i < BENCHSTAT_MAX) {
		code_kind[i] = (uint8_t)kind;
		code_addr[i] = addr;
		code_ts[i] = ts;
	}
}

static void dump_code(const char *path)
{
	unsigned n = atomic_load(&n_code);
	char name[4096];
	FILE *f;

	if (snprintf(name, sizeof(name), "%s.code", path) >= (int)sizeof(name) ||
	    (f = fopen(name, "w")) == NULL)
		return;
	for (unsigned i = 0; i < n && i < BENCHSTAT_MAX; i++)
		fprintf(f, "%d %llx %llu\n", code_kind[i], (unsigned long long)code_addr[i],
			(unsigned long long)code_ts[i]);
	fclose(f);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

uint32_t benchstat_clock_ns(void)
{
	uint32_t d[CLOCK_PAIRS];

	for (unsigned i = 0; i < CLOCK_PAIRS; i++) {
		uint64_t c0 = benchstat_cpu_ns();

		d[i] = clamp32(benchstat_cpu_ns() - c0);
	}
	qsort(d, CLOCK_PAIRS, sizeof(d[0]), cmp_u32);
	return d[CLOCK_PAIRS / 2];
}

void benchstat_dump(void)
{
	const char *path = getenv("FGAGENT_BENCH_OUT");
	uint32_t clk;
	FILE *f;

	if (path == NULL)
		return;
	dump_code(path);
	clk = benchstat_clock_ns();
	if ((f = fopen(path, "w")) == NULL)
		return;
	for (int k = 0; k < 3; k++) {
		unsigned n = atomic_load(&count[k]);

		for (unsigned i = 0; i < n && i < BENCHSTAT_MAX; i++)
			fprintf(f, "%d %u %u\n", k, samples[k][i],
				cpu[k][i] > clk ? cpu[k][i] - clk : 0);
	}
	fclose(f);
}
