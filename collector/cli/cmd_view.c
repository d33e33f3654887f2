// SPDX-License-Identifier: MIT
/*
 * cmd_view.c - `fgcollect view DIR`: the time view pages of a directory of rolling profiles
 * (`watch --out DIR`), one per JVM and event, a heatmap column per interval (export's
 * profview.h). Only wiring: options, the call, one line per page.
 *
 * Invariant: stdout carries the pages' paths only; every diagnostic names the file at fault.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli_opt.h"
#include "cmds.h"
#include "profview.h"
#include "util.h"

#define CMD "view"

struct view_env {
	const char *output;
};

#define VE struct view_env

/* clang-format off */
static const struct cli_opt view_rows[] = {
	{ .name = "output", .key = 'o', .kind = CLI_STR, CLI_AT(VE, output), .arg = "DIR",
	  .help = "write the pages into DIR (default: the profile directory)" },
	{ 0 },
};
/* clang-format on */

static const struct cli_group view_groups[] = { { NULL, view_rows, 0 } };

static void opts_init(void *opts)
{
	*(VE *)opts = (VE){ 0 };
}

const struct cli_cmd cmd_view_cli = {
	.name = CMD,
	.usage =
		"Usage: fgcollect view [OPTION...] DIR\n"
		"\n"
		"Write the time view of the rolling profiles in DIR (`watch --out DIR`): for each\n"
		"JVM and event, one self-contained page, view_SERVICE_CID12_PID_HOST[.EVENT].html,\n"
		"whose heatmap has a column per interval and whose selection of intervals shows\n"
		"their flame graph. Made from the .folded files alone: nothing is recorded again.\n"
		"Prints each page's path.\n",
	.examples = "  fgcollect view /var/lib/fgcollect/profiles\n"
		    "  fgcollect view -o /tmp/views /var/lib/fgcollect/profiles\n",
	CLI_CMD_OPTS(view_groups, VE, opts_init),
};

static void page_done(void *arg, const struct profview_page *pg)
{
	(void)arg;
	if (pg->err == -E2BIG && !pg->path) {
		fg_err(CMD, "a JVM's profiles span %zu intervals of %u s (at most %u): not written",
		       pg->columns, pg->interval_s, PROFVIEW_MAX_COLUMNS);
		return;
	}
	if (pg->err) {
		fg_err(CMD, "%s: %s", pg->path ? pg->path : "(page)", strerror(-pg->err));
		return;
	}
	printf("%s\n", pg->path);
	if (pg->ignored_lines)
		fg_err(CMD, "%s: %" PRIu64 " lines of its profiles were not folded stacks",
		       pg->path, pg->ignored_lines);
}

int cmd_view(int argc, char **argv)
{
	struct view_env env;
	struct cli_seen seen;
	size_t pages = 0;
	int rv;

	opts_init(&env);
	rv = cli_parse(&cmd_view_cli, argc, argv, &env, &seen);
	if (rv != 0)
		return rv < 0 ? FG_EXIT_OK : rv;
	if (optind != argc - 1) {
		fg_err(CMD, "give one profile directory (the DIR of `watch --out DIR`)");
		return FG_EXIT_USAGE;
	}
	rv = profview_write(argv[optind], env.output, page_done, NULL, &pages);
	if (rv == -ENOENT && pages == 0) {
		fg_err(CMD, "%s: no rolling profiles (STEM.folded files written by `watch --out`)",
		       argv[optind]);
		return FG_EXIT_FAIL;
	}
	if (rv != 0 && pages == 0) {
		fg_err(CMD, "%s: %s", argv[optind], strerror(-rv));
		return FG_EXIT_FAIL;
	}
	return rv == 0 ? FG_EXIT_OK : FG_EXIT_FAIL;
}
