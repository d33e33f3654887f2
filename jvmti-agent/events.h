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
#include "methodset.h"
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

/* The same with the compile's methodset already collected (methodset.h). */
void events_code_load_set(struct queue *q, struct symtab *st, jvmtiEnv *jvmti, JNIEnv *jni,
			  bool signatures, jmethodID method, jint code_size, const void *code_addr,
			  const struct methodset *set, uint64_t ts);

/* The inline part of a load in the making (ids borrowed from the methodset). */
struct events_inline {
	const jmethodID *ids;
	char **names;
	struct fgp_str *methods;
	uint32_t *sym; /* interned ids of methods[], 0 where a name could not be interned */
	struct fgp_pc_in *pcs;
	uint16_t *chains;
	size_t n_ids, n_pcs;
	bool truncated;
	struct methodset_seen seen[FGP_MAX_INLINE_DEPTH]; /* see fill_chain */
};

/* A CODE_LOAD in the making: events_load_begin, the walk, events_load_push. */
struct events_load {
	struct symtab *st;
	struct fgp_code_load_in c;
	uint32_t name_id;
	char *name; /* the name's string when it is not interned, freed by the push */
	struct events_inline it;
};

/*
 * events_code_load_set() in two steps around one walk over the compile's pcs, which the line
 * table shares (methodset_pcs_tables). begin resolves the names; true when *tab is to be filled
 * by the walk (else *tab stays empty). push encodes and queues the record (after the walk, which
 * filled *tab, or without one) and frees what begin took: call it after every begin.
 */
bool events_load_begin(struct events_load *l, struct symtab *st, jvmtiEnv *jvmti, JNIEnv *jni,
		       bool signatures, jmethodID method, jint code_size, const void *code_addr,
		       const struct methodset *set, uint64_t ts, struct methodset_table *tab);
void events_load_push(struct events_load *l, struct queue *q, const struct methodset_table *tab);

struct codelines;

/*
 * A CompiledMethodLoad as the callback sends it: the load (as events_code_load_set), then f's
 * CODE_FRAME when f is not NULL, then the CODE_LINES when lines is not NULL (codelines.h), the
 * inline and the line table filled in one walk over the compile's pcs. flags (FGP_REC_*) are
 * added to the load's.
 */
void events_code_load_all(struct queue *q, struct symtab *st, struct codelines *lines,
			  jvmtiEnv *jvmti, JNIEnv *jni, bool signatures, jmethodID method,
			  jint code_size, const void *code_addr, const struct methodset *set,
			  uint64_t ts, const struct fgp_code_frame *f, uint16_t flags);

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
