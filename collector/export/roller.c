// SPDX-License-Identifier: MIT
/*
 * roller.c - the rolling-profile thread: session -> per-JVM split -> folded, SVG, pprof ->
 * profile directory and pusher (see roller.h).
 *
 * A multi-target session puts each process's root frame ("comm-pid") above its threads; a cut
 * maps every distinct root frame to its target once, and gives each JVM its stacks without that
 * root (the shape of a `record --pid` profile).
 */
#include "roller.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flame_fold.h"
#include "flame_svg.h"
#include "labels.h"
#include "pprof.h"
#include "profdir.h"
#include "push.h"
#include "session.h"
#include "stackagg.h"
#include "util.h"

#define NSEC 1000000000ull
#define RETRY_NS (10 * NSEC)
#define RETRY_MAX_NS (300 * NSEC)
#define QUICK_LOSS_NS (60 * NSEC) /* a session lost sooner than this: back off before the next */
#define MIN_LAST_NS NSEC	  /* a last, partial interval shorter than this is not written */

struct roller {
	struct roller_opts o;
	char *ctl_path, *hostname;
	pthread_t thread;
	atomic_bool stop;
	pthread_mutex_t mu;
	struct roller_stats st;
};

static void say(struct roller *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct roller *r, const char *fmt, ...)
{
	char line[768];
	va_list ap;

	if (!r->o.log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	r->o.log(r->o.log_arg, line);
}

#define STAT_ADD(r, field, v)                                                                      \
	do {                                                                                       \
		pthread_mutex_lock(&(r)->mu);                                                      \
		(r)->st.field += (v);                                                              \
		pthread_mutex_unlock(&(r)->mu);                                                    \
	} while (0)

static int64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * (int64_t)NSEC + ts.tv_nsec;
}

/* ---- one cut: stacks -> per-JVM profiles ----------------------------------------------- */

struct jprof {
	struct flame *flame;
	struct pprof *pprof;
	FILE *folded;
	char *folded_buf;
	size_t folded_len;
	uint64_t samples;
	bool failed;
};

struct cut {
	struct roller *r;
	struct session *s;
	const struct stackagg *agg;
	size_t nt;
	struct jprof *jp;
	uint32_t *rootmap; /* frame id -> target + 1; UINT32_MAX: not a target; 0: not looked up */
	char **labels;	   /* frame id -> name with suffix, computed once */
	size_t nframes;
	const char *buf[STACKAGG_MAX_FRAMES];
	uint64_t other;
};

static const char *label(struct cut *c, uint32_t id)
{
	if (!c->labels[id]) {
		const char *name = stackagg_frame_name(c->agg, id);
		const char *suf = stackagg_suffix(stackagg_frame_kind(c->agg, id));

		if (asprintf(&c->labels[id], "%s%s", name, suf) < 0) {
			c->labels[id] = NULL;
			return NULL;
		}
		/* Keep folded lines parseable (as stackagg_write_folded does). */
		for (char *p = c->labels[id]; *p; p++)
			if (*p == ';')
				*p = ':';
			else if (*p == '\n')
				*p = ' ';
	}
	return c->labels[id];
}

static uint32_t target_of(struct cut *c, uint32_t root)
{
	const char *name;

	if (c->rootmap[root])
		return c->rootmap[root];
	c->rootmap[root] = UINT32_MAX;
	name = stackagg_frame_name(c->agg, root);
	for (size_t i = 0; i < c->nt; i++) {
		struct session_target_info ti;

		session_target_at(c->s, i, &ti);
		if (!strcmp(ti.root, name)) {
			c->rootmap[root] = (uint32_t)i + 1;
			break;
		}
	}
	return c->rootmap[root];
}

static int on_stack(void *arg, const uint32_t *ids, size_t n, uint64_t count)
{
	struct cut *c = arg;
	struct jprof *j;
	uint32_t t;

	if (n < 2 || (t = target_of(c, ids[0])) == UINT32_MAX) {
		c->other += count;
		return 0;
	}
	j = &c->jp[t - 1];
	if (j->failed)
		return 0;
	if (!j->flame) {
		j->flame = flame_new();
		j->pprof = pprof_new(NSEC / (c->r->o.freq_hz ? c->r->o.freq_hz : 99));
		j->folded = open_memstream(&j->folded_buf, &j->folded_len);
		if (!j->flame || !j->pprof || !j->folded) {
			j->failed = true;
			return 0;
		}
	}
	for (size_t i = 1; i < n; i++) {
		c->buf[i - 1] = label(c, ids[i]);
		if (!c->buf[i - 1]) {
			j->failed = true;
			return 0;
		}
		fprintf(j->folded, "%s%s", i > 1 ? ";" : "", c->buf[i - 1]);
	}
	fprintf(j->folded, " %llu\n", (unsigned long long)count);
	if (flame_add(j->flame, c->buf, n - 1, count) != 0 ||
	    pprof_add(j->pprof, c->buf, n - 1, (int64_t)count, c->buf[0]) != 0)
		j->failed = true;
	j->samples += count;
	return 0;
}

static int render_svg(struct jprof *j, const char *title, const char *subtitle, char **svg,
		      size_t *len)
{
	struct flame_opts fo;
	FILE *f = open_memstream(svg, len);
	int rv;

	if (!f)
		return -ENOMEM;
	flame_opts_init(&fo);
	fo.title = title;
	fo.subtitle = subtitle;
	fo.palette = FLAME_PALETTE_JAVA;
	rv = flame_render_svg(j->flame, &fo, f);
	if (fclose(f) != 0 && rv == 0)
		rv = -ENOMEM;
	return rv;
}

/* Write and push one JVM's profile of [start, end) (Unix ns). */
static void emit_one(struct cut *c, const struct session_target_info *ti, struct jprof *j,
		     int64_t start, int64_t end)
{
	struct roller *r = c->r;
	unsigned hz = r->o.freq_hz ? r->o.freq_hz : 99;
	char title[512], subtitle[160], t0[32], t1[32], sb[24];
	struct prof_labels pl;
	char *svg = NULL;
	uint8_t *gz = NULL;
	size_t svg_len = 0, gz_len = 0;
	time_t ts;
	struct tm tm;
	int rv;

	if (fclose(j->folded) != 0)
		j->failed = true;
	j->folded = NULL;
	if (j->failed) {
		say(r, "profiles: PID %u: out of memory building its profile; skipped", ti->pid);
		STAT_ADD(r, write_errors, 1);
		return;
	}
	prof_labels_set(&pl, ti->service, ti->container_id, ti->pid, r->hostname);
	ts = (time_t)(start / (int64_t)NSEC);
	gmtime_r(&ts, &tm);
	strftime(t0, sizeof(t0), "%Y-%m-%d %H:%M:%S", &tm);
	ts = (time_t)(end / (int64_t)NSEC);
	gmtime_r(&ts, &tm);
	strftime(t1, sizeof(t1), "%H:%M:%S", &tm);
	snprintf(title, sizeof(title), "CPU: %s | container %.12s | PID %u | host %s",
		 prof_labels_service(&pl, sb, sizeof(sb)),
		 pl.container_id[0] ? pl.container_id : "none", ti->pid, r->hostname);
	snprintf(subtitle, sizeof(subtitle), "%s - %s UTC, %llu samples at %u Hz", t0, t1,
		 (unsigned long long)j->samples, hz);
	pprof_set_time(j->pprof, start, end - start);
	{
		char cm[LABELS_SERVICE_MAX + 32];

		/* The labels in the profile itself (`go tool pprof -comments`). */
		snprintf(cm, sizeof(cm), "service=%s", prof_labels_service(&pl, sb, sizeof(sb)));
		(void)pprof_add_comment(j->pprof, cm);
		snprintf(cm, sizeof(cm), "container_id=%s",
			 pl.container_id[0] ? pl.container_id : "none");
		(void)pprof_add_comment(j->pprof, cm);
		snprintf(cm, sizeof(cm), "host_pid=%u", ti->pid);
		(void)pprof_add_comment(j->pprof, cm);
		snprintf(cm, sizeof(cm), "hostname=%s", r->hostname);
		(void)pprof_add_comment(j->pprof, cm);
	}
	if ((r->o.push || r->o.pprof_files) && (rv = pprof_encode_gz(j->pprof, &gz, &gz_len))) {
		say(r, "profiles: PID %u: cannot encode pprof: %s", ti->pid, strerror(-rv));
		gz = NULL;
	}
	if (r->o.dir) {
		struct profdir_prof pp = {
			.labels = pl,
			.start_unix = start / (int64_t)NSEC,
			.end_unix = end / (int64_t)NSEC,
			.samples = j->samples,
			.freq_hz = hz,
			.folded = j->folded_buf,
			.folded_len = j->folded_len,
		};

		rv = render_svg(j, title, subtitle, &svg, &svg_len);
		if (rv == 0) {
			pp.svg = svg;
			pp.svg_len = svg_len;
			if (r->o.pprof_files && gz) {
				pp.pb = gz;
				pp.pb_len = gz_len;
			}
			rv = profdir_add(r->o.dir, &pp);
		}
		if (rv != 0) {
			say(r, "profiles: cannot write the profile of PID %u (%s): %s", ti->pid,
			    pl.service[0] ? pl.service : "no service", strerror(-rv));
			STAT_ADD(r, write_errors, 1);
		}
	}
	if (r->o.push && gz &&
	    push_enqueue(r->o.push, &pl, start / (int64_t)NSEC,
			 (end + (int64_t)NSEC - 1) / (int64_t)NSEC, hz, gz, gz_len) != 0)
		STAT_ADD(r, push_refused, 1);
	pthread_mutex_lock(&r->mu);
	r->st.profiles++;
	r->st.samples += j->samples;
	pthread_mutex_unlock(&r->mu);
	free(svg);
	free(gz);
}

/* Cut the interval [start, end) (Unix ns): rotate the session and emit every JVM's profile. */
static void cut(struct roller *r, struct session *s, int64_t start, int64_t end)
{
	struct stackagg *agg = session_rotate(s);
	struct cut c = { .r = r, .s = s };

	STAT_ADD(r, intervals, 1);
	if (!agg) {
		say(r, "profiles: out of memory at the end of an interval; its samples carry over");
		return;
	}
	c.agg = agg;
	c.nt = session_target_count(s);
	c.nframes = stackagg_frame_count(agg);
	c.jp = calloc(c.nt ? c.nt : 1, sizeof(*c.jp));
	c.rootmap = calloc(c.nframes ? c.nframes : 1, sizeof(*c.rootmap));
	c.labels = calloc(c.nframes ? c.nframes : 1, sizeof(*c.labels));
	if (c.jp && c.rootmap && c.labels) {
		(void)stackagg_foreach(agg, on_stack, &c);
		for (size_t i = 0; i < c.nt; i++) {
			struct session_target_info ti;

			if (!c.jp[i].samples)
				continue;
			session_target_at(s, i, &ti);
			emit_one(&c, &ti, &c.jp[i], start, end);
		}
		STAT_ADD(r, other_samples, c.other);
	} else {
		say(r, "profiles: out of memory at the end of an interval; profiles lost");
	}
	for (size_t i = 0; c.jp && i < c.nt; i++) {
		if (c.jp[i].folded)
			fclose(c.jp[i].folded);
		free(c.jp[i].folded_buf);
		flame_free(c.jp[i].flame);
		pprof_free(c.jp[i].pprof);
	}
	for (size_t i = 0; c.labels && i < c.nframes; i++)
		free(c.labels[i]);
	free(c.labels);
	free(c.rootmap);
	free(c.jp);
	stackagg_free(agg);
}

/* ---- the thread ------------------------------------------------------------------------ */

static struct session *open_session(struct roller *r)
{
	struct session_opts so = {
		.target = SESSION_TARGET_ALL,
		.freq_hz = r->o.freq_hz,
		.live_view =
			true, /* JIT misses are counted at once: nothing waits for a final retry */
		.src = SESSION_SRC_CTL,
		.ctl_path = r->ctl_path,
	};
	struct session *s;
	char why[512];
	int rv = session_open(&so, &s, why, sizeof(why));

	if (rv != 0) {
		say(r, "profiles: cannot start sampling: %s; retrying in %llu s", why,
		    RETRY_NS / NSEC);
		STAT_ADD(r, session_errors, 1);
		return NULL;
	}
	STAT_ADD(r, sessions, 1);
	return s;
}

static void notes(struct roller *r, struct session *s)
{
	char buf[SESSION_NOTE_MAX];

	while (session_next_note(s, buf, sizeof(buf)))
		if (r->o.verbose)
			say(r, "profiles: %s", buf);
}

static size_t exited_targets(const struct session *s)
{
	size_t n = 0;

	for (size_t i = 0; i < session_target_count(s); i++) {
		struct session_target_info ti;

		session_target_at(s, i, &ti);
		n += ti.exited;
	}
	return n;
}

static void *run(void *arg)
{
	struct roller *r = arg;
	struct session *s = NULL;
	uint64_t next_cut = 0, born = 0, retry_at = 0, backoff = 0;
	int64_t start = 0;

	pthread_setname_np(pthread_self(), "fg-roller"); /* for top -H and /proc/PID/task */

	while (!atomic_load(&r->stop)) {
		uint64_t now = fg_now_ns();
		int rv;

		if (!s) {
			if (now < retry_at) {
				struct timespec ts = { 0, 100000000 };

				nanosleep(&ts, NULL);
				continue;
			}
			s = open_session(r);
			if (!s) {
				retry_at = fg_now_ns() + RETRY_NS;
				continue;
			}
			born = fg_now_ns();
			next_cut = born + r->o.interval_ns;
			start = wall_ns();
		}
		rv = session_step(s, 100);
		notes(r, s);
		now = fg_now_ns();
		if ((rv != 0 && rv != -EINTR) || session_source_lost(s)) {
			/*
			 * Each new session makes the daemon send every JVM's code history: a
			 * session that keeps failing soon (a history over the control channel's
			 * cap, say) must not make the daemon do that in a loop.
			 */
			if (now - born < QUICK_LOSS_NS)
				backoff = backoff ? backoff * 2 : RETRY_NS;
			else
				backoff = 0;
			if (backoff > RETRY_MAX_NS)
				backoff = RETRY_MAX_NS;
			retry_at = now + backoff;
			say(r, "profiles: %s%s; starting over in %llu s",
			    rv != 0 && rv != -EINTR ? "sampling failed: "
						    : "the control channel closed",
			    rv != 0 && rv != -EINTR ? strerror(-rv) : "",
			    (unsigned long long)(backoff / NSEC));
			cut(r, s, start, wall_ns());
			session_close(s);
			s = NULL;
			continue;
		}
		if (now < next_cut)
			continue;
		{
			int64_t end = wall_ns();

			cut(r, s, start, end);
			start = end;
		}
		next_cut += r->o.interval_ns;
		/*
		 * Behind schedule (a stalled machine): no burst of short profiles. Each profile
		 * lasts over 1 s, so their start seconds, part of the file names, differ.
		 */
		if (next_cut <= now)
			next_cut = now + r->o.interval_ns;
		if (next_cut < now + NSEC + NSEC / 100)
			next_cut = now + NSEC + NSEC / 100;
		if (now - born >= r->o.recycle_ns && exited_targets(s) > 0) {
			/* Let go of exited JVMs: a fresh session, opened before the old one closes.
			 */
			struct session *fresh = open_session(r);

			if (fresh) {
				session_close(s);
				s = fresh;
				born = fg_now_ns();
				start = wall_ns();
			}
		}
	}
	if (s) {
		int64_t end = wall_ns();

		if ((uint64_t)(end - start) >= MIN_LAST_NS)
			cut(r, s, start, end);
		session_close(s);
	}
	return NULL;
}

int roller_start(const struct roller_opts *o, struct roller **out)
{
	struct roller *r = calloc(1, sizeof(*r));
	int rv;

	if (!r)
		return -ENOMEM;
	if (!o->interval_ns || !o->ctl_path) {
		free(r);
		return -EINVAL;
	}
	r->o = *o;
	if (!r->o.recycle_ns)
		r->o.recycle_ns = 3600 * NSEC;
	r->ctl_path = strdup(o->ctl_path);
	r->hostname = strdup(o->hostname ? o->hostname : "");
	if (!r->ctl_path || !r->hostname) {
		free(r->ctl_path);
		free(r->hostname);
		free(r);
		return -ENOMEM;
	}
	pthread_mutex_init(&r->mu, NULL);
	if ((rv = pthread_create(&r->thread, NULL, run, r)) != 0) {
		pthread_mutex_destroy(&r->mu);
		free(r->ctl_path);
		free(r->hostname);
		free(r);
		return -rv;
	}
	*out = r;
	return 0;
}

void roller_stop(struct roller *r, struct roller_stats *final)
{
	if (!r)
		return;
	atomic_store(&r->stop, true);
	pthread_join(r->thread, NULL);
	if (final)
		roller_stats(r, final);
	pthread_mutex_destroy(&r->mu);
	free(r->ctl_path);
	free(r->hostname);
	free(r);
}

void roller_stats(struct roller *r, struct roller_stats *out)
{
	pthread_mutex_lock(&r->mu);
	*out = r->st;
	pthread_mutex_unlock(&r->mu);
}
