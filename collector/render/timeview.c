// SPDX-License-Identifier: MIT
/*
 * timeview.c - a recording as one self-contained HTML page that shows when each stack ran
 * (timeview.h): the page's script and style (timeview.js, timeview.css, embedded at build
 * time), a JSON head, and two blobs in base64 (the second, and a large first, gzipped; the page
 * inflates them itself with DecompressionStream), so nothing is fetched.
 *
 * A counting's time is its heatmap cell (meta.rows cells a column, meta.cell_us each, from
 * meta.t0). The first blob, all the page needs to open, is the heatmap of all threads:
 * unsigned LEB128 varints, every cell's countings, then every cell's weight (column by
 * column); up to TV_HEAD_RAW_MAX it is not compressed (meta.head_gz false), so the page's
 * script, which comes next, draws the heatmap at once, before the browser has parsed the rest.
 * The second blob, read once the heatmap is painted and the document parsed: u32
 * (little-endian) L, then L bytes of JSON {"frames": [labels]}, then varints: for each node
 * after the root, its parent and frame; thread by thread, the number of its distinct stacks
 * and their nodes; for each counting, thread by thread (meta.threads gives their counts) and
 * by time, its cell less the previous one's (the first: its cell); then every counting's stack
 * as an index into its thread's (small numbers: one byte for a thread's 128 first stacks);
 * then, unless meta.unit_weights (every counting weighs 1), every counting's weight. Columns
 * of alike numbers compress best.
 *
 * Invariant: every string that reaches the page's markup goes through json_str, which leaves
 * no '<', '>' or '&' unescaped, so a frame or thread name cannot end a script element.
 */
#include "timeview.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "array.h"
#include "flame_svg.h"
#include "timeline.h"
#include "timeview_css.h"
#include "timeview_js.h"

/*
 * The heatmap's default layout. A counting's time is kept as its cell: a selection is made of
 * whole cells, so nothing finer is ever shown.
 */
#define TV_ROWS 50 /* a column a second, of 20 ms slices */

/* A growing byte buffer. */
struct tv_buf {
	unsigned char *p;
	size_t n, cap;
	int err;
};

static void buf_put(struct tv_buf *b, const void *p, size_t n)
{
	if (b->err || ARRAY_GROW(b->p, b->cap, b->n + n) != 0) {
		b->err = -ENOMEM;
		return;
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void buf_varint(struct tv_buf *b, uint64_t v)
{
	unsigned char t[10];
	size_t n = 0;

	do {
		t[n] = v & 0x7f;
		v >>= 7;
		t[n++] |= v ? 0x80 : 0;
	} while (v);
	buf_put(b, t, n);
}

/* s as a JSON string, with '<', '>', '&' and controls as \u escapes. */
void timeview_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* The same, into a buffer (the frame table inside the data). */
static void buf_json_str(struct tv_buf *b, const char *s)
{
	char esc[8];

	buf_put(b, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			buf_put(b, esc, 2);
		} else if (c < 0x20 || c == 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			buf_put(b, esc, 6);
		} else {
			buf_put(b, s, 1);
		}
	}
	buf_put(b, "\"", 1);
}

/* The heatmap's layout: rows a column, a cell's span, where cell 0 starts, how many columns. */
struct tv_grid {
	unsigned rows;
	uint64_t cell_ns;
	uint64_t origin; /* CLOCK_MONOTONIC ns (or o->origin's clock) of cell 0's start */
	size_t ncols;
};

/* The cells a page may have at most: a day of 20 ms slices, with room. */
#define TV_MAX_CELLS (1u << 23)

static int tv_grid_init(struct tv_grid *g, const struct timeline *tl, const struct timeview_opts *o)
{
	uint64_t last = 0;

	g->rows = o->rows ? o->rows : TV_ROWS;
	g->cell_ns = o->cell_ns ? o->cell_ns : 1000000000ull / TV_ROWS;
	g->origin = o->origin && o->origin <= tl->t0 ? o->origin : tl->t0;
	if (tl->nev)
		last = (tl->t0 + tl->t1 - tl->t0 - g->origin) / g->cell_ns;
	g->ncols = (size_t)(last / g->rows) + 1;
	if (o->col_unix && g->ncols > o->ncols)
		return -EINVAL; /* a counting after the last interval */
	if (o->ncols > g->ncols)
		g->ncols = o->ncols;
	if (g->ncols > TV_MAX_CELLS / g->rows)
		return -E2BIG;
	return 0;
}

static uint64_t tv_cell(const struct tv_grid *g, const struct timeline *tl, size_t i)
{
	return (tl->t0 + tl->ev[i].t - g->origin) / g->cell_ns;
}

/*
 * Each thread's distinct stacks (count, then nodes, in order of first counting) into head,
 * every counting's index among its thread's into ev. 0 or -ENOMEM.
 */
static int tv_local_stacks(struct tv_buf *head, struct tv_buf *ev, const struct timeline *tl)
{
	uint32_t *local = malloc((tl->nnodes ? tl->nnodes : 1) * sizeof(*local));
	uint32_t *seen = malloc((tl->nev ? tl->nev : 1) * sizeof(*seen));
	int rv = -ENOMEM;

	if (!local || !seen)
		goto out;
	for (size_t i = 0; i < tl->nnodes; i++)
		local[i] = UINT32_MAX;
	for (size_t t = 0; t < tl->nthreads; t++) {
		const struct timeline_thread *th = &tl->threads[t];
		uint32_t n = 0;

		for (size_t i = th->first; i < th->first + th->n; i++) {
			uint32_t node = tl->ev[i].node;

			if (local[node] == UINT32_MAX) {
				local[node] = n;
				seen[n++] = node;
			}
			buf_varint(ev, local[node]);
		}
		buf_varint(head, n);
		for (uint32_t k = 0; k < n; k++) {
			buf_varint(head, seen[k]);
			local[seen[k]] = UINT32_MAX; /* the next thread numbers its own */
		}
	}
	rv = head->err ? head->err : ev->err;
out:
	free(local);
	free(seen);
	return rv;
}

/* Every cell's countings and weight, for all threads (the heatmap as it opens). */
static int tv_cells(struct tv_buf *b, const struct timeline *tl, const struct tv_grid *g)
{
	size_t nc = g->ncols * g->rows;
	uint64_t *w = calloc(nc, sizeof(*w)), *n = calloc(nc, sizeof(*n));
	int rv = -ENOMEM;

	if (w && n) {
		for (size_t i = 0; i < tl->nev; i++) {
			uint64_t c = tv_cell(g, tl, i);

			w[c] += tl->ev[i].weight;
			n[c]++;
		}
		for (size_t c = 0; c < nc; c++)
			buf_varint(b, n[c]);
		for (size_t c = 0; c < nc; c++)
			buf_varint(b, w[c]);
		rv = b->err;
	}
	free(w);
	free(n);
	return rv;
}

/* Do all countings weigh 1 (CPU samples)? Then the page stores no weights. */
static bool tv_unit_weights(const struct timeline *tl)
{
	for (size_t i = 0; i < tl->nev; i++)
		if (tl->ev[i].weight != 1)
			return false;
	return true;
}

/*
 * The two blobs (see the file's header): b the cells, ev the rest. tabs and idx hold each
 * thread's stacks and every counting's index among them until they are appended in order.
 */
static int tv_data(struct tv_buf *b, struct tv_buf *ev, const struct timeline *tl,
		   const struct stackagg *a, struct stackagg_labels *labels,
		   const struct tv_grid *g)
{
	size_t nf = stackagg_frame_count(a), at;
	unsigned char len[4] = { 0 };
	struct tv_buf tabs = { 0 }, idx = { 0 };
	int rv;

	if ((rv = tv_cells(b, tl, g)) != 0)
		return rv;
	buf_put(ev, len, 4);
	at = ev->n;
	buf_put(ev, "{\"frames\":[", 11);
	for (size_t i = 0; i < nf; i++) {
		const char *s = stackagg_labels_get(labels, (uint32_t)i);

		if (!s)
			return -ENOMEM;
		if (i)
			buf_put(ev, ",", 1);
		buf_json_str(ev, s);
	}
	buf_put(ev, "]}", 2);
	if (ev->err)
		return ev->err;
	for (size_t i = 0, l = ev->n - at; i < 4; i++)
		ev->p[at - 4 + i] = (unsigned char)(l >> (8 * i));
	for (size_t i = 1; i < tl->nnodes; i++) {
		buf_varint(ev, tl->nodes[i].parent);
		buf_varint(ev, tl->nodes[i].frame);
	}
	if ((rv = tv_local_stacks(&tabs, &idx, tl)) == 0) {
		buf_put(ev, tabs.p, tabs.n);
		for (size_t t = 0; t < tl->nthreads; t++) {
			const struct timeline_thread *th = &tl->threads[t];
			uint64_t prev = 0;

			for (size_t i = th->first; i < th->first + th->n; i++) {
				uint64_t c = tv_cell(g, tl, i);

				buf_varint(ev, c - prev);
				prev = c;
			}
		}
		buf_put(ev, idx.p, idx.n);
	}
	free(tabs.p);
	free(idx.p);
	if (rv != 0)
		return rv;
	if (!tv_unit_weights(tl))
		for (size_t i = 0; i < tl->nev; i++)
			buf_varint(ev, tl->ev[i].weight);
	return b->err ? b->err : ev->err;
}

/* in[0..n) gzipped into out. 0 or -ENOMEM / -EIO. */
static int tv_gzip(struct tv_buf *out, const unsigned char *in, size_t n)
{
	z_stream z = { 0 };
	int zr;

	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	out->cap = deflateBound(&z, (uLong)n) + 64;
	out->p = malloc(out->cap);
	if (!out->p) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)n;
	z.next_out = out->p;
	z.avail_out = (uInt)out->cap;
	zr = deflate(&z, Z_FINISH);
	out->n = out->cap - z.avail_out;
	deflateEnd(&z);
	return zr == Z_STREAM_END ? 0 : -EIO;
}

static void put_base64(FILE *f, const unsigned char *p, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char line[77];
	size_t k = 0;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;

		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		line[k++] = tab[(v >> 18) & 63];
		line[k++] = tab[(v >> 12) & 63];
		line[k++] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
		line[k++] = i + 2 < n ? tab[v & 63] : '=';
		if (k == 76) {
			line[k++] = '\n';
			fwrite(line, 1, k, f);
			k = 0;
		}
	}
	if (k) {
		line[k++] = '\n';
		fwrite(line, 1, k, f);
	}
}

static void put_meta(FILE *f, const struct timeline *tl, const struct timeview_opts *o,
		     const struct tv_grid *g, bool head_gz)
{
	fputs("{\"title\":", f);
	timeview_json_str(f, o->title ? o->title : "");
	fputs(",\"subtitle\":", f);
	timeview_json_str(f, o->subtitle ? o->subtitle : "");
	fputs(",\"unit\":", f);
	timeview_json_str(f, o->unit ? o->unit : "samples");
	fprintf(f,
		",\"rows\":%u,\"cell_us\":%llu,\"ncols\":%zu,\"unit_weights\":%s,"
		"\"head_gz\":%s",
		g->rows, (unsigned long long)(g->cell_ns / 1000), g->ncols,
		tv_unit_weights(tl) ? "true" : "false", head_gz ? "true" : "false");
	if (o->col_unix) {
		fprintf(f, ",\"col_s\":%u,\"columns\":[", o->col_s);
		for (size_t i = 0; i < o->ncols; i++)
			fprintf(f, "%s%lld", i ? "," : "", (long long)o->col_unix[i]);
		fputs("]", f);
	}
	fprintf(f,
		",\"t0\":%llu,\"duration_us\":%llu,\"nodes\":%zu,\"events\":%zu,\"untimed\":%llu,"
		"\"threads\":[",
		(unsigned long long)g->origin, (unsigned long long)(tl->t1 - tl->t0) / 1000,
		tl->nnodes, tl->nev, (unsigned long long)tl->untimed);
	for (size_t i = 0; i < tl->nthreads; i++) {
		fprintf(f, "%s[%u,", i ? "," : "", tl->threads[i].tid);
		timeview_json_str(f, tl->threads[i].name);
		fprintf(f, ",%zu]", tl->threads[i].n);
	}
	fputs("]}", f);
}

/* The head's size up to which it is not compressed (the page reads it without waiting). */
#define TV_HEAD_RAW_MAX (512u << 10)

static bool tv_head_gz(const struct tv_buf *raw)
{
	return raw->n > TV_HEAD_RAW_MAX;
}

/* buf (gzipped when gz), as base64 in a script element of id. 0 or -ENOMEM / -EIO. */
static int put_blob(FILE *f, const char *id, const struct tv_buf *raw, bool gz)
{
	struct tv_buf z = { 0 };
	int rv = gz ? tv_gzip(&z, raw->p, raw->n) : 0;

	if (rv == 0) {
		fprintf(f, "<script id=\"%s\" type=\"application/octet-stream\">\n", id);
		if (gz)
			put_base64(f, z.p, z.n);
		else
			put_base64(f, raw->p, raw->n);
		fputs("</script>\n", f);
	}
	free(z.p);
	return rv;
}

int timeview_write_html(const struct stackagg *a, const struct timeview_opts *o, FILE *f)
{
	struct stackagg_labels *labels = stackagg_labels_new(a);
	struct timeline tl;
	struct tv_grid g;
	struct tv_buf raw = { 0 }, ev = { 0 };
	int rv;

	if (!labels)
		return -ENOMEM;
	rv = timeline_build(&tl, a, labels, 0, o->thread_root);
	if (rv != 0)
		goto out_labels;
	if ((rv = tv_grid_init(&g, &tl, o)) != 0 ||
	    (rv = tv_data(&raw, &ev, &tl, a, labels, &g)) != 0)
		goto out;
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n<title>",
	      f);
	(void)flame_svg_escape(f, o->title ? o->title : "time view",
			       strlen(o->title ? o->title : "time view"), false);
	fputs("</title>\n<style>\n", f);
	fwrite(timeview_css, 1, timeview_css_len, f);
	fputs("</style></head>\n<body>\n<script id=\"fg-meta\" type=\"application/json\">", f);
	put_meta(f, &tl, o, &g, tv_head_gz(&raw));
	fputs("</script>\n", f);
	if ((rv = put_blob(f, "fg-data", &raw, tv_head_gz(&raw))) != 0)
		goto out;
	/* the script before the countings: the heatmap is drawn while they are still parsed */
	fputs("<script>\n", f);
	fwrite(timeview_js, 1, timeview_js_len, f);
	fputs("</script>\n", f);
	if ((rv = put_blob(f, "fg-events", &ev, true)) != 0)
		goto out;
	fputs("</body></html>\n", f);
	rv = ferror(f) ? -EIO : 0;
out:
	free(raw.p);
	free(ev.p);
	timeline_fini(&tl);
out_labels:
	stackagg_labels_free(labels);
	return rv;
}
