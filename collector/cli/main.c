// SPDX-License-Identifier: MIT
/*
 * main.c - fgcollect entry point: routes to one subcommand, perf style.
 *
 *   fgcollect watch|record|top|flamegraph|diff|collapse|view [options]
 *   fgcollect --watch   (alias of `watch`)
 */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "receive.h"
#include "util.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "watch", cmd_watch, "serve every JVM on this host; keep /tmp/perf-<pid>.map current" },
	{ "record", cmd_record, "sample a JVM, a container or all JVMs to .svg/.folded/.pb.gz" },
	{ "top", cmd_top, "live view of the hottest symbols of a JVM, with Java names" },
	{ "flamegraph", cmd_flamegraph, "render folded stacks as an interactive SVG" },
	{ "diff", cmd_diff, "render a differential flame graph of two folded files" },
	{ "collapse", cmd_collapse, "turn `perf script` output into folded stacks" },
	{ "view", cmd_view, "write the time view of watch's rolling profiles (one page per JVM)" },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: fgcollect COMMAND [OPTION...]\n\n"
		   "JIT-aware CPU flame graphs for JVMs in containers.\n\nCommands:\n");
	for (size_t i = 0; i < FG_ARRAY_SIZE(cmds); i++)
		fprintf(f, "  %-11s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\nRun `fgcollect COMMAND --help` for the options of a command.\n");
}

int main(int argc, char **argv)
{
	const char *name;

	if (argc < 2) {
		usage(stderr);
		return FG_EXIT_USAGE;
	}
	name = argv[1];
	if (!strcmp(name, RECEIVE_CHILD_ARG)) /* the agent socket's sandboxed process */
		return receive_child_main(argc, argv);
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		usage(stdout);
		return FG_EXIT_OK;
	}
	if (!strcmp(name, "--version") || !strcmp(name, "-V")) {
		printf("fgcollect %s\n", FG_VERSION);
		return FG_EXIT_OK;
	}
	if (!strcmp(name, "--watch"))
		name = "watch";
	for (size_t i = 0; i < FG_ARRAY_SIZE(cmds); i++) {
		if (!strcmp(name, cmds[i].name)) {
			argv[1] = (char *)cmds[i].name;
			return cmds[i].fn(argc - 1, argv + 1);
		}
	}
	fprintf(stderr, "fgcollect: unknown command '%s'\n\n", name);
	usage(stderr);
	return FG_EXIT_USAGE;
}
