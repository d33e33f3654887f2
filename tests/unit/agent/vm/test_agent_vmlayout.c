// SPDX-License-Identifier: MIT
/*
 * test_agent_vmlayout.c - the VM_LAYOUT built from fake VMStructs tables shaped like JDK 8's,
 * JDK 17's, JDK 25's and JDK 26's (offsets as those releases export them), with fields missing,
 * insane strides, interpreter frame anchors the agent does not know and unknown releases
 * turning capabilities off rather than guessing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fake_vmstructs.h"
#include "vmlayout.h"
#include "vmstructs.h"

/* JDK 17's offsets; jdk25 switches to that release's. */
static void fake_jdk(struct fake_vm *f, bool jdk25)
{
	memset(f, 0, sizeof(*f));
	fake_vm_field(f, "Method", "_constMethod", "ConstMethod*", 8);
	fake_vm_field(f, "ConstMethod", "_constants", "ConstantPool*", 8);
	if (jdk25) {
		fake_vm_field(f, "ConstMethod", "_flags._flags", "u4", 28);
		fake_vm_field(f, "ConstMethod", "_code_size", "u2", 34);
		fake_vm_field(f, "ConstMethod", "_name_index", "u2", 36);
		fake_vm_field(f, "ConstMethod", "_signature_index", "u2", 38);
		fake_vm_field(f, "ConstMethod", "_method_idnum", "u2", 40);
		fake_vm_int(f, "ConstMethodFlags::_misc_has_linenumber_table", 1);
	} else {
		fake_vm_field(f, "ConstMethod", "_flags", "u2", 28);
		fake_vm_field(f, "ConstMethod", "_code_size", "u2", 32);
		fake_vm_field(f, "ConstMethod", "_name_index", "u2", 34);
		fake_vm_field(f, "ConstMethod", "_signature_index", "u2", 36);
		fake_vm_field(f, "ConstMethod", "_method_idnum", "u2", 38);
		fake_vm_int(f, "ConstMethod::_has_linenumber_table", 1);
	}
	fake_vm_field(f, "ConstantPool", "_pool_holder", "InstanceKlass*", 24);
	fake_vm_field(f, "Klass", "_name", "Symbol*", 24);
	fake_vm_field(f, "Symbol", "_length", "u2", 4);
	fake_vm_field(f, "Symbol", "_body[0]", "u1", 6);
	fake_vm_type(f, "ConstMethod", jdk25 ? 56 : 48);
	fake_vm_type(f, "ConstantPool", 72);
	fake_vm_type(f, "Method", 88);
	/* The interpreter frame's exported anchors (vmStructs_x86.hpp), the pool's cache. */
	fake_vm_int(f, "frame::interpreter_frame_sender_sp_offset", -1);
	fake_vm_int(f, "frame::interpreter_frame_last_sp_offset", -2);
	fake_vm_field(f, "ConstantPool", "_cache", "ConstantPoolCache*", 16);
}

/* Index of the int constant name in f (it must be there). */
static unsigned int_at(const struct fake_vm *f, const char *name)
{
	for (unsigned i = 0; i < f->ni; i++)
		if (strcmp(f->i[i].name, name) == 0)
			return i;
	fail_msg("no constant %s", name);
	return 0;
}

/* Index of the field type::name in f (it must be there). */
static unsigned field_at(const struct fake_vm *f, const char *type, const char *name)
{
	for (unsigned i = 0; i < f->ns; i++)
		if (strcmp(f->s[i].type, type) == 0 && strcmp(f->s[i].field, name) == 0)
			return i;
	fail_msg("no field %s::%s", type, name);
	return 0;
}

#define ALL_CAPS (FGP_VML_CAP_NAMES | FGP_VML_CAP_INTERP_FRAME | FGP_VML_CAP_LINES)

static void test_jdk17_tables_give_every_capability_and_u2_flags(void **state)
{
	struct fake_vm f;
	struct vmstructs vs;
	struct fgp_vm_layout l;

	(void)state;
	fake_jdk(&f, false);
	fake_vm_tables(&f, &vs);
	vmlayout_build(&vs, 17, &l);
	assert_int_equal(l.caps, ALL_CAPS);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_JDK_MAJOR), 17);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_CONSTMETHOD_SIZE), 48);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_CONSTMETHOD_CODE_SIZE), 32);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_CONSTMETHOD_NAME_INDEX), 34);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_CONSTMETHOD_FLAGS), 28);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_CONSTMETHOD_FLAGS_SIZE), 2);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_CONSTMETHOD_HAS_LINES), 1);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_CONSTPOOL_HOLDER), 24);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_CONSTPOOL_SIZE), 72);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_KLASS_NAME), 24);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_SYMBOL_LENGTH), 4);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_SYMBOL_BODY), 6);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_LINES_UNSIGNED5_X), 0);
	assert_int_equal((int32_t)fgp_vml_get(&l, FGP_VML_INTERP_METHOD_SLOT), -3);
	assert_int_equal((int32_t)fgp_vml_get(&l, FGP_VML_INTERP_BCP_SLOT), -8);
	assert_int_equal((int32_t)fgp_vml_get(&l, FGP_VML_INTERP_CACHE_SLOT), -6);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_CONSTPOOL_CACHE), 16);
	vmlayout_set_gc_clock(&l, 0x7f0012345678ull);
	assert_true(l.caps & FGP_VML_CAP_GC_CLOCK);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_GC_CLOCK_LO), 0x12345678u);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_GC_CLOCK_HI), 0x7f00u);
	assert_false(l.caps & FGP_VML_CAP_ALLOC_RING);
	vmlayout_set_alloc_ring(&l, 0x7f00abcdef00ull, 4u << 20);
	assert_true(l.caps & FGP_VML_CAP_ALLOC_RING);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_ALLOC_RING_LO), 0xabcdef00u);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_ALLOC_RING_HI), 0x7f00u);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_ALLOC_RING_SIZE), 4u << 20);
}

static int heap_slot; /* where a fake CodeCache::_heap(s) lives */

/* JDK 8's tables: one code heap, no exported interpreter frame anchors. */
static void fake_jdk8(struct fake_vm *f)
{
	fake_jdk(f, false);
	f->i[int_at(f, "frame::interpreter_frame_sender_sp_offset")].name = "unexported_sender_sp";
	f->i[int_at(f, "frame::interpreter_frame_last_sp_offset")].name = "unexported_last_sp";
	fake_vm_static(f, "CodeCache", "_heap", "CodeHeap*", &heap_slot);
}

static void test_jdk8_frames_have_no_mirror_slot_and_need_jdk8_tables(void **state)
{
	struct fake_vm f;
	struct vmstructs vs;
	struct fgp_vm_layout l;

	(void)state;
	fake_jdk8(&f);
	fake_vm_tables(&f, &vs);
	vmlayout_build(&vs, 8, &l);
	assert_int_equal(l.caps, ALL_CAPS);
	assert_int_equal((int32_t)fgp_vml_get(&l, FGP_VML_INTERP_METHOD_SLOT), -3);
	assert_int_equal((int32_t)fgp_vml_get(&l, FGP_VML_INTERP_BCP_SLOT), -7);
	assert_int_equal((int32_t)fgp_vml_get(&l, FGP_VML_INTERP_CACHE_SLOT), -5);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_CONSTPOOL_CACHE), 16);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_LINES_UNSIGNED5_X), 0);
	/* tables of a later release (exported frame offsets) saying 8: no slots */
	fake_vm_int(&f, "frame::interpreter_frame_sender_sp_offset", -1);
	fake_vm_tables(&f, &vs);
	vmlayout_build(&vs, 8, &l);
	assert_int_equal(l.caps, FGP_VML_CAP_NAMES | FGP_VML_CAP_LINES);
	assert_false(fgp_vml_has(&l, FGP_VML_INTERP_BCP_SLOT));
	/* nor with the code heaps of 9 and later */
	fake_jdk8(&f);
	f.s[field_at(&f, "CodeCache", "_heap")].field = "_heaps";
	fake_vm_tables(&f, &vs);
	vmlayout_build(&vs, 8, &l);
	assert_false(l.caps & FGP_VML_CAP_INTERP_FRAME);
	/* JDK 8's tables with a later release's number (its java.vm.version is 25.x): no slots */
	fake_jdk8(&f);
	fake_vm_tables(&f, &vs);
	vmlayout_build(&vs, 25, &l);
	assert_false(l.caps & FGP_VML_CAP_INTERP_FRAME);
	assert_false(fgp_vml_has(&l, FGP_VML_INTERP_BCP_SLOT));
	/* nor JDK 8 tables without a JDK 8 version */
	fake_jdk8(&f);
	fake_vm_tables(&f, &vs);
	vmlayout_build(&vs, 7, &l);
	assert_false(l.caps & FGP_VML_CAP_INTERP_FRAME);
}

static void test_jdk25_tables_give_u4_flags_and_unsigned5_with_exclusion(void **state)
{
	struct fake_vm f;
	struct vmstructs vs;
	struct fgp_vm_layout l;

	(void)state;
	fake_jdk(&f, true);
	fake_vm_tables(&f, &vs);
	vmlayout_build(&vs, 25, &l);
	assert_int_equal(l.caps, ALL_CAPS);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_CONSTMETHOD_SIZE), 56);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_CONSTMETHOD_CODE_SIZE), 34);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_CONSTMETHOD_FLAGS_SIZE), 4);
	assert_int_equal(fgp_vml_get(&l, FGP_VML_LINES_UNSIGNED5_X), 1);
}

static void test_a_missing_field_turns_names_and_frames_off(void **state)
{
	struct fake_vm f;
	struct vmstructs vs;
	struct fgp_vm_layout l;

	(void)state;
	fake_jdk(&f, false);
	f.s[8].field = "_name_renamed"; /* Klass::_name */
	fake_vm_tables(&f, &vs);
	vmlayout_build(&vs, 17, &l);
	assert_false(l.caps & FGP_VML_CAP_NAMES);
	assert_false(l.caps & FGP_VML_CAP_INTERP_FRAME);
	assert_false(l.caps & FGP_VML_CAP_LINES);
	assert_false(fgp_vml_has(&l, FGP_VML_KLASS_NAME));
	assert_true(fgp_vml_has(&l, FGP_VML_METHOD_CONSTMETHOD));

	/* A static field of that name does not count, nor does an offset beyond any class. */
	fake_jdk(&f, false);
	f.s[8].is_static = 1;
	fake_vm_tables(&f, &vs);
	vmlayout_build(&vs, 17, &l);
	assert_false(l.caps & FGP_VML_CAP_NAMES);
	fake_jdk(&f, false);
	f.s[0].offset = 1u << 20;
	fake_vm_tables(&f, &vs);
	vmlayout_build(&vs, 17, &l);
	assert_false(l.caps & FGP_VML_CAP_NAMES);
	assert_false(fgp_vml_has(&l, FGP_VML_METHOD_CONSTMETHOD));
}

/* A release after the ones the agent was written against: the JVM's own tables decide. */
static void test_a_later_release_gets_frame_slots_from_its_exported_anchors(void **state)
{
	struct fake_vm f;
	struct vmstructs vs;
	struct fgp_vm_layout l;

	(void)state;
	fake_jdk(&f, true);
	fake_vm_tables(&f, &vs);
	vmlayout_build(&vs, 26, &l);
	assert_int_equal(l.caps, ALL_CAPS);
	assert_int_equal((int32_t)fgp_vml_get(&l, FGP_VML_INTERP_METHOD_SLOT), -3);
	assert_int_equal((int32_t)fgp_vml_get(&l, FGP_VML_INTERP_BCP_SLOT), -8);
	assert_int_equal((int32_t)fgp_vml_get(&l, FGP_VML_INTERP_CACHE_SLOT), -6);
	vmlayout_build(&vs, 27, &l);
	assert_int_equal(l.caps, ALL_CAPS);
}

/* Anchors moved, missing, or no pool cache to prove frames with: no slots at all. */
static void test_unknown_frame_anchors_give_no_frame_slots(void **state)
{
	static const struct {
		const char *name;
		int32_t value;
	} moved[] = {
		{ "frame::interpreter_frame_sender_sp_offset", -2 },
		{ "frame::interpreter_frame_last_sp_offset", -3 },
		{ "frame::interpreter_frame_last_sp_offset", 2 },
	};
	struct fake_vm f;
	struct vmstructs vs;
	struct fgp_vm_layout l;

	(void)state;
	for (size_t i = 0; i < sizeof(moved) / sizeof(moved[0]); i++) {
		fake_jdk(&f, true);
		f.i[int_at(&f, moved[i].name)].value = moved[i].value;
		fake_vm_tables(&f, &vs);
		vmlayout_build(&vs, 26, &l);
		assert_int_equal(l.caps, FGP_VML_CAP_NAMES | FGP_VML_CAP_LINES);
		assert_false(fgp_vml_has(&l, FGP_VML_INTERP_METHOD_SLOT));
		assert_false(fgp_vml_has(&l, FGP_VML_INTERP_BCP_SLOT));
	}
	fake_jdk(&f, true);
	f.i[int_at(&f, "frame::interpreter_frame_last_sp_offset")].name = "frame::renamed";
	fake_vm_tables(&f, &vs);
	vmlayout_build(&vs, 26, &l);
	assert_false(l.caps & FGP_VML_CAP_INTERP_FRAME);
	fake_jdk(&f, true);
	f.s[field_at(&f, "ConstantPool", "_cache")].field = "_cache_renamed";
	fake_vm_tables(&f, &vs);
	vmlayout_build(&vs, 26, &l);
	assert_false(l.caps & FGP_VML_CAP_INTERP_FRAME);
	assert_false(fgp_vml_has(&l, FGP_VML_INTERP_METHOD_SLOT));
}

static void test_unknown_releases_get_no_frame_slots_or_lines(void **state)
{
	struct fake_vm f;
	struct vmstructs vs;
	struct fgp_vm_layout l;

	(void)state;
	fake_jdk(&f, true);
	fake_vm_tables(&f, &vs);
	vmlayout_build(&vs, 8, &l); /* JDK 8's frame has no mirror slot */
	assert_false(l.caps & FGP_VML_CAP_INTERP_FRAME);
	vmlayout_build(&vs, 20, &l); /* the line coding changed inside 20.0.x */
	assert_false(l.caps & FGP_VML_CAP_LINES);
	vmlayout_build(&vs, 0, &l);
	assert_int_equal(l.caps, FGP_VML_CAP_NAMES);
	assert_false(fgp_vml_has(&l, FGP_VML_INTERP_METHOD_SLOT));
	/* A line-table flag that is not one bit is not trusted. */
	fake_jdk(&f, false);
	f.i[0].value = 3;
	fake_vm_tables(&f, &vs);
	vmlayout_build(&vs, 17, &l);
	assert_int_equal(l.caps, FGP_VML_CAP_NAMES | FGP_VML_CAP_INTERP_FRAME);
}

static void test_insane_strides_find_nothing(void **state)
{
	struct fake_vm f;
	struct vmstructs vs;
	struct fgp_vm_layout l;
	uint64_t off;

	(void)state;
	fake_jdk(&f, false);
	fake_vm_tables(&f, &vs);
	vs.s_stride = 4;
	assert_int_equal(vmstructs_field(&vs, "Method", "_constMethod", &off, NULL), -ENOENT);
	vs.s_stride = 1u << 20;
	assert_int_equal(vmstructs_field(&vs, "Method", "_constMethod", &off, NULL), -ENOENT);
	fake_vm_tables(&f, &vs);
	vs.s_offset = vs.s_stride; /* the value would lie past the entry */
	vmlayout_build(&vs, 17, &l);
	assert_int_equal(l.caps, 0);
	fake_vm_tables(&f, &vs);
	vs.ints = NULL; /* no constants exported: names still work, lines and frames do not */
	vmlayout_build(&vs, 17, &l);
	assert_int_equal(l.caps, FGP_VML_CAP_NAMES);
}

static void test_jdk_major_is_parsed_from_vm_versions(void **state)
{
	static const struct {
		const char *v;
		unsigned major;
	} cases[] = {
		{ "17.0.15+6-Debian-1deb12u1", 17 },
		{ "25+36-LTS", 25 },
		{ "1.8.0_402-b06", 8 },
		{ "1.8", 8 }, /* JDK 8's java.vm.specification.version */
		{ "11", 11 },
		{ "21.0.2+13", 21 },
		{ "", 0 },
		{ "abc", 0 },
		{ NULL, 0 },
		{ "99999", 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(vmlayout_jdk_major(cases[i].v), cases[i].major);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jdk17_tables_give_every_capability_and_u2_flags),
		cmocka_unit_test(test_jdk8_frames_have_no_mirror_slot_and_need_jdk8_tables),
		cmocka_unit_test(test_jdk25_tables_give_u4_flags_and_unsigned5_with_exclusion),
		cmocka_unit_test(test_a_missing_field_turns_names_and_frames_off),
		cmocka_unit_test(test_a_later_release_gets_frame_slots_from_its_exported_anchors),
		cmocka_unit_test(test_unknown_frame_anchors_give_no_frame_slots),
		cmocka_unit_test(test_unknown_releases_get_no_frame_slots_or_lines),
		cmocka_unit_test(test_insane_strides_find_nothing),
		cmocka_unit_test(test_jdk_major_is_parsed_from_vm_versions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
