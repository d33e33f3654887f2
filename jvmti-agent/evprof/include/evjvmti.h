/* SPDX-License-Identifier: MIT */
/*
 * evjvmti.h - the JVMTI side of alloc, live and lock events: the capabilities, the callbacks
 * that turn SampledObjectAlloc, MonitorContendedEnter/Entered and ObjectFree into STACK_EVENT
 * records and freed tags (evctl.h), and the switch the events worker turns them with.
 *
 * A callback takes its thread's stack (GetStackTrace, innermost first, at most the depth the
 * collector asked, FGP_REC_STACK_TRUNCATED when cut), names its frames with the agent's
 * interned method names (intern.h: the ids and names CODE_LOAD_IDS uses, so alloc and CPU
 * frames read alike), gives each frame its source line (codelines_line: the line tables the
 * code loads cache), names the class as Java writes it ("byte[]", "java.lang.String") and
 * pushes the record. A lock wait is timed from MonitorContendedEnter to ...Entered on the same
 * thread (JVMTI thread-local storage holds the start).
 *
 * Invariant: a callback never waits on another thread for long (the name table's brief spin at
 * most), never blocks on the sender, and deallocates every JVMTI buffer before returning;
 * ObjectFree touches atomics and the freed ring only.
 */
#ifndef FG_EVJVMTI_H
#define FG_EVJVMTI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jvmti.h>

#include "evctl.h"

struct intern;
struct codelines;

struct stackring;

struct evjvmti_cfg {
	JavaVM *vm;
	jvmtiEnv *jvmti;
	struct evctl *ctl;
	struct intern *names;	 /* the agent's interned names; NULL: no events */
	struct codelines *lines; /* NULL: lines 0 */
	bool signatures;	 /* names as the code loads name them */
	const atomic_bool *live; /* the VM is initialised: the worker may attach */
	/* The JVM's heap sampler is JDK 11's: its surplus samples are thinned (samplefix.h). */
	bool sampler_fix;
	/* allocstack=copy or auto: the ring (stackring.h, made and announced at load) allocation
	 * samples' stacks are copied into for the collector to walk, where the JVM's layout
	 * allows; the others take GetStackTrace. NULL: every sample takes GetStackTrace. */
	struct stackring *ring;
	/* allocstack=copy: the ring is used whether or not the collector says it reads it
	 * (FGP_EVM_RING); auto: only when it does. */
	bool ring_always;
};

/*
 * Add the capabilities events need, each on its own (a JVM may lack some): the FGP_EVM_* kinds
 * this JVM can then run (alloc: can_generate_sampled_object_alloc_events; live: alloc and
 * can_tag_objects and can_generate_object_free_events; lock: can_generate_monitor_events;
 * vthread: can_support_virtual_threads and HotSpot's mount and unmount events, vthread.h).
 * Only in the OnLoad phase.
 */
uint32_t evjvmti_caps(jvmtiEnv *jvmti);

/* The one configuration the callbacks use (borrowed for the agent's life). */
void evjvmti_init(const struct evjvmti_cfg *cfg);

/* The JVMTI environment the callbacks use (set by evjvmti_init). */
jvmtiEnv *evjvmti_env(void);

/*
 * JVMTI's event callbacks as SetEventCallbacks reads them: one pointer per event from
 * JVMTI_MIN_EVENT_TYPE_VAL (50) on, through JDK 21's VirtualThreadEnd (88), which older
 * headers do not name. A JVM copies the part it knows of: pass sizeof the union.
 */
#define EVJVMTI_EVENT_VT_START 87
#define EVJVMTI_EVENT_VT_END 88
#define EVJVMTI_CB_SLOTS (EVJVMTI_EVENT_VT_END - 50 + 1)
union evjvmti_callbacks {
	jvmtiEventCallbacks cb;
	void(JNICALL *slot[EVJVMTI_CB_SLOTS])(void);
};

/* Set the callbacks of the kinds in caps in *cb (the others stay as they are). */
void evjvmti_callbacks(union evjvmti_callbacks *cb, uint32_t caps);

/* evctl_ops.apply and .leave: on the events worker (attached to the VM here). */
int evjvmti_apply(void *arg, const struct evset *want, struct evset *got);
void evjvmti_leave(void *arg);

/* The ring's geometry, for allocstack=copy (stackring_new). */
#define EVJVMTI_RING_SLOTS 256u
#define EVJVMTI_RING_COPY (16u * 1024u)

/*
 * The ring of allocation samples' stack copies: true with its first byte and size once it is
 * in use (cfg.ring, alloc events on, the JVM's thread layout known), else false. *copied and
 * *fellback (either may be NULL): samples put in the ring, and samples that took GetStackTrace
 * because the thread had no usable anchor.
 */
bool evjvmti_ring(const void **base, uint64_t *size, uint64_t *copied, uint64_t *fellback);

/* Did allocation events ever go on with a ring to use (so evjvmti_ring false means it could not
 * be used, not that nobody asked)? */
bool evjvmti_ring_asked(void);

/*
 * The class of JVM signature sig as Java writes it: "Ljava/lang/String;" -> "java.lang.String",
 * "[B" -> "byte[]", "[[Ljava/util/HashMap$Node;" -> "java.util.HashMap$Node[][]"; anything
 * else as it is. Into dst[0..cap) with a terminator (truncated if need be); returns the length
 * written.
 */
size_t evjvmti_class_name(const char *sig, char *dst, size_t cap);

/*
 * The frames of a stack JVMTI gave (fi[0..n), innermost first) as the record carries them, in
 * out[0..n): interned method ids (a method that cannot be resolved is "[unknown]") and lines.
 * 0, or -EBUSY (the name table stayed busy) / -ENOSPC (a name could not be interned).
 */
int evjvmti_frames(JNIEnv *jni, const jvmtiFrameInfo *fi, int n, struct fgp_frame_in *out);

/*
 * The interval an allocation sample stands for, for a thread whose slot is *slot (high 32 bits:
 * the interval in force at its last sample, 0: none), the interval in force being now: HotSpot
 * draws a thread's next sampling distance right after a sample, with the mean interval in force
 * then, so a sample stands for the interval of the thread's previous sample (now for its first).
 * Keeps now in *slot (capped at UINT32_MAX; the low 32 bits stay).
 */
uint64_t evjvmti_sample_interval(uint64_t *slot, uint64_t now);

/* The calling thread's tid, asked of the kernel once a thread and kept in its slot (low 32
 * bits): the allocation events' and the virtual threads' carriers'. */
uint32_t evjvmti_tid(void);

#endif
