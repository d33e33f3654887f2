// SPDX-License-Identifier: MIT
/*
 * test_switch_sampler.c - off-CPU sampling against the real kernel: the BPF program's stacks and
 * wait ends as the sampler delivers them (timed, in the right state, with registers, stack and
 * a kernel chain from __schedule), its rate kept with totals unbiased against an exact
 * recording of the same switches, threads left out by name in the kernel, exited threads'
 * slots in the totals serving later threads, a thread first seen at its exit keeping its time,
 * wall's preemptions by interrupts sampled evenly over the rate's window, and the fallback to
 * per-thread tracepoint events without CAP_BPF.
 *
 * Exits 77 (skipped) only when the kernel refuses the program for want of BTF or a recent
 * enough kernel (the sampler's fallback is then what runs, tested in test_sampler).
 */
#include <errno.h>
#include <math.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "perfsysctl.h"
#include "sampler.h"
#include "switchbpf.h"
#include "threadtime.h"
#include "tracefs.h"
#include "util.h"

#define MAX_TIDS 16
#define MAX_PEND 64
#define MAX_IRQ 4096

/* ---- workloads, run in forked children ---------------------------------------------------- */

struct sleeper {
	const char *name;
	unsigned int us;      /* each sleep (0: none) */
	unsigned int n;	      /* sleeps; 0: until killed */
	unsigned int spin_us; /* computed before each sleep (wall-clock time) */
	bool cpu0;	      /* runs on CPU 0 only */
	int futex;	      /* sleeps in futex: FX_TIMED, FX_UNTIMED (woken by an FX_WAKER) */
	int pipe;	      /* 1, 2: writes `bytes` to that pipe after each spin (0: reads it) */
	unsigned int bytes;
	int out; /* (idx, tid) is written here */
	int idx;
};

enum { FX_NONE, FX_TIMED, FX_UNTIMED, FX_WAKER };
static int fx_word;	  /* what FX_UNTIMED sleepers wait on */
static int sl_pipe[3][2]; /* the pipes of sleepers with .pipe (made in the child) */

/* One sleep of s: us in usleep, or in futex with a timeout, or in futex until an FX_WAKER's
 * next wake (which sleeps us in usleep first). */
static void sleep_once(const struct sleeper *s)
{
	struct timespec ts = { (time_t)(s->us / 1000000u), (long)(s->us % 1000000u) * 1000 };

	switch (s->futex) {
	case FX_TIMED:
		(void)syscall(SYS_futex, &fx_word, 128 /* FUTEX_WAIT_PRIVATE */, 0, &ts, NULL, 0);
		break;
	case FX_UNTIMED:
		(void)syscall(SYS_futex, &fx_word, 128, 0, NULL, NULL, 0);
		break;
	case FX_WAKER:
		usleep(s->us);
		(void)syscall(SYS_futex, &fx_word, 129 /* FUTEX_WAKE_PRIVATE */, 1 << 30, NULL,
			      NULL, 0);
		break;
	default:
		usleep(s->us);
	}
}

/* wall-clock ns spun */
static void spin_ns(uint64_t ns)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u + (uint64_t)b.tv_nsec -
		       (uint64_t)a.tv_nsec <
	       ns);
}

static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;
	int msg[2] = { s->idx, (int)syscall(SYS_gettid) };

	prctl(PR_SET_NAME, s->name);
	if (s->cpu0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(0, &set);
		if (sched_setaffinity(0, sizeof(set), &set) != 0)
			_exit(5);
	}
	if (write(s->out, msg, sizeof(msg)) != sizeof(msg))
		_exit(3);
	for (unsigned int i = 0; s->n == 0 || i < s->n; i++) {
		char buf[256] = { 0 };

		if (s->pipe && !s->bytes) {
			if (read(sl_pipe[s->pipe][0], buf, sizeof(buf)) <= 0)
				_exit(4);
			continue;
		}
		if (s->spin_us)
			spin_ns((uint64_t)s->spin_us * 1000u);
		if (s->pipe && write(sl_pipe[s->pipe][1], buf, s->bytes) != (ssize_t)s->bytes)
			_exit(4);
		if (s->us)
			sleep_once(s);
	}
	return NULL;
}

static int pp_ab[2], pp_ba[2];

/* Two threads passing a byte: a switch at every hop, tens of thousands a second (a few us of
 * work per hop keeps an exact recording of them within what a sanitized reader drains). */
static void *pinger(void *arg)
{
	char c = 0;

	(void)arg;
	prctl(PR_SET_NAME, "pinger");
	for (;;)
		if (write(pp_ab[1], &c, 1) != 1 || read(pp_ba[0], &c, 1) != 1)
			_exit(4);
	return NULL;
}

static void *ponger(void *arg)
{
	char c = 0;

	(void)arg;
	prctl(PR_SET_NAME, "ponger");
	for (;;) {
		if (read(pp_ab[0], &c, 1) != 1)
			_exit(4);
		spin_ns(10000);
		if (write(pp_ba[1], &c, 1) != 1)
			_exit(4);
	}
	return NULL;
}

/*
 * Fork a child running the sleepers (and the ping-pong pair if pingpong), started once the
 * parent writes a byte on *go_fd; each sleeper writes its tid on *tid_fd's pipe.
 */
static pid_t start_child(struct sleeper *sl, size_t n, bool pingpong, int *go_fd, int *tid_fd)
{
	int tid_pipe[2], go[2];
	pid_t child;
	char c;

	assert_int_equal(pipe(tid_pipe), 0);
	assert_int_equal(pipe(go), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pthread_t t;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		for (size_t i = 0; i < n; i++)
			if (sl[i].pipe > 0 && sl[i].pipe < 3 && !sl_pipe[sl[i].pipe][1] &&
			    pipe(sl_pipe[sl[i].pipe]) != 0)
				_exit(2);
		for (size_t i = 0; i < n; i++) {
			sl[i].out = tid_pipe[1];
			sl[i].idx = (int)i;
			if (pthread_create(&t, NULL, sleeper_main, &sl[i]) != 0)
				_exit(2);
		}
		if (pingpong && (pipe(pp_ab) != 0 || pipe(pp_ba) != 0 ||
				 pthread_create(&t, NULL, pinger, NULL) != 0 ||
				 pthread_create(&t, NULL, ponger, NULL) != 0))
			_exit(2);
		pause();
		_exit(0);
	}
	close(go[0]);
	close(tid_pipe[1]);
	*go_fd = go[1];
	*tid_fd = tid_pipe[0];
	return child;
}

/* Let the child's threads start (after the sampler is open) and read their tids (they come in
 * the order the threads ran). */
static void go_and_read_tids(int go_fd, int tid_fd, pid_t *tids, size_t n)
{
	int msg[2];

	assert_int_equal(write(go_fd, "g", 1), 1);
	close(go_fd);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(read(tid_fd, msg, sizeof(msg)), sizeof(msg));
		assert_true(msg[0] >= 0 && (size_t)msg[0] < n);
		tids[msg[0]] = msg[1];
	}
	close(tid_fd);
}

static void stop_child(pid_t child)
{
	int status;

	kill(child, SIGKILL);
	waitpid(child, &status, 0);
}

static struct sampler *open_or_skip(const struct sampler_opts *o, pid_t child)
{
	struct sampler *sp = NULL;
	int rv = sampler_open(o, &child, 1, &sp);

	if (rv == 0 && sampler_info(sp)->switch_bpf_err != 0 &&
	    (sampler_info(sp)->switch_bpf_err == -ENOENT ||
	     sampler_info(sp)->switch_bpf_err == -EOPNOTSUPP)) {
		print_message("no BPF off-CPU here: %s\n", sampler_info(sp)->switch_bpf_why);
		sampler_close(sp);
		stop_child(child);
		skip();
	}
	assert_int_equal(rv, 0);
	assert_int_equal(sampler_info(sp)->switch_bpf_err, 0);
	assert_int_equal(sampler_info(sp)->scope, SAMPLER_SCOPE_CPUS);
	return sp;
}

/* ---- what the records say, per thread ------------------------------------------------------ */

struct per_thread {
	pid_t tid;
	unsigned int stacks, waits, in_sleep, with_regs, with_stack, sleep_with_stack, in_schedule;
	unsigned int sleep_stacks; /* stacks in the sleeping state from s->from on */
	unsigned int irq_stacks;   /* stacks of preemptions by interrupts (runnable, no call) */
	unsigned int irq_kernel;   /* ... with a kernel chain */
	double total_ns;	   /* the waits weighed by their scale */
	double sleep_ns;	   /* ... those in the sleeping state */
	double var_ns2;		   /* its variance, estimated from the waits taken */
	uint64_t min_ns, max_ns;
	/* the taken switch-out waiting for its switch-in, and whether the thread was sleeping */
	bool pending, sleeping;
	unsigned int sleeps; /* waits in the sleeping state, min_ns and max_ns are theirs */
	uint64_t t_out;
	double scale;
};

struct seen {
	pid_t pid;
	struct per_thread t[MAX_TIDS];
	size_t n;
	uint64_t lo, hi;   /* __schedule, when kallsyms shows it */
	uint64_t from, to; /* the waits counted: switch-outs in [from, to) */
	unsigned int unmatched, other_pid;
	uint64_t irq_t[MAX_IRQ]; /* the times of the stacks at preemptions by interrupts */
	size_t nirq;
};

static struct per_thread *thread_of(struct seen *s, pid_t tid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->t[i].tid == tid)
			return &s->t[i];
	if (s->n == MAX_TIDS)
		return NULL;
	s->t[s->n].tid = tid;
	return &s->t[s->n++];
}

static int on_record(void *ctx, const struct perfring_rec *r)
{
	struct seen *s = ctx;
	struct per_thread *t;

	if (r->type == PERF_RECORD_SAMPLE && r->u.sample.kind == SAMPLER_KIND_SWITCH) {
		if ((pid_t)r->pid != s->pid) {
			s->other_pid++;
			return 0;
		}
		if (!(t = thread_of(s, (pid_t)r->tid)))
			return 0;
		s->unmatched += t->pending; /* the last one's end never came */
		t->pending = r->time >= s->from && (s->to == 0 || r->time < s->to);
		t->t_out = r->time;
		t->scale = r->u.sample.scale;
		t->stacks += r->time >= s->from;
		t->sleeping = r->u.sample.state == TRACEFS_TASK_INTERRUPTIBLE;
		t->in_sleep += t->sleeping;
		t->irq_stacks += !(r->u.sample.state & 0xff) && r->u.sample.sysnr < 0;
		if (!(r->u.sample.state & 0xff) && r->u.sample.sysnr < 0 && s->nirq < MAX_IRQ)
			s->irq_t[s->nirq++] = r->time;
		t->irq_kernel += !(r->u.sample.state & 0xff) && r->u.sample.sysnr < 0 &&
				 r->u.sample.nr_kernel > 0;
		t->sleep_stacks += t->sleeping && r->time >= s->from;
		t->with_regs += r->u.sample.regs && r->u.sample.regs_abi == PERF_SAMPLE_REGS_ABI_64;
		t->with_stack += r->u.sample.stack_len > 0;
		t->sleep_with_stack += t->sleeping && r->u.sample.stack_len > 0;
		t->in_schedule += r->u.sample.nr_kernel > 0 && s->lo < s->hi &&
				  r->u.sample.kernel[0] >= s->lo && r->u.sample.kernel[0] < s->hi;
	} else if (r->type == PERF_RECORD_SWITCH && !(r->misc & PERF_RECORD_MISC_SWITCH_OUT)) {
		if (!(t = thread_of(s, (pid_t)r->tid)) || !t->pending)
			return 0;
		uint64_t d = r->time - t->t_out;

		t->pending = false;
		t->waits++;
		t->total_ns += (double)d * t->scale;
		t->var_ns2 += (double)d * t->scale * (double)d * t->scale * (1 - 1 / t->scale);
		if (!t->sleeping)
			return 0; /* preempted (a loaded machine), not one of its sleeps */
		t->sleep_ns += (double)d * t->scale;
		t->sleeps++;
		if (!t->min_ns || d < t->min_ns)
			t->min_ns = d;
		if (d > t->max_ns)
			t->max_ns = d;
	}
	return 0;
}

static void drain_for(struct sampler *sp, struct seen *s, unsigned int ms)
{
	uint64_t end = fg_now_ns() + (uint64_t)ms * 1000000u;

	while (fg_now_ns() < end)
		assert_true(sampler_poll(sp, 50, on_record, s) >= 0);
}

static void find_schedule(struct seen *s)
{
	char *text = NULL;
	size_t len = 0;

	if (fg_read_file("/proc/kallsyms", 4u << 20, 256u << 20, &text, &len) == 0)
		(void)switchbpf_sched_range(text, len, &s->lo, &s->hi);
	free(text);
}

/*
 * Record a child running the n sleepers sl with o for ms, into seen (its switch-outs counted
 * from skip_ns after the sleepers started); their tids into tids, the sampler's stats into st.
 */
/* The program's exact count of the last recording's threads (record_sleepers). */
static struct {
	uint32_t tid;
	struct switchtot t;
} counted[MAX_TIDS];
static size_t ncounted;

static int note_counted(void *ctx, uint32_t tid, const struct switchtot *t)
{
	(void)ctx;
	if (ncounted < MAX_TIDS) {
		counted[ncounted].tid = tid;
		counted[ncounted++].t = *t;
	}
	return 0;
}

/* tid's exact time off the CPU of kind k in the last recording (0: not counted). */
static uint64_t counted_ns(pid_t tid, unsigned int k)
{
	for (size_t i = 0; i < ncounted; i++)
		if (counted[i].tid == (uint32_t)tid)
			return counted[i].t.off[k];
	return 0;
}

static void record_sleepers(struct sleeper *sl, size_t n, const struct sampler_opts *o,
			    struct seen *seen, pid_t *tids, uint64_t skip_ns, unsigned int ms,
			    struct sampler_stats *st)
{
	struct sampler *sp;
	pid_t child;
	int go, tfd;

	child = start_child(sl, n, false, &go, &tfd);
	seen->pid = child;
	sp = open_or_skip(o, child);
	go_and_read_tids(go, tfd, tids, n);
	if (skip_ns)
		seen->from = fg_now_ns() + skip_ns;
	drain_for(sp, seen, ms);
	sampler_stats(sp, st);
	ncounted = 0;
	(void)sampler_totals(sp, note_counted, NULL);
	sampler_close(sp);
	stop_child(child);
}

/* ---- tests ----------------------------------------------------------------------------------- */

/*
 * Every switch-out (rate 0): a thread sleeping 20 ms 30 times gives a stack per sleep with its
 * registers, a copy of its stack and a kernel chain that starts in __schedule, in the sleeping
 * state, each ended by its switch-in about 20 ms later.
 */
static void test_every_wait_is_timed_with_its_stack(void **state)
{
	struct sleeper sl[] = { { .name = "sleep20", .us = 20000, .n = 30 } };
	struct sampler_opts o = { .mode = SAMPLER_MODE_OFFCPU, .stack_copy = 4096 };
	static struct seen seen;
	struct sampler_stats st;
	struct per_thread *t;
	pid_t tids[1];

	(void)state;
	memset(&seen, 0, sizeof(seen));
	find_schedule(&seen);
	record_sleepers(sl, 1, &o, &seen, tids, 0, 900, &st);

	t = thread_of(&seen, tids[0]);
	print_message(
		"sleep20: %u stacks, %u sleeps %.1f..%.1f ms, %u in sleep, %u with regs, %u "
		"with a stack (%u of the sleeps), %u from __schedule (%s); seen %llu taken %llu\n",
		t->stacks, t->sleeps, (double)t->min_ns / 1e6, (double)t->max_ns / 1e6, t->in_sleep,
		t->with_regs, t->with_stack, t->sleep_with_stack, t->in_schedule,
		seen.lo ? "kallsyms" : "no kallsyms", (unsigned long long)st.switch_seen,
		(unsigned long long)st.switch_taken);
	assert_true(t->sleeps >= 25);
	assert_true(t->min_ns >= 19000000 && t->max_ns < 1000000000); /* a loaded machine: slack */
	assert_int_equal(t->with_regs, t->stacks);
	/*
	 * Every sleep's stack has its copy; a switch-out that is no sleep (the thread's exit, its
	 * memory already going) may have none.
	 */
	assert_int_equal(t->sleep_with_stack, t->in_sleep);
	assert_true(t->with_stack + 1 >= t->stacks);
	if (seen.lo)
		assert_int_equal(t->in_schedule, t->stacks);
	assert_int_equal(seen.other_pid, 0);
	assert_int_equal(st.switch_skipped, 0);
	assert_int_equal(st.switch_taken, st.switch_seen);
	assert_int_equal(st.switch_lost, 0);
}

/*
 * A rate: two recordings of the same child at once, one of every switch-out (exact), one at
 * --switch-rate RATE. The rate is kept (the ping-pong pair switches tens of thousands of times
 * a second), and each thread's time off the CPU weighed by 1 / chance matches the exact one.
 */
#define RATE 400
static void test_a_rate_is_kept_and_totals_stay_unbiased(void **state)
{
	struct sleeper sl[] = {
		{ .name = "s1ms", .us = 1000 },	    { .name = "s3ms", .us = 3000 },
		{ .name = "s10ms", .us = 10000 },   { .name = "s30ms", .us = 30000 },
		{ .name = "s100ms", .us = 100000 },
	};
	/* every switch-out: rings for a second of them */
	struct sampler_opts ox = { .mode = SAMPLER_MODE_OFFCPU, .ring_kib = 32768 };
	struct sampler_opts or = { .mode = SAMPLER_MODE_OFFCPU, .switch_rate = RATE };
	static struct seen ex, ra;
	struct sampler_stats sx, sr;
	struct sampler *px, *pr;
	pid_t tids[5], child;
	uint64_t t0, t1, t2;
	double tex = 0, tra = 0, var = 0;
	int go, tfd;

	(void)state;
	memset(&ex, 0, sizeof(ex));
	memset(&ra, 0, sizeof(ra));
	child = start_child(sl, 5, true, &go, &tfd);
	ex.pid = ra.pid = child;
	px = open_or_skip(&ox, child);
	pr = open_or_skip(& or, child);
	go_and_read_tids(go, tfd, tids, 5);
	/* Count the switch-outs of a window well after the start (the rate's first window). */
	t0 = fg_now_ns();
	ex.from = ra.from = t0 + 1000000000ull;
	ex.to = ra.to = t0 + 4000000000ull;
	while ((t1 = fg_now_ns()) < ex.to + 300000000ull) {
		assert_true(sampler_poll(px, 10, on_record, &ex) >= 0);
		assert_true(sampler_poll(pr, 0, on_record, &ra) >= 0);
	}
	sampler_stats(px, &sx);
	sampler_stats(pr, &sr);
	t2 = fg_now_ns();
	sampler_close(pr);
	sampler_close(px);
	stop_child(child);

	print_message("exact: %llu switch-outs; rate %d: %llu taken of %llu in %.1f s\n",
		      (unsigned long long)sx.switch_seen, RATE, (unsigned long long)sr.switch_taken,
		      (unsigned long long)sr.switch_seen, (double)(t2 - t0) / 1e9);
	/* The rate is kept, give or take its windows' noise (the first one takes every
	 * thread's first wait of each kind; a loaded machine makes bursts). */
	assert_int_equal(sx.lost, 0); /* else the exact one is not */
	assert_int_equal(sx.switch_lost, 0);
	assert_true(sr.switch_seen > 20000);
	assert_true(sr.switch_taken * 10 > RATE * (t2 - t0) / 1000000000ull * 4);
	assert_true(sr.switch_taken * 10 < RATE * (t2 - t0) / 1000000000ull * 25);
	for (size_t i = 0; i < 5; i++) {
		struct per_thread *x = thread_of(&ex, tids[i]), *r = thread_of(&ra, tids[i]);

		/*
		 * Within four standard errors. The error of n stacks is at least about
		 * 1 / sqrt(n) (each stack standing for about the same time); stacks of unequal
		 * weights (the chance follows each thread's recent waits and each CPU's period)
		 * make it more: the stacks' own estimate of it, sum of w^2 (1 - 1 / scale) over
		 * the stacks taken (w a stack's weighed wait), is used when larger.
		 */
		double se = sqrt(r->var_ns2) / x->total_ns;
		double tol = r->waits ? 4 / sqrt(r->waits) : 1;

		print_message("%-7s exact %6.3f s in %5u waits, sampled %6.3f s in %4u stacks "
			      "(error %+.1f%%, standard error %.1f%%)\n",
			      sl[i].name, x->total_ns / 1e9, x->waits, r->total_ns / 1e9, r->waits,
			      100 * (r->total_ns / x->total_ns - 1), 100 * se);
		tol = tol < 4 * se ? 4 * se : tol;
		tol = tol < 0.15 ? 0.15 : tol;
		assert_true(x->total_ns > 2.5e9); /* the whole window, nearly */
		assert_true(r->waits >= 16);
		assert_true(r->total_ns > x->total_ns * (1 - tol) &&
			    r->total_ns < x->total_ns * (1 + tol));
		tex += x->total_ns;
		tra += r->total_ns;
		var += r->var_ns2;
	}
	print_message("exact: %llu ends written (%llu only at the next switch-out), %llu "
		      "delivered so far\n",
		      (unsigned long long)sx.switch_ends, (unsigned long long)sx.switch_ends_late,
		      (unsigned long long)sx.switch_in);
	/* every wait's end reaches the caller before that thread's next stack */
	assert_int_equal(ex.unmatched, 0);
	double tol = 4 * sqrt(var) / tex < 0.15 ? 0.15 : 4 * sqrt(var) / tex;

	assert_true(tra > tex * (1 - tol) && tra < tex * (1 + tol));
	assert_int_equal(ra.unmatched, 0);
}

/*
 * Carriers of virtual threads at a rate of their own: four threads sleep 2 ms at a time, two
 * of them named carriers (sampler_carrier) in a recording at a low switch rate with a carrier
 * rate twenty times it, beside a recording of every switch-out. The carriers get many more
 * stacks per second of their waiting than the others (each their own rate's: about ten times),
 * the carriers' stacks keep to their rate, and every thread's time off the CPU weighed by
 * 1 / chance still matches the exact one.
 */
#define CAR_RATE 20
#define CAR_CARRIER_RATE 400
static void test_carriers_get_a_rate_of_their_own_and_stay_unbiased(void **state)
{
	struct sleeper sl[] = {
		{ .name = "car1", .us = 2000 },
		{ .name = "car2", .us = 2000 },
		{ .name = "plain1", .us = 2000 },
		{ .name = "plain2", .us = 2000 },
	};
	struct sampler_opts ox = { .mode = SAMPLER_MODE_OFFCPU, .ring_kib = 32768 };
	struct sampler_opts or = { .mode = SAMPLER_MODE_OFFCPU,
				   .switch_rate = CAR_RATE,
				   .carrier_rate = CAR_CARRIER_RATE };
	static struct seen ex, ra;
	struct sampler_stats sx, sr;
	struct sampler *px, *pr;
	pid_t tids[4], child;
	uint64_t t0, t1;
	double per_s[4];
	int go, tfd;

	(void)state;
	memset(&ex, 0, sizeof(ex));
	memset(&ra, 0, sizeof(ra));
	child = start_child(sl, 4, false, &go, &tfd);
	ex.pid = ra.pid = child;
	px = open_or_skip(&ox, child);
	pr = open_or_skip(& or, child);
	go_and_read_tids(go, tfd, tids, 4);
	assert_int_equal(sampler_carrier(pr, (uint32_t)tids[0]), 0);
	assert_int_equal(sampler_carrier(pr, (uint32_t)tids[1]), 0);
	assert_int_equal(sampler_carrier(px, (uint32_t)tids[0]), 0); /* no carrier rate: none */
	t0 = fg_now_ns();
	ex.from = ra.from = t0 + 1000000000ull;
	ex.to = ra.to = t0 + 4000000000ull;
	while ((t1 = fg_now_ns()) < ex.to + 300000000ull) {
		assert_true(sampler_poll(px, 10, on_record, &ex) >= 0);
		assert_true(sampler_poll(pr, 0, on_record, &ra) >= 0);
	}
	sampler_stats(px, &sx);
	sampler_stats(pr, &sr);
	sampler_close(pr);
	sampler_close(px);
	stop_child(child);

	print_message("rate %d, carriers %d: %llu taken of %llu switch-outs, of the carriers' "
		      "%llu taken of %llu in %.1f s\n",
		      CAR_RATE, CAR_CARRIER_RATE, (unsigned long long)sr.switch_taken,
		      (unsigned long long)sr.switch_seen,
		      (unsigned long long)sr.switch_carrier_taken,
		      (unsigned long long)sr.switch_carrier_seen, (double)(t1 - t0) / 1e9);
	assert_int_equal(sx.lost, 0);
	assert_int_equal(sx.switch_lost, 0);
	assert_int_equal(sx.switch_carrier_seen, 0);
	assert_true(sr.switch_carrier_seen > 1000);
	/* the carriers' rate kept, give or take its windows' noise */
	assert_true(sr.switch_carrier_taken * 10 >
		    CAR_CARRIER_RATE * (t1 - t0) / 1000000000ull * 4);
	assert_true(sr.switch_carrier_taken * 10 <
		    CAR_CARRIER_RATE * (t1 - t0) / 1000000000ull * 25);
	for (size_t i = 0; i < 4; i++) {
		struct per_thread *x = thread_of(&ex, tids[i]), *r = thread_of(&ra, tids[i]);
		double se, tol;

		assert_non_null(x);
		assert_non_null(r);
		se = sqrt(r->var_ns2) / x->total_ns;
		tol = r->waits ? 4 / sqrt(r->waits) : 1;
		tol = tol < 4 * se ? 4 * se : tol;
		tol = tol < 0.15 ? 0.15 : tol;
		per_s[i] = r->waits / (x->total_ns / 1e9);
		print_message("%-7s exact %6.3f s in %5u waits, sampled %6.3f s in %4u stacks "
			      "(%.1f a second of its waiting; error %+.1f%%, standard error "
			      "%.1f%%)\n",
			      sl[i].name, x->total_ns / 1e9, x->waits, r->total_ns / 1e9, r->waits,
			      per_s[i], 100 * (r->total_ns / x->total_ns - 1), 100 * se);
		assert_true(x->total_ns > 2.5e9);
		assert_true(r->waits >= 8);
		assert_true(r->total_ns > x->total_ns * (1 - tol) &&
			    r->total_ns < x->total_ns * (1 + tol));
	}
	/* the carriers at least three times as densely sampled as the others (about ten times:
	 * each CPU keeps its own share of each rate, so one thread's density varies with the
	 * CPUs it ran on) */
	assert_true(per_s[0] + per_s[1] > 3 * (per_s[2] + per_s[3]));
	assert_int_equal(ex.unmatched, 0);
	assert_int_equal(ra.unmatched, 0);
}

/*
 * A thread that computes between its sleeps, on a CPU it shares with a busy thread: it is
 * preempted several times in each time it computes, on its way back to user mode (where the
 * kernel calls schedule() for it and the tracepoint's flag says voluntary), and sleeps 60 ms
 * at a time. At a rate that takes a stack for a fraction of its waits, the stacks follow the
 * time: its sleeps hold most of its time off the CPU (about 85% on an idle machine), so they
 * must get most of its stacks (at least 0.6 x their share of the time), not about one in four
 * (their share of its switch-outs).
 */
static void test_a_busy_threads_sleeps_get_the_stacks_their_time_asks(void **state)
{
	/* computes 20 ms (sharing CPU 0 with hog: preempted every few ms), sleeps 60 ms */
	struct sleeper sl[] = {
		{ .name = "busysleep", .us = 60000, .spin_us = 20000, .cpu0 = true },
		{ .name = "hog", .spin_us = 1000000, .cpu0 = true },
	};
	struct sampler_opts o = { .mode = SAMPLER_MODE_OFFCPU, .switch_rate = 20 };
	static struct seen seen;
	struct sampler_stats st;
	struct per_thread *t;
	pid_t tids[2];

	(void)state;
	memset(&seen, 0, sizeof(seen));
	/* counted past the rate's first window, which takes every thread's first wait of each
	 * kind */
	record_sleepers(sl, 2, &o, &seen, tids, 1500000000ull, 6500, &st);
	t = thread_of(&seen, tids[0]);
	assert_non_null(t);
	print_message("busysleep: %u stacks, %u of them at its sleeps, which hold %.0f%% of its "
		      "time off the CPU (%.2f of %.2f s); %llu taken of %llu switch-outs\n",
		      t->stacks, t->sleep_stacks,
		      t->total_ns > 0 ? 100 * t->sleep_ns / t->total_ns : 0, t->sleep_ns / 1e9,
		      t->total_ns / 1e9, (unsigned long long)st.switch_taken,
		      (unsigned long long)st.switch_seen);
	assert_true(t->stacks >= 10);
	assert_true(t->total_ns > 0);
	/* its sleeps' share of the stacks, against their share of the time (both from the
	 * stacks: the weights undo the chance whatever it was); each kind of its preemptions has
	 * its own first stack and its own stack owed per period of it, which the sleeps share
	 * with them */
	assert_true((double)t->sleep_stacks / t->stacks >= 0.6 * t->sleep_ns / t->total_ns);
}

/* Threads named as left out are left out in the kernel, and counted there. */
static void test_threads_are_left_out_by_name_in_the_kernel(void **state)
{
	struct sleeper sl[] = { { .name = "keepme", .us = 5000 },
				{ .name = "dropme", .us = 5000 } };
	struct sampler_opts o = { .mode = SAMPLER_MODE_OFFCPU, .thread_filter = true };
	static struct seen seen;
	struct sampler_stats st;
	struct sampler *sp;
	pid_t tids[2], child;
	int go, tfd;

	(void)state;
	memset(&seen, 0, sizeof(seen));
	child = start_child(sl, 2, false, &go, &tfd);
	seen.pid = child;
	sp = open_or_skip(&o, child);
	assert_int_equal(sampler_keep_name(sp, "dropme", false), 0);
	assert_int_equal(sampler_keep_name(sp, "keepme", true), 0);
	go_and_read_tids(go, tfd, tids, 2);
	/* Each thread names itself before it reports its tid: a switch-out before that has the
	 * name it was born with, which nothing leaves out. */
	seen.from = fg_now_ns();
	drain_for(sp, &seen, 500);
	sampler_stats(sp, &st);
	sampler_close(sp);
	stop_child(child);
	print_message("keepme %u stacks, dropme %u, %llu left out in the kernel\n",
		      thread_of(&seen, tids[0])->stacks, thread_of(&seen, tids[1])->stacks,
		      (unsigned long long)st.switch_filtered);
	assert_true(thread_of(&seen, tids[0])->stacks >= 40);
	assert_int_equal(thread_of(&seen, tids[1])->stacks, 0);
	assert_true(st.switch_filtered >= 40);
}

/* Write "0" or "1" to the sysctl kernel.bpf_stats_enabled; its former value, or -1. */
static int set_bpf_stats(int on)
{
	unsigned int was = 0;

	if (perfsysctl_read(SWITCHBPF_STATS_SYSCTL, &was) != 0 ||
	    perfsysctl_write(SWITCHBPF_STATS_SYSCTL, on ? 1 : 0) != 0)
		return -1;
	return was == 1;
}

/* One recording of a thread sleeping 2 ms at a time: the sampler's stats after 300 ms. */
static void record_sleeper(struct sampler_stats *st)
{
	struct sleeper sl[] = { { .name = "sleep2", .us = 2000 } };
	struct sampler_opts o = { .mode = SAMPLER_MODE_OFFCPU, .switch_rate = 25 };
	static struct seen seen;
	pid_t tids[1];

	memset(&seen, 0, sizeof(seen));
	record_sleepers(sl, 1, &o, &seen, tids, 0, 300, st);
}

/*
 * While the kernel counts BPF programs' time (kernel.bpf_stats_enabled, which the test sets
 * and restores), the program counts its own at every switch of the target's threads: a run
 * per switch-out at least (its switch-ins add more), each taking some time and less than a
 * millisecond. With the sysctl off it counts nothing.
 */
static void test_the_program_counts_its_own_time_when_asked(void **state)
{
	struct sampler_stats on, off;
	int was = set_bpf_stats(1);

	(void)state;
	assert_true(was >= 0); /* the sysctl is there since Linux 5.8, and root may set it */
	record_sleeper(&on);
	(void)set_bpf_stats(0);
	record_sleeper(&off);
	(void)set_bpf_stats(was);
	print_message("stats on: %llu switch-outs, %llu runs counted, %llu ns; off: %llu "
		      "switch-outs, %llu runs\n",
		      (unsigned long long)on.switch_seen, (unsigned long long)on.switch_self_runs,
		      (unsigned long long)on.switch_self_ns, (unsigned long long)off.switch_seen,
		      (unsigned long long)off.switch_self_runs);
	assert_true(on.switch_seen >= 50);
	assert_true(on.switch_self_runs >= on.switch_seen);
	assert_true(on.switch_self_ns >= on.switch_self_runs);
	assert_true(on.switch_self_ns < on.switch_self_runs * 1000000ull);
	assert_true(off.switch_seen >= 50);
	assert_int_equal(off.switch_self_runs, 0);
	assert_int_equal(off.switch_self_ns, 0);
}

/* The exited threads switchbpf_totals found: their tids, and their waits in all. */
struct exited {
	uint32_t tid[32];
	uint64_t off[32];
	size_t n;
};

static int note_exited(void *ctx, uint32_t tid, const struct switchtot *t)
{
	struct exited *ex = ctx;
	uint64_t off = 0;

	if (!t->t_exit || ex->n == 32)
		return 0;
	for (size_t i = 0; i < ex->n; i++)
		if (ex->tid[i] == tid)
			return 0;
	for (int k = 0; k < SWITCHTOT_NKINDS; k++)
		off += t->off[k];
	ex->tid[ex->n] = tid;
	ex->off[ex->n++] = off;
	return 0;
}

static void *sleep_thrice(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++)
		usleep(2000);
	return NULL;
}

/*
 * Every thread's waits are counted in a slot of its own. With room for 3 threads at once, 8
 * short-lived threads one after another (beside the test's main thread) are all counted when
 * the slot of each one that exited is freed once it was read (switchbpf_forget), each with its
 * ~6 ms of sleep; without that, the threads beyond the room are not counted, each said to be
 * left out once.
 */
static void test_an_exited_threads_slot_serves_a_later_thread(void **state)
{
	const struct switchbpf_opts o = { .period = 1u << 30, .max_threads = 3 };

	(void)state;
	for (int forget = 1; forget >= 0; forget--) {
		struct switchbpf *b = NULL;
		struct switchstats sum;
		struct exited ex = { .n = 0 };
		char why[SWITCHBPF_WHY_MAX];
		size_t freed = 0;
		int rv = switchbpf_open(&o, &b, why, sizeof(why));

		if (rv == -ENOENT || rv == -EOPNOTSUPP) {
			print_message("no BPF off-CPU here: %s\n", why);
			skip();
		}
		assert_int_equal(rv, 0);
		assert_int_equal(switchbpf_add(b, (uint32_t)getpid()), 0);
		assert_int_equal(switchbpf_attach(b), 0);
		for (int i = 0; i < 8; i++) {
			pthread_t t;

			assert_int_equal(pthread_create(&t, NULL, sleep_thrice, NULL), 0);
			assert_int_equal(pthread_join(t, NULL), 0);
			usleep(5000); /* its last switch (the exit's) comes after the join */
			assert_int_equal(switchbpf_totals(b, note_exited, &ex), 0);
			for (; forget && freed < ex.n; freed++)
				assert_int_equal(switchbpf_forget(b, ex.tid[freed]), 0);
		}
		switchbpf_stats(b, &sum);
		switchbpf_close(b);
		print_message("%s: %zu exited threads counted, %llu left out for want of a slot\n",
			      forget ? "slots freed" : "slots kept", ex.n,
			      (unsigned long long)sum.tot_full);
		if (forget) {
			assert_int_equal(ex.n, 8);
			assert_int_equal(sum.tot_full, 0);
			for (size_t i = 0; i < ex.n; i++)
				if (ex.off[i] < 5000000 || ex.off[i] >= 1000000000)
					fail_msg(
						"exited thread %u counted %llu ns off the CPU (its "
						"three 2 ms sleeps: 6 to 1000 ms)",
						ex.tid[i], (unsigned long long)ex.off[i]);
		} else {
			assert_true(ex.n < 8);
			assert_int_equal(sum.tot_full, 8 - ex.n); /* each thread left out, once */
		}
	}
}

/* Threads that block in a read before the program follows their process, then exit once woken:
 * their exit is the first switch of theirs the program sees. Nothing preempts them on the way:
 * they run at a real-time priority (a busy machine's other threads would), and are detached
 * (no thread waits for their exit, to be woken by it first). */
#define AT_EXIT 4
static int ae_pipe[AT_EXIT][2];
static volatile pid_t ae_tid[AT_EXIT];

static void *read_then_exit(void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };
	int i = (int)(intptr_t)arg;
	char c;

	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0)
		return NULL; /* the test fails: ae_tid stays 0 */
	ae_tid[i] = (pid_t)syscall(SYS_gettid);
	if (read(ae_pipe[i][0], &c, 1) != 1)
		return NULL;
	return NULL;
}

/* /proc's state letter of this process's thread tid ('?' if unreadable: it is gone). */
static char task_state(pid_t tid)
{
	char path[64], *rp;
	size_t len = 0;
	char *text = NULL, st = '?';

	/* fg_read_file's buffer holds the bytes read, with no terminating NUL. */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)getpid(), (int)tid);
	if (fg_read_file(path, 512, 512, &text, &len) == 0 &&
	    (rp = memrchr(text, ')', len)) != NULL && rp + 2 < text + len && rp[1] == ' ')
		st = rp[2];
	free(text);
	return st;
}

/* The windows threadtime reported (the threads of AT_EXIT). */
struct at_exit_seen {
	struct threadtime_res r[AT_EXIT];
	bool got[AT_EXIT];
};

static void note_window(void *ctx, const struct threadtime_res *r)
{
	struct at_exit_seen *ae = ctx;

	for (int i = 0; i < AT_EXIT; i++)
		if (r->tid == (uint32_t)ae_tid[i]) {
			ae->r[i] = *r;
			ae->got[i] = true;
		}
}

/* A snapshot of this process's threads for tt: /proc's view and the program's counts. */
static void snapshot(struct threadtime *tt, struct switchbpf *b)
{
	threadtime_begin(tt, fg_now_ns());
	threadtime_read_proc(tt, (uint32_t)getpid());
	assert_int_equal(switchbpf_totals(b, threadtime_add_count, tt), 0);
}

/*
 * A thread that exits in a window with no switch-out seen before its exit keeps its time: four
 * threads asleep in a read since before the program followed them, woken 60 ms into a window
 * and exiting at once, are each reported in that window as exited, having lived from its start
 * to their exit (>= 60 ms) and slept all but their CPU time of it in a read; the program says
 * how many it first saw at their exit (all, but for one that a higher priority's thread, a
 * kernel's, preempted on its way out: at least one).
 */
static uint64_t at_exit_once(void)
{
	const struct switchbpf_opts o = { .period = 1u << 30 };
	static struct threadtime tt;
	struct at_exit_seen ae;
	struct switchbpf *b = NULL;
	struct switchstats sum;
	pthread_t t;
	char why[SWITCHBPF_WHY_MAX];
	uint64_t a, z;
	int rv;

	memset(&ae, 0, sizeof(ae));
	for (int i = 0; i < AT_EXIT; i++) {
		ae_tid[i] = 0;
		assert_int_equal(pipe(ae_pipe[i]), 0);
		assert_int_equal(pthread_create(&t, NULL, read_then_exit, (void *)(intptr_t)i), 0);
		assert_int_equal(pthread_detach(t), 0);
	}
	for (int i = 0; i < AT_EXIT; i++) { /* each asleep in its read */
		for (int w = 0; w < 2000 && (!ae_tid[i] || task_state(ae_tid[i]) != 'S'); w++)
			usleep(1000);
		if (!ae_tid[i])
			fail_msg("thread %d could not take SCHED_FIFO (CAP_SYS_NICE)", i);
	}
	rv = switchbpf_open(&o, &b, why, sizeof(why));
	if (rv == -ENOENT || rv == -EOPNOTSUPP) {
		print_message("no BPF off-CPU here: %s\n", why);
		skip();
	}
	assert_int_equal(rv, 0);
	assert_int_equal(switchbpf_add(b, (uint32_t)getpid()), 0);
	assert_int_equal(switchbpf_attach(b), 0);
	threadtime_init(&tt);
	snapshot(&tt, b);
	a = tt.b.t;
	(void)threadtime_end(&tt, note_window, &ae);
	usleep(60000);
	/* One at a time, and this thread waits without allocating: an exiting thread meets no
	 * other in the exit path's locks (a sanitizer's thread registry, its allocator). */
	for (int i = 0; i < AT_EXIT; i++) {
		assert_int_equal(write(ae_pipe[i][1], "x", 1), 1);
		for (int w = 0; w < 2000 && syscall(SYS_tgkill, getpid(), ae_tid[i], 0) == 0; w++)
			usleep(1000);
	}
	for (int i = 0; i < AT_EXIT; i++) /* gone from /proc: released */
		for (int w = 0; w < 2000 && task_state(ae_tid[i]) != '?'; w++)
			usleep(1000);
	usleep(20000); /* their last switch (the exit's) comes after their release */
	snapshot(&tt, b);
	z = tt.b.t;
	(void)threadtime_end(&tt, note_window, &ae);
	switchbpf_stats(b, &sum);
	switchbpf_close(b);
	threadtime_fini(&tt);
	print_message("%llu of %d threads first seen at their exit; window %.1f ms\n",
		      (unsigned long long)sum.tot_at_exit, AT_EXIT, (double)(z - a) / 1e6);
	for (int i = 0; i < AT_EXIT; i++) {
		const struct threadtime_res *r = &ae.r[i];
		uint64_t off = 0;

		close(ae_pipe[i][0]);
		close(ae_pipe[i][1]);
		if (!ae.got[i])
			fail_msg("thread %d exited in the window and was not reported: its time is "
				 "lost",
				 (int)ae_tid[i]);
		print_message("thread %d: lived %.1f ms, slept in a read %.1f ms, ran %.2f ms%s\n",
			      (int)ae_tid[i], (double)r->life / 1e6,
			      (double)r->off[SWITCHTOT_SLEEP_READ] / 1e6, (double)r->cpu / 1e6,
			      r->exited ? ", exited" : "");
		assert_true(r->exited);
		assert_true(r->life >= 60000000 && r->life <= z - a);
		assert_true(r->off[SWITCHTOT_SLEEP_READ] >= 55000000);
		for (int k = 0; k < SWITCHTOT_NKINDS; k++)
			off += r->off[k];
		assert_true(off + r->cpu == r->life);
	}
	assert_int_equal(sum.tot_full, 0);
	return sum.tot_at_exit;
}

static void test_a_thread_first_seen_at_its_exit_keeps_its_time(void **state)
{
	uint64_t first_at_exit = 0;
	int tries = 0;

	(void)state;
	/* Each try checks every thread's time. That one was first seen at its exit needs it not to
	 * leave the CPU on its way out; a thread that blocked there (a contended lock in the exit
	 * path, as under a sanitizer's thread registry) was rightly seen before: tried again. */
	while (first_at_exit == 0 && tries < 5) {
		tries++;
		first_at_exit = at_exit_once();
	}
	print_message("%d tries\n", tries);
	assert_true(first_at_exit >= 1 && first_at_exit <= AT_EXIT);
}

/*
 * Without CAP_BPF (and CAP_SYS_ADMIN, which stands for it) but with CAP_PERFMON: the program
 * cannot load, the sampler says why and takes the stacks with tracepoint events per thread.
 * Those need tracefs, which a process without CAP_SYS_ADMIN cannot mount and an untouched
 * machine has not mounted: the test mounts it first when it is absent (as the collector does
 * as root), says so, and unmounts it at the end.
 */
static void test_without_cap_bpf_tracepoints_per_thread_take_over(void **state)
{
	static const char *const child_why[] = {
		[10] = "capget failed",
		[11] = "capset (dropping CAP_BPF and CAP_SYS_ADMIN) failed",
		[12] = "sampler_open failed without CAP_BPF",
		[13] = "the sampler did not fall back to tracepoints per thread with the BPF "
		       "program's EPERM and its reason (\"no CAP_BPF\", CAP_PERFMON not named)",
		[14] = "the tracepoints per thread did not time the worker's waits (< 20)",
	};
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	struct tracefs_switch ts;
	pid_t child, worker;
	int status, rv;

	(void)state;
	rv = tracefs_sched_switch(&ts);
	if (rv != 0) { /* not root, or a kernel without tracepoints */
		print_message("no sched:sched_switch in tracefs and it could not be mounted (%s): "
			      "the fallback cannot run here\n",
			      strerror(-rv));
		skip();
	}
	if (ts.mounted)
		print_message("mounted tracefs at %s for this test (none was mounted)\n", ts.dir);
	worker = fork();
	assert_true(worker >= 0);
	if (worker == 0) {
		for (;;)
			usleep(2000);
	}
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct sampler_opts o = { .mode = SAMPLER_MODE_OFFCPU, .stack_copy = 1024 };
		static struct seen seen;
		struct sampler *sp;

		if (syscall(SYS_capget, &hdr, data) != 0)
			_exit(10);
		for (int i = 0; i < 2; i++) {
			uint32_t drop = 0;

			if (i == CAP_TO_INDEX(CAP_BPF))
				drop |= CAP_TO_MASK(CAP_BPF);
			if (i == CAP_TO_INDEX(CAP_SYS_ADMIN))
				drop |= CAP_TO_MASK(CAP_SYS_ADMIN);
			data[i].effective &= ~drop;
			data[i].permitted &= ~drop;
			data[i].inheritable &= ~drop;
		}
		if (syscall(SYS_capset, &hdr, data) != 0)
			_exit(11);
		seen.pid = worker;
		if (sampler_open(&o, &worker, 1, &sp) != 0)
			_exit(12);
		/* the reason named: the capability dropped, not the one held */
		if (sampler_info(sp)->scope != SAMPLER_SCOPE_THREADS ||
		    sampler_info(sp)->switch_bpf_err != -EPERM ||
		    !sampler_info(sp)->switch_bpf_why ||
		    !strstr(sampler_info(sp)->switch_bpf_why, "no CAP_BPF") ||
		    strstr(sampler_info(sp)->switch_bpf_why, "CAP_PERFMON"))
			_exit(13);
		drain_for(sp, &seen, 300);
		sampler_close(sp);
		_exit(seen.n == 1 && seen.t[0].waits >= 20 ? 0 : 14);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	stop_child(worker);
	if (ts.mounted && umount2(ts.dir, MNT_DETACH) != 0)
		print_message("could not unmount the tracefs mounted at %s: %s\n", ts.dir,
			      strerror(errno));
	if (!WIFEXITED(status))
		fail_msg("the child without CAP_BPF died (status 0x%x)", status);
	if (WEXITSTATUS(status) != 0)
		fail_msg("without CAP_BPF: %s (child exit %d)",
			 WEXITSTATUS(status) < 15 && child_why[WEXITSTATUS(status)]
				 ? child_why[WEXITSTATUS(status)]
				 : "unexpected exit",
			 WEXITSTATUS(status));
}

/*
 * Wall samples the preemptions by interrupts apart from the switch rate: two threads spinning
 * on one CPU, preempted by the timer every few ms (each ~0.5 s of such time a second), get
 * stacks there by the CPU sampling interval of that time (five times as many at 50 Hz as at
 * 10 Hz), without the kernel's chain, about the rate's worth more at most (more sparsely
 * where they would take more: test_preemptions_are_sampled_evenly_over_the_window); the other
 * waits keep the rate. Asked to keep them with the other waits (--min-block), every one is taken at
 * --switch-rate 0, with its chain.
 */
static void test_wall_samples_preemptions_by_interrupts_apart(void **state)
{
	struct sleeper sl[] = { { .name = "spinA", .spin_us = 100000, .cpu0 = true },
				{ .name = "spinB", .spin_us = 100000, .cpu0 = true } };
	/* 10 and 50 Hz at 2000 stacks a second: under the rate; 99 Hz at 25: over it, sampled
	 * more sparsely (about a window's quota on CPU 0: 25 a second over the CPUs / CPUs) */
	static const unsigned int freq[4] = { 10, 50, 99, 0 }, rate[4] = { 2000, 2000, 25, 0 };
	struct sampler_opts o = { .mode = SAMPLER_MODE_WALL };
	static struct seen seen;
	struct sampler_stats st[4];
	pid_t tids[2];
	unsigned int irq[4] = { 0 }, kchain[4] = { 0 };
	double waited[4] = { 0 }; /* the threads' time preempted by interrupts, counted */
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	(void)state;
	for (int v = 0; v < 4; v++) {
		o.freq_hz = freq[v];
		o.switch_rate = rate[v];
		o.keep_preempted = v == 3;
		memset(&seen, 0, sizeof(seen));
		record_sleepers(sl, 2, &o, &seen, tids, 0, 1000, &st[v]);
		for (size_t i = 0; i < seen.n; i++)
			if (seen.t[i].tid == tids[0] || seen.t[i].tid == tids[1]) {
				irq[v] += seen.t[i].irq_stacks;
				kchain[v] += seen.t[i].irq_kernel;
				waited[v] += (double)counted_ns(seen.t[i].tid, SWITCHTOT_PREEMPTED);
			}
		print_message(
			"%u Hz, rate %u, keep %d: %llu switch-outs, %llu sampled apart, "
			"%llu taken, %llu at a lowered chance; %u stacks at interrupts (%u with a "
			"kernel chain) in %.0f ms of such time\n",
			freq[v], rate[v], v == 3, (unsigned long long)st[v].switch_seen,
			(unsigned long long)st[v].switch_laid,
			(unsigned long long)st[v].switch_laid_taken,
			(unsigned long long)st[v].switch_laid_capped, irq[v], kchain[v],
			waited[v] / 1e6);
	}
	/* slices of a few ms: a few hundred preemptions a second, ~1 s of such time in all */
	for (int v = 0; v < 3; v++) {
		assert_true(st[v].switch_laid >= 20);
		/* (a stack or two taken at the start or end may fall outside what is read) */
		assert_true(irq[v] <= st[v].switch_laid_taken &&
			    irq[v] + 2 >= st[v].switch_laid_taken);
		assert_int_equal(kchain[v], 0);
		assert_true(waited[v] > 0);
	}
	/* Under the rate: at least one per interval of such time (more when the waits vary: the
	 * chance follows their root mean square), and the shorter interval takes more of them. */
	assert_int_equal(st[0].switch_laid_capped + st[1].switch_laid_capped, 0);
	assert_true(irq[0] >= waited[0] / 100e6 * 0.5);
	assert_true(irq[1] / waited[1] >= 2 * irq[0] / waited[0]);
	/* 99 Hz: ~100 a second asked, about 25 / CPUs taken in the 1 s window on CPU 0 (a few
	 * more early in the first one, which has no earlier one to go by) */
	assert_true(st[2].switch_laid_capped > 0);
	assert_in_range(irq[2], 3, (unsigned long)(2.5 * (25.0 / (double)ncpu + 1)));
	assert_int_equal(st[3].switch_laid, 0);
	assert_true(irq[3] >= 20);
	assert_true(kchain[3] >= irq[3] / 2);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Where wall's preemptions by interrupts would take more stacks than the rate allows, they are
 * sampled more sparsely, evenly over each window of the rate: two threads spinning on CPU 0,
 * preempted tens of times a second for as long as the 99 Hz interval or more, at a rate of
 * about 12 stacks a window on that CPU, for 7 s. The stacks' times, each as a fraction of the
 * window it falls in (windows of SWITCHBPF_WINDOW_NS counted from the first stack, the first
 * window left out), are uniform: the Kolmogorov-Smirnov distance of their distribution to the
 * uniform one is at most 0.25 (which ~70 uniform times pass but about twice in 10 000 runs). A
 * cap on their number per window puts them all in its first fifth (a distance near 0.8).
 */
static void test_preemptions_are_sampled_evenly_over_the_window(void **state)
{
	struct sleeper sl[] = { { .name = "spinA", .spin_us = 100000, .cpu0 = true },
				{ .name = "spinB", .spin_us = 100000, .cpu0 = true } };
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct sampler_opts o = { .mode = SAMPLER_MODE_WALL,
				  .freq_hz = 99,
				  .switch_rate = 12 * (unsigned int)(ncpu > 0 ? ncpu : 1) };
	static struct seen seen;
	static double ph[MAX_IRQ];
	struct sampler_stats st;
	size_t n = 0, q[4] = { 0 };
	pid_t tids[2];
	double d = 0;

	(void)state;
	memset(&seen, 0, sizeof(seen));
	record_sleepers(sl, 2, &o, &seen, tids, 0, 7000, &st);
	for (size_t i = 0; i < seen.nirq; i++) {
		uint64_t since = seen.irq_t[i] - seen.irq_t[0];

		if (since < SWITCHBPF_WINDOW_NS)
			continue;
		ph[n] = (double)(since % SWITCHBPF_WINDOW_NS) / (double)SWITCHBPF_WINDOW_NS;
		q[(size_t)(ph[n] * 4) & 3]++;
		n++;
	}
	qsort(ph, n, sizeof(ph[0]), cmp_double);
	for (size_t i = 0; i < n; i++) {
		double below = ph[i] - (double)i / (double)n,
		       above = (double)(i + 1) / (double)n - ph[i];

		d = below > d ? below : d;
		d = above > d ? above : d;
	}
	print_message("%llu preemptions sampled apart, %llu taken, %llu at a lowered chance; "
		      "%zu stacks after the first window, by quarter of their window %zu %zu %zu "
		      "%zu: distance to uniform %.3f\n",
		      (unsigned long long)st.switch_laid, (unsigned long long)st.switch_laid_taken,
		      (unsigned long long)st.switch_laid_capped, n, q[0], q[1], q[2], q[3], d);
	assert_true(st.switch_laid_capped > 0); /* more were asked than the rate allows */
	assert_true(n >= 30);
	assert_true(d <= 0.25);
}

/* Record the n sleepers sl at every switch-out for 900 ms; into got the exact time of sleeper a
 * of kinds ka and kb, then of sleeper b of ka and kb. */
static void record_two_kinds(struct sleeper *sl, size_t n, size_t a, size_t b, unsigned int ka,
			     unsigned int kb, uint64_t got[4])
{
	struct sampler_opts o = { .mode = SAMPLER_MODE_OFFCPU, .stack_copy = 4096 };
	static struct seen seen;
	struct sampler_stats st;
	pid_t tids[MAX_TIDS];

	memset(&seen, 0, sizeof(seen));
	record_sleepers(sl, n, &o, &seen, tids, 0, 900, &st);
	got[0] = counted_ns(tids[a], ka);
	got[1] = counted_ns(tids[a], kb);
	got[2] = counted_ns(tids[b], ka);
	got[3] = counted_ns(tids[b], kb);
}

/* Print the four times of record_two_kinds() after what they are, and fail unless ok. */
static void expect_kinds(const char *what, const uint64_t g[4], bool ok)
{
	print_message("%s: %.2f, %.2f; %.2f, %.2f ms\n", what, (double)g[0] / 1e6,
		      (double)g[1] / 1e6, (double)g[2] / 1e6, (double)g[3] / 1e6);
	if (!ok)
		fail_msg("%s: %.2f, %.2f; %.2f, %.2f ms", what, (double)g[0] / 1e6,
			 (double)g[1] / 1e6, (double)g[2] / 1e6, (double)g[3] / 1e6);
}

/*
 * A futex wait with a timeout (a timed park: an idle pool's wait for work) and one without (a
 * lock, woken by another thread) are counted as two kinds, each thread's in its own: every
 * switch-out taken, 900 ms of a thread in 20 ms timed waits, one woken every 20 ms.
 */
static void test_futex_waits_with_a_timeout_are_a_kind_of_their_own(void **state)
{
	struct sleeper sl[] = { { .name = "timed", .us = 20000, .futex = FX_TIMED },
				{ .name = "untimed", .us = 20000, .futex = FX_UNTIMED },
				{ .name = "waker", .us = 20000, .futex = FX_WAKER } };
	uint64_t g[4]; /* timed: with a timeout, without; untimed: with, without */

	(void)state;
	record_two_kinds(sl, 3, 0, 1, SWITCHTOT_FUTEX_TIMED, SWITCHTOT_FUTEX, g);
	expect_kinds("futex waits by timeout: the timed thread with a timeout, without; the "
		     "untimed one with, without (want >= 500 ms of its own kind, under 2% of the "
		     "other)",
		     g,
		     g[0] >= 500000000u && g[1] <= g[0] / 50 && g[3] >= 500000000u &&
			     g[2] <= g[3] / 50);
}

/*
 * A thread preempted leaving a write of a byte (a wake-up: its reader runs in its place) and
 * one leaving a write of 200 bytes of data are counted as two kinds: each writer and its reader
 * on CPU 0, the writers spinning 2 ms between writes.
 */
static void test_wake_up_writes_are_a_kind_of_their_own(void **state)
{
	struct sleeper sl[] = {
		{ .name = "wakeup", .spin_us = 2000, .cpu0 = true, .pipe = 1, .bytes = 1 },
		{ .name = "wakeup-rd", .cpu0 = true, .pipe = 1 },
		{ .name = "data", .spin_us = 2000, .cpu0 = true, .pipe = 2, .bytes = 200 },
		{ .name = "data-rd", .cpu0 = true, .pipe = 2 },
	};
	uint64_t g[4]; /* the 1-byte writer: wake-up, data; the 200-byte writer: wake-up, data */

	(void)state;
	record_two_kinds(sl, 4, 0, 2, SWITCHTOT_PREEMPT_WAKE, SWITCHTOT_PREEMPT_WRITE, g);
	/* Each sleeper's first write is its 8-byte tid announcement (sleeper_main): a preemption
	 * leaving it is rightly a wake-up write's, so the 200-byte writer may have a sliver of it.
	 */
	expect_kinds("writes by length: the 1-byte writer preempted leaving a wake-up write, a "
		     "write of data; the 200-byte writer likewise (want each in its own kind, the "
		     "other under 2% of it)",
		     g, g[0] && g[1] <= g[0] / 50 && g[3] && g[2] <= g[3] / 50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wake_up_writes_are_a_kind_of_their_own),
		cmocka_unit_test(test_futex_waits_with_a_timeout_are_a_kind_of_their_own),
		cmocka_unit_test(test_every_wait_is_timed_with_its_stack),
		cmocka_unit_test(test_a_rate_is_kept_and_totals_stay_unbiased),
		cmocka_unit_test(test_carriers_get_a_rate_of_their_own_and_stay_unbiased),
		cmocka_unit_test(test_a_busy_threads_sleeps_get_the_stacks_their_time_asks),
		cmocka_unit_test(test_threads_are_left_out_by_name_in_the_kernel),
		cmocka_unit_test(test_the_program_counts_its_own_time_when_asked),
		cmocka_unit_test(test_an_exited_threads_slot_serves_a_later_thread),
		cmocka_unit_test(test_wall_samples_preemptions_by_interrupts_apart),
		cmocka_unit_test(test_preemptions_are_sampled_evenly_over_the_window),
		cmocka_unit_test(test_a_thread_first_seen_at_its_exit_keeps_its_time),
		cmocka_unit_test(test_without_cap_bpf_tracepoints_per_thread_take_over),
	};

	if (getuid() != 0) {
		fprintf(stderr,
			"test_switch_sampler: needs root (perf events of every CPU, BPF)\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
