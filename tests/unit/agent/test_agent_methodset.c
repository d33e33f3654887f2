// SPDX-License-Identifier: MIT
/*
 * test_agent_methodset.c - the distinct methods of an inline record, sorted, against a plain
 * sort-and-unique of the same ids: records with heavy repetition (the usual case), a NULL id,
 * and more distinct methods than the set holds (the fallback path).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "methodset.h"

static int cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (jmethodID const *)a;
	uintptr_t y = (uintptr_t) * (jmethodID const *)b;

	return x < y ? -1 : x > y;
}

/* Build a record of npcs pcs, depth frames each, ids drawn from pool[0..npool). */
static jvmtiCompiledMethodLoadInlineRecord *record(size_t npcs, int depth, size_t npool,
						   unsigned seed, jmethodID **all, size_t *nall)
{
	jvmtiCompiledMethodLoadInlineRecord *r = calloc(1, sizeof(*r));
	PCStackInfo *pcs = calloc(npcs, sizeof(*pcs));
	jmethodID *m = calloc(npcs * (size_t)depth, sizeof(*m));

	srand(seed);
	for (size_t i = 0; i < npcs * (size_t)depth; i++)
		m[i] = (jmethodID)(uintptr_t)(npool ? 0x7f0000001000ull + 16 * (rand() % npool)
						    : 0);
	for (size_t i = 0; i < npcs; i++) {
		pcs[i].methods = &m[i * (size_t)depth];
		pcs[i].numstackframes = depth;
	}
	r->numpcs = (jint)npcs;
	r->pcinfo = pcs;
	*all = m;
	*nall = npcs * (size_t)depth;
	return r;
}

static void check(size_t npcs, int depth, size_t npool, unsigned seed, bool with_null)
{
	jmethodID *all, *want, *got;
	size_t nall, nwant = 0, ngot;
	jvmtiCompiledMethodLoadInlineRecord *r = record(npcs, depth, npool, seed, &all, &nall);

	if (with_null) {
		all[3] = NULL;
		all[nall - 1] = NULL;
	}
	want = malloc(nall * sizeof(*want));
	got = malloc(nall * sizeof(*got));
	memcpy(want, all, nall * sizeof(*want));
	qsort(want, nall, sizeof(*want), cmp);
	for (size_t i = 0; i < nall; i++)
		if (nwant == 0 || want[nwant - 1] != want[i])
			want[nwant++] = want[i];
	ngot = methodset_collect(r, got);
	assert_int_equal(ngot, nwant);
	assert_memory_equal(got, want, nwant * sizeof(*want));
	for (size_t i = 0; i < nwant; i++)
		assert_int_equal(methodset_index(got, ngot, want[i]), i);
	free(want);
	free(got);
	free(all);
	free((void *)r->pcinfo);
	free(r);
}

static void test_repeated_methods_are_kept_once_in_order(void **state)
{
	(void)state;
	check(500, 6, 12, 1, false); /* the usual: hundreds of pcs, a dozen methods */
	check(1, 1, 1, 2, false);
	check(40, 3, 40, 3, false); /* past the insertion sort's 32 */
}

static void test_a_null_method_is_one_entry(void **state)
{
	(void)state;
	check(50, 4, 7, 4, true);
}

static void test_more_methods_than_the_set_holds(void **state)
{
	(void)state;
	check(3000, 2, 5000, 5, false);
	check(3000, 2, 5000, 6, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repeated_methods_are_kept_once_in_order),
		cmocka_unit_test(test_a_null_method_is_one_entry),
		cmocka_unit_test(test_more_methods_than_the_set_holds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
