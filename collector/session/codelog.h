/* SPDX-License-Identifier: MIT */
/*
 * codelog.h - a JVM's code-table history as text (--code-log): which method occupied which
 * address when, one event per line in time order:
 *   "<pid> <ts_ns> load <addr hex> <size> <compiled|dynamic> <name>"
 *   "<pid> <ts_ns> unload <addr hex> <size> <compiled|dynamic> <name>"
 */
#ifndef FG_CODELOG_H
#define FG_CODELOG_H

#include <stdint.h>
#include <stdio.h>

struct codetab;

/* Write tab's history for pid to f (not flushed). 0, -EIO, or codetab_history's errno. */
int codelog_write(FILE *f, uint32_t pid, const struct codetab *tab);

#endif
