// SPDX-License-Identifier: MIT
/*
 * test_sampler.c - the sampler against the real kernel: forked workloads are sampled with
 * every thread (also threads started after sampling began), deep stacks, CLOCK_MONOTONIC
 * times in order, kernel frames on request only, losses counted.
 *
 * Exits 77 (skipped) only when the kernel refuses perf_event_open itself.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "perfsysctl.h"
#include "sampler.h"
#include "util.h"

#define MAX_TIDS 64

/* ---- workloads, run in forked children ---- */

static volatile uint64_t sink;

/* CPU time of the calling thread: cpu-clock samples are proportional to it, whatever the
 * load of the machine, so the workloads below burn CPU time rather than wall time. */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void spin_ms(unsigned int ms)
{
	uint64_t end = thread_cpu_ns() + (uint64_t)ms * 1000000u, x = 1;

	while (thread_cpu_ns() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 31 + 7;
	sink = x;
}

static uint64_t deep(int n, unsigned int ms);
/* Called through a volatile pointer so the compiler cannot turn the recursion into a loop. */
static uint64_t (*volatile deep_fp)(int, unsigned int) = deep;

static uint64_t deep(int n, unsigned int ms)
{
	if (n == 0) {
		spin_ms(ms);
		return 0;
	}
	return deep_fp(n - 1, ms) + (uint64_t)n;
}

static void *thread_spin(void *arg)
{
	int *fd = arg;
	pid_t tid = (pid_t)syscall(SYS_gettid);

	if (write(*fd, &tid, sizeof(tid)) != sizeof(tid))
		_exit(3);
	spin_ms(300);
	return NULL;
}

/* Wait for a byte on `go`, then start a thread that spins and reports its tid on `out`. */
static void child_new_thread(int go, int out)
{
	pthread_t t;
	char c;

	if (read(go, &c, 1) != 1)
		_exit(2);
	if (pthread_create(&t, NULL, thread_spin, &out) != 0)
		_exit(2);
	pthread_join(t, NULL);
	_exit(0);
}

/* Once a byte arrives on go (the sampler is open): ms of CPU in getppid() calls. */
static void child_syscalls(int go, unsigned int ms)
{
	uint64_t end;
	char ch;

	if (read(go, &ch, 1) != 1)
		_exit(2);
	end = thread_cpu_ns() + (uint64_t)ms * 1000000u;

	while (thread_cpu_ns() < end)
		(void)syscall(SYS_getppid);
	_exit(0);
}

static void *thread_spin_ms(void *arg)
{
	spin_ms((unsigned int)(uintptr_t)arg);
	return NULL;
}

/* Two spinning threads: the busy 2-core case. */
static void child_two_spinners(unsigned int ms)
{
	pthread_t t;

	if (pthread_create(&t, NULL, thread_spin_ms, (void *)(uintptr_t)ms) != 0)
		_exit(2);
	spin_ms(ms);
	pthread_join(t, NULL);
	_exit(0);
}

/* Descriptors open in this process now. */
static int fds_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n - 3; /* ".", ".." and the listing's own */
}

static pid_t fork_or_die(void)
{
	pid_t p = fork();

	assert_true(p >= 0);
	return p;
}

/* ---- a record collector ---- */

struct seen {
	pid_t want_pid;
	uint64_t samples, samples_other_pid, kernel_samples, max_user, max_depth;
	uint64_t t_min, t_max, out_of_order, polls;
	uint64_t last_time_in_poll;
	uint32_t tids[MAX_TIDS];
	uint64_t tid_samples[MAX_TIDS];
	size_t ntids;
	uint32_t forked[MAX_TIDS];
	size_t nforked;
	uint64_t comm, mmap2, exits;
};

static int on_record(void *ctx, const struct perfring_rec *r)
{
	struct seen *s = ctx;

	if (r->time < s->last_time_in_poll)
		s->out_of_order++;
	s->last_time_in_poll = r->time;
	switch (r->type) {
	case PERF_RECORD_SAMPLE: {
		size_t i;

		if (r->pid != (uint32_t)s->want_pid) {
			s->samples_other_pid++;
			return 0;
		}
		s->samples++;
		if (!s->t_min || r->time < s->t_min)
			s->t_min = r->time;
		if (r->time > s->t_max)
			s->t_max = r->time;
		if (r->u.sample.nr_kernel)
			s->kernel_samples++;
		if (r->u.sample.nr_user > s->max_user)
			s->max_user = r->u.sample.nr_user;
		if (r->u.sample.nr_user + r->u.sample.nr_kernel > s->max_depth)
			s->max_depth = r->u.sample.nr_user + r->u.sample.nr_kernel;
		for (i = 0; i < s->ntids && s->tids[i] != r->tid; i++)
			;
		if (i == s->ntids && s->ntids < MAX_TIDS)
			s->tids[s->ntids++] = r->tid;
		if (i < MAX_TIDS)
			s->tid_samples[i]++;
		break;
	}
	case PERF_RECORD_FORK:
		if (s->nforked < MAX_TIDS)
			s->forked[s->nforked++] = r->u.task.tid;
		break;
	case PERF_RECORD_COMM:
		s->comm++;
		break;
	case PERF_RECORD_MMAP2:
		assert_non_null(r->u.mmap2.filename);
		s->mmap2++;
		break;
	case PERF_RECORD_EXIT:
		s->exits++;
		break;
	}
	return 0;
}

static uint64_t samples_of(const struct seen *s, uint32_t tid)
{
	for (size_t i = 0; i < s->ntids; i++)
		if (s->tids[i] == tid)
			return s->tid_samples[i];
	return 0;
}

/* Poll until `child` exited, then drain once more. */
static void drain_until_exit(struct sampler *sp, pid_t child, struct seen *seen, int poll_ms)
{
	int status, rv;

	for (;;) {
		seen->last_time_in_poll = 0;
		rv = sampler_poll(sp, poll_ms, on_record, seen);
		assert_true(rv >= 0 || rv == -EINTR);
		seen->polls++;
		if (waitpid(child, &status, WNOHANG) == child)
			break;
	}
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	seen->last_time_in_poll = 0;
	usleep(5000); /* a drain leaves the last 2 ms of records for the next one (sampler.h) */
	assert_true(sampler_poll(sp, 0, on_record, seen) >= 0);
}

/* ---- tests ---- */

static void test_thread_started_after_open_is_sampled(void **state)
{
	enum sampler_scope scope = (enum sampler_scope)(uintptr_t)*state;
	struct sampler_opts o = { .freq_hz = 499, .scope = scope };
	int go[2], out[2];
	struct seen seen = { 0 };
	struct sampler *sp;
	pid_t child, tid = 0;

	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(out), 0);
	child = fork_or_die();
	if (child == 0)
		child_new_thread(go[0], out[1]);
	seen.want_pid = child;
	assert_int_equal(sampler_open(&o, &child, 1, &sp), 0);
	assert_int_equal(sampler_info(sp)->scope, scope);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read(out[0], &tid, sizeof(tid)), sizeof(tid));
	assert_int_not_equal(tid, child);
	drain_until_exit(sp, child, &seen, 50);

	/* 300 ms at 499 Hz: ~150 samples; a third is plenty to tell "sampled" from "not". */
	assert_true(samples_of(&seen, (uint32_t)tid) > 50);
	bool forked = false;

	for (size_t i = 0; i < seen.nforked; i++)
		forked |= seen.forked[i] == (uint32_t)tid;
	assert_true(forked);
	assert_true(seen.exits >= 1);
	if (scope == SAMPLER_SCOPE_CPUS) {
		struct sampler_stats st;

		sampler_stats(sp, &st);
		/* Foreign processes are filtered out, never delivered. */
		assert_int_equal(seen.samples_other_pid, 0);
	}
	sampler_close(sp);
	close(go[0]);
	close(go[1]);
	close(out[0]);
	close(out[1]);
}

static void test_event_choice_and_fallback_are_reported(void **state)
{
	struct sampler_opts o = { 0 };
	struct sampler *sp;
	pid_t self = getpid();
	int probe = sampler_probe_cycles();
	const struct sampler_info *in;

	(void)state;
	assert_int_equal(sampler_open(&o, &self, 1, &sp), 0);
	in = sampler_info(sp);
	assert_int_equal(in->cycles_err, probe);
	if (probe == 0) {
		assert_int_equal(in->event, SAMPLER_EVENT_CYCLES);
		assert_string_equal(in->event_name, "cycles");
	} else {
		assert_true(probe < 0);
		assert_int_equal(in->event, SAMPLER_EVENT_CPU_CLOCK);
		assert_string_equal(in->event_name, "cpu-clock");
	}
	assert_int_equal(in->freq_hz, SAMPLER_DEFAULT_FREQ);
	assert_true(in->ncpus >= 1);
	assert_true(in->nfds >= in->ncpus);
	sampler_close(sp);

	o.force_cpu_clock = true;
	assert_int_equal(sampler_open(&o, &self, 1, &sp), 0);
	assert_int_equal(sampler_info(sp)->cycles_err, -ECANCELED);
	assert_int_equal(sampler_info(sp)->event, SAMPLER_EVENT_CPU_CLOCK);
	sampler_close(sp);
}

static void test_max_stack_is_raised_or_the_limit_reported(void **state)
{
	struct sampler_opts o = { .max_stack = 300 };
	struct sampler *sp;
	pid_t self = getpid();
	unsigned int now = 0;
	const struct sampler_info *in;

	(void)state;
	assert_int_equal(sampler_open(&o, &self, 1, &sp), 0);
	in = sampler_info(sp);
	assert_int_equal(perfsysctl_read(PERFSYSCTL_MAX_STACK, &now), 0);
	if (in->raised_max_stack) {
		assert_int_equal(in->max_stack, 300);
		assert_true(now >= 300);
	} else if (in->sysctl_max_stack >= 300) {
		assert_int_equal(in->max_stack, 300);
	} else {
		assert_true(in->raise_err < 0);
		assert_int_equal(in->max_stack, in->sysctl_max_stack);
	}
	sampler_close(sp);
}

static void test_deep_stacks_keep_more_than_127_frames(void **state)
{
	struct sampler_opts o = { .freq_hz = 999, .max_stack = 256 };
	struct seen seen = { 0 };
	struct sampler *sp;
	int go[2];
	pid_t child;
	char c;

	(void)state;
	assert_int_equal(pipe(go), 0);
	child = fork_or_die();
	if (child == 0) {
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		deep(200, 300);
		_exit(0);
	}
	seen.want_pid = child;
	assert_int_equal(sampler_open(&o, &child, 1, &sp), 0);
	assert_int_equal(write(go[1], "g", 1), 1);
	drain_until_exit(sp, child, &seen, 50);
	if (sampler_info(sp)->max_stack < 256) {
		/* Not root: the kernel's limit applies and was reported; check we reach it. */
		assert_true(seen.max_depth >= sampler_info(sp)->max_stack - 1);
	} else {
		assert_true(seen.max_user > 200); /* 200 recursion frames + main + libc */
		assert_true(seen.max_depth <= 256);
	}
	sampler_close(sp);
	close(go[0]);
	close(go[1]);
}

static void test_samples_carry_monotonic_time_in_order(void **state)
{
	struct sampler_opts o = { .freq_hz = 999 };
	struct seen seen = { 0 };
	struct sampler *sp;
	uint64_t t0, t1;
	pid_t child;

	(void)state;
	t0 = fg_now_ns();
	child = fork_or_die();
	if (child == 0)
		child_two_spinners(300);
	seen.want_pid = child;
	assert_int_equal(sampler_open(&o, &child, 1, &sp), 0);
	drain_until_exit(sp, child, &seen, 20);
	t1 = fg_now_ns();
	assert_true(seen.samples > 100);
	assert_true(seen.t_min >= t0);
	assert_true(seen.t_max <= t1);
	assert_int_equal(seen.out_of_order, 0);
	sampler_close(sp);
}

static void test_no_kernel_leaves_kernel_frames_out(void **state)
{
	struct seen with = { 0 }, without = { 0 };
	struct sampler *sp;
	pid_t child;

	(void)state;
	for (int pass = 0; pass < 2; pass++) {
		struct sampler_opts o = { .freq_hz = 999, .exclude_kernel = pass == 1 };
		struct seen *s = pass ? &without : &with;
		int go[2];

		/* The child starts once sampled: on a busy machine it could otherwise spend part
		 * of its time before the sampler opens, and the two passes would differ. */
		assert_int_equal(pipe(go), 0);
		child = fork_or_die();
		if (child == 0)
			child_syscalls(go[0], 300);
		s->want_pid = child;
		assert_int_equal(sampler_open(&o, &child, 1, &sp), 0);
		assert_int_equal(write(go[1], "g", 1), 1);
		close(go[0]);
		close(go[1]);
		drain_until_exit(sp, child, s, 50);
		sampler_close(sp);
	}
	assert_true(with.samples > 50 && without.samples > 50);
	assert_true(with.kernel_samples > 0);
	assert_int_equal(without.kernel_samples, 0);
	/* The time in getppid() is still sampled: similar counts with and without. */
	assert_true(without.samples * 10 > with.samples * 7);
}

static void test_several_processes_are_sampled(void **state)
{
	/* Per thread: each process's events are its own, and leave with it. */
	struct sampler_opts o = { .freq_hz = 499, .scope = SAMPLER_SCOPE_THREADS };
	struct seen a = { 0 };
	struct sampler *sp;
	pid_t kids[2];
	int status;

	(void)state;
	for (int i = 0; i < 2; i++) {
		kids[i] = fork_or_die();
		if (kids[i] == 0) {
			spin_ms(300);
			_exit(0);
		}
	}
	a.want_pid = kids[0];
	assert_int_equal(sampler_open(&o, kids, 1, &sp), 0);
	assert_int_equal(sampler_add_pid(sp, kids[1]), 0);
	assert_int_equal(sampler_add_pid(sp, kids[1]), -EEXIST);
	for (int done = 0; done < 2;) {
		assert_true(sampler_poll(sp, 50, on_record, &a) >= 0);
		if (waitpid(-1, &status, WNOHANG) > 0)
			done++;
	}
	sampler_poll(sp, 0, on_record, &a);
	/* Both exited: their events are closed when they are removed, the targets forgotten. */
	{
		size_t nfds = sampler_info(sp)->nfds;
		int open0 = fds_open();

		assert_true(nfds > 0);
		assert_int_equal(sampler_remove_pid(sp, kids[1]), 0);
		assert_int_equal(sampler_remove_pid(sp, kids[1]), -ENOENT);
		assert_int_equal(sampler_remove_pid(sp, kids[0]), 0);
		assert_int_equal(sampler_info(sp)->nfds, 0);
		assert_int_equal(fds_open(), open0 - (int)nfds);
		assert_int_equal(sampler_add_pid(sp, kids[1]), -ESRCH); /* not -EEXIST */
	}
	sampler_close(sp);
	/* `a` counted kids[0]'s samples and the rest as other-pid: kids[1]'s. */
	assert_true(a.samples > 50);
	assert_true(a.samples_other_pid > 50);
}

static void test_gone_process_is_refused(void **state)
{
	struct sampler_opts o = { 0 };
	struct sampler *sp = NULL;
	pid_t child = fork_or_die();

	(void)state;
	if (child == 0)
		_exit(0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	assert_int_equal(sampler_open(&o, &child, 1, &sp), -ESRCH);
	assert_null(sp);
}

/* Blocks until its pipe says go, then exits (the rest of the process runs on). */
static void *thread_wait_then_exit(void *arg)
{
	int *p = arg;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	char c;

	if (write(p[1], &tid, sizeof(tid)) != sizeof(tid) || read(p[2], &c, 1) != 1)
		_exit(2);
	return NULL;
}

/* The test's side of the race: the thread `tid` exits right after it was listed. */
struct race {
	pid_t pid, tid;
	int go; /* write end: the thread exits when a byte arrives */
	int hits;
};

static void exit_when_listed(void *arg, pid_t pid, pid_t tid)
{
	struct race *r = arg;
	char path[64];

	if (pid != r->pid || tid != r->tid || r->hits++)
		return;
	if (write(r->go, "x", 1) != 1)
		return;
	/* A thread other than the leader is released as it exits: its task entry goes. */
	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)tid);
	for (int i = 0; i < 2000 && access(path, F_OK) == 0; i++)
		usleep(1000);
}

/*
 * A thread that exits between the listing of /proc/PID/task and its perf_event_open (ESRCH)
 * is skipped: the newest tid, listed last, is the one most often gone (a JVM's HTTP
 * keep-alive timer). It once made a whole record fail with "the target process exited" on a
 * live JVM. The listing seam makes that thread exit exactly there, every run.
 */
static void test_thread_exiting_while_opened_is_skipped(void **state)
{
	struct race r = { 0 };
	struct sampler_opts o = { .scope = SAMPLER_SCOPE_THREADS,
				  .listed = exit_when_listed,
				  .listed_arg = &r };
	struct sampler *sp = NULL;
	int tidp[2], gop[2], status;
	char path[64];

	(void)state;
	assert_int_equal(pipe(tidp), 0);
	assert_int_equal(pipe(gop), 0);
	r.pid = fork_or_die();
	if (r.pid == 0) {
		int p[3] = { tidp[0], tidp[1], gop[0] };
		pthread_t t;

		/* gone with the test, even when an assertion ends it early */
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (pthread_create(&t, NULL, thread_wait_then_exit, p) != 0)
			_exit(2);
		pthread_join(t, NULL);
		for (;;)
			pause();
	}
	close(gop[0]);
	close(tidp[1]);
	assert_int_equal(read(tidp[0], &r.tid, sizeof(r.tid)), sizeof(r.tid));
	r.go = gop[1];
	assert_int_equal(sampler_open(&o, &r.pid, 1, &sp), 0);
	/* The path was taken: the thread was listed, then gone before its events opened. */
	assert_int_equal(r.hits, 1);
	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)r.pid, (int)r.tid);
	assert_int_not_equal(access(path, F_OK), 0);
	assert_true(sampler_info(sp)->ncpus > 0);
	sampler_close(sp);
	kill(r.pid, SIGKILL);
	assert_int_equal(waitpid(r.pid, &status, 0), r.pid);
	close(tidp[0]);
	close(gop[1]);
}

/* What the stack-copy samples of one process show. */
struct copies {
	pid_t want_pid;
	uint64_t samples, with_regs, with_stack, ip_matches, fp_checked, fp_agrees, too_long,
		no_user;
};

static int on_copy(void *ctx, const struct perfring_rec *r)
{
	struct copies *c = ctx;
	uint64_t ip, sp, bp, ret;

	if (r->type != PERF_RECORD_SAMPLE || r->pid != (uint32_t)c->want_pid)
		return 0;
	c->samples++;
	if (!perfring_user_reg(r, SAMPLER_REG_IP, &ip) ||
	    !perfring_user_reg(r, SAMPLER_REG_SP, &sp) ||
	    !perfring_user_reg(r, SAMPLER_REG_BP, &bp)) {
		/* Per CPU, an exiting task is sampled after its user memory went: kernel only. */
		c->no_user += r->u.sample.nr_user == 0;
		return 0;
	}
	c->with_regs++;
	if (r->u.sample.nr_user && r->u.sample.user[0] == ip)
		c->ip_matches++;
	if (!r->u.sample.stack)
		return 0;
	c->with_stack++;
	if (r->u.sample.stack_len > 8192 || r->u.sample.stack_dyn > r->u.sample.stack_len)
		c->too_long++;
	/* The copy is the stack the kernel walked: the return address at bp + 8 is its second
	 * user frame (frame pointers everywhere in this test). */
	if (r->u.sample.nr_user >= 2 && bp >= sp && bp + 16 <= sp + r->u.sample.stack_dyn) {
		memcpy(&ret, r->u.sample.stack + (bp - sp) + 8, 8);
		c->fp_checked++;
		c->fp_agrees += ret == r->u.sample.user[1];
	}
	return 0;
}

static void test_stack_copies_come_with_registers_and_match_the_chain(void **state)
{
	struct sampler_opts o = { .freq_hz = 999, .stack_copy = 8192 };
	struct copies c = { 0 };
	struct sampler *sp;
	int go[2], status;
	pid_t child;
	char ch;

	(void)state;
	assert_int_equal(pipe(go), 0);
	child = fork_or_die();
	if (child == 0) {
		if (read(go[0], &ch, 1) != 1)
			_exit(2);
		deep(40, 300);
		_exit(0);
	}
	c.want_pid = child;
	assert_int_equal(sampler_open(&o, &child, 1, &sp), 0);
	assert_int_equal(sampler_info(sp)->stack_copy, 8192);
	assert_true(sampler_info(sp)->ring_bytes >= 8192u * 64);
	assert_int_equal(write(go[1], "g", 1), 1);
	while (waitpid(child, &status, WNOHANG) == 0)
		assert_true(sampler_poll(sp, 50, on_copy, &c) >= 0);
	while (sampler_poll(sp, 0, on_copy, &c) > 0)
		;
	assert_true(c.samples > 50);
	assert_int_equal(c.with_regs + c.no_user, c.samples);
	assert_true(c.no_user * 50 <= c.samples);
	assert_true(c.with_stack * 10 >= c.samples * 9);
	assert_true(c.ip_matches * 10 >= c.samples * 9);
	assert_int_equal(c.too_long, 0);
	assert_true(c.fp_checked > 20);
	assert_true(c.fp_agrees * 10 >= c.fp_checked * 9);
	sampler_close(sp);
	close(go[0]);
	close(go[1]);
}

static void test_bad_options_are_refused(void **state)
{
	struct sampler_opts bad[] = {
		{ .freq_hz = SAMPLER_MAX_FREQ + 1 },
		{ .ring_kib = 12 },
		{ .ring_kib = 2 },
		{ .max_stack = 70000 },
		{ .stack_copy = 12 },
		{ .stack_copy = 65536 },
	};
	struct sampler *sp = NULL;
	pid_t self = getpid();

	(void)state;
	for (size_t i = 0; i < FG_ARRAY_SIZE(bad); i++)
		assert_int_equal(sampler_open(&bad[i], &self, 1, &sp), -EINVAL);
	assert_null(sp);
}

static void test_full_ring_counts_lost_records(void **state)
{
	struct sampler_opts o = { .freq_hz = SAMPLER_MAX_FREQ, .ring_kib = 4 };
	struct seen seen = { 0 };
	struct sampler_stats st;
	struct sampler *sp;
	pid_t child;

	(void)state;
	child = fork_or_die();
	if (child == 0)
		child_two_spinners(300);
	seen.want_pid = child;
	assert_int_equal(sampler_open(&o, &child, 1, &sp), 0);
	usleep(200 * 1000); /* do not drain: the 4 KiB rings overflow */
	drain_until_exit(sp, child, &seen, 20);
	sampler_stats(sp, &st);
	assert_true(st.lost_records > 0);
	assert_true(st.lost >= st.lost_records);
	assert_true(st.samples > 0);
	sampler_close(sp);
}

static void test_999hz_two_busy_threads_lose_nothing(void **state)
{
	struct sampler_opts o = { .freq_hz = 999 };
	struct seen seen = { 0 };
	struct sampler_stats st;
	struct sampler *sp;
	pid_t child;

	int go[2];
	char ch;

	(void)state;
	assert_int_equal(pipe(go), 0);
	child = fork_or_die();
	if (child == 0) {
		/* Only once sampled: on a loaded machine opening the events can take a good part
		 * of the child's 0.6 s of CPU. */
		if (read(go[0], &ch, 1) != 1)
			_exit(2);
		child_two_spinners(600);
	}
	seen.want_pid = child;
	assert_int_equal(sampler_open(&o, &child, 1, &sp), 0);
	assert_int_equal(write(go[1], "g", 1), 1);
	close(go[0]);
	close(go[1]);
	drain_until_exit(sp, child, &seen, 100);
	sampler_stats(sp, &st);
	assert_int_equal(st.lost, 0);
	assert_int_equal(st.lost_samples, 0);
	assert_int_equal(st.bad_records, 0);
	assert_int_equal(st.samples_dup, 0);
	/* Two threads x 0.6 s of CPU x 999 Hz: ~1200, whatever the load. */
	assert_true(st.samples > 900);
	assert_int_equal(st.samples, seen.samples);
	sampler_close(sp);
}

/* A drain leaves no wake-up pending for the records it took: the fd is quiet until a new one. */
static void test_a_drain_leaves_the_fd_quiet(void **state)
{
	struct sampler_opts o = { .freq_hz = 999 };
	struct seen seen = { 0 };
	struct sampler *sp;
	struct pollfd pfd;
	int status, came, stopped, drained = 0, after = -1;
	pid_t child;

	(void)state;
	child = fork_or_die();
	if (child == 0)
		child_two_spinners(5000);
	seen.want_pid = child;
	assert_int_equal(sampler_open(&o, &child, 1, &sp), 0);
	pfd = (struct pollfd){ .fd = sampler_fd(sp), .events = POLLIN };
	came = poll(&pfd, 1, 5000); /* a quarter of the ring came */
	usleep(20 * 1000);
	/* Stopped: no record comes any more, but the rings hold some. */
	kill(child, SIGSTOP);
	stopped = waitpid(child, &status, WUNTRACED) == child && WIFSTOPPED(status);
	/* The kernel posts a record's wake-up from an irq_work, which a loaded VM can run after the
	 * stop is reported: let the last ones land before the drain that is to take them. */
	usleep(20 * 1000);
	if (stopped) {
		drained = sampler_poll(sp, 0, on_record, &seen);
		after = poll(&pfd, 1, 0);
		/* Readable again: a wake-up posted late (the kernel's irq_work on a loaded VM, for
		 * the records taken or for ones that landed after the drain) is taken by the next
		 * drain, which leaves the fd quiet; one the drains never clear stays. */
		for (int k = 0; k < 10 && after == 1; k++) {
			(void)sampler_poll(sp, 0, on_record, &seen);
			usleep(20 * 1000);
			after = poll(&pfd, 1, 0);
		}
	}
	kill(child, SIGKILL); /* before any assertion: a stopped child would outlive the test */
	waitpid(child, &status, 0);
	sampler_close(sp);
	assert_int_equal(came, 1);
	assert_true(stopped);
	assert_true(drained > 0);
	assert_int_equal(after, 0);
}

static int count_switch_samples(void *ctx, const struct perfring_rec *r)
{
	if (r->type == PERF_RECORD_SAMPLE && r->u.sample.kind == SAMPLER_KIND_SWITCH)
		(*(int *)ctx)++;
	return 0;
}

/*
 * Rings wake their reader only a quarter full. Switch rings: a thread that sleeps 50 times
 * leaves ~50 stack copies (200 KiB of a 4 MiB ring) that do not make the fd readable, and a
 * drain still delivers them all. CPU rings: 150 ms of CPU at 999 Hz leave ~150 samples without
 * a copy (a few hundred bytes each, under a quarter of 256 KiB), the same. The CPU rings are
 * the child's own (scope THREADS): in CPU scope they also carry every process's side band
 * (mmap, comm, fork, exit), which a busy machine's other processes can fill a quarter of a ring
 * with, waking the reader as they should.
 */
static void test_rings_wake_the_reader_a_quarter_full(void **state)
{
	struct sampler_opts o = { .mode = SAMPLER_MODE_OFFCPU, .stack_copy = 4096 };
	struct sampler_opts c = { .freq_hz = 999, .scope = SAMPLER_SCOPE_THREADS };
	struct seen seen = { 0 };
	struct sampler *sp;
	struct pollfd pfd;
	int status, readable, switches = 0, rv, go[2];
	char ch = 0;
	pid_t child;

	(void)state;
	assert_int_equal(pipe(go), 0);
	child = fork_or_die();
	if (child == 0) {
		if (read(go[0], &ch, 1) != 1) /* only once followed */
			_exit(2);
		for (int i = 0; i < 50; i++)
			usleep(1000);
		_exit(0);
	}
	rv = sampler_open(&o, &child, 1, &sp);
	if (rv == -ENOENT) { /* no tracefs here: nothing to check */
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
		skip();
	}
	assert_int_equal(rv, 0);
	assert_int_equal(write(go[1], "g", 1), 1);
	close(go[0]);
	close(go[1]);
	assert_int_equal(sampler_info(sp)->ring_wakeup_bytes, sampler_info(sp)->ring_bytes / 4);
	assert_true(sampler_info(sp)->ring_bytes / 4 > 60 * 4096);
	pfd = (struct pollfd){ .fd = sampler_fd(sp), .events = POLLIN };
	waitpid(child, &status, 0);
	usleep(50 * 1000); /* the last records' irq_work, as below */
	readable = poll(&pfd, 1, 0);
	while (sampler_poll(sp, 0, count_switch_samples, &switches) > 0)
		;
	sampler_close(sp);
	assert_int_equal(readable, 0);
	assert_true(switches >= 40);

	assert_int_equal(pipe(go), 0);
	child = fork_or_die();
	if (child == 0) {
		if (read(go[0], &ch, 1) != 1) /* only once sampled */
			_exit(2);
		spin_ms(150);
		_exit(0);
	}
	seen.want_pid = child;
	assert_int_equal(sampler_open(&c, &child, 1, &sp), 0);
	assert_int_equal(write(go[1], "g", 1), 1);
	close(go[0]);
	close(go[1]);
	assert_int_equal(sampler_info(sp)->ring_wakeup_bytes, sampler_info(sp)->ring_bytes / 4);
	pfd = (struct pollfd){ .fd = sampler_fd(sp), .events = POLLIN };
	waitpid(child, &status, 0);
	/* The kernel posts a record's wake-up from an irq_work, which a loaded machine can run
	 * well after the child's exit is reported: let the last ones land first. */
	usleep(50 * 1000);
	readable = poll(&pfd, 1, 0);
	while (sampler_poll(sp, 0, on_record, &seen) > 0)
		;
	sampler_close(sp);
	assert_int_equal(readable, 0);
	assert_true(seen.samples >= 100);
}

/*
 * Rings grown for large stack copies beyond the locked memory the kernel grants (a collector
 * container: no CAP_IPC_LOCK) are halved until granted, and the summary can say so. In a
 * child turned into a fresh user with no capabilities and RLIMIT_MEMLOCK 0: the kernel grants
 * kernel.perf_event_mlock_kb per CPU, less than 128 copies of 64 KiB.
 */
/*
 * In a forked child: become uid/gid 4243 (no capabilities) and open a sampler on itself.
 * Exits 10 if that fails, 77 when the kernel refuses unprivileged sampling altogether.
 */
static struct sampler *open_unprivileged(const struct sampler_opts *o)
{
	struct sampler *sp;
	pid_t self = getpid();
	int rv;

	if (setresgid(4243, 4243, 4243) != 0 || setresuid(4243, 4243, 4243) != 0)
		_exit(10);
	rv = sampler_open(o, &self, 1, &sp);
	if (rv == -EACCES) /* perf_event_paranoid > 2: no unprivileged sampling here */
		_exit(77);
	if (rv != 0)
		_exit(11);
	return sp;
}

/* The child's verdict: exit 0 passes, 77 skips, anything else fails. */
static void assert_child_passed(pid_t child)
{
	int status;

	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		skip();
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * CPU samples are taken per CPU when the kernel allows CPU-wide events (root here): nothing
 * for the target at its context switches, the other processes' samples dropped by the kernel
 * (state: 0) or, without the BPF filter (state: 1), here; the idle task never sampled.
 * Unprivileged, the same options fall back to per-thread events and say why.
 */
static void test_auto_scope_is_per_cpu_when_allowed(void **state)
{
	bool user_filter = *state != NULL;
	struct sampler_opts o = { .freq_hz = 499, .no_kernel_filter = user_filter };
	const struct sampler_info *si;
	struct sampler_stats st;
	struct seen a = { 0 };
	struct sampler *sp;
	pid_t kid, other;
	int status;

	(void)state;
	other = fork_or_die();
	if (other == 0) {
		spin_ms(300);
		_exit(0);
	}
	kid = fork_or_die();
	if (kid == 0) {
		spin_ms(300);
		usleep(200 * 1000); /* a CPU idle for a while */
		_exit(0);
	}
	a.want_pid = kid;
	assert_int_equal(sampler_open(&o, &kid, 1, &sp), 0);
	si = sampler_info(sp);
	assert_int_equal(si->scope, SAMPLER_SCOPE_CPUS);
	assert_int_equal(si->cpus_err, 0);
	assert_int_equal(si->nfds, si->ncpus);
	assert_int_equal(si->filter_err, user_filter ? -ECANCELED : 0);
	drain_until_exit(sp, kid, &a, 50);
	assert_int_equal(waitpid(other, &status, 0), other);
	sampler_stats(sp, &st);
	sampler_close(sp);
	assert_true(a.samples > 50);
	assert_int_equal(a.samples_other_pid, 0);
	if (user_filter)
		assert_true(st.samples_foreign > 0); /* the other spinner's, at least */
	else
		assert_int_equal(st.samples_foreign, 0);
	assert_int_equal(st.samples_idle, 0);

	kid = fork_or_die();
	if (kid == 0) {
		struct sampler_opts u = { .freq_hz = 499,
					  .exclude_kernel = true,
					  .no_raise_max_stack = true };

		sp = open_unprivileged(&u);
		si = sampler_info(sp);
		if (si->scope != SAMPLER_SCOPE_THREADS ||
		    (si->cpus_err != -EACCES && si->cpus_err != -EPERM))
			_exit(12);
		sampler_close(sp);
		_exit(0);
	}
	assert_child_passed(kid);
}

static void test_rings_shrink_to_the_locked_memory_granted(void **state)
{
	pid_t child;

	(void)state;
	child = fork_or_die();
	if (child == 0) {
		struct sampler_opts o = { .stack_copy = 65528,
					  .exclude_kernel = true,
					  .force_cpu_clock = true,
					  .no_raise_max_stack = true };
		struct rlimit rl = { 0, 0 };
		const struct sampler_info *si;
		struct sampler *sp;

		if (setrlimit(RLIMIT_MEMLOCK, &rl) != 0)
			_exit(10);
		sp = open_unprivileged(&o);
		si = sampler_info(sp);
		if (si->ring_bytes_wanted < 65528u * 128 ||
		    si->ring_bytes >= si->ring_bytes_wanted ||
		    si->ring_bytes < SAMPLER_DEFAULT_RING_KIB * 1024u)
			_exit(12);
		sampler_close(sp);
		_exit(0);
	}
	assert_child_passed(child);
}

int main(void)
{
	struct sampler_opts o = { 0 };
	struct sampler *sp;
	pid_t self = getpid();
	int rv = sampler_open(&o, &self, 1, &sp);

	if (rv == -EACCES || rv == -EPERM || rv == -ENOSYS || rv == -ENOENT) {
		fprintf(stderr, "test_sampler: perf_event_open refused (%s): skipped\n",
			strerror(-rv));
		return 77;
	}
	if (rv == 0)
		sampler_close(sp);
	signal(SIGPIPE, SIG_IGN);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test_prestate(test_thread_started_after_open_is_sampled,
					  (void *)(uintptr_t)SAMPLER_SCOPE_THREADS),
		cmocka_unit_test_prestate(test_thread_started_after_open_is_sampled,
					  (void *)(uintptr_t)SAMPLER_SCOPE_CPUS),
		cmocka_unit_test(test_event_choice_and_fallback_are_reported),
		cmocka_unit_test(test_max_stack_is_raised_or_the_limit_reported),
		cmocka_unit_test(test_deep_stacks_keep_more_than_127_frames),
		cmocka_unit_test(test_samples_carry_monotonic_time_in_order),
		cmocka_unit_test(test_no_kernel_leaves_kernel_frames_out),
		cmocka_unit_test(test_several_processes_are_sampled),
		cmocka_unit_test(test_gone_process_is_refused),
		cmocka_unit_test(test_thread_exiting_while_opened_is_skipped),
		cmocka_unit_test(test_stack_copies_come_with_registers_and_match_the_chain),
		cmocka_unit_test(test_bad_options_are_refused),
		cmocka_unit_test(test_full_ring_counts_lost_records),
		cmocka_unit_test(test_999hz_two_busy_threads_lose_nothing),
		cmocka_unit_test(test_a_drain_leaves_the_fd_quiet),
		cmocka_unit_test(test_rings_wake_the_reader_a_quarter_full),
		cmocka_unit_test_prestate(test_auto_scope_is_per_cpu_when_allowed, NULL),
		cmocka_unit_test_prestate(test_auto_scope_is_per_cpu_when_allowed, (void *)1),
		cmocka_unit_test(test_rings_shrink_to_the_locked_memory_granted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
