// SPDX-License-Identifier: MIT
/*
 * test_agent_link.c - the agent's nng link (link.c) against real ipc sockets: it finds a
 * collector that starts late, and it keeps redialing after a collector that dropped
 * connections during the SP handshake, the way a SIGKILLed one does; and on a fake clock, it
 * looks for a collector's socket file and replaces a socket that never connected exactly when
 * LINK_REOPEN_EVERY_NS and LINK_REDIAL_STALL_NS say (nng's own dialing runs in real time).
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

static void slammer_start(struct slammer *sl, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	assert_true(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	sl->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(sl->fd >= 0);
	assert_int_equal(bind(sl->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(sl->fd, 16), 0);
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
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
