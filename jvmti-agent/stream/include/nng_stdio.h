/* SPDX-License-Identifier: MIT */
/* nng_stdio.h - point the statically linked nng's stdio at stderr (see nng_stdio.c). */
#ifndef FG_NNG_STDIO_H
#define FG_NNG_STDIO_H

#include <stdio.h>

extern FILE *fg_nng_stdout;
extern FILE *fg_nng_stderr;

/* Call once before any nng function. */
void nng_stdio_init(void);

#endif
