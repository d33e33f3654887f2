// SPDX-License-Identifier: MIT
/* jvmevent.c - what consumers want of an agent's events, merged and written (see jvmevent.h). */
#include "jvmevent.h"

#include <inttypes.h>
#include <stdio.h>

#include "allocring.h"
#include "fgsocket.h"

void jvm_evwant_merge(struct jvm_evwant *into, const struct jvm_evwant *w)
{
	const uint32_t alloc = FGP_EVM_ALLOC | FGP_EVM_LIVE;

	if (!w->on)
		return;
	if (w->on & alloc) {
		into->budget_ppm = !(into->on & alloc)			   ? w->budget_ppm
				   : (!into->budget_ppm || !w->budget_ppm) ? 0
				   : into->budget_ppm > w->budget_ppm	   ? into->budget_ppm
									   : w->budget_ppm;
		into->alloc_interval =
			(into->on & alloc) && into->alloc_interval < w->alloc_interval
				? into->alloc_interval
				: w->alloc_interval;
	}
	if (w->on & FGP_EVM_LOCK)
		into->lock_us = (into->on & FGP_EVM_LOCK) && into->lock_us < w->lock_us
					? into->lock_us
					: w->lock_us;
	/* 0 is the agent's default: the deeper of two given depths, or the default if either
	 * wants it (its depth is not known here). */
	into->depth = !into->on			    ? w->depth
		      : (!into->depth || !w->depth) ? 0
		      : into->depth > w->depth	    ? into->depth
						    : w->depth;
	into->on = jvm_evwant_vcpu(into->on, w->on);
}

size_t jvm_evwant_line(const struct jvm_evwant *w, uint64_t token, char *buf, size_t cap)
{
	uint64_t iv = w->alloc_interval;
	int n;

	if (!(w->on & FGP_EVM_ALL))
		return 0;
	if (iv == 0 || iv > JVM_EVWANT_MAX_INTERVAL)
		iv = FG_ALLOC_INTERVAL_DEFAULT;
	n = snprintf(buf, cap, "%016" PRIx64 " " FG_WANT_EVENTS_WORD, token);
	if (n > 0 && (w->on & (FGP_EVM_ALLOC | FGP_EVM_LIVE)))
		n += snprintf(buf + n, cap > (size_t)n ? cap - (size_t)n : 0, " alloc=%" PRIu64,
			      iv);
	if (n > 0 && (w->on & FGP_EVM_LIVE))
		n += snprintf(buf + n, cap > (size_t)n ? cap - (size_t)n : 0, " live");
	if (n > 0 && (w->on & FGP_EVM_ALLOC) && (w->on & FGP_EVM_RING))
		n += snprintf(buf + n, cap > (size_t)n ? cap - (size_t)n : 0,
			      " " ALLOCRING_WANT_WORD);
	if (n > 0 && (w->on & FGP_EVM_ALLOC) && (w->on & FGP_EVM_EXACT))
		n += snprintf(buf + n, cap > (size_t)n ? cap - (size_t)n : 0, " allocexact");
	if (n > 0 && (w->on & FGP_EVM_LOCK))
		n += snprintf(buf + n, cap > (size_t)n ? cap - (size_t)n : 0, " lock=%u",
			      (unsigned)w->lock_us);
	if (n > 0 && (w->on & FGP_EVM_VTHREAD))
		n += snprintf(buf + n, cap > (size_t)n ? cap - (size_t)n : 0, " vthread");
	if (n > 0 && (w->on & FGP_EVM_VTHREAD) && (w->on & FGP_EVM_VMOUNT))
		n += snprintf(buf + n, cap > (size_t)n ? cap - (size_t)n : 0, " vmount");
	if (n > 0 && (w->on & FGP_EVM_VTHREAD) && (w->on & FGP_EVM_VMOUNT) &&
	    (w->on & FGP_EVM_VCPU))
		n += snprintf(buf + n, cap > (size_t)n ? cap - (size_t)n : 0, " vcpu");
	if (n > 0 && (w->on & FGP_EVM_VTHREAD) && (w->on & FGP_EVM_VTID))
		n += snprintf(buf + n, cap > (size_t)n ? cap - (size_t)n : 0, " vtid");
	if (n > 0 && w->depth)
		n += snprintf(buf + n, cap > (size_t)n ? cap - (size_t)n : 0, " depth=%u",
			      (unsigned)(w->depth > FGP_MAX_EVENT_DEPTH ? FGP_MAX_EVENT_DEPTH
									: w->depth));
	if (n > 0 && (w->on & (FGP_EVM_ALLOC | FGP_EVM_LIVE)) && w->budget_ppm)
		n += snprintf(buf + n, cap > (size_t)n ? cap - (size_t)n : 0, " budget=%u",
			      (unsigned)(w->budget_ppm > JVM_EVWANT_MAX_BUDGET
						 ? JVM_EVWANT_MAX_BUDGET
						 : w->budget_ppm));
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}
