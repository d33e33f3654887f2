// SPDX-License-Identifier: MIT
/*
 * test_dbgfetch.c - debug files by build id from a debuginfod server, within time and count
 * limits. The server is a thread of this test speaking just enough HTTP/1.1 for libdebuginfod
 * (GET /buildid/<hex>/debuginfo): it serves FX_DEBUG for the stripped fixture's build id, 404
 * for any other, or holds the connection without answering.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "dbgfetch.h"
#include "elfsym.h"
#include "fgclock.h"
#include "symtest.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <time.h>

enum mode { SERVE, SILENT };

struct server {
	int lfd;
	int port;
	enum mode mode;
	char want[200]; /* the path that gets FX_DEBUG */
	atomic_int requests;
	atomic_bool stop;
	pthread_t thr;
};

static void send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = send(fd, p, len, MSG_NOSIGNAL);

		if (w <= 0)
			return;
		p += w;
		len -= (size_t)w;
	}
}

static void serve_one(struct server *sv, int fd)
{
	char req[4096] = "", path[300] = "", head[200];
	size_t got = 0;

	while (got < sizeof(req) - 1 && !strstr(req, "\r\n\r\n")) {
		ssize_t r = recv(fd, req + got, sizeof(req) - 1 - got, 0);

		if (r <= 0)
			return;
		got += (size_t)r;
		req[got] = '\0';
	}
	atomic_fetch_add(&sv->requests, 1);
	if (sv->mode == SILENT) {
		while (!atomic_load(&sv->stop))
			poll(NULL, 0, 20);
		return;
	}
	sscanf(req, "GET %299s", path);
	if (strcmp(path, sv->want) == 0) {
		char buf[65536];
		struct stat st;
		int in = open(FX_DEBUG, O_RDONLY);
		ssize_t r;

		assert_true(in >= 0 && fstat(in, &st) == 0);
		snprintf(head, sizeof(head),
			 "HTTP/1.1 200 OK\r\nContent-Length: %lld\r\nConnection: close\r\n\r\n",
			 (long long)st.st_size);
		send_all(fd, head, strlen(head));
		while ((r = read(in, buf, sizeof(buf))) > 0)
			send_all(fd, buf, (size_t)r);
		close(in);
	} else {
		snprintf(
			head, sizeof(head),
			"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
		send_all(fd, head, strlen(head));
	}
}

static void *server_main(void *arg)
{
	struct server *sv = arg;

	while (!atomic_load(&sv->stop)) {
		struct pollfd p = { .fd = sv->lfd, .events = POLLIN };
		int fd;

		if (poll(&p, 1, 20) <= 0)
			continue;
		fd = accept(sv->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		serve_one(sv, fd);
		close(fd);
	}
	return NULL;
}

static void hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static size_t stripped_build_id(uint8_t *bid)
{
	size_t len;
	int fd = open(FX_STRIPPED, O_RDONLY);

	assert_int_equal(elfsym_read_build_id(fd, 0, bid, 64, &len), 0);
	close(fd);
	assert_true(len > 0);
	return len;
}

/* Start the server, point DEBUGINFOD_URLS at it, give libdebuginfod a fresh cache. */
static void server_start(struct server *sv, enum mode mode, char *cache, size_t cachelen)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	uint8_t bid[64];
	char h[130], url[64];
	size_t len = stripped_build_id(bid);

	memset(sv, 0, sizeof(*sv));
	sv->mode = mode;
	hex(bid, len, h);
	snprintf(sv->want, sizeof(sv->want), "/buildid/%s/debuginfo", h);
	sv->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(sv->lfd >= 0);
	assert_int_equal(bind(sv->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(sv->lfd, 8), 0);
	assert_int_equal(getsockname(sv->lfd, (struct sockaddr *)&a, &alen), 0);
	sv->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&sv->thr, NULL, server_main, sv), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", sv->port);
	setenv("DEBUGINFOD_URLS", url, 1);
	assert_int_equal(fx_tmpdir(cache, cachelen, "difcache"), 0);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
}

static void server_stop(struct server *sv, const char *cache)
{
	atomic_store(&sv->stop, true);
	pthread_join(sv->thr, NULL);
	close(sv->lfd);
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("DEBUGINFOD_CACHE_PATH");
	fx_rm_rf(cache);
}

static void test_no_urls_means_no_fetcher(void **state)
{
	struct dbgfetch *df = NULL;

	(void)state;
	unsetenv("DEBUGINFOD_URLS");
	assert_int_equal(dbgfetch_new(NULL, &df), -ENOENT);
	setenv("DEBUGINFOD_URLS", "  ", 1);
	assert_int_equal(dbgfetch_new(NULL, &df), -ENOENT);
	assert_null(df);
	unsetenv("DEBUGINFOD_URLS");
	dbgfetch_free(NULL);
}

/* The served file comes back as an fd whose build id is the one asked for. */
static void test_debug_file_is_fetched_by_build_id(void **state)
{
	struct server sv;
	struct dbgfetch *df;
	struct dbgfetch_stats st;
	struct elfsym *es;
	uint8_t bid[64];
	char cache[128];
	size_t len = stripped_build_id(bid);
	int fd, sfd;

	(void)state;
	server_start(&sv, SERVE, cache, sizeof(cache));
	assert_int_equal(dbgfetch_new(NULL, &df), 0);
	fd = dbgfetch_find(df, bid, len);
	assert_true(fd >= 0);
	sfd = open(FX_STRIPPED, O_RDONLY);
	assert_int_equal(elfsym_load_fd(sfd, NULL, &es), 0);
	assert_int_equal(elfsym_use_debug_file(es, fd, NULL), 0);
	assert_true(elfsym_has_symtab(es));
	elfsym_free(es);
	close(sfd);
	close(fd);
	dbgfetch_stats(df, &st);
	assert_int_equal(st.lookups, 1);
	assert_int_equal(st.found, 1);
	assert_int_equal(atomic_load(&sv.requests), 1);
	dbgfetch_free(df);
	server_stop(&sv, cache);
}

static void test_unknown_build_id_is_not_found(void **state)
{
	static const uint8_t other[20] = { 0xde, 0xad, 0xbe, 0xef };
	struct server sv;
	struct dbgfetch *df;
	struct dbgfetch_stats st;
	char cache[128];

	(void)state;
	server_start(&sv, SERVE, cache, sizeof(cache));
	assert_int_equal(dbgfetch_new(NULL, &df), 0);
	assert_int_equal(dbgfetch_find(df, other, sizeof(other)), -ENOENT);
	assert_int_equal(dbgfetch_find(df, other, 0), -EINVAL);
	dbgfetch_stats(df, &st);
	assert_int_equal(st.not_found, 1);
	assert_int_equal(st.found, 0);
	dbgfetch_free(df);
	server_stop(&sv, cache);
}

/* A server that never answers costs timeout_ms, then the budget refuses further lookups. */
static void test_silent_server_times_out_and_budget_is_kept(void **state)
{
	struct dbgfetch_opts o = { .timeout_ms = 1200, .budget_ms = 1000 };
	struct server sv;
	struct dbgfetch *df;
	struct dbgfetch_stats st;
	uint8_t bid[64];
	char cache[128];
	size_t len = stripped_build_id(bid);
	uint64_t t0, took;

	(void)state;
	server_start(&sv, SILENT, cache, sizeof(cache));
	assert_int_equal(dbgfetch_new(&o, &df), 0);
	t0 = fg_now_ns() / 1000000;
	assert_int_equal(dbgfetch_find(df, bid, len), -ETIMEDOUT);
	took = (fg_now_ns() / 1000000) - t0;
	/* The budget (1 s) is below the timeout; libdebuginfod checks about once a second. */
	assert_true(took >= 1000 && took < 3500);
	t0 = fg_now_ns() / 1000000;
	assert_int_equal(dbgfetch_find(df, bid, len), -EDQUOT);
	assert_true((fg_now_ns() / 1000000) - t0 < 100);
	dbgfetch_stats(df, &st);
	assert_int_equal(st.timeouts, 1);
	assert_int_equal(st.refused, 1);
	assert_int_equal(atomic_load(&sv.requests), 1);
	dbgfetch_free(df);
	server_stop(&sv, cache);
}

/* A server that never answered anything is not asked again after its first timeout. */
static void test_hanging_server_is_asked_once(void **state)
{
	struct dbgfetch_opts o = { .timeout_ms = 1000 };
	static const uint8_t other[20] = { 0x01, 0x02 };
	struct server sv;
	struct dbgfetch *df;
	struct dbgfetch_stats st;
	uint8_t bid[64];
	char cache[128];
	size_t len = stripped_build_id(bid);
	uint64_t t0;

	(void)state;
	server_start(&sv, SILENT, cache, sizeof(cache));
	assert_int_equal(dbgfetch_new(&o, &df), 0);
	assert_int_equal(dbgfetch_find(df, bid, len), -ETIMEDOUT);
	t0 = fg_now_ns() / 1000000;
	assert_int_equal(dbgfetch_find(df, other, sizeof(other)), -EDQUOT);
	assert_true((fg_now_ns() / 1000000) - t0 < 100);
	dbgfetch_stats(df, &st);
	assert_int_equal(st.lookups, 1);
	assert_int_equal(st.timeouts, 1);
	assert_int_equal(st.refused, 1);
	assert_int_equal(atomic_load(&sv.requests), 1);
	dbgfetch_free(df);
	server_stop(&sv, cache);
}

static void test_lookup_count_is_capped(void **state)
{
	struct dbgfetch_opts o = { .max_lookups = 1 };
	static const uint8_t other[20] = { 0x01, 0x02 };
	struct server sv;
	struct dbgfetch *df;
	struct dbgfetch_stats st;
	char cache[128];

	(void)state;
	server_start(&sv, SERVE, cache, sizeof(cache));
	assert_int_equal(dbgfetch_new(&o, &df), 0);
	assert_int_equal(dbgfetch_find(df, other, sizeof(other)), -ENOENT);
	assert_int_equal(dbgfetch_find(df, other, sizeof(other)), -EDQUOT);
	dbgfetch_stats(df, &st);
	assert_int_equal(st.lookups, 1);
	assert_int_equal(st.refused, 1);
	assert_int_equal(atomic_load(&sv.requests), 1);
	dbgfetch_free(df);
	server_stop(&sv, cache);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_urls_means_no_fetcher),
		cmocka_unit_test(test_debug_file_is_fetched_by_build_id),
		cmocka_unit_test(test_unknown_build_id_is_not_found),
		cmocka_unit_test(test_silent_server_times_out_and_budget_is_kept),
		cmocka_unit_test(test_hanging_server_is_asked_once),
		cmocka_unit_test(test_lookup_count_is_capped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
