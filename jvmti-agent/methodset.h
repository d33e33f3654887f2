/* SPDX-License-Identifier: MIT */
/*
 * methodset.h - the distinct methods of a compiled method's inline record, sorted by
 * jmethodID, so a pc's chain of methods becomes a chain of indexes. The inline table
 * (events.c) and the line table (codelines.c) both index into it.
 */
#ifndef FG_AGENT_METHODSET_H
#define FG_AGENT_METHODSET_H

#include <stddef.h>

#include <jvmti.h>
#include <jvmticmlr.h>

/*
 * Writes every method of r's pcs into ids (room for the sum of r's numstackframes), sorts
 * them and keeps one of each. Returns how many distinct methods ids[] now starts with.
 */
size_t methodset_collect(const jvmtiCompiledMethodLoadInlineRecord *r, jmethodID *ids);

/* The index of m in the sorted, distinct ids[0..n), where m must be. */
size_t methodset_index(const jmethodID *ids, size_t n, jmethodID m);

#endif
