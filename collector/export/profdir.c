// SPDX-License-Identifier: MIT
/*
 * profdir.c - rolling profiles on disk: safe writes, retention, index.html (see profdir.h).
 *
 * Invariant: d->sets is sorted by stem, which starts with the UTC start time, so the oldest
 * set is always d->sets[0] and retention only ever removes from the front.
 */
#include "profdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "util.h"
#include "viewer.h"

#define EXT_FOLDED 1u
#define EXT_SVG 2u
#define EXT_PB 4u
#define TMP_PREFIX ".tmp."

static const struct {
	unsigned bit;
	const char *ext;
} exts[] = { { EXT_FOLDED, ".folded" }, { EXT_SVG, ".svg" }, { EXT_PB, ".pb.gz" } };

struct set {
	char stem[LABELS_STEM_MAX];
	struct prof_stem meta;
	char service[LABELS_SERVICE_MAX + 1]; /* as the agent sent it (scanned: from the stem) */
	char cid[LABELS_CID_MAX + 1];	      /* full id (scanned: 12 digits), "" none */
	int64_t end_unix;		      /* 0 unknown (scanned) */
	uint64_t samples;		      /* 0 unknown (scanned) */
	unsigned freq_hz;
	uint64_t bytes;
	unsigned exts;
};

struct profdir {
	pthread_mutex_t mu; /* one roller per event writes here */
	int dfd;
	size_t keep;
	uint64_t max_bytes;
	struct set *sets;
	size_t n, cap;
	uint64_t bytes;
	struct profdir_stats st;
	char *path;	       /* for the viewer */
	struct viewer *viewer; /* NULL: no time view pages */
};

/* ---- directory ------------------------------------------------------------------------- */

static int open_dir(const char *path, int *out)
{
	struct stat st;
	int fd;

	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		return -errno;
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
		return -EPERM;
	fd = fg_open_dir(path, &st);
	if (fd < 0)
		return fd == -ELOOP ? -EPERM : fd;
	/* Ours and closed to writers: nobody else can swap a file under us. */
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return -EPERM;
	}
	*out = fd;
	return 0;
}

static int set_cmp(const void *a, const void *b)
{
	return strcmp(((const struct set *)a)->stem, ((const struct set *)b)->stem);
}

static struct set *set_find(struct profdir *d, const char *stem)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->sets[i].stem, stem))
			return &d->sets[i];
	return NULL;
}

static struct set *set_append(struct profdir *d)
{
	if (ARRAY_GROW(d->sets, d->cap, d->n + 1) != 0)
		return NULL;
	memset(&d->sets[d->n], 0, sizeof(d->sets[0]));
	return &d->sets[d->n++];
}

/* The extension bit of name, with the stem length in *stem_len; 0 when not ours. */
static unsigned name_ext(const char *name, size_t *stem_len)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		size_t e = strlen(exts[i].ext);

		if (n > e && !strcmp(name + n - e, exts[i].ext)) {
			*stem_len = n - e;
			return exts[i].bit;
		}
	}
	return 0;
}

/* Take over the sets an earlier run left, and remove its temporary files. */
static int scan(struct profdir *d)
{
	struct dirent *de;
	DIR *dir;
	int rv = fg_opendir_at(d->dfd, &dir);

	if (rv != 0)
		return rv;
	while ((de = readdir(dir))) {
		struct prof_stem meta;
		struct stat st;
		size_t slen;
		unsigned bit;
		struct set *s;
		char stem[LABELS_STEM_MAX];

		if (!strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) ||
		    (!strncmp(de->d_name, "view_", 5) && strstr(de->d_name, ".html.tmp."))) {
			(void)unlinkat(d->dfd, de->d_name, 0);
			continue;
		}
		bit = name_ext(de->d_name, &slen);
		if (!bit || slen >= sizeof(stem) || prof_stem_parse(de->d_name, slen, &meta) != 0)
			continue;
		if (fstatat(d->dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		memcpy(stem, de->d_name, slen);
		stem[slen] = '\0';
		s = set_find(d, stem);
		if (!s) {
			s = set_append(d);
			if (!s) {
				closedir(dir);
				return -ENOMEM;
			}
			snprintf(s->stem, sizeof(s->stem), "%s", stem);
			s->meta = meta;
			snprintf(s->service, sizeof(s->service), "%s", meta.service);
			if (strcmp(meta.cid12, "host") != 0)
				snprintf(s->cid, sizeof(s->cid), "%s", meta.cid12);
			d->st.found_at_open++;
		}
		s->exts |= bit;
		s->bytes += (uint64_t)st.st_size;
		d->bytes += (uint64_t)st.st_size;
	}
	closedir(dir);
	if (d->n)
		qsort(d->sets, d->n, sizeof(d->sets[0]), set_cmp);
	return 0;
}

/* ---- files ----------------------------------------------------------------------------- */

/* name = data, through a fresh temporary file renamed over it. */
static int put_file(struct profdir *d, const char *name, const void *data, size_t len)
{
	char tmp[LABELS_STEM_MAX + 64];
	int fd, rv;

	snprintf(tmp, sizeof(tmp), TMP_PREFIX "%s.%d", name, (int)getpid());
	fd = openat(d->dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	rv = fg_write_all(fd, data, len);
	if (close(fd) != 0 && rv == 0)
		rv = -errno;
	return fg_tmp_commit(d->dfd, tmp, name, rv);
}

static void remove_set(struct profdir *d, const struct set *s)
{
	char name[LABELS_STEM_MAX + 16];

	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		if (!(s->exts & exts[i].bit))
			continue;
		snprintf(name, sizeof(name), "%s%s", s->stem, exts[i].ext);
		if (unlinkat(d->dfd, name, 0) != 0 && errno != ENOENT)
			d->st.errors++;
	}
	d->bytes -= s->bytes;
	d->st.removed++;
}

/* Remove the oldest sets until `room` more bytes and one more set fit (room 0: just fit). */
static void retain(struct profdir *d, uint64_t room)
{
	size_t drop = 0, extra = room ? 1 : 0;

	while (drop < d->n && (d->n - drop + extra > d->keep || d->bytes + room > d->max_bytes))
		remove_set(d, &d->sets[drop++]);
	if (drop) {
		memmove(d->sets, d->sets + drop, (d->n - drop) * sizeof(d->sets[0]));
		d->n -= drop;
	}
}

/* ---- index.html ------------------------------------------------------------------------ */

static void html(FILE *f, const char *s)
{
	for (; *s; s++) {
		const char *ent = fg_html_entity(*s);

		if (ent)
			fputs(ent, f);
		else
			fputc(*s, f);
	}
}

/* t (Unix s) as UTC "YYYY-mm-dd HH:MM:SS" (date) or "HH:MM:SS" (!date). */
static void utc(char *buf, size_t len, int64_t t, bool date)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	if (date)
		strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	else
		strftime(buf, len, "%H:%M:%S", &tm);
}

/* The group key of a set: its container (12 digits) or "host". */
static const char *group_of(const struct set *s)
{
	return s->meta.cid12;
}

static void write_row(FILE *f, const struct set *s)
{
	char t0[32], t1[32];

	utc(t0, sizeof(t0), s->meta.start_unix, true);
	if (s->end_unix)
		utc(t1, sizeof(t1), s->end_unix, false);
	else
		snprintf(t1, sizeof(t1), "-");
	fputs("<tr class=\"profile\" data-stem=\"", f);
	html(f, s->stem);
	fprintf(f, "\" data-event=\"%s", prof_event_name(s->meta.event));
	fprintf(f, "\"><td class=\"start\">%s</td><td>%s</td><td class=\"service\">", t0, t1);
	html(f, s->service);
	fprintf(f, "</td><td class=\"event\">%s</td><td class=\"pid\">%u</td><td class=\"host\">",
		prof_event_name(s->meta.event), s->meta.host_pid);
	html(f, s->meta.hostname);
	fputs("</td><td class=\"samples\">", f);
	if (s->samples && s->meta.event != FG_EVENT_CPU)
		fprintf(f, "%.1f ms", (double)s->samples / 1000.0); /* microseconds */
	else if (s->samples)
		fprintf(f, "%llu", (unsigned long long)s->samples);
	else
		fputs("-", f);
	fprintf(f, "</td><td>%.1f KiB</td><td class=\"files\">", (double)s->bytes / 1024.0);
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		if (!(s->exts & exts[i].bit))
			continue;
		fputs("<a href=\"", f);
		html(f, s->stem);
		fprintf(f, "%s\">%s</a> ", exts[i].ext,
			exts[i].bit == EXT_SVG	? "flame graph"
			: exts[i].bit == EXT_PB ? "pprof"
						: "folded");
	}
	fputs("</td></tr>\n", f);
}

static int render_index(struct profdir *d, FILE *f)
{
	bool *done = calloc(d->n ? d->n : 1, sizeof(*done));
	char now[32];

	if (!done)
		return -ENOMEM;
	utc(now, sizeof(now), (int64_t)time(NULL), true);
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<title>fgcollect rolling profiles</title>\n<style>\n"
	      "body{font-family:sans-serif;margin:1.5em;color:#222}\n"
	      "table{border-collapse:collapse;margin-bottom:1.5em}\n"
	      "th,td{padding:.2em .7em;border-bottom:1px solid #ddd;text-align:left}\n"
	      "th{background:#f3f3f3}\nh2{font-size:1.1em;margin-top:1.2em}\n"
	      "code{background:#f3f3f3;padding:0 .2em}\n</style>\n</head>\n<body>\n"
	      "<h1>fgcollect rolling profiles</h1>\n",
	      f);
	fprintf(f,
		"<p id=\"summary\">%zu profiles, %.1f MiB, grouped by container, newest first. "
		"Written %s UTC.</p>\n",
		d->n, (double)d->bytes / (1024.0 * 1024.0), now);
	/* Groups in order of their newest set, newest first; sets newest first inside. */
	for (size_t i = d->n; i-- > 0;) {
		const char *g;

		if (done[i])
			continue;
		g = group_of(&d->sets[i]);
		fputs("<section class=\"container\" data-container=\"", f);
		html(f, g);
		fputs("\">\n<h2>", f);
		if (!strcmp(g, "host")) {
			fputs("Host processes (no container)", f);
		} else {
			fputs("Container <code>", f);
			html(f, d->sets[i].cid[0] ? d->sets[i].cid : g);
			fputs("</code>", f);
		}
		fputs("</h2>\n<table>\n<thead><tr><th>Start (UTC)</th><th>End</th><th>Service</th>"
		      "<th>Event</th><th>Host PID</th><th>Host</th><th>Samples / time</th><th>Size</th><th>Files</th>"
		      "</tr></thead>\n<tbody>\n",
		      f);
		for (size_t j = i + 1; j-- > 0;) {
			if (done[j] || strcmp(group_of(&d->sets[j]), g) != 0)
				continue;
			done[j] = true;
			write_row(f, &d->sets[j]);
		}
		fputs("</tbody>\n</table>\n</section>\n", f);
	}
	if (!d->n)
		fputs("<p>No profiles yet.</p>\n", f);
	fputs("</body>\n</html>\n", f);
	free(done);
	return ferror(f) ? -EIO : 0;
}

static int write_index(struct profdir *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rv;

	if (!f)
		return -ENOMEM;
	rv = render_index(d, f);
	if (fclose(f) != 0 && rv == 0)
		rv = -ENOMEM;
	if (rv == 0)
		rv = put_file(d, "index.html", buf, len);
	free(buf);
	if (rv != 0)
		d->st.errors++;
	return rv;
}

/* ---- public ---------------------------------------------------------------------------- */

int profdir_open(const struct profdir_opts *o, struct profdir **out)
{
	struct profdir *d = calloc(1, sizeof(*d));
	int rv;

	if (!d)
		return -ENOMEM;
	d->keep = o->keep ? o->keep : PROFDIR_DEFAULT_KEEP;
	d->max_bytes = o->max_bytes ? o->max_bytes : PROFDIR_DEFAULT_MAX_BYTES;
	if ((rv = open_dir(o->path, &d->dfd)) != 0) {
		free(d);
		return rv;
	}
	pthread_mutex_init(&d->mu, NULL);
	if ((rv = scan(d)) != 0) {
		profdir_close(d);
		return rv;
	}
	retain(d, 0);
	if (o->view_pages) {
		if (!(d->path = strdup(o->path))) {
			profdir_close(d);
			return -ENOMEM;
		}
		if ((rv = viewer_start(d->path, o->view_same_priority, &d->viewer)) != 0) {
			profdir_close(d);
			return rv;
		}
		/* the pages of an earlier run's profiles, and those whose profiles are gone */
		viewer_poke(d->viewer);
	}
	*out = d;
	return 0;
}

void profdir_close(struct profdir *d)
{
	if (!d)
		return;
	viewer_stop(d->viewer); /* the last pages first, while the directory is open */
	free(d->path);
	close(d->dfd);
	pthread_mutex_destroy(&d->mu);
	free(d->sets);
	free(d);
}

static int add(struct profdir *d, const struct profdir_prof *p)
{
	const struct {
		unsigned bit;
		const void *data;
		size_t len;
	} files[] = {
		{ EXT_FOLDED, p->folded, p->folded_len },
		{ EXT_SVG, p->svg, p->svg_len },
		{ EXT_PB, p->pb, p->pb_len },
	};
	char stem[LABELS_STEM_MAX], name[LABELS_STEM_MAX + 16];
	struct set s;
	struct set *slot;
	int rv = 0;

	memset(&s, 0, sizeof(s));
	prof_labels_stem(&p->labels, p->start_unix, stem);
	if (prof_stem_parse(stem, strlen(stem), &s.meta) != 0)
		return -EINVAL; /* cannot happen: stems are built to parse */
	if (set_find(d, stem))
		return -EEXIST;
	snprintf(s.stem, sizeof(s.stem), "%s", stem);
	snprintf(s.service, sizeof(s.service), "%s",
		 p->labels.service[0] ? p->labels.service : s.meta.service);
	snprintf(s.cid, sizeof(s.cid), "%s", p->labels.container_id);
	s.end_unix = p->end_unix;
	s.samples = p->samples;
	s.freq_hz = p->freq_hz;
	for (size_t i = 0; i < 3; i++)
		if (files[i].data)
			s.bytes += files[i].len;
	if (s.bytes > d->max_bytes)
		return -EFBIG;
	/* Make room first, so the directory never holds more than the bounds, even briefly. */
	retain(d, s.bytes);
	for (size_t i = 0; i < 3 && rv == 0; i++) {
		if (!files[i].data)
			continue;
		snprintf(name, sizeof(name), "%s%s", stem, exts[i].ext);
		rv = put_file(d, name, files[i].data, files[i].len);
		if (rv == 0)
			s.exts |= files[i].bit;
	}
	s.bytes = 0; /* not counted in d->bytes yet */
	if (rv != 0) {
		remove_set(d, &s); /* no partial set stays */
		d->st.removed--;
		d->st.errors++;
		return rv;
	}
	slot = set_append(d);
	if (!slot) {
		remove_set(d, &s);
		d->st.removed--;
		return -ENOMEM;
	}
	*slot = s;
	for (size_t i = 0; i < 3; i++)
		if (files[i].data)
			slot->bytes += files[i].len;
	d->bytes += slot->bytes;
	/* Keep the order: a new set is normally the newest, but clocks and ties exist. */
	if (d->n > 1 && strcmp(d->sets[d->n - 2].stem, slot->stem) > 0)
		qsort(d->sets, d->n, sizeof(d->sets[0]), set_cmp);
	d->st.written++;
	/* The set is written: an index that cannot be rewritten now (counted in errors) is
	 * rewritten with the next set. */
	(void)write_index(d);
	return 0;
}

int profdir_add(struct profdir *d, const struct profdir_prof *p)
{
	int rv;

	pthread_mutex_lock(&d->mu);
	rv = add(d, p);
	pthread_mutex_unlock(&d->mu);
	if (rv == 0 && d->viewer)
		viewer_poke(d->viewer);
	return rv;
}

int profdir_write_index(struct profdir *d)
{
	int rv;

	pthread_mutex_lock(&d->mu);
	rv = write_index(d);
	pthread_mutex_unlock(&d->mu);
	return rv;
}

void profdir_stats(const struct profdir *d, struct profdir_stats *out)
{
	pthread_mutex_lock((pthread_mutex_t *)&d->mu);
	*out = d->st;
	out->sets = d->n;
	out->bytes = d->bytes;
	pthread_mutex_unlock((pthread_mutex_t *)&d->mu);
	if (d->viewer) {
		struct viewer_stats vs;

		viewer_stats(d->viewer, &vs);
		out->view_pages = vs.pages;
		out->view_errors = vs.errors;
		out->view_removed = vs.removed;
	}
}
