// SPDX-License-Identifier: MIT
/*
 * flame_palette.c - frame colours compatible with flamegraph.pl.
 *
 * Invariant: the arithmetic is done in doubles in the same order as the Perl original, so the
 * int() truncations land on the same integers and the colours match byte for byte.
 */
#include "flame_palette.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const pal_names[] = {
	[FLAME_PALETTE_HOT] = "hot",	   [FLAME_PALETTE_MEM] = "mem",
	[FLAME_PALETTE_IO] = "io",	   [FLAME_PALETTE_WAKEUP] = "wakeup",
	[FLAME_PALETTE_JAVA] = "java",	   [FLAME_PALETTE_JS] = "js",
	[FLAME_PALETTE_PERL] = "perl",	   [FLAME_PALETTE_RED] = "red",
	[FLAME_PALETTE_GREEN] = "green",   [FLAME_PALETTE_BLUE] = "blue",
	[FLAME_PALETTE_AQUA] = "aqua",	   [FLAME_PALETTE_YELLOW] = "yellow",
	[FLAME_PALETTE_PURPLE] = "purple", [FLAME_PALETTE_ORANGE] = "orange",
};

int flame_palette_parse(const char *name, enum flame_palette *out)
{
	for (size_t i = 0; i < sizeof(pal_names) / sizeof(pal_names[0]); i++) {
		if (!strcmp(name, pal_names[i])) {
			*out = (enum flame_palette)i;
			return 0;
		}
	}
	return -EINVAL;
}

int flame_palette_bg(enum flame_palette pal, const char *bg, char c1[8], char c2[8])
{
	const char *a, *b;

	if (!bg || !*bg) {
		if (pal == FLAME_PALETTE_MEM)
			bg = "green";
		else if (pal == FLAME_PALETTE_IO || pal == FLAME_PALETTE_WAKEUP)
			bg = "blue";
		else if (pal >= FLAME_PALETTE_RED)
			bg = "grey";
		else
			bg = "yellow";
	}
	if (!strcmp(bg, "yellow")) {
		a = "#eeeeee";
		b = "#eeeeb0";
	} else if (!strcmp(bg, "blue")) {
		a = "#eeeeee";
		b = "#e0e0ff";
	} else if (!strcmp(bg, "green")) {
		a = "#eef2ee";
		b = "#e0ffe0";
	} else if (!strcmp(bg, "grey")) {
		a = "#f8f8f8";
		b = "#e8e8e8";
	} else if (bg[0] == '#' && strlen(bg) == 7 &&
		   strspn(bg + 1, "0123456789abcdefABCDEF") == 6) {
		a = b = bg;
	} else {
		return -EINVAL;
	}
	memcpy(c1, a, 8);
	memcpy(c2, b, 8);
	return 0;
}

size_t flame_utf8_next(const char *p, const char *end, long *cp)
{
	const unsigned char *s = (const unsigned char *)p;
	size_t avail = (size_t)(end - p), n;
	long v, min;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		v = s[0] & 0x1f;
		min = 0x80;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		v = s[0] & 0x0f;
		min = 0x800;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		v = s[0] & 0x07;
		min = 0x10000;
	} else {
		*cp = -1;
		return 1;
	}
	if (avail < n) {
		*cp = -1;
		return 1;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			*cp = -1;
			return 1;
		}
		v = v << 6 | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) {
		*cp = -1;
		return 1;
	}
	*cp = v;
	return n;
}

/* Code points of name; invalid bytes count as their byte value (as Perl's loose decoding). */
static size_t decode(const char *name, size_t len, long *out, size_t max)
{
	const char *p = name, *end = name + len;
	size_t n = 0;

	while (p < end && n < max) {
		long cp;
		size_t k = flame_utf8_next(p, end, &cp);

		out[n++] = cp < 0 ? (unsigned char)*p : cp;
		p += k;
	}
	return n;
}

/* flamegraph.pl namehash(): drop a "module`" prefix, weigh the first three characters. */
static double namehash(const long *cp, size_t n)
{
	double vector = 0, weight = 1, max = 1;
	long mod = 10;
	size_t i = 0;

	for (size_t k = 1; k < n; k++) {
		if (cp[k] == '`') {
			i = k + 1;
			break;
		}
	}
	for (; i < n; i++) {
		long c = cp[i] % mod;

		vector += ((double)c / (double)(mod++ - 1)) * weight;
		max += 1 * weight;
		weight *= 0.70;
		if (mod > 12)
			break;
	}
	return 1 - vector / max;
}

/* flamegraph.pl random_namehash(): srand(sum of code points mod 2^32); rand(1), Perl's drand48. */
static double seeded_rand(const char *name, size_t len)
{
	const char *p = name, *end = name + len;
	uint32_t sum = 0;
	uint64_t x;

	while (p < end) {
		long cp;
		size_t k = flame_utf8_next(p, end, &cp);

		sum += (uint32_t)(cp < 0 ? (unsigned char)*p : cp);
		p += k;
	}
	x = 0x330eull + ((uint64_t)sum << 16);
	x = (x * 0x5deece66dull + 0xb) & ((1ull << 48) - 1);
	return ldexp((double)x, -48);
}

static bool ends_with(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);

	return n >= k && !memcmp(s + n - k, suf, k);
}

static bool contains(const char *s, size_t n, const char *needle)
{
	return memmem(s, n, needle, strlen(needle)) != NULL;
}

static bool java_prefix(const char *s, size_t n)
{
	static const char *const pkgs[] = { "java/", "javax/", "jdk/", "net/",
					    "org/",  "com/",   "io/",  "sun/" };

	if (n && s[0] == 'L') {
		for (size_t i = 0; i < sizeof(pkgs) / sizeof(pkgs[0]); i++)
			if (n - 1 >= strlen(pkgs[i]) && !memcmp(s + 1, pkgs[i], strlen(pkgs[i])))
				return true;
	}
	for (size_t i = 0; i < sizeof(pkgs) / sizeof(pkgs[0]); i++)
		if (n >= strlen(pkgs[i]) && !memcmp(s, pkgs[i], strlen(pkgs[i])))
			return true;
	return false;
}

static bool js_source(const char *s, size_t n)
{
	const char *slash = memchr(s, '/', n);

	return slash && contains(slash, n - (size_t)(slash - s), ".js");
}

/* The last rule of java and perl: kernel frames orange, the rest (system code) red. */
static enum flame_palette kernel_or_red(const char *s, size_t n)
{
	return ends_with(s, n, "_[k]") ? FLAME_PALETTE_ORANGE : FLAME_PALETTE_RED;
}

/* The multi palettes (java, js, perl, wakeup) choose one of the single-hue ones. */
static enum flame_palette resolve(enum flame_palette pal, const char *s, size_t n)
{
	switch (pal) {
	case FLAME_PALETTE_JAVA:
		/* _[0]: an interpreted Java method (async-profiler's mark; flamegraph.pl would
		 * make "Foo::bar_[0]" yellow, as C++): Java is green. */
		if (ends_with(s, n, "_[j]") || ends_with(s, n, "_[0]"))
			return FLAME_PALETTE_GREEN;
		if (ends_with(s, n, "_[i]"))
			return FLAME_PALETTE_AQUA;
		if (java_prefix(s, n) || contains(s, n, ":::"))
			return FLAME_PALETTE_GREEN;
		if (contains(s, n, "::"))
			return FLAME_PALETTE_YELLOW;
		return kernel_or_red(s, n);
	case FLAME_PALETTE_PERL:
		if (contains(s, n, "::"))
			return FLAME_PALETTE_YELLOW;
		if (contains(s, n, "Perl") || contains(s, n, ".pl"))
			return FLAME_PALETTE_GREEN;
		return kernel_or_red(s, n);
	case FLAME_PALETTE_JS:
		if (ends_with(s, n, "_[j]"))
			return memchr(s, '/', n) ? FLAME_PALETTE_GREEN : FLAME_PALETTE_AQUA;
		if (contains(s, n, "::"))
			return FLAME_PALETTE_YELLOW;
		if (js_source(s, n))
			return FLAME_PALETTE_GREEN;
		if (memchr(s, ':', n))
			return FLAME_PALETTE_AQUA;
		if (n == 1 && s[0] == ' ')
			return FLAME_PALETTE_GREEN;
		if (contains(s, n, "_[k]"))
			return FLAME_PALETTE_ORANGE;
		return FLAME_PALETTE_RED;
	case FLAME_PALETTE_WAKEUP:
		return FLAME_PALETTE_AQUA;
	default:
		return pal;
	}
}

void flame_palette_color(enum flame_palette pal, bool hash, const char *name, size_t len,
			 char out[FLAME_COLOR_MAX])
{
	int rgb[3];

	flame_palette_rgb(pal, hash, name, len, rgb);
	snprintf(out, FLAME_COLOR_MAX, "rgb(%d,%d,%d)", rgb[0], rgb[1], rgb[2]);
}

/*
 * flamegraph.pl's three "random" numbers of a name: with --hash, a hash of the name and one of
 * it reversed (stable across runs and inputs); else one seeded value for all three.
 */
static void name_values(bool hash, const char *name, size_t len, double v[3])
{
	if (hash) {
		long small[64], *cp = small, *rev;
		size_t n;

		if (len > 64 && !(cp = malloc(len * sizeof(*cp)))) {
			/* out of memory: fall back to the default, still a pure function */
			hash = false;
		} else {
			n = decode(name, len, cp, len > 64 ? len : 64);
			v[0] = namehash(cp, n);
			rev = cp;
			for (size_t i = 0; i < n / 2; i++) {
				long t = rev[i];

				rev[i] = rev[n - 1 - i];
				rev[n - 1 - i] = t;
			}
			v[1] = v[2] = namehash(rev, n);
			if (cp != small)
				free(cp);
		}
	}
	if (!hash)
		v[0] = v[1] = v[2] = seeded_rand(name, len);
}

/*
 * The single-hue palettes (what java, js, perl... resolve to per frame): channel c is
 * base[c] + (int)(span[c] * v1).
 */
static const struct {
	enum flame_palette hue;
	uint8_t base[3], span[3];
} hues[] = {
	{ FLAME_PALETTE_RED, { 200, 50, 50 }, { 55, 80, 80 } },
	{ FLAME_PALETTE_GREEN, { 50, 200, 50 }, { 60, 55, 60 } },
	{ FLAME_PALETTE_BLUE, { 80, 80, 205 }, { 60, 60, 50 } },
	{ FLAME_PALETTE_YELLOW, { 175, 175, 50 }, { 55, 55, 20 } },
	{ FLAME_PALETTE_PURPLE, { 190, 80, 190 }, { 65, 60, 65 } },
	{ FLAME_PALETTE_AQUA, { 50, 165, 165 }, { 60, 55, 55 } },
	{ FLAME_PALETTE_ORANGE, { 190, 90, 0 }, { 65, 65, 0 } },
};

/* A single-hue palette's colour from v1; black for any other palette. */
static void hue_rgb(enum flame_palette hue, double v1, int rgb[3])
{
	for (size_t i = 0; i < sizeof(hues) / sizeof(hues[0]); i++) {
		if (hues[i].hue != hue)
			continue;
		for (int c = 0; c < 3; c++)
			rgb[c] = hues[i].base[c] + (int)(hues[i].span[c] * v1);
		return;
	}
	rgb[0] = rgb[1] = rgb[2] = 0;
}

void flame_palette_rgb(enum flame_palette pal, bool hash, const char *name, size_t len, int rgb[3])
{
	double v[3]; /* flamegraph.pl's v1, v2, v3 */

	name_values(hash, name, len, v);
	switch (pal) {
	case FLAME_PALETTE_HOT:
		rgb[0] = 205 + (int)(50 * v[2]);
		rgb[1] = 0 + (int)(230 * v[0]);
		rgb[2] = 0 + (int)(55 * v[1]);
		break;
	case FLAME_PALETTE_MEM:
		rgb[0] = 0;
		rgb[1] = 190 + (int)(50 * v[1]);
		rgb[2] = 0 + (int)(210 * v[0]);
		break;
	case FLAME_PALETTE_IO:
		rgb[0] = 80 + (int)(60 * v[0]);
		rgb[1] = rgb[0];
		rgb[2] = 190 + (int)(55 * v[1]);
		break;
	default:
		hue_rgb(resolve(pal, name, len), v[0], rgb);
		break;
	}
}

void flame_palette_delta(double delta, double maxdelta, bool negate, char out[FLAME_COLOR_MAX])
{
	int r = 255, g = 255, b = 255;

	if (negate)
		delta = -delta;
	if (delta > 0)
		g = b = (int)(210 * (maxdelta - delta) / maxdelta);
	else if (delta < 0)
		r = g = (int)(210 * (maxdelta + delta) / maxdelta);
	snprintf(out, FLAME_COLOR_MAX, "rgb(%d,%d,%d)", r, g, b);
}
