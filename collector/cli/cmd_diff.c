// SPDX-License-Identifier: MIT
/*
 * cmd_diff.c - `fgcollect diff A.folded B.folded`: a differential flame graph (the shape of B,
 * red where B grew, blue where it shrank), or difffolded.pl's `stack A B` lines with --folded.
 *
 * Invariant: stdout carries only the SVG or the folded lines.
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
#include "flame_diff.h"
#include "util.h"

static const char *const CMD = "diff";

#define ENV struct env

/* What the command line asks for. */
struct env {
	struct flame_cli fc;
	bool normalize, folded;
	unsigned in_flags; /* FOLDED_STRIP_HEX, FOLDED_FOLD */
	const char *output;
};

static void env_init(void *opts)
{
	struct env *env = opts;

	*env = (struct env){ 0 };
	flame_opts_init(&env->fc.o);
	env->fc.o.title = "Differential Flame Graph";
}

/* clang-format off */
static const struct cli_opt diff_opts[] = {
	{ .name = "normalize", .key = 'n', .kind = CLI_SET, CLI_AT(ENV, normalize),
	  .help = "scale A's counts to B's total first" },
	{ .name = "strip-hex", .key = 's', .kind = CLI_BITS, .lo = FOLDED_STRIP_HEX,
	  CLI_AT(ENV, in_flags), .help = "replace hex numbers (0x...) so addresses compare equal" },
	{ .name = "fold", .kind = CLI_BITS, .lo = FOLDED_FOLD, CLI_AT(ENV, in_flags),
	  .help = "compare two runs: fold numbers in the process and thread roots, the _[j] _[i] "
		  "_[0] suffixes and lambda addresses",
	  .doc = "([reading-graphs.md](reading-graphs.md#comparing-two-runs))" },
	{ .name = "folded", .kind = CLI_SET, CLI_AT(ENV, folded),
	  .help = "print the `stack A B` lines instead of the SVG" },
	{ .name = "output", .key = 'o', .kind = CLI_STR, CLI_AT(ENV, output), .arg = "FILE",
	  .help = "write to FILE instead of standard output" },
	{ 0 },
};
/* clang-format on */

static const struct cli_group diff_groups[] = {
	{ NULL, diff_opts, 0 },
	{ NULL, flame_cli_opts, offsetof(ENV, fc) },
};

const struct cli_cmd cmd_diff_cli = {
	.name = "diff",
	.usage = "Usage: fgcollect diff [OPTION...] A.folded B.folded\n\n"
		 "Differential flame graph with difffolded.pl's semantics: frames have the shape\n"
		 "of B and are red where B has more samples than A, blue where it has fewer.\n",
	.examples = "  fgcollect diff before.folded after.folded > diff.svg\n"
		    "  fgcollect diff --negate after.folded before.folded > shrunk.svg\n",
	CLI_CMD_OPTS(diff_groups, ENV, env_init),
};

/* 0 to go on, -1 when --help was printed, or an exit status (the error printed). */
static int parse_args(int argc, char **argv, struct env *env)
{
	struct cli_seen seen;
	int rv = cli_parse(&cmd_diff_cli, argc, argv, env, &seen);

	if (rv)
		return rv;
	if (argc - optind != 2) {
		fg_err(CMD, "need exactly two folded files, A (baseline) and B; see --help");
		return FG_EXIT_USAGE;
	}
	return 0;
}

/* Draw (or write folded) f to env->output or stdout; b names B for the messages. */
static int write_out(struct flame *f, const struct env *env, const char *b)
{
	FILE *out = stdout;
	int rv;

	if (env->output && !(out = fopen(env->output, "we"))) {
		fg_err(CMD, "cannot create %s: %s", env->output, strerror(errno));
		return FG_EXIT_FAIL;
	}
	rv = env->folded ? flame_write_folded(f, out) : flame_render_svg(f, &env->fc.o, out);
	if (rv == -ENODATA) {
		fg_err(CMD, "no samples in %s: nothing to draw", b);
		rv = FG_EXIT_FAIL;
	} else if (rv == -EINVAL) {
		fg_err(CMD, "--width, --height, --fontsize or --bgcolors out of range");
		rv = FG_EXIT_USAGE;
	} else if (rv) {
		fg_err(CMD, "cannot write %s: %s", env->output ? env->output : "stdout",
		       strerror(-rv));
		rv = FG_EXIT_FAIL;
	}
	if (env->output && fclose(out) != 0 && rv == FG_EXIT_OK) {
		fg_err(CMD, "cannot write %s: %s", env->output, strerror(errno));
		rv = FG_EXIT_FAIL;
	}
	return rv;
}

int cmd_diff(int argc, char **argv)
{
	struct env env;
	struct flame *f;
	struct folded *rd = NULL;
	uint64_t ignored;
	const char *a, *b;
	int rv;

	env_init(&env);
	rv = parse_args(argc, argv, &env);
	if (rv)
		return rv < 0 ? FG_EXIT_OK : rv;
	a = argv[optind];
	b = argv[optind + 1];
	f = flame_new_flags(env.fc.flags);
	if (!f || !(rd = flame_cli_reader(f, env.fc.flags, env.in_flags))) {
		fg_err(CMD, "out of memory");
		flame_free(f);
		return FG_EXIT_FAIL;
	}
	rv = flame_cli_read(CMD, rd, a, FOLDED_IN_A);
	if (rv == FG_EXIT_OK)
		rv = flame_cli_read(CMD, rd, b, FOLDED_IN_B);
	if (rv != FG_EXIT_OK)
		goto out;
	if ((ignored = folded_ignored(rd)) != 0)
		fg_err(CMD, "ignored %llu lines with invalid format", (unsigned long long)ignored);
	if (env.normalize && flame_diff_normalize(f) != 0) {
		fg_err(CMD, "cannot normalize: %s has no samples", a);
		rv = FG_EXIT_FAIL;
		goto out;
	}
	rv = write_out(f, &env, b);
out:
	folded_free(rd);
	flame_free(f);
	return rv;
}
