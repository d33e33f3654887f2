// SPDX-License-Identifier: MIT
/*
 * profview.c - one time view page per JVM and event from a directory of rolling profiles
 * (profview.h).
 *
 * Invariant: a profile's column is its start time's distance from the group's first, in
 * intervals (rounded, so a start a second late stays in its column), and every column up to
 * the last profile's exists, so a gap in the profiles shows as empty columns.
 */
#include "profview.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "folded.h"
#include "labels.h"
#include "profout.h"
#include "stackagg.h"

#define FOLDED_EXT ".folded"
#define TIME_LEN 17 /* "YYYYmmddTHHMMSSZ_" at a stem's start */

struct pv_file {
	char *name;
	const char *key; /* the stem without its time: the JVM and event */
	struct prof_stem st;
};

static int pv_cmp(const void *x, const void *y)
{
	const struct pv_file *a = x, *b = y;
	int c = strcmp(a->key, b->key);

	if (c)
		return c;
	return a->st.start_unix < b->st.start_unix ? -1 : a->st.start_unix > b->st.start_unix;
}

/* The rolling profiles in dfd's directory. 0 or -ENOMEM / -errno. */
static int pv_scan(int dfd, struct pv_file **out, size_t *n)
{
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct pv_file *v = NULL;
	size_t cap = 0, k = 0;
	struct dirent *de;
	int rv = 0;

	if (!d) {
		rv = -errno;
		if (fd >= 0)
			close(fd);
		return rv;
	}
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name), el = strlen(FOLDED_EXT);
		struct prof_stem st;

		if (len <= el + TIME_LEN || strcmp(de->d_name + len - el, FOLDED_EXT) != 0 ||
		    prof_stem_parse(de->d_name, len - el, &st) != 0)
			continue;
		if (ARRAY_GROW(v, cap, k + 1) != 0 ||
		    !(v[k].name = strndup(de->d_name, len - el))) {
			rv = -ENOMEM;
			break;
		}
		v[k].key = v[k].name + TIME_LEN;
		v[k++].st = st;
	}
	closedir(d);
	if (rv == 0 && k)
		qsort(v, k, sizeof(*v), pv_cmp);
	*out = v;
	*n = k;
	return rv;
}

/* Folded stacks of one profile into the aggregate, at its column's time. */
struct pv_sink {
	struct stackagg *agg;
	struct stackagg_nframe *fr;
	size_t cap;
	uint64_t ts;
};

static int pv_stack(void *arg, const struct frame_span *sp, size_t n, double a, double b,
		    bool has_a)
{
	struct pv_sink *s = arg;
	struct stackagg_named nm = { .tid = 1, .ts = s->ts, .labelled = true };

	(void)a;
	(void)has_a;
	if (b < 0.5 || n == 0)
		return 0;
	if (ARRAY_GROW(s->fr, s->cap, n) != 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		s->fr[i] = (struct stackagg_nframe){ sp[i].p, sp[i].len, 0 };
	nm.frames = s->fr;
	nm.n = n;
	return stackagg_named(s->agg, &nm, (uint64_t)(b + 0.5), 0);
}

static int pv_read(int dfd, const char *stem, struct pv_sink *s, uint64_t *ignored)
{
	char name[LABELS_STEM_MAX + sizeof(FOLDED_EXT)];
	struct stack_sink sink = { .stack = pv_stack, .arg = s };
	struct folded *rd;
	int fd, rv;

	snprintf(name, sizeof(name), "%s%s", stem, FOLDED_EXT);
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rd = folded_new(0, &sink);
	rv = rd ? folded_read_fd(rd, fd, FOLDED_IN_B, NULL) : -ENOMEM;
	if (rd)
		*ignored += folded_ignored(rd);
	folded_free(rd);
	close(fd);
	return rv;
}

/* The interval of a group: the shortest step between its profiles' starts (60 s for one). */
static unsigned pv_interval(const struct pv_file *f, size_t n)
{
	int64_t best = 0;

	for (size_t i = 1; i < n; i++) {
		int64_t d = f[i].st.start_unix - f[i - 1].st.start_unix;

		if (d > 0 && (!best || d < best))
			best = d;
	}
	return best > 0 && best < 7 * 86400ll ? (unsigned)best : 60;
}

static void pv_units(struct profout *p, enum fg_event e)
{
	const struct evkind *k = evkind_of(e);

	p->time_type = k->time_type;
	p->types = k->types;
}

/* One JVM's page from its profiles f[0..n) (same key, by start). */
static int pv_page(int dfd, const char *outdir, const struct pv_file *f, size_t n,
		   struct profview_page *pg)
{
	struct stackagg_opts ao = { .timeline = true, .no_thread = true };
	struct pv_sink s = { 0 };
	struct profout_columns cols = { 0 };
	struct profout p = { .fmt = PROFOUT_HTML, .merged = true };
	struct prof_labels l;
	char title[512], sub[160], from[32], to[32], *path = NULL;
	int64_t *starts = NULL, last;
	size_t ncols;
	int rv = 0;

	pg->interval_s = pv_interval(f, n);
	last = f[n - 1].st.start_unix;
	ncols = (size_t)((last - f[0].st.start_unix + pg->interval_s / 2) / pg->interval_s) + 1;
	pg->columns = ncols;
	if (ncols > PROFVIEW_MAX_COLUMNS)
		return -E2BIG;
	if (asprintf(&path, "%s/view_%s.html", outdir, f[0].key) < 0)
		return -ENOMEM;
	pg->path = path;
	starts = malloc(ncols * sizeof(*starts));
	s.agg = stackagg_new(&ao, NULL);
	if (!starts || !s.agg) {
		rv = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < ncols; k++)
		starts[k] = f[0].st.start_unix + (int64_t)(k * pg->interval_s);
	for (size_t i = 0; i < n && rv == 0; i++) {
		int64_t d = f[i].st.start_unix - f[0].st.start_unix;

		s.ts = PROFOUT_COLUMN_TS((size_t)((d + pg->interval_s / 2) / pg->interval_s));
		rv = pv_read(dfd, f[i].name, &s, &pg->ignored_lines);
		if (rv == -ENOENT)
			rv = 0; /* removed by retention since the scan */
		pg->profiles++;
	}
	if (rv != 0)
		goto out;
	prof_labels_set(&l, f[0].st.service, strcmp(f[0].st.cid12, "host") ? f[0].st.cid12 : NULL,
			f[0].st.host_pid, f[0].st.hostname);
	l.event = f[0].st.event;
	prof_labels_title(&l, title, sizeof(title));
	strftime(from, sizeof(from), "%Y-%m-%d %H:%M", gmtime(&(time_t){ f[0].st.start_unix }));
	strftime(to, sizeof(to), "%Y-%m-%d %H:%M", gmtime(&(time_t){ last }));
	snprintf(sub, sizeof(sub), "%zu rolling profiles of %u s, %s to %s UTC (a column each)", n,
		 pg->interval_s, from, to);
	cols = (struct profout_columns){ starts, ncols, pg->interval_s };
	p.title = title;
	p.subtitle = sub;
	p.columns = &cols;
	pv_units(&p, l.event);
	rv = profout_write_file(path, s.agg, &p);
out:
	stackagg_free(s.agg);
	free(s.fr);
	free(starts);
	return rv;
}

int profview_write(const char *dir, const char *outdir,
		   void (*done)(void *arg, const struct profview_page *pg), void *arg,
		   size_t *pages)
{
	struct pv_file *f = NULL;
	size_t n = 0, np = 0;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rv, first = 0;

	*pages = 0;
	if (dfd < 0)
		return -errno;
	rv = pv_scan(dfd, &f, &n);
	if (rv == 0 && n == 0)
		rv = -ENOENT;
	for (size_t i = 0; rv == 0 && i < n;) {
		size_t j = i + 1;
		struct profview_page pg = { 0 };

		while (j < n && !strcmp(f[j].key, f[i].key))
			j++;
		pg.err = pv_page(dfd, outdir ? outdir : dir, &f[i], j - i, &pg);
		np++;
		if (done)
			done(arg, &pg);
		if (pg.err && !first)
			first = pg.err;
		free((char *)pg.path);
		i = j;
	}
	for (size_t i = 0; i < n; i++)
		free(f[i].name);
	free(f);
	close(dfd);
	*pages = np;
	return rv ? rv : first;
}
