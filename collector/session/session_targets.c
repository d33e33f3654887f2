// SPDX-License-Identifier: MIT
/*
 * session_targets.c - the session's targets: found, adopted and let go; the code-table source
 * pumped and asked for tables; thread names told to the sampler; the settle watermark.
 */
#include "session_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- targets --------------------------------------------------------------------------- */

/*
 * pid as a target: known already, or added (thread names loaded, symbolizer told). NULL when
 * the target set is full.
 */
static struct target *session_target_add(struct session *s, uint32_t pid)
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

/*
 * --threads with off-CPU by BPF: tell the sampler whether to take the switch-outs of threads
 * named `name` (once per name), so that the kernel spends neither its work nor the stack budget
 * on threads the profile leaves out.
 */
void ses_tell_name(struct session *s, const char *name)
{
	uint64_t h = fg_hash_bytes(name, strlen(name), 0);
	bool keep;

	if (!s->flt.threads_re_on || !s->sampler || !s->so->keep_name ||
	    htab_get(&s->flt.names_told, h))
		return;
	keep = regexec(&s->flt.threads_re, name, 0, NULL, 0) == 0;
	if (s->so->keep_name(s->sampler, name, keep) == 0)
		(void)htab_put(&s->flt.names_told, h, 1);
}

/* ses_tell_name() of every thread name known. */
void ses_tell_names(struct session *s)
{
	for (size_t i = 0; i < s->names.n; i++)
		ses_tell_name(s, s->names.names[i]);
}

/* --all: a target a source added is sampled from now on. */
static void adopt(struct session *s, uint32_t pid)
{
	int rv;

	threadnames_load(&s->names, pid);
	ses_tell_names(s);
	if (s->sz)
		(void)symbolizer_add_process(s->sz, (pid_t)pid);
	rv = s->so->add_pid(s->sampler, (pid_t)pid);
	if (rv != 0 && rv != -EEXIST)
		notes_add(&s->notes, "PID %u: cannot sample it: %s", pid, strerror(-rv));
}

/* Let the source handle what is ready, and act on what it reports. */
void ses_pump_src(struct session *s)
{
	struct session_src_events ev;

	if (!s->src)
		return;
	s->src->ops->pump(s->src, &ev);
	for (size_t i = 0; i < ev.nadopted; i++)
		adopt(s, ev.adopted[i]);
	if (ev.changed)
		stackagg_jit_changed(s->agg);
}

/* The code table of pid from the source, NULL when none (yet). */
const struct codetab *ses_src_table(const struct session *s, uint32_t pid)
{
	return s->src ? s->src->ops->table(s->src, pid) : NULL;
}

nfds_t ses_src_pollfds(const struct session *s, struct pollfd *fds)
{
	return s->src ? s->src->ops->pollfds(s->src, fds) : 0;
}

/* The daemon is still streaming its tables' history. */
bool ses_src_streaming(const struct session *s)
{
	return s->src && s->src->ops->streaming(s->src);
}

static int add_cb(void *arg, uint32_t pid)
{
	return session_target_add(arg, pid) ? 0 : -ENOSPC;
}

/* The targets of a PID or container session (an --all session adopts them as they come). */
int ses_find_targets(struct session *s, char *why, size_t whylen)
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

/* Time up to which JIT lookups are final now. */
uint64_t ses_watermark(const struct session *s, uint64_t now)
{
	uint64_t w = now > s->o.settle_ns ? now - s->o.settle_ns : 0;

	if (ses_src_streaming(s))
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

/* The process root frame of pid's stacks: NULL when one process is recorded. */
const char *ses_process_root(struct session *s, uint32_t pid)
{
	struct target *t = s->multi ? targets_find(&s->targets, pid) : NULL;

	return s->multi ? (t ? t->root : "[other]") : NULL;
}

/* Close the sampling events of targets that exited a while ago (long runs of --all, watch). */
void ses_forget_exited(struct session *s, uint64_t now)
{
	for (size_t i = 0; i < s->targets.n && s->life.nforget; i++) {
		struct target *t = &s->targets.v[i];

		if (!t->forget_at || now < t->forget_at)
			continue;
		(void)s->so->remove_pid(s->sampler, (pid_t)t->pid);
		t->forget_at = 0;
		s->life.nforget--;
		s->life.forgotten++;
	}
}

/*
 * session_opts.let_go: what the session keeps of an exited target goes once every sample up to
 * its exit is named; the ctl source's tables drop code unloaded SESSION_HISTORY_NS before that.
 */
void ses_let_go(struct session *s, uint64_t now)
{
	for (size_t i = 0; i < s->targets.n && s->life.nletgo; i++) {
		struct target *t = &s->targets.v[i];
		struct codetab_stats cs;

		if (!t->exited || t->let_go || s->life.named_to <= t->exit_ts)
			continue;
		if (t->tab) {
			codetab_stats(t->tab, &cs);
			t->blobs = cs.blobs;
			t->live = cs.live;
		}
		if (s->sz)
			symbolizer_remove_process(s->sz, (pid_t)t->pid);
		if (s->src && s->src->ops->forget)
			s->src->ops->forget(s->src, t->pid);
		t->let_go = true;
		s->life.nletgo--;
	}
	if (now - s->life.pruned_at < PRUNE_EVERY_NS || s->life.named_to <= SESSION_HISTORY_NS)
		return;
	s->life.pruned_at = now;
	for (size_t i = 0; i < s->targets.n; i++)
		if (s->targets.v[i].tab)
			codetab_prune(s->targets.v[i].tab, s->life.named_to - SESSION_HISTORY_NS);
}
