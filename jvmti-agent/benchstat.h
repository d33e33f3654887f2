/* SPDX-License-Identifier: MIT */
/*
 * benchstat.h - callback timing for the benchmark build of the agent (FG_AGENT_BENCH) only.
 *
 * Callbacks record their duration into fixed arrays (no allocation, one atomic add); at VM
 * death the samples are written to the file named by $FGAGENT_BENCH_OUT, one "kind ns cpu_ns"
 * line each (cpu_ns less what the clock itself adds, benchstat_clock_ns), and when each piece
 * of code was announced to the file named $FGAGENT_BENCH_OUT.code, one "KIND ADDR_HEX TS_NS"
 * line each (bench/agent/jdks.sh joins it with the perf map's lines for the map's latency).
 * The production library contains none of this.
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
/* Code of kind (0 compiled method, 2 dynamic code) at addr announced at ts (CLOCK_MONOTONIC
 * ns, the callback's entry). */
void benchstat_code(int kind, uint64_t addr, uint64_t ts);
/* CLOCK_THREAD_CPUTIME_ID in ns. */
uint64_t benchstat_cpu_ns(void);
/*
 * What timing a callback adds to its CPU time: the median over back-to-back pairs of
 * benchstat_cpu_ns() of the second read less the first. The clock is a system call (~0.5 us
 * on a virtualized machine): the part of the first read after it took the time and the part
 * of the second before it did both count in a callback's time.
 */
uint32_t benchstat_clock_ns(void);
void benchstat_dump(void);

#endif
