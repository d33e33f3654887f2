// SPDX-License-Identifier: MIT
/*
 * vmflags.c - two flag values from HotSpot's flag table, found through its VMStructs.
 *
 * Invariant: nothing is dereferenced before the exported descriptors said where it is, and every
 * size read from them is sanity-checked first, so a JVM with a different layout yields -ENOENT,
 * never a crash.
 */
#include "vmflags.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "fgproto.h"
#include "vmstructs.h"

#define MAX_FLAGS 10000u
#define MAX_FLAG_SIZE 256u

int vmflags_from(const struct vmstructs *vs, uint32_t *flags)
{
	/* JDK 11+ calls the class JVMFlag; older releases call it Flag. */
	const char *cls = "JVMFlag";
	uint64_t table_slot, num_slot, size, off_name, off_addr, off_orig = 0;
	const char *table;
	bool pfp = false, dns = true, orig;
	size_t n;

	*flags = FGP_HELLO_DEBUG_NON_SAFEPOINTS;
	if (vmstructs_static(vs, cls, "flags", &table_slot) != 0)
		cls = "Flag";
	if (vmstructs_static(vs, cls, "flags", &table_slot) != 0 ||
	    vmstructs_static(vs, cls, "numFlags", &num_slot) != 0 ||
	    vmstructs_field(vs, cls, "_name", &off_name, NULL) != 0 ||
	    vmstructs_field(vs, cls, "_addr", &off_addr, NULL) != 0 ||
	    vmstructs_type_size(vs, cls, &size) != 0)
		return -ENOENT;
	orig = vmstructs_field(vs, cls, "_flags", &off_orig, NULL) == 0;
	memcpy(&table, (const void *)(uintptr_t)table_slot, sizeof(table));
	memcpy(&n, (const void *)(uintptr_t)num_slot, sizeof(n));
	if (size < 16 || size > MAX_FLAG_SIZE || table == NULL || n == 0 || n > MAX_FLAGS ||
	    off_name > size - 8 || off_addr > size - 8 || (orig && off_orig >= size))
		return -ENOENT;
	for (size_t i = 0; i < n; i++) {
		const char *f = table + i * size;
		const char *name;
		const bool *val;

		memcpy(&name, f + off_name, sizeof(name));
		memcpy(&val, f + off_addr, sizeof(val));
		if (name == NULL || val == NULL)
			continue;
		if (strcmp(name, "PreserveFramePointer") == 0) {
			pfp = *val;
		} else if (strcmp(name, "DebugNonSafepoints") == 0) {
			/* Origin is the low 4 bits of _flags (0 = default); little-endian low byte.
			 */
			bool is_default =
				orig ? (*(const uint8_t *)(f + off_orig) & 0xf) == 0 : true;

			dns = *val || is_default;
		}
	}
	*flags = (pfp ? FGP_HELLO_PRESERVE_FRAME_POINTER : 0) |
		 (dns ? FGP_HELLO_DEBUG_NON_SAFEPOINTS : 0);
	return 0;
}

int vmflags_bool(const struct vmstructs *vs, const char *want, bool *out)
{
	const char *cls = "JVMFlag";
	uint64_t table_slot, num_slot, size, off_name, off_addr;
	const char *table;
	size_t n;

	if (vmstructs_static(vs, cls, "flags", &table_slot) != 0)
		cls = "Flag";
	if (vmstructs_static(vs, cls, "flags", &table_slot) != 0 ||
	    vmstructs_static(vs, cls, "numFlags", &num_slot) != 0 ||
	    vmstructs_field(vs, cls, "_name", &off_name, NULL) != 0 ||
	    vmstructs_field(vs, cls, "_addr", &off_addr, NULL) != 0 ||
	    vmstructs_type_size(vs, cls, &size) != 0)
		return -ENOENT;
	memcpy(&table, (const void *)(uintptr_t)table_slot, sizeof(table));
	memcpy(&n, (const void *)(uintptr_t)num_slot, sizeof(n));
	if (size < 16 || size > MAX_FLAG_SIZE || table == NULL || n == 0 || n > MAX_FLAGS ||
	    off_name > size - 8 || off_addr > size - 8)
		return -ENOENT;
	for (size_t i = 0; i < n; i++) {
		const char *f = table + i * size;
		const char *name;
		const bool *val;

		memcpy(&name, f + off_name, sizeof(name));
		memcpy(&val, f + off_addr, sizeof(val));
		if (name != NULL && val != NULL && strcmp(name, want) == 0) {
			*out = *val;
			return 0;
		}
	}
	return -ENOENT;
}

static int flags_from(const struct vmstructs *vs, void *flags)
{
	return vmflags_from(vs, flags);
}

int vmflags_read(const void *jvm_addr, uint32_t *flags)
{
	*flags = FGP_HELLO_DEBUG_NON_SAFEPOINTS;
	return vmstructs_with(jvm_addr, flags_from, flags);
}
