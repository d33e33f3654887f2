// SPDX-License-Identifier: MIT
/*
 * profout.c - a recording's stacks written as a profile file: folded, SVG or pprof (see
 * profout.h).
 */
#include "profout.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flame_fold.h"
#include "flame_svg.h"
#include "util.h"
#include "pprof.h"
#include "timeview.h"

/* The format FILE's extension picks; -EINVAL for an unknown one. */
int profout_format(const char *path, enum profout_fmt *fmt)
{
	size_t n = strlen(path);

#define ENDS(s) (n > strlen(s) && !strcmp(path + n - strlen(s), s))
	if (ENDS(".folded"))
		*fmt = PROFOUT_FOLDED;
	else if (ENDS(".svg"))
		*fmt = PROFOUT_SVG;
	else if (ENDS(".pb.gz"))
		*fmt = PROFOUT_PPROF;
	else if (ENDS(".html"))
		*fmt = PROFOUT_HTML;
	else if (ENDS(".speedscope.json"))
		*fmt = PROFOUT_SPEEDSCOPE;
	else
		return -EINVAL;
#undef ENDS
	return 0;
}

bool profout_timed(enum profout_fmt fmt)
{
	return fmt == PROFOUT_HTML || fmt == PROFOUT_SPEEDSCOPE;
}

/* The time view page or speedscope's file (timeview.h). */
static int write_timed(struct stackagg *a, const struct profout *p, int fd)
{
	unsigned int freq = p->freq ? p->freq : 99;
	struct timeview_opts o = {
		.title = p->title,
		.subtitle = p->subtitle,
		.unit = p->types       ? p->types->countname
			: p->time_type ? "us"
				       : "samples",
		.roots = (p->multi ? 1 : 0) + (p->merged ? 0 : 1),
		.thread_root = p->merged  ? -1
			       : p->multi ? 1
					  : 0,
		.sample_us = p->types || p->time_type ? 0 : 1e6 / freq,
		.block_cols = p->block_cols,
	};
	FILE *f;
	int rv;

	if (p->columns) {
		o.rows = 1;
		o.cell_ns = PROFOUT_COLUMN_TS(1) - PROFOUT_COLUMN_TS(0);
		o.origin = PROFOUT_COLUMN_TS(0);
		o.ncols = p->columns->n;
		o.col_unix = p->columns->start_unix;
		o.col_s = p->columns->interval_s;
	}
	if (!(f = fdopen(dup(fd), "w")))
		return -errno;
	if (p->fmt == PROFOUT_HTML)
		rv = timeview_write_html(a, &o, f);
	else
		rv = timeview_write_speedscope(a, &o, f);
	if (fclose(f) != 0 && rv == 0)
		rv = -EIO;
	return rv;
}

struct emit {
	struct stackagg_labels *labels; /* frame id -> label (stackagg.h) */
	const char *buf[STACKAGG_MAX_FRAMES];
	struct flame *flame;
	struct pprof *pprof;
	bool multi;  /* roots are process then thread */
	bool merged; /* no thread root frame (--no-per-thread) */
};

static int emit_flame(void *arg, const uint32_t *ids, size_t n, uint64_t count)
{
	struct emit *e = arg;

	if (!count)
		return 0; /* an event stack whose weight rounded to nothing */
	for (size_t i = 0; i < n; i++)
		if (!(e->buf[i] = stackagg_labels_get(e->labels, ids[i])))
			return -ENOMEM;
	return flame_add(e->flame, e->buf, n, count);
}

static int emit_pprof(void *arg, const uint32_t *ids, size_t n, uint64_t count, uint64_t aux)
{
	struct emit *e = arg;
	size_t th = e->multi && n > 1 ? 1 : 0; /* the thread root frame */

	for (size_t i = 0; i < n; i++)
		if (!(e->buf[i] = stackagg_labels_get(e->labels, ids[i])))
			return -ENOMEM;
	if (!count && !aux)
		return 0; /* an event stack whose weight rounded to nothing */
	return pprof_add2(e->pprof, e->buf, n, (int64_t)count, (int64_t)aux,
			  e->merged ? NULL : e->buf[th]);
}

/* pprof's units: CPU samples, a time profile (microseconds) or an event profile. */
static int pprof_units(struct pprof **out, const struct profout *p)
{
	unsigned int freq = p->freq;
	const struct evkind_types *t = p->types;
	uint64_t period = t ? t->period : p->time_type ? 1000 : 1000000000ull / (freq ? freq : 99);
	struct pprof *pp = pprof_new(period);
	int rv = 0;

	if (!pp)
		return -ENOMEM;
	if (t)
		rv = pprof_set_event_types(pp, t->t1, t->u1, t->t2, t->u2, t->ptype, t->punit);
	else if (p->time_type)
		rv = pprof_set_time_type(pp, p->time_type);
	if (rv != 0) {
		pprof_free(pp);
		return rv;
	}
	*out = pp;
	return 0;
}

int profout_write(struct stackagg *a, const struct profout *p, int fd)
{
	enum profout_fmt fmt = p->fmt;
	struct emit *e = calloc(1, sizeof(*e));
	FILE *f = NULL;
	int rv;

	if (!e)
		return -ENOMEM;
	if (profout_timed(fmt)) {
		free(e);
		return write_timed(a, p, fd);
	}
	e->multi = p->multi;
	e->merged = p->merged;
	if (fmt == PROFOUT_FOLDED) {
		f = fdopen(dup(fd), "w");
		if (!f) {
			rv = -errno;
			goto out;
		}
		rv = stackagg_write_folded(a, f);
		if (fclose(f) != 0 && rv == 0)
			rv = -EIO;
		goto out;
	}
	e->labels = stackagg_labels_new(a);
	if (!e->labels) {
		rv = -ENOMEM;
		goto out;
	}
	if (fmt == PROFOUT_SVG) {
		struct flame_opts o;

		e->flame = flame_new();
		if (!e->flame) {
			rv = -ENOMEM;
			goto out;
		}
		rv = stackagg_foreach(a, emit_flame, e);
		if (rv != 0)
			goto out;
		flame_opts_init(&o);
		o.title = p->title;
		o.subtitle = p->subtitle;
		o.palette = FLAME_PALETTE_JAVA;
		if (p->types)
			o.countname = p->types->countname;
		else if (p->time_type)
			o.countname = "us"; /* counts are microseconds */
		f = fdopen(dup(fd), "w");
		if (!f) {
			rv = -errno;
			goto out;
		}
		rv = flame_render_svg(e->flame, &o, f);
		if (rv == -ENODATA)
			rv = 0; /* an SVG saying "no samples" was written */
		if (fclose(f) != 0 && rv == 0)
			rv = -EIO;
	} else {
		/* A time profile counts microseconds: 1000 ns each. */
		if ((rv = pprof_units(&e->pprof, p)) != 0)
			goto out;
		pprof_set_time(e->pprof, 0, (int64_t)p->duration_ns);
		(void)pprof_add_comment(e->pprof, p->title); /* the labels, as in the SVG's title */
		rv = stackagg_foreach_aux(a, emit_pprof, e);
		if (rv == 0)
			rv = pprof_write_gz(e->pprof, fd);
	}
out:
	flame_free(e->flame);
	pprof_free(e->pprof);
	stackagg_labels_free(e->labels);
	free(e);
	return rv;
}

int profout_write_file(const char *path, struct stackagg *a, const struct profout *p)
{
	char *tmp = NULL;
	int fd, rv;

	if (asprintf(&tmp, "%s.tmp.%d", path, (int)getpid()) < 0)
		return -ENOMEM;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		rv = -errno;
		free(tmp);
		return rv;
	}
	rv = profout_write(a, p, fd);
	if (rv == 0 && fsync(fd) != 0)
		rv = -errno;
	if (close(fd) != 0 && rv == 0)
		rv = -errno;
	rv = fg_tmp_commit(AT_FDCWD, tmp, path, rv);
	free(tmp);
	return rv;
}
