/* SPDX-License-Identifier: MIT */
/*
 * vmanchor.h - a JVM thread's last Java frame, read inside the JVM from its JavaThread: the
 * frame anchor HotSpot sets when Java code calls into the VM (JavaThread::_anchor:
 * JavaFrameAnchor::_last_Java_sp, _last_Java_fp, _last_Java_pc) and the thread's stack bounds
 * (JavaThread::_stack_base, _stack_size), at offsets the JVM's VMStructs export; and an
 * allocated object's Klass* from its class's mirror (java_lang_Class::_klass_offset).
 *
 * The JavaThread of a JNIEnv lies a fixed distance before it (the env is a field of the
 * thread): vmanchor_bind() learns that distance once from one thread whose JavaThread* is known
 * (java.lang.Thread.eetop), checked against the thread's own stack.
 *
 * Invariant: nothing is read through an offset VMStructs did not give, or below the type's
 * size; vmanchor_take() reads only the calling thread's own JavaThread and never returns an sp
 * outside the calling thread's stack above its current sp.
 */
#ifndef FG_VMANCHOR_H
#define FG_VMANCHOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmstructs.h"

struct vmanchor {
	uint32_t last_sp, last_fp, last_pc; /* offsets in JavaThread */
	uint32_t stack_base, stack_size;    /* offsets in JavaThread */
	uint32_t thread_size;		    /* sizeof(JavaThread) */
	int32_t klass_off;		    /* the Klass* in a java.lang.Class mirror; -1: none */
	int64_t env_off; /* JavaThread* = (char *)JNIEnv * - env_off; 0: unbound */
};

/*
 * The offsets from vs: 0, or -ENOENT when one is missing or insane (the anchor path is then
 * not taken). klass_off is read from the address VMStructs gives (the JVM must have started).
 */
int vmanchor_build(const struct vmstructs *vs, struct vmanchor *a);

/*
 * Learn the env's distance from its JavaThread: jni is a thread's JNIEnv, thread its JavaThread*
 * (java.lang.Thread.eetop) and sp an address on that thread's stack (the caller's). 0, or
 * -EINVAL when the env does not lie inside the JavaThread or sp is not within the stack the
 * JavaThread says it has.
 */
int vmanchor_bind(struct vmanchor *a, const void *jni, const void *thread, uintptr_t sp);

/* The calling thread's last Java frame. */
struct vmanchor_frame {
	uint64_t sp, fp, pc; /* pc 0: the anchor has none (the word below sp is the pc) */
	uint64_t top;	     /* the stack's end (its highest address): sp < top */
};

/*
 * The last Java frame of the thread of jni, which must be the calling thread, whose current sp
 * is here: 0 with *f, -ENOENT when unbound or the thread has no Java frame, -ERANGE when the
 * anchor's sp is not on the thread's stack above here.
 */
int vmanchor_take(const struct vmanchor *a, const void *jni, uintptr_t here,
		  struct vmanchor_frame *f);

/* The Klass* of the class whose JNI reference is klass (0 when unknown). */
uint64_t vmanchor_klass(const struct vmanchor *a, const void *klass);

#endif
