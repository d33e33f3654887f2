/* SPDX-License-Identifier: MIT */
/*
 * unloadcount.h - where the JVM counts the classes it unloaded: the PerfData counter
 * java.cls.unloadedClasses, found through VMStructs (PerfMemory::_start, _capacity) in the VM's
 * own PerfData memory.
 *
 * Why: HotSpot bumps that counter (ClassLoadingService::notify_class_unloaded, inside
 * ClassLoaderData::unload) before it frees any unloaded class's metadata
 * (ClassLoaderDataGraph::purge), for every collector, ZGC's concurrent unloading included, and
 * never otherwise. A collector that reads the counter from outside knows whether metadata it
 * read may have been freed since a sample: only when the counter moved.
 *
 * PerfMemory is set up during VM creation: look the counter up at VMInit, not at Agent_OnLoad
 * (_start is still NULL then). With -XX:-UsePerfData there is no PerfData memory: -ENOENT.
 */
#ifndef FG_UNLOADCOUNT_H
#define FG_UNLOADCOUNT_H

#include <stddef.h>
#include <stdint.h>

struct vmstructs;

#define UNLOADCOUNT_NAME "java.cls.unloadedClasses"
#define UNLOADCOUNT_MAX_MEM (16u << 20) /* larger PerfData memory is not believed */

/*
 * Find the counter in a copy of PerfData memory mem[0..len) (prologue first): 0 with *off the
 * offset of its 8-byte value (8-byte aligned, inside len), or -ENOENT (no such counter, or it
 * is not a scalar jlong) / -EBADMSG (not PerfData: magic, byte order, version, entry bounds).
 * Every offset read from mem is checked against len before use.
 */
int unloadcount_scan(const uint8_t *mem, size_t len, uint64_t *off);

/*
 * The counter's address in this process, from the VMStructs tables vs: PerfMemory's start and
 * capacity are read (fault-safe, selfmem.h), then the memory they describe is copied and
 * scanned. 0 with *addr set, -ENOENT (no PerfData: not exported, not yet set up, or disabled),
 * -EBADMSG (unbelievable contents), -ENOMEM.
 */
int unloadcount_from(const struct vmstructs *vs, uint64_t *addr);

/* unloadcount_from() with the tables of the libjvm.so that contains the code at jvm_addr. */
int unloadcount_find(const void *jvm_addr, uint64_t *addr);

#endif
