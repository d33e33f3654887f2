// SPDX-License-Identifier: MIT
/*
 * test_allocstack.c - an allocation sample's Java frames and class (allocstack.h): Klass names
 * written as Java writes them, the frames before the allocating Java frame left out at the
 * sample's time, and a class's name read from a fake JVM's Klass and Symbol (fakevm.h),
 * remembered only while the Klass still names the same Symbol.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "allocstack.h"
#include "codetab.h"
#include "symbolize/interp/fakevm.h"

#define MS 1000000ull

static void test_klass_names_are_written_as_java_writes_them(void **state)
{
	static const struct {
		const char *sym, *want;
	} cases[] = {
		{ "java/lang/String", "java.lang.String" },
		{ "[B", "byte[]" },
		{ "[[J", "long[][]" },
		{ "[Z", "boolean[]" },
		{ "[Ljava/lang/Object;", "java.lang.Object[]" },
		{ "[[LAllocTruth$Particle;", "AllocTruth$Particle[][]" },
		{ "AllocTruth$Particle", "AllocTruth$Particle" },
		{ "[Q", "[Q" },	  /* no primitive: as it is */
		{ "[L;", "[L;" }, /* no element class: as it is */
	};
	char out[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = allocstack_class_name((const uint8_t *)cases[i].sym,
						 strlen(cases[i].sym), out, sizeof(out));

		assert_string_equal(out, cases[i].want);
		assert_int_equal(n, strlen(cases[i].want));
	}
	/* control bytes are no class name's */
	assert_int_equal(allocstack_class_name((const uint8_t *)"a\nb", 3, out, sizeof(out)), 0);
	/* cut to fit, terminated */
	assert_int_equal(allocstack_class_name((const uint8_t *)"[B", 2, out, 4), 3);
	assert_string_equal(out, "byt");
}

#define STUB 0x7f0000000100ull
#define INTERP 0x7f0000000800ull
#define HOT 0x7f0000001000ull
#define LIBJVM 0x7f1000000000ull

static void test_the_walk_begins_at_the_innermost_java_frame(void **state)
{
	struct codetab *t = codetab_new(NULL);
	/* a runtime stub, the VM's own frame, then compiled code, then the interpreter */
	const uint64_t chain[] = { STUB + 8, LIBJVM + 0x40, HOT + 0x10, INTERP + 0x20 };
	bool java = false;

	(void)state;
	assert_non_null(t);
	assert_int_equal(codetab_add(t, CODEBLOB_DYNAMIC, STUB, 0x100, 1 * MS, "_new_array_Java"),
			 1);
	assert_int_equal(codetab_add(t, CODEBLOB_DYNAMIC, INTERP, 0x400, 1 * MS, "Interpreter"), 1);
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, HOT, 0x100, 3000 * MS, "Hot::alloc"), 1);
	assert_int_equal(allocstack_java_from(t, chain, 4, 4000 * MS, &java), 2);
	assert_true(java);
	/* long before Hot::alloc was compiled (beyond codetab's grace for late loads), its
	 * address was nobody's: the interpreter's frame is the first Java frame */
	assert_int_equal(allocstack_java_from(t, chain, 4, 1000 * MS, &java), 3);
	assert_true(java);
	/* an interpreted leaf is where it begins */
	assert_int_equal(allocstack_java_from(t, chain + 3, 1, 4000 * MS, &java), 0);
	assert_true(java);
	/* no Java frame at all: the stub is left out all the same, never shown as the frame
	 * that allocated */
	assert_int_equal(allocstack_java_from(t, chain, 2, 4000 * MS, &java), 1);
	assert_false(java);
	/* a walk lost above the stub in code not announced yet: that code is where it begins */
	assert_int_equal(allocstack_java_from(t, (const uint64_t[]){ STUB + 8, 0x7f2000000010ull },
					      2, 4000 * MS, &java),
			 1);
	assert_false(java);
	/* nothing but the stub: kept */
	assert_int_equal(allocstack_java_from(t, chain, 1, 4000 * MS, &java), 0);
	assert_false(java);
	assert_int_equal(allocstack_java_from(t, chain, 0, 4000 * MS, &java), 0);
	assert_false(java);
	codetab_free(t);
}

#define KLASS 0x10000ull
#define SYM_A 0x20000ull
#define SYM_B 0x30000ull

static void test_a_class_is_named_from_its_klass(void **state)
{
	struct fakevm vm = { .pid = 42 };
	struct vmmem_ops m = { fv_readv, &vm };
	struct fgp_vm_layout vl = { 0 };
	struct interp_layout l;
	struct allocstack_klasses *c = calloc(1, sizeof(*c));
	const char *why = NULL;
	uint8_t *k = fv_region(&vm, KLASS, 64);
	char out[ALLOCSTACK_NAME_MAX];

	(void)state;
	assert_non_null(c);
	fv_layout17(&vl);
	assert_int_equal(interp_layout_init(&vl, &l, &why), 0);
	fv_symbol(&vm, SYM_A, "[B");
	fv_symbol(&vm, SYM_B, "java/lang/String");
	fv_put64(k + fgp_vml_get(&vl, FGP_VML_KLASS_NAME), SYM_A);
	assert_int_equal(allocstack_klass_name(c, &m, 42, &l, KLASS, out, sizeof(out)), 6);
	assert_string_equal(out, "byte[]");
	assert_int_equal(c->hits, 0);
	/* again: remembered, one read of the Klass's _name */
	vm.calls = 0;
	assert_int_equal(allocstack_klass_name(c, &m, 42, &l, KLASS, out, sizeof(out)), 6);
	assert_string_equal(out, "byte[]");
	assert_int_equal(c->hits, 1);
	assert_int_equal(vm.calls, 1);
	/* the Klass now names another Symbol (its memory reused): read again */
	fv_put64(k + fgp_vml_get(&vl, FGP_VML_KLASS_NAME), SYM_B);
	assert_int_equal(allocstack_klass_name(c, &m, 42, &l, KLASS, out, sizeof(out)), 16);
	assert_string_equal(out, "java.lang.String");
	assert_int_equal(c->hits, 1);
	/* with epochs: one read of the Klass an epoch, a new epoch reads it again */
	allocstack_klass_epoch(c);
	vm.calls = 0;
	assert_int_equal(allocstack_klass_name(c, &m, 42, &l, KLASS, out, sizeof(out)), 16);
	assert_int_equal(allocstack_klass_name(c, &m, 42, &l, KLASS, out, sizeof(out)), 16);
	assert_string_equal(out, "java.lang.String");
	assert_int_equal(vm.calls, 1);
	fv_put64(k + fgp_vml_get(&vl, FGP_VML_KLASS_NAME), SYM_A);
	assert_int_equal(allocstack_klass_name(c, &m, 42, &l, KLASS, out, sizeof(out)), 16);
	allocstack_klass_epoch(c);
	assert_int_equal(allocstack_klass_name(c, &m, 42, &l, KLASS, out, sizeof(out)), 6);
	assert_string_equal(out, "byte[]");
	c->epoch = 0;
	/* another process, same address: not this one's name */
	assert_int_equal(allocstack_klass_name(c, &m, 43, &l, KLASS, out, sizeof(out)), 0);
	assert_int_equal(c->unreadable, 1);
	/* unreadable, misaligned or null Klass* */
	assert_int_equal(allocstack_klass_name(c, &m, 42, &l, 0x50000, out, sizeof(out)), 0);
	assert_int_equal(allocstack_klass_name(c, &m, 42, &l, KLASS + 4, out, sizeof(out)), 0);
	assert_int_equal(allocstack_klass_name(c, &m, 42, &l, 0, out, sizeof(out)), 0);
	assert_int_equal(c->unreadable, 2);
	assert_int_equal(c->invalid, 2);
	fv_free(&vm);
	free(c);
}

static void test_an_unbelievable_symbol_gives_no_name(void **state)
{
	struct fakevm vm = { .pid = 42 };
	struct vmmem_ops m = { fv_readv, &vm };
	struct fgp_vm_layout vl = { 0 };
	struct interp_layout l;
	struct allocstack_klasses *c = calloc(1, sizeof(*c));
	const char *why = NULL;
	uint8_t *k = fv_region(&vm, KLASS, 64), *sym = fv_region(&vm, SYM_A, 16);
	char out[ALLOCSTACK_NAME_MAX];

	(void)state;
	assert_non_null(c);
	fv_layout17(&vl);
	assert_int_equal(interp_layout_init(&vl, &l, &why), 0);
	fv_put64(k + fgp_vml_get(&vl, FGP_VML_KLASS_NAME), SYM_A);
	/* a length past the Symbol's memory */
	fv_put16(sym + 4, 200);
	assert_int_equal(allocstack_klass_name(c, &m, 42, &l, KLASS, out, sizeof(out)), 0);
	/* a length of 0, then one over the cap */
	fv_put16(sym + 4, 0);
	assert_int_equal(allocstack_klass_name(c, &m, 42, &l, KLASS, out, sizeof(out)), 0);
	fv_put16(sym + 4, INTERP_MAX_CLASS_NAME + 1);
	assert_int_equal(allocstack_klass_name(c, &m, 42, &l, KLASS, out, sizeof(out)), 0);
	/* control bytes */
	fv_put16(sym + 4, 3);
	memcpy(sym + 6, "a\001b", 3);
	assert_int_equal(allocstack_klass_name(c, &m, 42, &l, KLASS, out, sizeof(out)), 0);
	assert_int_equal(c->hits, 0);
	assert_int_equal(c->unreadable + c->invalid, 4);
	fv_free(&vm);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_klass_names_are_written_as_java_writes_them),
		cmocka_unit_test(test_the_walk_begins_at_the_innermost_java_frame),
		cmocka_unit_test(test_a_class_is_named_from_its_klass),
		cmocka_unit_test(test_an_unbelievable_symbol_gives_no_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
