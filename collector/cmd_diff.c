// SPDX-License-Identifier: MIT
/* cmd_diff.c - placeholder until the stage that owns `diff` lands. */
#include "cmds.h"
#include "util.h"

int cmd_diff(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fg_err("diff", "not built yet");
	return FG_EXIT_FAIL;
}
