/* SPDX-License-Identifier: MIT */
/*
 * offcpu.h - weigh each switch-out sample by how long its thread stayed off the CPU.
 *
 * The sampler gives, per target thread, a stack at some switch-outs and a switch-in record that
 * ends each wait (sampler.h). A sample waits here, keyed by thread, until that thread's next
 * switch-in; its weight is then (switch-in time - sample time) x scale, where scale is the
 * switch-outs it stands for (1 / the chance it was taken, known before its wait's length was),
 * so that totals stay unbiased. A thread that exits while off the CPU is weighed up to its exit,
 * one still off the CPU at the end of the recording up to the end; both are counted.
 *
 * Records of different CPUs can reach us out of order by up to one drain: a switch-in seen
 * before the sample of the same wait is remembered (last switch-in per thread) and the sample
 * that arrives later with an earlier time is weighed against it at once.
 *
 * Invariant: every sample given to offcpu_out() is handed back exactly once to the emit
 * callback: with a weight, or with weight 0 (dropped, counted in one of the drop counters).
 * Memory: at most OFFCPU_MAX_PENDING samples wait at once (one per thread off the CPU).
 */
#ifndef FG_OFFCPU_H
#define FG_OFFCPU_H

#include <stdint.h>

#include "htab.h"

#define OFFCPU_MAX_PENDING 65536u

/* weight_ns 0: dropped; the callback frees what payload holds either way. */
typedef void (*offcpu_emit)(void *ctx, void *payload, uint64_t weight_ns);

struct offcpu_stats {
	uint64_t samples;      /* given to offcpu_out */
	uint64_t emitted;      /* handed back with a weight */
	uint64_t emitted_ns;   /* their weight */
	uint64_t under_min;    /* dropped: off the CPU for less than min_block_ns ... */
	uint64_t under_min_ns; /* ... and their weight */
	uint64_t unmatched;    /* dropped: the thread's switch-in was never seen (lost) */
	uint64_t full;	       /* dropped: OFFCPU_MAX_PENDING samples waited already */
	uint64_t exited;       /* weighed up to the thread's exit */
	uint64_t open_at_end;  /* weighed up to the end of the recording */
	uint64_t early_in;     /* matched against a switch-in seen before the sample */
};

struct offcpu_pend {
	uint64_t t_out;
	double scale;
	void *payload;
};

struct offcpu {
	uint64_t min_block_ns;
	offcpu_emit emit;
	void *ctx;
	struct htab pend;   /* tid -> index in slots */
	struct htab lastin; /* tid -> time of its last switch-in */
	struct offcpu_pend *slots;
	uint32_t *free;
	size_t nslots, cap, nfree;
	struct offcpu_stats st;
};

void offcpu_init(struct offcpu *m, uint64_t min_block_ns, offcpu_emit emit, void *ctx);
/* Hand back every waiting sample as dropped (weight 0) and free the state. */
void offcpu_fini(struct offcpu *m);

/* A switch-out sample of tid at time t that stands for `scale` (>= 1) switch-outs. */
void offcpu_out(struct offcpu *m, uint32_t tid, uint64_t t, double scale, void *payload);
/* A switch-out sample the caller could not keep (no memory): counted as taken and dropped. */
void offcpu_refused(struct offcpu *m);
/* tid switched in at time t. */
void offcpu_in(struct offcpu *m, uint32_t tid, uint64_t t);
/* tid exited at time t. */
void offcpu_exit(struct offcpu *m, uint32_t tid, uint64_t t);
/* The end of the recording at time t: weigh every waiting sample up to t. */
void offcpu_end(struct offcpu *m, uint64_t t);

#endif
