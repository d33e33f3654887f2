// SPDX-License-Identifier: MIT
/*
 * push.c - Pyroscope ingest over libcurl from a sender thread with a bounded queue (push.h).
 *
 * Invariant: the queue holds at most max_queue profiles and max_bytes bytes of bodies at any
 * time; enqueue evicts the oldest waiting profile (never the one being sent) to stay inside.
 * CURLcode and curl_* stay in this file; libcurl is opened on the first push_open (dynlib.h).
 */
#include "push.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "dynlib.h"
#include "fgclock.h"
#include "util.h"
#include "fgfree.h"

/* libcurl's soname since 7.16 (2006), as Debian's libcurl4 installs it. */
#define PUSH_LIBCURL "libcurl.so.4"
#define DEFAULT_QUEUE 64
#define DEFAULT_BYTES (32u << 20)
/* Longer than a loaded server's answer: a request given up on while the server still takes it
 * in is sent again, and reaches it twice. */
#define DEFAULT_TIMEOUT_MS 30000
#define DEFAULT_BACKOFF_MIN_MS 1000
#define DEFAULT_BACKOFF_MAX_MS 60000

/*
 * libcurl's functions this file calls, X(return type, name after "curl_", (parameters)), filled
 * by the first push_open.
 */
#define CURL_FUNCS(X)                                                                              \
	X(CURLcode, global_init, (long flags))                                                     \
	X(CURL *, easy_init, (void))                                                               \
	X(void, easy_cleanup, (CURL *))                                                            \
	X(void, easy_reset, (CURL *))                                                              \
	X(CURLcode, easy_setopt, (CURL *, CURLoption opt, ...))                                    \
	X(CURLcode, easy_perform, (CURL *))                                                        \
	X(CURLcode, easy_getinfo, (CURL *, CURLINFO info, ...))                                    \
	X(const char *, easy_strerror, (CURLcode rc))                                              \
	X(curl_mime *, mime_init, (CURL *))                                                        \
	X(void, mime_free, (curl_mime *))                                                          \
	X(curl_mimepart *, mime_addpart, (curl_mime *))                                            \
	X(CURLcode, mime_name, (curl_mimepart *, const char *name))                                \
	X(CURLcode, mime_filename, (curl_mimepart *, const char *name))                            \
	X(CURLcode, mime_type, (curl_mimepart *, const char *type))                                \
	X(CURLcode, mime_data, (curl_mimepart *, const char *data, size_t len))                    \
	X(struct curl_slist *, slist_append, (struct curl_slist *, const char *s))                 \
	X(void, slist_free_all, (struct curl_slist *))

static struct {
	CURL_FUNCS(FG_DYNSYM_FIELD)
} cu;

#define CU_SYM(ret, name, params) { "curl_" #name, (void **)&cu.name },
static const struct fg_dynsym cu_syms[] = { CURL_FUNCS(CU_SYM) };

/* Per event, the sample type of our pprof the server reads and how: evkind.h's push_config
 * and push_units. */
const char *push_sample_type_config(enum fg_event e)
{
	return evkind_of(e)->push_config;
}

struct item {
	struct item *next;
	enum fg_event event;
	char *url;
	uint8_t *body;
	size_t len;
};

struct push {
	struct push_opts o;
	char *base;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	atomic_bool stop;
	atomic_uint_fast64_t drain_deadline_ns; /* set by push_close */
	struct item *head, *tail;		/* head: next to send */
	struct item *sending;			/* taken off the queue by the thread */
	size_t n, bytes;
	struct push_stats st;
};

/* ---- the URL --------------------------------------------------------------------------- */

struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void put(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (ARRAY_GROW(b->p, b->cap, b->len + n + 1) != 0) {
		b->oom = true;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void puts_(struct sbuf *b, const char *s)
{
	put(b, s, strlen(s));
}

/* Percent-encode everything but RFC 3986's unreserved characters. */
static void put_enc(struct sbuf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~') {
			put(b, (const char *)&c, 1);
		} else {
			char e[3] = { '%', hex[c >> 4], hex[c & 15] };

			put(b, e, 3);
		}
	}
}

int push_ingest_url(const char *base, const char *app, const struct prof_labels *l,
		    int64_t from_unix, int64_t until_unix, unsigned sample_hz, char **out)
{
	char svc[LABELS_SERVICE_MAX + 1], cid[LABELS_CID_MAX + 1], host[LABELS_HOST_MAX + 1];
	char appv[LABELS_SERVICE_MAX + 1], sb[24], num[64], *name = NULL;
	struct sbuf b = { 0 }, nb = { 0 };
	size_t blen = strlen(base);

	while (blen && base[blen - 1] == '/')
		blen--;
	prof_label_value(prof_labels_service(l, sb, sizeof(sb)), svc, sizeof(svc));
	prof_label_value(l->container_id[0] ? l->container_id : "none", cid, sizeof(cid));
	prof_label_value(l->hostname, host, sizeof(host));
	prof_label_value(app ? app : svc, appv, sizeof(appv));
	/* name = APP{k=v,...}: the label syntax of the ingest API's name parameter. */
	puts_(&nb, appv);
	puts_(&nb, "{service_name=");
	puts_(&nb, svc);
	puts_(&nb, ",container_id=");
	puts_(&nb, cid);
	snprintf(num, sizeof(num), ",host_pid=%u,hostname=", l->host_pid);
	puts_(&nb, num);
	puts_(&nb, host);
	puts_(&nb, "}");
	name = nb.p;
	put(&b, base, blen);
	puts_(&b, "/ingest?name=");
	if (name)
		put_enc(&b, name);
	snprintf(num, sizeof(num), "&from=%lld&until=%lld", (long long)from_unix,
		 (long long)until_unix);
	puts_(&b, num);
	snprintf(num, sizeof(num), "&format=pprof&sampleRate=%u&spyName=fgcollect", sample_hz);
	puts_(&b, num);
	puts_(&b, "&units=");
	puts_(&b, evkind_of(l->event)->push_units);
	puts_(&b, l->event == FG_EVENT_LIVE ? "&aggregationType=average" : "&aggregationType=sum");
	free(name);
	if (b.oom || nb.oom || !b.p) {
		free(b.p);
		return -ENOMEM;
	}
	*out = b.p;
	return 0;
}

/* ---- queue ----------------------------------------------------------------------------- */

static void item_free(struct item *it)
{
	if (!it)
		return;
	FG_FREE_ALL(it->url, it->body, it);
}

/* Unlink the head (mu held). */
static struct item *pop(struct push *p)
{
	struct item *it = p->head;

	if (!it)
		return NULL;
	p->head = it->next;
	if (!p->head)
		p->tail = NULL;
	p->n--;
	p->bytes -= it->len;
	return it;
}

int push_enqueue(struct push *p, const struct prof_labels *l, int64_t from_unix, int64_t until_unix,
		 unsigned sample_hz, const void *pprof_gz, size_t len)
{
	struct item *it;

	if (len > p->o.max_bytes) {
		pthread_mutex_lock(&p->mu);
		p->st.dropped_full++;
		pthread_mutex_unlock(&p->mu);
		return -EFBIG;
	}
	it = calloc(1, sizeof(*it));
	if (!it)
		return -ENOMEM;
	it->body = malloc(len ? len : 1);
	if (!it->body || push_ingest_url(p->base, p->o.app, l, from_unix, until_unix, sample_hz,
					 &it->url) != 0) {
		item_free(it);
		return -ENOMEM;
	}
	memcpy(it->body, pprof_gz, len);
	it->len = len;
	it->event = l->event;
	pthread_mutex_lock(&p->mu);
	/* Make room: the oldest waiting profiles go first. */
	while (p->head && (p->n + 1 > p->o.max_queue || p->bytes + len > p->o.max_bytes)) {
		item_free(pop(p));
		p->st.dropped_full++;
	}
	if (p->tail)
		p->tail->next = it;
	else
		p->head = it;
	p->tail = it;
	p->n++;
	p->bytes += len;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return 0;
}

/* ---- sending --------------------------------------------------------------------------- */

static size_t discard(char *ptr, size_t size, size_t nmemb, void *arg)
{
	(void)ptr;
	(void)arg;
	return size * nmemb;
}

/* Abort a transfer in flight once push_close's drain time is over. */
static int progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		    curl_off_t ulnow)
{
	struct push *p = arg;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return atomic_load(&p->stop) && fg_now_ns() >= atomic_load(&p->drain_deadline_ns);
}

/* One POST. 1 sent, 0 retry later, -1 rejected for good; *status and err say what happened. */
static int post(struct push *p, CURL *c, const struct item *it, long *status, char *err,
		size_t errlen)
{
	char ebuf[CURL_ERROR_SIZE] = "";
	curl_mime *mime = cu.mime_init(c);
	curl_mimepart *part;
	struct curl_slist *hdrs = cu.slist_append(NULL, "Expect:"); /* no 100-continue wait */
	CURLcode rc;

	*status = 0;
	if (!mime || !hdrs) {
		cu.mime_free(mime);
		cu.slist_free_all(hdrs);
		snprintf(err, errlen, "out of memory");
		return 0;
	}
	part = cu.mime_addpart(mime);
	cu.mime_name(part, "profile");
	cu.mime_filename(part, "profile.pb.gz");
	cu.mime_type(part, "application/octet-stream");
	cu.mime_data(part, (const char *)it->body, it->len);
	part = cu.mime_addpart(mime);
	cu.mime_name(part, "sample_type_config");
	cu.mime_filename(part, "sample_type_config.json");
	cu.mime_type(part, "application/json");
	cu.mime_data(part, push_sample_type_config(it->event), CURL_ZERO_TERMINATED);

	cu.easy_reset(c);
	cu.easy_setopt(c, CURLOPT_URL, it->url);
	cu.easy_setopt(c, CURLOPT_MIMEPOST, mime);
	cu.easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	cu.easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)p->o.timeout_ms);
	cu.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)p->o.timeout_ms);
	cu.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	cu.easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf);
	cu.easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	cu.easy_setopt(c, CURLOPT_USERAGENT, "fgcollect/" FG_VERSION);
	cu.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	cu.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	cu.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, progress);
	cu.easy_setopt(c, CURLOPT_XFERINFODATA, p);
	rc = cu.easy_perform(c);
	if (rc == CURLE_OK)
		cu.easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	cu.mime_free(mime);
	cu.slist_free_all(hdrs);
	if (rc != CURLE_OK) {
		snprintf(err, errlen, "%s", ebuf[0] ? ebuf : cu.easy_strerror(rc));
		return 0;
	}
	if (*status >= 200 && *status < 300) {
		err[0] = '\0';
		return 1;
	}
	snprintf(err, errlen, "HTTP status %ld", *status);
	if (*status == 429 || *status >= 500)
		return 0;
	return -1;
}

/* Wait on cv until deadline (CLOCK_MONOTONIC ns) or a signal; mu held. */
static void wait_until(struct push *p, uint64_t deadline)
{
	struct timespec ts = { .tv_sec = (time_t)(deadline / 1000000000ull),
			       .tv_nsec = (long)(deadline % 1000000000ull) };

	pthread_cond_timedwait(&p->cv, &p->mu, &ts);
}

static void *run(void *arg)
{
	struct push *p = arg;
	CURL *c = cu.easy_init();
	unsigned backoff = 0;

	pthread_setname_np(pthread_self(), "fg-push"); /* for top -H and /proc/PID/task */

	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct item *it;
		char err[sizeof(p->st.last_error)];
		long status;
		int r;

		while (!p->head && !p->stop)
			pthread_cond_wait(&p->cv, &p->mu);
		if (!p->head || (p->stop && fg_now_ns() >= p->drain_deadline_ns))
			break;
		it = pop(p);
		p->sending = it;
		pthread_mutex_unlock(&p->mu);
		if (c) {
			r = post(p, c, it, &status, err, sizeof(err));
		} else {
			r = 0;
			status = 0;
			snprintf(err, sizeof(err), "curl_easy_init failed");
		}
		pthread_mutex_lock(&p->mu);
		p->sending = NULL;
		p->st.last_status = status;
		snprintf(p->st.last_error, sizeof(p->st.last_error), "%s", err);
		if (r != 0) {
			if (r > 0)
				p->st.sent++;
			else
				p->st.dropped_rejected++;
			item_free(it);
			backoff = 0;
			continue;
		}
		/* Down or overloaded: back to the head, and wait before trying again. */
		p->st.attempts_failed++;
		it->next = p->head;
		p->head = it;
		if (!p->tail)
			p->tail = it;
		p->n++;
		p->bytes += it->len;
		backoff = backoff ? backoff * 2 : p->o.backoff_min_ms;
		if (backoff > p->o.backoff_max_ms)
			backoff = p->o.backoff_max_ms;
		{
			uint64_t until = fg_now_ns() + (uint64_t)backoff * 1000000ull;

			/* push_close may come during the wait: its drain deadline then ends it. */
			for (;;) {
				uint64_t d = until;

				if (p->stop && p->drain_deadline_ns < d)
					d = p->drain_deadline_ns;
				if (fg_now_ns() >= d)
					break;
				wait_until(p, d);
			}
		}
	}
	/* What is left was never delivered. */
	while (p->head) {
		item_free(pop(p));
		p->st.dropped_exit++;
	}
	pthread_mutex_unlock(&p->mu);
	if (c)
		cu.easy_cleanup(c);
	return NULL;
}

/* ---- lifecycle ------------------------------------------------------------------------- */

static int curl_init(char *why, size_t len)
{
	if (cu.global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK)
		return 0;
	snprintf(why, len, "curl_global_init failed");
	return -ENOMEM;
}

static struct fg_dynlib curl_lib = FG_DYNLIB(PUSH_LIBCURL, cu_syms, curl_init);

const char *push_unavailable(void)
{
	return fg_dynlib_why(&curl_lib);
}

int push_open(const struct push_opts *o, struct push **out)
{
	struct push *p;
	pthread_condattr_t ca;
	int rv;

	if (!o->url ||
	    (strncmp(o->url, "http://", 7) != 0 && strncmp(o->url, "https://", 8) != 0) ||
	    strchr(o->url, '?') || strchr(o->url, '#'))
		return -EINVAL;
	rv = fg_dynlib_use(&curl_lib);
	if (rv)
		return rv;
	p = FG_NEW_CONF(struct push, o, o);
	if (!p)
		return -ENOMEM;
	p->o.max_queue = o->max_queue ? o->max_queue : DEFAULT_QUEUE;
	p->o.max_bytes = o->max_bytes ? o->max_bytes : DEFAULT_BYTES;
	p->o.timeout_ms = o->timeout_ms ? o->timeout_ms : DEFAULT_TIMEOUT_MS;
	p->o.backoff_min_ms = o->backoff_min_ms ? o->backoff_min_ms : DEFAULT_BACKOFF_MIN_MS;
	p->o.backoff_max_ms = o->backoff_max_ms ? o->backoff_max_ms : DEFAULT_BACKOFF_MAX_MS;
	if (p->o.backoff_max_ms < p->o.backoff_min_ms)
		p->o.backoff_max_ms = p->o.backoff_min_ms;
	p->base = strdup(o->url);
	p->o.app = o->app ? strdup(o->app) : NULL;
	if (!p->base || (o->app && !p->o.app)) {
		FG_FREE_ALL(p->base, (char *)p->o.app);
		free(p);
		return -ENOMEM;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cv, &ca);
	pthread_condattr_destroy(&ca);
	if ((rv = pthread_create(&p->thread, NULL, run, p)) != 0) {
		pthread_cond_destroy(&p->cv);
		pthread_mutex_destroy(&p->mu);
		FG_FREE_ALL(p->base, (char *)p->o.app);
		free(p);
		return -rv;
	}
	*out = p;
	return 0;
}

void push_close(struct push *p, unsigned drain_ms, struct push_stats *final)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	atomic_store(&p->drain_deadline_ns, fg_now_ns() + (uint64_t)drain_ms * 1000000ull);
	atomic_store(&p->stop, true);
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	if (final)
		push_stats(p, final);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	FG_FREE_ALL(p->base, (char *)p->o.app, p);
}

void push_stats(struct push *p, struct push_stats *out)
{
	pthread_mutex_lock(&p->mu);
	*out = p->st;
	out->queued = p->n + (p->sending ? 1 : 0);
	out->queued_bytes = p->bytes + (p->sending ? p->sending->len : 0);
	pthread_mutex_unlock(&p->mu);
}
