/* SPDX-License-Identifier: MIT */
/*
 * benchstat.h - callback timing for the benchmark build of the agent (FG_AGENT_BENCH) only.
 *
 * Callbacks record their duration into fixed arrays (no allocation, one atomic add); at VM
 * death the samples are written to the file named by $FGAGENT_BENCH_OUT, one "kind ns" line
 * each (and "kind ns cpu_ns"). The production library contains none of this.
 */
#ifndef FG_BENCHSTAT_H
#define FG_BENCHSTAT_H

#include <stdint.h>

/*
 * kind: 0 code load, 1 code unload, 2 dynamic code; wall_ns and cpu_ns (the calling thread's
 * CPU time): on a busy machine the JVM thread running a callback can be preempted, and only
 * the CPU time is the agent's own cost.
 */
void benchstat_add(int kind, uint64_t wall_ns, uint64_t cpu_ns);
/* CLOCK_THREAD_CPUTIME_ID in ns. */
uint64_t benchstat_cpu_ns(void);
void benchstat_dump(void);

#endif
