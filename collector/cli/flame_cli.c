// SPDX-License-Identifier: MIT
/*
 * flame_cli.c - flamegraph.pl-style rendering options as rows on struct flame_cli; read
 * folded files into a flame graph, input's reader (folded.h) handing its stacks to render's
 * trie (flame_fold.h).
 *
 * Invariant: a rejected value leaves struct flame_cli unchanged.
 */
#include "flame_cli.h"

#include <stddef.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static int parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (!*s)
		return -EINVAL;
	v = strtod(s, &end);
	if (*end || !(v >= min && v <= max))
		return -EINVAL;
	*out = v;
	return 0;
}

/* flamegraph.pl's --minwidth: /^([0-9.]+)%?$/, pixels or a percentage of all samples. */
static int minwidth_of(const char *arg, struct flame_opts *o)
{
	size_t n = strlen(arg);
	char buf[64];
	double d;

	if (!n || n >= sizeof(buf) || strspn(arg, "0123456789.") < n - (arg[n - 1] == '%'))
		return -EINVAL;
	memcpy(buf, arg, n + 1);
	if (buf[n - 1] == '%')
		buf[n - 1] = '\0';
	if (parse_double(buf, 0, 1e300, &d) != 0)
		return -EINVAL;
	o->minwidth = d;
	o->minwidth_pct = arg[n - 1] == '%';
	return 0;
}

#define FC struct flame_cli

/* The refusal of a value, in one wording. */
static int bad_value(const char *cmd, const struct cli_opt *r, const char *arg)
{
	fg_err(cmd, "invalid value '%s' for --%s", arg, r->name);
	return -1;
}

static int minwidth_opt(const char *cmd, const struct cli_opt *r, const char *arg, void *opts)
{
	return minwidth_of(arg, &((FC *)opts)->o) == 0 ? 1 : bad_value(cmd, r, arg);
}

/* --fontsize (0.1..1000) and --fontwidth (0.01..100). */
static int font_opt(const char *cmd, const struct cli_opt *r, const char *arg, void *opts)
{
	bool size = r->off == offsetof(FC, o.fontsize);
	double d;

	if (parse_double(arg, size ? 0.1 : 0.01, size ? 1000 : 100, &d) != 0)
		return bad_value(cmd, r, arg);
	memcpy((char *)opts + r->off, &d, sizeof(d));
	return 1;
}

static int colors_opt(const char *cmd, const struct cli_opt *r, const char *arg, void *opts)
{
	return flame_palette_parse(arg, &((FC *)opts)->o.palette) == 0 ? 1 : bad_value(cmd, r, arg);
}

static int bgcolors_opt(const char *cmd, const struct cli_opt *r, const char *arg, void *opts)
{
	FC *fc = opts;
	char c1[8], c2[8];

	if (flame_palette_bg(fc->o.palette, arg, c1, c2) != 0)
		return bad_value(cmd, r, arg);
	fc->o.bgcolors = arg;
	return 1;
}

/* clang-format off */
const struct cli_opt flame_cli_opts[] = {
	{ .name = "title", .kind = CLI_STR, CLI_AT(FC, o.title), .arg = "TEXT",
	  .help = "title (default \"Flame Graph\")" },
	{ .name = "subtitle", .kind = CLI_STR, CLI_AT(FC, o.subtitle), .arg = "TEXT",
	  .help = "second title line" },
	{ .name = "width", .kind = CLI_U64, .lo = 21, .hi = 1000000, .unit = "px",
	  CLI_AT(FC, o.width), .arg = "PX",
	  .help = "image width (default 1200)" },
	{ .name = "height", .kind = CLI_U64, .lo = 1, .hi = 10000, .unit = "px",
	  CLI_AT(FC, o.frameheight), .arg = "PX",
	  .help = "height of one frame (default 16)" },
	{ .name = "minwidth", .kind = CLI_FN, .fn = minwidth_opt, CLI_AT(FC, o.minwidth),
	  CLI_ALSO(FC, o.minwidth_pct), .arg = "N[%]",
	  .help = "omit frames narrower than N px, or N% of all samples (default 0.1)" },
	{ .name = "colors", .alias = "color", .kind = CLI_FN, .fn = colors_opt,
	  CLI_AT(FC, o.palette), .arg = "PALETTE",
	  .help = "hot (default), java, mem, io, wakeup, js, perl, red, green, blue, aqua, "
		  "yellow, purple, orange; java colours by the _[j], _[i] and _[k] suffixes" },
	{ .name = "bgcolors", .kind = CLI_FN, .fn = bgcolors_opt, CLI_AT(FC, o.bgcolors),
	  .arg = "COLOR",
	  .help = "yellow, blue, green, grey or #rrggbb" },
	{ .name = "hash", .kind = CLI_SET, CLI_AT(FC, o.hash),
	  .help = "colours keyed by a hash of the function name" },
	{ .name = "reverse", .kind = CLI_BITS, .lo = FLAME_REVERSE, CLI_AT(FC, flags),
	  .help = "reverse every stack (merge from the leaves)" },
	{ .name = "inverted", .kind = CLI_SET, CLI_AT(FC, o.inverted),
	  .help = "icicle graph (root at the top)" },
	{ .name = "flamechart", .kind = CLI_BITS, .lo = FLAME_CHART, CLI_AT(FC, flags),
	  .help = "flame chart: input order, no merging of non-adjacent stacks" },
	{ .name = "negate", .kind = CLI_SET, CLI_AT(FC, o.negate),
	  .help = "differential: swap red and blue" },
	{ .name = "countname", .kind = CLI_STR, CLI_AT(FC, o.countname), .arg = "TEXT",
	  .help = "what counts are (default \"samples\")" },
	{ .name = "nametype", .kind = CLI_STR, CLI_AT(FC, o.nametype), .arg = "TEXT",
	  .help = "label of the hover details (default \"Function:\")" },
	{ .name = "fonttype", .kind = CLI_STR, CLI_AT(FC, o.fonttype), .arg = "FONT",
	  .help = "font family (default Verdana)" },
	{ .name = "fontsize", .kind = CLI_FN, .fn = font_opt, CLI_AT(FC, o.fontsize), .arg = "N",
	  .help = "font size (default 12)" },
	{ .name = "fontwidth", .kind = CLI_FN, .fn = font_opt, CLI_AT(FC, o.fontwidth), .arg = "N",
	  .help = "average glyph width relative to the font size (default 0.59)" },
	{ .name = "notes", .kind = CLI_STR, CLI_AT(FC, o.notes), .arg = "TEXT",
	  .help = "text of a NOTES comment in the SVG" },
	{ .name = "pl-compat", .kind = CLI_SET, CLI_AT(FC, o.pl_compat),
	  .help = "also drop the frames flamegraph.pl loses (a real frame with the same name, "
		  "depth and end as a zero-width one); for comparisons only" },
	{ 0 },
};
/* clang-format on */

struct folded *flame_cli_reader(struct flame *f, unsigned flags, unsigned in_flags)
{
	const struct stack_sink sink = flame_sink(f);

	return folded_new((flags & FLAME_REVERSE ? FOLDED_REVERSE : 0) |
				  (in_flags & (FOLDED_STRIP_HEX | FOLDED_FOLD)),
			  &sink);
}

int flame_cli_read(const char *cmd, struct folded *rd, const char *path, enum folded_in in)
{
	bool std = !strcmp(path, "-");
	int fd = std ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	uint64_t line = 0;
	int rv;

	if (fd < 0) {
		fg_err(cmd, "cannot open %s: %s", path, strerror(errno));
		return FG_EXIT_FAIL;
	}
	rv = folded_read_fd(rd, fd, in, &line);
	if (!std)
		close(fd);
	if (rv == -E2BIG)
		fg_err(cmd, "%s:%llu: line, stack depth or number of frames over the limit", path,
		       (unsigned long long)line);
	else if (rv)
		fg_err(cmd, "%s:%llu: %s", std ? "stdin" : path, (unsigned long long)line,
		       strerror(-rv));
	return rv ? FG_EXIT_FAIL : 0;
}
