// SPDX-License-Identifier: MIT
/* threadtime.c - every target thread's exact time over a window (see threadtime.h). */
#include "threadtime.h"

#include "arch_x86_64.h"
#include "array.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void snap_clear(struct threadtime_snap *s)
{
	htab_clear(&s->idx);
	s->n = 0;
}

static void snap_fini(struct threadtime_snap *s)
{
	htab_fini(&s->idx);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

void threadtime_init(struct threadtime *tt)
{
	memset(tt, 0, sizeof(*tt));
	htab_init(&tt->a.idx);
	htab_init(&tt->b.idx);
}

void threadtime_fini(struct threadtime *tt)
{
	snap_fini(&tt->a);
	snap_fini(&tt->b);
}

void threadtime_begin(struct threadtime *tt, uint64_t t)
{
	snap_clear(&tt->b);
	tt->b.t = t;
}

static const struct threadtime_ent *snap_find(const struct threadtime_snap *s, uint32_t tid)
{
	const uint64_t *v = htab_get(&s->idx, tid);

	return v ? &s->v[*v] : NULL;
}

/* tid's entry in the snapshot being made, a new one if need be; NULL when full. */
static struct threadtime_ent *snap_get(struct threadtime *tt, uint32_t tid)
{
	struct threadtime_snap *s = &tt->b;
	const uint64_t *v = htab_get(&s->idx, tid);

	if (v)
		return &s->v[*v];
	if (tid == 0 || s->n >= THREADTIME_MAX || ARRAY_GROW(s->v, s->cap, s->n + 1) != 0 ||
	    htab_put(&s->idx, tid, s->n) != 0) {
		tt->over++;
		return NULL;
	}
	memset(&s->v[s->n], 0, sizeof(s->v[0]));
	s->v[s->n].tid = tid;
	return &s->v[s->n++];
}

int threadtime_add_count(void *ctx, uint32_t tid, const struct switchtot *e)
{
	struct threadtime_ent *x = snap_get(ctx, tid);

	if (x) {
		x->has_e = true;
		x->e = *e;
		if (!x->pid)
			x->pid = e->pid;
	}
	return 0;
}

void threadtime_add_proc(struct threadtime *tt, uint32_t pid, uint32_t tid, uint64_t cpu_ns,
			 char state, long sysnr)
{
	struct threadtime_ent *x = snap_get(tt, tid);

	if (x) {
		x->pid = pid;
		x->in_proc = true;
		x->cpu_ns = cpu_ns;
		x->state = state;
		x->sysnr = sysnr >= INT32_MIN && sysnr <= INT32_MAX ? (int32_t)sysnr : -1;
	}
}

/* Read the file name under dir into buf (NUL-terminated). Its length, or -1. */
static ssize_t read_at(int dir, const char *name, char *buf, size_t len)
{
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

void threadtime_read_proc(struct threadtime *tt, uint32_t pid)
{
	char path[64], buf[512];
	int dfd, tfd;
	DIR *d;
	struct dirent *de;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		unsigned long long cpu;
		char *end, *rp;
		unsigned long tid = strtoul(de->d_name, &end, 10);

		if (*end || tid == 0 || tid > UINT32_MAX)
			continue;
		tfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (tfd < 0)
			continue;
		/* schedstat: "sum_exec_runtime run_delay pcount"; stat: "tid (comm) S ..." */
		if (read_at(tfd, "schedstat", buf, sizeof(buf)) > 0 &&
		    sscanf(buf, "%llu", &cpu) == 1 && read_at(tfd, "stat", buf, sizeof(buf)) > 0 &&
		    (rp = strrchr(buf, ')')) != NULL && rp[1] == ' ' && rp[2]) {
			char state = rp[2];
			long nr = -1;

			/* asleep: in which system call ("202 0x... sp pc", its six arguments
			 * between; "running" once it runs again), and with a timeout */
			if (state == 'S' && read_at(tfd, "syscall", buf, sizeof(buf)) > 0)
				nr = threadtime_proc_syscall(buf);
			threadtime_add_proc(tt, pid, (uint32_t)tid, cpu, state, nr);
		}
		close(tfd);
	}
	closedir(d);
}

long threadtime_proc_syscall(const char *text)
{
	unsigned long long arg[4] = { 0 };
	long nr;
	int n = sscanf(text, "%ld %llx %llx %llx %llx", &nr, &arg[0], &arg[1], &arg[2], &arg[3]);

	if (n < 1 || nr < 0 || nr >= SWITCHTOT_NR_SMALL)
		return -1;
	/* (a length left unread is none: no flag) */
	return switchtot_nr_of(nr, n >= 4 ? arg[2] : UINT64_MAX, arg[3]);
}

unsigned threadtime_kind_of_letter(char state, long sysnr)
{
	switch (state) {
	case 'R':
		return SWITCHTOT_PREEMPTED;
	case 'S':
		return switchtot_sleep_kind(sysnr);
	case 'D':
		return SWITCHTOT_DISK;
	default:
		return SWITCHTOT_OTHER;
	}
}

unsigned threadtime_kind_of_state(uint64_t st, long sysnr)
{
	if (st & 0x2) /* TRACEFS_TASK_UNINTERRUPTIBLE */
		return SWITCHTOT_DISK;
	if (st & 0x1) /* TRACEFS_TASK_INTERRUPTIBLE */
		return switchtot_sleep_kind(sysnr);
	if ((st & 0xff) == 0) /* runnable: preempted */
		return switchtot_preempt_kind(sysnr);
	return SWITCHTOT_OTHER;
}

unsigned threadtime_kind_of_call_fn(const char *fn)
{
	/* the calls switchtot_call_of() tells apart, by the name of their entry (arch_x86_64.h) */
	static const struct {
		const char *name;
		int nr;
	} calls[] = {
		{ "read", ARCH_NR_READ },
		{ "write", ARCH_NR_WRITE },
		{ "poll", ARCH_NR_POLL },
		{ "pread64", ARCH_NR_PREAD64 },
		{ "pwrite64", ARCH_NR_PWRITE64 },
		{ "readv", ARCH_NR_READV },
		{ "writev", ARCH_NR_WRITEV },
		{ "select", ARCH_NR_SELECT },
		{ "sched_yield", ARCH_NR_SCHED_YIELD },
		{ "sendto", ARCH_NR_SENDTO },
		{ "recvfrom", ARCH_NR_RECVFROM },
		{ "sendmsg", ARCH_NR_SENDMSG },
		{ "recvmsg", ARCH_NR_RECVMSG },
		{ "futex", ARCH_NR_FUTEX },
		{ "epoll_wait", ARCH_NR_EPOLL_WAIT },
		{ "pselect6", ARCH_NR_PSELECT6 },
		{ "ppoll", ARCH_NR_PPOLL },
		{ "epoll_pwait", ARCH_NR_EPOLL_PWAIT },
		{ "preadv", ARCH_NR_PREADV },
		{ "pwritev", ARCH_NR_PWRITEV },
		{ "epoll_pwait2", ARCH_NR_EPOLL_PWAIT2 },
		{ "futex_waitv", ARCH_NR_FUTEX_WAITV },
	};
	static const char *const prefix[] = { ARCH_SYSCALL_ENTRY_PREFIXES };
	const char *call = NULL;

	for (size_t p = 0; fn && !call && p < sizeof(prefix) / sizeof(prefix[0]); p++)
		if (strncmp(fn, prefix[p], strlen(prefix[p])) == 0)
			call = fn + strlen(prefix[p]);
	if (!call || !*call)
		return THREADTIME_NKINDS;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (strcmp(call, calls[i].name) == 0)
			return switchtot_preempt_kind(calls[i].nr);
	return SWITCHTOT_PREEMPTED_CALL;
}

const char *threadtime_kind_frame(unsigned kind)
{
	if (kind == THREADTIME_CPU)
		return "[on-cpu]";
	if (switchtot_is_preempt(kind))
		return "[off-cpu: preempted]";
	if (switchtot_is_sleep(kind))
		return "[off-cpu: sleeping]";
	if (kind == SWITCHTOT_DISK)
		return "[off-cpu: uninterruptible (disk I/O)]";
	return "[off-cpu: other]";
}

const char *threadtime_kind_detail(unsigned kind)
{
	/* the kinds that are not a system call's (disk I/O, other) say all in their frame */
	static const char *const frame[THREADTIME_NKINDS] = {
		[SWITCHTOT_PREEMPTED] = "[off-cpu: preempted by an interrupt]",
		[SWITCHTOT_SLEEPING] = "[off-cpu: sleeping in a system call]",
		[SWITCHTOT_FUTEX] = "[off-cpu: sleeping in futex]",
		[SWITCHTOT_FUTEX_TIMED] = "[off-cpu: sleeping in futex with a timeout]",
		[SWITCHTOT_EPOLL] = "[off-cpu: sleeping in epoll_wait]",
		[SWITCHTOT_PREEMPTED_CALL] = "[off-cpu: preempted leaving a system call]",
		[SWITCHTOT_SLEEP_READ] = "[off-cpu: sleeping in a read]",
		[SWITCHTOT_SLEEP_POLL] = "[off-cpu: sleeping in poll]",
		[SWITCHTOT_PREEMPT_WRITE] = "[off-cpu: preempted leaving a write]",
		[SWITCHTOT_PREEMPT_WRITEV] = "[off-cpu: preempted leaving writev]",
		[SWITCHTOT_PREEMPT_READ] = "[off-cpu: preempted leaving a read]",
		[SWITCHTOT_PREEMPT_FUTEX] = "[off-cpu: preempted leaving futex]",
		[SWITCHTOT_PREEMPT_YIELD] = "[off-cpu: preempted leaving sched_yield]",
		[SWITCHTOT_PREEMPT_POLL] = "[off-cpu: preempted leaving poll]",
		[SWITCHTOT_PREEMPT_WAKE] = "[off-cpu: preempted leaving a wake-up write]",
	};

	return kind < THREADTIME_NKINDS && frame[kind] ? frame[kind] : threadtime_kind_frame(kind);
}

/* The program's count of kind k as of time t: the waits ended, and the one under way. */
static uint64_t counted(const struct threadtime_ent *x, uint64_t t, unsigned k)
{
	const struct switchtot *e = &x->e;
	uint64_t v = e->off[k], end = t;

	if (e->waiting != k + 1 || e->t_exit)
		return v;
	if (x->in_proc && x->cpu_ns > e->ran) {
		/* It ran since: its switch-in went untraced, that much CPU time ago. */
		uint64_t d = x->cpu_ns - e->ran;

		end = t - e->t_out > d ? t - d : e->t_out;
	}
	return end > e->t_out ? v + (end - e->t_out) : v;
}

static uint64_t sub0(uint64_t x, uint64_t y)
{
	return x > y ? x - y : 0;
}

/* tid's window [A, B]: a is its entry at A (NULL: none), b at B. False when nothing to say. */
static bool window(const struct threadtime *tt, const struct threadtime_ent *a,
		   const struct threadtime_ent *b, struct threadtime_res *r)
{
	uint64_t A = tt->a.t, B = tt->b.t, start = A, end = B, sum = 0;

	memset(r, 0, sizeof(*r));
	r->pid = b->pid;
	r->tid = b->tid;
	if (b->has_e) {
		const struct switchtot *e = &b->e;

		if (e->t_exit && e->t_exit <= A)
			return false;
		if (e->t_exit) {
			end = e->t_exit < B ? e->t_exit : B;
			r->exited = true;
		}
		for (unsigned k = 0; k < THREADTIME_NKINDS; k++)
			r->off[k] = counted(b, B, k);
		if (a && a->has_e) {
			for (unsigned k = 0; k < THREADTIME_NKINDS; k++)
				r->off[k] = sub0(r->off[k], counted(a, A, k));
		} else if (a && a->in_proc && e->t_first > A) {
			/* Seen first after the start: off the CPU before, all but what it ran. */
			uint64_t pre = sub0(e->t_first - A, sub0(e->ran_first, a->cpu_ns));

			r->off[threadtime_kind_of_letter(a->state, a->sysnr)] += pre;
		} else if (!a) {
			/* Born in the window: it ran from its start to its first switch-out. */
			uint64_t born = sub0(e->t_first, e->ran_first);

			start = born > A ? born : A;
		}
	} else if (b->in_proc) {
		if (a && a->in_proc) {
			/* Never left the CPU, or never came back, in the whole window. */
			r->off[threadtime_kind_of_letter(b->state, b->sysnr)] =
				sub0(B - A, sub0(b->cpu_ns, a->cpu_ns));
		} else {
			/* Born in the window and never left the CPU. */
			start = sub0(B, b->cpu_ns);
			start = start > A ? start : A;
		}
	} else {
		return false;
	}
	if (end < start)
		end = start;
	r->life = end - start;
	for (unsigned k = 0; k < THREADTIME_NKINDS; k++) {
		if (r->off[k] > r->life - sum)
			r->off[k] = r->life - sum;
		sum += r->off[k];
	}
	r->cpu = r->life - sum;
	return true;
}

size_t threadtime_end(struct threadtime *tt, void (*cb)(void *ctx, const struct threadtime_res *r),
		      void *ctx)
{
	struct threadtime_snap tmp;
	struct threadtime_res r;
	size_t n = 0;

	if (tt->have_a) {
		for (size_t i = 0; i < tt->b.n; i++) {
			const struct threadtime_ent *b = &tt->b.v[i];

			if (window(tt, snap_find(&tt->a, b->tid), b, &r)) {
				cb(ctx, &r);
				n++;
			}
		}
	}
	/* This snapshot begins the next window; the exited are gone from it. */
	for (size_t i = 0; i < tt->b.n;) {
		struct threadtime_ent *b = &tt->b.v[i];

		if (b->has_e && b->e.t_exit) {
			tt->b.v[i] = tt->b.v[--tt->b.n];
			continue;
		}
		i++;
	}
	htab_clear(&tt->b.idx);
	for (size_t i = 0; i < tt->b.n; i++)
		(void)htab_put(&tt->b.idx, tt->b.v[i].tid, i); /* as many as before: no growth */
	tmp = tt->a;
	tt->a = tt->b;
	tt->b = tmp;
	tt->have_a = true;
	return n;
}
