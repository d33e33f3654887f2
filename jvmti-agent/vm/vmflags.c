// SPDX-License-Identifier: MIT
/*
 * vmflags.c - flag values from HotSpot's flag table, found through its VMStructs.
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

/* HotSpot's flag table as its VMStructs describe it, each field checked against the entry size. */
struct flag_table {
	const char *table;
	size_t n;
	uint64_t size, off_name, off_addr, off_orig;
	bool orig; /* off_orig known: the origin bits of _flags */
};

/* Fill t from vs; -ENOENT when a descriptor is missing or insane. */
static int flag_table(const struct vmstructs *vs, struct flag_table *t)
{
	/* JDK 11+ calls the class JVMFlag; older releases call it Flag. */
	const char *cls = "JVMFlag";
	uint64_t table_slot, num_slot;

	memset(t, 0, sizeof(*t));
	if (vmstructs_static(vs, cls, "flags", &table_slot) != 0)
		cls = "Flag";
	if (vmstructs_static(vs, cls, "flags", &table_slot) != 0 ||
	    vmstructs_static(vs, cls, "numFlags", &num_slot) != 0 ||
	    vmstructs_field(vs, cls, "_name", &t->off_name, NULL) != 0 ||
	    vmstructs_field(vs, cls, "_addr", &t->off_addr, NULL) != 0 ||
	    vmstructs_type_size(vs, cls, &t->size) != 0)
		return -ENOENT;
	t->orig = vmstructs_field(vs, cls, "_flags", &t->off_orig, NULL) == 0;
	memcpy(&t->table, (const void *)(uintptr_t)table_slot, sizeof(t->table));
	memcpy(&t->n, (const void *)(uintptr_t)num_slot, sizeof(t->n));
	if (t->size < 16 || t->size > MAX_FLAG_SIZE || t->table == NULL || t->n == 0 ||
	    t->n > MAX_FLAGS || t->off_name > t->size - 8 || t->off_addr > t->size - 8 ||
	    (t->orig && t->off_orig >= t->size))
		return -ENOENT;
	return 0;
}

/* Entry i of t: its name and value pointer (false when either is NULL) and the entry itself. */
static bool flag_at(const struct flag_table *t, size_t i, const char **name, const bool **val,
		    const char **entry)
{
	*entry = t->table + i * t->size;
	memcpy(name, *entry + t->off_name, sizeof(*name));
	memcpy(val, *entry + t->off_addr, sizeof(*val));
	return *name != NULL && *val != NULL;
}

int vmflags_from(const struct vmstructs *vs, uint32_t *flags)
{
	struct flag_table t;
	bool pfp = false, dns = true;

	*flags = FGP_HELLO_DEBUG_NON_SAFEPOINTS;
	if (flag_table(vs, &t) != 0)
		return -ENOENT;
	for (size_t i = 0; i < t.n; i++) {
		const char *name, *f;
		const bool *val;

		if (!flag_at(&t, i, &name, &val, &f))
			continue;
		if (strcmp(name, "PreserveFramePointer") == 0) {
			pfp = *val;
		} else if (strcmp(name, "DebugNonSafepoints") == 0) {
			/* Origin is the low 4 bits of _flags (0 = default); little-endian low byte.
			 */
			bool is_default =
				t.orig ? (*(const uint8_t *)(f + t.off_orig) & 0xf) == 0 : true;

			dns = *val || is_default;
		}
	}
	*flags = (pfp ? FGP_HELLO_PRESERVE_FRAME_POINTER : 0) |
		 (dns ? FGP_HELLO_DEBUG_NON_SAFEPOINTS : 0);
	return 0;
}

int vmflags_bool(const struct vmstructs *vs, const char *want, bool *out)
{
	struct flag_table t;

	if (flag_table(vs, &t) != 0)
		return -ENOENT;
	for (size_t i = 0; i < t.n; i++) {
		const char *name, *f;
		const bool *val;

		if (flag_at(&t, i, &name, &val, &f) && strcmp(name, want) == 0) {
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
