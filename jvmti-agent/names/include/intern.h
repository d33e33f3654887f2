/* SPDX-License-Identifier: MIT */
/*
 * intern.h - method names interned agent-wide: each jmethodID's name is resolved through JVMTI
 * once, then referred to by a small id, the id the wire format's NAME and CODE_LOAD_IDS records
 * carry. A JIT storm compiles and inlines the same methods again and again; this saves the JVMTI
 * calls, the formatting and the bytes of every repeat.
 *
 * Callbacks (any JVM thread, concurrently) find and add; the sender thread reads names by id.
 * Nothing waits: a find or add that meets another thread inside the table gives up (0), and the
 * caller resolves the name itself and sends it inline. Names are never removed, so an id stays
 * valid for the table's life; the table stops growing at its byte budget (then 0 too).
 *
 * A jmethodID names one method for as long as its class lives; HotSpot does not hand an id of an
 * unloaded class to another method (up to JDK 25 its slots are freed with the class loader's
 * data, never reused by another loader; from JDK 26 an id is a number from a counter that only
 * grows, never a pointer), so an id's name never goes stale while a method can be compiled.
 *
 * Invariant: an id's name is complete before the id is returned, and never changes.
 */
#ifndef FG_INTERN_H
#define FG_INTERN_H

#include <stddef.h>
#include <stdint.h>

#include "fgproto.h"

struct intern;

/* A table of at most budget bytes (names, index and id slots). NULL on ENOMEM. */
struct intern *intern_new(size_t budget);

/* Free t and its names; NULL is fine. Only once nobody uses t any more. */
void intern_free(struct intern *t);

/* The id of key's name, or 0 (never added, or another thread is inside the table). */
uint32_t intern_find(struct intern *t, const void *key);

/*
 * Intern name[0..len) (truncated to FGP_MAX_STR) for key and return its new id, or key's id if
 * another thread added it meanwhile; 0 when the budget is spent, memory is short or another
 * thread is inside the table.
 */
uint32_t intern_add(struct intern *t, const void *key, const char *name, size_t len);

/*
 * For the event callbacks, which name a whole stack at once: the ids of keys[0..n) in one pass
 * through the table (ids[i] = 0: not interned). A thread inside the table is waited for a
 * moment (INTERN_SPIN tries of the lock, a few microseconds, then INTERN_YIELDS more each after
 * a sched_yield, for a holder preempted on a busy machine), no longer: -EBUSY then (ids not
 * written); 0 otherwise.
 */
#define INTERN_SPIN 256
#define INTERN_YIELDS 16
int intern_find_many(struct intern *t, const void *const *keys, size_t n, uint32_t *ids);

/* intern_add with the same short wait for a thread inside the table. */
uint32_t intern_add_spin(struct intern *t, const void *key, const char *name, size_t len);

/*
 * The name of id, which must be one intern_find or intern_add returned (to this thread, or to a
 * thread that handed it over with a release/acquire pair, as the event queue does).
 */
struct fgp_str intern_name(const struct intern *t, uint32_t id);

/* Bytes charged to the budget. */
size_t intern_used(const struct intern *t);

#endif
