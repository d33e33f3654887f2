/* SPDX-License-Identifier: MIT */
/*
 * flame_palette.h - frame colours, the same as flamegraph.pl's for the same name and options.
 *
 * Colours are a pure function of the frame name: by default a value seeded from the sum of the
 * name's code points (flamegraph.pl seeds perl's drand48 with it, and so do we), with --hash a
 * weighted hash of the first characters of the name and of its reverse. So one function has one
 * colour across graphs and runs. The "java" palette picks the hue from the FlameGraph
 * annotations: `_[j]` JIT and `_[0]` interpreted (green), `_[i]` inlined (aqua), `_[k]` kernel
 * (orange), Java-looking names green, C++ (`::`) yellow, the rest red.
 */
#ifndef FG_FLAME_PALETTE_H
#define FG_FLAME_PALETTE_H

#include <stdbool.h>
#include <stddef.h>

enum flame_palette {
	FLAME_PALETTE_HOT,
	FLAME_PALETTE_MEM,
	FLAME_PALETTE_IO,
	FLAME_PALETTE_WAKEUP,
	FLAME_PALETTE_JAVA,
	FLAME_PALETTE_JS,
	FLAME_PALETTE_PERL,
	FLAME_PALETTE_RED,
	FLAME_PALETTE_GREEN,
	FLAME_PALETTE_BLUE,
	FLAME_PALETTE_AQUA,
	FLAME_PALETTE_YELLOW,
	FLAME_PALETTE_PURPLE,
	FLAME_PALETTE_ORANGE,
};

/* Room for a colour string "rgb(r,g,b)", NUL included. */
#define FLAME_COLOR_MAX 40

/* Palette by its flamegraph.pl name (hot, java, ...); 0 or -EINVAL. */
int flame_palette_parse(const char *name, enum flame_palette *out);

/* Background gradient ("yellow", "blue", "green", "grey" or "#rrggbb"; NULL or "" picks the
 * palette's default) into two colours of 8 bytes each; 0 or -EINVAL. */
int flame_palette_bg(enum flame_palette pal, const char *bg, char c1[8], char c2[8]);

/* The colour of a frame name[0..len) (annotation included) as "rgb(r,g,b)". */
void flame_palette_color(enum flame_palette pal, bool hash, const char *name, size_t len,
			 char out[FLAME_COLOR_MAX]);
/* The same colour as its three components (red, green, blue). */
void flame_palette_rgb(enum flame_palette pal, bool hash, const char *name, size_t len, int rgb[3]);

/* Differential colour: red for delta > 0, blue for < 0, white for 0 (swapped by negate). */
void flame_palette_delta(double delta, double maxdelta, bool negate, char out[FLAME_COLOR_MAX]);

/*
 * Decode one UTF-8 character at p (p < end): returns its length in bytes (>= 1) and sets *cp
 * to the code point, or to -1 for an invalid byte (overlong, surrogate, > U+10FFFF,
 * truncated), which then counts as one 1-byte character.
 */
size_t flame_utf8_next(const char *p, const char *end, long *cp);

#endif
