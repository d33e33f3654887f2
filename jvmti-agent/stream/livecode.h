/* SPDX-License-Identifier: MIT */
/*
 * livecode.h - the agent's own live code table, replayed to every (re)connected collector.
 *
 * Maps code ranges [addr, addr + size) to the encoded CODE_LOAD or DYNAMIC_CODE record that
 * announced them. Owned by the sender thread alone: no locking. Bounded by a byte budget that
 * counts the records, their copies and the index.
 *
 * Invariant: ranges in the table never overlap; a newer blob replaces every older blob it
 * overlaps (the code cache reuses addresses, and an unload can be lost or arrive late).
 */
#ifndef FG_LIVECODE_H
#define FG_LIVECODE_H

#include <stddef.h>
#include <stdint.h>

struct livecode;

/* An empty table that may hold budget bytes. NULL on ENOMEM. */
struct livecode *livecode_new(size_t budget);

/* Free t and its records; NULL is fine. */
void livecode_free(struct livecode *t);

/*
 * Insert a copy of rec[0..len) for [addr, addr + size), first removing every overlapping entry.
 * Returns 0, -ENOSPC if the budget does not allow it (overlapping entries are still removed, so
 * the table never keeps a blob known to be stale), -EINVAL for size 0, or -ENOMEM.
 */
int livecode_put(struct livecode *t, uint64_t addr, uint32_t size, const uint8_t *rec, size_t len);

/*
 * Attach a copy of the record rec[0..len) (a CODE_FRAME, a CODE_LINES) to the entry starting
 * exactly at addr, replacing an attached record of the same type: the entry's record is then
 * its own bytes followed by its attachments, and livecode_each() hands out all of them. Returns
 * 0, -ENOENT (no entry there), -EINVAL (rec is not one whole record), -ENOSPC (budget), -ENOMEM.
 */
int livecode_attach(struct livecode *t, uint64_t addr, const uint8_t *rec, size_t len);

/*
 * The record of the entry starting exactly at addr, without its attachments (*len bytes), or
 * NULL. Valid until the table changes.
 */
const uint8_t *livecode_record(const struct livecode *t, uint64_t addr, size_t *len);

/*
 * livecode_put without the copy: rec[0..len) lives in the allocation mem, which the table owns from
 * this call on, whatever it returns (freed on failure, else when the entry goes).
 */
int livecode_put_owned(struct livecode *t, uint64_t addr, uint32_t size, const uint8_t *rec,
		       size_t len, void *mem);

/* Remove the entry starting exactly at addr. Returns 0 or -ENOENT. */
int livecode_remove(struct livecode *t, uint64_t addr);

/* Number of live entries and bytes charged to the budget. */
size_t livecode_count(const struct livecode *t);
size_t livecode_used(const struct livecode *t);

/*
 * Call fn for every entry in address order with its stored record; stops at and returns the
 * first non-zero fn result, else 0. fn must not modify the table.
 */
typedef int (*livecode_fn)(void *arg, uint64_t addr, uint32_t size, const uint8_t *rec, size_t len);
int livecode_each(const struct livecode *t, livecode_fn fn, void *arg);

#endif
