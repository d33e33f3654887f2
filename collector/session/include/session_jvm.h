/* SPDX-License-Identifier: MIT */
/*
 * session_jvm.h - what a session keeps of each target JVM that its summary reports too: the
 * limit on targets and a JVM's agent events. Beneath session.h, so that the session's own parts
 * (targets.h) need not include the session's header.
 */
#ifndef FG_SESSION_JVM_H
#define FG_SESSION_JVM_H

#include <stdbool.h>
#include <stdint.h>

#include "fgproto.h"
#include "jvmevent.h"

#define SESSION_MAX_TARGETS 4096

/* A JVM's agent events (alloc, live, lock recordings). */
struct session_jvm_events {
	bool hello_events;	   /* its agent can send events (FGP_HELLO_EVENTS) */
	bool state_known;	   /* it said what it does (EVENTS) */
	struct fgp_events state;   /* its last EVENTS: what is on, its drops (cumulative) */
	struct fgp_events first;   /* its first EVENTS here: the drops before this recording */
	uint64_t on_after_ns;	   /* its events were on this long after the start (EVENTS) */
	struct jvm_ev_drops drops; /* what the collector dropped of its events (cumulative) */
	struct jvm_ev_drops drops_first; /* ... at its first EVENTS here */
	uint64_t stacks;		 /* its stack events that reached the recording */
	/* Its first and last ALLOC_COST here (counts since its ask; cost_known: any came). */
	bool cost_known;
	struct fgp_alloc_cost cost_first, cost;
};

#endif
