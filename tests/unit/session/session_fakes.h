/* SPDX-License-Identifier: MIT */
/*
 * session_fakes.h - the parts a recording is built from, faked for tests (session_seam.h): a
 * sampler that delivers the records a test queued (and may move the clock at each poll), a
 * code-table source that announces one JVM at its first pump and streams or is lost when told,
 * and a clock the test moves. One test binary includes it once.
 */
#ifndef FG_SESSION_FAKES_H
#define FG_SESSION_FAKES_H

#include <linux/perf_event.h>
#include <time.h>

#include "codetab.h"
#include "notes.h"
#include "session.h"
#include "session_seam.h"
#include "targets.h"

#define MS 1000000ull
#ifndef JVM_PID		    /* a test may name another (its own, to read its own memory) */
#define JVM_PID 2100000000u /* above any pid_max: no /proc entry can answer for it */
#endif
#define JIT_PC 0x7f0000001000ull

/* ---- the clock ---- */

static uint64_t clock_ns;

static uint64_t fake_now(void)
{
	return clock_ns;
}

/* ---- the sampler: records queued by the test, delivered at the next poll ---- */

struct fake_sampler {
	struct perfring_rec q[16];
	size_t nq;
	pid_t added[8];
	size_t nadded;
	pid_t removed[8];
	size_t nremoved;
	int add_rv;
	int open_rv; /* fs_open's answer when not 0 (as the sampler's, e.g. -ENOENT: no tracefs) */
	bool disabled;
	/* A tick: the clock moves by step_ns and (sample_per_poll) one more sample of the JVM is
	 * delivered. Every other poll ticks, so a drain (poll until nothing comes) ends. */
	uint64_t step_ns;
	bool sample_per_poll;
	bool ticked; /* the last poll ticked */
	/* When set, the clock stops after tick_limit ticks and samples after sample_limit, so a
	 * test that waits for a result knows how far the recording went (idle polls then sleep
	 * 1 ms, as a poll with nothing to deliver would). */
	unsigned tick_limit, sample_limit, ticks, samples;
	struct sampler_info info;
};

static struct fake_sampler fs;

static int fs_open(const struct sampler_opts *o, const pid_t *pids, size_t n, void **smp)
{
	(void)o;
	(void)pids;
	assert_int_equal(n, 0); /* --all: targets come from the source */
	if (fs.open_rv)
		return fs.open_rv;
	fs.info.event_name = "cpu-clock";
	*smp = &fs;
	return 0;
}

static int fs_fd(const void *smp)
{
	(void)smp;
	return -1; /* poll(2) skips it */
}

static void queue_sample(uint64_t ts);

static int fs_poll(void *smp, int timeout_ms, sampler_cb cb, void *ctx)
{
	struct fake_sampler *f = smp;
	size_t n;

	(void)timeout_ms;
	f->ticked = !f->ticked && (f->step_ns || f->sample_per_poll);
	if (f->ticked && f->tick_limit && f->ticks >= f->tick_limit) {
		struct timespec ms = { 0, 1000 * 1000 };

		f->ticked = false;
		nanosleep(&ms, NULL);
	}
	if (f->ticked) {
		f->ticks++;
		clock_ns += f->step_ns;
		if (f->sample_per_poll && f->nq < 16 &&
		    (!f->sample_limit || f->samples < f->sample_limit)) {
			f->samples++;
			queue_sample(clock_ns);
		}
	}
	n = f->nq;
	for (size_t i = 0; i < n; i++)
		cb(ctx, &f->q[i]);
	f->nq = 0;
	return (int)n;
}

static void fs_disable(void *smp)
{
	((struct fake_sampler *)smp)->disabled = true;
}

static int fs_add_pid(void *smp, pid_t pid)
{
	struct fake_sampler *f = smp;

	if (f->nadded < 8)
		f->added[f->nadded++] = pid;
	return f->add_rv;
}

static int fs_remove_pid(void *smp, pid_t pid)
{
	struct fake_sampler *f = smp;

	if (f->nremoved < 8)
		f->removed[f->nremoved++] = pid;
	return 0;
}

static const struct sampler_info *fs_info(const void *smp)
{
	return &((const struct fake_sampler *)smp)->info;
}

static void fs_stats(const void *smp, struct sampler_stats *out)
{
	(void)smp;
	memset(out, 0, sizeof(*out));
}

static void fs_close(void *smp)
{
	(void)smp;
}

static const struct session_sampler_ops fake_sampler = {
	.open = fs_open,
	.fd = fs_fd,
	.poll = fs_poll,
	.disable = fs_disable,
	.add_pid = fs_add_pid,
	.remove_pid = fs_remove_pid,
	.info = fs_info,
	.stats = fs_stats,
	.close = fs_close,
};

static const uint64_t jit_chain[] = { JIT_PC };

static void queue_sample(uint64_t ts)
{
	struct perfring_rec *r = &fs.q[fs.nq++];

	memset(r, 0, sizeof(*r));
	r->type = PERF_RECORD_SAMPLE;
	r->pid = r->tid = JVM_PID;
	r->time = ts;
	r->u.sample.user = jit_chain;
	r->u.sample.nr_user = 1;
}

static __attribute__((unused)) void queue_exit_at(uint64_t ts)
{
	struct perfring_rec *r = &fs.q[fs.nq++];

	memset(r, 0, sizeof(*r));
	r->type = PERF_RECORD_EXIT;
	r->time = ts;
	r->u.task.pid = r->u.task.tid = JVM_PID;
	r->u.task.time = ts;
}

static __attribute__((unused)) void queue_exit(void)
{
	queue_exit_at(0);
}

/* ---- the source: announces one JVM at its first pump; streams, or is lost, when told ---- */

struct fake_source {
	struct session_source base;
	const struct session_src_env *env;
	struct codetab *tab; /* the JVM's target owns it from the first pump, as the ctl source's */
	bool given;
	uint32_t adopted[1];
	int pumps;
	bool streaming, lost;
	int forgets; /* calls of its forget (the JVM's table let go) */
	bool wake;   /* its fds hold a message: wake[0], a pipe's readable end */
	int wake_fds[2];
};

static struct fake_source *src; /* the one opened last */

static const struct codetab *fsrc_table(const struct session_source *s, uint32_t pid)
{
	const struct fake_source *f = (const struct fake_source *)s;

	return pid == JVM_PID ? f->tab : NULL;
}

static int fsrc_pollfds_calls; /* session_step asked for the source's fds to wait on */

static nfds_t fsrc_pollfds(const struct session_source *s, struct pollfd *fds)
{
	const struct fake_source *f = (const struct fake_source *)s;

	fsrc_pollfds_calls++;
	if (!f->wake)
		return 0;
	fds[0] = (struct pollfd){ .fd = f->wake_fds[0], .events = POLLIN };
	return 1;
}

static void fsrc_pump(struct session_source *s, struct session_src_events *ev)
{
	struct fake_source *f = (struct fake_source *)s;
	bool added = false;

	*ev = (struct session_src_events){ .adopted = f->adopted };
	if (f->pumps++ == 0) {
		struct target *t = targets_add(f->env->targets, JVM_PID, &added);

		assert_non_null(t);
		t->connected = true;
		t->tab = f->tab;
		f->given = true;
		notes_add(f->env->notes, "PID %u: agent connected", JVM_PID);
		f->adopted[0] = JVM_PID;
		ev->nadopted = added ? 1 : 0;
		ev->changed = true;
	}
}

static bool fsrc_streaming(const struct session_source *s)
{
	return ((const struct fake_source *)s)->streaming;
}

static bool fsrc_lost(const struct session_source *s)
{
	return ((const struct fake_source *)s)->lost;
}

static bool fsrc_jvm_info(const struct session_source *s, uint32_t pid, struct jvm_info *out)
{
	(void)s;
	(void)pid;
	(void)out;
	return false;
}

static void fsrc_forget(struct session_source *s, uint32_t pid)
{
	struct fake_source *f = (struct fake_source *)s;
	struct target *t = targets_find(f->env->targets, pid);

	f->forgets++;
	if (t && t->tab == f->tab) {
		codetab_free(t->tab);
		t->tab = f->tab = NULL;
	}
}

static void fsrc_close(struct session_source *s)
{
	struct fake_source *f = (struct fake_source *)s;

	if (!f)
		return;
	if (!f->given)
		codetab_free(f->tab);
	free(f);
	src = NULL;
}

static const struct session_source_ops fake_source_ops = {
	.table = fsrc_table,
	.pollfds = fsrc_pollfds,
	.pump = fsrc_pump,
	.streaming = fsrc_streaming,
	.lost = fsrc_lost,
	.jvm_info = fsrc_jvm_info,
	.forget = fsrc_forget,
	.close = fsrc_close,
};

static int fsrc_open(const struct session_src_env *env, struct session_source **out, char *why,
		     size_t whylen)
{
	struct fake_source *f = calloc(1, sizeof(*f));

	(void)why;
	(void)whylen;
	assert_non_null(f);
	f->base = (struct session_source){ &fake_source_ops, SESSION_SRC_CTL };
	f->env = env;
	f->tab = codetab_new(NULL);
	assert_non_null(f->tab);
	src = f;
	*out = &f->base;
	return 0;
}

static const struct session_seams seams = { &fake_sampler, fsrc_open, fake_now };

#endif
