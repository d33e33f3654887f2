/* SPDX-License-Identifier: MIT */
/*
 * allocstack.h - what an allocation sample's stack copy (shared/allocring.h) needs besides the
 * vm walk a CPU sample gets: where its Java frames begin, and the name of the class it
 * allocated, read from the JVM's own Klass (Klass::_name, a Symbol) through vmmem.h with the
 * offsets of the agent's VM_LAYOUT (interp.h's layout).
 *
 * The walk starts at the thread's last Java frame anchor: a runtime stub or the VM's own frames
 * may come before the Java frame that allocated (allocstack_java_from skips them, so the stack
 * ends where GetStackTrace's would: at the allocating method).
 *
 * Nothing read is trusted: a Klass* or Symbol that does not read back as a believable name
 * gives no name (the caller counts the sample under "[unknown class]").
 *
 * Not thread-safe: one cache per caller.
 */
#ifndef FG_ALLOCSTACK_H
#define FG_ALLOCSTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "interp.h"
#include "vmmem.h"

struct codetab;

#define ALLOCSTACK_CACHE 64u	   /* Klass names remembered (direct-mapped) */
#define ALLOCSTACK_CACHE_NAME 192u /* bytes of a remembered name; longer ones are read again */
#define ALLOCSTACK_NAME_MAX (INTERP_MAX_CLASS_NAME + 8u) /* a Java class name as written here */

/*
 * The index in user[0..n) (leaf first, as vmstack gives it; user[0] the pc the walk began at,
 * the others return addresses) of the innermost Java frame at ts: compiled code (a CODE_LOAD
 * blob) or the interpreter (the "Interpreter" blob); *java true. When there is none (*java
 * false: a walk that stopped before its Java frame, or in code not announced), the index past
 * the leading stubs (blobs of the table that are not Java: the runtime stub the allocation
 * went through is never shown as the allocating frame), or 0 when every frame is one.
 */
uint32_t allocstack_java_from(const struct codetab *tab, const uint64_t *user, uint32_t n,
			      uint64_t ts, bool *java);

/*
 * A Klass name as HotSpot keeps it (len bytes: "java/lang/String", "[I", "[[Ljava/lang/Object;")
 * written as Java does (what the agent's GetClassSignature path writes: "java.lang.String",
 * "int[]", "java.lang.Object[][]") into dst (cap > 0 bytes, NUL-terminated, cut to fit). Its
 * length, or 0 for a name with bytes no class name has (controls, NUL).
 */
size_t allocstack_class_name(const uint8_t *sym, size_t len, char *dst, size_t cap);

struct allocstack_klass_ent {
	uint32_t pid;
	uint64_t klass, sym;
	uint64_t epoch; /* the epoch its Klass was last read in */
	char name[ALLOCSTACK_CACHE_NAME];
};

/* Klass names of one or more JVMs; zero it to start. */
struct allocstack_klasses {
	struct allocstack_klass_ent e[ALLOCSTACK_CACHE];
	uint64_t epoch; /* 0: every lookup reads its Klass */
	uint64_t lookups, hits, unreadable, invalid;
};

/*
 * The name of the class at klass (a Klass* in pid) into dst (cap bytes, as
 * allocstack_class_name writes it): its length, or 0 when it could not be read or believed
 * (counted). l must have names (interp_layout_init). A remembered name is used only while the
 * Klass's _name still points at the Symbol it was read from: one read of the Klass each call, or
 * once an epoch (allocstack_klass_epoch) when epochs are used. Forget a pid that exited with
 * allocstack_forget.
 */
size_t allocstack_klass_name(struct allocstack_klasses *c, const struct vmmem_ops *m, uint32_t pid,
			     const struct interp_layout *l, uint64_t klass, char *dst, size_t cap);

/*
 * Start an epoch: a name whose Klass was read in it is used again without a read until the next
 * one. A caller starts one per read of a JVM's memory in bulk (a poll of its ring), so every
 * sample of that read is named from the Klass as it was then, with one read per class.
 */
void allocstack_klass_epoch(struct allocstack_klasses *c);

/* Drop pid's remembered names. */
void allocstack_forget(struct allocstack_klasses *c, uint32_t pid);

#endif
