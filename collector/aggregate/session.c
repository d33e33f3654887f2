// SPDX-License-Identifier: MIT
/*
 * session.c - a recording: sampler -> symbolizer/code tables -> stackagg.
 *
 * The code tables of the listen source live in a jvmset fed by our own receive socket (the same
 * modules `watch` uses, without perf maps). The settle watermark (the time up to which JIT
 * lookups are final) is now - settle_ns, held back while a target's agent replays its code set,
 * or, until agent_wait_ns has passed since the start, while a target has no agent yet or its
 * agent has not turned its tables on (tables on demand: the recording asked for them).
 *
 * Targets live in targets.c, thread names in threadnames.c, the code-table sources in
 * session_src.c, the --code-log text in codelog.c.
 *
 * Invariant: a sample is symbolized against code tables that are complete up to its time (or,
 * at session_finish, against everything that ever arrived); never against a partial replay.
 */
#include "session.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codelog.h"
#include "codetab.h"
#include "jvmset.h"
#include "perfring.h"
#include "sampler.h"
#include "session_int.h"
#include "symbolizer.h"
#include "util.h"
#include "vmmem.h"

void session_note(struct session *s, const char *fmt, ...)
{
	va_list ap;

	if (s->note_len == SESSION_NOTES) {
		s->notes_lost++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(s->notes[(s->note_head + s->note_len) % SESSION_NOTES], SESSION_NOTE_MAX, fmt,
		  ap);
	va_end(ap);
	s->note_len++;
}

int session_next_note(struct session *s, char *buf, size_t len)
{
	if (!s->note_len)
		return 0;
	snprintf(buf, len, "%s", s->notes[s->note_head]);
	s->note_head = (s->note_head + 1) % SESSION_NOTES;
	s->note_len--;
	return 1;
}

/* ---- targets --------------------------------------------------------------------------- */

struct target *session_target_add(struct session *s, uint32_t pid)
{
	bool added;
	struct target *t = targets_add(&s->targets, pid, &added);

	if (t && added) {
		threadnames_load(&s->names, pid);
		if (s->sz)
			(void)symbolizer_add_process(s->sz, (pid_t)pid);
	}
	return t;
}

struct target *session_adopt(struct session *s, uint32_t pid)
{
	struct target *t = session_target_add(s, pid);
	int rv;

	if (t) {
		rv = sampler_add_pid(s->sampler, (pid_t)pid);
		if (rv != 0 && rv != -EEXIST)
			session_note(s, "PID %u: cannot sample it: %s", pid, strerror(-rv));
	}
	return t;
}

static int add_cb(void *arg, uint32_t pid)
{
	return session_target_add(arg, pid) ? 0 : -ENOSPC;
}

/* The targets of a PID or container session (an --all session adopts them as they come). */
static int find_targets(struct session *s, char *why, size_t whylen)
{
	const struct session_opts *o = &s->o;
	char path[32];
	int rv;

	switch (o->target) {
	case SESSION_TARGET_PID:
		snprintf(path, sizeof(path), "/proc/%u/exe", o->pid);
		if (access(path, F_OK) != 0 && errno == ENOENT) {
			snprintf(why, whylen, "no process with PID %u", o->pid);
			return -ESRCH;
		}
		session_target_add(s, o->pid);
		return 0;
	case SESSION_TARGET_CONTAINER:
		rv = targets_scan_container(o->container, add_cb, s);
		if (rv == 0 && !s->targets.n)
			rv = -ESRCH;
		if (rv != 0)
			snprintf(why, whylen, "no process in a container whose id starts with '%s'",
				 o->container);
		return rv;
	case SESSION_TARGET_ALL:
		break;
	}
	return 0;
}

static const struct codetab *table_of_cb(void *arg, uint32_t pid)
{
	return session_src_table(arg, pid);
}

/* Time up to which JIT lookups are final now. */
static uint64_t watermark(const struct session *s, uint64_t now)
{
	uint64_t w = now > s->o.settle_ns ? now - s->o.settle_ns : 0;

	if (s->src == SESSION_SRC_CTL && s->ctl && !s->ctl_quiet_ns)
		return 0; /* the daemon is still streaming the history */

	for (size_t i = 0; i < s->targets.n; i++) {
		const struct target *t = &s->targets.v[i];

		if (t->replaying)
			return 0;
		if (t->jvm && !t->exited && (!t->connected || t->tables_pending) &&
		    now - s->start_ns < s->o.agent_wait_ns)
			return 0;
	}
	return w;
}

/* ---- sampler records ------------------------------------------------------------------- */

/* The sample's user registers and stack copy; false when it carries none. */
static bool sample_regs(const struct perfring_rec *r, struct uregs *regs, struct ustack *st)
{
	*regs = (struct uregs){ 0 };
	*st = (struct ustack){ r->u.sample.stack, 0, r->u.sample.stack_dyn };
	regs->valid = perfring_user_reg(r, SAMPLER_REG_IP, &regs->ip) &&
		      perfring_user_reg(r, SAMPLER_REG_SP, &regs->sp) &&
		      perfring_user_reg(r, SAMPLER_REG_BP, &regs->bp);
	(void)perfring_user_reg(r, SAMPLER_REG_BX, &regs->bx);
	(void)perfring_user_reg(r, SAMPLER_REG_R13, &regs->r13);
	st->sp = regs->sp;
	return regs->valid && st->bytes && st->len;
}

/* Unwind this sample the vm way (not by the kernel's frame pointers)? */
static bool use_vm(const struct session *s, uint32_t pid)
{
	const struct target *t;

	switch (s->o.unwind) {
	case SESSION_UNWIND_FP:
		return false;
	case SESSION_UNWIND_VM:
		return true;
	default:
		t = targets_find(&s->targets, pid);
		return t && t->hello_known && !(t->hello_flags & FGP_HELLO_PRESERVE_FRAME_POINTER);
	}
}

/*
 * The user part of a sample: the kernel's chain, or the vm unwinder's (smp->user replaced);
 * interpreted frames named and a `[truncated]` marker set in s->uframes (smp->uframes).
 */
static void user_frames(struct session *s, const struct perfring_rec *r,
			struct stackagg_sample *smp)
{
	const struct codetab *tab = session_src_table(s, r->pid);
	struct uregs regs;
	struct ustack st;
	struct vmstack_out vo = { 0 };
	struct vmstack_in vi = { r->pid, r->time, tab, s->sz, &regs, &st };
	bool regs_ok = sample_regs(r, &regs, &st), vm = false, named = false;

	if (s->vs && tab && regs_ok && (use_vm(s, r->pid) || s->o.unwind_check) &&
	    vmstack_unwind(s->vs, &vi, &vo) == 0) {
		if (s->o.unwind_check && !use_vm(s, r->pid)) {
			vmstack_check(s->vs, &vo, r->u.sample.user, r->u.sample.nr_user);
			vmstack_fp_walk(s->vs, &regs, &st, r->u.sample.user, r->u.sample.nr_user);
		} else
			vm = true;
	}
	if (vm) {
		smp->user = vo.user;
		smp->nr_user = vo.nr_user;
		s->unwound_vm++;
	} else {
		s->unwound_fp++;
	}
	if (s->jf && tab && smp->nr_user) {
		struct javaframes_in in = {
			.pid = r->pid,
			.ts = r->time,
			.tab = tab,
			.user = smp->user,
			.nr_user = smp->nr_user,
			.regs = &regs,
			.stack = &st,
			.walk = vm ? vo.walk : NULL,
		};

		named = javaframes_name(s->jf, &in, s->uframes) > 0;
	}
	if (vm && vo.truncated) {
		if (!named)
			memset(s->uframes, 0, smp->nr_user * sizeof(s->uframes[0]));
		s->uframes[smp->nr_user - 1] =
			(struct stackagg_uframe){ "[truncated]", true, true };
		named = true;
	}
	smp->uframes = named ? s->uframes : NULL;
}

static int on_record(void *ctx, const struct perfring_rec *r)
{
	struct session *s = ctx;

	switch (r->type) {
	case PERF_RECORD_SAMPLE: {
		struct target *t = s->multi ? targets_find(&s->targets, r->pid) : NULL;
		struct stackagg_sample smp = {
			.pid = r->pid,
			.tid = r->tid,
			.ts = r->time,
			.kernel = r->u.sample.kernel,
			.nr_kernel = r->u.sample.nr_kernel,
			.user = r->u.sample.user,
			.nr_user = r->u.sample.nr_user,
			.process = s->multi ? (t ? t->root : "[other]") : NULL,
			.thread = threadnames_get(&s->names, r->pid, r->tid),
		};

		if (s->jf && r->u.sample.nr_user)
			user_frames(s, r, &smp);

		(void)stackagg_sample(s->agg, &smp); /* failures are counted as dropped */
		break;
	}
	case PERF_RECORD_MMAP2: {
		struct procmap_update u = {
			.start = r->u.mmap2.addr,
			.len = r->u.mmap2.len,
			.pgoff = r->u.mmap2.pgoff,
			.maj = r->u.mmap2.maj,
			.min = r->u.mmap2.min,
			.ino = r->u.mmap2.ino,
			.prot = r->u.mmap2.prot,
			.filename = r->u.mmap2.filename,
		};

		(void)symbolizer_mmap2(s->sz, (pid_t)r->u.mmap2.pid, &u);
		stackagg_maps_changed(s->agg);
		break;
	}
	case PERF_RECORD_COMM:
		threadnames_set(&s->names, r->u.comm.tid, r->u.comm.comm);
		break;
	case PERF_RECORD_EXIT:
		if (r->u.task.pid == r->u.task.tid) {
			struct target *t = targets_find(&s->targets, r->u.task.pid);

			if (t && !t->exited) {
				t->exited = true;
				if (s->jf)
					javaframes_forget(s->jf, t->pid);
				session_note(s, "PID %u exited after %.1f s of recording", t->pid,
					     (double)(fg_now_ns() - s->start_ns) / 1e9);
			}
		}
		break;
	default:
		break;
	}
	return 0;
}

/* ---- lifecycle ------------------------------------------------------------------------- */

/* The first target whose /proc entry is still there, or 0. */
static uint32_t first_alive(const struct targets *t)
{
	char path[32];

	for (size_t i = 0; i < t->n; i++) {
		snprintf(path, sizeof(path), "/proc/%u/task", (unsigned int)t->v[i].pid);
		if (access(path, F_OK) == 0)
			return (uint32_t)t->v[i].pid;
	}
	return 0;
}

static int open_sampler(struct session *s, char *why, size_t whylen)
{
	struct sampler_opts smo = { .freq_hz = s->o.freq_hz,
				    .exclude_kernel = s->o.no_kernel,
				    .stack_copy = s->o.stack_copy };
	size_t n = s->targets.n;
	pid_t *pids = calloc(n ? n : 1, sizeof(*pids));
	uint32_t alive;
	int rv;

	if (!pids)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		pids[i] = (pid_t)s->targets.v[i].pid;
	s->start_ns = fg_now_ns();
	rv = sampler_open(&smo, pids, n, &s->sampler);
	free(pids);
	if (rv == -EACCES || rv == -EPERM)
		snprintf(why, whylen,
			 "perf_event_open refused (%s): run as root or lower "
			 "kernel.perf_event_paranoid",
			 strerror(-rv));
	else if (rv == -ESRCH && (alive = first_alive(&s->targets)) != 0)
		snprintf(why, whylen,
			 "perf_event_open found no thread to sample (ESRCH) although PID %u "
			 "still runs",
			 alive);
	else if (rv == -ESRCH)
		snprintf(why, whylen, "the target process%s exited before sampling started",
			 n > 1 ? "es" : "");
	else if (rv != 0)
		snprintf(why, whylen, "cannot start sampling: %s", strerror(-rv));
	return rv;
}

int session_open(const struct session_opts *o, struct session **out, char *why, size_t whylen)
{
	struct session *s = calloc(1, sizeof(*s));
	struct stackagg_resolver res;
	struct stackagg_opts ao = { .no_inline = o->no_inline,
				    .no_kernel = o->no_kernel,
				    .retry_misses = !o->live_view,
				    .lines = o->lines };
	struct symbolizer_opts so = { .preload = true, .debuginfod = true };
	int rv = -ENOMEM;

	snprintf(why, whylen, "out of memory");
	if (!s)
		return -ENOMEM;
	s->o = *o;
	if (!s->o.socket_path)
		s->o.socket_path = FG_DEFAULT_SOCKET;
	if (!s->o.settle_ns)
		s->o.settle_ns = 300000000ull;
	if (!s->o.agent_wait_ns)
		s->o.agent_wait_ns = 3000000000ull;
	s->multi = o->target != SESSION_TARGET_PID;
	threadnames_init(&s->names);
	s->rc = (struct resolve_ctx){ .table_of = table_of_cb, .arg = s };
	resolve_init(&res, &s->rc);
	s->agg_opts = ao;
	s->agg_res = res;
	s->sz = symbolizer_new(&so);
	s->rc.sz = s->sz;
	s->agg = stackagg_new(&ao, &res);
	if (targets_init(&s->targets) != 0 || !s->sz || !s->agg)
		goto fail;
	/* Interpreted frames are named by reading the sampled JVM's memory: process_vm_readv of
	 * the sample's own (kernel-given) PID, with the layout its own verified agent sent. */
	if (o->stack_copy && !(s->vs = vmstack_new()))
		goto fail;
	if (o->stack_copy && !(s->jf = javaframes_new(&vmmem_process, o->lines)))
		goto fail;
	/*
	 * Code tables first, so agents can start replaying while the sampler opens. A running
	 * daemon is asked first: it may serve any agent socket (its --socket), and listening
	 * on ours would then fail or, worse, wait for agents that talk to the daemon. Only when
	 * no daemon answers on the control path do we listen on the agent socket ourselves.
	 */
	if ((rv = find_targets(s, why, whylen)) != 0 ||
	    (rv = session_src_open(s, why, whylen)) != 0 ||
	    (rv = open_sampler(s, why, whylen)) != 0)
		goto fail;
	*out = s;
	why[0] = '\0';
	return 0;
fail:
	session_close(s);
	return rv;
}

#define JAVA_DRAIN_MS 10

/*
 * Leave samples in the rings while a target JVM's agent has not connected or is replaying, or
 * the watch daemon is still sending its tables (at most agent_wait_ns from the start): their
 * interpreted frames can only be named from their stack copies once the JVM's layout and
 * interpreter blob are known.
 */
static bool hold_samples(const struct session *s, uint64_t now)
{
	if (!s->jf || now - s->start_ns >= s->o.agent_wait_ns)
		return false;
	if (s->src == SESSION_SRC_CTL && s->ctl && !s->ctl_quiet_ns)
		return true; /* the daemon is still streaming the tables' history */
	for (size_t i = 0; i < s->targets.n; i++) {
		const struct target *t = &s->targets.v[i];

		if (t->jvm && !t->exited && (!t->connected || t->replaying || t->tables_pending))
			return true;
	}
	return false;
}

int session_step(struct session *s, int timeout_ms)
{
	struct pollfd fds[4];
	nfds_t n = session_src_pollfds(s, fds);
	bool held;
	int rv;

	/* Interpreted frames are named when their sample is drained: drain often, so that the
	 * JVM's metadata is read soon after the sample (a GC in between voids the names). */
	if (s->jf && (timeout_ms < 0 || timeout_ms > JAVA_DRAIN_MS))
		timeout_ms = JAVA_DRAIN_MS;
	held = hold_samples(s, fg_now_ns());
	if (!held) {
		fds[n].fd = sampler_fd(s->sampler);
		fds[n].events = POLLIN;
		n++;
	}
	rv = poll(fds, n, held && timeout_ms > 10 ? 10 : timeout_ms);
	if (rv < 0 && errno == EINTR)
		return -EINTR;
	session_src_pump(s);
	if (!held) {
		rv = sampler_poll(s->sampler, 0, on_record, s);
		if (rv < 0 && rv != -EINTR)
			return rv;
	}
	stackagg_settle(s->agg, watermark(s, fg_now_ns()));
	return 0;
}

void session_settle_now(struct session *s)
{
	stackagg_settle(s->agg, watermark(s, fg_now_ns()));
}

bool session_done(const struct session *s)
{
	if (s->o.target == SESSION_TARGET_ALL || !s->targets.n)
		return false;
	for (size_t i = 0; i < s->targets.n; i++)
		if (!s->targets.v[i].exited)
			return false;
	return true;
}

void session_finish(struct session *s, int grace_ms)
{
	uint64_t until;

	s->end_ns = fg_now_ns();
	sampler_disable(s->sampler);
	while (sampler_poll(s->sampler, 0, on_record, s) > 0)
		;
	/* Late code events: the JVM reports a compile a little after the code first runs. */
	until = fg_now_ns() + (uint64_t)grace_ms * 1000000ull;
	while ((s->rx || s->ctl) && fg_now_ns() < until) {
		struct pollfd fds[3];
		int left = (int)((until - fg_now_ns()) / 1000000ull);
		nfds_t n = session_src_pollfds(s, fds);

		if (poll(fds, n, left > 0 ? left : 0) < 0 && errno != EINTR)
			break;
		session_src_pump(s);
	}
	session_src_pump(s);
	stackagg_settle(s->agg, UINT64_MAX);
}

struct stackagg *session_agg(struct session *s)
{
	return s->agg;
}

struct stackagg *session_rotate(struct session *s)
{
	struct stackagg *fresh = stackagg_new(&s->agg_opts, &s->agg_res), *done;

	if (!fresh)
		return NULL;
	while (sampler_poll(s->sampler, 0, on_record, s) > 0)
		;
	session_src_pump(s);
	stackagg_settle(s->agg, UINT64_MAX);
	done = s->agg;
	s->agg = fresh;
	return done;
}

bool session_source_lost(const struct session *s)
{
	return s->ctl_dead;
}

size_t session_target_count(const struct session *s)
{
	return s->targets.n;
}

void session_target_at(const struct session *s, size_t i, struct session_target_info *out)
{
	const struct target *t = &s->targets.v[i];

	out->pid = t->pid;
	out->root = t->root;
	out->service = t->service;
	out->container_id = t->container_id;
	out->connected = t->connected;
	out->exited = t->exited;
}

void session_summary(const struct session *s, struct session_summary *out)
{
	const struct sampler_info *si = sampler_info(s->sampler);
	struct sampler_stats ss;
	struct symbolizer_stats zs;

	memset(out, 0, sizeof(*out));
	sampler_stats(s->sampler, &ss);
	symbolizer_stats(s->sz, &zs);
	out->src = s->src;
	out->event_name = si->event_name;
	out->cycles_err = si->cycles_err;
	out->freq_hz = si->freq_hz;
	out->max_stack = si->max_stack;
	out->duration_ns = (s->end_ns ? s->end_ns : fg_now_ns()) - s->start_ns;
	out->samples = ss.samples;
	out->lost = ss.lost;
	out->lost_records = ss.lost_records;
	out->lost_samples = ss.lost_samples;
	out->truncated = ss.truncated;
	out->targets = s->targets.n;
	out->kernel_error = zs.kernel_error;
	out->debuginfod = zs.debuginfod;
	out->debuginfod_st = zs.debuginfod_st;
	out->debug_fetched = zs.cache.debug_fetched;
	stackagg_stats(s->agg, &out->agg);
	out->stack_copy = si->stack_copy;
	out->stack_samples = ss.stack_samples;
	if (s->jf)
		javaframes_stats(s->jf, &out->java);
	if (s->vs)
		vmstack_stats(s->vs, &out->vm);
	out->unwound_fp = s->unwound_fp;
	out->unwound_vm = s->unwound_vm;
	for (size_t i = 0; i < s->targets.n; i++) {
		const struct target *t = &s->targets.v[i];
		struct jvm *j = s->js ? jvmset_find(s->js, t->pid) : NULL;
		struct session_jvm_summary *js;

		if (t->exited)
			out->exited++;
		if (out->njvms == FG_ARRAY_SIZE(out->jvms))
			continue;
		js = &out->jvms[out->njvms++];
		js->pid = t->pid;
		js->exited = t->exited;
		js->connected_ever = t->connected;
		js->jvm = t->jvm;
		if (t->tab) {
			struct codetab_stats cs;

			codetab_stats(t->tab, &cs);
			js->blobs = cs.blobs;
			js->live = cs.live;
			js->drops_known = t->drops_known;
			js->agent_queue_full = t->queue_full;
			js->agent_table_full = t->table_full;
		} else if (j) {
			struct jvm_info ji;

			jvm_info(j, &ji);
			js->drops_known = true;
			js->agent_queue_full = ji.agent_queue_full;
			js->agent_table_full = ji.agent_table_full;
			js->blobs = ji.tab.blobs;
			js->live = ji.tab.live;
		}
	}
}

int session_write_code_log(const struct session *s, FILE *f)
{
	for (size_t i = 0; i < s->targets.n; i++) {
		uint32_t pid = s->targets.v[i].pid;
		const struct codetab *tab = session_src_table(s, pid);
		int rv;

		if (tab && (rv = codelog_write(f, pid, tab)) != 0)
			return rv;
	}
	return fflush(f) == 0 ? 0 : -EIO;
}

void session_close(struct session *s)
{
	if (!s)
		return;
	sampler_close(s->sampler);
	session_src_close(s);
	targets_fini(&s->targets);
	stackagg_free(s->agg);
	javaframes_free(s->jf);
	vmstack_free(s->vs);
	symbolizer_free(s->sz);
	threadnames_fini(&s->names);
	free(s);
}
