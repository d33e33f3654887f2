// SPDX-License-Identifier: MIT
/*
 * profview.c - one time view page per JVM and event from a directory of rolling profiles
 * (profview.h).
 *
 * Invariant: a profile's column is its start time's distance from the group's first, in
 * intervals (rounded, so a start a second late stays in its column), and every column up to
 * the last profile's exists, so a gap in the profiles shows as empty columns. A memo's entries
 * are sorted by key, and an entry holds only after its page was written whole.
 */
#include "profview.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "fgsearch.h"
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

/* The groups of f[0..n) (sorted by key): calls fn for each, with its first index and size. */
static int pv_groups(const struct pv_file *f, size_t n,
		     int (*fn)(void *arg, const struct pv_file *g, size_t len), void *arg)
{
	int rv = 0;

	for (size_t i = 0; i < n && rv == 0;) {
		size_t j = i + 1;

		while (j < n && !strcmp(f[j].key, f[i].key))
			j++;
		rv = fn(arg, &f[i], j - i);
		i = j;
	}
	return rv;
}

/* One pass of profview_write or profview_update: where, and what happened. */
struct pv_pass {
	int dfd;
	const char *outdir;
	void (*done)(void *arg, const struct profview_page *pg);
	void *arg;
	size_t pages;
	int first;
	/* profview_update: the memo, the next one being made */
	struct profview_memo *memo;
	struct pv_memo_ent *next;
	size_t nnext, capnext;
};

/* Write one group's page; its error is kept as the pass's first. */
static int pv_write_group(struct pv_pass *p, const struct pv_file *g, size_t len)
{
	struct profview_page pg = { 0 };

	pg.err = pv_page(p->dfd, p->outdir, g, len, &pg);
	p->pages++;
	if (p->done)
		p->done(p->arg, &pg);
	if (pg.err && !p->first)
		p->first = pg.err;
	free((char *)pg.path);
	return pg.err;
}

static int pv_write_one(void *arg, const struct pv_file *g, size_t len)
{
	(void)pv_write_group(arg, g, len);
	return 0;
}

int profview_write(const char *dir, const char *outdir,
		   void (*done)(void *arg, const struct profview_page *pg), void *arg,
		   size_t *pages)
{
	struct pv_file *f = NULL;
	size_t n = 0;
	struct pv_pass p = { .outdir = outdir ? outdir : dir, .done = done, .arg = arg };
	int rv;

	*pages = 0;
	p.dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p.dfd < 0)
		return -errno;
	rv = pv_scan(p.dfd, &f, &n);
	if (rv == 0 && n == 0)
		rv = -ENOENT;
	if (rv == 0)
		(void)pv_groups(f, n, pv_write_one, &p);
	for (size_t i = 0; i < n; i++)
		free(f[i].name);
	free(f);
	close(p.dfd);
	*pages = p.pages;
	return rv ? rv : p.first;
}

/* ---- profview_update ------------------------------------------------------------------- */

struct pv_memo_ent {
	char *key;
	uint64_t sig; /* its profiles' names, hashed */
};

struct profview_memo {
	struct pv_memo_ent *e; /* by key */
	size_t n;
};

struct profview_memo *profview_memo_new(void)
{
	return calloc(1, sizeof(struct profview_memo));
}

static void pv_ents_free(struct pv_memo_ent *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(e[i].key);
	free(e);
}

void profview_memo_free(struct profview_memo *m)
{
	if (!m)
		return;
	pv_ents_free(m->e, m->n);
	free(m);
}

static int pv_ent_cmp(const void *k, const void *e)
{
	return strcmp(k, ((const struct pv_memo_ent *)e)->key);
}

/* A group's profiles as one number: FNV-1a over their names, each ended by a NUL. */
static uint64_t pv_sig(const struct pv_file *g, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		for (const char *c = g[i].name;; c++) {
			h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
			if (!*c)
				break;
		}
	return h;
}

static bool pv_page_exists(int dfd, const char *key)
{
	char name[LABELS_STEM_MAX + 16];
	struct stat st;

	snprintf(name, sizeof(name), "view_%s.html", key);
	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* A group's page, written when its profiles changed; its memo entry kept once written. */
static int pv_update_one(void *arg, const struct pv_file *g, size_t len)
{
	struct pv_pass *p = arg;
	const struct pv_memo_ent *old = p->memo->n ? bsearch(g->key, p->memo->e, p->memo->n,
							     sizeof(*p->memo->e), pv_ent_cmp)
						   : NULL;
	uint64_t sig = pv_sig(g, len);

	if (!old || old->sig != sig || !pv_page_exists(p->dfd, g->key)) {
		if (pv_write_group(p, g, len) != 0)
			return 0; /* no entry: written again next time */
	}
	if (ARRAY_GROW(p->next, p->capnext, p->nnext + 1) != 0 ||
	    !(p->next[p->nnext].key = strdup(g->key)))
		return -ENOMEM;
	p->next[p->nnext++].sig = sig;
	return 0;
}

static bool pv_key_before(const struct pv_file *p, const char *key)
{
	return strcmp(p->key, key) < 0;
}

FG_LOWER_BOUND(pv_lower_bound, struct pv_file, const char *, pv_key_before)

/* Is name a page of ours (view_KEY.html) whose key has no profile in f[0..n)? */
static bool pv_stale(const char *name, const struct pv_file *f, size_t n)
{
	size_t len = strlen(name), i;
	char stem[LABELS_STEM_MAX + TIME_LEN];
	struct prof_stem st;

	if (len <= 5 + 5 || strncmp(name, "view_", 5) != 0 ||
	    strcmp(name + len - 5, ".html") != 0 || len - 10 + TIME_LEN >= sizeof(stem))
		return false;
	/* a key only: parse it behind a time, as a profile's stem */
	snprintf(stem, sizeof(stem), "19700101T000000Z_%.*s", (int)(len - 10), name + 5);
	if (prof_stem_parse(stem, strlen(stem), &st) != 0)
		return false;
	if (!f) /* no profiles at all (n is 0) */
		return true;
	i = pv_lower_bound(f, n, stem + TIME_LEN);
	return i == n || strcmp(f[i].key, stem + TIME_LEN) != 0;
}

/* Remove the pages in dfd's directory whose JVM and event have no profile in f[0..n). */
static size_t pv_prune(int dfd, const struct pv_file *f, size_t n)
{
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	size_t removed = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	rewinddir(d); /* the descriptor's offset is shared with the scan's */
	while ((de = readdir(d)) != NULL)
		if (pv_stale(de->d_name, f, n) && unlinkat(dfd, de->d_name, 0) == 0)
			removed++;
	closedir(d);
	return removed;
}

int profview_update(const char *dir, struct profview_memo *m,
		    void (*done)(void *arg, const struct profview_page *pg), void *arg,
		    size_t *written, size_t *removed)
{
	struct pv_file *f = NULL;
	size_t n = 0;
	struct pv_pass p = { .outdir = dir, .done = done, .arg = arg, .memo = m };
	int rv;

	*written = 0;
	*removed = 0;
	p.dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p.dfd < 0)
		return -errno;
	rv = pv_scan(p.dfd, &f, &n);
	if (rv == 0)
		rv = pv_groups(f, n, pv_update_one, &p);
	if (rv == 0) {
		pv_ents_free(m->e, m->n);
		m->e = p.next;
		m->n = p.nnext;
		p.next = NULL;
		p.nnext = 0;
		*removed = pv_prune(p.dfd, f, n);
	}
	pv_ents_free(p.next, p.nnext);
	for (size_t i = 0; i < n; i++)
		free(f[i].name);
	free(f);
	close(p.dfd);
	*written = p.pages;
	return rv ? rv : p.first;
}
