/* SPDX-License-Identifier: MIT */
/*
 * flame_svg.h - render a struct flame as an interactive SVG, flamegraph.pl compatible.
 *
 * Every frame is `<g><title>NAME (N samples, P%)</title><rect .../><text ...>LABEL</text></g>`
 * inside `<g id="frames">`, with the coordinates, colours, titles and labels flamegraph.pl
 * computes for the same input and options (only the frame order differs: ours is depth-first,
 * Perl's is hash order). The embedded script (ours) adds click-to-zoom with reset, Ctrl-F / F3
 * regex search with "Matched: P%" computed from sample counts, Ctrl-I case folding, hover
 * details, and keeps zoom and search in the URL (?x=&y=&s=&i=), restored on load.
 *
 * Names are escaped for XML; bytes that are not UTF-8, C0 controls and U+FFFE/U+FFFF become
 * U+FFFD, so the document is well-formed whatever the input.
 */
#ifndef FG_FLAME_SVG_H
#define FG_FLAME_SVG_H

#include <stdbool.h>
#include <stdio.h>

#include "flame_fold.h"
#include "flame_palette.h"

struct flame_opts {
	const char *title;     /* NULL: "Flame Graph" ("Icicle Graph", "Flame Chart") */
	const char *subtitle;  /* NULL or "": none */
	const char *notes;     /* text of the NOTES comment, NULL for none */
	const char *countname; /* "samples" */
	const char *nametype;  /* "Function:" (prefix of the hover details) */
	const char *fonttype;  /* "Verdana" */
	const char *bgcolors;  /* NULL: the palette's default; yellow|blue|green|grey|#rrggbb */
	unsigned width;	       /* image width in px, 1200 */
	unsigned frameheight;  /* px per frame, 16 */
	double fontsize;       /* 12 */
	double fontwidth;      /* average glyph width / font size, 0.59 */
	double minwidth;       /* drop frames narrower than this, 0.1 */
	bool minwidth_pct;     /* minwidth is a % of all samples rather than px */
	enum flame_palette palette;
	bool hash;	/* colours from a hash of the name (flamegraph.pl --hash) */
	bool inverted;	/* icicle graph: root on top */
	bool negate;	/* differential: swap red and blue */
	bool pl_compat; /* reproduce flamegraph.pl's frame loss (see flame_layout.h); tests only */
};

/* flamegraph.pl's defaults. */
void flame_opts_init(struct flame_opts *o);

/*
 * Write the SVG of f to out (buffered; out is flushed, not closed). Returns 0; -EINVAL if
 * width/frameheight/fontsize make no sense (width <= 20, frameheight or fontsize <= 0);
 * -ENODATA if f holds no samples (an SVG with the error message is still written, as
 * flamegraph.pl does); -ENOMEM; -EIO if writing failed.
 */
int flame_render_svg(const struct flame *f, const struct flame_opts *o, FILE *out);

/*
 * Escape s[0..len) as XML character data (attr: also `"`), replacing what XML cannot carry
 * with U+FFFD (see above). 0 or -EIO. Exposed for tests and for other SVG writers.
 */
int flame_svg_escape(FILE *out, const char *s, size_t len, bool attr);

#endif
