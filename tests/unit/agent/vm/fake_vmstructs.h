/* SPDX-License-Identifier: MIT */
/*
 * fake_vmstructs.h - HotSpot's exported VMStructs tables (gHotSpotVMStructs, gHotSpotVMTypes,
 * gHotSpotVMIntConstants) as the agent's tests build them in memory, entry shapes as HotSpot
 * lays them out, each table ended by a NULL name, and the struct vmstructs that describes them.
 */
#ifndef FG_TEST_FAKE_VMSTRUCTS_H
#define FG_TEST_FAKE_VMSTRUCTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmstructs.h"

/* VMStructEntry, VMTypeEntry and VMIntConstantEntry. */
struct fstruct {
	const char *type, *field, *typestr;
	int32_t is_static;
	uint64_t offset;
	void *address;
};

struct ftype {
	const char *name, *super, *is_oop;
	int32_t a, b, c;
	uint64_t size;
};

struct fint {
	const char *name;
	int32_t value;
};

#define FAKE_VM_MAX 48

struct fake_vm {
	struct fstruct s[FAKE_VM_MAX];
	struct ftype t[FAKE_VM_MAX];
	struct fint i[FAKE_VM_MAX];
	unsigned ns, nt, ni;
};

/* Room for one more entry and the NULL one that ends the table, or abort. */
static inline unsigned fake_vm_slot(unsigned *n)
{
	if (*n >= FAKE_VM_MAX - 1)
		abort();
	return (*n)++;
}

/* A non-static field at offset off. */
static inline void fake_vm_field(struct fake_vm *f, const char *type, const char *field,
				 const char *typestr, uint64_t off)
{
	f->s[fake_vm_slot(&f->ns)] = (struct fstruct){ type, field, typestr, 0, off, NULL };
}

/* A static field living at addr. */
static inline void fake_vm_static(struct fake_vm *f, const char *type, const char *field,
				  const char *typestr, void *addr)
{
	f->s[fake_vm_slot(&f->ns)] = (struct fstruct){ type, field, typestr, 1, 0, addr };
}

static inline void fake_vm_type(struct fake_vm *f, const char *name, uint64_t size)
{
	f->t[fake_vm_slot(&f->nt)] = (struct ftype){ .name = name, .size = size };
}

static inline void fake_vm_int(struct fake_vm *f, const char *name, int32_t value)
{
	f->i[fake_vm_slot(&f->ni)] = (struct fint){ name, value };
}

/* The descriptors of f's tables, as vmstructs_from_dl() would find them in a libjvm.so. */
static inline void fake_vm_tables(const struct fake_vm *f, struct vmstructs *vs)
{
	memset(vs, 0, sizeof(*vs));
	vs->structs = (const char *)f->s;
	vs->s_stride = sizeof(struct fstruct);
	vs->s_type = offsetof(struct fstruct, type);
	vs->s_field = offsetof(struct fstruct, field);
	vs->s_typestr = offsetof(struct fstruct, typestr);
	vs->s_static = offsetof(struct fstruct, is_static);
	vs->s_offset = offsetof(struct fstruct, offset);
	vs->s_address = offsetof(struct fstruct, address);
	vs->types = (const char *)f->t;
	vs->t_stride = sizeof(struct ftype);
	vs->t_name = offsetof(struct ftype, name);
	vs->t_size = offsetof(struct ftype, size);
	vs->ints = (const char *)f->i;
	vs->i_stride = sizeof(struct fint);
	vs->i_name = offsetof(struct fint, name);
	vs->i_value = offsetof(struct fint, value);
}

#endif
