// SPDX-License-Identifier: MIT
/*
 * session.c - a recording: sampler -> symbolizer/code tables -> stackagg.
 *
 * The code tables of the listen source live in a jvmset fed by our own receive socket (the same
 * modules `watch` uses, without perf maps). The settle watermark (the time up to which JIT
 * lookups are final) is now - settle_ns, held back while a target's agent replays its code set,
 * or while a target has no agent yet and agent_wait_ns has not passed since the start.
 *
 * Invariant: a sample is symbolized against code tables that are complete up to its time (or,
 * at session_finish, against everything that ever arrived); never against a partial replay.
 */
#include "session.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codetab.h"
#include "ctl_client.h"
#include "jvmset.h"
#include "peer.h"
#include "perfring.h"
#include "receive.h"
#include "resolve.h"
#include "sampler.h"
#include "symbolizer.h"
#include "util.h"

#define NOTES 64
#define TID_NAME 16
#define MAX_TIDS (1u << 20)

struct target {
	uint32_t pid;
	bool exited;
	bool connected;	     /* its agent has said hello to our source */
	bool replaying;	     /* between SNAPSHOT_BEGIN and END */
	struct codetab *tab; /* ctl source: our copy of the daemon's table */
	bool jvm;	     /* maps libjvm.so: an agent is expected */
	char root[48];	     /* "comm-pid", the process root frame of multi-target sessions */
	bool drops_known;    /* ctl source: the daemon sent the agent's drop counters */
	uint64_t queue_full, table_full;
};

struct tidname {
	uint32_t tid; /* 0 = empty */
	char name[TID_NAME];
};

struct session {
	struct session_opts o;
	enum session_src src;
	uint64_t start_ns, end_ns;

	struct target *targets;
	size_t ntargets;
	bool multi; /* more than one process possible: process root frames */

	struct tidname *tids;
	size_t ntids, tids_cap;

	struct sampler *sampler;
	struct symbolizer *sz;
	struct resolve_ctx rc; /* the resolvers' view of sz and the code tables */
	struct stackagg *agg;

	/* listen source */
	struct receive *rx;
	struct jvmset *js;

	/* ctl source */
	struct ctl_client *ctl;
	bool ctl_dead; /* the channel closed during the recording: keep the tables we have */
	uint64_t ctl_bad;
	uint64_t ctl_quiet_ns; /* when a pump last found nothing (history streamed) */

	char notes[NOTES][SESSION_NOTE_MAX];
	size_t note_head, note_len;
	uint64_t notes_lost;
};

static void note(struct session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct session *s, const char *fmt, ...)
{
	va_list ap;

	if (s->note_len == NOTES) {
		s->notes_lost++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(s->notes[(s->note_head + s->note_len) % NOTES], SESSION_NOTE_MAX, fmt, ap);
	va_end(ap);
	s->note_len++;
}

int session_next_note(struct session *s, char *buf, size_t len)
{
	if (!s->note_len)
		return 0;
	snprintf(buf, len, "%s", s->notes[s->note_head]);
	s->note_head = (s->note_head + 1) % NOTES;
	s->note_len--;
	return 1;
}

/* ---- thread names ---------------------------------------------------------------------- */

static uint64_t tid_hash(uint32_t tid)
{
	return (tid * 0x9e3779b97f4a7c15ull) >> 20;
}

static struct tidname *tid_slot(const struct session *s, uint32_t tid)
{
	size_t mask = s->tids_cap - 1;

	for (size_t j = tid_hash(tid) & mask;; j = (j + 1) & mask) {
		if (s->tids[j].tid == tid || s->tids[j].tid == 0)
			return &s->tids[j];
	}
}

static void tid_set(struct session *s, uint32_t tid, const char *name)
{
	struct tidname *e;

	if (tid == 0)
		return;
	if ((s->ntids + 1) * 2 > s->tids_cap) {
		size_t cap = s->tids_cap ? s->tids_cap * 2 : 1024;
		struct tidname *old = s->tids, *n;
		size_t oldcap = s->tids_cap;

		if (s->ntids >= MAX_TIDS || !(n = calloc(cap, sizeof(*n))))
			return; /* the thread keeps "[tid N]" */
		s->tids = n;
		s->tids_cap = cap;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].tid)
				*tid_slot(s, old[i].tid) = old[i];
		free(old);
	}
	e = tid_slot(s, tid);
	if (!e->tid)
		s->ntids++;
	e->tid = tid;
	snprintf(e->name, sizeof(e->name), "%s", name);
}

static const char *tid_get(const struct session *s, uint32_t tid)
{
	const struct tidname *e;

	if (!s->tids_cap)
		return NULL;
	e = tid_slot(s, tid);
	return e->tid ? e->name : NULL;
}

/* Read a small /proc file into buf, trailing newline removed. 0 or -errno. */
static int read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n'))
		buf[--n] = '\0';
	return 0;
}

/* A thread's name; a thread we have no COMM for yet is asked from /proc once. */
static const char *thread_name(struct session *s, uint32_t pid, uint32_t tid)
{
	const char *n = tid_get(s, tid);
	char path[64], name[64];

	if (n)
		return n;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	if (read_small(path, name, sizeof(name)) != 0)
		snprintf(name, sizeof(name), "[tid %u]", tid);
	tid_set(s, tid, name);
	return tid_get(s, tid);
}

static void load_thread_names(struct session *s, uint32_t pid)
{
	char path[64], name[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		uint64_t tid;

		if (fg_parse_u64(de->d_name, 1, UINT32_MAX, &tid) != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, (unsigned)tid);
		if (read_small(path, name, sizeof(name)) == 0)
			tid_set(s, (uint32_t)tid, name);
	}
	closedir(d);
}

/* ---- targets --------------------------------------------------------------------------- */

static struct target *target_find(const struct session *s, uint32_t pid)
{
	for (size_t i = 0; i < s->ntargets; i++)
		if (s->targets[i].pid == pid)
			return &s->targets[i];
	return NULL;
}

/* Whether pid maps a libjvm.so (a HotSpot JVM); unknown counts as yes. */
static bool maps_libjvm(uint32_t pid)
{
	char path[64], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "/libjvm.so") != NULL;
	fclose(f);
	return found;
}

static struct target *target_add(struct session *s, uint32_t pid)
{
	struct target *t = target_find(s, pid);
	char path[64], comm[32];

	if (t)
		return t;
	if (s->ntargets == SESSION_MAX_TARGETS)
		return NULL;
	t = &s->targets[s->ntargets++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	if (read_small(path, comm, sizeof(comm)) != 0)
		snprintf(comm, sizeof(comm), "pid");
	snprintf(t->root, sizeof(t->root), "%s-%u", comm, pid);
	t->jvm = maps_libjvm(pid);
	load_thread_names(s, pid);
	if (s->sz)
		(void)symbolizer_add_process(s->sz, (pid_t)pid);
	return t;
}

/* Every process whose container id starts with prefix. 0 or -ESRCH when none. */
static int find_container(struct session *s, const char *prefix)
{
	size_t plen = strlen(prefix);
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct peer_info pi;
		uint64_t pid;

		if (fg_parse_u64(de->d_name, 1, UINT32_MAX, &pid) != 0)
			continue;
		if (peer_read("/proc", (uint32_t)pid, &pi) != 0 || !pi.container_id[0])
			continue;
		if (strncmp(pi.container_id, prefix, plen) != 0)
			continue;
		/* Kernel threads have no address space to sample. */
		char exe[64], buf[8];

		snprintf(exe, sizeof(exe), "/proc/%u/exe", (unsigned)pid);
		if (readlink(exe, buf, sizeof(buf)) < 0)
			continue;
		if (!target_add(s, (uint32_t)pid))
			break;
	}
	closedir(d);
	return s->ntargets ? 0 : -ESRCH;
}

/* ---- code tables ----------------------------------------------------------------------- */

static const struct codetab *table_of(const struct session *s, uint32_t pid)
{
	struct jvm *j;

	if (s->src == SESSION_SRC_CTL) {
		const struct target *t = target_find(s, pid);

		return t ? t->tab : NULL;
	}
	if (s->js && (j = jvmset_find(s->js, pid)))
		return jvm_table(j);
	return NULL;
}

static const struct codetab *table_of_cb(void *arg, uint32_t pid)
{
	return table_of(arg, pid);
}

static void on_jvm_event(void *arg, enum jvmset_event ev, const struct jvm_info *info, int err,
			 const char *why)
{
	struct session *s = arg;
	struct target *t = target_find(s, info->host_pid);

	switch (ev) {
	case JVMSET_CONNECT:
		if (!t && s->o.target == SESSION_TARGET_ALL) {
			t = target_add(s, info->host_pid);
			if (t) {
				int rv = sampler_add_pid(s->sampler, (pid_t)info->host_pid);

				if (rv != 0 && rv != -EEXIST)
					note(s, "PID %u: cannot sample it: %s", info->host_pid,
					     strerror(-rv));
			}
		}
		if (t) {
			t->connected = true;
			note(s, "PID %u: agent connected (service %s, %s, container %s)",
			     info->host_pid, info->service[0] ? info->service : "-",
			     info->jvm_version[0] ? info->jvm_version : "JVM",
			     info->container_id[0] ? info->container_id : "none");
		}
		break;
	case JVMSET_REJECT:
		if (t)
			note(s, "PID %u: agent connection refused: %s (%s)", info->host_pid,
			     why ? why : "identity check failed", strerror(err < 0 ? -err : err));
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

	if (len < 2)
		return;
	type = (uint16_t)(raw[0] | raw[1] << 8);
	if (type != FGP_SNAPSHOT_BEGIN && type != FGP_SNAPSHOT_END)
		return;
	t = target_find(s, jvm_host_pid(j));
	if (t)
		t->replaying = type == FGP_SNAPSHOT_BEGIN;
}

/* Time up to which JIT lookups are final now. */
static uint64_t watermark(const struct session *s, uint64_t now)
{
	uint64_t w = now > s->o.settle_ns ? now - s->o.settle_ns : 0;

	if (s->src == SESSION_SRC_CTL && s->ctl && !s->ctl_quiet_ns)
		return 0; /* the daemon is still streaming the history */

	for (size_t i = 0; i < s->ntargets; i++) {
		const struct target *t = &s->targets[i];

		if (t->replaying)
			return 0;
		if (t->jvm && !t->connected && !t->exited && now - s->start_ns < s->o.agent_wait_ns)
			return 0;
	}
	return w;
}

/* ---- sampler records ------------------------------------------------------------------- */

static int on_record(void *ctx, const struct perfring_rec *r)
{
	struct session *s = ctx;

	switch (r->type) {
	case PERF_RECORD_SAMPLE: {
		struct target *t = s->multi ? target_find(s, r->pid) : NULL;
		struct stackagg_sample smp = {
			.pid = r->pid,
			.tid = r->tid,
			.ts = r->time,
			.kernel = r->u.sample.kernel,
			.nr_kernel = r->u.sample.nr_kernel,
			.user = r->u.sample.user,
			.nr_user = r->u.sample.nr_user,
			.process = s->multi ? (t ? t->root : "[other]") : NULL,
			.thread = thread_name(s, r->pid, r->tid),
		};

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
		tid_set(s, r->u.comm.tid, r->u.comm.comm);
		break;
	case PERF_RECORD_EXIT:
		if (r->u.task.pid == r->u.task.tid) {
			struct target *t = target_find(s, r->u.task.pid);

			if (t && !t->exited) {
				t->exited = true;
				note(s, "PID %u exited after %.1f s of recording", t->pid,
				     (double)(fg_now_ns() - s->start_ns) / 1e9);
			}
		}
		break;
	default:
		break;
	}
	return 0;
}

/* ---- ctl source ------------------------------------------------------------------------ */

static struct codetab *on_ctl_jvm(void *arg, const struct jvm_info *info)
{
	struct session *s = arg;
	struct target *t = target_find(s, info->host_pid);

	if (!t && s->o.target == SESSION_TARGET_ALL && info->connected && !info->exited) {
		t = target_add(s, info->host_pid);
		if (t) {
			int rv = sampler_add_pid(s->sampler, (pid_t)info->host_pid);

			if (rv != 0 && rv != -EEXIST)
				note(s, "PID %u: cannot sample it: %s", info->host_pid,
				     strerror(-rv));
		}
	}
	if (!t)
		return NULL;
	if (!t->tab && !(t->tab = codetab_new(NULL)))
		return NULL;
	if (info->connected && !t->connected)
		note(s, "PID %u: code table from the watch daemon (service %s, %s, container %s)",
		     info->host_pid, info->service[0] ? info->service : "-",
		     info->jvm_version[0] ? info->jvm_version : "JVM",
		     info->container_id[0] ? info->container_id : "none");
	t->connected = t->connected || info->connected;
	return t->tab;
}

static void on_ctl_dropped(void *arg, uint32_t host_pid, const struct fgp_dropped *d)
{
	struct target *t = target_find(arg, host_pid);

	if (!t)
		return;
	t->drops_known = true;
	t->queue_full = d->queue_full;
	t->table_full = d->table_full;
}

static void pump_ctl(struct session *s, int timeout_ms)
{
	struct ctl_handler h = { .jvm = on_ctl_jvm, .dropped = on_ctl_dropped, .arg = s };
	int rv;

	if (!s->ctl)
		return;
	rv = ctl_pump(s->ctl, timeout_ms, &h, &s->ctl_bad);
	if (rv > 0)
		stackagg_jit_changed(s->agg);
	if (rv == 0 && !s->ctl_quiet_ns)
		s->ctl_quiet_ns = fg_now_ns();
	if (rv < 0) {
		note(s,
		     "the watch daemon's control channel closed (%s); Java frames after this "
		     "point may be [unknown]",
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
		found = target_find(s, list[i].host_pid) != NULL;
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

/* ---- lifecycle ------------------------------------------------------------------------- */

static int open_listen(struct session *s, char *why, size_t whylen)
{
	struct receive_opts ro = { .path = s->o.socket_path, .watchdog_ms = 1000 };
	struct jvmset_opts jo = { 0 };
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

/*
 * The daemon's control channel, else our own listener; why names every path tried. A daemon
 * that answers but has no connection from our targets may serve another agent socket than
 * ours: when we can listen on ours, nobody serves it, so the agents there come to us.
 */
static int open_source(struct session *s, char *why, size_t whylen)
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

int session_open(const struct session_opts *o, struct session **out, char *why, size_t whylen)
{
	struct session *s = calloc(1, sizeof(*s));
	struct stackagg_resolver res;
	struct stackagg_opts ao = { .no_inline = o->no_inline,
				    .no_kernel = o->no_kernel,
				    .retry_misses = !o->live_view };
	struct symbolizer_opts so = { .preload = true };
	struct sampler_opts smo = { .freq_hz = o->freq_hz, .exclude_kernel = o->no_kernel };
	pid_t *pids = NULL;
	int rv = -ENOMEM;

	snprintf(why, whylen, "out of memory");
	if (!s)
		return -ENOMEM;
	s->o = *o;
	if (!s->o.socket_path)
		s->o.socket_path = SESSION_DEFAULT_SOCKET;
	if (!s->o.settle_ns)
		s->o.settle_ns = 300000000ull;
	if (!s->o.agent_wait_ns)
		s->o.agent_wait_ns = 3000000000ull;
	s->multi = o->target != SESSION_TARGET_PID;
	s->rc = (struct resolve_ctx){ .table_of = table_of_cb, .arg = s };
	resolve_init(&res, &s->rc);
	s->targets = calloc(SESSION_MAX_TARGETS, sizeof(*s->targets));
	s->sz = symbolizer_new(&so);
	s->rc.sz = s->sz;
	s->agg = stackagg_new(&ao, &res);
	if (!s->targets || !s->sz || !s->agg)
		goto fail;

	switch (o->target) {
	case SESSION_TARGET_PID: {
		char path[32];

		snprintf(path, sizeof(path), "/proc/%u/exe", o->pid);
		if (access(path, F_OK) != 0 && errno == ENOENT) {
			rv = -ESRCH;
			snprintf(why, whylen, "no process with PID %u", o->pid);
			goto fail;
		}
		target_add(s, o->pid);
		break;
	}
	case SESSION_TARGET_CONTAINER:
		rv = find_container(s, o->container);
		if (rv != 0) {
			snprintf(why, whylen, "no process in a container whose id starts with '%s'",
				 o->container);
			goto fail;
		}
		break;
	case SESSION_TARGET_ALL:
		break;
	}

	/*
	 * Code tables first, so agents can start replaying while the sampler opens. A running
	 * daemon is asked first: it may serve any agent socket (its --socket), and listening
	 * on ours would then fail or, worse, wait for agents that talk to the daemon. Only when
	 * no daemon answers on the control path do we listen on the agent socket ourselves.
	 */
	rv = open_source(s, why, whylen);
	if (rv != 0)
		goto fail;

	pids = calloc(s->ntargets ? s->ntargets : 1, sizeof(*pids));
	if (!pids) {
		rv = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < s->ntargets; i++)
		pids[i] = (pid_t)s->targets[i].pid;
	s->start_ns = fg_now_ns();
	rv = sampler_open(&smo, pids, s->ntargets, &s->sampler);
	free(pids);
	if (rv != 0) {
		if (rv == -EACCES || rv == -EPERM)
			snprintf(why, whylen,
				 "perf_event_open refused (%s): run as root or lower "
				 "kernel.perf_event_paranoid",
				 strerror(-rv));
		else if (rv == -ESRCH)
			snprintf(why, whylen, "the target process%s exited before sampling started",
				 s->ntargets > 1 ? "es" : "");
		else
			snprintf(why, whylen, "cannot start sampling: %s", strerror(-rv));
		goto fail;
	}
	*out = s;
	why[0] = '\0';
	return 0;
fail:
	session_close(s);
	return rv;
}

static void pump_agents(struct session *s)
{
	/* Any handled message may have changed a table: JIT names cached by pointer are stale. */
	if (s->rx && s->js && jvmset_pump(s->js, s->rx, fg_now_ns()) > 0)
		stackagg_jit_changed(s->agg);
}

int session_step(struct session *s, int timeout_ms)
{
	struct pollfd fds[4];
	nfds_t n = 0;
	int rv;

	if (s->rx) {
		receive_pollfds(s->rx, fds);
		n = 2;
	}
	if (s->ctl) {
		fds[n].fd = ctl_fd(s->ctl);
		fds[n].events = POLLIN;
		n++;
	}
	fds[n].fd = sampler_fd(s->sampler);
	fds[n].events = POLLIN;
	n++;
	rv = poll(fds, n, timeout_ms);
	if (rv < 0 && errno == EINTR)
		return -EINTR;
	pump_agents(s);
	pump_ctl(s, 0);
	rv = sampler_poll(s->sampler, 0, on_record, s);
	if (rv < 0 && rv != -EINTR)
		return rv;
	stackagg_settle(s->agg, watermark(s, fg_now_ns()));
	return 0;
}

void session_settle_now(struct session *s)
{
	stackagg_settle(s->agg, watermark(s, fg_now_ns()));
}

bool session_done(const struct session *s)
{
	if (s->o.target == SESSION_TARGET_ALL || !s->ntargets)
		return false;
	for (size_t i = 0; i < s->ntargets; i++)
		if (!s->targets[i].exited)
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
		if (poll(fds, n, left > 0 ? left : 0) < 0 && errno != EINTR)
			break;
		pump_agents(s);
		pump_ctl(s, 0);
	}
	pump_agents(s);
	pump_ctl(s, 0);
	stackagg_settle(s->agg, UINT64_MAX);
}

struct stackagg *session_agg(struct session *s)
{
	return s->agg;
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
	out->targets = s->ntargets;
	out->kernel_error = zs.kernel_error;
	stackagg_stats(s->agg, &out->agg);
	for (size_t i = 0; i < s->ntargets; i++) {
		const struct target *t = &s->targets[i];
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

struct codelog {
	FILE *f;
	uint32_t pid;
};

static int codelog_line(void *arg, const struct codeblob *b, bool is_unload)
{
	struct codelog *cl = arg;

	if (fprintf(cl->f, "%u %llu %s %llx %u %s %s\n", cl->pid,
		    (unsigned long long)(is_unload ? b->unload_ts : b->load_ts),
		    is_unload ? "unload" : "load", (unsigned long long)b->addr, b->size,
		    b->kind == CODEBLOB_DYNAMIC ? "dynamic" : "compiled", b->name) < 0)
		return -EIO;
	return 0;
}

int session_write_code_log(const struct session *s, FILE *f)
{
	for (size_t i = 0; i < s->ntargets; i++) {
		struct codelog cl = { .f = f, .pid = s->targets[i].pid };
		const struct codetab *tab = table_of(s, cl.pid);
		int rv;

		if (!tab)
			continue;
		rv = codetab_history(tab, codelog_line, &cl);
		if (rv != 0)
			return rv;
	}
	return fflush(f) == 0 ? 0 : -EIO;
}

void session_close(struct session *s)
{
	if (!s)
		return;
	sampler_close(s->sampler);
	if (s->js)
		jvmset_free(s->js);
	if (s->rx)
		receive_close(s->rx);
	ctl_close(s->ctl);
	for (size_t i = 0; s->targets && i < s->ntargets; i++)
		codetab_free(s->targets[i].tab);
	stackagg_free(s->agg);
	symbolizer_free(s->sz);
	free(s->targets);
	free(s->tids);
	free(s);
}
