// SPDX-License-Identifier: MIT
/* cmd_watch.c - placeholder until the stage that owns `watch` lands. */
#include "cmds.h"
#include "util.h"

int cmd_watch(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fg_err("watch", "not built yet");
	return FG_EXIT_FAIL;
}
