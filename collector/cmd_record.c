// SPDX-License-Identifier: MIT
/* cmd_record.c - placeholder until the stage that owns `record` lands. */
#include "cmds.h"
#include "util.h"

int cmd_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fg_err("record", "not built yet");
	return FG_EXIT_FAIL;
}
