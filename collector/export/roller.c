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
#include "profout.h"
#include "push.h"
#include "session.h"
#include "session_seam.h"
#include "stackagg.h"
#include "util.h"
#include "fgfree.h"

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
	uint64_t (*now)(void); /* the monotonic clock (o.seams) */
	/* Told once per episode (the roller's thread only): profiles not written since the last
	 * one that was and the error of the first; the pusher's state at the last cut. */
	uint64_t dir_failed;
	int dir_err;
	bool push_failing, push_dropping;
	uint64_t push_failed_seen, push_sent_seen, push_dropped_seen, push_failed_told;
};

/* One line to the caller's log, if any (util.h's fg_say). */
#define say(r, ...) fg_say((r)->o.log, (r)->o.log_arg, __VA_ARGS__)

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
	uint64_t samples; /* counts: samples, microseconds or bytes */
	uint64_t aux;	  /* agent events: objects or contentions */
	bool failed;
};

struct cut {
	struct roller *r;
	struct session *s;
	const struct stackagg *agg;
	size_t nt;
	struct jprof *jp;
	uint32_t *rootmap; /* frame id -> target + 1; UINT32_MAX: not a target; 0: not looked up */
	struct stackagg_labels *labels; /* frame id -> label (stackagg.h), built once */
	size_t nframes;
	const char *buf[STACKAGG_MAX_FRAMES];
	uint64_t other;
};

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

/* A JVM's profile builders, made at its first stack. 0 or -ENOMEM. */
static int jprof_open(const struct roller *r, struct jprof *j)
{
	const struct evkind *k = evkind_of(r->o.event);
	const struct evkind_types *t = k->types;
	bool time = k->time;

	j->flame = flame_new();
	/* Time profiles count microseconds: 1000 ns each. */
	j->pprof = pprof_new(t	    ? t->period
			     : time ? 1000
				    : NSEC / (r->o.freq_hz ? r->o.freq_hz : 99));
	j->folded = open_memstream(&j->folded_buf, &j->folded_len);
	if (!j->flame || !j->pprof || !j->folded)
		return -ENOMEM;
	if (t &&
	    pprof_set_event_types(j->pprof, t->t1, t->u1, t->t2, t->u2, t->ptype, t->punit) != 0)
		return -ENOMEM;
	if (time && pprof_set_time_type(j->pprof, k->time_type) != 0)
		return -ENOMEM;
	return 0;
}

static int on_stack(void *arg, const uint32_t *ids, size_t n, uint64_t count, uint64_t aux)
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
	if (!j->flame && jprof_open(c->r, j) != 0) {
		j->failed = true;
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		c->buf[i - 1] = stackagg_labels_get(c->labels, ids[i]);
		if (!c->buf[i - 1]) {
			j->failed = true;
			return 0;
		}
		if (count)
			fprintf(j->folded, "%s%s", i > 1 ? ";" : "", c->buf[i - 1]);
	}
	/* An event stack whose weight rounded to nothing keeps only its second value. */
	if (count)
		fprintf(j->folded, " %llu\n", (unsigned long long)count);
	if ((count && flame_add(j->flame, c->buf, n - 1, count) != 0) ||
	    pprof_add2(j->pprof, c->buf, n - 1, (int64_t)count, (int64_t)aux,
		       c->r->o.merge_threads ? NULL : c->buf[0]) != 0)
		j->failed = true;
	j->samples += count;
	j->aux += aux;
	return 0;
}

static int render_svg(struct jprof *j, const char *countname, const char *title,
		      const char *subtitle, char **svg, size_t *len)
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
	if (countname)
		fo.countname = countname;
	rv = flame_render_svg(j->flame, &fo, f);
	if (fclose(f) != 0 && rv == 0)
		rv = -ENOMEM;
	return rv;
}

/* The SVG's title and subtitle: the labels, then the interval in UTC and the samples. */
static void titles(const struct prof_labels *pl, const struct jprof *j, int64_t start, int64_t end,
		   unsigned hz, char *title, size_t tlen, char *subtitle, size_t slen)
{
	char t0[32], t1[32];
	time_t ts;
	struct tm tm;

	ts = (time_t)(start / (int64_t)NSEC);
	gmtime_r(&ts, &tm);
	strftime(t0, sizeof(t0), "%Y-%m-%d %H:%M:%S", &tm);
	ts = (time_t)(end / (int64_t)NSEC);
	gmtime_r(&ts, &tm);
	strftime(t1, sizeof(t1), "%H:%M:%S", &tm);
	prof_labels_title(pl, title, tlen);
	if (pl->event == FG_EVENT_CPU)
		snprintf(subtitle, slen, "%s - %s UTC, %llu samples at %u Hz", t0, t1,
			 (unsigned long long)j->samples, hz);
	else if (pl->event == FG_EVENT_LOCK)
		snprintf(subtitle, slen, "%s - %s UTC, %llu contended entries, %.1f ms waited", t0,
			 t1, (unsigned long long)j->aux, (double)j->samples / 1000.0);
	else if (evkind_of(pl->event)->from_agent)
		snprintf(subtitle, slen, "%s - %s UTC, %.1f MiB in %llu objects%s", t0, t1,
			 (double)j->samples / 1048576.0, (unsigned long long)j->aux,
			 pl->event == FG_EVENT_LIVE ? " not freed" : " allocated");
	else
		snprintf(subtitle, slen, "%s - %s UTC, %.1f ms %s", t0, t1,
			 (double)j->samples / 1000.0, evkind_of(pl->event)->what);
}

/* The labels in the profile itself (`go tool pprof -comments`). */
static void label_pprof(struct pprof *p, const struct prof_labels *pl, uint32_t pid,
			const char *hostname)
{
	char cm[LABELS_SERVICE_MAX + 32], sb[24];

	snprintf(cm, sizeof(cm), "service=%s", prof_labels_service(pl, sb, sizeof(sb)));
	(void)pprof_add_comment(p, cm);
	snprintf(cm, sizeof(cm), "container_id=%s",
		 pl->container_id[0] ? pl->container_id : "none");
	(void)pprof_add_comment(p, cm);
	snprintf(cm, sizeof(cm), "host_pid=%u", pid);
	(void)pprof_add_comment(p, cm);
	snprintf(cm, sizeof(cm), "hostname=%s", hostname);
	(void)pprof_add_comment(p, cm);
}

/* Write the profile set (folded, SVG, and the .pb.gz if asked) into the profile directory. */
static void write_dir(struct roller *r, const struct prof_labels *pl, uint32_t pid, struct jprof *j,
		      int64_t start, int64_t end, unsigned hz, const char *title,
		      const char *subtitle, const uint8_t *gz, size_t gz_len)
{
	struct profdir_prof pp = {
		.labels = *pl,
		.start_unix = start / (int64_t)NSEC,
		.end_unix = end / (int64_t)NSEC,
		.samples = j->samples,
		.freq_hz = hz,
		.folded = j->folded_buf,
		.folded_len = j->folded_len,
	};
	char *svg = NULL;
	size_t svg_len = 0;
	const struct evkind_types *t = evkind_of(pl->event)->types;
	int rv = render_svg(j,
			    t				? t->countname
			    : pl->event != FG_EVENT_CPU ? "us"
							: NULL,
			    title, subtitle, &svg, &svg_len);

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
		/* Once per episode and kind of error: a full disk would say it every interval. */
		if (!r->dir_failed || rv != r->dir_err)
			say(r,
			    "profiles: cannot write the profile of PID %u (%s) to %s: %s; profiles "
			    "are not written until it works again (said once)",
			    pid, pl->service[0] ? pl->service : "no service",
			    r->o.dir_name ? r->o.dir_name : "the profile directory", strerror(-rv));
		r->dir_failed++;
		r->dir_err = rv;
		STAT_ADD(r, write_errors, 1);
	} else if (r->dir_failed) {
		say(r, "profiles: writing again to %s after %llu profiles could not be written",
		    r->o.dir_name ? r->o.dir_name : "the profile directory",
		    (unsigned long long)r->dir_failed);
		r->dir_failed = 0;
		r->dir_err = 0;
	}
	free(svg);
}

/* Write and push one JVM's profile of [start, end) (Unix ns). */
static void emit_one(struct cut *c, const struct session_target_info *ti, struct jprof *j,
		     int64_t start, int64_t end)
{
	struct roller *r = c->r;
	unsigned hz = r->o.freq_hz ? r->o.freq_hz : 99;
	char title[512], subtitle[160];
	struct prof_labels pl;
	uint8_t *gz = NULL;
	size_t gz_len = 0;
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
	pl.event = r->o.event;
	titles(&pl, j, start, end, hz, title, sizeof(title), subtitle, sizeof(subtitle));
	pprof_set_time(j->pprof, start, end - start);
	label_pprof(j->pprof, &pl, ti->pid, r->hostname);
	if ((r->o.push || r->o.pprof_files) && (rv = pprof_encode_gz(j->pprof, &gz, &gz_len))) {
		say(r, "profiles: PID %u: cannot encode pprof: %s", ti->pid, strerror(-rv));
		gz = NULL;
	}
	if (r->o.dir)
		write_dir(r, &pl, ti->pid, j, start, end, hz, title, subtitle, gz, gz_len);
	if (r->o.push && gz &&
	    push_enqueue(r->o.push, &pl, start / (int64_t)NSEC,
			 (end + (int64_t)NSEC - 1) / (int64_t)NSEC, hz, gz, gz_len) != 0)
		STAT_ADD(r, push_refused, 1);
	pthread_mutex_lock(&r->mu);
	r->st.profiles++;
	r->st.samples += j->samples;
	pthread_mutex_unlock(&r->mu);
	free(gz);
}

/*
 * What the pusher went through since the last cut, told when it changes: the server failing
 * (once, until a profile is delivered again), delivering again, the queue dropping profiles
 * (once per episode: until the queue is empty again) and when it is.
 */
static void check_push(struct roller *r)
{
	const char *url = r->o.push_url ? r->o.push_url : "the server";
	struct push_stats ps;

	if (!r->o.push)
		return;
	push_stats(r->o.push, &ps);
	if (ps.attempts_failed > r->push_failed_seen && !r->push_failing) {
		r->push_failing = true;
		say(r,
		    "push: %s fails (%s); %llu profiles wait and are retried with a backoff "
		    "(said once, until it delivers again)",
		    url, ps.last_error[0] ? ps.last_error : "?", (unsigned long long)ps.queued);
	} else if (r->push_failing && ps.sent > r->push_sent_seen && !ps.last_error[0]) {
		r->push_failing = false;
		say(r,
		    "push: delivering again to %s (%llu attempts had failed; %llu profiles "
		    "wait, %llu dropped at the queue cap so far)",
		    url, (unsigned long long)(ps.attempts_failed - r->push_failed_told),
		    (unsigned long long)ps.queued, (unsigned long long)ps.dropped_full);
		r->push_failed_told = ps.attempts_failed;
	}
	if (ps.dropped_full > r->push_dropped_seen && !r->push_dropping) {
		r->push_dropping = true;
		say(r,
		    "push: the queue is full: the oldest waiting profiles are dropped until %s "
		    "keeps up (%llu dropped so far)",
		    url, (unsigned long long)ps.dropped_full);
	} else if (r->push_dropping && ps.queued <= 1 && ps.dropped_full == r->push_dropped_seen) {
		r->push_dropping = false;
		say(r,
		    "push: %s keeps up again, the queue is empty (%llu dropped at the queue cap "
		    "so far)",
		    url, (unsigned long long)ps.dropped_full);
	}
	r->push_failed_seen = ps.attempts_failed;
	r->push_sent_seen = ps.sent;
	r->push_dropped_seen = ps.dropped_full;
}

/* Cut the interval [start, end) (Unix ns): rotate the session and emit every JVM's profile. */
static void cut(struct roller *r, struct session *s, int64_t start, int64_t end)
{
	struct stackagg *agg = session_rotate(s);
	struct cut c = { .r = r, .s = s };

	STAT_ADD(r, intervals, 1);
	check_push(r);
	if (!agg) {
		say(r, "profiles: out of memory at the end of an interval; its samples carry over");
		return;
	}
	c.agg = agg;
	c.nt = session_target_count(s);
	c.nframes = stackagg_frame_count(agg);
	c.jp = calloc(c.nt ? c.nt : 1, sizeof(*c.jp));
	c.rootmap = calloc(c.nframes ? c.nframes : 1, sizeof(*c.rootmap));
	c.labels = stackagg_labels_new(agg);
	if (c.jp && c.rootmap && c.labels) {
		(void)stackagg_foreach_aux(agg, on_stack, &c);
		for (size_t i = 0; i < c.nt; i++) {
			struct session_target_info ti;

			if (!c.jp[i].samples && !c.jp[i].aux)
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
	stackagg_labels_free(c.labels);
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
		.let_go = true,
		.event = r->o.event,
		.min_block_ns = r->o.min_block_ns,
		.switch_period = r->o.switch_period ? r->o.switch_period : 1,
		.switch_rate = r->o.switch_rate != SESSION_SWITCH_RATE_AUTO ? r->o.switch_rate
			       : r->o.switch_period			    ? 0
						    : SESSION_DEFAULT_SWITCH_RATE,
		.merge_threads = r->o.merge_threads,
		.alloc_interval = r->o.alloc_interval,
		.alloc_depth = r->o.alloc_depth,
		.lock_threshold_us = r->o.lock_threshold_us,
		.alloc_budget_ppm = r->o.alloc_budget_ppm,
		/* A thread waits inside libc (futex, nanosleep), which keeps no frame pointers:
		 * off-CPU stacks reach the Java frames above it only through the stack copy and the
		 * vm unwinder (record's default), which also names interpreted frames. */
		.stack_copy = evkind_of(r->o.event)->time ? SESSION_DEFAULT_SWITCH_STACK_COPY : 0,
	};
	struct session *s;
	char why[512];
	int rv = session_open_seams(&so, r->o.seams, &s, why, sizeof(why));

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

/* The roller thread's state between steps. */
struct loop {
	struct session *s; /* NULL between a lost session and the retry */
	uint64_t next_cut, born, retry_at, backoff;
	int64_t start; /* wall clock of the current interval's start */
};

/* Open a session unless one is open or the retry time has not come. True when one is open. */
static bool ensure_session(struct roller *r, struct loop *l)
{
	if (l->s)
		return true;
	if (r->now() < l->retry_at) {
		struct timespec ts = { 0, 100000000 };

		nanosleep(&ts, NULL);
		return false;
	}
	l->s = open_session(r);
	if (!l->s) {
		l->retry_at = r->now() + RETRY_NS;
		return false;
	}
	l->born = r->now();
	l->next_cut = l->born + r->o.interval_ns;
	l->start = wall_ns();
	return true;
}

/* The session failed (rv) or lost its source: cut what it has, close it, back off. */
static void lose_session(struct roller *r, struct loop *l, int rv, uint64_t now)
{
	/*
	 * Each new session makes the daemon send every JVM's code history: a session that keeps
	 * failing soon (a history over the control channel's cap, say) must not make the daemon
	 * do that in a loop.
	 */
	if (now - l->born < QUICK_LOSS_NS)
		l->backoff = l->backoff ? l->backoff * 2 : RETRY_NS;
	else
		l->backoff = 0;
	if (l->backoff > RETRY_MAX_NS)
		l->backoff = RETRY_MAX_NS;
	l->retry_at = now + l->backoff;
	say(r, "profiles: %s%s; starting over in %llu s",
	    rv != 0 && rv != -EINTR ? "sampling failed: " : "the control channel closed",
	    rv != 0 && rv != -EINTR ? strerror(-rv) : "", (unsigned long long)(l->backoff / NSEC));
	cut(r, l->s, l->start, wall_ns());
	session_close(l->s);
	l->s = NULL;
}

/* Interval over: cut, schedule the next one, and recycle a session holding exited JVMs. */
static void next_interval(struct roller *r, struct loop *l, uint64_t now)
{
	int64_t end = wall_ns();

	cut(r, l->s, l->start, end);
	l->start = end;
	l->next_cut += r->o.interval_ns;
	/*
	 * Behind schedule (a stalled machine): no burst of short profiles. Each profile lasts
	 * over 1 s, so their start seconds, part of the file names, differ.
	 */
	if (l->next_cut <= now)
		l->next_cut = now + r->o.interval_ns;
	if (l->next_cut < now + NSEC + NSEC / 100)
		l->next_cut = now + NSEC + NSEC / 100;
	if (now - l->born >= r->o.recycle_ns && exited_targets(l->s) > 0) {
		/* Let go of exited JVMs: a fresh session, opened before the old one closes. */
		struct session *fresh = open_session(r);

		if (fresh) {
			session_close(l->s);
			l->s = fresh;
			l->born = r->now();
			l->start = wall_ns();
		}
	}
}

static void *run(void *arg)
{
	struct roller *r = arg;
	struct loop l = { 0 };

	/* for top -H and /proc/PID/task */
	pthread_setname_np(pthread_self(), evkind_of(r->o.event)->thread);
	while (!atomic_load(&r->stop)) {
		uint64_t now;
		int rv;

		if (!ensure_session(r, &l))
			continue;
		rv = session_step(l.s, 100);
		notes(r, l.s);
		now = r->now();
		if ((rv != 0 && rv != -EINTR) || session_source_lost(l.s))
			lose_session(r, &l, rv, now);
		else if (now >= l.next_cut)
			next_interval(r, &l, now);
	}
	if (l.s) {
		int64_t end = wall_ns();

		if ((uint64_t)(end - l.start) >= MIN_LAST_NS)
			cut(r, l.s, l.start, end);
		session_close(l.s);
	}
	return NULL;
}

int roller_start(const struct roller_opts *o, struct roller **out)
{
	struct roller *r;
	int rv;

	if (!o->interval_ns || !o->ctl_path || o->event >= FG_NEVENTS)
		return -EINVAL;
	r = FG_NEW_CONF(struct roller, o, o);
	if (!r)
		return -ENOMEM;
	r->now = o->seams && o->seams->now ? o->seams->now : fg_now_ns;
	FG_DEFAULT(r->o.recycle_ns, 3600 * NSEC);
	r->ctl_path = strdup(o->ctl_path);
	r->hostname = strdup(o->hostname ? o->hostname : "");
	if (!r->ctl_path || !r->hostname) {
		FG_FREE_ALL(r->ctl_path, r->hostname);
		free(r);
		return -ENOMEM;
	}
	pthread_mutex_init(&r->mu, NULL);
	if ((rv = pthread_create(&r->thread, NULL, run, r)) != 0) {
		pthread_mutex_destroy(&r->mu);
		FG_FREE_ALL(r->ctl_path, r->hostname);
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
	FG_FREE_ALL(r->ctl_path, r->hostname, r);
}

void roller_stats(struct roller *r, struct roller_stats *out)
{
	pthread_mutex_lock(&r->mu);
	*out = r->st;
	pthread_mutex_unlock(&r->mu);
}
