/* SPDX-License-Identifier: MIT */
/*
 * agentcount.h - a part's cumulative counters, listed once as a macro COUNTERS(X) with one
 * X(name) each: the part counts in atomics that any thread may bump (COUNTERS(AGENTCOUNT_ATOMIC)
 * in its own struct), hands out a plain copy in its stats struct (COUNTERS(AGENTCOUNT_FIELD))
 * and fills that copy with COUNTERS(AGENTCOUNT_LOAD), which loads each from the part `src` into
 * the stats `out` (values may be a moment old, each read on its own).
 */
#ifndef FG_AGENTCOUNT_H
#define FG_AGENTCOUNT_H

#include <stdatomic.h>
#include <stdint.h>

#define AGENTCOUNT_ATOMIC(name) atomic_uint_fast64_t name;
#define AGENTCOUNT_FIELD(name) uint64_t name;
#define AGENTCOUNT_LOAD(name) out->name = atomic_load(&src->name);

#endif
