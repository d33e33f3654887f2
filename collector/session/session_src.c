// SPDX-License-Identifier: MIT
/*
 * session_src.c - the two code-table sources of a recording (session_src.h): the listen
 * source (our own receive socket feeding a jvmset, the modules `watch` uses, without perf
 * maps) and the ctl source (a watch daemon's control channel, copied into per-target tables),
 * and the choice between them.
 *
 * Invariant: any message that may have changed a table sets events.changed, because JIT
 * names the recording cached by pointer are stale after it.
 */
#include "session_src.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codetab.h"
#include "ctl_client.h"
#include "jvmset.h"
#include "notes.h"
#include "receive.h"
#include "session.h"
#include "targets.h"
#include "util.h"

/* What both sources keep: the environment and the targets a pump added. */
struct src_common {
	struct session_source base;
	const struct session_src_env *env;
	uint32_t adopted[SESSION_MAX_TARGETS];
	size_t nadopted;
};

/* --all: a JVM a source hears of becomes a target (the recording samples it after the pump). */
static struct target *adopt(struct src_common *c, uint32_t pid)
{
	bool added;
	struct target *t = targets_add(c->env->targets, pid, &added);

	if (t && added && c->nadopted < SESSION_MAX_TARGETS)
		c->adopted[c->nadopted++] = pid;
	return t;
}

static void pump_begin(struct src_common *c, struct session_src_events *ev)
{
	c->nadopted = 0;
	*ev = (struct session_src_events){ .adopted = c->adopted };
}

/* Keep the labels a JVM announced (service, container) for per-JVM profiles. */
static void target_label(struct target *t, const struct jvm_info *info)
{
	if (info->connected || info->hello_flags) {
		t->hello_known = true;
		t->hello_flags = info->hello_flags;
		t->tables_pending = info->connected &&
				    (info->hello_flags & FGP_HELLO_TABLES_ON_DEMAND) &&
				    !info->tables;
	}
	if (info->service[0])
		snprintf(t->service, sizeof(t->service), "%s", info->service);
	if (info->container_id[0])
		snprintf(t->container_id, sizeof(t->container_id), "%s", info->container_id);
}

/* A recording of agent events whose target's agent cannot send them: said once, at its hello. */
static void note_no_events(const struct session_src_env *env, const struct jvm_info *info)
{
	if (!env->evw || !session_src_asks_events(env->evw->on) || !info->connected)
		return;
	if (!(info->hello_flags & FGP_HELLO_EVENTS))
		notes_add(env->notes,
			  "PID %u: its agent (%s) cannot send allocation, live or lock events: "
			  "nothing recorded from it (start the JVM with a libfgagent.so of this "
			  "release)",
			  info->host_pid, info->agent_version[0] ? info->agent_version : "unknown");
	else if (session_src_jvm_cannot(env->evw->on, info->hello_flags) & FGP_EVM_ALLOC)
		notes_add(env->notes,
			  "PID %u: this JVM cannot sample allocations (JVMTI SampledObjectAlloc "
			  "came with JDK 11): nothing recorded from it",
			  info->host_pid);
	else if (session_src_jvm_cannot(env->evw->on, info->hello_flags) & FGP_EVM_LOCK)
		notes_add(env->notes,
			  "PID %u: this JVM offers no monitor contention events: nothing recorded "
			  "from it",
			  info->host_pid);
}

bool session_src_asks_events(uint32_t want)
{
	return want & (FGP_EVM_ALLOC | FGP_EVM_LIVE | FGP_EVM_LOCK);
}

uint32_t session_src_jvm_cannot(uint32_t want, uint32_t hello_flags)
{
	uint32_t no = 0;

	if (!(hello_flags & FGP_HELLO_EVENTS))
		return 0;
	if (hello_flags & FGP_HELLO_NO_ALLOC)
		no |= FGP_EVM_ALLOC | FGP_EVM_LIVE;
	if (hello_flags & FGP_HELLO_NO_LOCK)
		no |= FGP_EVM_LOCK;
	return want & no;
}

/* Its agent said its tables are on (or off again). */
static void target_tables(const struct session_src_env *env, struct target *t, bool on)
{
	bool was = t->tables_pending;

	t->tables_pending = !on && (t->hello_flags & FGP_HELLO_TABLES_ON_DEMAND);
	if (was && on)
		notes_add(
			env->notes,
			"PID %u: agent sends its inline and line tables (%.0f ms after the start)",
			t->pid, (double)(env->now() - *env->start_ns) / 1e6);
}

/* ---- listen source ---------------------------------------------------------------------- */

struct listen_src {
	struct src_common c;
	struct receive *rx;
	struct jvmset *js;
	bool want_failed; /* the last want file could not be written (said once) */
	bool probing;	  /* the receive's watchdog probes (listen_needed) */
};

static void on_jvm_event(void *arg, enum jvmset_event ev, const struct jvm_info *info, int err,
			 const char *why)
{
	struct listen_src *l = arg;
	const struct session_src_env *env = l->c.env;
	struct target *t = targets_find(env->targets, info->host_pid);

	switch (ev) {
	case JVMSET_CONNECT:
		if (!t && env->o->target == SESSION_TARGET_ALL)
			t = adopt(&l->c, info->host_pid);
		if (t) {
			t->connected = true;
			target_label(t, info);
			note_no_events(env, info);
			notes_add(env->notes,
				  "PID %u: agent connected (service %s, %s, container %s)",
				  info->host_pid, info->service[0] ? info->service : "-",
				  info->jvm_version[0] ? info->jvm_version : "JVM",
				  info->container_id[0] ? info->container_id : "none");
		}
		break;
	case JVMSET_REJECT:
		if (t)
			notes_add(env->notes, "PID %u: agent connection refused: %s (%s)",
				  info->host_pid, why ? why : "identity check failed",
				  strerror(err < 0 ? -err : err));
		break;
	default:
		break;
	}
}

static void on_jvm_record(void *arg, const struct jvm *j, const uint8_t *raw, size_t len)
{
	struct listen_src *l = arg;
	struct target *t;
	uint16_t type;

	if (len < FGP_REC_HEADER_SIZE)
		return;
	type = (uint16_t)(raw[0] | raw[1] << 8);
	if (type != FGP_SNAPSHOT_BEGIN && type != FGP_SNAPSHOT_END && type != FGP_TABLES)
		return;
	t = targets_find(l->c.env->targets, jvm_host_pid(j));
	if (!t)
		return;
	if (type == FGP_TABLES)
		target_tables(l->c.env, t,
			      len >= FGP_TABLES_SIZE && raw[FGP_REC_HEADER_SIZE + 8] != 0);
	else
		t->replaying = type == FGP_SNAPSHOT_BEGIN;
}

/* The recording's events, of its targets' agents. */
static void on_evwant(void *arg, const struct jvm *j, struct jvm_evwant *out)
{
	struct listen_src *l = arg;
	const struct session_src_env *env = l->c.env;

	if (env->evw && env->evw->on && targets_find(env->targets, jvm_host_pid(j)))
		*out = *env->evw;
}

static void on_jvm_ev(void *arg, const struct jvm *j, const struct jvm_event *ev)
{
	struct listen_src *l = arg;
	const struct session_src_env *env = l->c.env;

	if (env->ev && targets_find(env->targets, jvm_host_pid(j)))
		env->ev(env->ev_arg, ev);
}

/* A recording wants the tables of every JVM that talks to it. */
static void tell_want(void *arg, const uint64_t *tokens, size_t n, const struct jvm_evwant_tok *ev,
		      size_t nev)
{
	struct listen_src *l = arg;
	int rv;

	if (!l->rx)
		return;
	rv = receive_want(l->rx, tokens, n, ev, nev);
	if (rv != 0 && !l->want_failed)
		notes_add(l->c.env->notes,
			  "cannot write the want file beside the agent socket (%s): agents send "
			  "names only, no inline, frame or line tables, no allocation or lock "
			  "events",
			  strerror(-rv));
	l->want_failed = rv != 0;
}

static const struct codetab *listen_table(const struct session_source *src, uint32_t pid)
{
	const struct listen_src *l = (const struct listen_src *)src;
	struct jvm *j = jvmset_find(l->js, pid);

	return j ? jvm_table(j) : NULL;
}

static nfds_t listen_pollfds(const struct session_source *src, struct pollfd *fds)
{
	receive_pollfds(((const struct listen_src *)src)->rx, fds);
	return 2;
}

/*
 * Whether the listener must take new connections: always for --all and --container (a JVM may
 * start), for --pid while a target's agent is expected and not connected (a first connection, or
 * one after the agent lost its link). The watchdog that guards the listener against nng's wedge
 * probes only then.
 */
static bool listen_needed(const struct listen_src *l)
{
	const struct session_src_env *env = l->c.env;

	if (env->o->target != SESSION_TARGET_PID)
		return true;
	for (size_t i = 0; i < env->targets->n; i++) {
		const struct target *t = &env->targets->v[i];
		struct jvm *j;
		struct jvm_info info;

		if (!t->jvm || t->exited)
			continue;
		j = jvmset_find(l->js, t->pid);
		if (!j)
			return true;
		jvm_info(j, &info);
		if (!info.connected)
			return true;
	}
	return false;
}

static void listen_pump(struct session_source *src, struct session_src_events *ev)
{
	struct listen_src *l = (struct listen_src *)src;
	bool needed;

	pump_begin(&l->c, ev);
	ev->changed = jvmset_pump(l->js, l->rx, l->c.env->now()) > 0;
	ev->nadopted = l->c.nadopted;
	needed = listen_needed(l);
	if (needed != l->probing) {
		receive_watchdog_pause(l->rx, !needed);
		l->probing = needed;
	}
}

static bool listen_streaming(const struct session_source *src)
{
	(void)src;
	return false;
}

static bool listen_lost(const struct session_source *src)
{
	(void)src;
	return false;
}

static bool listen_jvm_info(const struct session_source *src, uint32_t pid, struct jvm_info *out)
{
	struct jvm *j = jvmset_find(((const struct listen_src *)src)->js, pid);

	if (j)
		jvm_info(j, out);
	return j != NULL;
}

static void listen_close(struct session_source *src)
{
	struct listen_src *l = (struct listen_src *)src;

	if (!l)
		return;
	if (l->js)
		jvmset_free(l->js);
	if (l->rx && receive_close(l->rx) == -ETIMEDOUT)
		fg_err("session", "%s", RECEIVE_CLOSE_LATE);
	free(l);
}

static const struct session_source_ops listen_ops = {
	.table = listen_table,
	.pollfds = listen_pollfds,
	.pump = listen_pump,
	.streaming = listen_streaming,
	.lost = listen_lost,
	.jvm_info = listen_jvm_info,
	.close = listen_close,
};

static int open_listen(const struct session_src_env *env, struct session_source **out, char *why,
		       size_t whylen)
{
	const char *path = env->o->socket_path;
	struct listen_src *l = calloc(1, sizeof(*l));
	struct receive_opts ro = { .path = path, .watchdog_ms = 1000 };
	struct jvmset_opts jo = { .want = tell_want, .want_arg = l };
	struct jvmset_observer ob = { .event = on_jvm_event,
				      .record = on_jvm_record,
				      .evwant = on_evwant,
				      .ev = on_jvm_ev,
				      .arg = l };
	int rv;

	if (!l) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	l->c = (struct src_common){ .base = { &listen_ops, SESSION_SRC_LISTEN }, .env = env };
	l->probing = true;
	rv = receive_open(&ro, &l->rx);
	if (rv != 0) {
		l->rx = NULL;
		snprintf(why, whylen, "cannot listen on the agent socket %s: %s", path,
			 strerror(-rv));
		listen_close(&l->c.base);
		return rv;
	}
	rv = jvmset_new(&jo, &l->js);
	if (rv == 0)
		rv = jvmset_observe(l->js, &ob);
	if (rv != 0) {
		snprintf(why, whylen, "cannot create the JVM set: %s", strerror(-rv));
		listen_close(&l->c.base);
		return rv;
	}
	*out = &l->c.base;
	return 0;
}

/* ---- ctl source ------------------------------------------------------------------------- */

struct ctl_src {
	struct src_common c;
	struct ctl_client *ctl;
	bool dead;	   /* the channel closed during the recording: keep the tables we have */
	uint64_t bad;	   /* frames the channel refused */
	uint64_t quiet_ns; /* when a pump last found nothing (history streamed) */
};

static struct codetab *on_ctl_jvm(void *arg, const struct jvm_info *info)
{
	struct ctl_src *cs = arg;
	const struct session_src_env *env = cs->c.env;
	struct target *t = targets_find(env->targets, info->host_pid);

	if (!t && env->o->target == SESSION_TARGET_ALL && info->connected && !info->exited)
		t = adopt(&cs->c, info->host_pid);
	if (!t || t->let_go)
		return NULL; /* let go: what the daemon still says of it goes nowhere */
	if (!t->tab && !(t->tab = codetab_new(NULL)))
		return NULL;
	if (info->connected && !t->connected) {
		notes_add(env->notes,
			  "PID %u: code table from the watch daemon (service %s, %s, container %s)",
			  info->host_pid, info->service[0] ? info->service : "-",
			  info->jvm_version[0] ? info->jvm_version : "JVM",
			  info->container_id[0] ? info->container_id : "none");
		note_no_events(env, info);
	}
	t->connected = t->connected || info->connected;
	target_label(t, info);
	return t->tab;
}

static void on_ctl_dropped(void *arg, uint32_t host_pid, const struct fgp_dropped *d)
{
	struct ctl_src *cs = arg;
	struct target *t = targets_find(cs->c.env->targets, host_pid);

	if (!t)
		return;
	t->drops_known = true;
	t->queue_full = d->queue_full;
	t->table_full = d->table_full;
}

static void on_ctl_tables(void *arg, uint32_t host_pid, bool on)
{
	struct ctl_src *cs = arg;
	struct target *t = targets_find(cs->c.env->targets, host_pid);

	if (t)
		target_tables(cs->c.env, t, on);
}

static void on_ctl_ev(void *arg, const struct jvm_event *ev)
{
	struct ctl_src *cs = arg;
	const struct session_src_env *env = cs->c.env;

	if (env->ev && targets_find(env->targets, ev->host_pid))
		env->ev(env->ev_arg, ev);
}

static const struct codetab *ctl_table(const struct session_source *src, uint32_t pid)
{
	const struct ctl_src *cs = (const struct ctl_src *)src;
	const struct target *t = targets_find(cs->c.env->targets, pid);

	return t ? t->tab : NULL;
}

static nfds_t ctl_pollfds(const struct session_source *src, struct pollfd *fds)
{
	const struct ctl_src *cs = (const struct ctl_src *)src;

	if (!cs->ctl)
		return 0;
	fds[0].fd = ctl_fd(cs->ctl);
	fds[0].events = POLLIN;
	return 1;
}

static void ctl_src_pump(struct session_source *src, struct session_src_events *ev)
{
	struct ctl_src *cs = (struct ctl_src *)src;
	struct ctl_handler h = { .jvm = on_ctl_jvm,
				 .dropped = on_ctl_dropped,
				 .tables = on_ctl_tables,
				 .ev = on_ctl_ev,
				 .arg = cs };
	int rv;

	pump_begin(&cs->c, ev);
	if (!cs->ctl)
		return;
	rv = ctl_pump(cs->ctl, 0, &h, &cs->bad);
	ev->changed = rv > 0;
	ev->nadopted = cs->c.nadopted;
	if (rv == 0 && !cs->quiet_ns)
		cs->quiet_ns = cs->c.env->now();
	if (rv < 0) {
		notes_add(cs->c.env->notes,
			  "the watch daemon's control channel closed (%s); Java frames after "
			  "this point may be [unknown]",
			  strerror(-rv));
		ctl_close(cs->ctl);
		cs->ctl = NULL;
		cs->dead = true;
	}
}

static bool ctl_streaming(const struct session_source *src)
{
	const struct ctl_src *cs = (const struct ctl_src *)src;

	return cs->ctl && !cs->quiet_ns;
}

static bool ctl_lost(const struct session_source *src)
{
	return ((const struct ctl_src *)src)->dead;
}

static bool ctl_jvm_info(const struct session_source *src, uint32_t pid, struct jvm_info *out)
{
	(void)src;
	(void)pid;
	(void)out;
	return false; /* the daemon's counters arrive as targets' drops (on_ctl_dropped) */
}

static void ctl_forget_pid(struct session_source *src, uint32_t pid)
{
	struct ctl_src *cs = (struct ctl_src *)src;
	struct target *t = targets_find(cs->c.env->targets, pid);

	if (cs->ctl)
		ctl_forget(cs->ctl, pid);
	if (t) {
		codetab_free(t->tab);
		t->tab = NULL;
	}
}

static void ctl_src_close(struct session_source *src)
{
	struct ctl_src *cs = (struct ctl_src *)src;

	if (!cs)
		return;
	ctl_close(cs->ctl);
	free(cs);
}

static const struct session_source_ops ctl_ops = {
	.table = ctl_table,
	.pollfds = ctl_pollfds,
	.pump = ctl_src_pump,
	.streaming = ctl_streaming,
	.lost = ctl_lost,
	.jvm_info = ctl_jvm_info,
	.forget = ctl_forget_pid,
	.close = ctl_src_close,
};

static const char *ctl_path(const struct session_src_env *env)
{
	return env->o->ctl_path ? env->o->ctl_path : CTL_DEFAULT_PATH;
}

/* Whether the daemon has a connection from one of our PID/container targets (or any, --all). */
static bool ctl_knows_target(const struct session_src_env *env, struct ctl_client *ctl)
{
	struct jvm_info *list;
	size_t n = 0;
	bool found = false;

	if (env->o->target == SESSION_TARGET_ALL)
		return true;
	list = calloc(SESSION_MAX_TARGETS, sizeof(*list));
	if (!list || ctl_list(ctl, list, SESSION_MAX_TARGETS, &n, 2000) != 0) {
		free(list);
		return true; /* cannot tell: trust the daemon */
	}
	for (size_t i = 0; i < n && i < SESSION_MAX_TARGETS && !found; i++)
		found = targets_find(env->targets, list[i].host_pid) != NULL;
	free(list);
	return found;
}

/* Subscribe on the connected channel ctl (taken: closed on failure) and make it the source. */
static int open_ctl(const struct session_src_env *env, struct ctl_client *ctl,
		    struct session_source **out, char *why, size_t whylen)
{
	uint32_t pid = env->o->target == SESSION_TARGET_PID ? env->o->pid : 0;
	struct ctl_src *cs;
	int rv = ctl_subscribe(ctl, pid);

	if (rv == 0 && env->evw && env->evw->on)
		rv = ctl_events(ctl, env->evw);
	if (rv != 0) {
		snprintf(why, whylen, "control channel %s: subscribe failed: %s", ctl_path(env),
			 strerror(-rv));
		ctl_close(ctl);
		return rv;
	}
	if (!(cs = calloc(1, sizeof(*cs)))) {
		snprintf(why, whylen, "out of memory");
		ctl_close(ctl);
		return -ENOMEM;
	}
	cs->c = (struct src_common){ .base = { &ctl_ops, SESSION_SRC_CTL }, .env = env };
	cs->ctl = ctl;
	*out = &cs->c.base;
	return 0;
}

/* ---- choosing ----------------------------------------------------------------------------- */

/*
 * A daemon that answers but has no connection from our targets may serve another agent socket
 * than ours: when we can listen on ours, nobody serves it, so the agents there come to us.
 */
int session_src_open(const struct session_src_env *env, struct session_source **out, char *why,
		     size_t whylen)
{
	const struct session_opts *o = env->o;
	const char *ctl = ctl_path(env);
	char ctlwhy[320] = "", lwhy[320];
	struct ctl_client *c = NULL;
	int crv = 0, rv;

	if (o->src != SESSION_SRC_LISTEN) {
		crv = ctl_connect(ctl, &c);
		if (crv != 0) {
			snprintf(ctlwhy, sizeof(ctlwhy),
				 "cannot reach the watch daemon's control channel %s: %s", ctl,
				 strerror(-crv));
			c = NULL;
		}
		if (crv != 0 && o->src == SESSION_SRC_CTL) {
			snprintf(why, whylen, "%s (is `fgcollect watch --ctl %s` running?)", ctlwhy,
				 ctl);
			return crv;
		}
		if (crv == 0 && (o->src == SESSION_SRC_CTL || ctl_knows_target(env, c)))
			return open_ctl(env, c, out, why, whylen);
	}
	rv = open_listen(env, out, lwhy, sizeof(lwhy));
	if (rv == 0) {
		ctl_close(c); /* a daemon of other agents, if any */
		return 0;
	}
	if (c) {
		/* The socket is served (by that daemon, presumably): its agent may not be there
		 * yet. */
		return open_ctl(env, c, out, why, whylen);
	}
	if (o->src == SESSION_SRC_LISTEN) {
		snprintf(why, whylen, "%s", lwhy);
		return rv;
	}
	snprintf(why, whylen,
		 "no watch daemon answers on the control socket %s (%s), and %s%s; give the "
		 "daemon's --ctl PATH, or the agents' --socket PATH when no daemon runs",
		 ctl, strerror(-crv), lwhy,
		 rv == -EADDRINUSE ? " (another process serves it: a watch daemon with another "
				     "control socket?)"
				   : "");
	return rv;
}

const struct codetab *session_src_table(void *src, uint32_t pid)
{
	const struct session_source *so = src;

	return so ? so->ops->table(so, pid) : NULL;
}
