/* SPDX-License-Identifier: MIT */
/*
 * vmflags.h - the HotSpot flags HELLO reports, read from the JVM's own flag table.
 *
 * HotSpot exports a description of its data structures for the Serviceability Agent
 * (gHotSpotVMStructs, gHotSpotVMTypes in libjvm.so); the flag table (JVMFlag::flags) is listed
 * there with the offsets of each flag's name, value and origin. Reading it gives the final
 * values whatever set them: command line, JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS, @argfiles,
 * -XX:VMOptionsFile or ergonomics. Read-only, once, at load time.
 *
 * DebugNonSafepoints is reported as on when it is set, and also when it was left at its default:
 * HotSpot records non-safepoint debug info whenever an agent receives CompiledMethodLoad events
 * and the flag was not given explicitly (debugInfoRec.cpp, compute_recording_non_safepoints).
 */
#ifndef FG_VMFLAGS_H
#define FG_VMFLAGS_H

#include <stdbool.h>
#include <stdint.h>

struct vmstructs;

/*
 * Find the flag table of the libjvm.so that contains the code at jvm_addr and return the
 * FGP_HELLO_PRESERVE_FRAME_POINTER / FGP_HELLO_DEBUG_NON_SAFEPOINTS bits in *flags.
 * Returns 0, or -ENOENT if the JVM does not describe its flags (non-HotSpot): *flags then holds
 * the defaults (PreserveFramePointer off, DebugNonSafepoints on).
 */
int vmflags_read(const void *jvm_addr, uint32_t *flags);

/* The same from VMStructs tables already found (tests give fake ones). */
int vmflags_from(const struct vmstructs *vs, uint32_t *flags);

/* The value of the bool flag name (e.g. "UseZGC"): 0 with *val, or -ENOENT (no such flag). */
int vmflags_bool(const struct vmstructs *vs, const char *name, bool *val);

#endif
