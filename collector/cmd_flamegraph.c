// SPDX-License-Identifier: MIT
/* cmd_flamegraph.c - placeholder until the stage that owns `flamegraph` lands. */
#include "cmds.h"
#include "util.h"

int cmd_flamegraph(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fg_err("flamegraph", "not built yet");
	return FG_EXIT_FAIL;
}
