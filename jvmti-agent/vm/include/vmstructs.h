/* SPDX-License-Identifier: MIT */
/*
 * vmstructs.h - lookups in HotSpot's self-description: the gHotSpotVMStructs, gHotSpotVMTypes,
 * gHotSpotVMIntConstants and gHotSpotVMLongConstants tables libjvm.so exports, whose entry
 * layout is itself exported (gHotSpotVMStructEntryTypeNameOffset and friends).
 *
 * The tables are described by a struct vmstructs of plain pointers and strides, so tests build
 * fake tables in memory; vmstructs_from_dl() fills one from a dlopen handle of libjvm.so.
 *
 * Invariant: a walk stops at the table's NULL-name terminator or after VMSTRUCTS_MAX_ENTRIES,
 * and every stride/offset taken from the JVM is bounds-checked before use: a JVM with another
 * layout yields -ENOENT, never a crash.
 */
#ifndef FG_VMSTRUCTS_H
#define FG_VMSTRUCTS_H

#include <stdint.h>

#define VMSTRUCTS_MAX_ENTRIES 20000u
#define VMSTRUCTS_MAX_STRIDE 256u

struct vmstructs {
	const char *structs; /* gHotSpotVMStructs: { typeName, fieldName, typeString, isStatic,
			      * offset, address } entries */
	uint64_t s_stride, s_type, s_field, s_typestr, s_static, s_offset, s_address;
	const char *types; /* gHotSpotVMTypes: { typeName, ..., size } */
	uint64_t t_stride, t_name, t_size;
	const char *ints; /* gHotSpotVMIntConstants: { name, int value }; may be NULL */
	uint64_t i_stride, i_name, i_value;
	const char *longs; /* gHotSpotVMLongConstants: { name, u64 value }; may be NULL */
	uint64_t l_stride, l_name, l_value;
};

/* Fill *out from a dlopen handle of libjvm.so. 0 or -ENOENT (a symbol missing or insane). */
int vmstructs_from_dl(void *handle, struct vmstructs *out);

/*
 * Fill *out from the libjvm.so that holds the code at jvm_addr (a JVMTI function, say), already
 * loaded: 0 with *handle to dlclose() once done with *out, or -ENOENT (*handle NULL).
 */
int vmstructs_of(const void *jvm_addr, struct vmstructs *out, void **handle);

/*
 * use(vs, arg) over vmstructs_of(jvm_addr), the library handle closed after it: use's result,
 * or -ENOENT (use not called).
 */
int vmstructs_with(const void *jvm_addr, int (*use)(const struct vmstructs *vs, void *arg),
		   void *arg);

/*
 * The offset of non-static field type::field: 0 with *off (and *typestr, may be NULL: the
 * field's C type as HotSpot names it, e.g. "u2") set, or -ENOENT.
 */
int vmstructs_field(const struct vmstructs *vs, const char *type, const char *field, uint64_t *off,
		    const char **typestr);

/* The address static field type::field lives at: 0 with *addr set (never 0), or -ENOENT. */
int vmstructs_static(const struct vmstructs *vs, const char *type, const char *field,
		     uint64_t *addr);

/* sizeof(type): 0 with *size set, or -ENOENT. */
int vmstructs_type_size(const struct vmstructs *vs, const char *type, uint64_t *size);

/* An int constant (e.g. "ConstMethod::_has_linenumber_table"): 0 with *v set, or -ENOENT. */
int vmstructs_int(const struct vmstructs *vs, const char *name, int32_t *v);

/* A long constant: 0 with *v set, or -ENOENT. */
int vmstructs_long(const struct vmstructs *vs, const char *name, uint64_t *v);

#endif
