// SPDX-License-Identifier: MIT
/* cmd_collapse.c - placeholder until the stage that owns `collapse` lands. */
#include "cmds.h"
#include "util.h"

int cmd_collapse(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fg_err("collapse", "not built yet");
	return FG_EXIT_FAIL;
}
