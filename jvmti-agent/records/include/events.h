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
#include "intern.h"
#include "methodset.h"
#include "queue.h"

struct codelines;

/*
 * One CompiledMethodLoad, as the callback has it: everything the load path needs, in one place.
 * Pointers are borrowed for the call.
 */
struct events_load_ctx {
	struct queue *q;
	/* Interned names (intern.h): a method's name is resolved through JVMTI only the first time
	 * it is seen, and a load whose names all have ids is a CODE_LOAD_IDS. NULL, or a name that
	 * cannot be interned: a CODE_LOAD with the names inline. */
	struct intern *names;
	struct codelines *lines; /* NULL: no CODE_LINES (codelines.h) */
	jvmtiEnv *jvmti;
	JNIEnv *jni; /* may be NULL */
	bool signatures;
	jmethodID method;
	jint code_size;
	const void *code_addr;
	/* The compile's methods (methodset_of on compile_info; JVMTI_CMLR_INLINE_INFO only). */
	const struct methodset *set;
	uint64_t ts;
	const struct fgp_code_frame *frame; /* NULL: no CODE_FRAME */
	uint16_t flags;			    /* FGP_REC_* added to the load's */
};

/*
 * A CompiledMethodLoad as the callback sends it: the load with its inline table, then the
 * CODE_FRAME when ctx->frame is set, then the CODE_LINES when ctx->lines is set; the inline and
 * the line table are filled in one walk over the compile's pcs.
 */
void events_code_load(const struct events_load_ctx *ctx);

/* TABLES (fgproto.h): the tables of compiled methods are on, or off, from ts on. */
void events_tables(struct queue *q, bool on, uint64_t ts);

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
