// SPDX-License-Identifier: MIT
/*
 * unloadcount.c - the address of the JVM's count of unloaded classes in its PerfData memory
 * (see unloadcount.h).
 *
 * PerfData memory: a prologue { u4 magic CAFEC0C0 (bytes CA FE C0 C0), u1 byte_order,
 * u1 major, u1 minor, u1 accessible, i4 used, i4 overflow, i8 mod_time_stamp, i4 entry_offset,
 * i4 num_entries } then num_entries entries from entry_offset, each { i4 entry_length,
 * i4 name_offset, i4 vector_length, u1 data_type, u1 flags, u1 data_units,
 * u1 data_variability, i4 data_offset } with its NUL-terminated name and data inside it.
 *
 * Invariant: nothing is read from the JVM but through selfmem (never a fault), and nothing
 * from the copy before its bounds were checked against the bytes actually copied.
 */
#include "unloadcount.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "selfmem.h"
#include "vmstructs.h"

#define PROLOGUE_LEN 32u
#define ENTRY_HEADER_LEN 20u
#define MAX_ENTRIES 100000

static int32_t i32_at(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int unloadcount_scan(const uint8_t *mem, size_t len, uint64_t *off)
{
	static const uint8_t magic[4] = { 0xca, 0xfe, 0xc0, 0xc0 };
	const size_t name_len = sizeof(UNLOADCOUNT_NAME);
	int32_t used, at, n;

	if (len < PROLOGUE_LEN || memcmp(mem, magic, 4) != 0 || mem[4] != 1 /* little endian */ ||
	    mem[5] != 2)
		return -EBADMSG;
	used = i32_at(mem + 8);
	at = i32_at(mem + 24);
	n = i32_at(mem + 28);
	if (used < (int32_t)PROLOGUE_LEN || n < 0 || n > MAX_ENTRIES || at < (int32_t)PROLOGUE_LEN)
		return -EBADMSG;
	if ((size_t)used < len)
		len = (size_t)used;
	for (int32_t i = 0; i < n; i++) {
		const uint8_t *e = mem + at;
		int32_t elen, name, vlen, data;

		if ((size_t)at > len || len - (size_t)at < ENTRY_HEADER_LEN)
			return -EBADMSG;
		elen = i32_at(e);
		name = i32_at(e + 4);
		vlen = i32_at(e + 8);
		data = i32_at(e + 16);
		if (elen < (int32_t)ENTRY_HEADER_LEN || (size_t)elen > len - (size_t)at)
			return -EBADMSG;
		if (name >= (int32_t)ENTRY_HEADER_LEN && name < elen &&
		    (size_t)(elen - name) >= name_len &&
		    memcmp(e + name, UNLOADCOUNT_NAME, name_len) == 0) {
			uint64_t o = (uint64_t)at + (uint64_t)data;

			if (e[12] != 'J' || vlen != 0 || data < (int32_t)ENTRY_HEADER_LEN ||
			    data > elen - 8 || (o & 7) != 0)
				return -ENOENT;
			*off = o;
			return 0;
		}
		at += elen;
	}
	return -ENOENT;
}

/* The value of the static pointer-sized field type::field of the VM. */
static int static_word(const struct vmstructs *vs, const char *field, uint64_t *v)
{
	uint64_t slot;

	if (vmstructs_static(vs, "PerfMemory", field, &slot) != 0 ||
	    selfmem_read(v, slot, sizeof(*v)) != (ssize_t)sizeof(*v))
		return -ENOENT;
	return 0;
}

int unloadcount_from(const struct vmstructs *vs, uint64_t *addr)
{
	uint64_t start, cap, off;
	uint8_t *copy;
	ssize_t got;
	int rv;

	if (static_word(vs, "_start", &start) != 0 || static_word(vs, "_capacity", &cap) != 0 ||
	    start == 0 || (start & 7) != 0 || cap < PROLOGUE_LEN)
		return -ENOENT;
	if (cap > UNLOADCOUNT_MAX_MEM)
		return -EBADMSG;
	copy = malloc(cap);
	if (!copy)
		return -ENOMEM;
	got = selfmem_read(copy, start, cap);
	rv = got < (ssize_t)PROLOGUE_LEN ? -ENOENT : unloadcount_scan(copy, (size_t)got, &off);
	free(copy);
	if (rv == 0)
		*addr = start + off;
	return rv;
}

static int find_in(const struct vmstructs *vs, void *addr)
{
	return unloadcount_from(vs, addr);
}

int unloadcount_find(const void *jvm_addr, uint64_t *addr)
{
	return vmstructs_with(jvm_addr, find_in, addr);
}
