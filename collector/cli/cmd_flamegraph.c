// SPDX-License-Identifier: MIT
/*
 * cmd_flamegraph.c - `fgcollect flamegraph`: folded stacks (files or stdin) to an SVG.
 *
 * Invariant: stdout carries only the SVG; every diagnostic names the file and line at fault.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "flame_cli.h"
#include "util.h"

static const char *const CMD = "flamegraph";

#define ENV struct env

/* What the command line asks for. */
struct env {
	struct flame_cli fc;
	const char *output;
};

static void env_init(void *opts)
{
	struct env *env = opts;

	*env = (struct env){ 0 };
	flame_opts_init(&env->fc.o);
}

/* clang-format off */
static const struct cli_opt flamegraph_opts[] = {
	{ .name = "output", .key = 'o', .kind = CLI_STR, CLI_AT(ENV, output), .arg = "FILE",
	  .help = "write the SVG to FILE instead of standard output" },
	{ 0 },
};
/* clang-format on */

static const struct cli_group flamegraph_groups[] = {
	{ NULL, flamegraph_opts, 0 },
	{ NULL, flame_cli_opts, offsetof(ENV, fc) },
};

const struct cli_cmd cmd_flamegraph_cli = {
	.name = "flamegraph",
	.usage = "Usage: fgcollect flamegraph [OPTION...] [FILE.folded...]\n\n"
		 "Render folded stacks (`f1;f2;...;fn COUNT`, or the differential `stack A B`)\n"
		 "from the FILEs, or standard input, as an interactive SVG on standard output.\n"
		 "Options have flamegraph.pl's names and meaning.\n",
	.examples = "  fgcollect flamegraph --colors java --title 'Checkout' app.folded > app.svg\n"
		    "  fgcollect collapse < perf.txt | fgcollect flamegraph -o out.svg\n",
	CLI_CMD_OPTS(flamegraph_groups, ENV, env_init),
};

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
	struct env env;
	struct cli_seen seen;
	struct flame *f;
	struct folded *rd;
	int rv;

	env_init(&env);
	rv = cli_parse(&cmd_flamegraph_cli, argc, argv, &env, &seen);
	if (rv)
		return rv < 0 ? FG_EXIT_OK : rv;
	f = flame_new_flags(env.fc.flags);
	if (!f || !(rd = flame_cli_reader(f, env.fc.flags, 0))) {
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
		rv = write_svg(f, &env.fc.o, env.output);
	}
	folded_free(rd);
	flame_free(f);
	return rv;
}
