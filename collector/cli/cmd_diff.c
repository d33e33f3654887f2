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
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "flame_cli.h"
#include "flame_diff.h"
#include "util.h"

static const char *const CMD = "diff";

enum { OPT_FOLDED = FLAME_CLI_END + 1, OPT_FOLD };

static void usage(FILE *f)
{
	fputs("Usage: fgcollect diff [OPTION...] A.folded B.folded\n\n"
	      "Differential flame graph with difffolded.pl's semantics: frames have the shape\n"
	      "of B and are red where B has more samples than A, blue where it has fewer.\n\n"
	      "  -n, --normalize    scale A's counts to B's total first\n"
	      "  -s, --strip-hex    replace hex numbers (0x...) so addresses compare equal\n"
	      "      --fold         compare two runs: fold numbers in the process and thread\n"
	      "                     roots, the _[j] _[i] _[0] suffixes and lambda addresses\n"
	      "      --folded       print the `stack A B` lines instead of the SVG\n"
	      "  -o, --output FILE  write to FILE instead of standard output\n" FLAME_CLI_USAGE
	      "  -h, --help         this help\n\n"
	      "Examples:\n"
	      "  fgcollect diff before.folded after.folded > diff.svg\n"
	      "  fgcollect diff --negate after.folded before.folded > shrunk.svg\n",
	      f);
}

/* What the command line asks for. */
struct env {
	struct flame_opts o;
	unsigned flags;
	bool normalize, folded;
	unsigned in_flags; /* FOLDED_STRIP_HEX, FOLDED_FOLD */
	const char *output;
};

/* 0 to go on, -1 when --help was printed, or an exit status (the error printed). */
static int parse_args(int argc, char **argv, struct env *env)
{
	static const struct option longopts[] = {
		FLAME_CLI_OPTIONS,
		{ "normalize", no_argument, NULL, 'n' },
		{ "strip-hex", no_argument, NULL, 's' },
		{ "folded", no_argument, NULL, OPT_FOLDED },
		{ "fold", no_argument, NULL, OPT_FOLD },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "nso:h", longopts, NULL)) != -1) {
		if (c == 'n') {
			env->normalize = true;
		} else if (c == 's') {
			env->in_flags |= FOLDED_STRIP_HEX;
		} else if (c == OPT_FOLD) {
			env->in_flags |= FOLDED_FOLD;
		} else if (c == OPT_FOLDED) {
			env->folded = true;
		} else if (c == 'o') {
			env->output = optarg;
		} else if (c == 'h') {
			usage(stdout);
			return -1;
		} else if (c >= FLAME_CLI_BASE && c < FLAME_CLI_END) {
			if (flame_cli_apply(c, optarg, &env->o, &env->flags) != 0) {
				fg_err(CMD, "invalid value '%s' for --%s", optarg,
				       longopts[c - FLAME_CLI_BASE].name);
				return FG_EXIT_USAGE;
			}
		} else {
			usage(stderr);
			return FG_EXIT_USAGE;
		}
	}
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
	rv = env->folded ? flame_write_folded(f, out) : flame_render_svg(f, &env->o, out);
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
	struct env env = { 0 };
	struct flame *f;
	struct folded *rd = NULL;
	uint64_t ignored;
	const char *a, *b;
	int rv;

	flame_opts_init(&env.o);
	env.o.title = "Differential Flame Graph";
	rv = parse_args(argc, argv, &env);
	if (rv)
		return rv < 0 ? FG_EXIT_OK : rv;
	a = argv[optind];
	b = argv[optind + 1];
	f = flame_new_flags(env.flags);
	if (!f || !(rd = flame_cli_reader(f, env.flags, env.in_flags))) {
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
