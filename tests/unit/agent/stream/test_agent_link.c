// SPDX-License-Identifier: MIT
/*
 * test_agent_link.c - the agent's nng link (link.c) against real ipc sockets: it finds a
 * collector that starts late, and it keeps redialing after a collector that dropped
 * connections during the SP handshake, the way a SIGKILLed one does; and on a fake clock, it
 * looks for a collector's socket file and replaces a socket that never connected exactly when
 * LINK_REOPEN_EVERY_NS and LINK_REDIAL_STALL_NS say (nng's own dialing runs in real time),
 * or at once when the socket file is made anew; a connection that dies as it starts is never
 * taken for up, and a send after a connection went fails instead of queueing.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <nng/nng.h>
#include <nng/protocol/pipeline0/pull.h>

#include "agentclock.h"
#include "fgclock.h"
#include "link.h"

#define MS 1000000ull

/*
 * nng_pipe_notify is wrapped in this binary (-Wl,--wrap): the link's pipe callback runs behind
 * one that can hold nng's threads back, as a busy machine does: ADD_POST before the link sees
 * it, REM_POST after (nng forgets the pipe only then, so an ADD_POST held back meanwhile still
 * finds its socket).
 */
int __real_nng_pipe_notify(nng_socket s, nng_pipe_ev ev, nng_pipe_cb cb, void *arg);
int __wrap_nng_pipe_notify(nng_socket s, nng_pipe_ev ev, nng_pipe_cb cb, void *arg);

static _Atomic(nng_pipe_cb) link_cb; /* the link's (one function for every link and event) */
static atomic_uint hold_ms;	     /* ADD_POST held back this long, REM_POST twice as long */

static void sleep_ms(unsigned ms)
{
	nanosleep(&(struct timespec){ ms / 1000, (long)(ms % 1000) * 1000000L }, NULL);
}

static void held_cb(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	nng_pipe_cb cb = atomic_load(&link_cb);
	unsigned ms = atomic_load(&hold_ms);

	if (ev == NNG_PIPE_EV_ADD_POST && ms)
		sleep_ms(ms);
	cb(p, ev, arg);
	if (ev == NNG_PIPE_EV_REM_POST && ms)
		sleep_ms(2 * ms);
}

int __wrap_nng_pipe_notify(nng_socket s, nng_pipe_ev ev, nng_pipe_cb cb, void *arg)
{
	atomic_store(&link_cb, cb);
	return __real_nng_pipe_notify(s, ev, held_cb, arg);
}

struct fx {
	char dir[64];
	char path[128];
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	strcpy(fx->dir, "/tmp/fg_link_XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->path, sizeof(fx->path), "%s/fg.sock", fx->dir);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	unlink(fx->path);
	rmdir(fx->dir);
	free(fx);
	return 0;
}

/* A clock that moves only when a test says so; nng's threads read it too. */
struct fakeclock {
	atomic_uint_fast64_t ns;
};

static uint64_t fake_now(void *arg)
{
	return atomic_load(&((struct fakeclock *)arg)->ns);
}

static void fake_nap(void *arg, uint64_t ns)
{
	atomic_fetch_add(&((struct fakeclock *)arg)->ns, ns);
}

/* Poll the link's state (as the sender thread does) until it is up or timeout_ms passed. */
static uint64_t wait_up(struct link *l, unsigned timeout_ms)
{
	uint64_t t0 = fg_now_ns();
	struct timespec tick = { 0, 5 * 1000000L };

	while (fg_now_ns() - t0 < timeout_ms * MS) {
		uint64_t id = link_nng_ops.state(l);

		if (id != 0)
			return id;
		nanosleep(&tick, NULL);
	}
	return 0;
}

/* A collector: an nng pull0 listener on ipc://path. */
static nng_socket collector_start(const char *path)
{
	char url[160];
	nng_socket s;

	snprintf(url, sizeof(url), "ipc://%s", path);
	assert_int_equal(nng_pull0_open(&s), 0);
	assert_int_equal(nng_listen(s, url, NULL, 0), 0);
	return s;
}

static void test_collector_started_late_is_found(void **state)
{
	struct fx *fx = *state;
	struct link *l;
	nng_socket c;

	assert_int_equal(link_open(&l, fx->path, NULL, NULL, NULL), 0);
	assert_int_equal(wait_up(l, 300), 0); /* nobody listens */
	c = collector_start(fx->path);
	assert_true(wait_up(l, 2000) != 0);
	link_close(l);
	nng_close(c);
}

/*
 * A dying collector: accepts and closes at once, so a dial lands in a socket that is gone
 * before the agent wrote its SP header (what a SIGKILLed collector's listener does to a dial
 * that arrives while the kernel tears the process down).
 */
struct slammer {
	int fd;
	atomic_bool stop;
	atomic_uint accepted;
	pthread_t th;
};

static void *slam(void *arg)
{
	struct slammer *sl = arg;
	struct pollfd p = { .fd = sl->fd, .events = POLLIN };

	while (!atomic_load(&sl->stop)) {
		if (poll(&p, 1, 20) == 1) {
			int c = accept4(sl->fd, NULL, NULL, SOCK_CLOEXEC);

			if (c >= 0) {
				close(c);
				atomic_fetch_add(&sl->accepted, 1);
			}
		}
	}
	return NULL;
}

/* A plain Unix stream socket listening at path (a peer that speaks no SP). */
static int listen_at(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	assert_true(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 16), 0);
	return fd;
}

static void slammer_start(struct slammer *sl, const char *path)
{
	sl->fd = listen_at(path);
	atomic_store(&sl->stop, false);
	atomic_store(&sl->accepted, 0);
	assert_int_equal(pthread_create(&sl->th, NULL, slam, sl), 0);
}

static void slammer_stop(struct slammer *sl, const char *path)
{
	atomic_store(&sl->stop, true);
	pthread_join(sl->th, NULL);
	close(sl->fd);
	unlink(path);
}

/*
 * nng 1.5.2 gives up a dialer for good when its handshake write fails with EPIPE (NNG_ECLOSED:
 * "no further action"), which is what a connection closed under it produces: the link must
 * not depend on that dialer and reach the next collector anyway, within a few seconds.
 */
static void test_redials_after_connections_dropped_in_the_handshake(void **state)
{
	struct fx *fx = *state;
	struct slammer sl;
	struct link *l;

	for (int round = 0; round < 4; round++) {
		uint64_t t0, up;
		nng_socket c;

		slammer_start(&sl, fx->path);
		assert_int_equal(link_open(&l, fx->path, NULL, NULL, NULL), 0);
		/* Long enough for several dials into the dying listener. */
		assert_int_equal(wait_up(l, 1500), 0);
		slammer_stop(&sl, fx->path);
		assert_true(atomic_load(&sl.accepted) > 0);
		c = collector_start(fx->path);
		t0 = fg_now_ns();
		up = wait_up(l, 5000);
		print_message("round %d: %u dials dropped; up after %llu ms\n", round,
			      atomic_load(&sl.accepted),
			      (unsigned long long)((fg_now_ns() - t0) / MS));
		assert_true(up != 0);
		link_close(l);
		nng_close(c);
	}
}

/* Sleep ms of real time, polling the link's state every 5 ms as the sender thread does. */
static uint64_t poll_for(struct link *l, unsigned ms)
{
	struct timespec tick = { 0, 5 * 1000000L };
	uint64_t id = 0;

	for (unsigned t = 0; t < ms; t += 5) {
		id = link_nng_ops.state(l);
		nanosleep(&tick, NULL);
	}
	return id;
}

/*
 * Opened before any collector: the link looks for the socket file again only once
 * LINK_REOPEN_EVERY_NS has passed on its clock, however long it really waits before that.
 */
static void test_collector_socket_is_looked_for_every_reopen_interval(void **state)
{
	struct fx *fx = *state;
	struct fakeclock fc = { 1000 * MS };
	struct agentclock clock = { fake_now, fake_nap, &fc };
	struct link *l;
	nng_socket c;

	assert_int_equal(link_open(&l, fx->path, &clock, NULL, NULL), 0);
	c = collector_start(fx->path);
	atomic_store(&fc.ns, 1000 * MS + LINK_REOPEN_EVERY_NS - 1);
	/* A listening collector is reached within milliseconds once the link dials. */
	assert_int_equal(poll_for(l, 300), 0);
	atomic_store(&fc.ns, 1000 * MS + LINK_REOPEN_EVERY_NS);
	assert_true(wait_up(l, 2000) != 0);
	link_close(l);
	nng_close(c);
}

/*
 * A collector that accepts and never answers the SP handshake: a socket's dialer makes one
 * connection and waits on it, so each connection accepted is a socket the link opened.
 */
struct mute {
	int fd;
	int conns[8];
	unsigned n;
};

static void mute_start(struct mute *m, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	assert_true(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	m->n = 0;
	m->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	assert_true(m->fd >= 0);
	assert_int_equal(bind(m->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(m->fd, 16), 0);
}

/* Accept what is pending; the number of connections so far. */
static unsigned mute_accept(struct mute *m)
{
	int c;

	while ((c = accept4(m->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		assert_true(m->n < sizeof(m->conns) / sizeof(m->conns[0]));
		m->conns[m->n++] = c;
	}
	return m->n;
}

/* Poll the link's state for ms of real time; the connections accepted meanwhile. */
static unsigned mute_watch(struct mute *m, struct link *l, unsigned ms)
{
	for (unsigned t = 0; t < ms; t += 5) {
		assert_int_equal(poll_for(l, 5), 0);
		mute_accept(m);
	}
	return m->n;
}

/* Has the peer of connection i closed it? */
static bool mute_closed(const struct mute *m, unsigned i)
{
	char buf[64];
	ssize_t n;

	while ((n = read(m->conns[i], buf, sizeof(buf))) > 0)
		; /* the SP header */
	return n == 0;
}

static void mute_stop(struct mute *m, const char *path)
{
	for (unsigned i = 0; i < m->n; i++)
		close(m->conns[i]);
	close(m->fd);
	unlink(path);
}

/*
 * A socket that has not connected for LINK_REDIAL_STALL_NS on the link's clock is replaced
 * (its dialer may be dead, see link.c), and not a nanosecond before.
 */
static void test_unconnected_socket_is_replaced_after_the_stall_limit(void **state)
{
	struct fx *fx = *state;
	struct fakeclock fc = { 1000 * MS };
	struct agentclock clock = { fake_now, fake_nap, &fc };
	struct link *l;
	struct mute m;

	mute_start(&m, fx->path);
	assert_int_equal(link_open(&l, fx->path, &clock, NULL, NULL), 0);
	for (unsigned t = 0; t < 2000 && mute_accept(&m) == 0; t += 5)
		assert_int_equal(poll_for(l, 5), 0);
	assert_int_equal(m.n, 1);

	atomic_store(&fc.ns, 1000 * MS + LINK_REDIAL_STALL_NS - 1);
	assert_int_equal(mute_watch(&m, l, 300), 1);
	assert_false(mute_closed(&m, 0));

	atomic_store(&fc.ns, 1000 * MS + LINK_REDIAL_STALL_NS);
	for (unsigned t = 0; t < 2000 && m.n < 2; t += 5)
		mute_watch(&m, l, 5);
	assert_int_equal(m.n, 2);
	assert_true(mute_closed(&m, 0)); /* the old socket is gone */
	/* The new socket's stall is counted from its opening. */
	atomic_store(&fc.ns, 1000 * MS + 2 * LINK_REDIAL_STALL_NS - 1);
	assert_int_equal(mute_watch(&m, l, 300), 2);
	link_close(l);
	mute_stop(&m, fx->path);
}

/* A connected link is never replaced, however long its clock runs. */
static void test_connected_socket_is_kept_past_the_stall_limit(void **state)
{
	struct fx *fx = *state;
	struct fakeclock fc = { 1000 * MS };
	struct agentclock clock = { fake_now, fake_nap, &fc };
	struct link *l;
	nng_socket c;
	uint64_t id;

	c = collector_start(fx->path);
	assert_int_equal(link_open(&l, fx->path, &clock, NULL, NULL), 0);
	id = wait_up(l, 2000);
	assert_true(id != 0);
	atomic_store(&fc.ns, 1000 * MS + 10 * LINK_REDIAL_STALL_NS);
	assert_int_equal(poll_for(l, 100), id);
	link_close(l);
	nng_close(c);
}

/* A kick callback that counts. */
static void count_kick(void *arg)
{
	atomic_fetch_add((atomic_uint *)arg, 1);
}

/*
 * A collector whose listener is stuck (it never answers the handshake) is replaced by a new
 * one, as a restart makes it: a new socket file where the old one was (renamed over it, so
 * the old listener still holds the stuck dial). The link dials the new file at once, long
 * before LINK_REDIAL_STALL_NS, which its clock never reaches here.
 */
static void test_socket_file_made_anew_is_dialed_at_once(void **state)
{
	struct fx *fx = *state;
	struct fakeclock fc = { 1000 * MS };
	struct agentclock clock = { fake_now, fake_nap, &fc };
	char tmp[160];
	struct link *l;
	struct mute m;
	nng_socket c;
	uint64_t t0;

	mute_start(&m, fx->path);
	assert_int_equal(link_open(&l, fx->path, &clock, NULL, NULL), 0);
	for (unsigned t = 0; t < 2000 && mute_accept(&m) == 0; t += 5)
		assert_int_equal(poll_for(l, 5), 0);
	assert_int_equal(m.n, 1);
	assert_int_equal(mute_watch(&m, l, 100), 1); /* the same file: the dial is waited for */

	snprintf(tmp, sizeof(tmp), "%s/new.sock", fx->dir);
	c = collector_start(tmp);
	assert_int_equal(rename(tmp, fx->path), 0);
	t0 = fg_now_ns();
	assert_true(wait_up(l, 300) != 0);
	print_message("up %llu ms after the socket file was made anew\n",
		      (unsigned long long)((fg_now_ns() - t0) / MS));
	mute_accept(&m);
	assert_true(mute_closed(&m, 0)); /* the stuck socket is gone */
	link_close(l);
	nng_close(c);
	mute_stop(&m, fx->path);
	unlink(tmp);
}

/*
 * A collector that completes one SP handshake and hangs up at once (or, with hold, once it is
 * released), then is gone (its listener closed, its file removed): what a collector killed just
 * as an agent connects, or later, leaves. A plain socket: its close never waits, as an nng
 * socket's with a connected pipe can.
 */
struct hangup {
	int fd;
	bool hold;
	atomic_bool release, done;
	pthread_t th;
};

static void *hang_up(void *arg)
{
	static const uint8_t hdr[8] = { 0, 'S', 'P', 0, 0x00, 0x51 /* pull0 */, 0, 0 };
	struct hangup *h = arg;
	uint8_t peer[8];
	size_t got = 0;
	int c;

	c = accept4(h->fd, NULL, NULL, SOCK_CLOEXEC);
	if (c >= 0) {
		if (write(c, hdr, sizeof(hdr)) == (ssize_t)sizeof(hdr)) {
			ssize_t n;

			while (got < sizeof(peer) &&
			       (n = read(c, peer + got, sizeof(peer) - got)) > 0)
				got += (size_t)n;
		}
		while (h->hold && !atomic_load(&h->release))
			nanosleep(&(struct timespec){ 0, 1000000L }, NULL);
		close(c);
	}
	atomic_store(&h->done, true);
	return NULL;
}

static void hangup_start(struct hangup *h, const char *path)
{
	h->fd = listen_at(path);
	atomic_store(&h->release, false);
	atomic_store(&h->done, false);
	assert_int_equal(pthread_create(&h->th, NULL, hang_up, h), 0);
}

/*
 * nng may report such a connection gone (REM_POST, on its reaper thread) before it reports it
 * up (ADD_POST, on the dialer's thread): here ADD_POST is held back until after REM_POST, and
 * then not. Either way it is not a connection: once the collector is gone the link reports
 * none, however long the socket's dialer finds nothing to reach.
 */
static void test_connection_dying_as_it_starts_is_not_up(void **state)
{
	struct fx *fx = *state;
	struct fakeclock fc = { 1000 * MS };
	struct agentclock clock = { fake_now, fake_nap, &fc };

	for (int round = 0; round < 4; round++) {
		struct hangup h = { .hold = false };
		struct link *l;

		atomic_store(&hold_ms, round < 2 ? 50 : 0);

		hangup_start(&h, fx->path);
		assert_int_equal(link_open(&l, fx->path, &clock, NULL, NULL), 0);
		for (unsigned t = 0; t < 2000 && !atomic_load(&h.done); t += 5)
			poll_for(l, 5);
		assert_true(atomic_load(&h.done));
		pthread_join(h.th, NULL);
		close(h.fd);
		unlink(fx->path);
		poll_for(l, 200); /* past the held-back callbacks */
		assert_int_equal(link_nng_ops.state(l), 0);
		link_close(l);
	}
	atomic_store(&hold_ms, 0);
}

/*
 * Once its connection has gone, a send fails at once (the sender then resets and syncs the
 * next connection) instead of queueing in nng for a peer that never comes back, which would
 * hold a snapshot until the sender's send timeout.
 */
static void test_send_after_the_connection_went_fails(void **state)
{
	static const uint8_t msg[16] = { 0 };
	struct fx *fx = *state;
	struct hangup h = { .hold = true };
	atomic_uint kicks = 0;
	struct link *l;
	unsigned k;

	hangup_start(&h, fx->path);
	assert_int_equal(link_open(&l, fx->path, NULL, count_kick, &kicks), 0);
	assert_true(wait_up(l, 2000) != 0);
	assert_int_equal(link_nng_ops.send(l, msg, sizeof(msg)), 0);
	k = atomic_load(&kicks);
	atomic_store(&h.release, true); /* the pipe goes; its REM_POST kicks us */
	for (unsigned t = 0; t < 2000 && atomic_load(&kicks) == k; t++)
		nanosleep(&(struct timespec){ 0, 1000000L }, NULL);
	assert_true(atomic_load(&kicks) > k);
	/* (no state() call here: it would replace the socket) */
	for (int i = 0; i < 4; i++)
		assert_int_equal(link_nng_ops.send(l, msg, sizeof(msg)), -EPIPE);
	pthread_join(h.th, NULL);
	close(h.fd);
	unlink(fx->path);
	link_close(l);
}

#define BIG_MSG (512u << 10)

struct taker {
	nng_socket c;
	pthread_t th;
	unsigned got; /* messages of BIG_MSG bytes received */
};

/* A collector that reads as the daemon does: while the agent is still sending. */
static void *take(void *arg)
{
	struct taker *t = arg;
	nng_msg *m;

	while (t->got < 3 && nng_recvmsg(t->c, &m, 0) == 0) {
		t->got += nng_msg_len(m) == BIG_MSG;
		nng_msg_free(m);
	}
	return NULL;
}

/*
 * What nng took reaches the collector although the link closes at once (the sender's last
 * messages at VM death): three messages of 512 KiB, one being written and two queued.
 */
static void test_close_lets_the_last_messages_leave(void **state)
{
	struct fx *fx = *state;
	const size_t len = BIG_MSG;
	uint8_t *msg = calloc(1, len);
	struct taker t = { .c = collector_start(fx->path) };
	nng_socket c = t.c;
	struct link *l;
	int sent = 0;

	assert_non_null(msg);
	assert_int_equal(nng_socket_set_size(c, NNG_OPT_RECVMAXSZ, 2 * len), 0);
	assert_int_equal(nng_socket_set_ms(c, NNG_OPT_RECVTIMEO, 2000), 0);
	assert_int_equal(pthread_create(&t.th, NULL, take, &t), 0);
	assert_int_equal(link_open(&l, fx->path, NULL, NULL, NULL), 0);
	assert_true(wait_up(l, 2000) != 0);
	for (unsigned i = 0; sent < 3 && i < 2000; i++) {
		int rv = link_nng_ops.send(l, msg, len);

		if (rv == 0)
			sent++;
		else
			nanosleep(&(struct timespec){ 0, 1000000L }, NULL);
	}
	assert_int_equal(sent, 3);
	link_close(l);
	pthread_join(t.th, NULL);
	assert_int_equal(t.got, 3);
	nng_close(c);
	free(msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_collector_started_late_is_found, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_redials_after_connections_dropped_in_the_handshake, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_collector_socket_is_looked_for_every_reopen_interval, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_unconnected_socket_is_replaced_after_the_stall_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connected_socket_is_kept_past_the_stall_limit,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_socket_file_made_anew_is_dialed_at_once, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_connection_dying_as_it_starts_is_not_up, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_send_after_the_connection_went_fails, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_close_lets_the_last_messages_leave, setup,
						teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
