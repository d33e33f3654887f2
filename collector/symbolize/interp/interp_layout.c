// SPDX-License-Identifier: MIT
/*
 * interp_layout.c - the agent's VM layout (HotSpot's VMStructs offsets) checked before any read
 * of the target relies on it (see interp.h).
 *
 * Invariant: every offset a reader adds to a remote pointer is below INTERP_OFF_MAX, and every
 * ConstMethod field lies inside a header of at most INTERP_HDR_MAX bytes, so no layout can make
 * a reader wander or overrun its buffers.
 */
#include "interp_namer.h"

#include <errno.h>
#include <string.h>

/* A frame slot in words from the frame pointer: near it, and not the saved frame pointer. */
static bool slot_ok(int32_t slot)
{
	return slot >= -INTERP_SLOT_MAX && slot <= INTERP_SLOT_MAX && slot != 0;
}

/* A field of width bytes at off lies inside a structure of size bytes. */
static bool fits(uint32_t off, uint32_t width, uint32_t size)
{
	return off < size && width <= size - off;
}

int interp_layout_init(const struct fgp_vm_layout *l, struct interp_layout *o, const char **why)
{
	/* The fields names need: each read once its offset is known to be sane. */
	const struct {
		enum fgp_vml_key key;
		uint32_t *to;
	} need[] = {
		{ FGP_VML_METHOD_CONSTMETHOD, &o->m_cm },
		{ FGP_VML_CONSTMETHOD_CONSTANTS, &o->cm_cp },
		{ FGP_VML_CONSTMETHOD_NAME_INDEX, &o->cm_name },
		{ FGP_VML_CONSTMETHOD_SIGNATURE_INDEX, &o->cm_sig },
		{ FGP_VML_CONSTMETHOD_CODE_SIZE, &o->cm_code_size },
		{ FGP_VML_CONSTMETHOD_IDNUM, &o->cm_idnum },
		{ FGP_VML_CONSTMETHOD_SIZE, &o->cm_size },
		{ FGP_VML_CONSTPOOL_HOLDER, &o->cp_holder },
		{ FGP_VML_CONSTPOOL_SIZE, &o->cp_size },
		{ FGP_VML_KLASS_NAME, &o->k_name },
		{ FGP_VML_SYMBOL_LENGTH, &o->sym_len },
		{ FGP_VML_SYMBOL_BODY, &o->sym_body },
	};

	memset(o, 0, sizeof(*o));
	if (!(l->caps & FGP_VML_CAP_NAMES)) {
		*why = "the agent could not read this JVM's VMStructs";
		return -ENOTSUP;
	}
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		if (!fgp_vml_has(l, need[i].key) || fgp_vml_get(l, need[i].key) >= INTERP_OFF_MAX) {
			memset(o, 0, sizeof(*o)); /* nothing usable is said */
			*why = "the agent's VM layout lacks a field or has an insane offset";
			return -ENOTSUP;
		}
		*need[i].to = fgp_vml_get(l, need[i].key);
	}
	if (o->cm_size > INTERP_HDR_MAX || !fits(o->cm_cp, 8, o->cm_size) ||
	    !fits(o->cm_name, 2, o->cm_size) || !fits(o->cm_sig, 2, o->cm_size) ||
	    !fits(o->cm_code_size, 2, o->cm_size) || !fits(o->cm_idnum, 2, o->cm_size) ||
	    o->sym_len + 2 > o->sym_body || o->sym_body > 64 || o->cp_size == 0) {
		*why = "the agent's VM layout is inconsistent";
		return -ENOTSUP;
	}
	o->names = true;
	if ((l->caps & FGP_VML_CAP_LINES) && fgp_vml_has(l, FGP_VML_CONSTMETHOD_FLAGS) &&
	    fgp_vml_has(l, FGP_VML_CONSTMETHOD_FLAGS_SIZE) &&
	    fgp_vml_has(l, FGP_VML_CONSTMETHOD_HAS_LINES) &&
	    fgp_vml_has(l, FGP_VML_LINES_UNSIGNED5_X)) {
		o->cm_flags = fgp_vml_get(l, FGP_VML_CONSTMETHOD_FLAGS);
		o->cm_flags_size = fgp_vml_get(l, FGP_VML_CONSTMETHOD_FLAGS_SIZE);
		o->cm_has_lines = fgp_vml_get(l, FGP_VML_CONSTMETHOD_HAS_LINES);
		o->lines_excluded = fgp_vml_get(l, FGP_VML_LINES_UNSIGNED5_X);
		o->lines = (o->cm_flags_size == 2 || o->cm_flags_size == 4) &&
			   fits(o->cm_flags, o->cm_flags_size, o->cm_size) && o->cm_has_lines &&
			   o->lines_excluded <= 1;
	}
	if ((l->caps & FGP_VML_CAP_INTERP_FRAME) && fgp_vml_has(l, FGP_VML_INTERP_METHOD_SLOT) &&
	    fgp_vml_has(l, FGP_VML_INTERP_BCP_SLOT)) {
		o->slot_method = (int32_t)fgp_vml_get(l, FGP_VML_INTERP_METHOD_SLOT);
		o->slot_bcp = (int32_t)fgp_vml_get(l, FGP_VML_INTERP_BCP_SLOT);
		o->frames = slot_ok(o->slot_method) && slot_ok(o->slot_bcp);
		/* An older agent sends no proof: its slots are trusted as they are. */
		if (o->frames && fgp_vml_has(l, FGP_VML_INTERP_CACHE_SLOT) &&
		    fgp_vml_has(l, FGP_VML_CONSTPOOL_CACHE)) {
			o->slot_cache = (int32_t)fgp_vml_get(l, FGP_VML_INTERP_CACHE_SLOT);
			o->cp_cache = fgp_vml_get(l, FGP_VML_CONSTPOOL_CACHE);
			o->proof = slot_ok(o->slot_cache) && o->slot_cache != o->slot_method &&
				   o->slot_cache != o->slot_bcp && o->cp_cache < INTERP_OFF_MAX &&
				   fits(o->cp_cache, 8, o->cp_size);
			if (!o->proof)
				o->frames = false; /* a proof that cannot be checked is no proof */
		}
	}
	if ((l->caps & FGP_VML_CAP_GC_CLOCK) && fgp_vml_has(l, FGP_VML_GC_CLOCK_LO) &&
	    fgp_vml_has(l, FGP_VML_GC_CLOCK_HI)) {
		o->gc_clock = (uint64_t)fgp_vml_get(l, FGP_VML_GC_CLOCK_HI) << 32 |
			      fgp_vml_get(l, FGP_VML_GC_CLOCK_LO);
		if (!interp_ptr_ok(o->gc_clock))
			o->gc_clock = 0;
	}
	if ((l->caps & FGP_VML_CAP_UNLOAD_EPOCH) && fgp_vml_has(l, FGP_VML_UNLOAD_SLOT_LO) &&
	    fgp_vml_has(l, FGP_VML_UNLOAD_SLOT_HI)) {
		o->unload_slot = (uint64_t)fgp_vml_get(l, FGP_VML_UNLOAD_SLOT_HI) << 32 |
				 fgp_vml_get(l, FGP_VML_UNLOAD_SLOT_LO);
		if (!interp_ptr_ok(o->unload_slot))
			o->unload_slot = 0;
	}
	if (!o->frames)
		*why = "the agent does not know this JDK's interpreter frame layout";
	return 0;
}
