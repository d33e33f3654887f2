// SPDX-License-Identifier: MIT
/*
 * rxnng.c - the nng pull0 listener for agents (see rxnng.h). The only file that speaks nng
 * on the collector's receive path; NNG_E* codes stop here.
 *
 * Invariant: a pipe is in the admitted set from its ADD_PRE (if admitted) to its REM_POST, and
 * exactly one RECEIVE_GONE is queued for every admitted pipe.
 *
 * A pipe's peer PID is the kernel's (SO_PEERCRED), read at its ADD_PRE and kept with it until
 * its RECEIVE_GONE is taken: nng drops the pipe's id right after REM_POST, and an agent's last
 * message (at VM death, often its largest) is usually taken after that.
 */
#include "rxnng.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pipeline0/pull.h>

#include "array.h"
#include "fgclock.h"
#include "fgproto.h"
#include "fgsearch.h"
#include "fgfree.h"
#include "util.h"

/* After a listen, the watchdog's first probes come this often (at most its period). */
#define WATCHDOG_EARLY_MS 250
#define WATCHDOG_EARLY_PROBES 8

/* An admitted pipe and its peer's PID (0 when nng could not say at ADD_PRE). */
struct rxpeer {
	uint32_t id, pid;
};

struct rxnng {
	nng_socket sock;
	nng_listener lst;
	char url[128 + 8];
	struct receive_opts o;
	int efd;     /* signalled when a gone event is queued */
	int recv_fd; /* nng's NNG_OPT_RECVFD: readable while a message waits; -1 unknown */
	nng_msg *cur;
	pid_t self;

	pthread_mutex_t mu;   /* protects everything below */
	struct rxpeer *pipes; /* admitted pipes, sorted by id */
	unsigned n_pipes;
	struct rxpeer *gone; /* queued RECEIVE_GONE pipes, in order */
	size_t n_gone, cap_gone;
	struct receive_stats st;

	/* watchdog */
	pthread_t wd;
	bool wd_running, wd_stop;
	bool wd_paused;			    /* rxnng_watchdog_pause */
	void (*wedged)(void *arg, int why); /* rxnng_on_wedge: called instead of re-listening */
	void *wedged_arg;
	pthread_cond_t wd_cv;
	uint64_t probe_hits;
};

static int nng_to_errno(int rv)
{
	if (rv & NNG_ESYSERR)
		return -(rv & ~NNG_ESYSERR);
	switch (rv) {
	case 0:
		return 0;
	case NNG_ENOMEM:
		return -ENOMEM;
	case NNG_EADDRINUSE:
		return -EADDRINUSE;
	case NNG_EADDRINVAL:
	case NNG_EINVAL:
		return -EINVAL;
	case NNG_EPERM:
		return -EACCES;
	case NNG_ENOENT:
		return -ENOENT;
	case NNG_EAGAIN:
		return -EAGAIN;
	case NNG_ECLOSED:
	case NNG_ECONNSHUT:
		return -ENOTCONN;
	case NNG_ENOTSUP:
		return -ENOTSUP;
	default:
		return -EIO;
	}
}

static bool id_before(const struct rxpeer *a, uint32_t id)
{
	return a->id < id;
}
FG_LOWER_BOUND(id_lower_bound, struct rxpeer, uint32_t, id_before)

/* Index of the first admitted pipe id >= id (lock held). */
static unsigned pipes_find(const struct rxnng *rx, uint32_t id)
{
	return (unsigned)id_lower_bound(rx->pipes, rx->n_pipes, id);
}

/* Wake the owner's poll (the eventfd): a gone pipe is queued, or a counter it reports moved. */
static void wake(struct rxnng *rx)
{
	uint64_t one = 1;

	if (write(rx->efd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is saturated, so the fd is readable anyway. */
	}
}

static void pipe_cb(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct rxnng *rx = arg;
	uint32_t id = nng_pipe_id(p);
	uint64_t pid = 0;
	unsigned i;

	if (ev == NNG_PIPE_EV_ADD_PRE) {
		/* Any pipe reaching the socket proves the listener still accepts. */
		pthread_mutex_lock(&rx->mu);
		rx->probe_hits++;
		pthread_cond_broadcast(&rx->wd_cv);
		if (nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_PID, &pid) != 0 || pid > UINT32_MAX)
			pid = 0;
		/* Our own watchdog's probe has done its job. */
		if (!rx->o.allow_self_peer && pid == (uint64_t)rx->self) {
			pthread_mutex_unlock(&rx->mu);
			nng_pipe_close(p);
			return;
		}
		if (rx->n_pipes >= rx->o.max_peers) {
			rx->st.refused_cap++;
			pthread_mutex_unlock(&rx->mu);
			nng_pipe_close(p);
			return;
		}
		i = pipes_find(rx, id);
		memmove(&rx->pipes[i + 1], &rx->pipes[i], (rx->n_pipes - i) * sizeof(*rx->pipes));
		rx->pipes[i] = (struct rxpeer){ .id = id, .pid = (uint32_t)pid };
		rx->n_pipes++;
		rx->st.accepted++;
		pthread_mutex_unlock(&rx->mu);
		return;
	}
	if (ev != NNG_PIPE_EV_REM_POST)
		return;
	pthread_mutex_lock(&rx->mu);
	i = pipes_find(rx, id);
	if (i < rx->n_pipes && rx->pipes[i].id == id) {
		struct rxpeer gone = rx->pipes[i];

		memmove(&rx->pipes[i], &rx->pipes[i + 1],
			(rx->n_pipes - i - 1) * sizeof(*rx->pipes));
		rx->n_pipes--;
		rx->st.gone++;
		(void)ARRAY_GROW(rx->gone, rx->cap_gone, rx->n_gone + 1);
		/*
		 * Without memory the consumer never hears of this pipe's end (it is still closed),
		 * and its messages still queued are refused for want of their PID.
		 */
		if (rx->n_gone < rx->cap_gone)
			rx->gone[rx->n_gone++] = gone;
		pthread_mutex_unlock(&rx->mu);
		wake(rx);
		return;
	}
	pthread_mutex_unlock(&rx->mu);
}

static int listen_now(struct rxnng *rx)
{
	nng_listener l;
	int rv;

	if ((rv = nng_listener_create(&l, rx->sock, rx->url)) != 0)
		return nng_to_errno(rv);
	if ((rv = nng_listener_set_int(l, NNG_OPT_IPC_PERMISSIONS, rx->o.socket_mode)) != 0 ||
	    (rv = nng_listener_set_size(l, NNG_OPT_RECVMAXSZ, rx->o.max_msg)) != 0 ||
	    (rv = nng_listener_start(l, 0)) != 0) {
		nng_listener_close(l);
		return nng_to_errno(rv);
	}
	rx->lst = l;
	return 0;
}

/* ms left until dl (CLOCK_MONOTONIC), 0 when past. */
static int ms_left(const struct timespec *dl)
{
	struct timespec now;
	long long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (long long)(dl->tv_sec - now.tv_sec) * 1000 + (dl->tv_nsec - now.tv_nsec) / 1000000;
	return ms <= 0 ? 0 : ms > INT32_MAX ? INT32_MAX : (int)ms;
}

/*
 * One self-probe, by hand rather than with an nng dialer: connect (never blocking: a full
 * backlog is a failed probe), send push0's SP header, read the listener's header back, and only
 * then wait for the pipe to reach the socket. 0 once it did, -ETIMEDOUT, or a negative errno.
 *
 * Why by hand: nng 1.5.2's epoll loop drops EPOLLHUP from the events it hands on (nng #2100),
 * and a socket it has accepted but not yet armed is registered without EPOLLONESHOT. A peer
 * that hangs up in that window makes the poll thread spin until the socket is armed. An nng
 * dialer re-dials every 20 ms after our pipe_cb closes its pipe, and closing it left such
 * sockets behind: 1-2 s of a spinning core, a few times a minute under load. Here the
 * listener has sent its header, so it has armed the socket, before we can hang up.
 */
static int probe_once(struct rxnng *rx, const struct timespec *dl, uint64_t before)
{
	static const uint8_t hdr[8] = { 0, 'S', 'P', 0, 0x00, 0x50 /* push0 */, 0, 0 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint8_t peer[8];
	size_t got = 0;
	int fd, rv = 0;

	if (strlen(rx->o.path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, rx->o.path, strlen(rx->o.path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno; /* -EMFILE/-ENFILE: says nothing of the listener */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    write(fd, hdr, sizeof(hdr)) != (ssize_t)sizeof(hdr)) {
		rv = -errno;
		goto out;
	}
	while (got < sizeof(peer)) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, ms_left(dl)) <= 0) {
			rv = -ETIMEDOUT;
			goto out;
		}
		n = read(fd, peer + got, sizeof(peer) - got);
		if (n <= 0) {
			rv = n == 0 ? -ECONNRESET : errno == EAGAIN ? 0 : -errno;
			if (rv)
				goto out;
			continue;
		}
		got += (size_t)n;
	}
	if (memcmp(peer, hdr, 4) != 0) {
		rv = -EPROTO;
		goto out;
	}
	pthread_mutex_lock(&rx->mu);
	while (rx->probe_hits == before && !rx->wd_stop)
		if (pthread_cond_timedwait(&rx->wd_cv, &rx->mu, dl) == ETIMEDOUT)
			break;
	/* The listener answered, yet no pipe came: its accept loop has stopped (see is_wedge()). */
	rv = rx->probe_hits != before || rx->wd_stop ? 0 : -ENOTCONN;
	pthread_mutex_unlock(&rx->mu);
out:
	close(fd);
	return rv;
}

/*
 * Probe ourselves: 0 when a pipe reached the socket within the probe timeout (or no descriptor
 * was left to probe with), else the failed probe's -errno (-ENOTCONN: the listener answered
 * the handshake and still no pipe came).
 */
static int probe(struct rxnng *rx)
{
	struct timespec dl;
	uint64_t before;
	bool nofd, denied;
	int rv;

	pthread_mutex_lock(&rx->mu);
	before = rx->probe_hits;
	rx->st.probes++;
	pthread_mutex_unlock(&rx->mu);
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += rx->o.probe_timeout_ms / 1000;
	dl.tv_nsec += (long)(rx->o.probe_timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	rv = probe_once(rx, &dl, before);
	/*
	 * Out of descriptors, or the socket's directory closed to our uid (a sandboxed listener
	 * that dropped to its own uid, in a directory only root may search): says nothing of the
	 * listener, which still serves whoever can reach it; a new one would fare no better.
	 */
	nofd = rv == -EMFILE || rv == -ENFILE;
	denied = rv == -EACCES || rv == -EPERM;
	pthread_mutex_lock(&rx->mu);
	if (rv) {
		if (nofd)
			rx->st.probe_nofd++;
		else if (denied)
			rx->st.probe_denied++;
		else
			rx->st.probe_fail++;
		rx->st.last_err = rv;
	}
	pthread_mutex_unlock(&rx->mu);
	/* A sandboxed owner sleeps until something wakes it: a failed probe is worth a word. */
	if (rv)
		wake(rx);
	return nofd || denied ? 0 : rv;
}

/*
 * Whether failed probes (fails in a row, the last one's rv) show a wedged listener. A probe the
 * listener answered without a pipe coming is the nng #1518 wedge itself: one peer that hangs up
 * before its connection is accepted is enough, and the accept loop never resumes, so a single
 * such probe settles it. A probe that got no answer at all is what a burst of connections also
 * makes: only probe_failures of those in a row.
 */
static bool is_wedge(const struct rxnng *rx, unsigned fails, int rv)
{
	return rv == -ENOTCONN || fails >= rx->o.probe_failures;
}

/* The watchdog's period: shorter for the first probes after a listen, when agents whose dials
 * a restart cut short redial (and a dial that hangs up as it is accepted wedges the listener). */
static unsigned period_ms(const struct rxnng *rx, unsigned since_listen)
{
	unsigned early =
		rx->o.watchdog_ms < WATCHDOG_EARLY_MS ? rx->o.watchdog_ms : WATCHDOG_EARLY_MS;

	return since_listen < WATCHDOG_EARLY_PROBES ? early : rx->o.watchdog_ms;
}

/* The socket's directory, made again (0755, like at the start) when it was removed. */
static void make_dir(const char *path)
{
	char dir[128];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = '\0';
	if (mkdir(dir, 0755) == 0)
		(void)chmod(dir, 0755); /* whatever our umask */
}

static void *watchdog(void *arg)
{
	struct rxnng *rx = arg;
	unsigned fails = 0, since_listen = 0;

	pthread_mutex_lock(&rx->mu);
	while (!rx->wd_stop) {
		unsigned ms = period_ms(rx, since_listen++);
		struct timespec dl;
		int rv;

		fg_deadline_ms_on(CLOCK_MONOTONIC, &dl, (long)ms);
		while (!rx->wd_stop)
			if (pthread_cond_timedwait(&rx->wd_cv, &rx->mu, &dl) == ETIMEDOUT)
				break;
		if (rx->wd_stop)
			break;
		if (rx->wd_paused) {
			fails = 0;
			continue;
		}
		pthread_mutex_unlock(&rx->mu);
		rv = probe(rx);
		fails = rv ? fails + 1 : 0;
		if (rv && is_wedge(rx, fails, rv)) {
			fails = 0;
			since_listen = 0;
			pthread_mutex_lock(&rx->mu);
			if (rx->wedged) {
				rx->wedged(rx->wedged_arg, rv); /* the loop goes on with mu held */
				continue;
			}
			pthread_mutex_unlock(&rx->mu);
			/*
			 * Wedged (or gone): closing the listener unlinks the socket file and closes
			 * its pipes; listening again binds a fresh file. Agents reconnect and
			 * replay.
			 */
			nng_listener_close(rx->lst);
			make_dir(rx->o.path);
			rv = listen_now(rx);

			pthread_mutex_lock(&rx->mu);
			if (rv == 0) {
				rx->st.relistens++;
			} else {
				rx->st.relisten_err++;
				rx->st.last_err = rv;
			}
			pthread_mutex_unlock(&rx->mu);
		}
		pthread_mutex_lock(&rx->mu);
	}
	pthread_mutex_unlock(&rx->mu);
	return NULL;
}

int rxnng_open(const struct receive_opts *o, struct rxnng **out)
{
	struct rxnng *rx;
	pthread_condattr_t ca;
	int rv, fd;

	rx = FG_NEW_CONF(struct rxnng, o, o);
	if (!rx)
		return -ENOMEM;
	rx->self = getpid();
	snprintf(rx->url, sizeof(rx->url), "ipc://%s", o->path);
	rx->pipes = calloc(rx->o.max_peers + 1, sizeof(*rx->pipes));
	rx->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_mutex_init(&rx->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&rx->wd_cv, &ca);
	pthread_condattr_destroy(&ca);
	FG_DEFAULT(rx->o.close_timeout_ms, 2000);
	if (!rx->pipes || rx->efd < 0) {
		rv = rx->efd < 0 ? -errno : -ENOMEM;
		goto fail;
	}
	if ((rv = nng_to_errno(nng_pull0_open(&rx->sock))) != 0)
		goto fail;
	/*
	 * The descriptor poll() waits on is made now, before a peer can connect: nng makes it on
	 * first use, and hands it to the thread that signals a message only through atomics of
	 * its own, which ThreadSanitizer cannot see (a report at every start otherwise).
	 */
	if ((rv = nng_to_errno(nng_socket_set_size(rx->sock, NNG_OPT_RECVMAXSZ, rx->o.max_msg))) ||
	    (rv = nng_to_errno(nng_socket_get_int(rx->sock, NNG_OPT_RECVFD, &fd))) ||
	    (rv = nng_to_errno(nng_pipe_notify(rx->sock, NNG_PIPE_EV_ADD_PRE, pipe_cb, rx))) ||
	    (rv = nng_to_errno(nng_pipe_notify(rx->sock, NNG_PIPE_EV_REM_POST, pipe_cb, rx))) ||
	    (rv = listen_now(rx)) != 0) {
		nng_close(rx->sock);
		goto fail;
	}
	if (nng_socket_get_int(rx->sock, NNG_OPT_RECVFD, &rx->recv_fd) != 0)
		rx->recv_fd = -1;
	if (rx->o.watchdog_ms) {
		if (pthread_create(&rx->wd, NULL, watchdog, rx) != 0) {
			nng_close(rx->sock);
			rv = -EAGAIN;
			goto fail;
		}
		rx->wd_running = true;
	}
	*out = rx;
	return 0;
fail:
	if (rx->efd >= 0)
		close(rx->efd);
	pthread_cond_destroy(&rx->wd_cv);
	pthread_mutex_destroy(&rx->mu);
	free(rx->pipes);
	free(rx);
	return rv;
}

/* nng_close on a thread of its own, so that a close nng never finishes cannot keep us. */
struct closer {
	nng_socket sock;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
	bool abandoned;		/* the waiter gave up: fin is the closing thread's to call */
	void (*fin)(void *arg); /* frees what nng's threads could still use */
	void *fin_arg;
	atomic_int refs; /* the closing thread and the waiter: the last one frees */
};

static void closer_put(struct closer *c)
{
	if (atomic_fetch_sub(&c->refs, 1) == 1) {
		pthread_cond_destroy(&c->cv);
		pthread_mutex_destroy(&c->mu);
		free(c);
	}
}

static void *closer_run(void *arg)
{
	struct closer *c = arg;
	bool abandoned;

	nng_close(c->sock);
	pthread_mutex_lock(&c->mu);
	c->done = true;
	abandoned = c->abandoned;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	if (abandoned && c->fin)
		c->fin(c->fin_arg); /* the close did finish, late: nng is done with it now */
	closer_put(c);
	return NULL;
}

/*
 * nng_close(sock) within ms: true, or false with the close left running, which then calls
 * fin(fin_arg) if it ever finishes.
 */
static bool close_within(nng_socket sock, unsigned ms, void (*fin)(void *), void *fin_arg)
{
	struct closer *c = calloc(1, sizeof(*c));
	pthread_condattr_t ca;
	pthread_attr_t a;
	struct timespec dl;
	bool done;

	if (!c || pthread_attr_init(&a) != 0) {
		free(c);
		nng_close(sock); /* no thread to spare: wait as nng does */
		return true;
	}
	c->sock = sock;
	c->fin = fin;
	c->fin_arg = fin_arg;
	atomic_init(&c->refs, 2);
	pthread_mutex_init(&c->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&(pthread_t){ 0 }, &a, closer_run, c) != 0) {
		pthread_attr_destroy(&a);
		atomic_store(&c->refs, 1);
		closer_put(c);
		nng_close(sock);
		return true;
	}
	pthread_attr_destroy(&a);
	fg_deadline_ms_on(CLOCK_MONOTONIC, &dl, (long)ms);
	pthread_mutex_lock(&c->mu);
	while (!c->done)
		if (pthread_cond_timedwait(&c->cv, &c->mu, &dl) == ETIMEDOUT)
			break;
	done = c->done;
	c->abandoned = !done;
	pthread_mutex_unlock(&c->mu);
	closer_put(c);
	return done;
}

/* What rxnng_open allocated, once nng has closed the socket. */
static void rxnng_free(void *arg)
{
	struct rxnng *rx = arg;

	close(rx->efd);
	pthread_cond_destroy(&rx->wd_cv);
	pthread_mutex_destroy(&rx->mu);
	FG_FREE_ALL(rx->pipes, rx->gone, rx);
}

int rxnng_close(struct rxnng *rx)
{
	if (!rx)
		return 0;
	if (rx->wd_running) {
		pthread_mutex_lock(&rx->mu);
		rx->wd_stop = true;
		pthread_cond_broadcast(&rx->wd_cv);
		pthread_mutex_unlock(&rx->mu);
		pthread_join(rx->wd, NULL);
	}
	if (rx->cur) {
		nng_msg_free(rx->cur);
		rx->cur = NULL;
	}
	if (!close_within(rx->sock, rx->o.close_timeout_ms, rxnng_free, rx)) {
		/*
		 * nng's threads may still call pipe_cb with rx: it stays allocated, and is freed
		 * by the closing thread if the close ever finishes. The caller exits.
		 */
		return -ETIMEDOUT;
	}
	rxnng_free(rx);
	return 0;
}

int rxnng_pollfds(struct rxnng *rx, struct pollfd *fds)
{
	fds[0] = (struct pollfd){ .fd = rx->recv_fd, .events = POLLIN };
	fds[1] = (struct pollfd){ .fd = rx->efd, .events = POLLIN };
	return 2;
}

int rxnng_next(struct rxnng *rx, struct receive_ev *ev)
{
	nng_msg *m;
	uint64_t junk;

	if (rx->cur) {
		nng_msg_free(rx->cur);
		rx->cur = NULL;
	}
	/*
	 * Ask nng only when its descriptor says a message waits: a non-blocking nng_recvmsg with
	 * nothing queued hands its aio to nng's expiry thread and waits for it (a futex round trip
	 * between two threads), once per pump, i.e. per sample.
	 */
	struct pollfd pf = { .fd = rx->recv_fd, .events = POLLIN };

	if ((rx->recv_fd < 0 || poll(&pf, 1, 0) > 0) &&
	    nng_recvmsg(rx->sock, &m, NNG_FLAG_NONBLOCK) == 0) {
		rx->cur = m;
		ev->type = RECEIVE_MSG;
		ev->pipe = nng_pipe_id(nng_msg_get_pipe(m));
		ev->data = nng_msg_body(m);
		ev->len = nng_msg_len(m);
		return 1;
	}
	/* Clear the eventfd before looking at the queue so a new event re-arms it. */
	if (read(rx->efd, &junk, sizeof(junk)) < 0) {
		/* EAGAIN: nothing signalled since the last read. */
	}
	pthread_mutex_lock(&rx->mu);
	if (rx->n_gone) {
		ev->type = RECEIVE_GONE;
		ev->pipe = rx->gone[0].id;
		ev->data = NULL;
		ev->len = 0;
		memmove(&rx->gone[0], &rx->gone[1], (rx->n_gone - 1) * sizeof(*rx->gone));
		rx->n_gone--;
		pthread_mutex_unlock(&rx->mu);
		return 1;
	}
	pthread_mutex_unlock(&rx->mu);
	return 0;
}

/* The PID kept for pipe, admitted or gone and not yet taken; 0 when none is (lock held). */
static uint32_t kept_pid(const struct rxnng *rx, uint32_t pipe)
{
	unsigned i = pipes_find(rx, pipe);

	if (i < rx->n_pipes && rx->pipes[i].id == pipe)
		return rx->pipes[i].pid;
	for (size_t k = 0; k < rx->n_gone; k++)
		if (rx->gone[k].id == pipe)
			return rx->gone[k].pid;
	return 0;
}

int rxnng_peer_pid(struct rxnng *rx, uint32_t pipe, uint32_t *pid)
{
	nng_pipe p = { .id = pipe };
	uint64_t v;
	uint32_t kept;
	int rv;

	pthread_mutex_lock(&rx->mu);
	kept = kept_pid(rx, pipe);
	pthread_mutex_unlock(&rx->mu);
	if (kept) {
		*pid = kept;
		return 0;
	}
	if ((rv = nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_PID, &v)) != 0)
		return rv == NNG_ENOTSUP ? -ENOTSUP : -ENOTCONN;
	if (v == 0 || v > UINT32_MAX)
		return -ENOTCONN;
	*pid = (uint32_t)v;
	return 0;
}

void rxnng_drop_pipe(struct rxnng *rx, uint32_t pipe)
{
	nng_pipe p = { .id = pipe };

	(void)rx;
	nng_pipe_close(p);
}

void rxnng_watchdog_pause(struct rxnng *rx, bool paused)
{
	pthread_mutex_lock(&rx->mu);
	rx->wd_paused = paused;
	pthread_mutex_unlock(&rx->mu);
}

void rxnng_stats(struct rxnng *rx, struct receive_stats *out)
{
	pthread_mutex_lock(&rx->mu);
	*out = rx->st;
	out->connected = rx->n_pipes;
	pthread_mutex_unlock(&rx->mu);
}

void rxnng_on_wedge(struct rxnng *rx, void (*fn)(void *arg, int why), void *arg)
{
	pthread_mutex_lock(&rx->mu);
	rx->wedged = fn;
	rx->wedged_arg = arg;
	pthread_mutex_unlock(&rx->mu);
}
