// SPDX-License-Identifier: MIT
/*
 * ctl_server.c - the daemon's side of the control channel (see ctl_server.h): accept root
 * clients, answer LIST and SUBSCRIBE from the jvmset, stream live records in RECORDS batches.
 *
 * Invariant: a client's request is read CTL_HDR_SIZE bytes at a time and checked before it is
 * acted on, and a client's queued output never exceeds OUT_CAP (it is disconnected instead).
 *
 * A subscription's history goes out one JVM at a time, whenever the client's queue is below
 * REPLAY_LOW: a host whose JVMs' histories add up to more than OUT_CAP can still be subscribed
 * to, and the daemon's loop encodes one JVM's history per round, not every JVM's at once.
 * Live records and events of a JVM whose history is still pending are not sent (its history,
 * taken from the table when its turn comes, includes them).
 */
#include "ctl_server.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "array.h"
#include "codetab.h"
#include "ctl_frame.h"
#include "fgproto.h"
#include "fgfree.h"

#define OUT_CAP (64u << 20)
#define REPLAY_LOW (4u << 20)

struct client {
	int fd;
	bool sub, sub_all;
	uint32_t sub_pid;
	uint8_t *out;
	size_t out_len, out_off, out_cap;
	bool dead;
	uint8_t in[CTL_REQ_MAX];
	size_t in_len;
	bool batching;
	uint16_t batch_kind; /* CTL_RECORDS or CTL_EVENTS */
	uint32_t batch_pid;
	struct jvm_evwant evw; /* the events it wants of the JVMs it subscribed to */
	size_t batch_start;
	uint32_t *pending; /* JVMs (host PIDs) whose history is still to be sent, in order */
	size_t pending_off, pending_n, pending_cap;
};

struct ctl_server {
	int fd;
	char path[108];
	struct jvmset *set;
	struct client *cl[CTL_MAX_CLIENTS];
	unsigned n_cl;
	struct ctl_server_stats st;
	uint8_t *scratch; /* one encoded record or event item */
	struct fgp_str *methods;
	struct fgp_pc_in *pcs;
};

static uint8_t *out_reserve(struct ctl_server *srv, struct client *c, size_t n)
{
	if (c->dead)
		return NULL;
	if (c->out_len + n > OUT_CAP) {
		c->dead = true;
		srv->st.overflowed++;
		return NULL;
	}
	if (ARRAY_GROW(c->out, c->out_cap, c->out_len + n) != 0) {
		c->dead = true;
		return NULL;
	}
	c->out_len += n;
	return c->out + c->out_len - n;
}

static void batch_close(struct client *c)
{
	if (!c->batching)
		return;
	ctl_hdr_set_size(c->out + c->batch_start, (uint32_t)(c->out_len - c->batch_start));
	c->batching = false;
}

static void frame(struct ctl_server *srv, struct client *c, uint16_t kind, uint16_t flags,
		  uint32_t pid, const void *payload, size_t len)
{
	struct ctl_hdr h = { (uint32_t)(CTL_HDR_SIZE + len), kind, flags, pid };
	uint8_t *p;

	batch_close(c);
	if (!(p = out_reserve(srv, c, CTL_HDR_SIZE + len)))
		return;
	ctl_hdr_encode(p, &h);
	if (len)
		memcpy(p + CTL_HDR_SIZE, payload, len);
	srv->st.frames_out++;
}

/*
 * Append one item to c's current frame of kind for pid (RECORDS: an encoded record; EVENTS:
 * an event item), opening one if needed.
 */
static void append_item(struct ctl_server *srv, struct client *c, uint16_t kind, uint32_t pid,
			const uint8_t *raw, size_t len)
{
	struct ctl_hdr h = { 0, kind, 0, pid };
	size_t head = kind == CTL_RECORDS ? FGP_MSG_HEADER_SIZE : 0;
	uint8_t *p;

	if (c->batching && (c->batch_pid != pid || c->batch_kind != kind ||
			    c->out_len - c->batch_start + len > CTL_MAX_FRAME))
		batch_close(c);
	if (!c->batching) {
		if (!(p = out_reserve(srv, c, CTL_HDR_SIZE + head)))
			return;
		c->batch_start = (size_t)(p - c->out);
		ctl_hdr_encode(p, &h); /* its size is set by batch_close() */
		if (head)
			fgp_encode_msg_header(p + CTL_HDR_SIZE, FGP_MSG_HEADER_SIZE);
		c->batching = true;
		c->batch_kind = kind;
		c->batch_pid = pid;
		srv->st.frames_out++;
	}
	if ((p = out_reserve(srv, c, len)))
		memcpy(p, raw, len);
}

static void append_record(struct ctl_server *srv, struct client *c, uint32_t pid,
			  const uint8_t *raw, size_t len)
{
	append_item(srv, c, CTL_RECORDS, pid, raw, len);
}

static void send_jvm(struct ctl_server *srv, struct client *c, const struct jvm_info *ji)
{
	uint8_t buf[CTL_JVM_MAX];

	frame(srv, c, CTL_JVM, 0, ji->host_pid, buf, ctl_jvm_encode(buf, ji));
}

static void send_hello(struct ctl_server *srv, struct client *c, const struct jvm_info *ji)
{
	struct fgp_hello h = {
		.proto_version = FGP_VERSION,
		.pid = ji->ns_pid,
		.flags = ji->hello_flags,
		.ts = ji->connect_ts,
		.jvm_version = { ji->jvm_version, (uint16_t)strlen(ji->jvm_version) },
		.agent_version = { ji->agent_version, (uint16_t)strlen(ji->agent_version) },
		.service = { ji->service, (uint16_t)strlen(ji->service) },
	};
	int n = fgp_encode_hello(srv->scratch, FGP_MAX_RECORD, &h);

	if (n > 0)
		append_record(srv, c, ji->host_pid, srv->scratch, (size_t)n);
}

/* The agent's VM layout, so a subscriber can name interpreted frames; nothing if none came. */
static void send_layout(struct ctl_server *srv, struct client *c, const struct jvm_info *ji,
			const struct codetab *tab)
{
	const struct fgp_vm_layout *l = codetab_layout(tab, NULL);
	int n;

	if (!l)
		return;
	n = fgp_encode_vm_layout(srv->scratch, FGP_MAX_RECORD, l);
	if (n > 0)
		append_record(srv, c, ji->host_pid, srv->scratch, (size_t)n);
}

/* The agent's drop counters so far, so a subscriber can report them (zeros included). */
static void send_dropped(struct ctl_server *srv, struct client *c, const struct jvm_info *ji)
{
	struct fgp_dropped d = { .ts = ji->connect_ts,
				 .queue_full = ji->agent_queue_full,
				 .table_full = ji->agent_table_full };
	int n = fgp_encode_dropped(srv->scratch, FGP_MAX_RECORD, &d);

	if (n > 0 && !c->dead)
		append_record(srv, c, ji->host_pid, srv->scratch, (size_t)n);
}

struct hist_ctx {
	struct ctl_server *srv;
	struct client *c;
	uint32_t pid;
};

static int hist_cb(void *arg, const struct codeblob *b, bool is_unload)
{
	struct hist_ctx *x = arg;
	struct ctl_server *srv = x->srv;
	int n;

	if (x->c->dead)
		return 1;
	if (is_unload) {
		struct fgp_code_unload u = { .addr = b->addr, .ts = b->unload_ts };

		n = fgp_encode_code_unload(srv->scratch, FGP_MAX_RECORD, &u);
	} else if (b->kind == CODEBLOB_DYNAMIC) {
		struct fgp_dynamic_code d = { .addr = b->addr,
					      .size = b->size,
					      .ts = b->load_ts,
					      .name = { b->name, (uint16_t)strlen(b->name) } };

		n = fgp_encode_dynamic_code(srv->scratch, FGP_MAX_RECORD, &d);
	} else {
		struct fgp_code_load_in in = {
			.addr = b->addr,
			.size = b->size,
			.ts = b->load_ts,
			.flags = FGP_REC_REPLAY |
				 (b->inline_truncated ? FGP_REC_INLINE_TRUNCATED : 0),
			.name = { b->name, (uint16_t)strlen(b->name) },
			.methods = srv->methods,
			.pcs = srv->pcs,
		};

		if (codetab_inline_export(b, srv->methods, FGP_MAX_INLINE_METHODS, &in.n_methods,
					  srv->pcs, FGP_MAX_INLINE_PCS, &in.n_pcs) != 0)
			in.n_methods = 0, in.n_pcs = 0;
		n = fgp_encode_code_load(srv->scratch, FGP_MAX_RECORD, &in);
		if (n < 0) { /* cannot happen for what we decoded; send it without inline info */
			in.n_methods = 0;
			in.n_pcs = 0;
			in.flags |= FGP_REC_INLINE_TRUNCATED;
			n = fgp_encode_code_load(srv->scratch, FGP_MAX_RECORD, &in);
		}
	}
	if (n > 0)
		append_record(srv, x->c, x->pid, srv->scratch, (size_t)n);
	/* Its frame facts follow it, as the agent sends them. */
	if (!is_unload && b->frame &&
	    (n = fgp_encode_code_frame(srv->scratch, FGP_MAX_RECORD, b->frame)) > 0)
		append_record(srv, x->c, x->pid, srv->scratch, (size_t)n);
	/* And its lines, with the load's ts they are keyed by. */
	if (!is_unload && b->lines) {
		struct fgp_code_lines_in li = {
			.addr = b->addr, .size = b->size, .ts = b->load_ts, .pcs = srv->pcs
		};

		if (codetab_lines_export(b, srv->pcs, FGP_MAX_INLINE_PCS, &li.n_pcs, &li.flags) ==
			    0 &&
		    li.n_pcs > 0) {
			li.flags |= FGP_REC_REPLAY;
			n = fgp_encode_code_lines(srv->scratch, FGP_MAX_RECORD, &li);
			if (n > 0)
				append_record(srv, x->c, x->pid, srv->scratch, (size_t)n);
		}
	}
	return 0;
}

static bool pending(const struct client *c, uint32_t pid)
{
	for (size_t i = c->pending_off; i < c->pending_n; i++)
		if (c->pending[i] == pid)
			return true;
	return false;
}

static bool wants(const struct client *c, uint32_t pid)
{
	return c->sub && (c->sub_all || c->sub_pid == pid) && !pending(c, pid);
}

static void replay_jvm(struct ctl_server *srv, struct client *c, struct jvm *j)
{
	struct jvm_info ji;
	struct hist_ctx x = { srv, c, jvm_host_pid(j) };

	jvm_info(j, &ji);
	send_jvm(srv, c, &ji);
	send_hello(srv, c, &ji);
	send_layout(srv, c, &ji, jvm_table(j));
	codetab_history(jvm_table(j), hist_cb, &x);
	send_dropped(srv, c, &ji);
	batch_close(c);
}

/* Send pending histories while the client's queue is short. */
static void replay_pending(struct ctl_server *srv, struct client *c)
{
	while (c->pending_off < c->pending_n && !c->dead && c->out_len - c->out_off < REPLAY_LOW) {
		struct jvm *j = jvmset_find(srv->set, c->pending[c->pending_off++]);

		if (j) /* else expired meanwhile: nothing to send */
			replay_jvm(srv, c, j);
	}
	if (c->pending_off == c->pending_n)
		c->pending_off = c->pending_n = 0;
}

static void subscribe(struct ctl_server *srv, struct client *c, uint32_t pid)
{
	c->sub = true;
	c->sub_all = pid == 0;
	c->sub_pid = pid;
	c->pending_off = c->pending_n = 0;
	for (size_t i = 0; i < jvmset_count(srv->set); i++) {
		uint32_t p = jvm_host_pid(jvmset_at(srv->set, i));

		if (!c->sub_all && c->sub_pid != p)
			continue;
		if (ARRAY_GROW(c->pending, c->pending_cap, c->pending_n + 1) != 0) {
			c->dead = true;
			return;
		}
		c->pending[c->pending_n++] = p;
	}
	replay_pending(srv, c);
}

static void list(struct ctl_server *srv, struct client *c)
{
	for (size_t i = 0; i < jvmset_count(srv->set); i++) {
		struct jvm_info ji;

		jvm_info(jvmset_at(srv->set, i), &ji);
		send_jvm(srv, c, &ji);
	}
	frame(srv, c, CTL_LIST_END, 0, 0, NULL, 0);
}

static void on_event(void *arg, enum jvmset_event ev, const struct jvm_info *ji, int err,
		     const char *why)
{
	struct ctl_server *srv = arg;

	(void)err;
	(void)why;
	for (unsigned i = 0; i < srv->n_cl; i++) {
		struct client *c = srv->cl[i];

		if (!wants(c, ji->host_pid))
			continue;
		if (ev == JVMSET_CONNECT) {
			send_jvm(srv, c, ji);
			send_hello(srv, c, ji);
		} else if (ev == JVMSET_DISCONNECT || ev == JVMSET_EXIT || ev == JVMSET_EXPIRE) {
			frame(srv, c, CTL_GONE, ji->exited ? CTL_GONE_EXITED : 0, ji->host_pid,
			      NULL, 0);
		}
	}
}

static void on_record(void *arg, const struct jvm *j, const uint8_t *raw, size_t len)
{
	struct ctl_server *srv = arg;
	uint32_t pid = jvm_host_pid(j);

	for (unsigned i = 0; i < srv->n_cl; i++)
		if (wants(srv->cl[i], pid))
			append_record(srv, srv->cl[i], pid, raw, len);
}

/* The events the clients subscribed to j want of it. */
static void on_evwant(void *arg, const struct jvm *j, struct jvm_evwant *out)
{
	struct ctl_server *srv = arg;
	uint32_t pid = jvm_host_pid(j);

	for (unsigned i = 0; i < srv->n_cl; i++)
		if (wants(srv->cl[i], pid))
			jvm_evwant_merge(out, &srv->cl[i]->evw);
}

static void on_ev(void *arg, const struct jvm *j, const struct jvm_event *ev)
{
	struct ctl_server *srv = arg;
	uint32_t pid = jvm_host_pid(j), need;
	size_t n = 0;

	need = ev->type == JVM_EV_FREE	   ? FGP_EVM_LIVE
	       : ev->type == JVM_EV_STATE  ? FGP_EVM_ALL
	       : ev->type == JVM_EV_COST   ? FGP_EVM_ALLOC | FGP_EVM_LIVE
	       : ev->kind == FGP_EV_LOCK   ? FGP_EVM_LOCK
	       : ev->kind == FGP_EV_VWAIT  ? FGP_EVM_VTHREAD
	       : ev->kind == FGP_EV_VMOUNT ? FGP_EVM_VMOUNT
					   : FGP_EVM_ALLOC | FGP_EVM_LIVE;
	for (unsigned i = 0; i < srv->n_cl; i++) {
		struct client *c = srv->cl[i];

		if (!wants(c, pid) || !(c->evw.on & need))
			continue;
		if (!n && !(n = ctl_event_encode(srv->scratch, FGP_MAX_RECORD, ev)))
			return;
		append_item(srv, c, CTL_EVENTS, pid, srv->scratch, n);
	}
}

static bool on_wants(void *arg, const struct jvm *j)
{
	struct ctl_server *srv = arg;
	uint32_t pid = jvm_host_pid(j);

	for (unsigned i = 0; i < srv->n_cl; i++)
		if (wants(srv->cl[i], pid))
			return true;
	return false;
}

static int check_dir(const char *path)
{
	char dir[108], *slash;
	struct stat st;

	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return -EINVAL;
	*slash = '\0';
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return -errno;
	if (lstat(dir, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return -EPERM;
	return 0;
}

int ctl_server_open(const char *path, struct jvmset *set, struct ctl_server **out)
{
	struct jvmset_observer ob = { .event = on_event,
				      .record = on_record,
				      .wants = on_wants,
				      .evwant = on_evwant,
				      .ev = on_ev };
	struct ctl_server *srv;
	struct sockaddr_un sa;
	struct stat st;
	int rv, fd;

	if ((rv = ctl_addr(path, &sa)) != 0 || (rv = check_dir(path)) != 0)
		return rv;
	if (lstat(path, &st) == 0) {
		int probe;

		if (!S_ISSOCK(st.st_mode))
			return -EEXIST;
		/* A live daemon answers; a stale file from a killed one refuses. */
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(probe);
			return -EADDRINUSE;
		}
		if (probe >= 0)
			close(probe);
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || chmod(path, 0600) != 0 ||
	    listen(fd, 16) != 0) {
		rv = -errno;
		close(fd);
		return rv;
	}
	srv = calloc(1, sizeof(*srv));
	if (!srv || !(srv->scratch = malloc(FGP_MAX_RECORD)) ||
	    !(srv->methods = malloc(FGP_MAX_INLINE_METHODS * sizeof(*srv->methods))) ||
	    !(srv->pcs = malloc(FGP_MAX_INLINE_PCS * sizeof(*srv->pcs)))) {
		if (srv) {
			free(srv->scratch);
			free(srv->methods);
		}
		free(srv);
		close(fd);
		unlink(path);
		return -ENOMEM;
	}
	srv->fd = fd;
	strcpy(srv->path, path);
	srv->set = set;
	ob.arg = srv;
	if ((rv = jvmset_observe(set, &ob)) != 0) {
		ctl_server_close(srv);
		return rv;
	}
	*out = srv;
	return 0;
}

static void client_free(struct client *c)
{
	close(c->fd);
	FG_FREE_ALL(c->out, c->pending, c);
}

void ctl_server_close(struct ctl_server *srv)
{
	if (!srv)
		return;
	for (unsigned i = 0; i < srv->n_cl; i++)
		client_free(srv->cl[i]);
	close(srv->fd);
	unlink(srv->path);
	FG_FREE_ALL(srv->scratch, srv->methods, srv->pcs, srv);
}

size_t ctl_server_pollfds(struct ctl_server *srv, struct pollfd *fds, size_t cap)
{
	size_t n = 0;

	if (cap == 0)
		return 0;
	fds[n++] = (struct pollfd){ .fd = srv->fd, .events = POLLIN };
	for (unsigned i = 0; i < srv->n_cl && n < cap; i++) {
		struct client *c = srv->cl[i];

		fds[n++] = (struct pollfd){
			.fd = c->fd,
			.events = (short)(POLLIN | (c->out_len > c->out_off ? POLLOUT : 0))
		};
	}
	return n;
}

static void accept_one(struct ctl_server *srv)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	struct client *c;
	int fd = accept4(srv->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 ||
	    (cr.uid != 0 && cr.uid != geteuid())) {
		srv->st.refused_uid++;
		close(fd);
		return;
	}
	if (srv->n_cl == CTL_MAX_CLIENTS || !(c = calloc(1, sizeof(*c)))) {
		close(fd);
		return;
	}
	c->fd = fd;
	srv->cl[srv->n_cl++] = c;
	srv->st.accepted++;
}

/* The bytes of c's request still to read: its header first, then what the header says. */
static size_t request_need(const struct client *c)
{
	uint32_t size;

	if (c->in_len < CTL_HDR_SIZE)
		return CTL_HDR_SIZE - c->in_len;
	size = (uint32_t)c->in[0] | (uint32_t)c->in[1] << 8 | (uint32_t)c->in[2] << 16 |
	       (uint32_t)c->in[3] << 24;
	if (size < CTL_HDR_SIZE || size > CTL_REQ_MAX)
		return 0; /* refused below */
	return size - c->in_len;
}

static void request(struct ctl_server *srv, struct client *c, const struct ctl_hdr *h)
{
	struct jvm_evwant w;

	if (h->kind == CTL_LIST && h->size == CTL_HDR_SIZE)
		list(srv, c);
	else if (h->kind == CTL_SUBSCRIBE && h->size == CTL_HDR_SIZE)
		subscribe(srv, c, h->host_pid);
	else if (h->kind == CTL_EVENTS_REQ &&
		 ctl_evwant_decode(c->in + CTL_HDR_SIZE, h->size - CTL_HDR_SIZE, &w) == 0)
		c->evw = w; /* the jvmset asks for it at its next pump (the want file follows) */
	else
		srv->st.bad_requests++;
}

static void client_read(struct ctl_server *srv, struct client *c)
{
	for (;;) {
		size_t need = request_need(c);
		ssize_t n = need ? read(c->fd, c->in + c->in_len, need) : 0;
		struct ctl_hdr h;

		if (need && (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))) {
			c->dead = true;
			return;
		}
		if (n < 0)
			return;
		c->in_len += (size_t)n;
		if (need && request_need(c))
			continue;
		if (ctl_request_decode(c->in, c->in_len, &h) != 0) {
			srv->st.bad_requests++;
			c->dead = true;
			return;
		}
		c->in_len = 0;
		request(srv, c, &h);
	}
}

static void client_write(struct client *c)
{
	batch_close(c);
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				c->dead = true;
			break;
		}
		c->out_off += (size_t)n;
	}
	if (c->out_off == c->out_len) {
		c->out_off = c->out_len = 0;
	} else if (c->out_off > (1u << 20)) {
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
}

static void reap(struct ctl_server *srv)
{
	for (unsigned i = 0; i < srv->n_cl;) {
		if (srv->cl[i]->dead) {
			client_free(srv->cl[i]);
			srv->cl[i] = srv->cl[--srv->n_cl];
		} else {
			i++;
		}
	}
}

void ctl_server_handle(struct ctl_server *srv, const struct pollfd *fds, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		for (unsigned k = 0; k < srv->n_cl; k++) {
			struct client *c = srv->cl[k];

			if (c->fd != fds[i].fd)
				continue;
			if (fds[i].revents & (POLLIN | POLLHUP | POLLERR))
				client_read(srv, c);
		}
	}
	if (n > 0 && (fds[0].revents & POLLIN))
		accept_one(srv);
	ctl_server_flush(srv);
}

void ctl_server_flush(struct ctl_server *srv)
{
	for (unsigned i = 0; i < srv->n_cl; i++) {
		struct client *c = srv->cl[i];

		if (c->dead)
			continue;
		client_write(c);
		if (c->pending_n && !c->dead) {
			replay_pending(srv, c);
			client_write(c);
		}
	}
	reap(srv);
}

void ctl_server_stats(const struct ctl_server *srv, struct ctl_server_stats *out)
{
	*out = srv->st;
	out->clients = srv->n_cl;
}
