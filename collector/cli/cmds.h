/* SPDX-License-Identifier: MIT */
/*
 * cmds.h - the subcommands of fgcollect, one cmd_<name>.c each.
 *
 * Each takes the arguments after the subcommand name (argv[0] is the subcommand) and returns
 * the process exit status: FG_EXIT_OK, FG_EXIT_FAIL or FG_EXIT_USAGE.
 */
#ifndef FG_CMDS_H
#define FG_CMDS_H

#include "cli_opt.h"

int cmd_watch(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_flamegraph(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_collapse(int argc, char **argv);
int cmd_view(int argc, char **argv);

/* Each command's options table (cli_opt.h), for its tests and docs/commands.md. */
extern const struct cli_cmd cmd_watch_cli, cmd_record_cli, cmd_top_cli, cmd_flamegraph_cli,
	cmd_diff_cli, cmd_collapse_cli, cmd_view_cli;

#endif
