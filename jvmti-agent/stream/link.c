// SPDX-License-Identifier: MIT
/*
 * link.c - nng push0 transport for the sender. The only file of the agent that talks to nng:
 * NNG_E* codes stop here and become negative errno values.
 *
 * Invariant: conn_id is non-zero exactly while a pipe of the current socket is up, and a new
 * pipe always gets a new id.
 *
 * Why the link replaces its own socket when no connection came for LINK_REDIAL_STALL_NS (link.h):
 * nng 1.5.2 redials by itself after refused or failed dials, but gives a dialer up for good
 * ("no further action") when a dial fails with NNG_ECLOSED, and that is what the SP handshake
 * gets when the peer's socket closed before our 8-byte header went out (sendmsg: EPIPE). A
 * collector that is SIGKILLed does exactly that to a dial that reaches its listener while the
 * kernel tears the process down (its connections close first, the agent redials at once, then
 * the listener closes with the new connection still in its backlog); so does a collector that
 * accepts and drops connections. Without this, such an agent never connected again.
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
#include <nng/protocol/pipeline0/push.h>

#include "agentclock.h"
#include "fgsocket.h"
#include "wantfile.h"

#define RECONNECT_MIN_MS 100
#define RECONNECT_MAX_MS 500
#define SEND_BUFFER_MSGS 2 /* x SENDER_MSG_MAX: about 1 MiB at most waiting in nng */

struct link {
	char url[128];
	char features[128];		/* the collector's features file (fgsocket.h) */
	struct wantfile want;		/* its want file */
	const struct agentclock *clock; /* borrowed; NULL: the real one */
	nng_socket sock;
	bool open;
	uint64_t last_open_try;
	void (*kick)(void *);
	void *kick_arg;
	atomic_uint_fast32_t sock_id; /* id of the current socket, for the pipe callback */
	atomic_uint_fast64_t conn_id; /* current connection, 0 if none */
	atomic_uint_fast64_t next_id;
	atomic_uint_fast64_t down_since; /* when the socket opened or its last pipe went */
	atomic_bool had_pipe;		 /* the current socket has had a connection */
	atomic_bool stale;		 /* ... and its dialer brought a second: replace it */
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
			atomic_store(&l->stale, true);
		} else {
			return;
		}
	} else if (ev == NNG_PIPE_EV_ADD_POST)
		atomic_store(&l->conn_id, atomic_fetch_add(&l->next_id, 1) + 1);
	else if (ev == NNG_PIPE_EV_REM_POST) {
		atomic_store(&l->down_since, agentclock_now(l->clock));
		atomic_store(&l->conn_id, 0);
	}
	if (l->kick)
		l->kick(l->kick_arg);
}

static int open_socket(struct link *l)
{
	int rv;

	l->last_open_try = agentclock_now(l->clock);
	atomic_store(&l->down_since, l->last_open_try);
	if ((rv = nng_push0_open(&l->sock)) != 0)
		return errno_of(rv);
	atomic_store(&l->had_pipe, false);
	atomic_store(&l->stale, false);
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
static bool collector_there(const struct link *l)
{
	struct stat st;

	return stat(l->url + strlen("ipc://"), &st) == 0 && S_ISSOCK(st.st_mode);
}

/* Open the socket if a collector's socket file is there; else try again later. */
static void open_if_there(struct link *l)
{
	if (collector_there(l))
		open_socket(l);
	else
		l->last_open_try = agentclock_now(l->clock);
}

int link_open(struct link **out, const char *socket_path, const struct agentclock *clock,
	      void (*kick)(void *), void *arg)
{
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
	if (collector_there(l) && (rv = open_socket(l)) != 0 && rv != -ENOMEM) {
		free(l);
		return rv;
	}
	*out = l;
	return 0;
}

void link_close(struct link *l)
{
	if (l == NULL)
		return;
	if (l->open && !atomic_load(&forked))
		nng_close(l->sock);
	wantfile_fini(&l->want);
	free(l);
}

static int link_send(void *arg, const uint8_t *buf, size_t len)
{
	struct link *l = arg;

	if (!l->open || atomic_load(&forked))
		return -ENOTCONN;
	return errno_of(nng_send(l->sock, (void *)buf, len, NNG_FLAG_NONBLOCK));
}

static void link_reset(void *arg);

/*
 * Down for LINK_REDIAL_STALL_NS? down_since is loaded before the clock is read, so a pipe that
 * went on an nng thread meanwhile never makes the difference wrap.
 */
static bool stalled(const struct link *l)
{
	uint64_t since = atomic_load(&l->down_since);

	return agentclock_now(l->clock) - since >= LINK_REDIAL_STALL_NS;
}

static uint64_t link_state(void *arg)
{
	struct link *l = arg;

	if (atomic_load(&forked))
		return 0;
	if (!l->open && agentclock_now(l->clock) - l->last_open_try >= LINK_REOPEN_EVERY_NS)
		open_if_there(l);
	else if (l->open &&
		 (atomic_load(&l->stale) || (atomic_load(&l->conn_id) == 0 && stalled(l))))
		/* Its dialer connected again (see pipe_event), or it stayed down so long that the
		 * dialer may be dead (see the top of this file): a fresh socket. */
		link_reset(l);
	return l->open ? atomic_load(&l->conn_id) : 0;
}

static void link_reset(void *arg)
{
	struct link *l = arg;

	if (atomic_load(&forked))
		return;
	if (l->open) {
		atomic_store(&l->sock_id, 0);
		nng_close(l->sock); /* discards messages queued for the old peer */
		l->open = false;
	}
	atomic_store(&l->conn_id, 0);
	open_if_there(l);
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
