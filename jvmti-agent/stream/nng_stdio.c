// SPDX-License-Identifier: MIT
/*
 * nng_stdio.c - the stdio streams the statically linked nng sees (renamed at build time from
 * stdout/stderr, see CMakeLists.txt). Both are stderr: an agent never writes to the
 * application's stdout. Invariant: set before the first nng call (nng_stdio_init in Agent_OnLoad).
 */
#include <stdio.h>

#include "nng_stdio.h"

FILE *fg_nng_stdout;
FILE *fg_nng_stderr;

void nng_stdio_init(void)
{
	fg_nng_stdout = stderr;
	fg_nng_stderr = stderr;
}
