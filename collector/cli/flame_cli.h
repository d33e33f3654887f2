/* SPDX-License-Identifier: MIT */
/*
 * flame_cli.h - the rendering options shared by `flamegraph` and `diff`, with flamegraph.pl's
 * names, as option rows (cli_opt.h) on struct flame_cli; and folded files read into a flame
 * graph (input's reader connected to render's trie).
 */
#ifndef FG_FLAME_CLI_H
#define FG_FLAME_CLI_H

#include <stdbool.h>

#include "cli_opt.h"
#include "flame_svg.h"
#include "folded.h"

/* What the rendering options set: the SVG's options and the trie's flags (FLAME_REVERSE,
 * FLAME_CHART). */
struct flame_cli {
	struct flame_opts o;
	unsigned flags;
};

/* The rendering options' rows on struct flame_cli. Strings are borrowed from argv. */
extern const struct cli_opt flame_cli_opts[];

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
