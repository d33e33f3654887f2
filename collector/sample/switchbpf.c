// SPDX-License-Identifier: MIT
/*
 * switchbpf.c - load, feed and read the off-CPU BPF program (see switchbpf.h), and decode its
 * records.
 *
 * libbpf's error space stops here: its calls return -errno (1.x) or NULL with errno set, and
 * it prints nothing (its print callback is silenced once: library modules never print).
 */
#include "switchbpf.h"

#include "perfsysctl.h"
#include "privs.h"
#include "bpf_skel.h"
#include "util.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#define VLOG_BYTES (1u << 20) /* the verifier's log of a refused load */

struct switchbpf {
	struct switch_bpf *skel;
	struct bpf_link *link;
	int ncpus; /* possible CPUs: the per-CPU maps' width */
	/* the program's totals array (a slot per thread), mapped read-only */
	const struct switchtot *tot;
	size_t tot_len;
	uint32_t slots; /* its length */
};

bool switchbpf_kernel_stats_on(void)
{
	unsigned int v = 0;

	return perfsysctl_read(SWITCHBPF_STATS_SYSCTL, &v) == 0 && v == 1;
}

/* libbpf's first warning since the last load began (its print callback has no context: one
 * load at a time, as this module's contract says). */
static char libbpf_said[160];

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	size_t n;

	if (level != LIBBPF_WARN || libbpf_said[0])
		return 0;
	(void)vsnprintf(libbpf_said, sizeof(libbpf_said), fmt, ap);
	n = strlen(libbpf_said);
	while (n && (libbpf_said[n - 1] == '\n' || libbpf_said[n - 1] == ' '))
		libbpf_said[--n] = '\0';
	return 0;
}

/* The verifier's decisive line: the last one of its log that is not its statistics. */
static bool verifier_line(const char *log, char *out, size_t len)
{
	static const char *const stat[] = { "processed ", "verification time", "stack depth",
					    "mark_precise", "-- " };
	const char *best = NULL, *p = log;
	size_t best_n = 0;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		bool skip = n == 0;

		for (size_t i = 0; !skip && i < sizeof(stat) / sizeof(stat[0]); i++)
			skip = strncmp(p, stat[i], strlen(stat[i])) == 0;
		if (!skip) {
			best = p;
			best_n = n;
		}
		p = nl ? nl + 1 : NULL;
	}
	if (!best)
		return false;
	snprintf(out, len, "%.*s", (int)(best_n < 120 ? best_n : 120), best);
	return true;
}

static bool cap_held(uint64_t caps, int c)
{
	return (caps >> c) & 1u;
}

int switchbpf_why_refused(const struct switchbpf_refusal *r, char *buf, size_t len)
{
	bool admin = cap_held(r->cap_eff, PRIVS_CAP_SYS_ADMIN);
	bool knows_bpf = r->cap_last_cap >= PRIVS_CAP_BPF;
	bool bpf = admin || (knows_bpf && cap_held(r->cap_eff, PRIVS_CAP_BPF));
	bool perfmon = admin || (knows_bpf && cap_held(r->cap_eff, PRIVS_CAP_PERFMON));
	bool old = r->major && (r->major < 5 || (r->major == 5 && r->minor < 15));
	bool locked = r->lockdown && strstr(r->lockdown, "[confidentiality]");
	bool has_log = r->log && r->log[0];
	bool helper =
		has_log && (strstr(r->log, "unknown func") || strstr(r->log, "invalid func") ||
			    strstr(r->log, "cannot use helper"));
	const char *said = r->libbpf && r->libbpf[0] ? r->libbpf : strerror(-r->err);
	char line[128] = "";

	if (!knows_bpf && !admin) {
		snprintf(buf, len,
			 "no CAP_SYS_ADMIN (Linux %d.%d knows no CAP_BPF to stand for it)",
			 r->major, r->minor);
		return -EPERM;
	}
	if (!bpf || !perfmon) {
		snprintf(buf, len, "no %s%s%s (nor CAP_SYS_ADMIN, which stands for %s)",
			 bpf ? "" : "CAP_BPF", !bpf && !perfmon ? " and no " : "",
			 perfmon ? "" : "CAP_PERFMON", !bpf && !perfmon ? "both" : "it");
		return -EPERM;
	}
	if (locked && (helper || r->err == -EPERM)) {
		snprintf(buf, len,
			 "the kernel is locked down (lockdown=confidentiality): it lets no "
			 "BPF program read memory");
		return -EPERM;
	}
	if (has_log && verifier_line(r->log, line, sizeof(line))) {
		if (old || helper)
			snprintf(buf, len,
				 "the kernel lacks a helper the program calls (Linux 5.15 or later "
				 "has them; this is %d.%d): the verifier says \"%s\"",
				 r->major, r->minor, line);
		else
			snprintf(buf, len, "the kernel's verifier refused the program (%s): \"%s\"",
				 strerror(-r->err), line);
		return -EOPNOTSUPP;
	}
	if (r->err == -EPERM || r->err == -EACCES) {
		snprintf(buf, len,
			 "bpf() refused (%s) though CAP_BPF and CAP_PERFMON are held: a seccomp "
			 "filter (a container's default profile) or a security module forbids it",
			 strerror(-r->err));
		return -EPERM;
	}
	if (old)
		snprintf(buf, len, "Linux %d.%d is too old (5.15 or later is needed): %s", r->major,
			 r->minor, said);
	else
		snprintf(buf, len, "the kernel refused the program: %s", said);
	return -EOPNOTSUPP;
}

/* Why the load failed with err (vlog: the verifier's log, "" if it did not run), into why. */
static int load_refused(int err, const char *vlog, char *why, size_t len)
{
	struct switchbpf_refusal r = { .err = err, .log = vlog, .libbpf = libbpf_said };
	char lockdown[128];
	struct privs p;
	struct utsname u;

	if (privs_read("/proc", &p) == 0) {
		r.cap_eff = p.cap_eff;
		r.cap_last_cap = p.cap_last_cap == PRIVS_UNKNOWN ? PRIVS_CAP_BPF : p.cap_last_cap;
	} else { /* unknown: held, so that the kernel's answer decides */
		r.cap_eff = ~0ull;
		r.cap_last_cap = PRIVS_CAP_BPF;
	}
	if (uname(&u) == 0 && sscanf(u.release, "%d.%d", &r.major, &r.minor) != 2)
		r.major = r.minor = 0;
	if (fg_read_small("/sys/kernel/security/lockdown", lockdown, sizeof(lockdown)) == 0)
		r.lockdown = lockdown;
	return switchbpf_why_refused(&r, why, len);
}

/*
 * Does the kernel pass prev_state to sched_switch's probes (Linux 5.18's fa2c3254d7cf)? Its
 * BTF says: the probe's type, typedef btf_trace_sched_switch, is a pointer to a function of
 * (void *, bool preempt, prev, next, unsigned int prev_state) there, of four parameters before.
 * Without an answer the program reads the task's own state field (CO-RE), right on every kernel
 * but for a race prev_state was added to close.
 */
static bool state_is_an_arg(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *t;
	bool yes = false;
	int id;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	t = id > 0 ? btf__type_by_id(btf, (uint32_t)id) : NULL;
	t = t ? btf__type_by_id(btf, t->type) : NULL; /* the pointer */
	t = t && btf_is_ptr(t) ? btf__type_by_id(btf, t->type) : NULL;
	if (t && btf_is_func_proto(t))
		yes = btf_vlen(t) >= 5;
	btf__free(btf);
	return yes;
}

int switchbpf_open(const struct switchbpf_opts *o, struct switchbpf **out, char *why, size_t whylen)
{
	static bool silenced;
	struct switchbpf *b;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	char *vlog = NULL;
	int rv;

	if (whylen)
		why[0] = '\0';
	if (o->rate_hz > SWITCHBPF_MAX_RATE || o->stack_bytes % 8 != 0 ||
	    o->stack_bytes > SWITCHREC_MAX_STACK || o->kernel_depth > SWITCHREC_MAX_KDEPTH ||
	    o->user_depth > SWITCHREC_MAX_UDEPTH) {
		snprintf(why, whylen, "bad options");
		return -EINVAL;
	}
	if (!silenced) {
		libbpf_set_print(quiet);
		silenced = true;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		snprintf(why, whylen,
			 "the kernel has no BTF (/sys/kernel/btf/vmlinux: CONFIG_DEBUG_INFO_BTF)");
		return -ENOENT;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->ncpus = libbpf_num_possible_cpus();
	if (b->ncpus <= 0 || online <= 0) {
		rv = b->ncpus < 0 ? b->ncpus : -ENODEV;
		snprintf(why, whylen, "cannot count the CPUs");
		goto fail;
	}
	libbpf_said[0] = '\0';
	b->skel = switchbpf_skel_open();
	if (!b->skel) {
		rv = -errno;
		snprintf(why, whylen, "libbpf cannot open the program: %s", libbpf_said);
		goto fail;
	}
	b->skel->rodata->stack_bytes = o->stack_bytes;
	b->skel->rodata->kernel_depth = o->kernel_depth;
	b->skel->rodata->user_depth = o->user_depth;
	b->skel->rodata->state_arg = state_is_an_arg();
	b->skel->rodata->window_ns = SWITCHBPF_WINDOW_NS;
	b->skel->rodata->name_filter = o->name_filter;
	b->skel->rodata->self_time = o->self_time;
	b->skel->rodata->lay_preempted = o->lay_preempted;
	b->skel->rodata->irq_period = o->lay_preempted ? o->irq_period_ns : 0;
	b->slots =
		o->max_threads && o->max_threads < SWITCHTOT_MAX ? o->max_threads : SWITCHTOT_MAX;
	b->skel->rodata->max_slots = b->slots;
	if (o->rate_hz) {
		/* rate_hz stacks a second over all CPUs: per window and CPU, x 2^32 */
		uint64_t q = ((uint64_t)o->rate_hz << 32) / (1000000000ull / SWITCHBPF_WINDOW_NS) /
			     (uint64_t)online;

		b->skel->rodata->quota = q ? q : 1;
		q = ((uint64_t)o->carrier_rate_hz << 32) / (1000000000ull / SWITCHBPF_WINDOW_NS) /
		    (uint64_t)online;
		b->skel->rodata->carrier_quota = o->carrier_rate_hz ? (q ? q : 1) : 0;
	} else {
		b->skel->rodata->quota = 0;
		b->skel->rodata->fixed_thr =
			o->period > 1 ? SWITCHREC_ONE / o->period : SWITCHREC_ONE;
	}
	if ((rv = bpf_map__set_max_entries(b->skel->maps.scratch, (uint32_t)b->ncpus)) != 0) {
		snprintf(why, whylen, "libbpf refused the scratch map's size");
		goto fail;
	}
	if ((rv = bpf_map__set_max_entries(b->skel->maps.totals, b->slots)) != 0 ||
	    (rv = bpf_map__set_max_entries(b->skel->maps.free_slots, b->slots)) != 0) {
		snprintf(why, whylen, "libbpf refused the totals' size");
		goto fail;
	}
	/* A refused program's verifier log says why (libbpf loads it again to fill it). */
	vlog = calloc(1, VLOG_BYTES);
	if (vlog && bpf_program__set_log_buf(b->skel->progs.fg_switch, vlog, VLOG_BYTES) != 0) {
		free(vlog);
		vlog = NULL;
	}
	libbpf_said[0] = '\0';
	rv = switchbpf_skel_load(b->skel);
	if (rv != 0) {
		rv = load_refused(rv, vlog ? vlog : "", why, whylen);
		goto fail;
	}
	free(vlog);
	vlog = NULL;
	b->tot_len = b->slots * sizeof(struct switchtot);
	b->tot =
		mmap(NULL, b->tot_len, PROT_READ, MAP_SHARED, bpf_map__fd(b->skel->maps.totals), 0);
	if (b->tot == MAP_FAILED) {
		rv = -errno;
		b->tot = NULL;
		snprintf(why, whylen, "cannot map the program's totals");
		goto fail;
	}
	*out = b;
	return 0;
fail:
	switchbpf_close(b);
	free(vlog);
	return rv;
}

int switchbpf_set_output(struct switchbpf *b, int cpu, int perf_fd)
{
	uint32_t key = (uint32_t)cpu;

	if (cpu < 0)
		return -EINVAL;
	return bpf_map_update_elem(bpf_map__fd(b->skel->maps.out), &key, &perf_fd, BPF_ANY) < 0
		       ? -errno
		       : 0;
}

int switchbpf_add(struct switchbpf *b, uint32_t tgid)
{
	uint32_t one = 1;

	return bpf_map_update_elem(bpf_map__fd(b->skel->maps.targets), &tgid, &one, BPF_ANY) < 0
		       ? -errno
		       : 0;
}

int switchbpf_remove(struct switchbpf *b, uint32_t tgid)
{
	if (bpf_map_delete_elem(bpf_map__fd(b->skel->maps.targets), &tgid) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int switchbpf_keep_name(struct switchbpf *b, const char *comm, bool keep)
{
	char key[16] = { 0 };
	uint8_t v = keep;

	strncpy(key, comm, sizeof(key) - 1);
	return bpf_map_update_elem(bpf_map__fd(b->skel->maps.names), key, &v, BPF_ANY) < 0 ? -errno
											   : 0;
}

int switchbpf_carrier(struct switchbpf *b, uint32_t tid)
{
	uint8_t one = 1;

	if (bpf_map_update_elem(bpf_map__fd(b->skel->maps.carriers), &tid, &one, BPF_ANY) < 0)
		return -errno;
	/* each thread looks itself up again at its next switch-out */
	__atomic_add_fetch(&b->skel->bss->carriers_gen, 1, __ATOMIC_RELEASE);
	return 0;
}

int switchbpf_attach(struct switchbpf *b)
{
	if (b->link)
		return 0;
	b->link = bpf_program__attach(b->skel->progs.fg_switch);
	return b->link ? 0 : -errno;
}

void switchbpf_detach(struct switchbpf *b)
{
	if (b && b->link) {
		bpf_link__destroy(b->link);
		b->link = NULL;
	}
}

void switchbpf_stats(const struct switchbpf *b, struct switchstats *sum)
{
	struct switchstats *per = calloc((size_t)b->ncpus, sizeof(*per));
	uint32_t zero = 0;

	uint64_t periods = 0;

	memset(sum, 0, sizeof(*sum));
	if (!per)
		return;
	if (bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.stats), &zero, per) == 0) {
		for (int c = 0; c < b->ncpus; c++) {
			/* the period: the mean over the CPUs that have one */
			if (per[c].period) {
				sum->period += per[c].period;
				periods++;
			}
			sum->filtered += per[c].filtered;
			sum->outs += per[c].outs;
			sum->taken += per[c].taken;
			sum->skipped += per[c].skipped;
			sum->out_lost += per[c].out_lost;
			sum->ins += per[c].ins;
			sum->ins_late += per[c].ins_late;
			sum->in_lost += per[c].in_lost;
			sum->stack_short += per[c].stack_short;
			sum->stack_none += per[c].stack_none;
			sum->tot_full += per[c].tot_full;
			sum->tot_at_exit += per[c].tot_at_exit;
			sum->laid += per[c].laid;
			sum->laid_taken += per[c].laid_taken;
			sum->laid_capped += per[c].laid_capped;
			sum->carrier_outs += per[c].carrier_outs;
			sum->carrier_taken += per[c].carrier_taken;
			sum->self_ns += per[c].self_ns;
			sum->self_runs += per[c].self_runs;
		}
	}
	if (periods)
		sum->period /= periods;
	free(per);
}

/* Slots handed out so far (the program's count, capped). */
static uint32_t slots_used(const struct switchbpf *b)
{
	uint32_t n = __atomic_load_n(&b->skel->bss->slots_used, __ATOMIC_ACQUIRE);

	return n < b->slots ? n : b->slots;
}

_Static_assert(sizeof(struct switchtot) % 8 == 0, "a slot is copied in 8-byte words");

/*
 * One consistent copy of slot e: its seq even and the same before and after the copy. The copy
 * is made of acquire loads, so that the second look at seq cannot come before any of them.
 */
static int read_total(const struct switchtot *e, struct switchtot *out)
{
	const uint64_t *src = (const uint64_t *)(const void *)e;

	for (int i = 0; i < 8; i++) {
		uint64_t seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);

		if (seq & 1)
			continue;
		for (size_t w = 0; w < sizeof(*out) / 8; w++) {
			uint64_t v = __atomic_load_n(&src[w], __ATOMIC_ACQUIRE);

			memcpy((char *)out + w * 8, &v, 8);
		}
		if (__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) == seq && out->seq == seq)
			return 0;
	}
	return -EAGAIN;
}

int switchbpf_totals(const struct switchbpf *b, switchbpf_total_cb cb, void *ctx)
{
	uint32_t n = slots_used(b);
	struct switchtot t;
	int rv;

	for (uint32_t i = 0; i < n; i++)
		if (b->tot[i].tid && read_total(&b->tot[i], &t) == 0 && t.tid &&
		    (rv = cb(ctx, t.tid, &t)) != 0)
			return rv;
	return 0;
}

int switchbpf_forget(struct switchbpf *b, uint32_t tid)
{
	const struct switchtot zero = { 0 };
	int tot_fd = bpf_map__fd(b->skel->maps.totals);
	int free_fd = bpf_map__fd(b->skel->maps.free_slots);
	uint32_t n = slots_used(b);

	/* An exited thread's slot: the program writes it no more (its thread's storage went
	 * with the thread), so it is cleared, then offered to the next new thread. */
	for (uint32_t i = 0; i < n; i++) {
		if (b->tot[i].tid != tid || !__atomic_load_n(&b->tot[i].t_exit, __ATOMIC_ACQUIRE))
			continue;
		if (bpf_map_update_elem(tot_fd, &i, &zero, BPF_ANY) < 0 ||
		    bpf_map_update_elem(free_fd, NULL, &i, BPF_ANY) < 0)
			return -errno;
	}
	return 0;
}

void switchbpf_close(struct switchbpf *b)
{
	if (!b)
		return;
	switchbpf_detach(b);
	if (b->tot)
		munmap((void *)b->tot, b->tot_len);
	switchbpf_skel_destroy(b->skel);
	free(b);
}

/* ---- decoding ------------------------------------------------------------------------------ */

int switchrec_decode(const void *raw, size_t len, struct switchrec_view *out)
{
	const uint8_t *p = raw;
	size_t need;

	if (((uintptr_t)raw & 7) != 0)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (len < sizeof(out->h))
		return -EBADMSG;
	memcpy(&out->h, p, sizeof(out->h));
	if (out->h.kind == SWITCHREC_IN) {
		/* an end carries nothing after the header */
		if (out->h.nr_kernel || out->h.nr_user || out->h.stack_len)
			return -EBADMSG;
		return 0;
	}
	if (out->h.kind != SWITCHREC_OUT || out->h.nr_kernel > SWITCHREC_MAX_KDEPTH ||
	    out->h.nr_user > SWITCHREC_MAX_UDEPTH || out->h.stack_len > SWITCHREC_MAX_STACK ||
	    out->h.thr == 0 || out->h.thr > SWITCHREC_ONE)
		return -EBADMSG;
	need = sizeof(out->h) + ((size_t)out->h.nr_kernel + out->h.nr_user) * 8 + out->h.stack_len;
	if (need > len)
		return -EBADMSG;
	p += sizeof(out->h);
	if (out->h.nr_kernel)
		out->kernel = (const uint64_t *)(const void *)p;
	p += (size_t)out->h.nr_kernel * 8;
	if (out->h.nr_user)
		out->user = (const uint64_t *)(const void *)p;
	p += (size_t)out->h.nr_user * 8;
	if (out->h.stack_len)
		out->stack = p;
	return 0;
}

/* include/linux/sched.h's TASK_* bits the tracepoint's report is made of. */
#define TASK_REPORT 0x7f
#define TASK_UNINTERRUPTIBLE 0x2
#define TASK_NOLOAD 0x400
#define TASK_RTLOCK_WAIT 0x1000
#define REPORT_IDLE 0x80
#define REPORT_PREEMPTED 0x100

uint64_t switchrec_state(uint32_t prev_state, uint32_t flags)
{
	uint32_t s;

	if (flags & SWITCHREC_F_PREEMPT)
		return REPORT_PREEMPTED;
	if ((prev_state & (TASK_UNINTERRUPTIBLE | TASK_NOLOAD)) ==
	    (TASK_UNINTERRUPTIBLE | TASK_NOLOAD))
		return REPORT_IDLE;
	if (prev_state & TASK_RTLOCK_WAIT)
		return TASK_UNINTERRUPTIBLE;
	s = prev_state & TASK_REPORT;
	if (!s)
		return 0;
	/* the highest bit, as fls() picks it */
	while (s & (s - 1))
		s &= s - 1;
	return s;
}

/* The address at the start of a kallsyms line, and where its name begins (NULL: no such line). */
static const char *sym_line(const char *p, const char *le, uint64_t *addr, char *type)
{
	uint64_t a = 0;
	int digits = 0;

	for (; p < le && *p != ' '; p++, digits++) {
		int c = (unsigned char)*p, v = c >= '0' && c <= '9'   ? c - '0'
					       : c >= 'a' && c <= 'f' ? c - 'a' + 10
					       : c >= 'A' && c <= 'F' ? c - 'A' + 10
								      : -1;

		if (v < 0 || digits >= 16)
			return NULL;
		a = a << 4 | (uint64_t)v;
	}
	if (digits == 0 || le - p < 4 || p[2] != ' ')
		return NULL;
	*addr = a;
	*type = p[1];
	return p + 3;
}

int switchbpf_sched_range(const char *text, size_t len, uint64_t *lo, uint64_t *hi)
{
	static const char name[] = "__schedule";
	const char *end = text + len;
	uint64_t at = 0, next = UINT64_MAX;
	bool found = false;

	/* Two passes over the lines: the symbol's address, then the least address above it. */
	for (int pass = 0; pass < 2; pass++) {
		for (const char *p = text; p < end;) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			const char *le = nl ? nl : end;
			const char *nm;
			uint64_t a;
			char type;

			if ((nm = sym_line(p, le, &a, &type)) != NULL) {
				if (pass == 0 && (type == 't' || type == 'T') &&
				    (size_t)(le - nm) == sizeof(name) - 1 &&
				    memcmp(nm, name, sizeof(name) - 1) == 0) {
					at = a;
					found = true;
					break;
				}
				if (pass == 1 && a > at && a < next)
					next = a;
			}
			p = nl ? nl + 1 : end;
		}
		if (!found || at == 0)
			return -ENOENT;
	}
	if (next == UINT64_MAX)
		return -ENOENT;
	*lo = at;
	*hi = next;
	return 0;
}

uint32_t switchrec_kernel_skip(const uint64_t *kernel, uint32_t n, uint64_t lo, uint64_t hi)
{
	if (lo >= hi)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		if (kernel[i] >= lo && kernel[i] < hi)
			return i;
	return 0;
}
