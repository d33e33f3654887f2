// SPDX-License-Identifier: MIT
/* test_ctl.c - control channel: list, subscribe (history then live) into a client codetab. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "codetab.h"
#include "ctl_client.h"
#include "ctl_frame.h"
#include "ctl_server.h"
#include "fgproto.h"
#include "jvmset.h"

#define MS 1000000ull

static uint8_t buf[1 << 16];
static size_t blen;

static void m_init(void)
{
	blen = (size_t)fgp_encode_msg_header(buf, sizeof(buf));
}

static void m_hello(void)
{
	struct fgp_hello h = { .proto_version = FGP_VERSION,
			       .pid = (uint32_t)getpid(),
			       .jvm_version = { "17", 2 },
			       .agent_version = { "t", 1 },
			       .service = { "shop-web", 8 } };

	blen += (size_t)fgp_encode_hello(buf + blen, sizeof(buf) - blen, &h);
}

static void m_load(uint64_t addr, uint64_t ts, const char *name)
{
	static const struct fgp_str methods[] = { { "Outer::o", 8 }, { "Inner::i", 8 } };
	static const uint16_t c0[] = { 1, 0 };
	static const struct fgp_pc_in pcs[] = { { 0x20, 2, c0 } };
	struct fgp_code_load_in in = { .addr = addr,
				       .size = 0x40,
				       .ts = ts,
				       .name = { name, (uint16_t)strlen(name) },
				       .n_methods = 2,
				       .methods = methods,
				       .n_pcs = 1,
				       .pcs = pcs };

	blen += (size_t)fgp_encode_code_load(buf + blen, sizeof(buf) - blen, &in);
}

static struct codetab *client_tab;

/* The CODE_LINES of m_load's code at (addr, ts): Inner::i at line, Outer::o at line + 1. */
static void m_lines(uint64_t addr, uint64_t ts, uint16_t line)
{
	uint16_t l[2] = { line, (uint16_t)(line + 1) };
	struct fgp_pc_in pcs[] = { { 0x20, 2, l } };
	struct fgp_code_lines_in in = {
		.addr = addr, .size = 0x40, .ts = ts, .n_pcs = 1, .pcs = pcs
	};

	blen += (size_t)fgp_encode_code_lines(buf + blen, sizeof(buf) - blen, &in);
}

/* The inner frame's line at addr in the client's blob live at ts, or 0. */
static uint16_t client_line(uint64_t addr, uint64_t ts)
{
	const struct codeblob *b = codetab_lookup(client_tab, addr, ts);
	uint16_t l[4] = { 0 };

	return b && codetab_lines_at(b, addr, l, 4) == 2 ? l[0] : 0;
}

static void m_unload(uint64_t addr, uint64_t ts)
{
	struct fgp_code_unload u = { .addr = addr, .ts = ts };

	blen += (size_t)fgp_encode_code_unload(buf + blen, sizeof(buf) - blen, &u);
}

static struct jvm_info seen;
static struct fgp_dropped seen_dropped;
static int dropped_calls;

static void on_dropped(void *arg, uint32_t host_pid, const struct fgp_dropped *d)
{
	(void)arg;
	assert_int_equal(host_pid, (uint32_t)getpid());
	seen_dropped = *d;
	dropped_calls++;
}

static void m_dropped(uint64_t queue_full, uint64_t table_full)
{
	struct fgp_dropped d = { .ts = 1, .queue_full = queue_full, .table_full = table_full };

	blen += (size_t)fgp_encode_dropped(buf + blen, sizeof(buf) - blen, &d);
}

static struct codetab *on_jvm(void *arg, const struct jvm_info *ji)
{
	(void)arg;
	seen = *ji;
	return client_tab;
}

/* Serve the control socket for ms while the client reads. */
static void serve(struct ctl_server *srv, int ms)
{
	struct pollfd fds[CTL_MAX_CLIENTS + 1];
	size_t n = ctl_server_pollfds(srv, fds, CTL_MAX_CLIENTS + 1);

	poll(fds, n, ms);
	ctl_server_handle(srv, fds, n);
}

static void test_list_and_subscribe_replay_history_then_stream(void **state)
{
	char dir[] = "/tmp/fgctl.XXXXXX", path[64], cmd[64];
	struct jvmset_opts jo = { 0 };
	struct ctl_handler h = { .jvm = on_jvm, .dropped = on_dropped };
	struct ctl_server *srv;
	struct ctl_client *c;
	struct jvmset *set;
	struct jvm_info list[4];
	size_t n = 0;
	struct stat st;
	uint32_t me = (uint32_t)getpid();
	const char *names[4];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ctl/ctl.sock", dir);
	assert_int_equal(jvmset_new(&jo, &set), 0);
	assert_int_equal(ctl_server_open(path, set, &srv), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* A JVM (this process) with history: A loaded then unloaded, B live. */
	m_init();
	m_hello();
	m_load(0x5000, 10 * MS, "A::a");
	m_lines(0x5000, 10 * MS, 100);
	m_unload(0x5000, 20 * MS);
	m_load(0x5000, 30 * MS, "B::b");
	m_lines(0x5000, 30 * MS, 300);
	m_dropped(3, 0);
	assert_int_equal(jvmset_msg(set, 1, me, buf, blen, 1), 0);

	assert_int_equal(ctl_connect(path, &c), 0);
	serve(srv, 50);
	/* ctl_list sends then waits; serve in between by using a short timeout and retrying. */
	int rv = -ETIMEDOUT;

	for (int i = 0; i < 20 && rv == -ETIMEDOUT; i++) {
		if (i == 0) {
			rv = ctl_list(c, list, 4, &n, 10);
		} else {
			serve(srv, 10);
			rv = ctl_list(c, list, 4, &n, 10);
		}
	}
	assert_int_equal(rv, 0);
	assert_true(n >= 1);
	assert_int_equal(list[0].host_pid, me);
	assert_string_equal(list[0].jvm_version, "17");
	assert_string_equal(list[0].service, "shop-web");

	client_tab = codetab_new(NULL);
	assert_int_equal(ctl_subscribe(c, me), 0);
	for (int i = 0; i < 20; i++) {
		serve(srv, 10);
		ctl_pump(c, 10, &h, NULL);
	}
	assert_int_equal(seen.host_pid, me);
	/* The agent's drop counters came with the history. */
	assert_int_equal(dropped_calls, 1);
	assert_int_equal(seen_dropped.queue_full, 3);
	assert_int_equal(seen_dropped.table_full, 0);
	/* History arrived with its times: A at 15 ms, B at 35 ms, nothing at 25 ms. */
	assert_string_equal(codetab_lookup(client_tab, 0x5010, 15 * MS)->name, "A::a");
	assert_string_equal(codetab_lookup(client_tab, 0x5010, 35 * MS)->name, "B::b");
	assert_int_equal(
		codetab_inline_chain(codetab_lookup(client_tab, 0x5010, 35 * MS), 0x5010, names, 4),
		2);
	assert_string_equal(names[0], "Inner::i");
	/* Each load's lines came with it, at the same reused address. */
	assert_int_equal(client_line(0x5010, 15 * MS), 100);
	assert_int_equal(client_line(0x5010, 35 * MS), 300);
	/* Live: a new load streams through, its lines too. */
	m_init();
	m_load(0x6000, 40 * MS, "C::c");
	m_lines(0x6000, 40 * MS, 600);
	m_dropped(5, 1);
	assert_int_equal(jvmset_msg(set, 1, me, buf, blen, 2), 0);
	ctl_server_flush(srv);
	for (int i = 0; i < 10 && !codetab_lookup_live(client_tab, 0x6010); i++) {
		serve(srv, 10);
		ctl_pump(c, 10, &h, NULL);
	}
	assert_non_null(codetab_lookup_live(client_tab, 0x6010));
	assert_int_equal(client_line(0x6010, 45 * MS), 600);
	/* ... and live drop reports stream through too. */
	for (int i = 0; i < 10 && seen_dropped.queue_full != 5; i++) {
		serve(srv, 10);
		ctl_pump(c, 10, &h, NULL);
	}
	assert_int_equal(seen_dropped.queue_full, 5);
	assert_int_equal(seen_dropped.table_full, 1);

	ctl_close(c);
	codetab_free(client_tab);
	ctl_server_close(srv);
	jvmset_free(set);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

#define BIG_JVMS 3
#define BIG_LOADS 5600 /* x ~4 KB names: ~22.6 MB per JVM, ~68 MB together > the 64 MiB cap */

static struct codetab *big_tabs[BIG_JVMS];
static pid_t big_pids[BIG_JVMS];

static struct codetab *on_big_jvm(void *arg, const struct jvm_info *ji)
{
	(void)arg;
	for (int k = 0; k < BIG_JVMS; k++)
		if (ji->host_pid == (uint32_t)big_pids[k])
			return big_tabs[k];
	return NULL;
}

/* Feed jvmset one JVM (process pid) with BIG_LOADS loads of long names. */
static void feed_big(struct jvmset *set, uint32_t pipe, pid_t pid)
{
	static uint8_t msg[FGP_MAX_MSG];
	static char name[4000];
	struct fgp_hello h = { .proto_version = FGP_VERSION,
			       .pid = (uint32_t)pid,
			       .jvm_version = { "17", 2 },
			       .agent_version = { "t", 1 } };
	size_t len = (size_t)fgp_encode_msg_header(msg, sizeof(msg));

	len += (size_t)fgp_encode_hello(msg + len, sizeof(msg) - len, &h);
	memset(name, 'x', sizeof(name));
	for (int i = 0; i < BIG_LOADS; i++) {
		struct fgp_code_load_in in = { .addr = 0x10000000ull + (uint64_t)i * 0x100,
					       .size = 0x100,
					       .ts = (uint64_t)i + 1,
					       .name = { name, sizeof(name) } };
		int n;

		snprintf(name, 16, "K%d::m%05d", (int)pipe, i);
		name[strlen(name)] = 'x';
		n = fgp_encode_code_load(msg + len, sizeof(msg) - len, &in);
		if (n == -ENOSPC) {
			assert_int_equal(jvmset_msg(set, pipe, (uint32_t)pid, msg, len, 1), 0);
			len = (size_t)fgp_encode_msg_header(msg, sizeof(msg));
			n = fgp_encode_code_load(msg + len, sizeof(msg) - len, &in);
		}
		assert_true(n > 0);
		len += (size_t)n;
	}
	assert_int_equal(jvmset_msg(set, pipe, (uint32_t)pid, msg, len, 1), 0);
}

/*
 * Histories that add up to more than a client's output cap (64 MiB) are sent one JVM at a time
 * as the client reads, instead of overflowing the queue and costing the client its connection.
 */
static void test_histories_over_the_output_cap_are_sent_one_jvm_at_a_time(void **state)
{
	char dir[] = "/tmp/fgctl.XXXXXX", path[64], cmd[64];
	struct jvmset_opts jo = { 0 };
	struct ctl_handler h = { .jvm = on_big_jvm };
	struct ctl_server_stats st;
	struct ctl_server *srv;
	struct ctl_client *c;
	struct jvmset *set;
	int done = 0, rv = 0;

	(void)state;
	for (int k = 0; k < BIG_JVMS; k++) {
		big_pids[k] = fork();
		assert_true(big_pids[k] >= 0);
		if (big_pids[k] == 0) {
			/* gone with the test even when an assertion ends it early */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			pause();
			_exit(0);
		}
		big_tabs[k] = codetab_new(NULL);
	}
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ctl/ctl.sock", dir);
	assert_int_equal(jvmset_new(&jo, &set), 0);
	assert_int_equal(ctl_server_open(path, set, &srv), 0);
	for (int k = 0; k < BIG_JVMS; k++)
		feed_big(set, (uint32_t)k + 1, big_pids[k]);
	assert_int_equal(ctl_connect(path, &c), 0);
	assert_int_equal(ctl_subscribe(c, 0), 0);
	for (int i = 0; i < 6000 && done < BIG_JVMS && rv >= 0; i++) {
		serve(srv, 5);
		rv = ctl_pump(c, 5, &h, NULL);
		done = 0;
		for (int k = 0; k < BIG_JVMS; k++) {
			struct codetab_stats cs;

			codetab_stats(big_tabs[k], &cs);
			done += cs.loads == BIG_LOADS;
		}
	}
	ctl_server_stats(srv, &st);
	assert_int_equal(st.overflowed, 0);
	assert_true(rv >= 0); /* never disconnected */
	assert_int_equal(done, BIG_JVMS);
	ctl_close(c);
	ctl_server_close(srv);
	jvmset_free(set);
	for (int k = 0; k < BIG_JVMS; k++) {
		kill(big_pids[k], SIGKILL);
		waitpid(big_pids[k], NULL, 0);
		codetab_free(big_tabs[k]);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* JVM payloads of an older daemon (no service) and a newer one (a field after it) decode. */
static void test_jvm_frame_service_is_optional_and_later_fields_ignored(void **state)
{
	struct jvm_info in = { .host_pid = 7, .ns_pid = 1, .connected = true };
	struct jvm_info out;
	uint8_t p[CTL_JVM_MAX + 8];
	size_t n;

	(void)state;
	strcpy(in.container_id, "abc");
	strcpy(in.jvm_version, "17");
	strcpy(in.agent_version, "a");
	strcpy(in.service, "web");
	n = ctl_jvm_encode(p, &in);
	assert_int_equal(ctl_jvm_decode(p, n, 7, &out), 0);
	assert_string_equal(out.service, "web");
	/* older: everything up to agent_version only */
	assert_int_equal(ctl_jvm_decode(p, n - 5, 7, &out), 0);
	assert_string_equal(out.service, "");
	assert_string_equal(out.agent_version, "a");
	/* newer: 3 more bytes after the service */
	memcpy(p + n, "xyz", 3);
	assert_int_equal(ctl_jvm_decode(p, n + 3, 7, &out), 0);
	assert_string_equal(out.service, "web");
	/* a service cut short is refused */
	assert_int_equal(ctl_jvm_decode(p, n - 1, 7, &out), -EPROTO);
}

static void test_unsafe_ctl_directory_is_refused(void **state)
{
	char dir[] = "/tmp/fgctl.XXXXXX", path[64], cmd[64];
	struct jvmset_opts jo = { 0 };
	struct ctl_server *srv;
	struct jvmset *set;

	(void)state;
	assert_non_null(mkdtemp(dir));
	chmod(dir, 0755); /* others can look in: not a place for the control socket */
	snprintf(path, sizeof(path), "%s/ctl.sock", dir);
	assert_int_equal(jvmset_new(&jo, &set), 0);
	assert_int_equal(ctl_server_open(path, set, &srv), -EPERM);
	jvmset_free(set);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_and_subscribe_replay_history_then_stream),
		cmocka_unit_test(test_unsafe_ctl_directory_is_refused),
		cmocka_unit_test(test_jvm_frame_service_is_optional_and_later_fields_ignored),
		cmocka_unit_test(test_histories_over_the_output_cap_are_sent_one_jvm_at_a_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
