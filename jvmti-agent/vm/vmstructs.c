// SPDX-License-Identifier: MIT
/*
 * vmstructs.c - bounded lookups in HotSpot's exported VMStructs tables (see vmstructs.h).
 *
 * Invariant: nothing is dereferenced before the exported descriptors said where it is; offsets
 * inside an entry are checked against the entry's stride first.
 */
#include "vmstructs.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

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

/* An 8-byte slot at off inside an entry of stride bytes. */
static bool slot_ok(uint64_t stride, uint64_t off)
{
	return stride >= 8 && stride <= VMSTRUCTS_MAX_STRIDE && off <= stride - 8;
}

static const char *str_at(const char *entry, uint64_t off)
{
	const char *s;

	memcpy(&s, entry + off, sizeof(s));
	return s;
}

static uint64_t u64_at(const char *entry, uint64_t off)
{
	uint64_t v;

	memcpy(&v, entry + off, sizeof(v));
	return v;
}

int vmstructs_from_dl(void *h, struct vmstructs *vs)
{
	memset(vs, 0, sizeof(*vs));
	if (!sym_ptr(h, "gHotSpotVMStructs", &vs->structs) ||
	    !sym_u64(h, "gHotSpotVMStructEntryArrayStride", &vs->s_stride) ||
	    !sym_u64(h, "gHotSpotVMStructEntryTypeNameOffset", &vs->s_type) ||
	    !sym_u64(h, "gHotSpotVMStructEntryFieldNameOffset", &vs->s_field) ||
	    !sym_u64(h, "gHotSpotVMStructEntryTypeStringOffset", &vs->s_typestr) ||
	    !sym_u64(h, "gHotSpotVMStructEntryIsStaticOffset", &vs->s_static) ||
	    !sym_u64(h, "gHotSpotVMStructEntryOffsetOffset", &vs->s_offset) ||
	    !sym_u64(h, "gHotSpotVMStructEntryAddressOffset", &vs->s_address) ||
	    !sym_ptr(h, "gHotSpotVMTypes", &vs->types) ||
	    !sym_u64(h, "gHotSpotVMTypeEntryArrayStride", &vs->t_stride) ||
	    !sym_u64(h, "gHotSpotVMTypeEntryTypeNameOffset", &vs->t_name) ||
	    !sym_u64(h, "gHotSpotVMTypeEntrySizeOffset", &vs->t_size))
		return -ENOENT;
	/* The constants are optional: a layout without them loses only what needs them. */
	if (!sym_ptr(h, "gHotSpotVMIntConstants", &vs->ints) ||
	    !sym_u64(h, "gHotSpotVMIntConstantEntryArrayStride", &vs->i_stride) ||
	    !sym_u64(h, "gHotSpotVMIntConstantEntryNameOffset", &vs->i_name) ||
	    !sym_u64(h, "gHotSpotVMIntConstantEntryValueOffset", &vs->i_value))
		vs->ints = NULL;
	if (!sym_ptr(h, "gHotSpotVMLongConstants", &vs->longs) ||
	    !sym_u64(h, "gHotSpotVMLongConstantEntryArrayStride", &vs->l_stride) ||
	    !sym_u64(h, "gHotSpotVMLongConstantEntryNameOffset", &vs->l_name) ||
	    !sym_u64(h, "gHotSpotVMLongConstantEntryValueOffset", &vs->l_value))
		vs->longs = NULL;
	return 0;
}

int vmstructs_of(const void *jvm_addr, struct vmstructs *out, void **handle)
{
	Dl_info info;
	void *h;

	*handle = NULL;
	memset(out, 0, sizeof(*out));
	if (dladdr(jvm_addr, &info) == 0 || info.dli_fname == NULL)
		return -ENOENT;
	h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (h == NULL)
		return -ENOENT;
	if (vmstructs_from_dl(h, out) != 0) {
		dlclose(h);
		return -ENOENT;
	}
	*handle = h;
	return 0;
}

int vmstructs_with(const void *jvm_addr, int (*use)(const struct vmstructs *vs, void *arg),
		   void *arg)
{
	struct vmstructs vs;
	void *h;
	int rv = vmstructs_of(jvm_addr, &vs, &h);

	if (rv != 0)
		return rv;
	rv = use(&vs, arg);
	dlclose(h);
	return rv;
}

/* The entry of type::field, static or not as asked, or NULL. */
static const char *find_entry(const struct vmstructs *vs, const char *type, const char *field,
			      bool want_static)
{
	const char *e = vs->structs;

	if (!e || !slot_ok(vs->s_stride, vs->s_type) || !slot_ok(vs->s_stride, vs->s_field) ||
	    !slot_ok(vs->s_stride, vs->s_offset) || !slot_ok(vs->s_stride, vs->s_typestr) ||
	    !slot_ok(vs->s_stride, vs->s_address) || vs->s_static > vs->s_stride - 4)
		return NULL;
	for (unsigned i = 0; i < VMSTRUCTS_MAX_ENTRIES; i++, e += vs->s_stride) {
		const char *tn = str_at(e, vs->s_type);
		const char *fn = str_at(e, vs->s_field);
		int32_t is_static;

		if (tn == NULL)
			return NULL;
		if (fn == NULL || strcmp(tn, type) != 0 || strcmp(fn, field) != 0)
			continue;
		memcpy(&is_static, e + vs->s_static, sizeof(is_static));
		if ((is_static != 0) == want_static)
			return e;
	}
	return NULL;
}

int vmstructs_static(const struct vmstructs *vs, const char *type, const char *field,
		     uint64_t *addr)
{
	const char *e = find_entry(vs, type, field, true);

	if (!e || (*addr = u64_at(e, vs->s_address)) == 0)
		return -ENOENT;
	return 0;
}

int vmstructs_field(const struct vmstructs *vs, const char *type, const char *field, uint64_t *off,
		    const char **typestr)
{
	const char *e = find_entry(vs, type, field, false);

	if (!e)
		return -ENOENT;
	*off = u64_at(e, vs->s_offset);
	if (typestr)
		*typestr = str_at(e, vs->s_typestr);
	return 0;
}

/*
 * The entry named name in the table at e (entries of stride bytes, a name at name_off, a NULL
 * name after the last), or NULL.
 */
static const char *find_named(const char *e, uint64_t stride, uint64_t name_off, const char *name)
{
	if (!e || !slot_ok(stride, name_off))
		return NULL;
	for (unsigned i = 0; i < VMSTRUCTS_MAX_ENTRIES; i++, e += stride) {
		const char *n = str_at(e, name_off);

		if (n == NULL)
			return NULL;
		if (strcmp(n, name) == 0)
			return e;
	}
	return NULL;
}

/*
 * The len bytes at value_off of the entry named name in the table at e (as find_named) into
 * *value. 0, or -ENOENT when there is no such entry or the value would leave it.
 */
static int find_value(const char *e, uint64_t stride, uint64_t name_off, uint64_t value_off,
		      const char *name, void *value, size_t len)
{
	e = find_named(e, stride, name_off, name); /* stride >= 8 from here */
	if (!e || value_off > stride - len)
		return -ENOENT;
	memcpy(value, e + value_off, len);
	return 0;
}

int vmstructs_type_size(const struct vmstructs *vs, const char *type, uint64_t *size)
{
	return find_value(vs->types, vs->t_stride, vs->t_name, vs->t_size, type, size,
			  sizeof(*size));
}

int vmstructs_int(const struct vmstructs *vs, const char *name, int32_t *v)
{
	return find_value(vs->ints, vs->i_stride, vs->i_name, vs->i_value, name, v, sizeof(*v));
}

int vmstructs_long(const struct vmstructs *vs, const char *name, uint64_t *v)
{
	return find_value(vs->longs, vs->l_stride, vs->l_name, vs->l_value, name, v, sizeof(*v));
}
