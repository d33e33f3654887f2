// SPDX-License-Identifier: MIT
/* cmd_top.c - placeholder until the stage that owns `top` lands. */
#include "cmds.h"
#include "util.h"

int cmd_top(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fg_err("top", "not built yet");
	return FG_EXIT_FAIL;
}
