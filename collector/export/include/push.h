/* SPDX-License-Identifier: MIT */
/*
 * push.h - send each rolling profile to a Pyroscope server (or anything that speaks its HTTP
 * ingest API, such as Grafana Alloy's pyroscope.receive_http) from a thread of its own.
 *
 * Request (Pyroscope's documented ingest API, format pprof):
 *   POST BASE/ingest?name=APP{service_name=..,container_id=..,host_pid=..,hostname=..}
 *        &from=UNIX_S&until=UNIX_S&format=pprof&sampleRate=HZ&spyName=fgcollect
 *        &units=UNITS&aggregationType=sum
 *   Content-Type: multipart/form-data, file field "profile" = the gzip'd profile.proto,
 *   file field "sample_type_config" = JSON naming the profile's sample type and its profile
 *   type (push_sample_type_config).
 * Per event (the labels' event): cpu: sample type "samples" shown as "cpu", units samples;
 * offcpu: sample type "off_cpu" shown as "off_cpu", units nanoseconds; wall: "wall", units
 * nanoseconds; the agents' events under the profile types pyroscope-java's Java profiles have:
 * alloc: "alloc_objects" (objects) shown as "alloc_in_new_tlab_objects" and "alloc_space"
 * (bytes) as "alloc_in_new_tlab_bytes"; lock: "contentions" (lock_samples) as "lock_count"
 * and "delay" (lock_nanoseconds) as "lock_duration"; live: "inuse_objects" and "inuse_space",
 * averaged (aggregationType=average: a live profile is a state, not a sum). With format=pprof the
 * server takes the profile type from the sample type (an original Pyroscope server stores APP.cpu,
 * APP.off_cpu, APP.wall; Grafana Pyroscope names the "wall" sample type its wall profile type and
 * the others by name), so APP itself carries no type suffix. APP is the service unless
 * push_opts.app says otherwise; label values keep A-Z a-z 0-9 . - _.
 *
 * Delivery: a bounded queue (count and bytes, plus the one profile being sent). A full queue
 * drops its oldest profile (counted).
 * A failed request (no connection, timeout, HTTP 429 or 5xx) is retried after a backoff that
 * doubles from backoff_min_ms to backoff_max_ms, the profile staying at the head of the queue
 * meanwhile; any other HTTP status drops the profile (counted as rejected). So a server that is
 * down loses profiles, all counted, and memory never grows past the caps.
 *
 * libcurl stays inside push.c (its error space too). push_enqueue never blocks on the network.
 */
#ifndef FG_PUSH_H
#define FG_PUSH_H

#include <stddef.h>
#include <stdint.h>

#include "labels.h"

struct push;
struct push_stats;

struct push_opts {
	const char *url;	 /* base URL, e.g. http://pyroscope:4040 (no query) */
	const char *app;	 /* application name for every profile; NULL = the service */
	size_t max_queue;	 /* profiles waiting at most; 0 = 64 */
	size_t max_bytes;	 /* bytes waiting at most; 0 = 32 MiB */
	unsigned timeout_ms;	 /* per request; 0 = 30 s */
	unsigned backoff_min_ms; /* 0 = 1 s */
	unsigned backoff_max_ms; /* 0 = 60 s */
};

/*
 * Start the sender thread. 0, -EINVAL (not an http(s) URL), -ELIBACC (libcurl could not be
 * opened: push_unavailable() says why), -ENOMEM, or -errno.
 */
int push_open(const struct push_opts *o, struct push **out);

/* Why libcurl could not be opened (the loader's words), or NULL: after a push_open. */
const char *push_unavailable(void);

/*
 * Stop: try what is queued for at most drain_ms more, then count the rest as dropped, join the
 * thread and free everything. The final counters go to *final when it is not NULL.
 */
void push_close(struct push *p, unsigned drain_ms, struct push_stats *final);

/* One profile: the gzip'd pprof body is copied. 0, or -EFBIG (alone over max_bytes: dropped). */
int push_enqueue(struct push *p, const struct prof_labels *l, int64_t from_unix, int64_t until_unix,
		 unsigned sample_hz, const void *pprof_gz, size_t len);

struct push_stats {
	uint64_t sent;		   /* accepted by the server (2xx) */
	uint64_t attempts_failed;  /* requests that failed and were retried */
	uint64_t dropped_full;	   /* evicted from a full queue, or too big */
	uint64_t dropped_rejected; /* the server said no (4xx other than 429) */
	uint64_t dropped_exit;	   /* still queued at push_close */
	size_t queued, queued_bytes;
	long last_status;     /* last HTTP status, 0 = no answer */
	char last_error[128]; /* why the last attempt failed, "" after a success */
};

/*
 * The request URL for one profile (for tests and logs): malloc'd, the caller frees it.
 * 0 or -ENOMEM.
 */
int push_ingest_url(const char *base, const char *app, const struct prof_labels *l,
		    int64_t from_unix, int64_t until_unix, unsigned sample_hz, char **out);

void push_stats(struct push *p, struct push_stats *out);

/* The sample_type_config JSON sent with a profile of event e (static). */
const char *push_sample_type_config(enum fg_event e);

#endif
