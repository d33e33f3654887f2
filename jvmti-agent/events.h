/* SPDX-License-Identifier: MIT */
/*
 * events.h - JVMTI code events to encoded records in the queue. Called from JVMTI callbacks on
 * JVM threads, concurrently.
 *
 * Each function resolves names, encodes one record with shared/fgproto into a queue entry and
 * pushes it: no I/O, no lock, no waiting; when the queue budget is spent the event is counted
 * as dropped and the function returns. Timestamps are CLOCK_MONOTONIC ns taken by the caller.
 *
 * Invariant: every string borrowed from JVMTI is deallocated before these functions return.
 */
#ifndef FG_EVENTS_H
#define FG_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include <jvmti.h>

#include "fgproto.h"
#include "queue.h"
#include "symtab.h"

/*
 * CompiledMethodLoad: name of method, and the inline table from compile_info
 * (JVMTI_CMLR_INLINE_INFO; other record kinds are ignored). jni may be NULL. With a symtab st,
 * names are interned there (resolved through JVMTI only the first time a method is seen) and the
 * record is a CODE_LOAD_IDS; without one, or when a name cannot be interned, a CODE_LOAD with
 * the names inline.
 */
void events_code_load(struct queue *q, struct symtab *st, jvmtiEnv *jvmti, JNIEnv *jni,
		      bool signatures, jmethodID method, jint code_size, const void *code_addr,
		      const void *compile_info, uint64_t ts);

struct methodset;

/* The same with the compile's methodset already collected (methodset.h), for the line table. */
void events_code_load_set(struct queue *q, struct symtab *st, jvmtiEnv *jvmti, JNIEnv *jni,
			  bool signatures, jmethodID method, jint code_size, const void *code_addr,
			  const struct methodset *set, uint64_t ts);

/* CompiledMethodUnload: only the address (the jmethodID may already be invalid). */
void events_code_unload(struct queue *q, const void *code_addr, uint64_t ts);

/* DynamicCodeGenerated: stubs and the interpreter, named by the JVM (name is borrowed). */
void events_dynamic_code(struct queue *q, const char *name, const void *addr, jint length,
			 uint64_t ts);

struct codeheap;

/*
 * The CODE_FRAME of the blob at addr (codeheap.h): read it with events_frame_read() before
 * pushing the CODE_LOAD (nmethod true) or DYNAMIC_CODE that announces addr, and push it with
 * events_frame_push() right after, so the two travel together. read returns 0, or a negative
 * errno when the facts cannot be read (h NULL or unusable: then nothing is pushed).
 */
int events_frame_read(struct codeheap *h, const void *addr, bool nmethod,
		      struct fgp_code_frame *out);
void events_frame_push(struct queue *q, const struct fgp_code_frame *f);

#endif
