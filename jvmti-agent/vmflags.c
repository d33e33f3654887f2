// SPDX-License-Identifier: MIT
/*
 * vmflags.c - walk HotSpot's exported vmStructs to find two flag values.
 *
 * Invariant: nothing is dereferenced before the exported descriptors said where it is, and every
 * size read from them is sanity-checked first, so a JVM with a different layout yields -ENOENT,
 * never a crash.
 */
#include "vmflags.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "fgproto.h"

struct vmstructs {
	const char *base; /* gHotSpotVMStructs */
	uint64_t stride, type_name, field_name, is_static, offset, address;
	const char *types;
	uint64_t t_stride, t_name, t_size;
};

static bool sym_u64(void *h, const char *name, uint64_t *out)
{
	const uint64_t *p = dlsym(h, name);

	if (p == NULL)
		return false;
	*out = *p;
	return true;
}

static bool sym_ptr(void *h, const char *name, const char **out)
{
	const char *const *p = dlsym(h, name);

	if (p == NULL || *p == NULL)
		return false;
	*out = *p;
	return true;
}

static const char *str_at(const char *entry, uint64_t off)
{
	return *(const char *const *)(entry + off);
}

/* The struct entry for type.field, or NULL. */
static const char *find_field(const struct vmstructs *vs, const char *type, const char *field)
{
	for (const char *e = vs->base;; e += vs->stride) {
		const char *tn = str_at(e, vs->type_name);
		const char *fn = str_at(e, vs->field_name);

		if (tn == NULL)
			return NULL;
		if (fn && strcmp(tn, type) == 0 && strcmp(fn, field) == 0)
			return e;
	}
}

static uint64_t type_size(const struct vmstructs *vs, const char *type)
{
	for (const char *e = vs->types;; e += vs->t_stride) {
		const char *tn = str_at(e, vs->t_name);

		if (tn == NULL)
			return 0;
		if (strcmp(tn, type) == 0)
			return *(const uint64_t *)(e + vs->t_size);
	}
}

static int read_flags(void *h, uint32_t *flags)
{
	struct vmstructs vs;
	const char *e_flags, *e_num, *e_name, *e_addr, *e_orig;
	const char *table;
	uint64_t n, size, off_name, off_addr, off_orig;
	bool pfp = false, dns = true;

	if (!sym_ptr(h, "gHotSpotVMStructs", &vs.base) ||
	    !sym_u64(h, "gHotSpotVMStructEntryArrayStride", &vs.stride) ||
	    !sym_u64(h, "gHotSpotVMStructEntryTypeNameOffset", &vs.type_name) ||
	    !sym_u64(h, "gHotSpotVMStructEntryFieldNameOffset", &vs.field_name) ||
	    !sym_u64(h, "gHotSpotVMStructEntryIsStaticOffset", &vs.is_static) ||
	    !sym_u64(h, "gHotSpotVMStructEntryOffsetOffset", &vs.offset) ||
	    !sym_u64(h, "gHotSpotVMStructEntryAddressOffset", &vs.address) ||
	    !sym_ptr(h, "gHotSpotVMTypes", &vs.types) ||
	    !sym_u64(h, "gHotSpotVMTypeEntryArrayStride", &vs.t_stride) ||
	    !sym_u64(h, "gHotSpotVMTypeEntryTypeNameOffset", &vs.t_name) ||
	    !sym_u64(h, "gHotSpotVMTypeEntrySizeOffset", &vs.t_size))
		return -ENOENT;
	if (vs.stride == 0 || vs.stride > 256 || vs.t_stride == 0 || vs.t_stride > 256)
		return -ENOENT;
	/* JDK 11+ calls the class JVMFlag; older releases call it Flag. */
	const char *cls = "JVMFlag";

	if (find_field(&vs, cls, "flags") == NULL)
		cls = "Flag";
	e_flags = find_field(&vs, cls, "flags");
	e_num = find_field(&vs, cls, "numFlags");
	e_name = find_field(&vs, cls, "_name");
	e_addr = find_field(&vs, cls, "_addr");
	e_orig = find_field(&vs, cls, "_flags");
	size = type_size(&vs, cls);
	if (!e_flags || !e_num || !e_name || !e_addr || size < 16 || size > 256)
		return -ENOENT;
	table = *(const char *const *)str_at(e_flags, vs.address);
	n = *(const size_t *)str_at(e_num, vs.address);
	off_name = *(const uint64_t *)(e_name + vs.offset);
	off_addr = *(const uint64_t *)(e_addr + vs.offset);
	off_orig = e_orig ? *(const uint64_t *)(e_orig + vs.offset) : 0;
	if (table == NULL || n == 0 || n > 10000 || off_name >= size || off_addr >= size ||
	    off_orig >= size)
		return -ENOENT;
	for (uint64_t i = 0; i < n; i++) {
		const char *f = table + i * size;
		const char *name = str_at(f, off_name);
		const bool *val = *(const bool *const *)(f + off_addr);

		if (name == NULL || val == NULL)
			continue;
		if (strcmp(name, "PreserveFramePointer") == 0) {
			pfp = *val;
		} else if (strcmp(name, "DebugNonSafepoints") == 0) {
			/* Origin is the low 4 bits of _flags (0 = default); little-endian low byte.
			 */
			bool is_default =
				e_orig ? (*(const uint8_t *)(f + off_orig) & 0xf) == 0 : true;

			dns = *val || is_default;
		}
	}
	*flags = (pfp ? FGP_HELLO_PRESERVE_FRAME_POINTER : 0) |
		 (dns ? FGP_HELLO_DEBUG_NON_SAFEPOINTS : 0);
	return 0;
}

int vmflags_read(const void *jvm_addr, uint32_t *flags)
{
	Dl_info info;
	void *h;
	int rv;

	*flags = FGP_HELLO_DEBUG_NON_SAFEPOINTS;
	if (dladdr(jvm_addr, &info) == 0 || info.dli_fname == NULL)
		return -ENOENT;
	h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (h == NULL)
		return -ENOENT;
	rv = read_flags(h, flags);
	dlclose(h);
	return rv;
}
