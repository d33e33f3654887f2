// SPDX-License-Identifier: MIT
/*
 * sample.c - sampling overhead: a CPU-bound workload (THREADS threads, each a fixed amount of
 * work at the bottom of a DEPTH-frame call chain) is run without sampling and with the
 * sampler at 99 Hz and 999 Hz (thread scope) and 999 Hz (CPU scope), interleaved, REPS times.
 * Prints the median work time (wall, measured by the workload between its start and end
 * signals) and CPU time of the workload, ratios against the unsampled baseline, samples per
 * second delivered, losses and the collector's CPU time per sample.
 *
 * With --stack-copies the configurations are instead callchain-only sampling and sampling with
 * user registers plus an 8, 16 and 64 KiB user-stack copy (--stack-copy), at 99 and 999 Hz,
 * all in the same run: the copy's cost per sample is the difference against callchain-only.
 *
 *   fg_bench_sample [--reps N] [--work MITER] [--threads N] [--depth N] [--stack-copies]
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sampler.h"
#include "util.h"

struct cfg {
	const char *name;
	unsigned int freq; /* 0: no sampling */
	enum sampler_scope scope;
	unsigned int stack_copy; /* bytes, 0: callchain only */
	double wall[64], cpu[64], sps[64], coll_us[64];
	uint64_t samples, lost, truncated, dup, foreign;
};

static unsigned long work_miter = 150; /* million iterations per thread */
static int depth = 48;

static volatile uint64_t sink;

static uint64_t leaf(uint64_t n)
{
	uint64_t x = 1;

	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

static uint64_t chain(int d, uint64_t n);
static uint64_t (*volatile chain_fp)(int, uint64_t) = chain;

static uint64_t chain(int d, uint64_t n)
{
	if (d == 0)
		return leaf(n);
	return chain_fp(d - 1, n) + 1;
}

static void *worker(void *arg)
{
	(void)arg;
	/* in slices, so samples see the whole chain most of the time */
	for (unsigned long i = 0; i < work_miter; i++)
		sink += chain(depth, 1000000);
	return NULL;
}

/* The workload: wait for the go byte, run the threads, report the wall time in ns. */
static void workload(int go, int out, int threads)
{
	pthread_t t[64];
	uint64_t t0, dt;
	char c;

	if (read(go, &c, 1) != 1)
		_exit(2);
	t0 = fg_now_ns();
	for (int i = 1; i < threads; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			_exit(2);
	worker(NULL);
	for (int i = 1; i < threads; i++)
		pthread_join(t[i], NULL);
	dt = fg_now_ns() - t0;
	if (write(out, &dt, sizeof(dt)) != sizeof(dt))
		_exit(2);
	_exit(0);
}

struct counter {
	uint64_t samples;
};

static int on_record(void *ctx, const struct perfring_rec *r)
{
	struct counter *c = ctx;

	c->samples += r->type == PERF_RECORD_SAMPLE;
	return 0;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int run(struct cfg *c, int rep, int threads)
{
	int go[2], out[2], status;
	struct sampler *sp = NULL;
	struct counter cnt = { 0 };
	struct rusage ru;
	uint64_t wall = 0, c0 = 0, c1;
	pid_t pid;

	if (pipe(go) || pipe(out))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		workload(go[0], out[1], threads);
	if (c->freq) {
		struct sampler_opts o = { .freq_hz = c->freq,
					  .scope = c->scope,
					  .stack_copy = c->stack_copy };
		int rv = sampler_open(&o, &pid, 1, &sp);

		if (rv) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return rv;
		}
	}
	c0 = thread_cpu_ns();
	if (write(go[1], "g", 1) != 1)
		return -EIO;
	for (;;) {
		if (sp && sampler_poll(sp, 100, on_record, &cnt) < 0)
			return -EIO;
		if (!sp)
			usleep(20000);
		if (wait4(pid, &status, WNOHANG, &ru) == pid)
			break;
	}
	if (sp) {
		struct sampler_stats st;

		sampler_poll(sp, 0, on_record, &cnt);
		sampler_stats(sp, &st);
		c->samples += st.samples;
		c->lost += st.lost + st.lost_samples;
		c->truncated += st.truncated;
		c->dup += st.samples_dup;
		c->foreign += st.samples_foreign;
		sampler_close(sp);
	}
	c1 = thread_cpu_ns();
	if (read(out[0], &wall, sizeof(wall)) != sizeof(wall))
		return -EIO;
	close(go[0]);
	close(go[1]);
	close(out[0]);
	close(out[1]);
	c->wall[rep] = (double)wall / 1e6;
	c->cpu[rep] = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		      (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	c->sps[rep] = cnt.samples / ((double)wall / 1e9);
	c->coll_us[rep] = cnt.samples ? (double)(c1 - c0) / 1e3 / (double)cnt.samples : 0;
	return 0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	double s[64];

	memcpy(s, v, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	struct cfg cfgs[] = {
		{ .name = "no sampling" },
		{ .name = "99 Hz, thread scope", .freq = 99, .scope = SAMPLER_SCOPE_THREADS },
		{ .name = "999 Hz, thread scope", .freq = 999, .scope = SAMPLER_SCOPE_THREADS },
		{ .name = "999 Hz, CPU scope", .freq = 999, .scope = SAMPLER_SCOPE_CPUS },
	};
	struct cfg copies[] = {
		{ .name = "no sampling" },
		{ .name = "99 Hz callchain", .freq = 99 },
		{ .name = "99 Hz + 8 KiB", .freq = 99, .stack_copy = 8192 },
		{ .name = "99 Hz + 16 KiB", .freq = 99, .stack_copy = 16384 },
		{ .name = "99 Hz + 64 KiB", .freq = 99, .stack_copy = 65528 },
		{ .name = "999 Hz callchain", .freq = 999 },
		{ .name = "999 Hz + 8 KiB", .freq = 999, .stack_copy = 8192 },
		{ .name = "999 Hz + 16 KiB", .freq = 999, .stack_copy = 16384 },
		{ .name = "999 Hz + 64 KiB", .freq = 999, .stack_copy = 65528 },
	};
	struct cfg *cf = cfgs;
	size_t ncf = FG_ARRAY_SIZE(cfgs);
	int reps = 5, threads = 2;
	struct sampler *probe;
	pid_t self = getpid();
	struct sampler_opts o = { 0 };

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : "";
		uint64_t x;

		if (strcmp(argv[i], "--stack-copies") == 0) {
			cf = copies;
			ncf = FG_ARRAY_SIZE(copies);
			continue;
		}
		if (strcmp(argv[i], "--reps") == 0 && fg_parse_u64(v, 1, 64, &x) == 0)
			reps = (int)x;
		else if (strcmp(argv[i], "--work") == 0 && fg_parse_u64(v, 1, 100000, &x) == 0)
			work_miter = (unsigned long)x;
		else if (strcmp(argv[i], "--threads") == 0 && fg_parse_u64(v, 1, 64, &x) == 0)
			threads = (int)x;
		else if (strcmp(argv[i], "--depth") == 0 && fg_parse_u64(v, 0, 200, &x) == 0)
			depth = (int)x;
		else {
			fprintf(stderr,
				"usage: %s [--reps N] [--work MITER] [--threads N] "
				"[--depth N] [--stack-copies]\n",
				argv[0]);
			return 64;
		}
		i++;
	}
	if (sampler_open(&o, &self, 1, &probe) == 0) {
		const struct sampler_info *in = sampler_info(probe);

		printf("event: %s%s; max stack %u%s; %u CPUs, %zu KiB ring per CPU\n",
		       in->event_name, in->cycles_err ? " (cycles unsupported here)" : "",
		       in->max_stack, in->raised_max_stack ? " (sysctl raised)" : "", in->ncpus,
		       in->ring_bytes / 1024);
		sampler_close(probe);
	}
	printf("workload: %d threads x %lu M iterations at depth %d, %d repetitions "
	       "(interleaved), medians\n\n",
	       threads, work_miter, depth + 3, reps);
	for (int r = 0; r < reps; r++) {
		for (size_t k = 0; k < ncf; k++) {
			int rv = run(&cf[k], r, threads);

			if (rv) {
				fprintf(stderr, "fg_bench_sample: %s: %s\n", cf[k].name,
					strerror(-rv));
				return 1;
			}
		}
	}
	double base_wall = median(cf[0].wall, reps), base_cpu = median(cf[0].cpu, reps);
	double usmp[FG_ARRAY_SIZE(copies)] = { 0 }, coll[FG_ARRAY_SIZE(copies)] = { 0 };

	printf("%-22s %9s %7s %9s %7s %9s %9s %5s %8s %9s\n", "config", "wall ms", "ratio",
	       "cpu ms", "ratio", "samples/s", "us/smp", "lost", "foreign", "coll us");
	for (size_t k = 0; k < ncf; k++) {
		struct cfg *c = &cf[k];
		double w = median(c->wall, reps), cpu = median(c->cpu, reps);

		double per_run = (double)c->samples / reps;

		if (k < FG_ARRAY_SIZE(usmp)) {
			usmp[k] = per_run > 0 ? (cpu - base_cpu) * 1e3 / per_run : 0.0;
			coll[k] = c->freq ? median(c->coll_us, reps) : 0.0;
		}

		printf("%-22s %9.1f %7.4f %9.1f %7.4f %9.0f %9.2f %5llu %8llu %9.2f\n", c->name, w,
		       w / base_wall, cpu, cpu / base_cpu, c->freq ? median(c->sps, reps) : 0.0,
		       per_run > 0 ? (cpu - base_cpu) * 1e3 / per_run : 0.0,
		       (unsigned long long)c->lost, (unsigned long long)c->foreign,
		       c->freq ? median(c->coll_us, reps) : 0.0);
	}
	for (size_t k = 0; cf == copies && k < ncf; k++) {
		size_t b = 0;

		if (!cf[k].stack_copy)
			continue;
		for (size_t i = 0; i < ncf; i++)
			if (cf[i].freq == cf[k].freq && !cf[i].stack_copy)
				b = i;
		printf("%s: the copy costs %+.2f us of workload CPU and %+.2f us of collector CPU "
		       "per sample over callchain-only (%s)\n",
		       cf[k].name, usmp[k] - usmp[b], coll[k] - coll[b], cf[b].name);
	}
	printf("\nratio: against \"no sampling\" in the same run. us/smp: extra workload CPU "
	       "time per sample (kernel sampling + unwinding). lost: records the kernel dropped.\n"
	       "foreign: samples of other processes the CPU scope unwound and discarded. coll us: "
	       "the collector's CPU time (drain + decode) per sample delivered.\n");
	return 0;
}
