/* SPDX-License-Identifier: MIT */
/*
 * vthread.h - virtual threads' waits (JDK 21+): HotSpot's VirtualThreadUnmount and
 * VirtualThreadMount extension events turned into FGP_EV_VWAIT stack events (fgproto.h) while
 * a collector asks for FGP_EVM_VTHREAD (wall and off-CPU recordings).
 *
 * At every unmount the virtual thread's JVMTI thread-local storage gets the time; at every
 * mount the wait is timed, exactly, and counted into its thread's name group's sum of the time
 * not yet sent (vtclaim.h: the name with its digits folded). A share of the unmounts (a chance
 * set so that about VTHREAD_STACKS_PER_S stacks are taken a second, whatever the mount rate)
 * also keep the stack the thread unmounted at, in a slot of a pool made once (vtheld.h: at
 * most VTHREAD_HELD stacks at once, fewer for a deeper depth than the default); the event is
 * pushed at the mount, when the wait's length is known, and claims its group's sum: it stands
 * for its own wait and for its group's waits since the group's last event, whose stacks were
 * not taken, never for another group's (a poller's long parks stay the poller's). A wait whose
 * stack was not taken is counted at the unmount that ends the next mount, when the thread's
 * name is taken for its FGP_EV_VMOUNT (its carrier keeps the wait's start until then; without
 * FGP_EVM_VMOUNT it is counted at the mount, into group 0). A group's time no stack claimed for
 * VTCLAIM_FLUSH_NS (stacks that could not be taken, or none chosen in the group) goes in an
 * event with no stack, under the group's name. The events' weights add up to every wait
 * counted, with no record per mount. Turning the events on starts a new generation of the pool: a
 * stack an earlier recording left (its thread ended, or stayed unmounted, while the events were
 * off) is free. An event with a stack carries its thread's name (its first VTHREAD_NAME_MAX bytes;
 * none for an unnamed one, or with FGP_EVM_VTID its id as
 * "#ID") for the collector's grouping.
 *
 * With FGP_EVM_VMOUNT and FGP_EVM_VCPU (a CPU recording), the callbacks send the mounts alone
 * (FGP_EV_VMOUNT, its time off the CPU 0): no wait is timed, no stack taken, no clock but the
 * monotonic one read, and no JVMTI function called: a mount's start is kept by its carrier (a
 * word of the carrier's thread, as a virtual thread's below, stamped at every mount and
 * unmount whatever the kinds), not in the virtual thread's JVMTI thread-local storage, whose
 * calls on HotSpot resolve the thread and may disable its transitions. Their records gather in
 * the carrier's own queue entry (evctl_push_batched, evbatch.h), whose append checks the kinds
 * on: neither callback counts itself in evctl's shared counter (evctl_enter).
 *
 * With FGP_EVM_VMOUNT too, every unmount also pushes an FGP_EV_VMOUNT event: the carrier, the
 * virtual thread's name and id, how long it was mounted and how long of it the carrier was off
 * the CPU (the mount's length less the carrier's CPU time over it, CLOCK_THREAD_CPUTIME_ID read
 * at the unmount, and at the mount unless the carrier's last reading is recent: see
 * vthread_cpu0), so that the collector roots the carrier's samples under the virtual thread
 * and counts its pinned time. The carrier's tid is asked of the kernel once.
 *
 * VirtualThreadStart and VirtualThreadEnd (vthread_callbacks) are the first run's mount and the
 * last run's unmount.
 *
 * Invariant: the callbacks never block, wait for another thread or allocate; memory held is
 * the pool (VTHREAD_HELD stacks of the default depth), whatever the collector asks; what is
 * not sent is counted (evctl).
 */
#ifndef FG_VTHREAD_H
#define FG_VTHREAD_H

#include <stdbool.h>
#include <stdint.h>

#include <jvmti.h>

#include "fgproto.h"

struct evctl;

#define VTHREAD_STACKS_PER_S 500u /* stacks taken a second, in all */
#define VTHREAD_HELD 1024u	  /* stacks waiting for their thread's mount, at most */
#define VTHREAD_NAME_MAX 64u	  /* bytes of a virtual thread's name sent with its stack */

/* A virtual thread's JVMTI thread-local word (vthread.c), and a carrier's of its mounts:
 * 0 never seen; (ts << 2) | STAMP: unmounted since ts, no stack held; (ts << 2) | STAMP |
 * MOUNTED: mounted at ts; even: the handle of its held stack (vtheld.h, a virtual thread's
 * only). */
#define VTHREAD_TLS_STAMP 1u
#define VTHREAD_TLS_MOUNTED 2u

/*
 * When the mount of a virtual thread that ends at now (its unmount or its end) began, from its
 * thread-local word tls and seen, when tls was written (a stamp's time, a held stack's wait's
 * start; 0 for a stack of an earlier recording), the kinds on since `since` with mounts asked
 * (mounts). Its mount's stamp when tls holds one of this recording; since for a thread of no
 * mount or wait of this recording (*open set): it was mounted on this carrier when the kinds
 * went on, as a mount after that is seen. 0: it was not mounted, or mounts are not asked.
 */
static inline uint64_t vthread_mount_t0(uint64_t tls, uint64_t seen, uint64_t since, bool mounts,
					uint64_t now, bool *open)
{
	const uint64_t m = VTHREAD_TLS_STAMP | VTHREAD_TLS_MOUNTED;

	*open = false;
	if (!mounts || !since)
		return 0;
	if (!tls || seen < since) {
		*open = now > since;
		return *open ? since : 0;
	}
	return (tls & m) == m && now > seen ? seen : 0;
}

/* What the callbacks do (vthread_does). */
#define VTHREAD_DO_WAITS 1u  /* time the waits, take stacks at unmounts: FGP_EV_VWAIT */
#define VTHREAD_DO_MOUNTS 2u /* send each mount: FGP_EV_VMOUNT */
#define VTHREAD_DO_OFFCPU 4u /* ... with its carrier's time off the CPU (its CPU clock read) */

/*
 * What the callbacks do with the kinds on (FGP_EVM_*): nothing without FGP_EVM_VTHREAD; the
 * waits; with FGP_EVM_VMOUNT the mounts too, each with its carrier's time off the CPU; with
 * FGP_EVM_VCPU as well the mounts alone (a CPU profile roots its carriers' samples under them
 * and needs neither the waits nor the clock, the callbacks' costliest part).
 */
static inline unsigned vthread_does(uint32_t on)
{
	if (!(on & FGP_EVM_VTHREAD))
		return 0;
	if (!(on & FGP_EVM_VMOUNT))
		return VTHREAD_DO_WAITS;
	if (on & FGP_EVM_VCPU)
		return VTHREAD_DO_MOUNTS;
	return VTHREAD_DO_WAITS | VTHREAD_DO_MOUNTS | VTHREAD_DO_OFFCPU;
}

/* Whether the kinds on (FGP_EVM_*) ask for the mounts alone (vthread_does). */
static inline bool vthread_vcpu(uint32_t on)
{
	return vthread_does(on) == VTHREAD_DO_MOUNTS;
}

/* A carrier's reading of its CPU time this recent stands for its CPU time at a mount. */
#define VTHREAD_CPU_GAP_NS 10000000ull

/*
 * The carrier's CPU time to count a mount at now from, given its last reading cpu taken at
 * (its previous unmount's end): cpu when that was less than VTHREAD_CPU_GAP_NS ago, else 0
 * (read the clock, a syscall and the callbacks' costliest part: at most once per
 * VTHREAD_CPU_GAP_NS per carrier, whatever the mount rate). The mount's time off the CPU so
 * counted is the carrier's time off the CPU from at to the unmount less the gap: 0 when the
 * carrier kept the CPU through the mount; else short of the mount's own by at most the
 * carrier's CPU time in the gap (the scheduler's, from one virtual thread to the next). It is
 * never more.
 */
static inline uint64_t vthread_cpu0(uint64_t cpu, uint64_t at, uint64_t now)
{
	return cpu && at && now >= at && now - at < VTHREAD_CPU_GAP_NS ? cpu : 0;
}

/* The carrier's time off the CPU in a mount from t0 to end, its CPU time cpu0 at t0
 * (vthread_cpu0) and cpu at end: the mount's length less the CPU time, 0 when either is
 * unknown (0). */
static inline uint64_t vthread_offcpu(uint64_t t0, uint64_t end, uint64_t cpu0, uint64_t cpu)
{
	uint64_t ran = cpu > cpu0 ? cpu - cpu0 : 0;

	return cpu0 && cpu && end > t0 && ran < end - t0 ? end - t0 - ran : 0;
}

/*
 * OnLoad: add can_support_virtual_threads and set the mount and unmount callbacks (they run
 * only once vthread_enable turned them on). FGP_EVM_VTHREAD when this JVM has them, else 0.
 */
uint32_t vthread_caps(jvmtiEnv *jvmti);

/*
 * OnLoad, with FGP_EVM_VTHREAD: the callbacks of VirtualThreadStart and VirtualThreadEnd into
 * *start and *end (slots of JVMTI's callbacks, evjvmti.h). They bracket a virtual thread's
 * first run (start to first unmount) and last run (last mount to end), which a JDK may not
 * bracket with the mount and unmount events (Temurin 25 and Debian's OpenJDK 21 do): the start is a
 * mount with no wait before it, the end an unmount with none after it (its FGP_EV_VMOUNT sent), and
 * a stack still held for the thread is let go at its end. They run only while vthread_enable has
 * the events on.
 */
void vthread_callbacks(void(JNICALL **start)(void), void(JNICALL **end)(void));

/*
 * The name t has now, from java.lang.Thread's name field (what GetThreadInfo reads, a
 * Thread.setName included, with no JVMTI allocation nor the thread's group and loader): its
 * first VTHREAD_NAME_MAX bytes of modified UTF-8 into name (not ended by a NUL). Their count (0
 * unnamed), or -ENOENT: no such field in this JDK (the field is looked up once).
 */
int vthread_name(JNIEnv *jni, jthread t, char *name);

/*
 * The stack of t, the virtual thread mounted on the calling carrier (the unmount callback's),
 * innermost first: JVMTI GetStackTrace given t itself, never NULL (the current thread). On
 * HotSpot 21 a NULL thread disables every virtual thread's mounts and unmounts for the call
 * (JvmtiVTMSTransitionDisabler for all: other carriers wait in start_VTMS_transition), a
 * virtual thread disables its own alone; HotSpot 25 takes either as the current thread's and
 * disables none.
 */
jvmtiError vthread_stack(jvmtiEnv *jvmti, jthread t, jint max, jvmtiFrameInfo *fi, jint *count);

/* The switch the callbacks read (borrowed for the agent's life). */
void vthread_init(struct evctl *ctl);

/* On the events worker: the two events on (counts and the held stacks start afresh; the pool
 * is made at the first) or off. 0 or -EIO. */
int vthread_enable(jvmtiEnv *jvmti, bool on);

#endif
