/* SPDX-License-Identifier: MIT */
/*
 * benchstat.h - callback timing for the benchmark build of the agent (FG_AGENT_BENCH) only.
 *
 * Callbacks record their duration into fixed arrays (no allocation, one atomic add); at VM
 * death the samples are written to the file named by $FGAGENT_BENCH_OUT, one "kind ns" line
 * each. The production library contains none of this.
 */
#ifndef FG_BENCHSTAT_H
#define FG_BENCHSTAT_H

#include <stdint.h>

/* kind: 0 code load, 1 code unload, 2 dynamic code. */
void benchstat_add(int kind, uint64_t ns);
void benchstat_dump(void);

#endif
