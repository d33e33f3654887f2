/* SPDX-License-Identifier: MIT */
/*
 * jvmevent.h - the agents' allocation, live-object and lock events (fgproto.h: STACK_EVENT,
 * OBJECT_FREE, EVENTS) as the collector hands them on: method ids resolved to names with the
 * connection's interned names, the thread mapped to the host's tid through the JVM's own tasks
 * (nstid.h); and what a consumer wants of an agent (the want file's events line, fgsocket.h).
 *
 * Invariant: an event handed on names only what the collector checked: a host PID the kernel
 * gave, a host tid found among that process's tasks (or 0), names of that connection.
 */
#ifndef FG_JVMEVENT_H
#define FG_JVMEVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fgproto.h"

enum jvm_ev_type {
	JVM_EV_STACK = 1, /* one allocation sample or contended monitor entry */
	JVM_EV_FREE = 2,  /* tags of tracked objects the JVM freed */
	JVM_EV_STATE = 3, /* the agent's EVENTS record, with the collector's own drops */
	JVM_EV_COST = 4,  /* the agent's ALLOC_COST record */
};

/* A frame of a stack event: a method name (borrowed, no terminator) and its line (0: none). */
struct jvm_ev_frame {
	const char *name;
	uint16_t len;
	int32_t line;
};

/* Events the collector dropped, by cause (cumulative for one JVM). */
struct jvm_ev_drops {
	uint64_t unknown_id;  /* a frame's method id never defined on its connection */
	uint64_t unknown_tid; /* handed on with host tid 0: no task of the JVM had its tid */
	uint64_t unwanted;    /* events nobody asked for (an agent that did not stop yet) */
	uint64_t bad;	      /* malformed (the decoder refused them) */
};

struct jvm_event {
	enum jvm_ev_type type;
	uint32_t host_pid;
	/* JVM_EV_STACK */
	uint64_t ts;
	uint32_t host_tid; /* 0: not found among the JVM's tasks */
	uint16_t kind;	   /* FGP_EV_ALLOC or FGP_EV_LOCK */
	bool truncated;	   /* the agent cut the stack at its depth cap (outermost frames gone) */
	uint64_t value, interval, tag;
	uint64_t weight; /* FGP_EV_ALLOC: its thread's bytes since its previous sample; 0: none */
	struct fgp_str cls;
	const struct jvm_ev_frame *frames; /* depth of them, innermost first */
	uint16_t depth;
	/* JVM_EV_FREE */
	const uint64_t *tags;
	uint32_t ntags;
	/* JVM_EV_STATE */
	struct fgp_events state;
	struct jvm_ev_drops drops;
	/* JVM_EV_COST */
	struct fgp_alloc_cost cost;
};

/* What a consumer wants of one agent. */
struct jvm_evwant {
	uint32_t on;		 /* FGP_EVM_*: 0 = nothing */
	uint64_t alloc_interval; /* bytes (1..2^30), with FGP_EVM_ALLOC or FGP_EVM_LIVE */
	uint32_t lock_us;	 /* with FGP_EVM_LOCK: waits of at least this (0: all) */
	uint32_t depth;		 /* 1..FGP_MAX_EVENT_DEPTH, 0: the agent's default */
	uint32_t budget_ppm;	 /* alloc's cost budget, ppm of the JVM's CPU (0: none) */
};

/* An agent's token and what is wanted of it (the want file's events line). */
struct jvm_evwant_tok {
	uint64_t token;
	struct jvm_evwant w;
};

#define JVM_EVWANT_MAX_INTERVAL (1ull << 30)
#define JVM_EVWANT_MAX_BUDGET 1000000u /* ppm: all of the JVM's CPU */

/*
 * Two wants' bits (FGP_EVM_*) as one: every bit either has, but FGP_EVM_VCPU (the mounts alone)
 * only when every one of them that wants virtual threads (FGP_EVM_VTHREAD) has it: a wall or
 * off-CPU want beside a CPU one gets its waits and its carriers' time off the CPU.
 */
static inline uint32_t jvm_evwant_vcpu(uint32_t a, uint32_t b)
{
	uint32_t any = (a | b) & ~FGP_EVM_VCPU;
	bool full = ((a & FGP_EVM_VTHREAD) && !(a & FGP_EVM_VCPU)) ||
		    ((b & FGP_EVM_VTHREAD) && !(b & FGP_EVM_VCPU));

	return (any & FGP_EVM_VTHREAD) && !full ? any | FGP_EVM_VCPU : any;
}

/*
 * Two consumers' wants as one: every event either wants (FGP_EVM_VCPU as jvm_evwant_vcpu
 * says), the shorter allocation interval and lock threshold (each consumer still weighs by the
 * interval an event carries, and leaves out the waits under its own threshold), the deeper
 * stacks, the larger cost budget (none if either asks none).
 */
void jvm_evwant_merge(struct jvm_evwant *into, const struct jvm_evwant *w);

/*
 * The want file's events line for token without its newline ("<16 hex> events alloc=524288
 * live lock=0 depth=128 budget=10000"; budget only with alloc and a budget): its length, or 0 when
 * w wants nothing or cap is too small.
 */
size_t jvm_evwant_line(const struct jvm_evwant *w, uint64_t token, char *buf, size_t cap);

#endif
