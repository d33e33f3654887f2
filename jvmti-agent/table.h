/* SPDX-License-Identifier: MIT */
/*
 * table.h - the agent's own live code table, replayed to every (re)connected collector.
 *
 * Maps code ranges [addr, addr + size) to the encoded CODE_LOAD or DYNAMIC_CODE record that
 * announced them. Owned by the sender thread alone: no locking. Bounded by a byte budget that
 * counts the records, their copies and the index.
 *
 * Invariant: ranges in the table never overlap; a newer blob replaces every older blob it
 * overlaps (the code cache reuses addresses, and an unload can be lost or arrive late).
 */
#ifndef FG_TABLE_H
#define FG_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct table;

/* An empty table that may hold budget bytes. NULL on ENOMEM. */
struct table *table_new(size_t budget);

/* Free t and its records; NULL is fine. */
void table_free(struct table *t);

/*
 * Insert a copy of rec[0..len) for [addr, addr + size), first removing every overlapping entry.
 * Returns 0, -ENOSPC if the budget does not allow it (overlapping entries are still removed, so
 * the table never keeps a blob known to be stale), -EINVAL for size 0, or -ENOMEM.
 */
int table_put(struct table *t, uint64_t addr, uint32_t size, const uint8_t *rec, size_t len);

/*
 * Attach a copy of the record rec[0..len) (a CODE_FRAME, a CODE_LINES) to the entry starting
 * exactly at addr, replacing an attached record of the same type: the entry's record is then
 * its own bytes followed by its attachments, and table_each() hands out all of them. Returns
 * 0, -ENOENT (no entry there), -EINVAL (rec is not one whole record), -ENOSPC (budget), -ENOMEM.
 */
int table_attach(struct table *t, uint64_t addr, const uint8_t *rec, size_t len);

/*
 * The record of the entry starting exactly at addr, without its attachments (*len bytes), or
 * NULL. Valid until the table changes.
 */
const uint8_t *table_record(const struct table *t, uint64_t addr, size_t *len);

/*
 * table_put without the copy: rec[0..len) lives in the allocation mem, which the table owns from
 * this call on, whatever it returns (freed on failure, else when the entry goes).
 */
int table_put_owned(struct table *t, uint64_t addr, uint32_t size, const uint8_t *rec, size_t len,
		    void *mem);

/* Remove the entry starting exactly at addr. Returns 0 or -ENOENT. */
int table_remove(struct table *t, uint64_t addr);

/* Number of live entries and bytes charged to the budget. */
size_t table_count(const struct table *t);
size_t table_used(const struct table *t);

/*
 * Call fn for every entry in address order with its stored record; stops at and returns the
 * first non-zero fn result, else 0. fn must not modify the table.
 */
typedef int (*table_fn)(void *arg, uint64_t addr, uint32_t size, const uint8_t *rec, size_t len);
int table_each(const struct table *t, table_fn fn, void *arg);

#endif
