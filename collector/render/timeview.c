// SPDX-License-Identifier: MIT
/*
 * timeview.c - a recording as one self-contained HTML page that shows when each stack ran
 * (timeview.h): the page's script and style (timeview.js, timeview.css, embedded at build
 * time), a JSON head, and blobs in base64 (gzipped but a small first; the page inflates them
 * itself with DecompressionStream), so nothing is fetched.
 *
 * A counting's time is its heatmap cell (meta.rows cells a column, meta.cell_us each, from
 * meta.t0). The first blob, all the page needs to open, is the heatmap of all threads:
 * unsigned LEB128 varints, every cell's countings, then every cell's weight (column by
 * column); up to TV_HEAD_RAW_MAX it is not compressed (meta.head_gz false), so the page's
 * script, which comes next, draws the heatmap at once, before the browser has parsed the rest.
 *
 * The countings follow in blobs the page inflates only when a selection needs them. fg-tree,
 * read once the heatmap is painted and the document parsed: u32 (little-endian) L, then L
 * bytes of JSON {"frames": [labels]}, then varints: for each node after the root, its parent
 * and frame; thread by thread, the number of its distinct stacks and their nodes. Then the
 * time blocks, meta.block_cols columns each (meta.blocks of them; a block without countings
 * has no blob): fg-sK, block K's countings: each thread's count in the block, then thread by
 * thread and by time each counting's cell less the previous one's (the first: less the
 * block's first cell), then every counting's stack as an index into its thread's (small
 * numbers: one byte for a thread's 128 first stacks), then, unless meta.unit_weights (every
 * counting weighs 1), every counting's weight. Before it, fg-hK, the block summed (only where
 * that is at most half its countings): each thread's count of distinct stacks, then thread by
 * thread those stacks' indexes (each less the previous one), then their weights summed. A
 * selection reads the summed blob of each block it covers whole, the countings of the at
 * most two it cuts, so opening costs no counting's decoding and a long selection little.
 * Columns of alike numbers compress best.
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
	if (n == 0)
		return;
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
	size_t bcols, nblocks; /* the time blocks: columns each, how many */
};

/* The cells a page may have at most: a day of 20 ms slices, with room. */
#define TV_MAX_CELLS (1u << 23)

/*
 * The countings a time block holds, about (when the columns hold alike numbers): what a short
 * selection decodes, against the blobs a long one inflates.
 */
#define TV_BLOCK_EVENTS 49152u
#define TV_MAX_BLOCKS 4096u

static void tv_blocks_init(struct tv_grid *g, const struct timeline *tl,
			   const struct timeview_opts *o)
{
	size_t per_col = tl->nev / g->ncols, bc;

	if (o->block_cols)
		bc = o->block_cols;
	else
		bc = (TV_BLOCK_EVENTS + per_col) / (per_col + 1);
	if (bc < (g->ncols + TV_MAX_BLOCKS - 1) / TV_MAX_BLOCKS)
		bc = (g->ncols + TV_MAX_BLOCKS - 1) / TV_MAX_BLOCKS;
	if (bc > g->ncols)
		bc = g->ncols;
	g->bcols = bc;
	g->nblocks = (g->ncols + bc - 1) / bc;
}

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
	tv_blocks_init(g, tl, o);
	return 0;
}

static uint64_t tv_cell(const struct tv_grid *g, const struct timeline *tl, size_t i)
{
	return (tl->t0 + tl->ev[i].t - g->origin) / g->cell_ns;
}

/*
 * Each thread's distinct stacks (count, then nodes, in order of first counting) into head,
 * every counting's index among its thread's into loc[0..nev), the most stacks a thread has
 * into *most. 0 or -ENOMEM.
 */
static int tv_local_stacks(struct tv_buf *head, uint32_t *loc, uint32_t *most,
			   const struct timeline *tl)
{
	uint32_t *local = malloc((tl->nnodes ? tl->nnodes : 1) * sizeof(*local));
	uint32_t *seen = malloc((tl->nev ? tl->nev : 1) * sizeof(*seen));
	int rv = -ENOMEM;

	*most = 0;
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
			loc[i] = local[node];
		}
		buf_varint(head, n);
		for (uint32_t k = 0; k < n; k++) {
			buf_varint(head, seen[k]);
			local[seen[k]] = UINT32_MAX; /* the next thread numbers its own */
		}
		if (n > *most)
			*most = n;
	}
	rv = head->err;
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

/* fg-tree (see the file's header): the frames, the stack tree, each thread's stacks. */
static int tv_tree(struct tv_buf *ev, struct tv_buf *tabs, const struct timeline *tl,
		   const struct stackagg *a, struct stackagg_labels *labels)
{
	size_t nf = stackagg_frame_count(a), at;
	unsigned char len[4] = { 0 };

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
	buf_put(ev, tabs->p, tabs->n);
	return ev->err;
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
	fprintf(f, ",\"block_cols\":%zu,\"blocks\":%zu", g->bcols, g->nblocks);
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

/* Writing the time blocks: where each thread is, what its stacks weigh in the block. */
struct tv_blocks {
	const struct timeline *tl;
	const struct tv_grid *g;
	const uint32_t *loc; /* every counting's stack among its thread's */
	bool unit;	     /* every counting weighs 1: no weights */
	size_t *cur, *cnt;   /* per thread: its first counting in the block, its count there */
	uint64_t *acc;	     /* per stack of a thread: its weight in the block */
	unsigned char *met;  /* ... whether the block has it */
	uint32_t *hit;	     /* the stacks the block has */
	struct tv_buf part[4], out;
};

static int u32_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

static void tv_parts_reset(struct tv_blocks *w)
{
	for (size_t i = 0; i < 4; i++)
		w->part[i].n = 0;
	w->out.n = 0;
}

/* The parts one after the other into w->out. 0 or -ENOMEM. */
static int tv_parts_join(struct tv_blocks *w)
{
	for (size_t i = 0; i < 4; i++) {
		if (w->part[i].err)
			return w->part[i].err;
		buf_put(&w->out, w->part[i].p, w->part[i].n);
	}
	return w->out.err;
}

/* fg-hK into w->out: each thread's stacks summed over the block. Returns how many. */
static size_t tv_hist(struct tv_blocks *w)
{
	size_t entries = 0;

	tv_parts_reset(w);
	for (size_t t = 0; t < w->tl->nthreads; t++) {
		size_t m = 0;
		uint32_t prev = 0;

		for (size_t i = w->cur[t]; i < w->cur[t] + w->cnt[t]; i++) {
			uint32_t k = w->loc[i];

			if (!w->met[k]) {
				w->met[k] = 1;
				w->hit[m++] = k;
			}
			w->acc[k] += w->tl->ev[i].weight;
		}
		qsort(w->hit, m, sizeof(*w->hit), u32_cmp);
		buf_varint(&w->part[0], m);
		for (size_t j = 0; j < m; j++) {
			uint32_t k = w->hit[j];

			buf_varint(&w->part[1], k - prev);
			buf_varint(&w->part[2], w->acc[k]);
			prev = k;
			w->acc[k] = 0;
			w->met[k] = 0;
		}
		entries += m;
	}
	return entries;
}

/* fg-sK into w->out: the block's countings, from its first cell c0. */
static void tv_samples(struct tv_blocks *w, uint64_t c0)
{
	tv_parts_reset(w);
	for (size_t t = 0; t < w->tl->nthreads; t++) {
		uint64_t prev = c0;

		buf_varint(&w->part[0], w->cnt[t]);
		for (size_t i = w->cur[t]; i < w->cur[t] + w->cnt[t]; i++) {
			uint64_t c = tv_cell(w->g, w->tl, i);

			buf_varint(&w->part[1], c - prev);
			buf_varint(&w->part[2], w->loc[i]);
			if (!w->unit)
				buf_varint(&w->part[3], w->tl->ev[i].weight);
			prev = c;
		}
	}
}

/* Block k: fg-hK when it pays, then fg-sK; nothing when it has no counting. */
static int tv_block(FILE *f, struct tv_blocks *w, size_t k)
{
	const struct timeline *tl = w->tl;
	uint64_t c0 = (uint64_t)k * w->g->bcols * w->g->rows,
		 c1 = c0 + (uint64_t)w->g->bcols * w->g->rows;
	size_t total = 0;
	char id[32];
	int rv;

	for (size_t t = 0; t < tl->nthreads; t++) {
		size_t end = tl->threads[t].first + tl->threads[t].n, i = w->cur[t];

		while (i < end && tv_cell(w->g, tl, i) < c1)
			i++;
		w->cnt[t] = i - w->cur[t];
		total += w->cnt[t];
	}
	if (total == 0)
		return 0;
	if (tv_hist(w) * 2 <= total) {
		snprintf(id, sizeof(id), "fg-h%zu", k);
		if ((rv = tv_parts_join(w)) != 0 || (rv = put_blob(f, id, &w->out, true)) != 0)
			return rv;
	}
	tv_samples(w, c0);
	snprintf(id, sizeof(id), "fg-s%zu", k);
	if ((rv = tv_parts_join(w)) != 0 || (rv = put_blob(f, id, &w->out, true)) != 0)
		return rv;
	for (size_t t = 0; t < tl->nthreads; t++)
		w->cur[t] += w->cnt[t];
	return 0;
}

/* Every time block's blobs, in time order. 0, -ENOMEM or -EIO. */
static int tv_put_blocks(FILE *f, const struct timeline *tl, const struct tv_grid *g,
			 const uint32_t *loc, uint32_t most)
{
	struct tv_blocks w = { .tl = tl, .g = g, .loc = loc, .unit = tv_unit_weights(tl) };
	size_t nt = tl->nthreads ? tl->nthreads : 1, ns = most ? most : 1;
	int rv = -ENOMEM;

	w.cur = calloc(nt, sizeof(*w.cur));
	w.cnt = calloc(nt, sizeof(*w.cnt));
	w.acc = calloc(ns, sizeof(*w.acc));
	w.met = calloc(ns, 1);
	w.hit = calloc(ns, sizeof(*w.hit));
	if (w.cur && w.cnt && w.acc && w.met && w.hit) {
		for (size_t t = 0; t < tl->nthreads; t++)
			w.cur[t] = tl->threads[t].first;
		rv = 0;
		for (size_t k = 0; k < g->nblocks && rv == 0; k++)
			rv = tv_block(f, &w, k);
	}
	for (size_t i = 0; i < 4; i++)
		free(w.part[i].p);
	free(w.out.p);
	free(w.cur);
	free(w.cnt);
	free(w.acc);
	free(w.met);
	free(w.hit);
	return rv;
}

int timeview_write_html(const struct stackagg *a, const struct timeview_opts *o, FILE *f)
{
	struct stackagg_labels *labels = stackagg_labels_new(a);
	struct timeline tl;
	struct tv_grid g;
	struct tv_buf raw = { 0 }, tree = { 0 }, tabs = { 0 };
	uint32_t *loc = NULL, most = 0;
	int rv;

	if (!labels)
		return -ENOMEM;
	rv = timeline_build(&tl, a, labels, 0, o->thread_root);
	if (rv != 0)
		goto out_labels;
	loc = malloc((tl.nev ? tl.nev : 1) * sizeof(*loc));
	if (!loc) {
		rv = -ENOMEM;
		goto out;
	}
	if ((rv = tv_grid_init(&g, &tl, o)) != 0 || (rv = tv_cells(&raw, &tl, &g)) != 0 ||
	    (rv = tv_local_stacks(&tabs, loc, &most, &tl)) != 0 ||
	    (rv = tv_tree(&tree, &tabs, &tl, a, labels)) != 0)
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
	if ((rv = put_blob(f, "fg-tree", &tree, true)) != 0 ||
	    (rv = tv_put_blocks(f, &tl, &g, loc, most)) != 0)
		goto out;
	fputs("</body></html>\n", f);
	rv = ferror(f) ? -EIO : 0;
out:
	free(raw.p);
	free(tree.p);
	free(tabs.p);
	free(loc);
	timeline_fini(&tl);
out_labels:
	stackagg_labels_free(labels);
	return rv;
}
