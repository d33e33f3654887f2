// SPDX-License-Identifier: MIT
/*
 * link.c - nng push0 transport for the sender. The only file of the agent that talks to nng:
 * NNG_E* codes stop here and become negative errno values.
 *
 * Invariant: conn_id is non-zero exactly while a pipe of the current socket is up, and a new
 * pipe always gets a new id. A socket carries one connection: once it has gone (or the dialer
 * brought a second) the socket is spent, and the next link_state() replaces it.
 *
 * Why a pipe is taken for gone on its REM_POST even when its ADD_POST comes later: nng 1.5.2
 * runs ADD_POST on the dialer's thread after starting the pipe, and REM_POST on its reaper
 * thread as soon as the pipe closes, so a collector that dies as the handshake completes
 * delivers them in either order. Counted as up, that pipe would stand for a connection that
 * never comes back (the dialer of a spent socket never brings another).
 *
 * Why the link replaces its own socket when no connection came for LINK_REDIAL_STALL_NS, or when
 * the collector's socket file was made anew while it dialed (link.h): nng 1.5.2 redials by
 * itself after refused or failed dials, but gives a dialer up for good ("no further action")
 * when a dial fails with NNG_ECLOSED, and that is what the SP handshake gets when the peer's
 * socket closed before our 8-byte header went out (sendmsg: EPIPE). A collector that is
 * SIGKILLed does exactly that to a dial that reaches its listener while the kernel tears the
 * process down (its connections close first, the agent redials at once, then the listener
 * closes with the new connection still in its backlog); so does a collector that accepts and
 * drops connections. A restarted collector binds a new socket file: a socket still unconnected
 * then is replaced at once, so the agent reaches the new listener within one look (the sender
 * looks at least every 500 ms while unconnected) instead of after the stall.
 *
 * Why link_close waits for its messages to leave (at most LINK_LINGER_NS): nng_send only queues
 * a message, nng 1.5.2 has no linger, and nng_close discards what its pipe is still writing. The
 * sender's last message at VM death is often its largest (the compiles of the last gap, tens of
 * KiB): closed at once, it was lost in about one JVM exit in ten on a busy host, and the
 * methods compiled in the JVM's last ~100 ms never reached the map. nng tells when a pipe has
 * written a message only through its statistics (a pipe's tx_msgs counts the writes done).
 */
#include "link.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/supplemental/util/platform.h>
#include <nng/protocol/pipeline0/push.h>

#include "agentclock.h"
#include "fgsocket.h"
#include "wantfile.h"

#define RECONNECT_MIN_MS 100
#define RECONNECT_MAX_MS 500
#define SEND_BUFFER_MSGS 2	    /* x SENDER_MSG_MAX: about 1 MiB at most waiting in nng */
#define LINK_LINGER_NS 100000000ull /* link_close waits this long at most for its messages */
#define LINK_LINGER_NAP_MS 2

struct link {
	char url[128];
	char features[128];		/* the collector's features file (fgsocket.h) */
	struct wantfile want;		/* its want file */
	const struct agentclock *clock; /* borrowed; NULL: the real one */
	nng_socket sock;
	bool open;
	uint64_t last_open_try;
	uint64_t opened_at; /* when the current socket was opened */
	struct stat dialed; /* the socket file it dials, as it was then */
	void (*kick)(void *);
	void *kick_arg;
	atomic_uint_fast32_t sock_id; /* id of the current socket, for the pipe callback */
	atomic_uint_fast64_t conn_id; /* current connection, 0 if none */
	atomic_uint_fast64_t next_id;
	atomic_bool had_pipe; /* the current socket has had a connection */
	atomic_bool spent;    /* ... and it has gone, or the dialer brought a second: replace it */
	uint64_t sent;	      /* messages nng took on the current socket */
};

static atomic_bool forked;

void link_forked(void)
{
	atomic_store(&forked, true);
}

static int errno_of(int nng_rv)
{
	switch (nng_rv) {
	case 0:
		return 0;
	case NNG_EAGAIN:
		return -EAGAIN;
	case NNG_ENOMEM:
		return -ENOMEM;
	case NNG_ECLOSED:
		return -EPIPE;
	case NNG_EADDRINVAL:
		return -EINVAL;
	case NNG_ETIMEDOUT:
		return -ETIMEDOUT;
	default:
		return -EIO;
	}
}

/* Runs on an nng thread: only atomics and the sender's doorbell. */
static void pipe_event(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct link *l = arg;
	nng_socket s = nng_pipe_socket(p);
	uint64_t id;

	if ((uint32_t)nng_socket_id(s) != atomic_load(&l->sock_id))
		return; /* a pipe of a socket already closed */
	if (ev == NNG_PIPE_EV_ADD_PRE) {
		/*
		 * One connection per socket. nng's dialer redials by itself after a pipe is lost,
		 * and push0 would start the new pipe with what it still buffers for the old one
		 * (the rest of a snapshot): a collector would see records before the HELLO. Refused
		 * here, before any byte goes out; the sender thread replaces the socket, which
		 * drops that buffer, and syncs the next connection from its HELLO.
		 */
		if (atomic_exchange(&l->had_pipe, true)) {
			nng_pipe_close(p);
			atomic_store(&l->spent, true);
		} else {
			return;
		}
	} else if (ev == NNG_PIPE_EV_ADD_POST) {
		id = atomic_fetch_add(&l->next_id, 1) + 1;
		atomic_store(&l->conn_id, id);
		/* Its REM_POST may have run first (see the top of this file): never up, then. */
		if (atomic_load(&l->spent))
			atomic_compare_exchange_strong(&l->conn_id, &id, 0);
	} else if (ev == NNG_PIPE_EV_REM_POST) {
		/* spent before conn_id: an ADD_POST that reads spent false stored its id first */
		atomic_store(&l->spent, true);
		atomic_store(&l->conn_id, 0);
	}
	if (l->kick)
		l->kick(l->kick_arg);
}

static int open_socket(struct link *l, const struct stat *file)
{
	int rv;

	l->last_open_try = agentclock_now(l->clock);
	l->opened_at = l->last_open_try;
	l->dialed = *file;
	if ((rv = nng_push0_open(&l->sock)) != 0)
		return errno_of(rv);
	atomic_store(&l->had_pipe, false);
	atomic_store(&l->spent, false);
	l->sent = 0;
	atomic_store(&l->sock_id, (uint32_t)nng_socket_id(l->sock));
	if ((rv = nng_socket_set_ms(l->sock, NNG_OPT_RECONNMINT, RECONNECT_MIN_MS)) != 0 ||
	    (rv = nng_socket_set_ms(l->sock, NNG_OPT_RECONNMAXT, RECONNECT_MAX_MS)) != 0 ||
	    (rv = nng_socket_set_int(l->sock, NNG_OPT_SENDBUF, SEND_BUFFER_MSGS)) != 0 ||
	    (rv = nng_pipe_notify(l->sock, NNG_PIPE_EV_ADD_PRE, pipe_event, l)) != 0 ||
	    (rv = nng_pipe_notify(l->sock, NNG_PIPE_EV_ADD_POST, pipe_event, l)) != 0 ||
	    (rv = nng_pipe_notify(l->sock, NNG_PIPE_EV_REM_POST, pipe_event, l)) != 0 ||
	    /* NONBLOCK: a missing collector is retried in the background, never waited for. */
	    (rv = nng_dial(l->sock, l->url, NULL, NNG_FLAG_NONBLOCK)) != 0) {
		nng_close(l->sock);
		atomic_store(&l->sock_id, 0);
		return errno_of(rv);
	}
	l->open = true;
	return 0;
}

/*
 * Is there a socket to dial at all? Without one no collector runs, and nng's dialer would retry
 * every 100-500 ms for nothing (about 1% of a CPU in a JIT storm here): the socket is opened once
 * the file appears (checked every LINK_REOPEN_EVERY_NS on the sender thread).
 */
static bool collector_there(const struct link *l, struct stat *st)
{
	return stat(l->url + strlen("ipc://"), st) == 0 && S_ISSOCK(st->st_mode);
}

/* Open the socket if a collector's socket file is there; else try again later. */
static void open_if_there(struct link *l)
{
	struct stat st;

	if (collector_there(l, &st))
		open_socket(l, &st);
	else
		l->last_open_try = agentclock_now(l->clock);
}

int link_open(struct link **out, const char *socket_path, const struct agentclock *clock,
	      void (*kick)(void *), void *arg)
{
	struct stat st;
	struct link *l;
	int rv;

	l = calloc(1, sizeof(*l));
	if (l == NULL)
		return -ENOMEM;
	if ((size_t)snprintf(l->url, sizeof(l->url), "ipc://%s", socket_path) >= sizeof(l->url) ||
	    (size_t)snprintf(l->features, sizeof(l->features), "%s%s", socket_path,
			     FG_FEATURES_SUFFIX) >= sizeof(l->features) ||
	    wantfile_init(&l->want, socket_path) != 0) {
		free(l);
		return -ENAMETOOLONG;
	}
	l->clock = clock;
	l->kick = kick;
	l->kick_arg = arg;
	l->last_open_try = agentclock_now(l->clock);
	if (collector_there(l, &st) && (rv = open_socket(l, &st)) != 0 && rv != -ENOMEM) {
		free(l);
		return rv;
	}
	*out = l;
	return 0;
}

/*
 * Messages the pipes of sock have written, from nng's statistics: -1 when nng keeps none. The
 * statistics are a snapshot of every nng object of the process: for link_close only.
 */
static int64_t written(nng_socket sock)
{
	nng_stat *all, *p, *f;
	int64_t n = 0;
	int id = nng_socket_id(sock);

	if (nng_stats_get(&all) != 0)
		return -1;
	for (p = nng_stat_child(all); p; p = nng_stat_next(p)) {
		uint64_t sid = UINT64_MAX, tx = 0;

		if (strcmp(nng_stat_name(p), "pipe") != 0)
			continue;
		for (f = nng_stat_child(p); f; f = nng_stat_next(f)) {
			if (strcmp(nng_stat_name(f), "socket") == 0)
				sid = nng_stat_value(f);
			else if (strcmp(nng_stat_name(f), "tx_msgs") == 0)
				tx = nng_stat_value(f);
		}
		if (sid == (uint64_t)id)
			n += (int64_t)tx;
	}
	nng_stats_free(all);
	return n;
}

/* Wait, at most LINK_LINGER_NS, until the connection has written what nng took (see top). */
static void linger(struct link *l)
{
	uint64_t t0 = agentclock_now(l->clock);
	int64_t n;

	if (!l->sent || atomic_load(&l->spent) || atomic_load(&l->conn_id) == 0)
		return;
	while ((n = written(l->sock)) >= 0 && (uint64_t)n < l->sent &&
	       atomic_load(&l->conn_id) != 0 && agentclock_now(l->clock) - t0 < LINK_LINGER_NS)
		nng_msleep(LINK_LINGER_NAP_MS);
}

void link_close(struct link *l)
{
	if (l == NULL)
		return;
	if (l->open && !atomic_load(&forked)) {
		linger(l);
		nng_close(l->sock);
	}
	wantfile_fini(&l->want);
	free(l);
}

static int link_send(void *arg, const uint8_t *buf, size_t len)
{
	struct link *l = arg;
	int rv;

	if (!l->open || atomic_load(&forked))
		return -ENOTCONN;
	/* Its connection has gone: what it queued would wait for one it never gets. */
	if (atomic_load(&l->spent))
		return -EPIPE;
	rv = errno_of(nng_send(l->sock, (void *)buf, len, NNG_FLAG_NONBLOCK));
	if (rv == 0)
		l->sent++;
	return rv;
}

static void replace(struct link *l);

/* Unconnected since its opening for LINK_REDIAL_STALL_NS: its dialer may be dead. */
static bool stalled(const struct link *l)
{
	return agentclock_now(l->clock) - l->opened_at >= LINK_REDIAL_STALL_NS;
}

/*
 * Is the collector's socket file another than the one the socket dials (a collector that
 * restarted binds a new one)? The inode alone can be reused at once; with its modification
 * time, set when the file is bound, it is not the same file.
 */
static bool file_changed(const struct link *l)
{
	struct stat st;

	return collector_there(l, &st) &&
	       (st.st_dev != l->dialed.st_dev || st.st_ino != l->dialed.st_ino ||
		st.st_mtim.tv_sec != l->dialed.st_mtim.tv_sec ||
		st.st_mtim.tv_nsec != l->dialed.st_mtim.tv_nsec);
}

static uint64_t link_state(void *arg)
{
	struct link *l = arg;

	if (atomic_load(&forked))
		return 0;
	if (!l->open && agentclock_now(l->clock) - l->last_open_try >= LINK_REOPEN_EVERY_NS)
		open_if_there(l);
	else if (l->open && (atomic_load(&l->spent) ||
			     (atomic_load(&l->conn_id) == 0 && (stalled(l) || file_changed(l)))))
		/* Its connection went (see pipe_event), or its dialer may be dead (see the top of
		 * this file): a fresh socket. */
		replace(l);
	return l->open ? atomic_load(&l->conn_id) : 0;
}

/* Close the socket (discarding what it queues for its peer) and open a fresh one. */
static void replace(struct link *l)
{
	if (l->open) {
		atomic_store(&l->sock_id, 0);
		nng_close(l->sock);
		l->open = false;
	}
	atomic_store(&l->conn_id, 0);
	open_if_there(l);
}

/*
 * The sender's reset. A socket that has never connected has queued nothing for a peer (the
 * sender sends only on a connection it saw) and keeps its dialer: link_state() may just have
 * opened it in place of a spent one.
 */
static void link_reset(void *arg)
{
	struct link *l = arg;

	if (atomic_load(&forked) || (l->open && !atomic_load(&l->had_pipe)))
		return;
	replace(l);
}

/* Read on the sender thread at each new connection: a small file, never in a JVM callback. */
static bool link_reads(void *arg, const char *feature)
{
	struct link *l = arg;
	char buf[512], *save = NULL;
	ssize_t n;
	int fd;

	fd = open(l->features, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false; /* an older collector, or none */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (char *w = strtok_r(buf, "\n", &save); w; w = strtok_r(NULL, "\n", &save))
		if (strcmp(w, feature) == 0)
			return true;
	return false;
}

/* Asked on the sender thread (when: wantfile_due). */
static int link_wanted(void *arg, uint64_t token)
{
	struct link *l = arg;

	return wantfile_read(&l->want, token);
}

/* Asked on the sender thread, with link_wanted. */
static void link_wanted_events(void *arg, uint64_t token, struct want_events *out)
{
	struct link *l = arg;

	wantfile_read_events(&l->want, token, out);
}

const struct link_ops link_nng_ops = {
	.send = link_send,
	.state = link_state,
	.reset = link_reset,
	.reads = link_reads,
	.wanted = link_wanted,
	.wanted_events = link_wanted_events,
};
