// SPDX-License-Identifier: MIT
/*
 * vmlayout.c - the VM_LAYOUT record from HotSpot's VMStructs and per-release knowledge.
 *
 * The interpreter's frame (x86-64, HotSpot's frame_x86.hpp): VMStructs exports only its top two
 * slots, frame::interpreter_frame_sender_sp_offset (-1) and ..._last_sp_offset (-2). Below
 * last_sp the template interpreter keeps, one word each since JDK 9, Method*, the holder's
 * mirror, the MethodData pointer, the ConstantPoolCache*, the locals pointer and the bcp saved
 * at its last call. The slots are vouched for only when the JVM exports those two anchors as
 * that layout has them, and with them goes what proves each frame in the collector: the cache
 * slot must hold the frame's Method*'s ConstantPool::_cache (FGP_VML_INTERP_CACHE_SLOT), so a
 * release that moved a slot gets unnamed frames, never wrong names.
 *
 * JDK 8's frame has no mirror slot: sender sp, last sp, Method*, mdx, cache, locals, bcx, so
 * its Method* is at fp - 3 words, its cache at fp - 5 and its bcp at fp - 7. JDK 8 exports no
 * frame offsets to check that against: its slots are sent only when its VMStructs have JDK 8's
 * shape too (jdk8_shape()), and the anchored ones of 9 and later only when they do not. The
 * release is java.vm.specification.version ("1.8", "11"): JDK 8's java.vm.version is HotSpot's
 * own ("25.504-b01"), not the JDK's.
 *
 * Line number tables are coded with UNSIGNED5; JDK 20 (from 20.0.?) and later exclude the zero
 * byte (X = 1), earlier releases do not (X = 0); JDK 20 itself is not trusted.
 *
 * Invariant: see vmlayout.h; offsets are accepted only below OFF_MAX and sizes below SIZE_MAX_.
 */
#include "vmlayout.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define OFF_MAX 4096u		/* no field of these classes lies further in */
#define SIZE_MAX_ 4096u		/* nor is any of them bigger */
#define INTERP_SLOTS_MIN_JDK 9u /* the mirror slot below Method* */
#define SENDER_SP_SLOT (-1)	/* the exported anchors of the layout below */
#define LAST_SP_SLOT (-2)
#define METHOD_BELOW_LAST_SP 1 /* Method*, mirror, mdp, cache, locals, bcp */
#define CACHE_BELOW_LAST_SP 4
#define BCP_BELOW_LAST_SP 6
#define JDK8_METHOD_SLOT (-3) /* Method*, mdx, cache, locals, bcx */
#define JDK8_CACHE_SLOT (-5)
#define JDK8_BCX_SLOT (-7)

unsigned vmlayout_jdk_major(const char *v)
{
	char *end;
	unsigned long major;

	if (v == NULL || *v < '0' || *v > '9')
		return 0;
	major = strtoul(v, &end, 10);
	if (major == 1 && *end == '.') /* 1.8.0_402 */
		major = strtoul(end + 1, &end, 10);
	return major > 0 && major < 1000 ? (unsigned)major : 0;
}

/* Key k = offset of type::field when found and sane; the field's C type in *ts if asked. */
static bool field(const struct vmstructs *vs, struct fgp_vm_layout *l, enum fgp_vml_key k,
		  const char *type, const char *name, const char **ts)
{
	uint64_t off;

	if (vmstructs_field(vs, type, name, &off, ts) != 0 || off >= OFF_MAX)
		return false;
	fgp_vml_set(l, k, (uint32_t)off);
	return true;
}

static bool type_size(const struct vmstructs *vs, struct fgp_vm_layout *l, enum fgp_vml_key k,
		      const char *type)
{
	uint64_t size;

	if (vmstructs_type_size(vs, type, &size) != 0 || size == 0 || size >= SIZE_MAX_)
		return false;
	fgp_vml_set(l, k, (uint32_t)size);
	return true;
}

static bool flags_field(const struct vmstructs *vs, struct fgp_vm_layout *l)
{
	const char *ts = NULL;
	int32_t bit;

	/* JDK <= 20: u2 _flags and ConstMethod::_has_linenumber_table; 21+: ConstMethodFlags. */
	if (!field(vs, l, FGP_VML_CONSTMETHOD_FLAGS, "ConstMethod", "_flags._flags", &ts) &&
	    !field(vs, l, FGP_VML_CONSTMETHOD_FLAGS, "ConstMethod", "_flags", &ts))
		return false;
	if (ts && strcmp(ts, "u2") == 0)
		fgp_vml_set(l, FGP_VML_CONSTMETHOD_FLAGS_SIZE, 2);
	else if (ts && strcmp(ts, "u4") == 0)
		fgp_vml_set(l, FGP_VML_CONSTMETHOD_FLAGS_SIZE, 4);
	else
		return false;
	if (vmstructs_int(vs, "ConstMethodFlags::_misc_has_linenumber_table", &bit) != 0 &&
	    vmstructs_int(vs, "ConstMethod::_has_linenumber_table", &bit) != 0)
		return false;
	if (bit <= 0 || (bit & (bit - 1)) != 0)
		return false;
	if (fgp_vml_get(l, FGP_VML_CONSTMETHOD_FLAGS_SIZE) == 2 && bit > 0x8000)
		return false;
	fgp_vml_set(l, FGP_VML_CONSTMETHOD_HAS_LINES, (uint32_t)bit);
	return true;
}

/*
 * Do the tables have JDK 8's shape? One CodeCache::_heap (9 split it into _heaps) and no
 * exported interpreter frame offsets (9 began exporting frame::interpreter_frame_sender_sp_offset).
 */
static bool jdk8_shape(const struct vmstructs *vs)
{
	uint64_t addr;
	int32_t v;

	return vmstructs_static(vs, "CodeCache", "_heap", &addr) == 0 &&
	       vmstructs_static(vs, "CodeCache", "_heaps", &addr) != 0 &&
	       vmstructs_int(vs, "frame::interpreter_frame_sender_sp_offset", &v) != 0;
}

/*
 * The interpreter frame's Method*, bcp and ConstantPoolCache* slots, and ConstantPool::_cache,
 * when the JVM exports the anchors of the layout they belong to.
 */
static bool interp_frame(const struct vmstructs *vs, struct fgp_vm_layout *l)
{
	int32_t sender, last;

	if (vmstructs_int(vs, "frame::interpreter_frame_sender_sp_offset", &sender) != 0 ||
	    vmstructs_int(vs, "frame::interpreter_frame_last_sp_offset", &last) != 0 ||
	    sender != SENDER_SP_SLOT || last != LAST_SP_SLOT)
		return false;
	if (!field(vs, l, FGP_VML_CONSTPOOL_CACHE, "ConstantPool", "_cache", NULL))
		return false;
	fgp_vml_set(l, FGP_VML_INTERP_METHOD_SLOT, (uint32_t)(last - METHOD_BELOW_LAST_SP));
	fgp_vml_set(l, FGP_VML_INTERP_BCP_SLOT, (uint32_t)(last - BCP_BELOW_LAST_SP));
	fgp_vml_set(l, FGP_VML_INTERP_CACHE_SLOT, (uint32_t)(last - CACHE_BELOW_LAST_SP));
	return true;
}

void vmlayout_build(const struct vmstructs *vs, unsigned jdk, struct fgp_vm_layout *l)
{
	bool names = true, lines;

	memset(l, 0, sizeof(*l));
	if (jdk)
		fgp_vml_set(l, FGP_VML_JDK_MAJOR, jdk);
	names &= field(vs, l, FGP_VML_METHOD_CONSTMETHOD, "Method", "_constMethod", NULL);
	names &= field(vs, l, FGP_VML_CONSTMETHOD_CONSTANTS, "ConstMethod", "_constants", NULL);
	names &= field(vs, l, FGP_VML_CONSTMETHOD_NAME_INDEX, "ConstMethod", "_name_index", NULL);
	names &= field(vs, l, FGP_VML_CONSTMETHOD_SIGNATURE_INDEX, "ConstMethod",
		       "_signature_index", NULL);
	names &= field(vs, l, FGP_VML_CONSTMETHOD_CODE_SIZE, "ConstMethod", "_code_size", NULL);
	names &= field(vs, l, FGP_VML_CONSTMETHOD_IDNUM, "ConstMethod", "_method_idnum", NULL);
	names &= type_size(vs, l, FGP_VML_CONSTMETHOD_SIZE, "ConstMethod");
	names &= field(vs, l, FGP_VML_CONSTPOOL_HOLDER, "ConstantPool", "_pool_holder", NULL);
	names &= type_size(vs, l, FGP_VML_CONSTPOOL_SIZE, "ConstantPool");
	names &= field(vs, l, FGP_VML_KLASS_NAME, "Klass", "_name", NULL);
	names &= field(vs, l, FGP_VML_SYMBOL_LENGTH, "Symbol", "_length", NULL);
	/* _body is an array: JDK 17 and 25 list it as "_body[0]" (and "_body" without type). */
	names &= field(vs, l, FGP_VML_SYMBOL_BODY, "Symbol", "_body[0]", NULL) ||
		 field(vs, l, FGP_VML_SYMBOL_BODY, "Symbol", "_body", NULL);
	lines = flags_field(vs, l);
	if (names)
		l->caps |= FGP_VML_CAP_NAMES;

	/* The release and the tables must agree: slots of one release never go to another. */
	if (jdk >= INTERP_SLOTS_MIN_JDK && !jdk8_shape(vs)) {
		if (interp_frame(vs, l) && names)
			l->caps |= FGP_VML_CAP_INTERP_FRAME;
	} else if (jdk == 8 && jdk8_shape(vs)) {
		fgp_vml_set(l, FGP_VML_INTERP_METHOD_SLOT, (uint32_t)JDK8_METHOD_SLOT);
		fgp_vml_set(l, FGP_VML_INTERP_BCP_SLOT, (uint32_t)JDK8_BCX_SLOT);
		if (field(vs, l, FGP_VML_CONSTPOOL_CACHE, "ConstantPool", "_cache", NULL))
			fgp_vml_set(l, FGP_VML_INTERP_CACHE_SLOT, (uint32_t)JDK8_CACHE_SLOT);
		if (names)
			l->caps |= FGP_VML_CAP_INTERP_FRAME;
	}
	if (jdk == 0 || jdk == 20)
		lines = false;
	else
		fgp_vml_set(l, FGP_VML_LINES_UNSIGNED5_X, jdk >= 21 ? 1 : 0);
	if (names && lines)
		l->caps |= FGP_VML_CAP_LINES;
}

void vmlayout_set_gc_clock(struct fgp_vm_layout *l, uint64_t addr)
{
	fgp_vml_set(l, FGP_VML_GC_CLOCK_LO, (uint32_t)addr);
	fgp_vml_set(l, FGP_VML_GC_CLOCK_HI, (uint32_t)(addr >> 32));
	l->caps |= FGP_VML_CAP_GC_CLOCK;
}

void vmlayout_set_unload_slot(struct fgp_vm_layout *l, uint64_t addr)
{
	fgp_vml_set(l, FGP_VML_UNLOAD_SLOT_LO, (uint32_t)addr);
	fgp_vml_set(l, FGP_VML_UNLOAD_SLOT_HI, (uint32_t)(addr >> 32));
	l->caps |= FGP_VML_CAP_UNLOAD_EPOCH;
}

void vmlayout_set_alloc_ring(struct fgp_vm_layout *l, uint64_t addr, uint64_t size)
{
	if (size > UINT32_MAX)
		return;
	fgp_vml_set(l, FGP_VML_ALLOC_RING_LO, (uint32_t)addr);
	fgp_vml_set(l, FGP_VML_ALLOC_RING_HI, (uint32_t)(addr >> 32));
	fgp_vml_set(l, FGP_VML_ALLOC_RING_SIZE, (uint32_t)size);
	l->caps |= FGP_VML_CAP_ALLOC_RING;
}

struct build_arg {
	unsigned int jdk;
	struct fgp_vm_layout *out;
};

static int build_of(const struct vmstructs *vs, void *arg)
{
	const struct build_arg *a = arg;

	vmlayout_build(vs, a->jdk, a->out);
	return 0;
}

int vmlayout_read(const void *jvm_addr, const char *release, struct fgp_vm_layout *out)
{
	struct build_arg a = { vmlayout_jdk_major(release), out };

	memset(out, 0, sizeof(*out));
	return vmstructs_with(jvm_addr, build_of, &a);
}
