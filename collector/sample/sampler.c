// SPDX-License-Identifier: MIT
/*
 * sampler.c - perf_event_open sampling of whole processes: the events, the per-CPU rings and
 * the targets (the drain of the rings is sampler_drain.c).
 *
 * Layout: one ring per online CPU, owned by a dummy software event on our own main thread (so
 * the ring fd never reports POLLHUP when a target exits). Sampling events are redirected into
 * the ring of their CPU with PERF_EVENT_IOC_SET_OUTPUT. Per-thread sampling opens one event per
 * thread of a target, with inheritance; SCOPE_CPUS opens one per CPU and keeps the targets'
 * samples by their pid (pidfilter) or in the drain.
 */
#include "sampler_priv.h"

#include "array.h"
#include "perfsysctl.h"
#include "tracefs.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SAMPLE_TYPE                                                                                \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

#define MAX_EVENTS (1u << 20)	     /* descriptors, whatever RLIMIT_NOFILE says */
#define THREAD_PASSES 16	     /* re-listings of /proc/PID/task until no new thread */
#define STACK_RINGS_MAX (256u << 20) /* ring memory over all CPUs when copying stacks */

static int sys_perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu, int group,
			       unsigned long flags)
{
	long fd = syscall(SYS_perf_event_open, a, pid, cpu, group, flags);

	return fd < 0 ? -errno : (int)fd;
}

static void attr_init(struct perf_event_attr *a, const struct sampler_opts *o, unsigned int freq,
		      unsigned int max_stack)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->freq = 1;
	a->sample_freq = freq;
	a->sample_type = SAMPLE_TYPE;
	a->sample_max_stack = (uint16_t)max_stack;
	if (o->stack_copy) {
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = SAMPLER_REGS_MASK;
		a->sample_stack_user = o->stack_copy;
	}
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->exclude_hv = 1;
	/* --no-kernel drops the kernel frames but keeps the sample: time spent in the kernel
	 * stays with the user stack that entered it (exclude_kernel would lose it). */
	a->exclude_callchain_kernel = o->exclude_kernel;
	a->exclude_callchain_user = 0;
	a->disabled = 1;
}

int sampler_probe_cycles(void)
{
	struct sampler_opts o = { 0 };
	struct perf_event_attr a;
	int fd;

	attr_init(&a, &o, SAMPLER_DEFAULT_FREQ, 0);
	a.sample_max_stack = 0; /* the sysctl's default: the probe asks only for the event */
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	fd = sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* Online CPUs from /sys (e.g. "0-3,5"), else 0..nprocs-1. */
static int online_cpus(int *cpus, unsigned int max, unsigned int *n)
{
	char buf[4096];
	unsigned int k = 0;
	ssize_t len;
	int fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len > 0) {
			char *p = buf;

			buf[len] = '\0';
			while (*p >= '0' && *p <= '9') {
				long a = strtol(p, &p, 10), b = a;

				if (*p == '-')
					b = strtol(p + 1, &p, 10);
				for (long c = a; c <= b && k < max; c++)
					cpus[k++] = (int)c;
				if (*p == ',')
					p++;
			}
		}
	}
	if (k == 0) {
		long np = sysconf(_SC_NPROCESSORS_ONLN);

		for (long c = 0; c < np && k < max; c++)
			cpus[k++] = (int)c;
	}
	*n = k;
	return k ? 0 : -ENODEV;
}

static int ring_open(struct sampler *s, struct ring *r, int cpu)
{
	struct perf_event_attr a = s->attr;
	struct epoll_event ev = { .events = EPOLLIN };
	size_t data = s->info.ring_bytes;
	long page = sysconf(_SC_PAGESIZE);
	int fd;

	r->fd = -1;
	r->cpu = cpu;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.freq = 0;
	a.sample_period = 0;
	a.disabled = 0;
	a.exclude_kernel = 1; /* counts nothing; no need to ask for kernel privileges */
	/* Readable a quarter full (sampler.h, ring_wakeup_bytes): the reader drains on a timer. */
	a.watermark = 1;
	a.wakeup_watermark = (uint32_t)s->info.ring_wakeup_bytes;
	/* On our main thread, which lives as long as we do: an owner whose task exited would
	 * make the fd report POLLHUP for ever. */
	fd = sys_perf_event_open(&a, getpid(), cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return fd;
	r->fd = fd;
	r->map_len = (size_t)page + data;
	r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		return -errno;
	}
	r->pg = r->map;
	r->bounce = aligned_alloc(8, PERFRING_MAX_RECORD);
	if (!r->bounce)
		return -ENOMEM;
	if (s->sb && !(r->payload = aligned_alloc(8, PERFRING_MAX_RECORD)))
		return -ENOMEM;
	ev.data.u32 = (uint32_t)(r - s->rings);
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	return 0;
}

static void ring_close(struct ring *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	if (r->fd >= 0)
		close(r->fd);
	free(r->bounce);
	free(r->payload);
}

static int evt_push(struct sampler *s, int fd, pid_t pid, enum evt_kind kind)
{
	int rv;

	if (s->nevts == MAX_EVENTS)
		return -EMFILE;
	if ((rv = ARRAY_GROW(s->evts, s->capevts, s->nevts + 1)) != 0)
		return rv;
	s->evts[s->nevts].fd = fd;
	s->evts[s->nevts].pid = pid;
	s->evts[s->nevts].kind = kind;
	s->nevts++;
	s->info.nfds++;
	return 0;
}

/* Close the events from index `from` on (rollback of a partial open). */
static void evts_truncate(struct sampler *s, size_t from)
{
	while (s->nevts > from) {
		close(s->evts[--s->nevts].fd);
		s->info.nfds--;
	}
}

/* Enable the events from index `from` on. 0 or -errno. */
static int evts_enable(struct sampler *s, size_t from)
{
	for (size_t i = from; i < s->nevts; i++)
		if (ioctl(s->evts[i].fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
			return -errno;
	return 0;
}

/*
 * One event per CPU for `tid` (or for every task if tid == -1), each into its CPU's ring,
 * enabled only once all of them are in place. Rolls back on failure.
 */
static int open_task(struct sampler *s, pid_t pid, pid_t tid)
{
	size_t first = s->nevts;
	bool cpu = sampler_mode_cpu(s->info.mode), sw = sampler_mode_switch(s->info.mode);
	int rv;

	for (unsigned int i = 0; i < s->nrings; i++) {
		for (int k = 0; k < 2; k++) {
			struct perf_event_attr a = k == 0 ? s->attr : s->sw_attr;
			enum evt_kind kind;
			uint64_t id;
			int fd;

			if ((k == 0 && !cpu) || (k == 1 && !sw))
				continue;
			a.inherit = tid != -1;
			/* The side band once per (thread, CPU): on the first event opened. In CPU
			 * scope it is every process's, filtered in user space. */
			if (k == 0 || !cpu)
				a.mmap = a.mmap2 = a.comm = a.comm_exec = a.task = 1;
			/* Every task: an idle CPU's ticks would be samples of the idle task. */
			if (tid == -1 && k == 0 && a.type == PERF_TYPE_SOFTWARE)
				a.exclude_idle = 1;
			fd = sys_perf_event_open(&a, tid, s->rings[i].cpu, -1,
						 PERF_FLAG_FD_CLOEXEC);
			if (k == 0 && (fd == -EACCES || fd == -EPERM) &&
			    a.exclude_callchain_kernel && !a.exclude_kernel) {
				/* Unprivileged (perf_event_paranoid >= 2): count user time only. */
				s->attr.exclude_kernel = a.exclude_kernel = 1;
				s->info.kernel_time_excluded = true;
				fd = sys_perf_event_open(&a, tid, s->rings[i].cpu, -1,
							 PERF_FLAG_FD_CLOEXEC);
			}
			if (fd < 0) {
				rv = fd;
				goto fail;
			}
			kind = k == 0 ? EVT_CPU : s->sb ? EVT_BPF_OUTPUT : EVT_SWITCH;
			if ((rv = evt_push(s, fd, pid, kind)) != 0) {
				close(fd);
				goto fail;
			}
			if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->rings[i].fd) < 0 ||
			    ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0) {
				rv = -errno;
				goto fail;
			}
			if ((rv = htab_put(&s->owner, id, (uint64_t)(uint32_t)tid)) != 0)
				goto fail;
			if (kind == EVT_SWITCH && (rv = htab_put(&s->swids, id, 1)) != 0)
				goto fail;
			if (kind == EVT_BPF_OUTPUT &&
			    ((rv = htab_put(&s->bpfids, id, 1)) != 0 ||
			     (rv = switchbpf_set_output(s->sb, s->rings[i].cpu, fd)) != 0))
				goto fail;
		}
	}
	if (tid == -1)
		return 0; /* every task's: enabled once the targets' filter is on (enable_cpus) */
	if ((rv = evts_enable(s, first)) == 0)
		return 0;
fail:
	evts_truncate(s, first);
	return rv;
}

/*
 * Mark as covered every thread whose FORK record is in the rings: it was created by a thread
 * we already sample, so it inherited the events. Reads the rings without consuming them.
 */
static void mark_inherited(struct sampler *s)
{
	for (unsigned int i = 0; i < s->nrings; i++) {
		struct ring *r = &s->rings[i];
		uint64_t head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);
		struct perfring_reader rd;
		struct perfring_rec rec;
		const void *p;
		size_t len;

		if (perfring_reader_init(&rd, (uint8_t *)r->map + r->pg->data_offset,
					 r->pg->data_size, r->pg->data_tail, head, r->bounce,
					 PERFRING_MAX_RECORD) != 0)
			continue;
		while (perfring_reader_next(&rd, &p, &len) == 1) {
			if (perfring_decode(&s->fmt, p, len, &rec) != 0)
				break;
			if (rec.type == PERF_RECORD_FORK)
				(void)htab_put(&s->opened,
					       (uint64_t)rec.u.task.pid << 32 | rec.u.task.tid, 1);
		}
	}
}

/*
 * Open every thread of `pid` not covered yet, listing /proc/PID/task again until a pass finds
 * no new thread: threads created before their creator's event was enabled are caught by a
 * later pass, those created after inherit it (and are recognised by their FORK record; one
 * created too close to the listing to have it is opened twice, see dedup_accept()).
 * Returns the threads opened or -errno.
 */
static int open_threads(struct sampler *s, pid_t pid)
{
	uint64_t key = (uint64_t)pid << 32; /* (pid, tid): a tid may be reused by another pid */
	char path[64];
	int total = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	for (int pass = 0; pass < THREAD_PASSES; pass++) {
		DIR *d = opendir(path);
		struct dirent *de;
		int added = 0, rv = 0;

		if (!d)
			return errno == ENOENT ? -ESRCH : -errno;
		if (pass > 0)
			mark_inherited(s);
		while ((de = readdir(d)) != NULL) {
			char *end;
			long tid = strtol(de->d_name, &end, 10);

			if (de->d_name[0] < '0' || de->d_name[0] > '9' || *end || tid <= 0 ||
			    tid > INT_MAX)
				continue;
			if (htab_get(&s->opened, key | (uint64_t)tid))
				continue;
			if (s->listed)
				s->listed(s->listed_arg, pid, (pid_t)tid);
			rv = open_task(s, pid, (pid_t)tid);
			if (rv == -ESRCH) { /* exited meanwhile */
				rv = 0;
				continue;
			}
			if (rv == 0)
				rv = htab_put(&s->opened, key | (uint64_t)tid, 1);
			if (rv != 0)
				break;
			added++;
		}
		closedir(d);
		if (rv != 0)
			return rv;
		total += added;
		if (added == 0)
			break;
	}
	return total;
}

int sampler_add_pid(struct sampler *s, pid_t pid)
{
	size_t first = s->nevts;
	char path[64];
	int rv;

	if (pid <= 0)
		return -EINVAL;
	if (htab_get(&s->targets, (uint64_t)pid))
		return -EEXIST;
	if (htab_count(&s->targets) >= MAX_TARGETS)
		return -ENOSPC;
	if (s->info.scope == SAMPLER_SCOPE_CPUS) {
		snprintf(path, sizeof(path), "/proc/%d", (int)pid);
		if (access(path, F_OK) != 0)
			return -ESRCH;
		if (s->pf && (rv = pidfilter_add(s->pf, (uint32_t)pid)) != 0)
			return rv;
		if (s->sb && (rv = switchbpf_add(s->sb, (uint32_t)pid)) != 0)
			return rv;
		return htab_put(&s->targets, (uint64_t)pid, 1);
	}
	rv = open_threads(s, pid);
	if (rv == 0 && s->nevts == first)
		rv = -ESRCH;
	if (rv < 0) {
		evts_truncate(s, first);
		return rv;
	}
	return htab_put(&s->targets, (uint64_t)pid, 1);
}

int sampler_remove_pid(struct sampler *s, pid_t pid)
{
	uint64_t *v = htab_get(&s->targets, (uint64_t)pid), key;
	struct htab kept;
	size_t k = 0, pos = 0;
	int rv = 0;

	if (pid <= 0 || !v)
		return -ENOENT;
	htab_remove(&s->targets, v);
	if (s->pf)
		(void)pidfilter_remove(s->pf, (uint32_t)pid); /* its samples then dropped here */
	if (s->sb)
		(void)switchbpf_remove(s->sb, (uint32_t)pid);
	for (size_t i = 0; i < s->nevts; i++) {
		struct evt *e = &s->evts[i];
		uint64_t id;

		if (e->pid != pid) {
			s->evts[k++] = *e;
			continue;
		}
		if (ioctl(e->fd, PERF_EVENT_IOC_ID, &id) == 0) {
			if ((v = htab_get(&s->owner, id)))
				htab_remove(&s->owner, v);
			if ((v = htab_get(&s->swids, id)))
				htab_remove(&s->swids, v);
			if ((v = htab_get(&s->bpfids, id)))
				htab_remove(&s->bpfids, v);
		}
		close(e->fd);
		s->info.nfds--;
	}
	s->nevts = k;
	/* The threads it covered: the set is rebuilt without them (no removal while walking). */
	htab_init(&kept);
	while ((v = htab_each(&s->opened, &pos, &key))) {
		if (key >> 32 == (uint64_t)(uint32_t)pid) {
			uint64_t *lk = htab_get(&s->lock, key & 0xffffffffu);

			if (lk)
				htab_remove(&s->lock, lk);
			continue;
		}
		if (rv == 0)
			rv = htab_put(&kept, key, *v);
	}
	if (rv == 0) {
		htab_fini(&s->opened);
		s->opened = kept;
	} else {
		htab_fini(&kept); /* out of memory: the old set stays, a little too large */
	}
	return 0;
}

/*
 * The sched_switch event: a sample in the context of the thread switched out, with the same
 * call chain, user registers and stack copy as a CPU sample, plus the tracepoint's raw record
 * (prev_state); context_switch adds a PERF_RECORD_SWITCH at every switch in and out of the
 * thread, which times the wait. Every event of the rings then carries PERF_SAMPLE_RAW, so
 * that one record format fits them all.
 */
static int switch_setup(struct sampler *s, const struct sampler_opts *o)
{
	struct tracefs_switch ts;
	int rv = tracefs_sched_switch(&ts);

	if (rv != 0)
		return rv;
	s->info.switch_id = ts.id;
	s->info.state_off = ts.state_off;
	s->info.state_size = ts.state_size;
	snprintf(s->tracefs_dir, sizeof(s->tracefs_dir), "%s", ts.dir);
	s->info.tracefs_dir = s->tracefs_dir;
	s->info.tracefs_mounted = ts.mounted;
	s->info.switch_period = o->switch_period ? o->switch_period : 1;
	s->attr.sample_type |= PERF_SAMPLE_RAW;
	/* With PERF_SAMPLE_PERIOD and a fixed period the kernel samples every tracepoint hit
	 * (perf_swevent_event): leave it out when only every Nth switch is wanted. CPU samples
	 * then weigh the nominal interval (1 / freq_hz). */
	if (s->info.switch_period > 1)
		s->attr.sample_type &= ~(uint64_t)PERF_SAMPLE_PERIOD;
	s->sw_attr = s->attr;
	s->sw_attr.type = PERF_TYPE_TRACEPOINT;
	s->sw_attr.config = ts.id;
	s->sw_attr.freq = 0;
	s->sw_attr.sample_period = s->info.switch_period;
	s->sw_attr.context_switch = 1;
	/* A switch happens in the kernel: excluding it would drop every sample. */
	s->sw_attr.exclude_kernel = 0;
	return 0;
}

/*
 * Whether mode m takes CPU samples beside the switch-outs' (wall): they weigh their period, so
 * the CPU clock is cpu-clock (ns), and a preempted thread's time is laid along them.
 */
static bool both_samples(enum sampler_mode m)
{
	return sampler_mode_cpu(m) && sampler_mode_switch(m);
}

/*
 * Off-CPU by BPF (switchbpf.h): the program loaded (attached once the events are enabled), and
 * the output event per CPU whose samples carry its records as raw data. It has the rings' record
 * format, with neither call chain nor stack copy of its own (the records hold the thread's).
 */
static int switch_bpf_setup(struct sampler *s, const struct sampler_opts *o)
{
	unsigned int depth = s->info.max_stack;
	struct switchbpf_opts bo = {
		.stack_bytes =
			o->stack_copy < SWITCHREC_MAX_STACK ? o->stack_copy : SWITCHREC_MAX_STACK,
		.kernel_depth = o->exclude_kernel	       ? 0
				: depth < SWITCHREC_MAX_KDEPTH ? depth
							       : SWITCHREC_MAX_KDEPTH,
		.user_depth = depth < SWITCHREC_MAX_UDEPTH ? depth : SWITCHREC_MAX_UDEPTH,
		.rate_hz = o->switch_rate,
		.carrier_rate_hz = o->switch_rate ? o->carrier_rate : 0,
		.period = o->switch_period,
		.name_filter = o->thread_filter,
		.self_time = switchbpf_kernel_stats_on(),
		.lay_preempted = both_samples(o->mode) && !o->keep_preempted,
		/* as densely as the thread's CPU time is sampled */
		.irq_period_ns = 1000000000ull / (o->freq_hz ? o->freq_hz : SAMPLER_DEFAULT_FREQ),
	};
	char *text = NULL;
	size_t len = 0;
	int rv = switchbpf_open(&bo, &s->sb, s->bpf_why, sizeof(s->bpf_why));

	if (rv != 0) {
		s->info.switch_bpf_why = s->bpf_why;
		return rv;
	}
	s->thread_filter = o->thread_filter;
	s->info.switch_period = o->switch_period ? o->switch_period : 1;
	s->info.switch_rate = o->switch_rate;
	s->info.carrier_rate = bo.carrier_rate_hz;
	s->attr.sample_type |= PERF_SAMPLE_RAW;
	s->sw_attr = s->attr;
	s->sw_attr.type = PERF_TYPE_SOFTWARE;
	s->sw_attr.config = PERF_COUNT_SW_BPF_OUTPUT;
	s->sw_attr.freq = 0;
	s->sw_attr.sample_period = 1;
	s->sw_attr.exclude_callchain_kernel = 1;
	s->sw_attr.exclude_callchain_user = 1;
	s->sw_attr.sample_stack_user = 0;
	/* Without kallsyms (hidden addresses) the tracing frames stay at the chains' leaf. */
	if (fg_read_file("/proc/kallsyms", 4u << 20, 256u << 20, &text, &len) == 0)
		(void)switchbpf_sched_range(text, len, &s->sched_lo, &s->sched_hi);
	free(text);
	return 0;
}

static void close_rings(struct sampler *s)
{
	for (unsigned int i = 0; i < s->nrings; i++) {
		ring_close(&s->rings[i]);
		memset(&s->rings[i], 0, sizeof(s->rings[i]));
	}
	s->nrings = 0;
}

static int open_rings(struct sampler *s, const int *cpus, unsigned int ncpus)
{
	int rv;

	for (unsigned int i = 0; i < ncpus; i++) {
		s->nrings = i + 1;
		if ((rv = ring_open(s, &s->rings[i], cpus[i])) != 0)
			return rv;
	}
	return 0;
}

static int setup(struct sampler *s, const struct sampler_opts *o)
{
	struct perfsysctl_stack fit;
	unsigned int ncpus, stack, freq;
	int rv;

	freq = o->freq_hz ? o->freq_hz : SAMPLER_DEFAULT_FREQ;
	stack = o->max_stack ? o->max_stack : SAMPLER_DEFAULT_STACK;
	s->info.ring_bytes = (size_t)(o->ring_kib ? o->ring_kib : SAMPLER_DEFAULT_RING_KIB) * 1024;
	if (o->stack_copy % 8 != 0 || o->stack_copy > SAMPLER_MAX_STACK_COPY)
		return -EINVAL;
	s->info.stack_copy = o->stack_copy;
	if (freq > SAMPLER_MAX_FREQ || stack > UINT16_MAX || s->info.ring_bytes < 4096 ||
	    (s->info.ring_bytes & (s->info.ring_bytes - 1)) != 0 ||
	    s->info.ring_bytes > (64u << 20) || o->scope > SAMPLER_SCOPE_CPUS)
		return -EINVAL;
	s->info.freq_hz = freq;

	/* The kernel refuses sample_max_stack above the sysctl (EOVERFLOW): raise it or clamp. */
	rv = perfsysctl_fit_stack(PERFSYSCTL_MAX_STACK, stack, !o->no_raise_max_stack, &fit);
	if (rv != 0)
		return rv;
	s->info.sysctl_max_stack = fit.sysctl;
	s->info.raised_max_stack = fit.raised;
	s->info.raise_err = fit.raise_err;
	s->info.max_stack = fit.depth;
	attr_init(&s->attr, o, freq, fit.depth);
	if ((unsigned int)o->mode >= SAMPLER_MODE_NONE) /* the last; it samples nothing */
		return -EINVAL;
	s->info.mode = o->mode;

	/* Wall: a CPU sample weighs its period, which is nanoseconds only for cpu-clock. */
	s->info.cycles_err =
		o->force_cpu_clock || both_samples(o->mode) ? -ECANCELED : sampler_probe_cycles();
	if (s->info.cycles_err == 0) {
		s->attr.type = PERF_TYPE_HARDWARE;
		s->attr.config = PERF_COUNT_HW_CPU_CYCLES;
		s->info.event = SAMPLER_EVENT_CYCLES;
		s->info.event_name = "cycles";
	} else {
		s->info.event = SAMPLER_EVENT_CPU_CLOCK;
		s->info.event_name = "cpu-clock";
	}
	if ((rv = online_cpus(s->cpus, MAX_CPUS, &ncpus)) != 0)
		return rv;
	s->info.ncpus = ncpus;
	return 0;
}

/* The rings, sized for the records to come, once the events' format is settled. */
static int setup_rings(struct sampler *s, const struct sampler_opts *o)
{
	unsigned int ncpus = s->info.ncpus;
	size_t base;
	int rv;

	s->fmt.sample_type = s->attr.sample_type;
	s->fmt.sample_id_all = true;
	s->fmt.sample_regs_user = s->attr.sample_regs_user;
	base = s->info.ring_bytes;
	if (o->stack_copy && !o->ring_kib) {
		/* Room for 128 copies per ring between drains (a slow drain at 999 Hz on a busy
		 * machine), 1024 when every switch takes one (a few hundred switches per second
		 * and CPU while the recording waits for an agent's tables), but at most
		 * STACK_RINGS_MAX over all rings. */
		bool every = o->mode != SAMPLER_MODE_CPU && !(s->sb && o->switch_rate);
		/* at a switch rate, room for a drain gap's stacks and a start's (a few quotas) */
		unsigned int rate = o->switch_rate + (o->switch_rate ? o->carrier_rate : 0);
		size_t copies = every ? 1024 : rate / 2 > 128 ? rate / 2 : 128;

		if (copies > 1024)
			copies = 1024;

		while (s->info.ring_bytes < (size_t)o->stack_copy * copies &&
		       s->info.ring_bytes * 2 * ncpus <= STACK_RINGS_MAX)
			s->info.ring_bytes *= 2;
	}
	s->info.ring_bytes_wanted = s->info.ring_bytes;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		return -errno;
	s->rings = calloc(ncpus, sizeof(*s->rings));
	if (!s->rings)
		return -ENOMEM;
	for (;;) {
		s->info.ring_wakeup_bytes = s->info.ring_bytes / 4;
		rv = open_rings(s, s->cpus, ncpus);
		/* Grown rings beyond the locked memory the kernel grants us (perf_event_mlock_kb
		 * per CPU, then RLIMIT_MEMLOCK, without CAP_IPC_LOCK: a container): halve them,
		 * down to the size asked for, before giving up. */
		if (rv != -EPERM || s->info.ring_bytes / 2 < base)
			return rv;
		close_rings(s);
		s->info.ring_bytes /= 2;
	}
}

/*
 * SCOPE_CPUS: the events for every task. When the scope was the sampler's choice and the
 * kernel refuses CPU-wide events (not privileged: perf_event_paranoid > 0 without
 * CAP_PERFMON), fall back to THREADS, undoing what the refused attempt changed.
 */
static int open_cpus(struct sampler *s, enum sampler_scope asked, bool no_filter)
{
	struct perf_event_attr attr = s->attr;
	bool excluded = s->info.kernel_time_excluded;
	int rv = open_task(s, -1, -1);

	if ((rv == -EACCES || rv == -EPERM) && asked == SAMPLER_SCOPE_AUTO) {
		s->attr = attr;
		s->info.kernel_time_excluded = excluded;
		s->info.scope = SAMPLER_SCOPE_THREADS;
		s->info.cpus_err = rv;
		return 0;
	}
	if (rv != 0)
		return rv;
	/* The kernel-side filter of CPU samples is loaded now and filled as targets are added; it
	 * is attached, and the events enabled, once they are in (enable_cpus). */
	if (s->info.mode == SAMPLER_MODE_OFFCPU)
		s->info.filter_err = -ECANCELED;
	else
		s->info.filter_err = no_filter ? -ECANCELED : pidfilter_open(&s->pf);
	return 0;
}

/*
 * SCOPE_CPUS, the targets added: attach the filter to every event (one that refuses it, or
 * the first one: then none, and the filter is dropped, has its samples filtered in user
 * space), then enable them.
 */
static int enable_cpus(struct sampler *s)
{
	bool first = true;
	int rv;

	for (size_t i = 0; s->pf && i < s->nevts; i++) {
		if (s->evts[i].kind != EVT_CPU)
			continue;
		rv = pidfilter_attach(s->pf, s->evts[i].fd);
		if (rv != 0) {
			s->info.filter_err = rv;
			if (first) {
				pidfilter_close(s->pf);
				s->pf = NULL;
			}
		}
		first = false;
	}
	if ((rv = evts_enable(s, 0)) != 0)
		return rv;
	/* Its records have somewhere to go now. */
	return s->sb ? switchbpf_attach(s->sb) : 0;
}

/*
 * Off-CPU and wall: the BPF program in CPU scope, or the tracepoint per thread (asked, or the
 * program refused: info.switch_bpf_err). An explicit SCOPE_CPUS takes no fallback.
 */
static int switch_pick(struct sampler *s, const struct sampler_opts *o)
{
	int rv;

	if (s->info.scope == SAMPLER_SCOPE_CPUS) {
		rv = switch_bpf_setup(s, o);
		s->info.switch_bpf_err = rv;
		if (rv == 0)
			return 0;
		if (o->scope == SAMPLER_SCOPE_CPUS)
			return rv;
		s->info.scope = SAMPLER_SCOPE_THREADS;
	} else {
		s->info.switch_bpf_err = -ECANCELED;
		s->info.switch_bpf_why = "per-thread events were asked for";
	}
	return switch_setup(s, o);
}

int sampler_open(const struct sampler_opts *opts, const pid_t *pids, size_t n, struct sampler **out)
{
	struct sampler *s = calloc(1, sizeof(*s));
	int rv;

	if (!s)
		return -ENOMEM;
	s->epfd = -1;
	s->listed = opts->listed;
	s->listed_arg = opts->listed_arg;
	if ((rv = setup(s, opts)) != 0)
		goto fail;
	/* AUTO: CPU-wide, or THREADS when the kernel refuses (open_cpus, switch_pick). */
	s->info.scope = opts->scope == SAMPLER_SCOPE_AUTO ? SAMPLER_SCOPE_CPUS : opts->scope;
	if (s->info.mode != SAMPLER_MODE_CPU && (rv = switch_pick(s, opts)) != 0)
		goto fail;
	if ((rv = setup_rings(s, opts)) != 0)
		goto fail;
	if (s->info.scope == SAMPLER_SCOPE_CPUS &&
	    (rv = open_cpus(s, opts->scope, opts->no_kernel_filter)) != 0)
		goto fail;
	if (s->sb && s->info.scope == SAMPLER_SCOPE_THREADS) {
		/* The program loaded but CPU-wide events were refused: tracepoints per thread. */
		switchbpf_close(s->sb);
		s->sb = NULL;
		s->info.switch_bpf_err = s->info.cpus_err;
		s->info.switch_bpf_why = "CPU-wide events were refused";
		s->attr.sample_type &= ~(uint64_t)PERF_SAMPLE_RAW;
		if ((rv = switch_setup(s, opts)) != 0)
			goto fail;
		s->fmt.sample_type = s->attr.sample_type;
	}
	for (size_t i = 0; i < n; i++) {
		rv = sampler_add_pid(s, pids[i]);
		if (rv == -EEXIST)
			continue;
		if (rv != 0)
			goto fail;
	}
	if (s->info.scope == SAMPLER_SCOPE_CPUS && (rv = enable_cpus(s)) != 0)
		goto fail;
	*out = s;
	return 0;
fail:
	sampler_close(s);
	return rv;
}

int sampler_fd(const struct sampler *s)
{
	return s->epfd;
}

const struct sampler_info *sampler_info(const struct sampler *s)
{
	return &s->info;
}

void sampler_stats(const struct sampler *s, struct sampler_stats *out)
{
	struct switchstats b;

	*out = s->st;
	if (!s->sb)
		return;
	switchbpf_stats(s->sb, &b);
	out->switch_filtered = b.filtered;
	out->switch_seen = b.outs;
	out->switch_skipped = b.skipped;
	out->switch_taken = b.taken;
	out->switch_ends = b.ins;
	out->switch_ends_late = b.ins_late;
	out->switch_lost = b.out_lost + b.in_lost;
	out->switch_laid = b.laid;
	out->switch_laid_taken = b.laid_taken;
	out->switch_laid_capped = b.laid_capped;
	out->switch_carrier_seen = b.carrier_outs;
	out->switch_carrier_taken = b.carrier_taken;
	out->stack_short = b.stack_short;
	out->stack_none = b.stack_none;
	out->switch_period_ns = b.period;
	out->totals_full = b.tot_full;
	out->totals_at_exit = b.tot_at_exit;
	out->switch_self_ns = b.self_ns;
	out->switch_self_runs = b.self_runs;
}

int sampler_totals(const struct sampler *s, switchbpf_total_cb cb, void *ctx)
{
	return s->sb ? switchbpf_totals(s->sb, cb, ctx) : -EOPNOTSUPP;
}

int sampler_forget_thread(struct sampler *s, uint32_t tid)
{
	return s->sb ? switchbpf_forget(s->sb, tid) : 0;
}

int sampler_carrier(struct sampler *s, uint32_t tid)
{
	if (!s->sb || !s->info.carrier_rate)
		return 0;
	return switchbpf_carrier(s->sb, tid);
}

int sampler_keep_name(struct sampler *s, const char *comm, bool keep)
{
	if (!s->sb || !s->thread_filter)
		return 0;
	return switchbpf_keep_name(s->sb, comm, keep);
}

void sampler_disable(struct sampler *s)
{
	s->disabled = true;
	switchbpf_detach(s->sb);
	for (size_t i = 0; i < s->nevts; i++)
		(void)ioctl(s->evts[i].fd, PERF_EVENT_IOC_DISABLE, 0);
}

void sampler_close(struct sampler *s)
{
	if (!s)
		return;
	switchbpf_close(s->sb); /* detached first: no record to a closed event */
	evts_truncate(s, 0);
	pidfilter_close(s->pf);
	close_rings(s);
	if (s->epfd >= 0)
		close(s->epfd);
	free(s->rings);
	free(s->evts);
	htab_fini(&s->owner);
	htab_fini(&s->lock);
	htab_fini(&s->opened);
	htab_fini(&s->targets);
	htab_fini(&s->swids);
	htab_fini(&s->bpfids);
	free(s);
}
