// SPDX-License-Identifier: MIT
/*
 * test_receive.c - the agent socket end to end inside one process: real nng clients and raw
 * AF_UNIX peers against receive + jvmset + perfmap in a temporary directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <nng/nng.h>
#include <nng/protocol/pipeline0/push.h>

#include "codetab.h"
#include "fgclock.h"
#include "fgproto.h"
#include "fgsocket.h"
#include "jvmset.h"
#include "perfmap.h"
#include "receive.h"

#define MS 1000000ull

struct fx {
	char dir[64], sock[96], url[104];
	struct receive *rx;
	struct perfmap_dir *maps;
	struct jvmset *set;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct receive_opts ro = {
		.allow_self_peer = 1, .in_process = 1, .watchdog_ms = 200, .probe_timeout_ms = 300
	};
	struct jvmset_opts jo = { 0 };

	strcpy(f->dir, "/tmp/fgrx.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->sock, sizeof(f->sock), "%s/s.sock", f->dir);
	snprintf(f->url, sizeof(f->url), "ipc://%s", f->sock);
	ro.path = f->sock;
	assert_int_equal(receive_open(&ro, &f->rx), 0);
	assert_int_equal(perfmap_dir_open(f->dir, &f->maps), 0);
	jo.maps = f->maps;
	assert_int_equal(jvmset_new(&jo, &f->set), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	jvmset_free(f->set);
	receive_close(f->rx);
	perfmap_dir_close(f->maps);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

/* Pump the collector until pred(f) holds or ms elapse. */
static bool pump_until(struct fx *f, bool (*pred)(struct fx *), unsigned ms)
{
	uint64_t end = fg_now_ns() + ms * MS;

	while (fg_now_ns() < end) {
		struct pollfd p[2];

		receive_pollfds(f->rx, p);
		poll(p, 2, 10);
		jvmset_pump(f->set, f->rx, fg_now_ns());
		jvmset_tick(f->set, fg_now_ns());
		if (pred(f))
			return true;
	}
	return false;
}

struct msg {
	uint8_t b[1 << 16];
	size_t n;
};

static void m_init(struct msg *m)
{
	m->n = (size_t)fgp_encode_msg_header(m->b, sizeof(m->b));
}

static void m_hello(struct msg *m, uint32_t pid)
{
	struct fgp_hello h = { .proto_version = FGP_VERSION,
			       .pid = pid,
			       .flags = FGP_HELLO_PRESERVE_FRAME_POINTER,
			       .ts = 1,
			       .jvm_version = { "17.0.test", 9 },
			       .agent_version = { "t", 1 } };

	m->n += (size_t)fgp_encode_hello(m->b + m->n, sizeof(m->b) - m->n, &h);
}

static void m_load(struct msg *m, uint64_t addr, uint32_t size, uint64_t ts, const char *name,
		   uint16_t flags)
{
	struct fgp_code_load_in in = { .addr = addr,
				       .size = size,
				       .ts = ts,
				       .flags = flags,
				       .name = { name, (uint16_t)strlen(name) } };
	int n = fgp_encode_code_load(m->b + m->n, sizeof(m->b) - m->n, &in);

	assert_true(n > 0);
	m->n += (size_t)n;
}

static void m_snap(struct msg *m, uint16_t type, uint64_t ts)
{
	struct fgp_snapshot s = { .ts = ts };

	m->n += (size_t)fgp_encode_snapshot(m->b + m->n, sizeof(m->b) - m->n, type, &s);
}

static nng_socket client(struct fx *f)
{
	nng_socket s;

	assert_int_equal(nng_push0_open(&s), 0);
	nng_socket_set_ms(s, NNG_OPT_SENDTIMEO, 3000);
	nng_socket_set_int(s, NNG_OPT_SENDBUF, 128); /* sends return before the collector pumps */
	nng_socket_set_ms(s, NNG_OPT_RECONNMINT, 20);
	assert_int_equal(nng_dial(s, f->url, NULL, NNG_FLAG_NONBLOCK), 0);
	return s;
}

static void send_msg(nng_socket s, const struct msg *m)
{
	assert_int_equal(nng_send(s, (void *)m->b, m->n, 0), 0);
}

static size_t live_count(struct fx *f)
{
	struct jvm *j = jvmset_find(f->set, (uint32_t)getpid());

	return j ? codetab_live_count(jvm_table(j)) : 0;
}

static bool has4(struct fx *f)
{
	return live_count(f) == 4;
}

static bool map_has_delta(struct fx *f)
{
	char path[160], line[256];
	FILE *fp;
	bool found = false;

	snprintf(path, sizeof(path), "%s/perf-%d.map", f->dir, getpid());
	fp = fopen(path, "r");
	if (!fp)
		return false;
	while (fgets(line, sizeof(line), fp))
		if (!strcmp(line, "7f0000004000 80 Delta::d\n"))
			found = true;
	fclose(fp);
	return found;
}

static void send_session(struct fx *f, nng_socket s, bool with_b)
{
	struct msg m;

	m_init(&m);
	m_hello(&m, (uint32_t)getpid());
	m_snap(&m, FGP_SNAPSHOT_BEGIN, 1000 * MS);
	m_load(&m, 0x7f0000001000, 0x100, 10 * MS, "Replay::a", FGP_REC_REPLAY);
	if (with_b)
		m_load(&m, 0x7f0000002000, 0x100, 20 * MS, "Replay::b", FGP_REC_REPLAY);
	m_load(&m, 0x7f0000003000, 0x100, 30 * MS, "Replay::c", FGP_REC_REPLAY);
	m_snap(&m, FGP_SNAPSHOT_END, 1000 * MS);
	send_msg(s, &m);
	m_init(&m);
	m_load(&m, 0x7f0000004000, 0x80, 1100 * MS, "Delta::d", 0);
	send_msg(s, &m);
	(void)f;
}

static void test_hello_snapshot_and_deltas_fill_table_and_map(void **state)
{
	struct fx *f = *state;
	nng_socket s = client(f);
	char path[160], text[1024];
	int fd;
	ssize_t n;

	send_session(f, s, true);
	assert_true(pump_until(f, has4, 3000));
	assert_true(pump_until(f, map_has_delta, 3000));
	snprintf(path, sizeof(path), "%s/perf-%d.map", f->dir, getpid());
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	assert_true(n > 0);
	text[n] = '\0';
	assert_string_equal(text, "7f0000001000 100 Replay::a\n"
				  "7f0000002000 100 Replay::b\n"
				  "7f0000003000 100 Replay::c\n"
				  "7f0000004000 80 Delta::d\n");
	nng_close(s);
}

static bool replay_gone_seen(struct fx *f)
{
	struct jvm *j = jvmset_find(f->set, (uint32_t)getpid());
	struct codetab_stats st;

	if (!j)
		return false;
	codetab_stats(jvm_table(j), &st);
	return st.replay_gone == 1 && st.replay_dups == 3;
}

static void test_reconnect_replay_merges(void **state)
{
	struct fx *f = *state;
	nng_socket s = client(f);
	const struct codeblob *b;
	struct jvm *j;

	send_session(f, s, true);
	assert_true(pump_until(f, has4, 3000));
	nng_close(s);
	/* The agent reconnects; Replay::b was unloaded while it was away. */
	s = client(f);
	send_session(f, s, false);
	assert_true(pump_until(f, replay_gone_seen, 3000));
	j = jvmset_find(f->set, (uint32_t)getpid());
	assert_int_equal(codetab_live_count(jvm_table(j)), 3);
	b = codetab_lookup(jvm_table(j), 0x7f0000002010, 500 * MS);
	assert_non_null(b);
	assert_string_equal(b->name, "Replay::b"); /* history kept */
	assert_null(codetab_lookup(jvm_table(j), 0x7f0000002010, 1000 * MS));
	nng_close(s);
}

static void m_name(struct msg *m, uint32_t id, const char *name)
{
	int n = fgp_encode_name(m->b + m->n, sizeof(m->b) - m->n, id,
				(struct fgp_str){ name, (uint16_t)strlen(name) });

	assert_true(n > 0);
	m->n += (size_t)n;
}

static void m_load_ids(struct msg *m, uint64_t addr, uint32_t name_id, uint32_t inl_id)
{
	static const uint16_t chain[2] = { 1, 0 };
	uint32_t ids[2] = { name_id, inl_id };
	struct fgp_pc_in pc = { 0x10, 2, chain };
	struct fgp_code_load_ids_in in = { .addr = addr,
					   .size = 0x100,
					   .ts = 2000 * MS,
					   .name_id = name_id,
					   .n_methods = 2,
					   .method_ids = ids,
					   .n_pcs = 1,
					   .pcs = &pc };
	int n = fgp_encode_code_load_ids(m->b + m->n, sizeof(m->b) - m->n, &in);

	assert_true(n > 0);
	m->n += (size_t)n;
}

static uint64_t bad_records(struct fx *f)
{
	struct jvmset_counters c;

	jvmset_counters(f->set, &c);
	return c.bad_records;
}

static bool one_live(struct fx *f)
{
	return live_count(f) == 1;
}

static bool bad_seen_1(struct fx *f)
{
	return bad_records(f) >= 1;
}

static bool bad_seen_2(struct fx *f)
{
	return bad_records(f) >= 2;
}

static void test_interned_names_resolve_per_connection(void **state)
{
	struct fx *f = *state;
	nng_socket s = client(f);
	const struct codeblob *b;
	const char *chain[4];
	char path[160], text[64];
	struct msg m;
	int fd;
	ssize_t n;

	/* The collector says it reads interned records. */
	snprintf(path, sizeof(path), "%s.features", f->sock);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	assert_true(n > 0);
	text[n] = '\0';
	assert_string_equal(text, "intern\ntables\nevents\n");

	m_init(&m);
	m_hello(&m, (uint32_t)getpid());
	m_name(&m, 5, "Hot::loop");
	m_name(&m, 6, "Hot::inner");
	m_load_ids(&m, 0x7f0000005000, 5, 6);
	send_msg(s, &m);
	assert_true(pump_until(f, one_live, 3000));
	b = codetab_lookup_live(jvm_table(jvmset_find(f->set, (uint32_t)getpid())), 0x7f0000005008);
	assert_non_null(b);
	assert_string_equal(b->name, "Hot::loop");
	assert_int_equal(codetab_inline_chain(b, 0x7f0000005008, chain, 4), 2);
	assert_string_equal(chain[0], "Hot::inner");
	assert_string_equal(chain[1], "Hot::loop");
	/* An id never defined on this connection is refused. */
	m_init(&m);
	m_load_ids(&m, 0x7f0000006000, 8, 5);
	send_msg(s, &m);
	assert_true(pump_until(f, bad_seen_1, 3000));
	assert_int_equal(live_count(f), 1);
	nng_close(s);
	/* A new connection starts with no ids: 5 means nothing there until defined again. */
	s = client(f);
	m_init(&m);
	m_hello(&m, (uint32_t)getpid());
	m_load_ids(&m, 0x7f0000007000, 5, 6);
	send_msg(s, &m);
	assert_true(pump_until(f, bad_seen_2, 3000));
	assert_int_equal(live_count(f), 1);
	nng_close(s);
	receive_close(f->rx); /* stopping removes the features file */
	f->rx = NULL;
	assert_int_equal(access(path, F_OK), -1);
}

static void m_unload(struct msg *m, uint64_t addr, uint64_t ts)
{
	struct fgp_code_unload u = { addr, ts };

	m->n += (size_t)fgp_encode_code_unload(m->b + m->n, sizeof(m->b) - m->n, &u);
}

/* Pipes 1 and 2 of the same JVM: once 2 said HELLO, what 1 still delivers is stale. */
static void test_a_superseded_connection_is_ignored(void **state)
{
	struct jvmset_opts jo = { 0 };
	struct jvmset *set;
	struct jvmset_counters c;
	struct msg m;
	uint32_t pid = (uint32_t)getpid();
	const struct codetab *t;

	(void)state;
	assert_int_equal(jvmset_new(&jo, &set), 0);
	m_init(&m);
	m_hello(&m, pid);
	m_load(&m, 0x7f0000001000, 0x100, 10 * MS, "Old::a", 0);
	assert_int_equal(jvmset_msg(set, 1, pid, m.b, m.n, 1), 0);
	/* The agent gave up on pipe 1 and reconnected: its replay has a newer blob at 0x...1000. */
	m_init(&m);
	m_hello(&m, pid);
	m_snap(&m, FGP_SNAPSHOT_BEGIN, 30 * MS);
	m_load(&m, 0x7f0000001000, 0x100, 20 * MS, "New::a", FGP_REC_REPLAY);
	m_snap(&m, FGP_SNAPSHOT_END, 30 * MS);
	assert_int_equal(jvmset_msg(set, 2, pid, m.b, m.n, 2), 0);
	/* Pipe 1's backlog arrives late: an unload of the old blob must not end the new one. */
	m_init(&m);
	m_unload(&m, 0x7f0000001000, 15 * MS);
	assert_int_equal(jvmset_msg(set, 1, pid, m.b, m.n, 3), 0);
	t = jvm_table(jvmset_find(set, pid));
	assert_non_null(codetab_lookup_live(t, 0x7f0000001000));
	assert_string_equal(codetab_lookup_live(t, 0x7f0000001000)->name, "New::a");
	jvmset_counters(set, &c);
	assert_int_equal(c.stale_msgs, 1);
	assert_int_equal(c.bad_msgs, 0);
	jvmset_free(set);
}

/* The names a superseded connection defined go back to its JVM's table, even before it ends. */
static void test_a_superseded_connections_names_are_given_back(void **state)
{
	struct jvmset_opts jo = { 0 };
	struct jvmset *set;
	struct codetab_stats before, named, after;
	struct msg m;
	uint32_t pid = (uint32_t)getpid();
	const struct codetab *t;

	(void)state;
	assert_int_equal(jvmset_new(&jo, &set), 0);
	m_init(&m);
	m_hello(&m, pid);
	assert_int_equal(jvmset_msg(set, 1, pid, m.b, m.n, 1), 0);
	t = jvm_table(jvmset_find(set, pid));
	codetab_stats(t, &before);
	m_init(&m);
	m_name(&m, 5, "Only::pipeOne");
	assert_int_equal(jvmset_msg(set, 1, pid, m.b, m.n, 2), 0);
	codetab_stats(t, &named);
	assert_true(named.bytes > before.bytes);
	/* The agent reconnected on pipe 2 before pipe 1's end was seen. */
	m_init(&m);
	m_hello(&m, pid);
	assert_int_equal(jvmset_msg(set, 2, pid, m.b, m.n, 3), 0);
	jvmset_gone(set, 1, 4);
	assert_ptr_equal(jvm_table(jvmset_find(set, pid)), t);
	codetab_stats(t, &after);
	assert_int_equal(after.bytes, before.bytes);
	jvmset_free(set);
}

static bool rejected(struct fx *f)
{
	struct jvmset_counters c;

	jvmset_counters(f->set, &c);
	return c.rejected == 1;
}

static void test_hello_with_wrong_pid_is_rejected(void **state)
{
	struct fx *f = *state;
	nng_socket s = client(f);
	struct msg m;

	m_init(&m);
	m_hello(&m, (uint32_t)getpid() + 1); /* not what /proc says of the socket's peer */
	m_load(&m, 0x7f0000001000, 0x100, 10 * MS, "Evil::x", 0);
	send_msg(s, &m);
	assert_true(pump_until(f, rejected, 3000));
	assert_null(jvmset_find(f->set, (uint32_t)getpid()));
	assert_null(jvmset_find(f->set, (uint32_t)getpid() + 1));
	nng_close(s);
}

static bool dropped_bad(struct fx *f)
{
	struct jvmset_counters c;

	jvmset_counters(f->set, &c);
	return c.bad_peers == 1;
}

static void test_malformed_input_is_counted_then_dropped(void **state)
{
	struct fx *f = *state;
	nng_socket s = client(f);
	struct jvmset_counters c;
	struct msg m;

	/* No redial after the drop: a redialed pipe with a backlog nobody reads makes
	 * nng 1.5.2's nng_close wait for it. */
	nng_socket_set_ms(s, NNG_OPT_RECONNMINT, 60000);
	nng_socket_set_ms(s, NNG_OPT_RECONNMAXT, 60000);

	m_init(&m);
	m_hello(&m, (uint32_t)getpid());
	send_msg(s, &m);
	for (int i = 0; i < 20; i++) {
		m_init(&m);
		m_load(&m, 0x7f0000001000, 0x100, 10 * MS, "Fine::a", 0);
		m.b[m.n - 1] = 0x01; /* a control byte in the last name: invalid record */
		m_load(&m, 0x7f0000009000, 0x100, 10 * MS, "Fine::b", 0);
		if (nng_send(s, m.b, m.n, 0) != 0)
			break;
		/* One at a time, as an agent's sender does: no backlog left at the drop. */
		if (pump_until(f, dropped_bad, 100))
			break;
	}
	assert_true(dropped_bad(f));
	jvmset_counters(f->set, &c);
	assert_true(c.bad_records >= 16);
	assert_true(c.bad_msgs >= 16);
	/* The valid record after each bad one was still applied. */
	assert_non_null(codetab_lookup_live(jvm_table(jvmset_find(f->set, (uint32_t)getpid())),
					    0x7f0000009010));
	nng_close(s);
}

static bool connected_and_loaded(struct fx *f)
{
	return live_count(f) >= 1;
}

/* The SP header a push0 peer (protocol 0x50) opens its connection with. */
static const uint8_t sp[8] = { 0, 'S', 'P', 0, 0x00, 0x50, 0, 0 };

static int raw_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	strcpy(sa.sun_path, path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/*
 * A peer announcing a message past FGP_MAX_MSG is hung up on before anything is allocated.
 * Spoken over a raw socket in SP's wire format (an nng client with such a message in flight
 * can wedge in its own close), so the hang-up itself is seen.
 */
static void test_oversized_message_is_refused(void **state)
{
	struct fx *f = *state;
	uint64_t big = FGP_MAX_MSG + 4096, t0;
	uint8_t len[9] = { 1 }, chunk[4096] = { 'F', 'G', 'C', 'P' }, peer[8];
	struct jvmset_counters c;
	struct timeval tv = { .tv_sec = 0, .tv_usec = 10000 };
	nng_socket s;
	struct msg m;
	size_t got = 0;
	bool hung_up = false;
	int fd = raw_connect(f->sock);

	/* nng's IPC frame: a message type (1), then the length, big-endian. */
	for (int i = 0; i < 8; i++)
		len[1 + i] = (uint8_t)(big >> (56 - 8 * i));
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	assert_int_equal(send(fd, sp, sizeof(sp), MSG_NOSIGNAL), (ssize_t)sizeof(sp));
	assert_int_equal(send(fd, len, sizeof(len), MSG_NOSIGNAL), (ssize_t)sizeof(len));
	(void)!send(fd, chunk, sizeof(chunk), MSG_NOSIGNAL); /* a first part of the body */
	t0 = fg_now_ns();
	while (!hung_up && fg_now_ns() - t0 < 5000 * MS) {
		ssize_t n;

		pump_until(f, connected_and_loaded, 10);
		n = recv(fd, peer + (got < 8 ? got : 0), got < 8 ? 8 - got : 8, 0);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
			hung_up = true;
		else if (n > 0)
			got += (size_t)n;
	}
	close(fd);
	assert_true(hung_up);
	assert_true(got >= 8); /* it was a real handshake that the collector answered */
	assert_memory_equal(peer, "\0SP\0\0\x51\0\0", 8); /* pull0 */
	jvmset_counters(f->set, &c);
	assert_int_equal(c.msgs, 0);

	/* The listener serves the next peer as usual. */
	s = client(f);
	m_init(&m);
	m_hello(&m, (uint32_t)getpid());
	m_load(&m, 0x7f0000001000, 0x100, 10 * MS, "After::big", 0);
	send_msg(s, &m);
	assert_true(pump_until(f, connected_and_loaded, 3000));
	nng_close(s);
}

static bool gone_counted(struct receive *rx)
{
	struct receive_stats st;

	receive_stats(rx, &st);
	return st.gone == 1;
}

/*
 * A peer that sends its last message and hangs up at once (an agent at VM death): its message
 * still has its sender's PID after nng removed the pipe, until that pipe's end is taken too. No
 * watchdog, so that the one pipe that ends is the peer's.
 */
static void test_a_last_message_keeps_its_peer_after_the_hang_up(void **state)
{
	char dir[] = "/tmp/fgrx.XXXXXX", path[64];
	struct receive_opts ro = { .allow_self_peer = 1, .in_process = 1 };
	uint8_t frame[9] = { 1 }, peer[8];
	struct receive *rx;
	struct receive_ev ev;
	struct msg m;
	uint32_t pid = 0, pipe;
	uint64_t t0;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/s.sock", dir);
	ro.path = path;
	assert_int_equal(receive_open(&ro, &rx), 0);
	fd = raw_connect(path);
	m_init(&m);
	m_hello(&m, (uint32_t)getpid());
	for (int i = 0; i < 8; i++)
		frame[1 + i] = (uint8_t)((uint64_t)m.n >> (56 - 8 * i));
	assert_int_equal(send(fd, sp, sizeof(sp), MSG_NOSIGNAL), (ssize_t)sizeof(sp));
	assert_int_equal(recv(fd, peer, sizeof(peer), MSG_WAITALL), (ssize_t)sizeof(peer));
	assert_int_equal(send(fd, frame, sizeof(frame), MSG_NOSIGNAL), (ssize_t)sizeof(frame));
	assert_int_equal(send(fd, m.b, m.n, MSG_NOSIGNAL), (ssize_t)m.n);
	close(fd);

	t0 = fg_now_ns();
	while (receive_next(rx, &ev) != 1 && fg_now_ns() - t0 < 3000 * MS)
		usleep(1000);
	assert_int_equal(ev.type, RECEIVE_MSG);
	assert_int_equal(ev.len, m.n);
	/*
	 * Taking the message let nng read on, find the hang-up and remove the pipe (dropping its
	 * id): with a large message still being checked, that happens before its PID is asked.
	 */
	while (!gone_counted(rx) && fg_now_ns() - t0 < 3000 * MS)
		usleep(1000);
	assert_true(gone_counted(rx));
	assert_int_equal(receive_peer_pid(rx, ev.pipe, &pid), 0);
	assert_int_equal(pid, (uint32_t)getpid());

	/* Once its end is taken, the pipe is gone for good. */
	pipe = ev.pipe;
	assert_int_equal(receive_next(rx, &ev), 1);
	assert_int_equal(ev.type, RECEIVE_GONE);
	assert_int_equal(ev.pipe, pipe);
	assert_int_equal(receive_peer_pid(rx, pipe, &pid), -ENOTCONN);
	receive_close(rx);
	unlink(path);
	rmdir(dir);
}

static atomic_int client_pipes;

static void count_pipe(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	(void)p;
	(void)ev;
	(void)arg;
	atomic_fetch_add(&client_pipes, 1);
}

static void test_hostile_handshakes_do_not_wedge_the_listener(void **state)
{
	struct fx *f = *state;
	/* SP header of a push0 peer, then a big-endian length. */
	static const uint8_t huge[8] = { 0, 0, 0, 0, 0x40, 0, 0, 0 };	  /* 1 GiB */
	static const uint8_t short_len[8] = { 0, 0, 0, 0, 0, 0, 0, 100 }; /* 100 bytes */
	struct receive_stats rs;
	struct msg m;
	nng_socket s;
	uint64_t t0;

	for (int round = 0; round < 20; round++) {
		int fd = raw_connect(f->sock);

		/* Half of them vanish mid-handshake (the nng #1518 wedge). */
		if (round % 2) {
			close(fd);
			continue;
		}
		assert_int_equal(write(fd, sp, 3), 3);
		close(fd);
	}
	{
		int fd = raw_connect(f->sock);

		assert_int_equal(write(fd, sp, 8), 8);
		assert_int_equal(write(fd, huge, 8), 8);
		usleep(20000);
		close(fd);
		fd = raw_connect(f->sock);
		assert_int_equal(write(fd, sp, 8), 8);
		assert_int_equal(write(fd, short_len, 8), 8);
		assert_int_equal(write(fd, "FGCP\1\0\10\0", 8), 8); /* truncated body */
		close(fd);
	}
	/*
	 * A real agent must get through within a bounded time. Like the agent, this client sends
	 * its HELLO and code again on every new connection: a connection made to the wedged
	 * listener dies when the watchdog re-creates it, and what was sent on it is lost.
	 */
	t0 = fg_now_ns();
	s = client(f);
	nng_pipe_notify(s, NNG_PIPE_EV_ADD_POST, count_pipe, NULL);
	bool ok = false;
	int sent_for = 0;

	uint64_t last = fg_now_ns();
	int fresh = 0;

	while (!ok && fg_now_ns() - t0 < 8000 * MS) {
		/*
		 * Rarely (about 1 run in 6 here) nng 1.5.2 admits the pipe but never delivers its
		 * messages after the hostile peers; a fresh connection gets through. Counted and
		 * printed so the rate stays visible.
		 */
		if (fg_now_ns() - last > 1500 * MS) {
			nng_close(s);
			s = client(f);
			nng_pipe_notify(s, NNG_PIPE_EV_ADD_POST, count_pipe, NULL);
			sent_for = -1;
			last = fg_now_ns();
			fresh++;
		}
		if (atomic_load(&client_pipes) != sent_for) {
			sent_for = atomic_load(&client_pipes);
			m_init(&m);
			m_hello(&m, (uint32_t)getpid());
			m_load(&m, 0x7f0000001000, 0x100, 10 * MS, "Survivor::a", 0);
			send_msg(s, &m);
		}
		ok = pump_until(f, connected_and_loaded, 50);
	}

	receive_stats(f->rx, &rs);
	print_message("agent accepted %.0f ms after the hostile peers; watchdog probes %llu, "
		      "failed %llu, re-listens %llu\n",
		      (fg_now_ns() - t0) / 1e6, (unsigned long long)rs.probes,
		      (unsigned long long)rs.probe_fail, (unsigned long long)rs.relistens);
	print_message("fresh client sockets needed: %d\n", fresh);
	print_message("relisten errors %llu accepted %llu gone %llu\n",
		      (unsigned long long)rs.relisten_err, (unsigned long long)rs.accepted,
		      (unsigned long long)rs.gone);
	assert_true(ok);
	nng_close(s);
}

/*
 * One peer that hangs up as it connects, before the listener accepts it, wedges nng 1.5.2's
 * listener for good (nng #1518): it still answers the SP handshake, but no pipe comes. The
 * watchdog takes a probe answered without a pipe for the wedge itself and listens again at
 * once: one failed probe per re-listen (an unanswered probe would need probe_failures in a
 * row), and an agent gets through after it.
 */
static void test_a_peer_hanging_up_as_it_connects_costs_one_probe(void **state)
{
	struct fx *f = *state;
	struct receive_stats rs, base;
	int hangups = 0;
	uint64_t t0 = fg_now_ns();
	struct msg m;
	nng_socket s;
	bool ok = false;

	do { /* the listener has passed a probe: it accepts */
		usleep(10000);
		receive_stats(f->rx, &base);
	} while ((base.probes == base.probe_fail || base.relistens) &&
		 fg_now_ns() - t0 < 3000 * MS);
	assert_true(base.probes > base.probe_fail);
	assert_int_equal(base.relistens, 0);
	rs = base;
	/*
	 * Whether a hang-up wedges the listener depends on whether it comes before nng's accept
	 * (on a quiet machine every time; less often under load): hang up until one does.
	 */
	while (rs.relistens == 0 && hangups < 20) {
		close(raw_connect(f->sock));
		hangups++;
		t0 = fg_now_ns();
		do {
			usleep(10000);
			receive_stats(f->rx, &rs);
		} while (rs.relistens == 0 && fg_now_ns() - t0 < 1500 * MS);
	}
	print_message("re-listened %.0f ms after hang-up %d; probes %llu, failed %llu, re-listens "
		      "%llu, last error %d\n",
		      (fg_now_ns() - t0) / 1e6, hangups, (unsigned long long)rs.probes,
		      (unsigned long long)rs.probe_fail, (unsigned long long)rs.relistens,
		      rs.last_err);
	assert_int_equal(rs.relistens, 1);
	assert_int_equal(rs.probe_fail - base.probe_fail, 1);
	assert_int_equal(rs.last_err, -ENOTCONN);

	for (int tries = 0; tries < 3 && !ok; tries++) {
		s = client(f);
		m_init(&m);
		m_hello(&m, (uint32_t)getpid());
		m_load(&m, 0x7f0000001000, 0x100, 10 * MS, "Survivor::a", 0);
		send_msg(s, &m);
		ok = pump_until(f, connected_and_loaded, 1500);
		nng_close(s);
	}
	assert_true(ok);
}

/*
 * A healthy listener passes every self-probe, and a probe costs the process next to nothing:
 * no re-listen, no spinning nng thread (nng 1.5.2 spun on a probe dialer's abandoned sockets).
 */
static void test_probes_of_a_healthy_listener_pass_cheaply(void **state)
{
	struct fx *f = *state;
	struct receive_opts ro = { .in_process = 1, .watchdog_ms = 20, .probe_timeout_ms = 500 };
	struct receive_stats rs;
	struct receive *rx;
	struct rusage r0, r1;
	char path[128];
	double cpu_ms;

	snprintf(path, sizeof(path), "%s/probe.sock", f->dir);
	ro.path = path;
	assert_int_equal(receive_open(&ro, &rx), 0);
	getrusage(RUSAGE_SELF, &r0);
	usleep(1000 * 1000);
	getrusage(RUSAGE_SELF, &r1);
	receive_stats(rx, &rs);
	receive_close(rx);
	cpu_ms = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec + r1.ru_stime.tv_sec -
			  r0.ru_stime.tv_sec) *
			 1e3 +
		 (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec + r1.ru_stime.tv_usec -
			  r0.ru_stime.tv_usec) /
			 1e3;
	print_message("%llu probes in 1 s: %.1f ms of CPU\n", (unsigned long long)rs.probes,
		      cpu_ms);
	assert_true(rs.probes >= 10);
	assert_int_equal(rs.probe_fail, 0);
	assert_int_equal(rs.relistens, 0);
	/* ~50 probes at tens of microseconds each; a spinning poll thread burns the whole second */
	assert_true(cpu_ms < 500);
}

/* A paused watchdog makes no probe; resumed, it probes again at its period. */
static void test_a_paused_watchdog_does_not_probe(void **state)
{
	struct fx *f = *state;
	struct receive_opts ro = { .in_process = 1, .watchdog_ms = 10, .probe_timeout_ms = 500 };
	struct receive_stats r0, r1, r2;
	struct receive *rx;
	char path[128];

	snprintf(path, sizeof(path), "%s/pause.sock", f->dir);
	ro.path = path;
	assert_int_equal(receive_open(&ro, &rx), 0);
	receive_watchdog_pause(rx, true);
	usleep(50 * 1000); /* a probe begun before the pause ends */
	receive_stats(rx, &r0);
	usleep(300 * 1000);
	receive_stats(rx, &r1);
	receive_watchdog_pause(rx, false);
	usleep(300 * 1000);
	receive_stats(rx, &r2);
	receive_close(rx);
	print_message("probes: %llu paused for 300 ms, %llu in the next 300 ms resumed\n",
		      (unsigned long long)(r1.probes - r0.probes),
		      (unsigned long long)(r2.probes - r1.probes));
	assert_int_equal(r1.probes, r0.probes);
	assert_true(r2.probes - r1.probes >= 5);
	assert_int_equal(r2.probe_fail, 0);
	assert_int_equal(r2.relistens, 0);
}

/*
 * A seam on nng_close (the test links with -Wl,--wrap=nng_close): while close_wedged is set, a
 * close waits, as nng 1.5.2's close does when its reaper is stuck, until it is cleared.
 */
void __real_nng_close(nng_socket s);
void __wrap_nng_close(nng_socket s);
static atomic_bool close_wedged;
static atomic_int closes_done;

void __wrap_nng_close(nng_socket s)
{
	while (atomic_load(&close_wedged))
		usleep(1000);
	__real_nng_close(s);
	atomic_fetch_add(&closes_done, 1);
}

/*
 * Closing while the watchdog probes (every millisecond, so closes land before, in and right
 * after probes at every phase) returns every time, and leaves nothing behind: the socket path
 * listens again at once.
 */
static void test_close_racing_the_watchdog_probe_returns(void **state)
{
	struct fx *f = *state;
	uint64_t probes = 0;
	unsigned abandoned = 0;
	int i;

	/* At least 300 closes, and on until 60 of them met a probe (a loaded machine runs the
	 * watchdog late): the count of closes is bounded, not the time. */
	for (i = 0; (i < 300 || probes < 60) && i < 20000 && !abandoned; i++) {
		struct receive_opts ro = { .in_process = 1, .watchdog_ms = 1 };
		struct receive_stats rs;
		struct receive *rx;
		char path[128];
		int rv;

		/* A path of its own: nng unlinks a closed listener's file when it reaps it. */
		snprintf(path, sizeof(path), "%s/race%d.sock", f->dir, i);
		ro.path = path;
		assert_int_equal(receive_open(&ro, &rx), 0);
		if (i % 3)
			usleep((unsigned)(i % 7) * 700);
		receive_stats(rx, &rs);
		probes += rs.probes;
		rv = receive_close(rx);
		assert_true(rv == 0 || rv == -ETIMEDOUT);
		abandoned += rv != 0;
		unlink(path);
	}
	print_message("%d closes racing %llu probes: %u abandoned after the close timeout\n", i,
		      (unsigned long long)probes, abandoned);
	/* The race was run: most closes met a probe in some phase. */
	assert_true(probes >= 60);
}

/* A close that nng never finishes is given up after close_timeout_ms, and said so. */
/* Open eventfds of this process (the receiver's wake-up descriptor is one). */
static int eventfds(void)
{
	char link[64], target[64];
	int n = 0;

	for (int fd = 0; fd < 1024; fd++) {
		ssize_t len;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		len = readlink(link, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		n += strcmp(target, "anon_inode:[eventfd]") == 0;
	}
	return n;
}

static void test_a_close_nng_never_finishes_is_abandoned(void **state)
{
	struct fx *f = *state;
	struct receive_opts ro = { .in_process = 1, .watchdog_ms = 1, .close_timeout_ms = 50 };
	struct receive *rx;
	char path[128], feat[160];
	int before, efds;

	snprintf(path, sizeof(path), "%s/wedge.sock", f->dir);
	snprintf(feat, sizeof(feat), "%s%s", path, FG_FEATURES_SUFFIX);
	ro.path = path;
	assert_int_equal(receive_open(&ro, &rx), 0);
	assert_int_equal(access(feat, F_OK), 0);
	usleep(5000);
	before = atomic_load(&closes_done);
	efds = eventfds();
	atomic_store(&close_wedged, true);
	assert_int_equal(receive_close(rx), -ETIMEDOUT);
	/* Agents must not be told of a reader that is leaving. */
	assert_int_equal(access(feat, F_OK), -1);
	assert_int_equal(atomic_load(&closes_done), before);
	assert_int_equal(eventfds(), efds);
	/* The close goes on in the background and finishes once nng does, then frees the rest. */
	atomic_store(&close_wedged, false);
	while (atomic_load(&closes_done) == before)
		usleep(1000);
	while (eventfds() >= efds)
		usleep(1000);
}

/*
 * An agent connects the moment the socket file appears and reads the features file then, once
 * per connection: the features file must be in place before the socket is.
 */
static void test_features_are_there_before_the_socket(void **state)
{
	struct receive_opts ro = { .allow_self_peer = 1, .in_process = 1 };
	char dir[64], sock[96], buf[4096] __attribute__((aligned(8)));
	int in, features_at = -1, sock_at = -1, k = 0;
	struct receive *rx;
	ssize_t n;

	(void)state;
	strcpy(dir, "/tmp/fgrx.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/s.sock", dir);
	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(in >= 0);
	assert_true(inotify_add_watch(in, dir, IN_CREATE | IN_MOVED_TO) >= 0);
	ro.path = sock;
	assert_int_equal(receive_open(&ro, &rx), 0);
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n; k++) {
			const struct inotify_event *e = (const struct inotify_event *)p;

			if (e->len && strcmp(e->name, "s.sock.features") == 0 && features_at < 0)
				features_at = k;
			if (e->len && strcmp(e->name, "s.sock") == 0 && sock_at < 0)
				sock_at = k;
			p += sizeof(*e) + e->len;
		}
	}
	close(in);
	receive_close(rx);
	rmdir(dir);
	assert_true(features_at >= 0);
	assert_true(sock_at >= 0);
	assert_true(features_at < sock_at);
}

static void test_socket_file_is_world_connectable(void **state)
{
	struct fx *f = *state;
	struct stat st;

	assert_int_equal(stat(f->sock, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0666);
}

/* PATH.want's text, or "-" when it cannot be read. */
static const char *want_text(struct fx *f)
{
	static char text[256];
	char path[160];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s.want", f->sock);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return "-";
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	return text;
}

static void test_want_file_lists_tokens_and_says_when_it_cannot(void **state)
{
	struct fx *f = *state;
	static const uint64_t tokens[] = { 0xabc, 0xfeedf00d12345678ull };
	char tmp[180], path[160];
	struct stat st;

	/* Empty from the start: a file a killed collector left names nobody to us. */
	assert_string_equal(want_text(f), "");
	assert_int_equal(receive_want(f->rx, tokens, 2, NULL, 0), 0);
	assert_string_equal(want_text(f), "0000000000000abc\nfeedf00d12345678\n");
	snprintf(path, sizeof(path), "%s.want", f->sock);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644); /* readable by the agents' users */
	/* Its temporary cannot be created (a directory in the way): an error, the old list kept. */
	snprintf(tmp, sizeof(tmp), "%s.want.%d", f->sock, (int)getpid());
	assert_int_equal(mkdir(tmp, 0700), 0);
	assert_true(receive_want(f->rx, tokens, 1, NULL, 0) < 0);
	assert_string_equal(want_text(f), "0000000000000abc\nfeedf00d12345678\n");
	assert_int_equal(rmdir(tmp), 0);
	assert_int_equal(receive_want(f->rx, NULL, 0, NULL, 0), 0);
	assert_string_equal(want_text(f), "");
	receive_close(f->rx); /* stopping removes it */
	f->rx = NULL;
	assert_string_equal(want_text(f), "-");
}

static void test_stale_socket_file_does_not_block_a_restart(void **state)
{
	struct fx *f = *state;
	struct receive_opts ro = { .path = f->sock, .in_process = 1 };
	struct receive *rx2;
	char stale[128];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	/* A second listener on a live socket is refused... */
	assert_int_equal(receive_open(&ro, &rx2), -EADDRINUSE);
	/* ...but a file left by a killed collector (bound, nobody listening) is replaced. */
	snprintf(stale, sizeof(stale), "%s/stale.sock", f->dir);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	strcpy(sa.sun_path, stale);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	ro.path = stale;
	assert_int_equal(receive_open(&ro, &rx2), 0);
	receive_close(rx2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hello_snapshot_and_deltas_fill_table_and_map,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_reconnect_replay_merges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interned_names_resolve_per_connection, setup,
						teardown),
		cmocka_unit_test(test_a_superseded_connection_is_ignored),
		cmocka_unit_test(test_a_superseded_connections_names_are_given_back),
		cmocka_unit_test_setup_teardown(test_hello_with_wrong_pid_is_rejected, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_malformed_input_is_counted_then_dropped, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_oversized_message_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_last_message_keeps_its_peer_after_the_hang_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_handshakes_do_not_wedge_the_listener,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_peer_hanging_up_as_it_connects_costs_one_probe, setup, teardown),
		cmocka_unit_test_setup_teardown(test_probes_of_a_healthy_listener_pass_cheaply,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_paused_watchdog_does_not_probe, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_want_file_lists_tokens_and_says_when_it_cannot,
						setup, teardown),
		cmocka_unit_test(test_features_are_there_before_the_socket),
		cmocka_unit_test_setup_teardown(test_socket_file_is_world_connectable, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stale_socket_file_does_not_block_a_restart,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_racing_the_watchdog_probe_returns, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_close_nng_never_finishes_is_abandoned, setup,
						teardown),
	};

	int rv = cmocka_run_group_tests(tests, NULL, NULL);

	nng_fini(); /* nng reaps closed listeners asynchronously: let it finish before LSan looks */
	return rv;
}
