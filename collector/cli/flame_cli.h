/* SPDX-License-Identifier: MIT */
/*
 * flame_cli.h - the rendering options shared by `flamegraph`, `diff` (and `record`), with
 * flamegraph.pl's names, for getopt_long(); and folded files read into a flame graph (input's
 * reader connected to render's trie).
 *
 * Put FLAME_CLI_OPTIONS in a struct option array and hand every option value >= FLAME_CLI_BASE
 * to flame_cli_apply(). Usage text for them: FLAME_CLI_USAGE.
 */
#ifndef FG_FLAME_CLI_H
#define FG_FLAME_CLI_H

#include <getopt.h>
#include <stdbool.h>

#include "flame_svg.h"
#include "folded.h"

enum {
	FLAME_CLI_BASE = 0x100,
	FLAME_CLI_TITLE = FLAME_CLI_BASE,
	FLAME_CLI_SUBTITLE,
	FLAME_CLI_WIDTH,
	FLAME_CLI_HEIGHT,
	FLAME_CLI_MINWIDTH,
	FLAME_CLI_FONTTYPE,
	FLAME_CLI_FONTSIZE,
	FLAME_CLI_FONTWIDTH,
	FLAME_CLI_COUNTNAME,
	FLAME_CLI_NAMETYPE,
	FLAME_CLI_COLORS,
	FLAME_CLI_BGCOLORS,
	FLAME_CLI_HASH,
	FLAME_CLI_REVERSE,
	FLAME_CLI_INVERTED,
	FLAME_CLI_FLAMECHART,
	FLAME_CLI_NEGATE,
	FLAME_CLI_NOTES,
	FLAME_CLI_PL_COMPAT,
	FLAME_CLI_END,
};

/* A list of initializers, not one expression: clang-format would indent it as one. */
/* clang-format off */
#define FLAME_CLI_OPTIONS                                                                          \
	{ "title", required_argument, NULL, FLAME_CLI_TITLE },                                      \
	{ "subtitle", required_argument, NULL, FLAME_CLI_SUBTITLE },                                \
	{ "width", required_argument, NULL, FLAME_CLI_WIDTH },                                      \
	{ "height", required_argument, NULL, FLAME_CLI_HEIGHT },                                    \
	{ "minwidth", required_argument, NULL, FLAME_CLI_MINWIDTH },                                \
	{ "fonttype", required_argument, NULL, FLAME_CLI_FONTTYPE },                                \
	{ "fontsize", required_argument, NULL, FLAME_CLI_FONTSIZE },                                \
	{ "fontwidth", required_argument, NULL, FLAME_CLI_FONTWIDTH },                              \
	{ "countname", required_argument, NULL, FLAME_CLI_COUNTNAME },                              \
	{ "nametype", required_argument, NULL, FLAME_CLI_NAMETYPE },                                \
	{ "colors", required_argument, NULL, FLAME_CLI_COLORS },                                    \
	{ "color", required_argument, NULL, FLAME_CLI_COLORS },                                     \
	{ "bgcolors", required_argument, NULL, FLAME_CLI_BGCOLORS },                                \
	{ "hash", no_argument, NULL, FLAME_CLI_HASH },                                              \
	{ "reverse", no_argument, NULL, FLAME_CLI_REVERSE },                                        \
	{ "inverted", no_argument, NULL, FLAME_CLI_INVERTED },                                      \
	{ "flamechart", no_argument, NULL, FLAME_CLI_FLAMECHART },                                  \
	{ "negate", no_argument, NULL, FLAME_CLI_NEGATE },                                          \
	{ "notes", required_argument, NULL, FLAME_CLI_NOTES },                                      \
	{                                                                                           \
	"pl-compat", no_argument, NULL, FLAME_CLI_PL_COMPAT                                         \
	}
/* clang-format on */

#define FLAME_CLI_USAGE                                                                               \
	"  --title TEXT       title (default \"Flame Graph\")\n"                                      \
	"  --subtitle TEXT    second title line\n"                                                    \
	"  --width PX         image width (default 1200)\n"                                           \
	"  --height PX        height of one frame (default 16)\n"                                     \
	"  --minwidth N[%]    omit frames narrower than N px, or N% of all samples (default 0.1)\n"   \
	"  --colors PALETTE   hot (default), java, mem, io, wakeup, js, perl, red, green, blue,\n"    \
	"                     aqua, yellow, purple, orange\n"                                         \
	"  --bgcolors COLOR   yellow, blue, green, grey or #rrggbb\n"                                 \
	"  --hash             colours keyed by a hash of the function name\n"                         \
	"  --reverse          reverse every stack (merge from the leaves)\n"                          \
	"  --inverted         icicle graph (root at the top)\n"                                       \
	"  --flamechart       flame chart: input order, no merging of non-adjacent stacks\n"          \
	"  --negate           differential: swap red and blue\n"                                      \
	"  --countname TEXT   what counts are (default \"samples\")\n"                                \
	"  --nametype TEXT    label of the hover details (default \"Function:\")\n"                   \
	"  --fonttype FONT    font family (default Verdana)\n"                                        \
	"  --fontsize N       font size (default 12)\n"                                               \
	"  --fontwidth N      average glyph width relative to the font size (default 0.59)\n"         \
	"  --notes TEXT       text of a NOTES comment in the SVG\n"                                   \
	"  --pl-compat        also drop the frames flamegraph.pl loses (a real frame with the same\n" \
	"                     name, depth and end as a zero-width one); for comparisons only\n"

/*
 * Apply option id (a FLAME_CLI_* value) with its argument to o / *flags (FLAME_REVERSE,
 * FLAME_CHART). Returns 0, or -EINVAL for a value that is not valid for that option.
 * Strings are borrowed: arg must outlive o.
 */
int flame_cli_apply(int id, const char *arg, struct flame_opts *o, unsigned *flags);

/*
 * A folded-text reader whose stacks go into f: reversed when flags (f's) has FLAME_REVERSE,
 * with folded_new()'s FOLDED_STRIP_HEX and FOLDED_FOLD from in_flags (diff -s, --fold). NULL
 * if out of memory; free with folded_free() before f.
 */
struct folded *flame_cli_reader(struct flame *f, unsigned flags, unsigned in_flags);

/*
 * Read folded stacks from path ("-" = standard input) with rd as input side in, for command
 * cmd. Prints the error itself, naming the file (or stdin) and line. 0 or FG_EXIT_FAIL.
 */
int flame_cli_read(const char *cmd, struct folded *rd, const char *path, enum folded_in in);

#endif
