// SPDX-License-Identifier: MIT
/*
 * test_push.c - the Pyroscope pusher: the ingest URL carries the documented parameters and
 * label syntax; requests are multipart with the profile and the sample type config; a server
 * answering 5xx is retried until it accepts, a 4xx drops the profile; with the server down the
 * queue stays within its cap and every profile is accounted for (sent, dropped, unsent).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "push.h"

static void test_ingest_url_has_the_documented_parameters(void **state)
{
	struct prof_labels l;
	char *url;

	(void)state;
	prof_labels_set(&l, "shop:web", "3f2a1b4c5d6e", 4242, "node-1");
	assert_int_equal(push_ingest_url("http://py:4040/", NULL, &l, 100, 110, 99, &url), 0);
	/* name = shop_web{service_name=shop_web,container_id=3f2a1b4c5d6e,host_pid=4242,
	 * hostname=node-1}, percent-encoded */
	assert_string_equal(url, "http://py:4040/ingest?name=shop_web%7Bservice_name%3Dshop_web%2C"
				 "container_id%3D3f2a1b4c5d6e%2Chost_pid%3D4242%2Chostname%3D"
				 "node-1%7D&from=100&until=110&format=pprof&sampleRate=99"
				 "&spyName=fgcollect&units=samples&aggregationType=sum");
	free(url);
	prof_labels_set(&l, "", "", 7, "");
	assert_int_equal(push_ingest_url("https://x/prefix", "fleet", &l, 1, 2, 49, &url), 0);
	assert_string_equal(url, "https://x/prefix/ingest?name=fleet%7Bservice_name%3Dpid-7%2C"
				 "container_id%3Dnone%2Chost_pid%3D7%2Chostname%3Dunknown%7D"
				 "&from=1&until=2&format=pprof&sampleRate=49&spyName=fgcollect"
				 "&units=samples&aggregationType=sum");
	free(url);
}

/* Per event: the same name (the service), the units of its counts, and a sample type
 * configuration naming the pprof's sample type and the profile type. */
static void test_each_event_has_its_units_and_profile_type(void **state)
{
	struct prof_labels l;
	char *url;

	(void)state;
	prof_labels_set(&l, "shop", "", 42, "n");
	l.event = FG_EVENT_OFFCPU;
	assert_int_equal(push_ingest_url("http://py", NULL, &l, 1, 2, 99, &url), 0);
	assert_string_equal(url, "http://py/ingest?name=shop%7Bservice_name%3Dshop%2C"
				 "container_id%3Dnone%2Chost_pid%3D42%2Chostname%3Dn%7D"
				 "&from=1&until=2&format=pprof&sampleRate=99&spyName=fgcollect"
				 "&units=nanoseconds&aggregationType=sum");
	free(url);
	l.event = FG_EVENT_WALL;
	assert_int_equal(push_ingest_url("http://py", NULL, &l, 1, 2, 99, &url), 0);
	assert_non_null(strstr(url, "&units=nanoseconds&aggregationType=sum"));
	free(url);
	assert_string_equal(push_sample_type_config(FG_EVENT_CPU),
			    "{\"samples\":{\"units\":\"samples\",\"aggregation\":\"sum\","
			    "\"display-name\":\"cpu\",\"sampled\":true}}");
	assert_string_equal(push_sample_type_config(FG_EVENT_OFFCPU),
			    "{\"off_cpu\":{\"units\":\"nanoseconds\",\"aggregation\":\"sum\","
			    "\"display-name\":\"off_cpu\",\"sampled\":false}}");
	assert_string_equal(push_sample_type_config(FG_EVENT_WALL),
			    "{\"wall\":{\"units\":\"nanoseconds\",\"aggregation\":\"sum\","
			    "\"display-name\":\"wall\",\"sampled\":false}}");
	/* The agents' events as pyroscope-java's memory and mutex profiles. */
	l.event = FG_EVENT_ALLOC;
	assert_int_equal(push_ingest_url("http://py", NULL, &l, 1, 2, 99, &url), 0);
	assert_non_null(strstr(url, "&units=bytes&aggregationType=sum"));
	free(url);
	l.event = FG_EVENT_LIVE;
	assert_int_equal(push_ingest_url("http://py", NULL, &l, 1, 2, 99, &url), 0);
	assert_non_null(strstr(url, "&units=bytes&aggregationType=average"));
	free(url);
	l.event = FG_EVENT_LOCK;
	assert_int_equal(push_ingest_url("http://py", NULL, &l, 1, 2, 99, &url), 0);
	assert_non_null(strstr(url, "&units=lock_nanoseconds&aggregationType=sum"));
	free(url);
	assert_non_null(strstr(push_sample_type_config(FG_EVENT_ALLOC),
			       "\"alloc_space\":{\"units\":\"bytes\",\"aggregation\":\"sum\","
			       "\"display-name\":\"alloc_in_new_tlab_bytes\""));
	assert_non_null(strstr(push_sample_type_config(FG_EVENT_ALLOC),
			       "\"alloc_objects\":{\"units\":\"objects\",\"aggregation\":"
			       "\"sum\",\"display-name\":\"alloc_in_new_tlab_objects\""));
	assert_non_null(strstr(push_sample_type_config(FG_EVENT_LOCK),
			       "\"delay\":{\"units\":\"lock_nanoseconds\",\"aggregation\":"
			       "\"sum\",\"display-name\":\"lock_duration\""));
	assert_non_null(strstr(push_sample_type_config(FG_EVENT_LOCK),
			       "\"contentions\":{\"units\":\"lock_samples\",\"aggregation\":"
			       "\"sum\",\"display-name\":\"lock_count\""));
	assert_non_null(strstr(push_sample_type_config(FG_EVENT_LIVE),
			       "\"inuse_space\":{\"units\":\"bytes\",\"aggregation\":"
			       "\"average\",\"display-name\":\"inuse_space\""));
}

/* ---- a scripted HTTP server on 127.0.0.1 ---------------------------------------------- */

struct server {
	int fd, port;
	const int *statuses; /* one per request; the last repeats */
	int nstatuses;
	int requests;
	char first_line[512];
	char body[4096]; /* start of the last body */
	char ctype[256];
	pthread_t t;
};

static void *serve(void *arg)
{
	struct server *sv = arg;

	for (;;) {
		int c = accept(sv->fd, NULL, NULL);
		char buf[65536];
		size_t n = 0;
		long clen = -1;
		char *hdr_end = NULL;
		int st;

		if (c < 0)
			return NULL;
		for (;;) {
			ssize_t k = read(c, buf + n, sizeof(buf) - 1 - n);

			if (k <= 0)
				break;
			n += (size_t)k;
			buf[n] = '\0';
			if (!hdr_end && (hdr_end = strstr(buf, "\r\n\r\n"))) {
				char *cl = strcasestr(buf, "\r\nContent-Length:");

				clen = cl ? strtol(cl + 17, NULL, 10) : 0;
			}
			if (hdr_end && (long)(n - (size_t)(hdr_end + 4 - buf)) >= clen)
				break;
		}
		if (hdr_end) {
			char *ct = strcasestr(buf, "\r\nContent-Type:");

			snprintf(sv->first_line, sizeof(sv->first_line), "%.*s",
				 (int)strcspn(buf, "\r"), buf);
			if (ct)
				snprintf(sv->ctype, sizeof(sv->ctype), "%.*s",
					 (int)strcspn(ct + 2, "\r"), ct + 2);
			memcpy(sv->body, hdr_end + 4, sizeof(sv->body) - 1);
		}
		st = sv->statuses[sv->requests < sv->nstatuses ? sv->requests : sv->nstatuses - 1];
		sv->requests++;
		n = (size_t)snprintf(
			buf, sizeof(buf),
			"HTTP/1.1 %d X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", st);
		if (write(c, buf, n) < 0)
			break;
		close(c);
	}
	return NULL;
}

static void server_start(struct server *sv, const int *statuses, int n)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);

	memset(sv, 0, sizeof(*sv));
	sv->statuses = statuses;
	sv->nstatuses = n;
	sv->fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(sv->fd >= 0);
	assert_int_equal(bind(sv->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(sv->fd, 8), 0);
	assert_int_equal(getsockname(sv->fd, (struct sockaddr *)&a, &len), 0);
	sv->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&sv->t, NULL, serve, sv), 0);
}

static void server_stop(struct server *sv)
{
	shutdown(sv->fd, SHUT_RDWR);
	close(sv->fd);
	pthread_join(sv->t, NULL);
}

static void wait_for(struct push *p, uint64_t sent, uint64_t rejected)
{
	struct push_stats st;

	for (int i = 0; i < 500; i++) {
		push_stats(p, &st);
		if (st.sent >= sent && st.dropped_rejected >= rejected)
			return;
		usleep(10000);
	}
	fail_msg("sent %llu (want %llu), rejected %llu (want %llu)", (unsigned long long)st.sent,
		 (unsigned long long)sent, (unsigned long long)st.dropped_rejected,
		 (unsigned long long)rejected);
}

static const uint8_t gz[] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0 };

static void test_requests_are_multipart_and_5xx_is_retried(void **state)
{
	static const int statuses[] = { 503, 500, 200 };
	struct server sv;
	struct push_opts o = { .backoff_min_ms = 10, .backoff_max_ms = 20 };
	struct push_stats st;
	struct prof_labels l;
	struct push *p;
	char url[64];

	(void)state;
	server_start(&sv, statuses, 3);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", sv.port);
	o.url = url;
	assert_int_equal(push_open(&o, &p), 0);
	prof_labels_set(&l, "web", "", 9, "h");
	assert_int_equal(push_enqueue(p, &l, 10, 20, 99, gz, sizeof(gz)), 0);
	wait_for(p, 1, 0);
	push_close(p, 0, &st);
	assert_int_equal(st.sent, 1);
	assert_int_equal(st.attempts_failed, 2);
	assert_int_equal(sv.requests, 3);
	assert_non_null(strstr(sv.first_line, "POST /ingest?name=web%7Bservice_name%3Dweb"));
	assert_non_null(strstr(sv.first_line, "&from=10&until=20&format=pprof&sampleRate=99"));
	assert_non_null(strstr(sv.ctype, "multipart/form-data; boundary="));
	assert_non_null(strstr(sv.body, "name=\"profile\""));
	server_stop(&sv);
}

static void test_4xx_drops_the_profile(void **state)
{
	static const int statuses[] = { 400, 200 };
	struct server sv;
	struct push_opts o = { .backoff_min_ms = 10 };
	struct push_stats st;
	struct prof_labels l;
	struct push *p;
	char url[64];

	(void)state;
	server_start(&sv, statuses, 2);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", sv.port);
	o.url = url;
	assert_int_equal(push_open(&o, &p), 0);
	prof_labels_set(&l, "web", "", 9, "h");
	assert_int_equal(push_enqueue(p, &l, 10, 20, 99, gz, sizeof(gz)), 0);
	wait_for(p, 0, 1);
	assert_int_equal(push_enqueue(p, &l, 20, 30, 99, gz, sizeof(gz)), 0);
	wait_for(p, 1, 1);
	push_close(p, 0, &st);
	assert_int_equal(st.dropped_rejected, 1);
	assert_int_equal(st.sent, 1);
	assert_int_equal(sv.requests, 2);
	server_stop(&sv);
}

static void test_server_down_keeps_the_queue_bounded_and_counts_everything(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	struct push_opts o = { .max_queue = 3, .backoff_min_ms = 60000 };
	struct push_stats st;
	struct prof_labels l;
	struct push *p;
	char url[64];
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	(void)state;
	/* A port nobody listens on: connections are refused at once. */
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(a.sin_port));
	o.url = url;
	assert_int_equal(push_open(&o, &p), 0);
	prof_labels_set(&l, "web", "", 9, "h");
	for (int i = 0; i < 50; i++) {
		assert_int_equal(push_enqueue(p, &l, i, i + 1, 99, gz, sizeof(gz)), 0);
		push_stats(p, &st);
		assert_true(st.queued <= 4); /* the cap, plus the one being sent */
		assert_true(st.queued_bytes <= 4 * sizeof(gz));
	}
	for (int i = 0; i < 500 && !st.attempts_failed; i++) {
		usleep(10000);
		push_stats(p, &st);
	}
	assert_int_equal(st.attempts_failed, 1); /* then it waits out the backoff (60 s)... */
	{
		struct timespec t0, t1;

		/* ... which push_close's drain time (300 ms) cuts short */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		push_close(p, 300, &st);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		assert_true(t1.tv_sec - t0.tv_sec < 3);
	}
	assert_int_equal(st.sent, 0);
	assert_true(st.dropped_full >= 46);
	assert_int_equal(st.dropped_full + st.dropped_exit, 50);
	assert_true(st.last_error[0] != '\0');
	/* a body alone over the byte cap is refused and counted */
	o.max_bytes = 8;
	assert_int_equal(push_open(&o, &p), 0);
	assert_int_equal(push_enqueue(p, &l, 1, 2, 99, gz, sizeof(gz)), -EFBIG);
	push_close(p, 0, &st);
	assert_int_equal(st.dropped_full, 1);
}

static void test_bad_urls_are_refused(void **state)
{
	static const char *bad[] = { "pyroscope:4040", "ftp://x", "http://x/?a=b", "http://x#f",
				     NULL };
	struct push *p;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct push_opts o = { .url = bad[i] };

		assert_int_equal(push_open(&o, &p), -EINVAL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ingest_url_has_the_documented_parameters),
		cmocka_unit_test(test_each_event_has_its_units_and_profile_type),
		cmocka_unit_test(test_requests_are_multipart_and_5xx_is_retried),
		cmocka_unit_test(test_4xx_drops_the_profile),
		cmocka_unit_test(test_server_down_keeps_the_queue_bounded_and_counts_everything),
		cmocka_unit_test(test_bad_urls_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
