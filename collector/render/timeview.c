// SPDX-License-Identifier: MIT
/*
 * timeview.c - a recording as one self-contained HTML page that shows when each stack ran
 * (timeview.h): the page's script and style (timeview.js, timeview.css, embedded at build
 * time), a JSON head, and the data as gzip in base64 that the page inflates itself
 * (DecompressionStream), so nothing is fetched.
 *
 * The data, after inflating: u32 (little-endian) L, then L bytes of JSON {"frames": [labels]},
 * then unsigned LEB128 varints: for each node after the root, its parent and frame; for each
 * counting, thread by thread (meta.threads gives their counts) and by time, the ticks
 * (TV_TICK_NS, meta.tick_us) since the thread's previous one (the first: since t0); then, thread by
 * thread, the number of its distinct stacks and their nodes; then every counting's stack as an
 * index into its thread's (small numbers: one byte for a thread's 128 first stacks); then every
 * counting's weight. Columns of alike numbers compress best.
 *
 * Invariant: every string that reaches the page's markup goes through json_str, which leaves
 * no '<', '>' or '&' unescaped, so a frame or thread name cannot end a script element.
 */
#include "timeview.h"

#include <errno.h>
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
 * The page's unit of time: 0.1 ms, 200 to a heatmap slice and 100 to a sampling period at 99 Hz.
 * Finer adds a byte to most countings' times (a page of 3 million CPU samples grows by a third).
 */
#define TV_TICK_NS 100000ull

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

/*
 * Each thread's distinct stacks (count, then nodes, in order of first counting), then every
 * counting's index among its thread's. 0 or -ENOMEM.
 */
static int tv_local_stacks(struct tv_buf *b, const struct timeline *tl)
{
	uint32_t *local = malloc((tl->nnodes ? tl->nnodes : 1) * sizeof(*local));
	uint32_t *seen = malloc((tl->nev ? tl->nev : 1) * sizeof(*seen));
	uint32_t *idx = calloc(tl->nev ? tl->nev : 1, sizeof(*idx));
	int rv = -ENOMEM;

	if (!local || !seen || !idx)
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
			idx[i] = local[node];
		}
		buf_varint(b, n);
		for (uint32_t k = 0; k < n; k++) {
			buf_varint(b, seen[k]);
			local[seen[k]] = UINT32_MAX; /* the next thread numbers its own */
		}
	}
	for (size_t i = 0; i < tl->nev; i++)
		buf_varint(b, idx[i]);
	rv = b->err;
out:
	free(local);
	free(seen);
	free(idx);
	return rv;
}

/* The uncompressed data (see the file's header). */
static int tv_data(struct tv_buf *b, const struct timeline *tl, const struct stackagg *a,
		   struct stackagg_labels *labels)
{
	size_t nf = stackagg_frame_count(a), at;
	unsigned char len[4] = { 0 };
	int rv;

	buf_put(b, len, 4);
	at = b->n;
	buf_put(b, "{\"frames\":[", 11);
	for (size_t i = 0; i < nf; i++) {
		const char *s = stackagg_labels_get(labels, (uint32_t)i);

		if (!s)
			return -ENOMEM;
		if (i)
			buf_put(b, ",", 1);
		buf_json_str(b, s);
	}
	buf_put(b, "]}", 2);
	if (b->err)
		return b->err;
	for (size_t i = 0, l = b->n - at; i < 4; i++)
		b->p[at - 4 + i] = (unsigned char)(l >> (8 * i));
	for (size_t i = 1; i < tl->nnodes; i++) {
		buf_varint(b, tl->nodes[i].parent);
		buf_varint(b, tl->nodes[i].frame);
	}
	for (size_t t = 0; t < tl->nthreads; t++) {
		const struct timeline_thread *th = &tl->threads[t];
		uint64_t prev = 0;

		for (size_t i = th->first; i < th->first + th->n; i++) {
			uint64_t tick = tl->ev[i].t / TV_TICK_NS;

			buf_varint(b, tick - prev);
			prev = tick;
		}
	}
	if ((rv = tv_local_stacks(b, tl)) != 0)
		return rv;
	for (size_t i = 0; i < tl->nev; i++)
		buf_varint(b, tl->ev[i].weight);
	return b->err;
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

static void put_meta(FILE *f, const struct timeline *tl, const struct timeview_opts *o)
{
	fputs("{\"title\":", f);
	timeview_json_str(f, o->title ? o->title : "");
	fputs(",\"subtitle\":", f);
	timeview_json_str(f, o->subtitle ? o->subtitle : "");
	fputs(",\"unit\":", f);
	timeview_json_str(f, o->unit ? o->unit : "samples");
	fprintf(f, ",\"tick_us\":%llu", TV_TICK_NS / 1000);
	fprintf(f, ",\"t0\":%llu,\"nodes\":%zu,\"events\":%zu,\"untimed\":%llu,\"threads\":[",
		(unsigned long long)tl->t0, tl->nnodes, tl->nev, (unsigned long long)tl->untimed);
	for (size_t i = 0; i < tl->nthreads; i++) {
		fprintf(f, "%s[%u,", i ? "," : "", tl->threads[i].tid);
		timeview_json_str(f, tl->threads[i].name);
		fprintf(f, ",%zu]", tl->threads[i].n);
	}
	fputs("]}", f);
}

int timeview_write_html(const struct stackagg *a, const struct timeview_opts *o, FILE *f)
{
	struct stackagg_labels *labels = stackagg_labels_new(a);
	struct timeline tl;
	struct tv_buf raw = { 0 }, gz = { 0 };
	int rv;

	if (!labels)
		return -ENOMEM;
	rv = timeline_build(&tl, a, labels, 0, o->thread_root);
	if (rv != 0)
		goto out_labels;
	if ((rv = tv_data(&raw, &tl, a, labels)) != 0 || (rv = tv_gzip(&gz, raw.p, raw.n)) != 0)
		goto out;
	free(raw.p);
	raw.p = NULL;
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n<title>",
	      f);
	(void)flame_svg_escape(f, o->title ? o->title : "time view",
			       strlen(o->title ? o->title : "time view"), false);
	fputs("</title>\n<style>\n", f);
	fwrite(timeview_css, 1, timeview_css_len, f);
	fputs("</style></head>\n<body>\n<script id=\"fg-meta\" type=\"application/json\">", f);
	put_meta(f, &tl, o);
	fputs("</script>\n<script id=\"fg-data\" type=\"application/octet-stream\">\n", f);
	put_base64(f, gz.p, gz.n);
	fputs("</script>\n<script>\n", f);
	fwrite(timeview_js, 1, timeview_js_len, f);
	fputs("</script>\n</body></html>\n", f);
	rv = ferror(f) ? -EIO : 0;
out:
	free(raw.p);
	free(gz.p);
	timeline_fini(&tl);
out_labels:
	stackagg_labels_free(labels);
	return rv;
}
