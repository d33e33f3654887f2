/* SPDX-License-Identifier: MIT */
/*
 * vmlayout.h - what the collector needs to read this JVM's metadata from outside the process
 * (the VM_LAYOUT record, shared/fgproto.h): offsets from VMStructs; the interpreter frame's
 * slots, which VMStructs does not export, where it exports the anchors of their layout (with
 * the ConstantPoolCache* slot that lets the collector prove each frame); and the line-table
 * coding, known per JDK release.
 *
 * Invariant: a capability bit is set only when every key it needs was found and is sane; a
 * JVM we do not know yields a layout with fewer (or no) capabilities, never a guess.
 */
#ifndef FG_VMLAYOUT_H
#define FG_VMLAYOUT_H

#include "fgproto.h"
#include "vmstructs.h"

/*
 * The feature release of a java.vm.specification.version string ("1.8" -> 8, "11", "17") or
 * of a JDK's version string ("17.0.15+6-Debian-1" -> 17, "25+36-LTS" -> 25, "1.8.0_402-b06" ->
 * 8); 0 when it cannot be parsed. JDK 8's java.vm.version ("25.504-b01") is HotSpot's own
 * number, not the JDK's: never pass it.
 */
unsigned vmlayout_jdk_major(const char *version);

/* Build *out from vs for a JVM of feature release jdk_major (0 = unknown). Never fails. */
void vmlayout_build(const struct vmstructs *vs, unsigned jdk_major, struct fgp_vm_layout *out);

/* Add the address of the agent's GC clock (two u64: start_ns, end_ns) and its capability. */
void vmlayout_set_gc_clock(struct fgp_vm_layout *l, uint64_t addr);

/*
 * Advertise the slot at addr (a u64 in this process, 0 until the agent stores there the address
 * of the JVM's count of unloaded classes, unloadcount.h): FGP_VML_UNLOAD_SLOT_* and
 * FGP_VML_CAP_UNLOAD_EPOCH.
 */
void vmlayout_set_unload_slot(struct fgp_vm_layout *l, uint64_t addr);

/* Advertise the ring of allocation samples' stack copies at addr, size bytes (stackring.h). */
void vmlayout_set_alloc_ring(struct fgp_vm_layout *l, uint64_t addr, uint64_t size);

/*
 * The layout of the JVM this agent runs in: jvm_addr is any address inside libjvm.so (a JVMTI
 * function pointer), release its java.vm.specification.version. 0, or -ENOENT when libjvm.so or its
 * tables cannot be found (*out then has no capabilities).
 */
int vmlayout_read(const void *jvm_addr, const char *release, struct fgp_vm_layout *out);

#endif
