// SPDX-License-Identifier: MIT
/*
 * jvmset.c - connections, JVM identities, tables and perf maps (see jvmset.h).
 *
 * Invariant: a connection is bound to at most one JVM and a JVM to at most one connection
 * (j->conn == c implies c->jvm == j); a JVM outlives its connections, never the reverse.
 */
#include "jvmset.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "fgclock.h"
#include "fgproto.h"
#include "util.h"
#include "fgsearch.h"
#include "htab.h"
#include "nstid.h"
#include "perfmap.h"
#include "receive.h"
#include "fgfree.h"
#include "util.h"

#define NSEC 1000000000ull
#define REPLAY_HOLD_NS (2 * NSEC)
#define CHECK_EVERY_NS NSEC
#define MAX_OBSERVERS 4
#define MAX_JVMS 4096
/*
 * A JVM's tables stay wanted this long after the last observer let go: a subscriber that
 * reconnects (the roller's hourly new session) does not make agents turn them off and announce
 * all their code again.
 */
#define WANT_LINGER_NS (3 * NSEC)

struct conn {
	uint32_t pipe;
	struct peer_info peer; /* read from /proc at the first message */
	struct jvm *jvm;       /* after a verified HELLO */
	unsigned bad;
	bool superseded; /* its JVM connected again: what it still delivers is stale */
	/*
	 * The NAMEs of this connection: id -> its name, a reference into jvm's code table
	 * (codetab_name_get), so its loads name their blobs without hashing a string again.
	 * Given back when the connection goes or its JVM is forgotten (conn_drop_names).
	 */
	struct htab names;
	size_t names_bytes;
};

#define NAMES_MAX_BYTES (64u << 20) /* per connection, with FGP_MAX_NAMES */

struct jvm {
	struct jvm_info info;
	struct codetab *tab;
	struct conn *conn;
	bool dirty, in_replay;
	bool fresh; /* changed since the last write (not only waiting for a compaction) */
	int last_err;
	uint64_t dirty_since, replay_since, last_write, interval, next_check;
	uint64_t last_compact, compact_interval;
	uint64_t wanted_at; /* when an observer last took its records (tables on demand), or 0 */
	struct perfmap_writer *map;    /* NULL when the set writes no maps */
	uint32_t ev_on[MAX_OBSERVERS]; /* FGP_EVM_* each observer wants of it (update_wants) */
	struct nstid *tids;	       /* agent tid -> host tid, made at its first event */
};

struct jvmset {
	struct jvmset_opts o;
	struct jvmset_observer obs[MAX_OBSERVERS];
	unsigned n_obs;
	unsigned n_rec_obs;  /* of them with a record callback */
	struct conn **conns; /* sorted by pipe id */
	size_t n_conns, cap_conns;
	struct jvm **jvms;
	size_t n_jvms, cap_jvms;
	uint64_t next_prune;
	struct jvmset_counters c;
	struct fgp_str *resolved;  /* FGP_MAX_INLINE_METHODS names of the load being applied */
	uint8_t *scratch;	   /* FGP_MAX_RECORD: a resolved load re-encoded for observers */
	uint64_t *want, *want_new; /* MAX_JVMS tokens: the set last told, the one being built */
	size_t n_want;
	bool want_told;
	/* MAX_JVMS events lines: the set last told, the one being built */
	struct jvm_evwant_tok *evw, *evw_new;
	size_t n_evw;
	struct jvm_ev_frame *evframes; /* FGP_MAX_EVENT_DEPTH: the event being handed on */
	uint64_t *evtags;	       /* FGP_MAX_FREE_TAGS */
};

/* Give c's names back to its JVM's code table. */
static void conn_drop_names(struct conn *c)
{
	for (size_t i = 0; i < c->names.cap && c->jvm; i++)
		if (c->names.slots[i].key)
			codetab_name_put(c->jvm->tab,
					 (const char *)(uintptr_t)c->names.slots[i].val);
	htab_fini(&c->names);
	c->names_bytes = 0;
}

static void conn_free(struct conn *c)
{
	if (!c)
		return;
	conn_drop_names(c);
	free(c);
}

static void emit(struct jvmset *s, enum jvmset_event ev, const struct jvm_info *info, int err,
		 const char *why)
{
	for (unsigned i = 0; i < s->n_obs; i++)
		if (s->obs[i].event)
			s->obs[i].event(s->obs[i].arg, ev, info, err, why);
}

static void emit_jvm(struct jvmset *s, enum jvmset_event ev, struct jvm *j, int err,
		     const char *why)
{
	struct jvm_info info;

	jvm_info(j, &info);
	emit(s, ev, &info, err, why);
}

int jvmset_new(const struct jvmset_opts *o, struct jvmset **out)
{
	struct jvmset *s = FG_NEW_CONF(struct jvmset, o, o);

	if (!s)
		return -ENOMEM;
	FG_DEFAULT(s->o.proc_root, "/proc");
	FG_DEFAULT(s->o.keep_exited_ns, 3600 * NSEC);
	FG_DEFAULT(s->o.history_ns, 600 * NSEC);
	FG_DEFAULT(s->o.max_bad_msgs, 16);
	FG_DEFAULT(s->o.min_write_ns, 2000000);
	FG_DEFAULT(s->o.max_write_ns, 500000000);
	*out = s;
	return 0;
}

static void jvm_free(struct jvm *j)
{
	if (!j)
		return;
	codetab_free(j->tab);
	perfmap_writer_free(j->map);
	if (j->tids)
		nstid_fini(j->tids);
	free(j->tids);
	free(j);
}

void jvmset_free(struct jvmset *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_conns; i++)
		conn_free(s->conns[i]);
	for (size_t i = 0; i < s->n_jvms; i++)
		jvm_free(s->jvms[i]);
	FG_FREE_ALL(s->conns, s->jvms, s->resolved, s->scratch, s->want, s->want_new, s->evw,
		    s->evw_new, s->evframes, s->evtags, s);
}

int jvmset_observe(struct jvmset *s, const struct jvmset_observer *ob)
{
	if (s->n_obs == MAX_OBSERVERS)
		return -ENOSPC;
	s->obs[s->n_obs++] = *ob;
	return 0;
}

/* ---- connections ------------------------------------------------------------------- */

static bool conn_before(struct conn *const *c, uint32_t pipe)
{
	return (*c)->pipe < pipe;
}
FG_LOWER_BOUND(conn_lower_bound, struct conn *, uint32_t, conn_before)

static size_t conn_pos(const struct jvmset *s, uint32_t pipe)
{
	return conn_lower_bound(s->conns, s->n_conns, pipe);
}

static struct conn *conn_find(const struct jvmset *s, uint32_t pipe)
{
	size_t i = conn_pos(s, pipe);

	return i < s->n_conns && s->conns[i]->pipe == pipe ? s->conns[i] : NULL;
}

bool jvmset_has_pipe(const struct jvmset *s, uint32_t pipe)
{
	return conn_find(s, pipe) != NULL;
}

static struct conn *conn_add(struct jvmset *s, uint32_t pipe)
{
	size_t i = conn_pos(s, pipe);
	struct conn *c;

	if (ARRAY_GROW(s->conns, s->cap_conns, s->n_conns + 1) != 0)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->pipe = pipe;
	memmove(&s->conns[i + 1], &s->conns[i], (s->n_conns - i) * sizeof(*s->conns));
	s->conns[i] = c;
	s->n_conns++;
	return c;
}

/* ---- JVMs -------------------------------------------------------------------------- */

struct jvm *jvmset_find(const struct jvmset *s, uint32_t host_pid)
{
	for (size_t i = 0; i < s->n_jvms; i++)
		if (s->jvms[i]->info.host_pid == host_pid)
			return s->jvms[i];
	return NULL;
}

size_t jvmset_count(const struct jvmset *s)
{
	return s->n_jvms;
}

struct jvm *jvmset_at(const struct jvmset *s, size_t i)
{
	return i < s->n_jvms ? s->jvms[i] : NULL;
}

void jvm_info(const struct jvm *j, struct jvm_info *out)
{
	*out = j->info;
	out->connected = j->conn != NULL;
	codetab_stats(j->tab, &out->tab);
}

const struct codetab *jvm_table(const struct jvm *j)
{
	return j->tab;
}

uint32_t jvm_host_pid(const struct jvm *j)
{
	return j->info.host_pid;
}

const struct perfmap_file *jvm_map_file(const struct jvm *j)
{
	return j->map ? perfmap_writer_file(j->map) : NULL;
}

/* Remove j from the set (its map if still ours), freeing it. */
static void jvm_forget(struct jvmset *s, struct jvm *j, bool remove_map)
{
	if (remove_map && j->map)
		perfmap_remove(s->o.maps, j->info.host_pid, perfmap_writer_file(j->map));
	/* The current connection and any it superseded: their names are j's. */
	for (size_t i = 0; i < s->n_conns; i++) {
		if (s->conns[i]->jvm == j) {
			conn_drop_names(s->conns[i]);
			s->conns[i]->jvm = NULL;
		}
	}
	for (size_t i = 0; i < s->n_jvms; i++) {
		if (s->jvms[i] == j) {
			s->jvms[i] = s->jvms[--s->n_jvms];
			break;
		}
	}
	jvm_free(j);
}

static void expire(struct jvmset *s, struct jvm *j)
{
	emit_jvm(s, JVMSET_EXPIRE, j, 0, NULL);
	s->c.expired++;
	jvm_forget(s, j, true);
}

/* Is the process behind j still the one that connected? */
static bool jvm_alive(struct jvmset *s, const struct jvm *j)
{
	uint64_t start;

	return peer_start_time(s->o.proc_root, j->info.host_pid, &start) == 0 &&
	       start == j->info.start_time;
}

static void mark_exited(struct jvmset *s, struct jvm *j, uint64_t now)
{
	/* Its map changes no more: give back the descriptor kept for appends. */
	if (j->map)
		perfmap_writer_release(j->map);
	j->info.exited = true;
	j->info.exit_ts = now;
	s->c.exits++;
}

static void copy_str(char *dst, size_t cap, const struct fgp_str *s)
{
	size_t n = s->len < cap - 1 ? s->len : cap - 1;

	if (n) /* an older agent's HELLO has no service string: ptr NULL */
		memcpy(dst, s->ptr, n);
	dst[n] = '\0';
}

static void reject(struct jvmset *s, struct conn *c, const char *why)
{
	struct jvm_info info = { .host_pid = c->peer.host_pid,
				 .ns_pid = c->peer.ns_pid,
				 .start_time = c->peer.start_time };

	memcpy(info.container_id, c->peer.container_id, sizeof(info.container_id));
	s->c.rejected++;
	emit(s, JVMSET_REJECT, &info, 0, why);
}

/* A new JVM for c's peer, making room at MAX_JVMS by expiring the oldest exited one. */
static int jvm_create(struct jvmset *s, struct conn *c, struct jvm **out)
{
	struct jvm *j;

	if (s->n_jvms >= MAX_JVMS) {
		struct jvm *oldest = NULL;

		for (size_t i = 0; i < s->n_jvms; i++)
			if (s->jvms[i]->info.exited &&
			    (!oldest || s->jvms[i]->info.exit_ts < oldest->info.exit_ts))
				oldest = s->jvms[i];
		if (!oldest) {
			reject(s, c, "too many JVMs");
			return -EUSERS;
		}
		expire(s, oldest);
	}
	if (ARRAY_GROW(s->jvms, s->cap_jvms, s->n_jvms + 1) != 0)
		return -ENOMEM;
	j = calloc(1, sizeof(*j));
	if (!j || !(j->tab = codetab_new(&s->o.limits)) ||
	    (s->o.maps && !(j->map = perfmap_writer_new(s->o.maps, c->peer.host_pid)))) {
		jvm_free(j);
		reject(s, c, "out of memory");
		return -ENOMEM;
	}
	j->info.host_pid = c->peer.host_pid;
	j->info.start_time = c->peer.start_time;
	j->interval = s->o.min_write_ns;
	j->compact_interval = s->o.min_write_ns;
	s->jvms[s->n_jvms++] = j;
	*out = j;
	return 0;
}

/*
 * Admission, second half: a HELLO binds c to its JVM (found again, or new) once it agrees
 * with what the kernel and /proc said about the peer. 0 or the negative errno of jvmset_msg.
 */
static int hello(struct jvmset *s, struct conn *c, const struct fgp_hello *h, uint64_t now)
{
	struct jvm *j;
	char why[96];
	int rv;

	if (h->proto_version != FGP_VERSION) {
		snprintf(why, sizeof(why), "protocol version %u, expected %u", h->proto_version,
			 (unsigned int)FGP_VERSION);
		reject(s, c, why);
		return -EPROTONOSUPPORT;
	}
	if (h->pid != c->peer.ns_pid) {
		snprintf(why, sizeof(why), "hello says pid %u but /proc NSpid says %u", h->pid,
			 c->peer.ns_pid);
		reject(s, c, why);
		return -EPERM;
	}
	j = jvmset_find(s, c->peer.host_pid);
	if (j && j->info.start_time != c->peer.start_time) {
		/* The PID was reused: the old JVM is gone and its map names the new process. */
		if (!j->info.exited)
			mark_exited(s, j, now);
		expire(s, j);
		j = NULL;
	}
	if (!j && (rv = jvm_create(s, c, &j)) != 0)
		return rv;
	if (j->conn) {
		/*
		 * The agent reconnected before we saw its old pipe end (e.g. it gave up on us
		 * while we were frozen). The new connection's snapshot is complete; what the old
		 * one still delivers is older, and an old unload would end newer code. Its
		 * names go back to j's table now: it decodes nothing more, and once detached
		 * its end could not give them back.
		 */
		conn_drop_names(j->conn);
		j->conn->jvm = NULL;
		j->conn->superseded = true;
	}
	j->conn = c;
	c->jvm = j;
	j->info.ns_pid = c->peer.ns_pid;
	memcpy(j->info.container_id, c->peer.container_id, sizeof(j->info.container_id));
	copy_str(j->info.jvm_version, sizeof(j->info.jvm_version), &h->jvm_version);
	copy_str(j->info.agent_version, sizeof(j->info.agent_version), &h->agent_version);
	copy_str(j->info.service, sizeof(j->info.service), &h->service);
	j->info.hello_flags = h->flags;
	j->info.token = h->token;
	/* An agent with tables on demand starts each connection without them (fgproto.h). */
	j->info.tables = !(h->flags & FGP_HELLO_TABLES_ON_DEMAND);
	j->info.exited = false;
	j->info.connect_ts = now;
	s->c.connects++;
	emit_jvm(s, JVMSET_CONNECT, j, 0, NULL);
	return 0;
}

static bool obs_wants(const struct jvmset_observer *o, const struct jvm *j)
{
	return o->record && (!o->wants || o->wants(o->arg, j));
}

static void forward(struct jvmset *s, const struct jvm *j, const uint8_t *raw, size_t len)
{
	for (unsigned i = 0; i < s->n_obs; i++)
		if (obs_wants(&s->obs[i], j))
			s->obs[i].record(s->obs[i].arg, j, raw, len);
}

/* Does any observer take j's records now? */
static bool any_wants(const struct jvmset *s, const struct jvm *j)
{
	for (unsigned i = 0; i < s->n_obs; i++)
		if (obs_wants(&s->obs[i], j))
			return true;
	return false;
}

static void make_dirty(struct jvm *j, uint64_t now)
{
	j->fresh = true;
	if (!j->dirty) {
		j->dirty = true;
		j->dirty_since = now;
	}
}

/*
 * Admission, first half: the connection state of pipe, created at its first message from the
 * kernel's peer PID and /proc. 0 with *out set, or the negative errno of jvmset_msg.
 */
static int admit(struct jvmset *s, uint32_t pipe, uint32_t peer_pid, struct conn **out)
{
	struct conn *c = conn_find(s, pipe);
	int rv;

	if (c) {
		*out = c;
		return 0;
	}
	c = conn_add(s, pipe);
	if (!c)
		return -ENOMEM;
	c->peer.host_pid = peer_pid;
	if (peer_pid == 0) {
		reject(s, c, "the kernel gave no peer PID");
		return -ESRCH;
	}
	if ((rv = peer_read(s->o.proc_root, peer_pid, &c->peer)) != 0) {
		char why[96];

		snprintf(why, sizeof(why), "cannot read %s/%u: %s", s->o.proc_root, peer_pid,
			 strerror(-rv));
		reject(s, c, why);
		return rv;
	}
	*out = c;
	return 0;
}

/*
 * One valid record of an admitted JVM (interned: a CODE_LOAD_IDS resolved with its connection's
 * names): 1 when observers should see it, 0 when not, -EINVAL when its contents are malformed
 * (counted by the caller).
 */
static int apply(struct jvm *j, const struct fgp_record *rec, bool interned, uint64_t now)
{
	int rv;

	switch (rec->type) {
	case FGP_HELLO:
		return 0; /* a repeated HELLO changes nothing */
	case FGP_TABLES:
		if (j->info.hello_flags & FGP_HELLO_TABLES_ON_DEMAND)
			j->info.tables = rec->u.tables.on != 0;
		return 1;
	case FGP_DROPPED:
		j->info.agent_queue_full = rec->u.dropped.queue_full;
		j->info.agent_table_full = rec->u.dropped.table_full;
		return 1;
	case FGP_SNAPSHOT_BEGIN:
		j->in_replay = true;
		j->replay_since = now;
		codetab_apply(j->tab, rec);
		return 1;
	case FGP_SNAPSHOT_END:
		codetab_apply(j->tab, rec);
		j->in_replay = false;
		make_dirty(j, now);
		return 1;
	case FGP_VM_LAYOUT:  /* kept for naming interpreted frames */
	case FGP_CODE_FRAME: /* kept for unwinding without frame pointers */
	case FGP_CODE_LINES: /* kept for --lines of compiled frames */
		codetab_apply(j->tab, rec);
		return 1;
	case FGP_CODE_LOAD:
	case FGP_CODE_UNLOAD:
	case FGP_DYNAMIC_CODE:
		rv = interned ? codetab_apply_interned(j->tab, rec) : codetab_apply(j->tab, rec);
		if (rv == 1) {
			make_dirty(j, now);
			if (j->map && rec->type != FGP_CODE_UNLOAD)
				perfmap_writer_note(j->map, rec->type == FGP_CODE_LOAD
								    ? rec->u.load.addr
								    : rec->u.dyn.addr);
		}
		return rv == -EINVAL ? -EINVAL : 1;
	default:
		return 0; /* unknown type: skipped by size, as the format intends */
	}
}

/*
 * NAME: define an id on connection c (a redefinition replaces it), as a name of c's JVM's code
 * table. 0 or -EBADMSG/-ENOMEM.
 */
static int conn_name(struct jvmset *s, struct conn *c, const struct fgp_name *n)
{
	uint64_t *v = htab_get(&c->names, n->id);
	const char *name;

	(void)s;
	if (!v && (htab_count(&c->names) >= FGP_MAX_NAMES ||
		   c->names_bytes + n->name.len > NAMES_MAX_BYTES))
		return -EBADMSG; /* over the per-connection cap: a peer gone wrong */
	name = codetab_name_get(c->jvm->tab, n->name.ptr, n->name.len);
	if (!name)
		return -ENOMEM;
	if (v) {
		const char *old = (const char *)(uintptr_t)*v;

		c->names_bytes -= codetab_name_len(old);
		codetab_name_put(c->jvm->tab, old);
		*v = (uint64_t)(uintptr_t)name;
	} else if (htab_put(&c->names, n->id, (uint64_t)(uintptr_t)name) != 0) {
		codetab_name_put(c->jvm->tab, name);
		return -ENOMEM;
	}
	c->names_bytes += codetab_name_len(name);
	return 0;
}

static bool conn_lookup(const struct conn *c, uint32_t id, struct fgp_str *out)
{
	uint64_t *v = htab_get(&c->names, id);
	const char *name;

	if (!v)
		return false;
	name = (const char *)(uintptr_t)*v;
	*out = (struct fgp_str){ name, (uint16_t)codetab_name_len(name) };
	return true;
}

/*
 * CODE_LOAD_IDS: resolve the name and inline method ids with c's names into a CODE_LOAD (the
 * names live in c and s->resolved until the next record). 0, or -EBADMSG for an id never
 * defined on this connection.
 */
static int resolve(struct jvmset *s, struct conn *c, struct fgp_record *rec)
{
	struct fgp_code_load *l = &rec->u.load;

	if (!s->resolved && !(s->resolved = malloc(FGP_MAX_INLINE_METHODS * sizeof(*s->resolved))))
		return -ENOMEM;
	if (!conn_lookup(c, l->name_id, &l->name))
		return -EBADMSG;
	for (unsigned i = 0; i < l->n_methods; i++)
		if (!conn_lookup(c, fgp_load_method_id(l, i), &s->resolved[i]))
			return -EBADMSG;
	l->methods = s->resolved;
	rec->type = FGP_CODE_LOAD;
	return 0;
}

/* A load that arrived interned goes to observers as a plain CODE_LOAD: they have no ids. */
static void forward_resolved(struct jvmset *s, const struct jvm *j, const struct fgp_record *rec)
{
	int n;

	if (!any_wants(s, j))
		return; /* nobody takes this JVM's records now: no re-encoding */
	if (!s->scratch && !(s->scratch = malloc(FGP_MAX_RECORD)))
		return;
	n = fgp_encode_code_load_resolved(s->scratch, FGP_MAX_RECORD, &rec->u.load, rec->flags);
	if (n > 0)
		forward(s, j, s->scratch, (size_t)n);
}

/* ---- events (jvmevent.h) ------------------------------------------------------------- */

/* What the observers want of j's events, as FGP_EVM_* bits (as of the last update_wants). */
static uint32_t ev_wanted(const struct jvmset *s, const struct jvm *j)
{
	uint32_t on = 0;

	for (unsigned i = 0; i < s->n_obs; i++)
		on |= j->ev_on[i];
	return on;
}

static void ev_emit(struct jvmset *s, const struct jvm *j, uint32_t need,
		    const struct jvm_event *ev)
{
	for (unsigned i = 0; i < s->n_obs; i++)
		if (s->obs[i].ev && (j->ev_on[i] & need))
			s->obs[i].ev(s->obs[i].arg, j, ev);
}

static void ev_drop(struct jvmset *s, struct jvm *j, uint64_t *jc, uint64_t *sc)
{
	(void)s;
	(void)j;
	(*jc)++;
	(*sc)++;
}

/* The host tid of the agent's tid, looked up among j's own tasks: 0 when not found. */
static uint32_t ev_host_tid(struct jvmset *s, struct jvm *j, uint32_t ns_tid, uint64_t now)
{
	uint32_t tid = 0;

	if (!j->tids) {
		if (!(j->tids = malloc(sizeof(*j->tids))))
			return 0;
		nstid_init(j->tids, s->o.proc_root, j->info.host_pid);
	}
	return nstid_lookup(j->tids, ns_tid, now, &tid) == 0 ? tid : 0;
}

/* STACK_EVENT: names resolved with c's, the thread mapped; handed on or dropped and counted. */
static void ev_stack(struct jvmset *s, struct conn *c, const struct fgp_record *rec, uint64_t now)
{
	struct jvm *j = c->jvm;
	const struct fgp_stack_event *e = &rec->u.ev;
	uint32_t need = e->kind == FGP_EV_LOCK	   ? FGP_EVM_LOCK
			: e->kind == FGP_EV_VWAIT  ? FGP_EVM_VTHREAD
			: e->kind == FGP_EV_VMOUNT ? FGP_EVM_VMOUNT
						   : FGP_EVM_ALLOC | FGP_EVM_LIVE;
	struct jvm_event ev = { .type = JVM_EV_STACK,
				.host_pid = j->info.host_pid,
				.ts = e->ts,
				.kind = e->kind,
				.truncated = (rec->flags & FGP_REC_STACK_TRUNCATED) != 0,
				.value = e->value,
				.interval = e->interval,
				.weight = e->weight,
				.tag = e->tag,
				.cls = e->cls,
				.depth = e->depth };

	if (!(ev_wanted(s, j) & need)) {
		ev_drop(s, j, &j->info.ev_drops.unwanted, &s->c.ev_drops.unwanted);
		return;
	}
	if (!s->evframes && !(s->evframes = malloc(FGP_MAX_EVENT_DEPTH * sizeof(*s->evframes))))
		return;
	for (uint16_t i = 0; i < e->depth && i < FGP_MAX_EVENT_DEPTH; i++) {
		struct fgp_str name;
		uint32_t id;
		int32_t line;

		fgp_event_frame(e, i, &id, &line);
		if (!conn_lookup(c, id, &name)) {
			ev_drop(s, j, &j->info.ev_drops.unknown_id, &s->c.ev_drops.unknown_id);
			return;
		}
		s->evframes[i] = (struct jvm_ev_frame){ name.ptr, name.len, line };
	}
	ev.frames = s->evframes;
	ev.host_tid = ev_host_tid(s, j, e->tid, now);
	if (!ev.host_tid)
		ev_drop(s, j, &j->info.ev_drops.unknown_tid, &s->c.ev_drops.unknown_tid);
	j->info.ev_stacks++;
	s->c.ev_stacks++;
	ev_emit(s, j, need, &ev);
}

static void ev_free(struct jvmset *s, struct jvm *j, const struct fgp_object_free *f)
{
	struct jvm_event ev = { .type = JVM_EV_FREE, .host_pid = j->info.host_pid };

	if (!(ev_wanted(s, j) & FGP_EVM_LIVE))
		return; /* frees after the live profile ended: nothing to take out */
	if (!s->evtags && !(s->evtags = malloc(FGP_MAX_FREE_TAGS * sizeof(*s->evtags))))
		return;
	for (uint32_t i = 0; i < f->n && i < FGP_MAX_FREE_TAGS; i++)
		s->evtags[i] = fgp_free_tag(f, i);
	ev.tags = s->evtags;
	ev.ntags = f->n < FGP_MAX_FREE_TAGS ? f->n : FGP_MAX_FREE_TAGS;
	j->info.ev_frees++;
	s->c.ev_frees++;
	ev_emit(s, j, FGP_EVM_LIVE, &ev);
}

static void on_event_rec(struct jvmset *s, struct conn *c, const struct fgp_record *rec,
			 uint64_t now)
{
	struct jvm *j = c->jvm;
	struct jvm_event ev;

	/* a stack event, most of them, builds its own */
	if (rec->type == FGP_STACK_EVENT) {
		ev_stack(s, c, rec, now);
		return;
	}
	ev = (struct jvm_event){ .type = JVM_EV_STATE, .host_pid = j->info.host_pid };
	switch (rec->type) {
	case FGP_OBJECT_FREE:
		ev_free(s, j, &rec->u.freed);
		break;
	case FGP_ALLOC_COST:
		ev.type = JVM_EV_COST;
		ev.cost = rec->u.cost;
		ev_emit(s, j, FGP_EVM_ALLOC | FGP_EVM_LIVE, &ev);
		break;
	default: /* FGP_EVENTS */
		j->info.events_known = true;
		j->info.events = rec->u.events;
		ev.state = rec->u.events;
		ev.drops = j->info.ev_drops;
		s->c.ev_states++;
		ev_emit(s, j, FGP_EVM_ALL, &ev);
		break;
	}
}

/*
 * Decoding: every record of one message, in order. *bad says whether any of it was malformed
 * (a record before the HELLO included). 0, or the negative errno of a refused HELLO.
 */
static int decode(struct jvmset *s, struct conn *c, const uint8_t *data, size_t len, uint64_t now,
		  bool *bad)
{
	struct fgp_reader r;
	struct fgp_record rec;
	bool interned;
	int rv;

	if (fgp_reader_init(&r, data, len) != 0) {
		*bad = true;
		return 0;
	}
	for (;;) {
		size_t off = r.off;

		rv = fgp_next(&r, &rec);
		if (rv == 0)
			return 0;
		if (rv < 0) {
			*bad = true;
			s->c.bad_records++;
			if (c->jvm)
				c->jvm->info.bad_records++;
			continue;
		}
		s->c.records++;
		if (!c->jvm) {
			if (rec.type != FGP_HELLO) {
				*bad = true; /* nothing counts before a HELLO */
				return 0;
			}
			if ((rv = hello(s, c, &rec.u.hello, now)) != 0)
				return rv;
			continue;
		}
		c->jvm->info.records++;
		if (rec.type == FGP_STACK_EVENT || rec.type == FGP_OBJECT_FREE ||
		    rec.type == FGP_EVENTS || rec.type == FGP_ALLOC_COST) {
			on_event_rec(s, c, &rec, now);
			continue;
		}
		interned = rec.type == FGP_CODE_LOAD_IDS;
		if (rec.type == FGP_NAME || rec.type == FGP_CODE_LOAD_IDS) {
			rv = rec.type == FGP_NAME ? conn_name(s, c, &rec.u.name)
						  : resolve(s, c, &rec);
			if (rv < 0) {
				*bad = true;
				s->c.bad_records++;
				c->jvm->info.bad_records++;
				continue;
			}
			if (rec.type == FGP_NAME)
				continue;
		}
		rv = apply(c->jvm, &rec, interned, now);
		if (rv < 0) {
			*bad = true;
			s->c.bad_records++;
			c->jvm->info.bad_records++;
		} else if (rv == 1 && rec.u.load.name_id && rec.type == FGP_CODE_LOAD) {
			forward_resolved(s, c->jvm, &rec);
		} else if (rv == 1) {
			forward(s, c->jvm, data + off, rec.size);
		}
	}
}

/*
 * Bad-peer policy: a connection may send max_bad_msgs malformed messages, then it is dropped
 * (0 or -EBADMSG).
 */
static int bad_msg(struct jvmset *s, struct conn *c)
{
	struct jvm_info info = { .host_pid = c->peer.host_pid };

	s->c.bad_msgs++;
	if (c->jvm)
		c->jvm->info.bad_msgs++;
	if (++c->bad < s->o.max_bad_msgs)
		return 0;
	if (c->jvm)
		jvm_info(c->jvm, &info);
	s->c.bad_peers++;
	emit(s, JVMSET_BAD_PEER, &info, -EBADMSG, "too many malformed messages");
	return -EBADMSG;
}

int jvmset_msg(struct jvmset *s, uint32_t pipe, uint32_t peer_pid, const uint8_t *data, size_t len,
	       uint64_t now)
{
	struct conn *c;
	bool bad = false;
	int rv;

	if ((rv = admit(s, pipe, peer_pid, &c)) != 0)
		return rv;
	if (c->superseded) {
		/*
		 * Ignored, but not closed from here: the agent has closed it already, and
		 * closing a pipe that still holds a backlog has wedged nng 1.5.2 here.
		 */
		s->c.stale_msgs++;
		return 0;
	}
	s->c.msgs++;
	s->c.bytes += len;
	if ((rv = decode(s, c, data, len, now, &bad)) != 0)
		return rv;
	return bad ? bad_msg(s, c) : 0;
}

void jvmset_gone(struct jvmset *s, uint32_t pipe, uint64_t now)
{
	size_t i = conn_pos(s, pipe);
	struct conn *c;
	struct jvm *j;

	if (i >= s->n_conns || s->conns[i]->pipe != pipe)
		return;
	c = s->conns[i];
	memmove(&s->conns[i], &s->conns[i + 1], (s->n_conns - i - 1) * sizeof(*s->conns));
	s->n_conns--;
	j = c->jvm;
	bool current = j && j->conn == c;

	conn_free(c);
	if (!current)
		return;
	j->conn = NULL;
	if (j->info.hello_flags & FGP_HELLO_TABLES_ON_DEMAND)
		j->info.tables = false;
	s->c.disconnects++;
	if (!jvm_alive(s, j))
		mark_exited(s, j, now);
	j->next_check = now + CHECK_EVERY_NS;
	emit_jvm(s, JVMSET_DISCONNECT, j, 0, NULL);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* What the observers want of j's events now: each one's bits in j->ev_on, merged into *w. */
static void ev_want_of(struct jvmset *s, struct jvm *j, struct jvm_evwant *w)
{
	*w = (struct jvm_evwant){ 0 };
	for (unsigned i = 0; i < s->n_obs; i++) {
		struct jvm_evwant one = { 0 };

		if (j->conn && (j->info.hello_flags & FGP_HELLO_EVENTS) && s->obs[i].evwant)
			s->obs[i].evwant(s->obs[i].arg, j, &one);
		j->ev_on[i] = one.on;
		jvm_evwant_merge(w, &one);
	}
}

/* The events lines into s->evw_new; their count. */
static size_t ev_wants(struct jvmset *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_jvms; i++) {
		struct jvm *j = s->jvms[i];
		struct jvm_evwant w;

		ev_want_of(s, j, &w);
		if (w.on && j->info.token && n < MAX_JVMS)
			s->evw_new[n++] = (struct jvm_evwant_tok){ j->info.token, w };
	}
	return n;
}

static int cmp_evw(const void *a, const void *b)
{
	uint64_t x = ((const struct jvm_evwant_tok *)a)->token;
	uint64_t y = ((const struct jvm_evwant_tok *)b)->token;

	return x < y ? -1 : x > y;
}

static bool evw_same(const struct jvm_evwant_tok *a, const struct jvm_evwant_tok *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].token != b[i].token || a[i].w.on != b[i].w.on ||
		    a[i].w.alloc_interval != b[i].w.alloc_interval ||
		    a[i].w.lock_us != b[i].w.lock_us || a[i].w.depth != b[i].w.depth)
			return false;
	return true;
}

/* Tell opts.want whose tables and events are wanted, if that changed (see jvmset.h). */
static void update_wants(struct jvmset *s, uint64_t now)
{
	size_t n = 0, nev;
	uint64_t *t;
	struct jvm_evwant_tok *et;

	if (!s->o.want) {
		struct jvm_evwant w;

		for (size_t i = 0; i < s->n_jvms; i++)
			ev_want_of(s, s->jvms[i], &w); /* who gets the events, all the same */
		return;
	}
	if (!s->want && !(s->want = calloc(MAX_JVMS, sizeof(*s->want))))
		return;
	if (!s->want_new && !(s->want_new = calloc(MAX_JVMS, sizeof(*s->want_new))))
		return;
	if (!s->evw && !(s->evw = calloc(MAX_JVMS, sizeof(*s->evw))))
		return;
	if (!s->evw_new && !(s->evw_new = calloc(MAX_JVMS, sizeof(*s->evw_new))))
		return;
	nev = ev_wants(s);
	qsort(s->evw_new, nev, sizeof(*s->evw_new), cmp_evw);
	for (size_t i = 0; i < s->n_jvms && n < MAX_JVMS; i++) {
		struct jvm *j = s->jvms[i];

		if (!j->conn || !j->info.token ||
		    !(j->info.hello_flags & FGP_HELLO_TABLES_ON_DEMAND)) {
			j->wanted_at = 0;
			continue;
		}
		if (any_wants(s, j))
			j->wanted_at = now ? now : 1;
		if (j->wanted_at && now - j->wanted_at < WANT_LINGER_NS)
			s->want_new[n++] = j->info.token;
	}
	qsort(s->want_new, n, sizeof(*s->want_new), cmp_u64);
	if (s->want_told && n == s->n_want && !memcmp(s->want, s->want_new, n * sizeof(*s->want)) &&
	    nev == s->n_evw && evw_same(s->evw, s->evw_new, nev))
		return;
	t = s->want;
	s->want = s->want_new;
	s->want_new = t;
	s->n_want = n;
	et = s->evw;
	s->evw = s->evw_new;
	s->evw_new = et;
	s->n_evw = nev;
	s->want_told = true;
	s->o.want(s->o.want_arg, s->want, n, s->evw, nev);
}

size_t jvmset_pump(struct jvmset *s, struct receive *rx, uint64_t now)
{
	struct receive_ev ev;
	size_t n = 0;

	while (receive_next(rx, &ev) == 1) {
		n++;
		if (ev.type == RECEIVE_GONE) {
			jvmset_gone(s, ev.pipe, now);
			continue;
		}
		uint32_t pid = 0;

		if (!jvmset_has_pipe(s, ev.pipe) && receive_peer_pid(rx, ev.pipe, &pid) != 0)
			pid = 0;
		if (jvmset_msg(s, ev.pipe, pid, ev.data, ev.len, now) != 0)
			receive_drop_pipe(rx, ev.pipe);
	}
	update_wants(s, now);
	return n;
}

/* ---- maps and time ------------------------------------------------------------------- */

#define WRITE_BUDGET_INV 20

static uint64_t clamp_interval(const struct jvmset *s, uint64_t v)
{
	if (v < s->o.min_write_ns)
		return s->o.min_write_ns;
	return v > s->o.max_write_ns ? s->o.max_write_ns : v;
}

/*
 * Bring j's map up to date: appends at once, compactions (full rewrites) only when may_compact.
 * Costs are CPU time, not wall time: on a busy host a preempted write would otherwise look slow
 * and back off for no reason. WRITE_BUDGET_INV x the cost of the last compaction spaces them,
 * which caps a JIT storm that keeps reusing addresses at 1/20 of a core (the JVM's own cores
 * are the ones we would be taking it from); the first change after a quiet spell is written at
 * once.
 */
static void write_map(struct jvmset *s, struct jvm *j, bool may_compact)
{
	/*
	 * The thread's CPU clock is a system call: read only when a compaction may follow, whose
	 * cost spaces the next ones. An append's failure is spaced by its wall time instead.
	 */
	uint64_t t0 = fg_now_ns(), c0 = may_compact ? fg_thread_cpu_ns() : 0, t1, cost, compactions;
	struct perfmap_writer_stats st;
	int rv;

	perfmap_writer_stats(j->map, &st);
	compactions = st.compactions;
	rv = perfmap_writer_update(j->map, j->tab, may_compact);
	t1 = fg_now_ns();
	cost = may_compact ? fg_thread_cpu_ns() - c0 : t1 - t0;
	s->c.map_write_ns += t1 - t0;
	j->last_write = t1;
	j->interval = s->o.min_write_ns;
	j->fresh = false;
	perfmap_writer_stats(j->map, &st);
	if (st.compactions != compactions) {
		j->last_compact = t1;
		j->compact_interval = clamp_interval(s, WRITE_BUDGET_INV * cost);
		s->c.map_compactions++;
	}
	if (rv >= 0) {
		j->dirty = rv == 1; /* 1: blobs wait for a compaction not allowed yet */
		if (j->last_err)
			emit_jvm(s, JVMSET_MAP_OK, j, j->last_err, NULL);
		j->last_err = 0;
		j->info.map_writes++;
		s->c.map_writes++;
		return;
	}
	/* Keep the old map and retry after interval; tell once per kind of failure. */
	j->fresh = true;
	j->interval = clamp_interval(s, WRITE_BUDGET_INV * cost);
	if (rv == -ENOSPC || rv == -EDQUOT) {
		j->info.map_enospc++;
		s->c.map_enospc++;
		if (j->interval < 100000000)
			j->interval = 100000000;
	}
	j->info.map_errors++;
	s->c.map_errors++;
	if (rv != j->last_err)
		emit_jvm(s, JVMSET_MAP_ERROR, j, rv, NULL);
	j->last_err = rv;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

void jvmset_flush(struct jvmset *s, uint64_t now)
{
	(void)now;
	if (!s->o.maps)
		return;
	for (size_t i = 0; i < s->n_jvms; i++)
		if (s->jvms[i]->dirty &&
		    (s->jvms[i]->info.map_writes || codetab_live_count(s->jvms[i]->tab)))
			write_map(s, s->jvms[i], true);
}

uint64_t jvmset_tick(struct jvmset *s, uint64_t now)
{
	uint64_t next = now + CHECK_EVERY_NS;
	bool prune = now >= s->next_prune;

	update_wants(s, now);
	if (prune)
		s->next_prune = now + CHECK_EVERY_NS;
	for (size_t i = 0; i < s->n_jvms; i++) {
		struct jvm *j = s->jvms[i];

		/*
		 * No first map without a line: an agent that connects at the JVM's start replays an
		 * empty table, and its first code follows within milliseconds.
		 */
		if (j->dirty && j->map && !j->info.map_writes && !codetab_live_count(j->tab))
			j->dirty = j->fresh = false;
		if (j->dirty && j->map) {
			uint64_t due = j->last_write + j->interval;
			uint64_t compact_due = j->last_compact + j->compact_interval;

			/*
			 * While a replay runs a compaction would write a partial live set (a
			 * restarted collector must never shrink a complete map); appends only add.
			 */
			if (j->in_replay && now < j->replay_since + REPLAY_HOLD_NS)
				compact_due = j->replay_since + REPLAY_HOLD_NS;
			if (now >= due)
				write_map(s, j, now >= compact_due);
			/* New changes are appended after interval; the rest waits to compact. */
			if (j->dirty)
				next = min_u64(next, j->fresh ? j->last_write + j->interval
							      : compact_due);
		}
		if (!j->conn && !j->info.exited && now >= j->next_check) {
			j->next_check = now + CHECK_EVERY_NS;
			if (!jvm_alive(s, j)) {
				mark_exited(s, j, now);
				emit_jvm(s, JVMSET_EXIT, j, 0, NULL);
			}
		}
		if (j->info.exited) {
			uint64_t end = j->info.exit_ts + s->o.keep_exited_ns;

			if (now >= end) {
				expire(s, j);
				i--; /* jvm_forget moved the last JVM into slot i */
				continue;
			}
			next = min_u64(next, end);
		}
		if (prune && now > s->o.history_ns)
			codetab_prune(j->tab, now - s->o.history_ns);
	}
	return next;
}

void jvmset_counters(const struct jvmset *s, struct jvmset_counters *out)
{
	*out = s->c;
	out->jvms = (unsigned)s->n_jvms;
	out->connected = 0;
	for (size_t i = 0; i < s->n_jvms; i++)
		out->connected += s->jvms[i]->conn != NULL;
}
