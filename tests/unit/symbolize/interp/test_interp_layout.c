// SPDX-License-Identifier: MIT
/* test_interp_layout.c - the agent's VM layout is checked before any read relies on it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fakevm.h"
#include "interp.h"

static void test_hostile_layouts_are_refused(void **state)
{
	struct fgp_vm_layout l;
	struct interp_layout il;
	const char *why = NULL;

	(void)state;
	/* Refused outright: no capability, a missing key, offsets past 4 KiB, inconsistencies. */
	fv_layout17(&l);
	l.caps = 0;
	assert_int_equal(interp_layout_init(&l, &il, &why), -ENOTSUP);
	assert_non_null(why);
	fv_layout17(&l);
	l.present &= ~(1ull << FGP_VML_KLASS_NAME);
	assert_int_equal(interp_layout_init(&l, &il, &why), -ENOTSUP);
	fv_layout17(&l);
	fgp_vml_set(&l, FGP_VML_CONSTPOOL_HOLDER, 1u << 30);
	assert_int_equal(interp_layout_init(&l, &il, &why), -ENOTSUP);
	fv_layout17(&l);
	fgp_vml_set(&l, FGP_VML_CONSTMETHOD_NAME_INDEX, 47); /* u2 past a 48-byte header */
	assert_int_equal(interp_layout_init(&l, &il, &why), -ENOTSUP);
	fv_layout17(&l);
	fgp_vml_set(&l, FGP_VML_SYMBOL_BODY, 2); /* body before the length */
	assert_int_equal(interp_layout_init(&l, &il, &why), -ENOTSUP);
	/* Frame slots far from the frame: names yes, frames no. */
	fv_layout17(&l);
	fgp_vml_set(&l, FGP_VML_INTERP_METHOD_SLOT, (uint32_t)-100000);
	assert_int_equal(interp_layout_init(&l, &il, &why), 0);
	assert_false(il.frames);
}

/* The proof of frames: used when sane, frames refused when not, trusted slots without it. */
static void test_frame_proof_is_checked_before_frames_rely_on_it(void **state)
{
	struct fgp_vm_layout l;
	struct interp_layout il;
	const char *why = NULL;

	(void)state;
	fv_layout17_proof(&l);
	assert_int_equal(interp_layout_init(&l, &il, &why), 0);
	assert_true(il.frames && il.proof);
	assert_int_equal(il.slot_cache, -6);
	assert_int_equal(il.cp_cache, 16);
	fv_layout17(&l); /* an older agent: its slots as they are */
	assert_int_equal(interp_layout_init(&l, &il, &why), 0);
	assert_true(il.frames);
	assert_false(il.proof);
	fv_layout17_proof(&l);
	fgp_vml_set(&l, FGP_VML_INTERP_CACHE_SLOT, (uint32_t)-3); /* the Method* slot itself */
	assert_int_equal(interp_layout_init(&l, &il, &why), 0);
	assert_true(il.names);
	assert_false(il.frames);
	assert_non_null(why);
	fv_layout17_proof(&l);
	fgp_vml_set(&l, FGP_VML_INTERP_CACHE_SLOT, 0); /* the saved frame pointer */
	assert_int_equal(interp_layout_init(&l, &il, &why), 0);
	assert_false(il.frames);
	fv_layout17_proof(&l);
	fgp_vml_set(&l, FGP_VML_CONSTPOOL_CACHE, 68); /* past the 72-byte ConstantPool */
	assert_int_equal(interp_layout_init(&l, &il, &why), 0);
	assert_false(il.frames);
	fv_layout17_proof(&l);
	fgp_vml_set(&l, FGP_VML_INTERP_CACHE_SLOT, (uint32_t)-1000);
	assert_int_equal(interp_layout_init(&l, &il, &why), 0);
	assert_false(il.frames);
}

static void test_the_jdk17_layout_gives_names_frames_and_lines(void **state)
{
	struct fgp_vm_layout l;
	struct interp_layout il;
	const char *why = NULL;

	(void)state;
	fv_layout17(&l);
	assert_int_equal(interp_layout_init(&l, &il, &why), 0);
	assert_true(il.names && il.frames && il.lines);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostile_layouts_are_refused),
		cmocka_unit_test(test_the_jdk17_layout_gives_names_frames_and_lines),
		cmocka_unit_test(test_frame_proof_is_checked_before_frames_rely_on_it),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
