// SPDX-License-Identifier: MIT
/* test_agent_scratch.c - a callback's memory: from a kept buffer, else malloc, never shared. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "scratch.h"

/* Requests that fit come from the buffer, aligned and one after the other; the rest from malloc. */
static void test_requests_fit_the_buffer_then_go_to_malloc(void **state)
{
	struct scratch s;
	uint8_t *a, *b, *big, *z;

	(void)state;
	scratch_begin(&s);
	assert_non_null(s.buf);
	a = scratch_alloc(&s, 3);
	b = scratch_alloc(&s, 100);
	assert_ptr_equal(a, s.buf);
	assert_ptr_equal(b, s.buf + 16);
	memset(b, 0xab, 100);
	z = scratch_calloc(&s, 10, 4);
	assert_ptr_equal(z, s.buf + 128);
	for (int i = 0; i < 40; i++)
		assert_int_equal(z[i], 0);
	big = scratch_alloc(&s, SCRATCH_BYTES); /* what is left is too small: malloc */
	assert_non_null(big);
	assert_true(big < s.buf || big >= s.buf + SCRATCH_BYTES);
	memset(big, 1, SCRATCH_BYTES);
	scratch_free(&s, big); /* freed (ASan and LSan check) */
	scratch_free(&s, a);   /* buffer memory: nothing to free */
	assert_null(scratch_calloc(&s, SIZE_MAX / 2, 4));
	scratch_end(&s);
	assert_null(s.buf);
}

/* A buffer belongs to one callback at a time; with all taken, the next one uses malloc. */
static void test_buffers_are_never_shared(void **state)
{
	struct scratch s[SCRATCH_BUFS + 1];
	void *p;

	(void)state;
	for (int i = 0; i < SCRATCH_BUFS; i++) {
		scratch_begin(&s[i]);
		assert_non_null(s[i].buf);
		for (int k = 0; k < i; k++)
			assert_ptr_not_equal(s[i].buf, s[k].buf);
	}
	scratch_begin(&s[SCRATCH_BUFS]);
	assert_null(s[SCRATCH_BUFS].buf);
	p = scratch_alloc(&s[SCRATCH_BUFS], 64);
	assert_non_null(p);
	scratch_free(&s[SCRATCH_BUFS], p);
	scratch_end(&s[SCRATCH_BUFS]);
	scratch_end(&s[1]);
	scratch_begin(&s[SCRATCH_BUFS]); /* the one given back */
	assert_non_null(s[SCRATCH_BUFS].buf);
	for (int i = 0; i < SCRATCH_BUFS; i++)
		if (i != 1)
			scratch_end(&s[i]);
	scratch_end(&s[SCRATCH_BUFS]);
	/* no scratch at all: malloc */
	p = scratch_alloc(NULL, 8);
	assert_non_null(p);
	scratch_free(NULL, p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_requests_fit_the_buffer_then_go_to_malloc),
		cmocka_unit_test(test_buffers_are_never_shared),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
