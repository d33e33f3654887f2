// SPDX-License-Identifier: MIT
/* fgproto.c - placeholder while the codec is written. */
#include "fgproto.h"

const char *fgp_type_name(uint16_t type)
{
	(void)type;
	return "unknown";
}
