// SPDX-License-Identifier: MIT
/*
 * session_src.c - where a recording's code tables come from (see session.h): the listen
 * source (our own receive socket feeding a jvmset, the modules `watch` uses, without perf
 * maps) or the ctl source (a watch daemon's control channel, copied into per-target tables).
 *
 * Invariant: any message that may have changed a table tells stackagg (stackagg_jit_changed),
 * because JIT names it cached by pointer are stale after it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codetab.h"
#include "ctl_client.h"
#include "jvmset.h"
#include "receive.h"
#include "sampler.h"
#include "session_int.h"
#include "stackagg.h"
#include "util.h"

const struct codetab *session_src_table(const struct session *s, uint32_t pid)
{
	struct jvm *j;

	if (s->src == SESSION_SRC_CTL) {
		const struct target *t = targets_find(&s->targets, pid);

		return t ? t->tab : NULL;
	}
	if (s->js && (j = jvmset_find(s->js, pid)))
		return jvm_table(j);
	return NULL;
}

/* ---- listen source ---------------------------------------------------------------------- */

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

/* Its agent said its tables are on (or off again). */
static void target_tables(struct session *s, struct target *t, bool on)
{
	bool was = t->tables_pending;

	t->tables_pending = !on && (t->hello_flags & FGP_HELLO_TABLES_ON_DEMAND);
	if (was && on)
		session_note(
			s,
			"PID %u: agent sends its inline and line tables (%.0f ms after the start)",
			t->pid, (double)(fg_now_ns() - s->start_ns) / 1e6);
}

static void on_jvm_event(void *arg, enum jvmset_event ev, const struct jvm_info *info, int err,
			 const char *why)
{
	struct session *s = arg;
	struct target *t = targets_find(&s->targets, info->host_pid);

	switch (ev) {
	case JVMSET_CONNECT:
		if (!t && s->o.target == SESSION_TARGET_ALL)
			t = session_adopt(s, info->host_pid);
		if (t) {
			t->connected = true;
			target_label(t, info);
			session_note(s, "PID %u: agent connected (service %s, %s, container %s)",
				     info->host_pid, info->service[0] ? info->service : "-",
				     info->jvm_version[0] ? info->jvm_version : "JVM",
				     info->container_id[0] ? info->container_id : "none");
		}
		break;
	case JVMSET_REJECT:
		if (t)
			session_note(s, "PID %u: agent connection refused: %s (%s)", info->host_pid,
				     why ? why : "identity check failed",
				     strerror(err < 0 ? -err : err));
		break;
	default:
		break;
	}
}

static void on_jvm_record(void *arg, const struct jvm *j, const uint8_t *raw, size_t len)
{
	struct session *s = arg;
	struct target *t;
	uint16_t type;

	if (len < FGP_REC_HEADER_SIZE)
		return;
	type = (uint16_t)(raw[0] | raw[1] << 8);
	if (type != FGP_SNAPSHOT_BEGIN && type != FGP_SNAPSHOT_END && type != FGP_TABLES)
		return;
	t = targets_find(&s->targets, jvm_host_pid(j));
	if (!t)
		return;
	if (type == FGP_TABLES)
		target_tables(s, t, len >= FGP_TABLES_SIZE && raw[FGP_REC_HEADER_SIZE + 8] != 0);
	else
		t->replaying = type == FGP_SNAPSHOT_BEGIN;
}

/* A recording wants the tables of every JVM that talks to it. */
static void tell_want(void *arg, const uint64_t *tokens, size_t n)
{
	struct session *s = arg;
	int rv;

	if (!s->rx)
		return;
	rv = receive_want(s->rx, tokens, n);
	if (rv != 0 && !s->want_failed)
		session_note(s,
			     "cannot write the want file beside the agent socket (%s): agents send "
			     "names only, no inline, frame or line tables",
			     strerror(-rv));
	s->want_failed = rv != 0;
}

static int open_listen(struct session *s, char *why, size_t whylen)
{
	struct receive_opts ro = { .path = s->o.socket_path, .watchdog_ms = 1000 };
	struct jvmset_opts jo = { .want = tell_want, .want_arg = s };
	struct jvmset_observer ob = { .event = on_jvm_event, .record = on_jvm_record, .arg = s };
	int rv;

	rv = receive_open(&ro, &s->rx);
	if (rv != 0) {
		s->rx = NULL;
		snprintf(why, whylen, "cannot listen on the agent socket %s: %s", s->o.socket_path,
			 strerror(-rv));
		return rv;
	}
	rv = jvmset_new(&jo, &s->js);
	if (rv == 0)
		rv = jvmset_observe(s->js, &ob);
	if (rv != 0)
		snprintf(why, whylen, "cannot create the JVM set: %s", strerror(-rv));
	return rv;
}

static void pump_agents(struct session *s)
{
	if (s->rx && s->js && jvmset_pump(s->js, s->rx, fg_now_ns()) > 0)
		stackagg_jit_changed(s->agg);
}

/* ---- ctl source ------------------------------------------------------------------------- */

static struct codetab *on_ctl_jvm(void *arg, const struct jvm_info *info)
{
	struct session *s = arg;
	struct target *t = targets_find(&s->targets, info->host_pid);

	if (!t && s->o.target == SESSION_TARGET_ALL && info->connected && !info->exited)
		t = session_adopt(s, info->host_pid);
	if (!t)
		return NULL;
	if (!t->tab && !(t->tab = codetab_new(NULL)))
		return NULL;
	if (info->connected && !t->connected)
		session_note(
			s,
			"PID %u: code table from the watch daemon (service %s, %s, container %s)",
			info->host_pid, info->service[0] ? info->service : "-",
			info->jvm_version[0] ? info->jvm_version : "JVM",
			info->container_id[0] ? info->container_id : "none");
	t->connected = t->connected || info->connected;
	target_label(t, info);
	return t->tab;
}

static void on_ctl_dropped(void *arg, uint32_t host_pid, const struct fgp_dropped *d)
{
	struct session *s = arg;
	struct target *t = targets_find(&s->targets, host_pid);

	if (!t)
		return;
	t->drops_known = true;
	t->queue_full = d->queue_full;
	t->table_full = d->table_full;
}

static void on_ctl_tables(void *arg, uint32_t host_pid, bool on)
{
	struct session *s = arg;
	struct target *t = targets_find(&s->targets, host_pid);

	if (t)
		target_tables(s, t, on);
}

static void pump_ctl(struct session *s)
{
	struct ctl_handler h = {
		.jvm = on_ctl_jvm, .dropped = on_ctl_dropped, .tables = on_ctl_tables, .arg = s
	};
	int rv;

	if (!s->ctl)
		return;
	rv = ctl_pump(s->ctl, 0, &h, &s->ctl_bad);
	if (rv > 0)
		stackagg_jit_changed(s->agg);
	if (rv == 0 && !s->ctl_quiet_ns)
		s->ctl_quiet_ns = fg_now_ns();
	if (rv < 0) {
		session_note(s,
			     "the watch daemon's control channel closed (%s); Java frames after "
			     "this point may be [unknown]",
			     strerror(-rv));
		ctl_close(s->ctl);
		s->ctl = NULL;
		s->ctl_dead = true;
	}
}

/* Connect to the daemon's control channel (not subscribed yet). */
static int connect_ctl(struct session *s, char *why, size_t whylen)
{
	const char *path = s->o.ctl_path ? s->o.ctl_path : CTL_DEFAULT_PATH;
	int rv = ctl_connect(path, &s->ctl);

	if (rv != 0) {
		snprintf(why, whylen, "cannot reach the watch daemon's control channel %s: %s",
			 path, strerror(-rv));
		s->ctl = NULL;
	}
	return rv;
}

/* Whether the daemon has a connection from one of our PID/container targets (or any, --all). */
static bool ctl_knows_target(struct session *s)
{
	struct jvm_info *list;
	size_t n = 0;
	bool found = false;

	if (s->o.target == SESSION_TARGET_ALL)
		return true;
	list = calloc(SESSION_MAX_TARGETS, sizeof(*list));
	if (!list || ctl_list(s->ctl, list, SESSION_MAX_TARGETS, &n, 2000) != 0) {
		free(list);
		return true; /* cannot tell: trust the daemon */
	}
	for (size_t i = 0; i < n && i < SESSION_MAX_TARGETS && !found; i++)
		found = targets_find(&s->targets, list[i].host_pid) != NULL;
	free(list);
	return found;
}

static int subscribe_ctl(struct session *s, char *why, size_t whylen)
{
	const char *path = s->o.ctl_path ? s->o.ctl_path : CTL_DEFAULT_PATH;
	uint32_t pid = s->o.target == SESSION_TARGET_PID ? s->o.pid : 0;
	int rv = ctl_subscribe(s->ctl, pid);

	if (rv != 0) {
		snprintf(why, whylen, "control channel %s: subscribe failed: %s", path,
			 strerror(-rv));
		ctl_close(s->ctl);
		s->ctl = NULL;
		return rv;
	}
	s->src = SESSION_SRC_CTL;
	return 0;
}

/* ---- choosing ----------------------------------------------------------------------------- */

/*
 * A daemon that answers but has no connection from our targets may serve another agent socket
 * than ours: when we can listen on ours, nobody serves it, so the agents there come to us.
 */
int session_src_open(struct session *s, char *why, size_t whylen)
{
	const char *ctl = s->o.ctl_path ? s->o.ctl_path : CTL_DEFAULT_PATH;
	char ctlwhy[320] = "", lwhy[320];
	int crv = 0, rv;

	if (s->o.src != SESSION_SRC_LISTEN) {
		crv = connect_ctl(s, ctlwhy, sizeof(ctlwhy));
		if (crv != 0 && s->o.src == SESSION_SRC_CTL) {
			snprintf(why, whylen, "%s (is `fgcollect watch --ctl %s` running?)", ctlwhy,
				 ctl);
			return crv;
		}
		if (crv == 0 && (s->o.src == SESSION_SRC_CTL || ctl_knows_target(s)))
			return subscribe_ctl(s, why, whylen);
	}
	rv = open_listen(s, lwhy, sizeof(lwhy));
	if (rv == 0) {
		ctl_close(s->ctl); /* a daemon of other agents, if any */
		s->ctl = NULL;
		s->src = SESSION_SRC_LISTEN;
		return 0;
	}
	if (s->ctl) {
		/* The socket is served (by that daemon, presumably): its agent may not be there
		 * yet. */
		return subscribe_ctl(s, why, whylen);
	}
	if (s->o.src == SESSION_SRC_LISTEN) {
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

/* ---- both ------------------------------------------------------------------------------- */

nfds_t session_src_pollfds(const struct session *s, struct pollfd *fds)
{
	nfds_t n = 0;

	if (s->rx) {
		receive_pollfds(s->rx, fds);
		n = 2;
	}
	if (s->ctl) {
		fds[n].fd = ctl_fd(s->ctl);
		fds[n].events = POLLIN;
		n++;
	}
	return n;
}

void session_src_pump(struct session *s)
{
	pump_agents(s);
	pump_ctl(s);
}

void session_src_close(struct session *s)
{
	if (s->js)
		jvmset_free(s->js);
	if (s->rx)
		receive_close(s->rx);
	ctl_close(s->ctl);
	s->js = NULL;
	s->rx = NULL;
	s->ctl = NULL;
}
