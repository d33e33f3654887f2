// SPDX-License-Identifier: MIT
/*
 * cmd_flamegraph.c - `fgcollect flamegraph`: folded stacks (files or stdin) to an SVG.
 *
 * Invariant: stdout carries only the SVG; every diagnostic names the file and line at fault.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "flame_cli.h"
#include "util.h"

static const char *const CMD = "flamegraph";

static void usage(FILE *f)
{
	fputs("Usage: fgcollect flamegraph [OPTION...] [FILE.folded...]\n\n"
	      "Render folded stacks (`f1;f2;...;fn COUNT`, or the differential `stack A B`)\n"
	      "from the FILEs, or standard input, as an interactive SVG on standard output.\n"
	      "Options have flamegraph.pl's names and meaning.\n\n"
	      "  -o, --output FILE  write the SVG to FILE\n" FLAME_CLI_USAGE
	      "  -h, --help         this help\n\n"
	      "Examples:\n"
	      "  fgcollect flamegraph --colors java --title 'Checkout' app.folded > app.svg\n"
	      "  fgcollect collapse < perf.txt | fgcollect flamegraph -o out.svg\n",
	      f);
}

/* 0 to go on, -1 when --help was printed, or an exit status (the error printed). */
static int parse_args(int argc, char **argv, struct flame_opts *o, unsigned *flags,
		      const char **output)
{
	static const struct option longopts[] = {
		FLAME_CLI_OPTIONS,
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		if (c == 'o') {
			*output = optarg;
		} else if (c == 'h') {
			usage(stdout);
			return -1;
		} else if (c >= FLAME_CLI_BASE && c < FLAME_CLI_END) {
			if (flame_cli_apply(c, optarg, o, flags) != 0) {
				fg_err(CMD, "invalid value '%s' for --%s", optarg,
				       longopts[c - FLAME_CLI_BASE].name);
				return FG_EXIT_USAGE;
			}
		} else {
			usage(stderr);
			return FG_EXIT_USAGE;
		}
	}
	return 0;
}

/* Draw f to output (NULL = stdout); the exit status, errors printed. */
static int write_svg(struct flame *f, const struct flame_opts *o, const char *output)
{
	FILE *out = stdout;
	int rv = FG_EXIT_OK;

	if (output && !(out = fopen(output, "we"))) {
		fg_err(CMD, "cannot create %s: %s", output, strerror(errno));
		return FG_EXIT_FAIL;
	}
	switch (flame_render_svg(f, o, out)) {
	case 0:
		break;
	case -ENODATA:
		fg_err(CMD, "no stack counts found in the input");
		rv = FG_EXIT_FAIL;
		break;
	case -ENOMEM:
		fg_err(CMD, "out of memory");
		rv = FG_EXIT_FAIL;
		break;
	case -EINVAL:
		fg_err(CMD, "--width, --height, --fontsize or --bgcolors out of range");
		rv = FG_EXIT_USAGE;
		break;
	default:
		fg_err(CMD, "cannot write %s: %s", output ? output : "stdout", strerror(errno));
		rv = FG_EXIT_FAIL;
		break;
	}
	if (output && fclose(out) != 0 && rv == FG_EXIT_OK) {
		fg_err(CMD, "cannot write %s: %s", output, strerror(errno));
		rv = FG_EXIT_FAIL;
	}
	return rv;
}

int cmd_flamegraph(int argc, char **argv)
{
	struct flame_opts o;
	const char *output = NULL;
	unsigned flags = 0;
	struct flame *f;
	struct folded *rd;
	int rv;

	flame_opts_init(&o);
	rv = parse_args(argc, argv, &o, &flags, &output);
	if (rv)
		return rv < 0 ? FG_EXIT_OK : rv;
	f = flame_new_flags(flags);
	if (!f || !(rd = flame_cli_reader(f, flags, 0))) {
		fg_err(CMD, "out of memory");
		flame_free(f);
		return FG_EXIT_FAIL;
	}
	if (optind == argc)
		rv = flame_cli_read(CMD, rd, "-", FOLDED_IN_AUTO);
	for (int i = optind; i < argc && rv == FG_EXIT_OK; i++)
		rv = flame_cli_read(CMD, rd, argv[i], FOLDED_IN_AUTO);
	if (rv == FG_EXIT_OK) {
		if (folded_ignored(rd))
			fg_err(CMD, "ignored %llu lines with invalid format",
			       (unsigned long long)folded_ignored(rd));
		rv = write_svg(f, &o, output);
	}
	folded_free(rd);
	flame_free(f);
	return rv;
}
