// SPDX-License-Identifier: MIT
/*
 * pingpong.c - a switch-heavy target for bench/record/offcpu.sh: two threads pass a byte back and
 * forth over two pipes, each spinning WORK_NS of CPU (a few frames deep) per hop, so every hop is a
 * switch-out of the thread that waits. It runs until SIGTERM; at each SIGUSR1 it prints one
 * line "mark ROUND_TRIPS CPU_NS SWITCHES MONO_NS": round trips so far, the process's CPU time
 * (both threads, user + system: the kernel's sampling work in their context lands there), the
 * context switches of the two threads (voluntary + involuntary, from /proc) and the monotonic
 * clock, so that a window's figures are the difference of two marks.
 *
 *   bench_pingpong [WORK_NS]
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int p_ab[2], p_ba[2];
static uint64_t work_ns;
static volatile uint64_t round_trips;
static pid_t tids[2];

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A few frames of CPU work per hop, so that stacks have some depth. */
__attribute__((noinline)) static void spin(uint64_t ns)
{
	uint64_t end = clock_ns(CLOCK_MONOTONIC) + ns;

	while (ns && clock_ns(CLOCK_MONOTONIC) < end)
		;
}

__attribute__((noinline)) static int hop(int in, int out)
{
	char c = 0;

	if (read(in, &c, 1) != 1)
		return -1;
	spin(work_ns);
	if (write(out, &c, 1) != 1)
		return -1;
	return 0;
}

static void *ping(void *arg)
{
	char c = 0;

	(void)arg;
	tids[0] = (pid_t)syscall(SYS_gettid);
	if (write(p_ab[1], &c, 1) != 1)
		return NULL;
	for (;;) {
		if (hop(p_ba[0], p_ab[1]) != 0)
			return NULL;
		round_trips = round_trips + 1;
	}
}

static void *pong(void *arg)
{
	(void)arg;
	tids[1] = (pid_t)syscall(SYS_gettid);
	for (;;)
		if (hop(p_ab[0], p_ba[1]) != 0)
			return NULL;
}

/* Voluntary + involuntary context switches of one thread, 0 when unreadable. */
static uint64_t switches(pid_t tid)
{
	char path[64], line[256];
	uint64_t sum = 0, v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	if (!(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %lu", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %lu", &v) == 1)
			sum += v;
	fclose(f);
	return sum;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	sigset_t set;
	int sig;

	work_ns = argc > 1 ? strtoull(argv[1], NULL, 10) : 0;
	if (pipe(p_ab) != 0 || pipe(p_ba) != 0) {
		perror("pipe");
		return 1;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pthread_create(&a, NULL, ping, NULL) != 0 ||
	    pthread_create(&b, NULL, pong, NULL) != 0) {
		fprintf(stderr, "pthread_create failed\n");
		return 1;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		if (sigwait(&set, &sig) != 0 || sig != SIGUSR1)
			break;
		printf("mark %lu %lu %lu %lu\n", (unsigned long)round_trips,
		       (unsigned long)clock_ns(CLOCK_PROCESS_CPUTIME_ID),
		       (unsigned long)(switches(tids[0]) + switches(tids[1])),
		       (unsigned long)clock_ns(CLOCK_MONOTONIC));
		fflush(stdout);
	}
	return 0;
}
