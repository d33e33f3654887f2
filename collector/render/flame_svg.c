// SPDX-License-Identifier: MIT
/*
 * flame_svg.c - SVG output: header, our interactive script (flamegraph.js, embedded at build
 * time), then one <g> per laid-out frame.
 *
 * Numbers are formatted exactly as flamegraph.pl formats them (%0.1f coordinates computed from
 * the same doubles, %.15g for Perl's default stringification, %.0f counts with thousands
 * separators), so frame elements compare equal to Perl's output.
 *
 * Invariant: every byte that comes from input goes through w_esc() or w_js_str(); nothing from
 * a frame name or an option reaches the document unescaped.
 */
#include "flame_svg.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "flame_layout.h"
#include "flamegraph_js.h"
#include "fgfree.h"
#include "util.h"

#define XPAD 10.0
#define FRAMEPAD 1.0
#define SEARCH_COLOR "rgb(230,0,230)"
#define WBUF (1u << 20)

struct w {
	FILE *f;
	char *buf;
	size_t n;
	bool err;
};

static void w_flush(struct w *w)
{
	if (w->n && fwrite(w->buf, 1, w->n, w->f) != w->n)
		w->err = true;
	w->n = 0;
}

static void w_put_slow(struct w *w, const char *s, size_t n)
{
	w_flush(w);
	if (n > WBUF) {
		if (fwrite(s, 1, n, w->f) != n)
			w->err = true;
		return;
	}
	memcpy(w->buf, s, n);
	w->n = n;
}

/* Inlined so that literal lengths are constants and short copies become moves. */
static inline __attribute__((always_inline)) void w_put(struct w *w, const char *s, size_t n)
{
	if (__builtin_expect(w->n + n > WBUF, 0)) {
		w_put_slow(w, s, n);
		return;
	}
	memcpy(w->buf + w->n, s, n);
	w->n += n;
}

static inline __attribute__((always_inline)) void w_str(struct w *w, const char *s)
{
	w_put(w, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) static void w_fmt(struct w *w, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (WBUF - w->n < 512)
		w_flush(w);
	va_start(ap, fmt);
	k = vsnprintf(w->buf + w->n, WBUF - w->n, fmt, ap);
	va_end(ap);
	if (k < 0) {
		w->err = true;
		return;
	}
	if ((size_t)k >= WBUF - w->n) {
		char *tmp = malloc((size_t)k + 1);

		if (!tmp) {
			w->err = true;
			return;
		}
		va_start(ap, fmt);
		vsnprintf(tmp, (size_t)k + 1, fmt, ap);
		va_end(ap);
		w_put(w, tmp, (size_t)k);
		free(tmp);
		return;
	}
	w->n += (size_t)k;
}

static const char REPL[] = "\xef\xbf\xbd"; /* U+FFFD */

/*
 * Escape s[0..len) into w; stop after max characters (code points, an invalid byte counting as
 * one). Returns the number of characters written.
 */
static size_t w_esc(struct w *w, const char *s, size_t len, bool attr, size_t max)
{
	const char *p = s, *end = s + len;
	size_t chars = 0;

	while (p < end && chars < max) {
		const char *run = p, *ent;
		long cp;
		size_t k;

		/* bulk-copy printable ASCII that needs no escaping */
		while (p < end && chars < max && (unsigned char)*p >= 0x20 &&
		       (unsigned char)*p < 0x80 && *p != '&' && *p != '<' && *p != '>' &&
		       !(attr && *p == '"')) {
			p++;
			chars++;
		}
		w_put(w, run, (size_t)(p - run));
		if (p == end || chars == max)
			break;
		k = flame_utf8_next(p, end, &cp);
		chars++;
		if ((ent = fg_html_entity(cp)) != NULL)
			w_str(w, ent);
		else if (cp < 0 || (cp < 0x20 && cp != '\t') || cp == 0xfffe || cp == 0xffff)
			w_str(w, REPL);
		else
			w_put(w, p, k);
		p += k;
	}
	return chars;
}

static size_t utf8_chars(const char *s, size_t len)
{
	const char *p = s, *end = s + len;
	size_t n = 0;

	while (p < end) {
		long cp;

		p += flame_utf8_next(p, end, &cp);
		n++;
	}
	return n;
}

/* A JavaScript string literal that is also safe inside CDATA (no '<', '>', ']' or quotes). */
static void w_js_str(struct w *w, const char *s)
{
	const char *p = s, *end = s + strlen(s);

	w_put(w, "\"", 1);
	while (p < end) {
		long cp;
		size_t k = flame_utf8_next(p, end, &cp);

		if (cp < 0)
			cp = 0xfffd;
		if ((cp >= '0' && cp <= '9') || ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') ||
		    cp == ' ' || cp == ':' || cp == '.' || cp == ',' || cp == '_' || cp == '-')
			w_put(w, p, 1);
		else if (cp < 0x10000)
			w_fmt(w, "\\u%04lx", cp);
		else
			w_fmt(w, "\\u%04lx\\u%04lx", 0xd800 + ((cp - 0x10000) >> 10),
			      0xdc00 + ((cp - 0x10000) & 0x3ff));
		p += k;
	}
	w_put(w, "\"", 1);
}

int flame_svg_escape(FILE *out, const char *s, size_t len, bool attr)
{
	struct w w = { .f = out, .buf = malloc(WBUF) };

	if (!w.buf)
		return -ENOMEM;
	w_esc(&w, s, len, attr, SIZE_MAX);
	w_flush(&w);
	free(w.buf);
	return w.err ? -EIO : 0;
}

void flame_opts_init(struct flame_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->countname = "samples";
	o->nametype = "Function:";
	o->fonttype = "Verdana";
	o->width = 1200;
	o->frameheight = 16;
	o->fontsize = 12;
	o->fontwidth = 0.59;
	o->minwidth = 0.1;
	o->palette = FLAME_PALETTE_HOT;
}

/* Unsigned integer u into buf (no NUL); returns the length. */
static size_t utoa(char *buf, uint64_t u)
{
	char tmp[24];
	size_t n = 0, k;

	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	for (k = 0; k < n; k++)
		buf[k] = tmp[n - 1 - k];
	return n;
}

/*
 * printf("%.<dec>f", v) for dec 0..2 into buf, without printf's slow path; returns the length
 * and, if val is not NULL, the value of the printed decimal (what strtod() would read back).
 * The product v * 10^dec is carried exactly as r + e (fma gives the rounding error), so the
 * rounding is half to even on the exact value, as glibc's printf does. Falls back to snprintf
 * off the fast range.
 */
static size_t fixed_len(char *buf, double v, int dec, double *val)
{
	static const double scale[] = { 1, 10, 100 };
	double r, e, fl, g;
	uint64_t u;
	size_t n = 0;
	bool neg;

	if (!(fabs(v) < 1e9)) {
		n = (size_t)snprintf(buf, 40, "%.*f", dec, v);
		if (n > 39)
			n = 39; /* truncated (only from library callers' extreme options) */
		if (val)
			*val = strtod(buf, NULL);
		return n;
	}
	neg = signbit(v);
	if (neg) {
		buf[n++] = '-';
		v = -v;
	}
	r = v * scale[dec];
	e = fma(v, scale[dec], -r); /* exact: v * 10^dec == r + e */
	fl = floor(r);
	/*
	 * r - fl is exact; minus 0.5 too when it is >= 0.25 (Sterbenz), and below that the sum
	 * is clearly negative. One rounded addition keeps the sign of the exact fraction - 0.5.
	 */
	g = ((r - fl) - 0.5) + e;
	u = (uint64_t)fl;
	if (g > 0 || (g == 0 && (u & 1)))
		u++;
	if (dec == 0) {
		n += utoa(buf + n, u);
	} else {
		uint64_t p = dec == 1 ? 10 : 100, frac = u % p;

		n += utoa(buf + n, u / p);
		buf[n++] = '.';
		if (dec == 2)
			buf[n++] = (char)('0' + frac / 10);
		buf[n++] = (char)('0' + frac % 10);
	}
	buf[n] = '\0';
	/* u and 10^dec are exact doubles, so one IEEE division rounds as strtod does */
	if (val)
		*val = (neg ? -1.0 : 1.0) * ((double)u / scale[dec]);
	return n;
}

/* Perl's default number stringification (%.15g), fast for integers and halves. */
static const char *num(char *buf, double v);

/* num() and the length of what it wrote. */
static size_t num_len(char *buf, double v)
{
	return strlen(num(buf, v));
}

static const char *num(char *buf, double v)
{
	if (fabs(v) < 1e14 && v * 2 == floor(v * 2)) {
		size_t n = 0;

		if (v < 0) {
			buf[n++] = '-';
			v = -v;
		}
		n += utoa(buf + n, (uint64_t)v);
		if (v != floor(v)) {
			memcpy(buf + n, ".5", 2);
			n += 2;
		}
		buf[n] = '\0';
		return buf;
	}
	snprintf(buf, 32, "%.15g", v);
	return buf;
}

/* "%.0f" with thousands separators, as flamegraph.pl titles print counts. */
static void commas(char *out, size_t cap, const char *digits)
{
	size_t n = strlen(digits), o = 0, lead = 0;

	if (digits[0] == '-' || digits[0] == '+')
		out[o++] = digits[lead++];
	for (size_t i = lead; i < n && o + 2 < cap; i++) {
		out[o++] = digits[i];
		if (i + 1 < n && (n - 1 - i) % 3 == 0)
			out[o++] = ',';
	}
	out[o] = '\0';
}

static size_t strip_annotation(const char *s, size_t len)
{
	if (len >= 4 && s[len - 1] == ']' && s[len - 3] == '[' && s[len - 4] == '_' &&
	    (s[len - 2] == 'k' || s[len - 2] == 'w' || s[len - 2] == 'i' || s[len - 2] == 'j'))
		return len - 4;
	return len;
}

/* Sanitized copies of option text that lands in a CSS rule and in an XML comment. */
static void w_font(struct w *w, const char *font)
{
	for (const char *p = font; *p; p++)
		if ((*p >= '0' && *p <= '9') || ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z') ||
		    strchr(" ,-_'", *p))
			w_put(w, p, 1);
}

static void w_comment(struct w *w, const char *s)
{
	size_t len = strlen(s), i = 0;

	while (i < len) {
		size_t run = strcspn(s + i, "-");

		w_esc(w, s + i, run, false, SIZE_MAX);
		i += run;
		/* "--" may not appear in a comment, nor a '-' right before its end */
		for (; i < len && s[i] == '-'; i++)
			w_put(w, (i + 1 < len && s[i + 1] != '-') ? "-" : "- ",
			      i + 1 < len && s[i + 1] != '-' ? 1 : 2);
	}
}

static void w_header(struct w *w, double width, double height, const char *notes)
{
	char a[32], b[32];

	w_fmt(w,
	      "<?xml version=\"1.0\" standalone=\"no\"?>\n"
	      "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
	      "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n"
	      "<svg version=\"1.1\" width=\"%s\" height=\"%s\" onload=\"init(evt)\" "
	      "viewBox=\"0 0 %s %s\" xmlns=\"http://www.w3.org/2000/svg\" "
	      "xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n"
	      "<!-- Flame graph by fgcollect: the frames of FlameGraph's flamegraph.pl "
	      "(https://github.com/brendangregg/FlameGraph); click to zoom, Ctrl-F to search. -->\n",
	      num(a, width), num(b, height), a, b);
	w_str(w, "<!-- NOTES: ");
	if (notes)
		w_comment(w, notes);
	w_str(w, " -->\n");
}

static void w_text(struct w *w, const char *id, double x, double y, const char *s,
		   const char *extra)
{
	char ys[32];

	w_fmt(w, "<text id=\"%s\" x=\"%.2f\" y=\"%s\" %s>", id, x, num(ys, y), extra);
	w_esc(w, s, strlen(s), false, SIZE_MAX);
	w_str(w, "</text>\n");
}

static int render_error(struct w *w, const struct flame_opts *o)
{
	double h = o->fontsize * 5;

	w_header(w, o->width, h, o->notes);
	w_text(w, "error", (int)(o->width / 2), o->fontsize * 2,
	       "ERROR: no stack counts found in the input.", "");
	w_str(w, "</svg>\n");
	return -ENODATA;
}

/* A cached "rgb(r,g,b)" with r, g, b < 1000; len 0 = not yet. */
struct cstr {
	char s[23];
	uint8_t len;
};

/* A number as num() or fixed_len() prints it (<= 39 bytes). */
struct nstr {
	char s[39];
	uint8_t len;
};

/* What every frame at one depth shares: rect y and height, text y; y.len 0 = not yet. */
struct ystr {
	struct nstr y, h, ty;
};

struct ctx {
	const struct flame *f;
	const struct flame_opts *o;
	double timemax, wpt, imageheight, ypad2, maxdelta;
	struct cstr *col; /* per name, NULL if out of memory (then computed per frame) */
	struct ystr *ys;  /* per depth, computed at first use; NULL if out of memory */
};

/* "rgb(r,g,b)" of a frame into col; returns its length. Once per name: the palette is a pure
 * function of the name. */
static size_t frame_color(const struct ctx *c, uint32_t node, const char *name, size_t len,
			  char col[FLAME_COLOR_MAX])
{
	struct cstr *slot = c->col ? &c->col[c->f->nodes[node].name] : NULL;
	int rgb[3];
	size_t n = 0;

	if (slot && slot->len) {
		memcpy(col, slot->s, sizeof(slot->s));
		return slot->len;
	}
	flame_palette_rgb(c->o->palette, c->o->hash, name, len, rgb);
	if (rgb[0] < 0 || rgb[1] < 0 || rgb[2] < 0 || rgb[0] > 999 || rgb[1] > 999 || rgb[2] > 999)
		return (size_t)snprintf(col, FLAME_COLOR_MAX, "rgb(%d,%d,%d)", rgb[0], rgb[1],
					rgb[2]);
	memcpy(col, "rgb(", 4);
	n = 4;
	for (int k = 0; k < 3; k++) {
		n += utoa(col + n, (uint64_t)rgb[k]);
		col[n++] = k < 2 ? ',' : ')';
	}
	col[n] = '\0';
	if (slot) {
		memcpy(slot->s, col, n + 1);
		slot->len = (uint8_t)n;
	}
	return n;
}

static void nstr_set(struct nstr *ns, const char *s, size_t n)
{
	if (n > sizeof(ns->s))
		n = sizeof(ns->s);
	memcpy(ns->s, s, n);
	ns->len = (uint8_t)n;
}

/* The y strings of frames at depth d; computed from the same doubles as before. */
static const struct ystr *depth_strings(const struct ctx *c, uint32_t depth, struct ystr *tmp)
{
	const struct flame_opts *o = c->o;
	struct ystr *ys = c->ys ? &c->ys[depth] : tmp;
	double y1, y2;
	char s[64];

	if (c->ys && ys->y.len)
		return ys;
	if (!o->inverted) {
		y1 = c->imageheight - c->ypad2 - (depth + 1) * (double)o->frameheight + FRAMEPAD;
		y2 = c->imageheight - c->ypad2 - depth * (double)o->frameheight;
	} else {
		y1 = o->fontsize * 3 + depth * (double)o->frameheight;
		y2 = o->fontsize * 3 + (depth + 1) * (double)o->frameheight - FRAMEPAD;
	}
	nstr_set(&ys->y, s, num_len(s, y1));
	nstr_set(&ys->h, s, fixed_len(s, y2 - y1, 1, NULL));
	nstr_set(&ys->ty, s, num_len(s, 3 + (y1 + y2) / 2));
	return ys;
}

/* A frame's tooltip: "name (N samples, P%[; +D%])", or the root's "all (N samples, 100%)". */
static void w_title(struct w *w, const struct ctx *c, const struct flame_frame *fr,
		    const char *name, size_t len, const char *count, double samples)
{
	const struct flame_opts *o = c->o;
	char n1[40];

	w_str(w, "<g >\n<title>");
	if (fr->node == 0) {
		w_str(w, "all (");
		w_str(w, count);
		w_put(w, " ", 1);
		w_esc(w, o->countname, strlen(o->countname), true, SIZE_MAX);
		w_str(w, ", 100%)");
	} else {
		w_esc(w, name, strip_annotation(name, len), true, SIZE_MAX);
		w_str(w, " (");
		w_str(w, count);
		w_put(w, " ", 1);
		w_esc(w, o->countname, strlen(o->countname), true, SIZE_MAX);
		w_str(w, ", ");
		w_put(w, n1, fixed_len(n1, 100 * samples / c->timemax, 2, NULL));
		w_put(w, "%", 1);
		if (c->f->self_a) {
			double d = flame_frame_delta(c->f, fr);

			if (o->negate)
				d = -d;
			if (d == 0)
				d = 0; /* Perl's integer 0 has no sign: never print -0.00 */
			w_fmt(w, "; %s%.2f%%", d > 0 ? "+" : "", 100 * d / c->timemax);
		}
		w_put(w, ")", 1);
	}
	w_str(w, "</title>");
}

/* A frame's fill into col: flamegraph.pl's greys for "--" and "-", else palette or delta. */
static size_t frame_fill(const struct ctx *c, const struct flame_frame *fr, const char *name,
			 size_t len, char col[FLAME_COLOR_MAX])
{
	if (len == 2 && !memcmp(name, "--", 2)) {
		strcpy(col, "rgb(160,160,160)");
	} else if (len == 1 && name[0] == '-') {
		strcpy(col, "rgb(200,200,200)");
	} else if (c->f->self_a) {
		flame_palette_delta(flame_frame_delta(c->f, fr), c->maxdelta, c->o->negate, col);
	} else {
		return frame_color(c, fr->node, name, len, col);
	}
	return strlen(col);
}

static void w_frame(struct w *w, const struct ctx *c, const struct flame_frame *fr)
{
	const struct flame_opts *o = c->o;
	bool root = fr->node == 0;
	size_t len = 0;
	const char *name = root ? "" : flame_node_name(c->f, fr->node, &len);
	double etime = root ? c->timemax : fr->start + fr->width;
	double x1 = XPAD + fr->start * c->wpt, x2 = XPAD + etime * c->wpt;
	double samples, v1, v2;
	char s[64], s2[64], col[FLAME_COLOR_MAX], n1[40], n2[40];
	struct ystr ytmp;
	const struct ystr *ys = depth_strings(c, fr->depth, &ytmp);
	size_t coln, k1;
	int chars;

	fixed_len(s, etime - fr->start, 0, &samples);
	commas(s2, sizeof(s2), s);
	w_title(w, c, fr, name, len, s2, samples);
	coln = frame_fill(c, fr, name, len, col);
	k1 = fixed_len(n1, x1, 1, &v1);
	fixed_len(n2, x2, 1, &v2);
	w_str(w, "<rect x=\"");
	w_put(w, n1, k1);
	w_str(w, "\" y=\"");
	w_put(w, ys->y.s, ys->y.len);
	w_str(w, "\" width=\"");
	w_put(w, s, fixed_len(s, v2 - v1, 1, NULL));
	w_str(w, "\" height=\"");
	w_put(w, ys->h.s, ys->h.len);
	w_str(w, "\" fill=\"");
	w_put(w, col, coln);
	w_str(w, "\" rx=\"2\" ry=\"2\" />\n<text  x=\"");
	w_put(w, s, fixed_len(s, x1 + 3, 2, NULL));
	w_str(w, "\" y=\"");
	w_put(w, ys->ty.s, ys->ty.len);
	w_str(w, "\" >");
	chars = (int)((x2 - x1) / (o->fontsize * o->fontwidth));
	if (chars >= 3) {
		len = strip_annotation(name, len);
		if ((size_t)chars < utf8_chars(name, len)) {
			w_esc(w, name, len, false, (size_t)chars - 2);
			w_put(w, "..", 2);
		} else {
			w_esc(w, name, len, false, SIZE_MAX);
		}
	}
	w_str(w, "</text>\n</g>\n");
}

/*
 * Lay f out and size the image: c->wpt, c->imageheight, c->maxdelta, the caches. 0, or the
 * negative errno of flame_layout_build.
 */
static int ctx_init(struct ctx *c, struct flame_layout *lay)
{
	const struct flame *f = c->f;
	const struct flame_opts *o = c->o;
	double fs = o->fontsize, ypad1 = fs * 3, ypad3 = fs * 2, minw;
	int rv;

	c->wpt = (o->width - 2 * XPAD) / c->timemax;
	minw = o->minwidth_pct ? c->timemax * o->minwidth / 100 : o->minwidth / c->wpt;
	if ((rv = flame_layout_build(f, minw, o->pl_compat, lay)) != 0)
		return rv;
	c->imageheight = (lay->depthmax + 1) * (double)o->frameheight + ypad1 + c->ypad2;
	if (o->subtitle && *o->subtitle)
		c->imageheight += ypad3;
	c->maxdelta = 1;
	/* a missing colour cache only costs time */
	if (!f->self_a)
		c->col = calloc(f->nnames, sizeof(*c->col));
	c->ys = calloc((size_t)lay->depthmax + 1, sizeof(*c->ys));
	if (f->self_a) {
		for (size_t i = 0; i < f->nnodes; i++) {
			double d = fabs(f->nodes[i].self - f->self_a[i]);

			if ((f->nodes[i].flags & FLAME_NODE_LEAF) && d > c->maxdelta)
				c->maxdelta = d;
		}
	}
	return 0;
}

/* Everything before the frames: header, style, script, background, titles, buttons. */
static void w_head(struct w *w, const struct ctx *c, const char *bg1, const char *bg2)
{
	const struct flame_opts *o = c->o;
	double fs = o->fontsize;
	const char *title = o->title;
	char a[32], b[32];

	if (!title)
		title = (c->f->flags & FLAME_CHART) ? "Flame Chart"
			: o->inverted		    ? "Icicle Graph"
						    : "Flame Graph";
	w_header(w, o->width, c->imageheight, o->notes);
	w_fmt(w,
	      "<defs>\n\t<linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\" >\n"
	      "\t\t<stop stop-color=\"%s\" offset=\"5%%\" />\n"
	      "\t\t<stop stop-color=\"%s\" offset=\"95%%\" />\n\t</linearGradient>\n</defs>\n"
	      "<style type=\"text/css\">\n\ttext { font-family:",
	      bg1, bg2);
	w_font(w, o->fonttype);
	w_fmt(w,
	      "; font-size:%spx; fill:rgb(0,0,0); }\n"
	      "\t#search, #ignorecase { opacity:0.1; cursor:pointer; }\n"
	      "\t#search:hover, #search.show, #ignorecase:hover, #ignorecase.show { opacity:1; }\n"
	      "\t#subtitle { text-anchor:middle; fill:rgb(160,160,160); }\n"
	      "\t#title { text-anchor:middle; font-size:%spx; }\n"
	      "\t#unzoom { cursor:pointer; }\n"
	      "\t#frames > *:hover { stroke:black; stroke-width:0.5; cursor:pointer; }\n"
	      "\t.hide { display:none; }\n\t.parent { opacity:0.5; }\n</style>\n"
	      "<script type=\"text/ecmascript\">\n<![CDATA[\n",
	      num(a, fs), num(b, fs + 5));
	w_fmt(w,
	      "\tvar cfg = { xpad: %g, fontsize: %.17g, fontwidth: %.17g, inverted: %s,\n\t\tnametype: ",
	      XPAD, fs, o->fontwidth, o->inverted ? "true" : "false");
	w_js_str(w, o->nametype);
	w_str(w, ", countname: ");
	w_js_str(w, o->countname);
	w_str(w, ", searchcolor: \"" SEARCH_COLOR "\" };\n");
	w_put(w, flamegraph_js, flamegraph_js_len);
	w_str(w, "]]>\n</script>\n");
	w_fmt(w,
	      "<rect x=\"0.0\" y=\"0\" width=\"%.1f\" height=\"%.1f\" fill=\"url(#background)\"  />\n",
	      (double)o->width, c->imageheight);
	w_text(w, "title", (int)(o->width / 2), fs * 2, title, "");
	if (o->subtitle && *o->subtitle)
		w_text(w, "subtitle", (int)(o->width / 2), fs * 4, o->subtitle, "");
	w_text(w, "details", XPAD, c->imageheight - c->ypad2 / 2, " ", "");
	w_text(w, "unzoom", XPAD, fs * 2, "Reset Zoom", "class=\"hide\"");
	w_text(w, "search", o->width - XPAD - 100, fs * 2, "Search", "");
	w_text(w, "ignorecase", o->width - XPAD - 16, fs * 2, "ic", "");
	w_text(w, "matched", o->width - XPAD - 100, c->imageheight - c->ypad2 / 2, " ",
	       "class=\"hide\"");
}

static void w_frames(struct w *w, const struct ctx *c, const struct flame_layout *lay)
{
	const struct flame *f = c->f;

	w_str(w, "<g id=\"frames\">\n");
	for (size_t i = 0; i < lay->n; i++) {
		/*
		 * Frames come in tree order, their nodes and names are all over memory: fetch
		 * node, name record and name bytes a few frames ahead, one level per distance.
		 */
		if (i + 16 < lay->n)
			__builtin_prefetch(&f->nodes[lay->frames[i + 16].node]);
		if (i + 8 < lay->n)
			__builtin_prefetch(&f->names[f->nodes[lay->frames[i + 8].node].name]);
		if (i + 4 < lay->n) {
			const struct flame_name *nm =
				&f->names[f->nodes[lay->frames[i + 4].node].name];

			__builtin_prefetch(f->pool + nm->off);
			__builtin_prefetch(f->pool + nm->off + nm->len);
		}
		w_frame(w, c, &lay->frames[i]);
	}
	w_str(w, "</g>\n</svg>\n");
}

int flame_render_svg(const struct flame *f, const struct flame_opts *o, FILE *out)
{
	struct w w = { .f = out };
	struct flame_layout lay = { 0 };
	struct ctx c = { .f = f, .o = o };
	char bg1[8], bg2[8];
	int rv;

	if (o->width <= 2 * XPAD || !o->frameheight || !(o->fontsize > 0) || !(o->fontwidth > 0) ||
	    !(o->minwidth >= 0) || !o->countname || !o->nametype || !o->fonttype ||
	    flame_palette_bg(o->palette, o->bgcolors, bg1, bg2) != 0)
		return -EINVAL;
	if (!(w.buf = malloc(WBUF)))
		return -ENOMEM;
	c.timemax = f->time;
	c.ypad2 = o->fontsize * 2 + 10;
	if (!(c.timemax > 0)) {
		rv = render_error(&w, o);
	} else if ((rv = ctx_init(&c, &lay)) == 0) {
		w_head(&w, &c, bg1, bg2);
		w_frames(&w, &c, &lay);
	}
	w_flush(&w);
	if (fflush(out) != 0 || ferror(out))
		w.err = true;
	if (w.err && (rv == 0 || rv == -ENODATA))
		rv = -EIO;
	flame_layout_fini(&lay);
	FG_FREE_ALL(c.col, c.ys, w.buf);
	return rv;
}
