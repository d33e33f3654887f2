// SPDX-License-Identifier: MIT
/*
 * test_agent_allocgap.c - allocation samples weighed by their thread's own bytes (allocgap.h),
 * over a fake JavaThread laid out as a fake VMStructs says: the layout's checks, the reading
 * (retired bytes plus the TLAB's used part), and the gaps: a thread's first sample and a new
 * epoch keep the interval weight, the gaps of a thread add up to its bytes exactly whatever
 * the interval, and a gap below the object or past the cap is refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "allocgap.h"
#include "allocring.h"
#include "../vm/fake_vmstructs.h"

#define T_SIZE 1024u
#define T_TLAB 256u
#define T_ALLOCATED 376u
#define T_ENV 512u /* where the JNIEnv lies in the JavaThread */

static uint64_t thread_mem[T_SIZE / 8];

static void layout(struct fake_vm *f, struct vmstructs *vs, uint64_t tsize, bool with_top)
{
	memset(f, 0, sizeof(*f));
	fake_vm_field(f, "Thread", "_allocated_bytes", "jlong", T_ALLOCATED);
	fake_vm_field(f, "Thread", "_tlab", "ThreadLocalAllocBuffer", T_TLAB);
	fake_vm_field(f, "ThreadLocalAllocBuffer", "_start", "HeapWord*", 0);
	if (with_top)
		fake_vm_field(f, "ThreadLocalAllocBuffer", "_top", "HeapWord*", 8);
	fake_vm_field(f, "ThreadLocalAllocBuffer", "_end", "HeapWord*", 24);
	fake_vm_type(f, "JavaThread", tsize);
	fake_vm_tables(f, vs);
}

/* The fake thread's counts: retired bytes, and a TLAB from start with used bytes in it. */
static void set_thread(uint64_t allocated, uint64_t start, uint64_t used)
{
	uint64_t top = start + used;

	memcpy((char *)thread_mem + T_ALLOCATED, &allocated, 8);
	memcpy((char *)thread_mem + T_TLAB, &start, 8);
	memcpy((char *)thread_mem + T_TLAB + 8, &top, 8);
}

static const void *jni_of_thread(void)
{
	return (const char *)thread_mem + T_ENV;
}

static void bound(struct allocgap_layout *l)
{
	struct fake_vm f;
	struct vmstructs vs;

	layout(&f, &vs, T_SIZE, true);
	assert_int_equal(allocgap_build(&vs, l), 0);
	assert_int_equal(allocgap_bind(l, jni_of_thread(), thread_mem), 0);
}

static void test_the_reading_is_retired_bytes_plus_the_tlab(void **state)
{
	struct allocgap_layout l;
	uint64_t b = 0;

	(void)state;
	bound(&l);
	set_thread(1000000, 0x7f0000001000ull, 4096);
	assert_true(allocgap_read(&l, jni_of_thread(), &b));
	assert_int_equal(b, 1000000 + 4096);
	set_thread(7, 0, 0); /* no TLAB */
	assert_true(allocgap_read(&l, jni_of_thread(), &b));
	assert_int_equal(b, 7);
	/* a TLAB whose top lies below its start, or absurdly far: no reading */
	set_thread(7, 0x7f0000001000ull, 0);
	memcpy((char *)thread_mem + T_TLAB + 8, &(uint64_t){ 0x7f0000000000ull }, 8);
	assert_false(allocgap_read(&l, jni_of_thread(), &b));
	set_thread(7, 0x1000, ALLOCGAP_TLAB_MAX + 1);
	assert_false(allocgap_read(&l, jni_of_thread(), &b));
}

static void test_a_layout_not_known_or_outside_the_thread_is_refused(void **state)
{
	struct fake_vm f;
	struct vmstructs vs;
	struct allocgap_layout l;
	uint64_t b;

	(void)state;
	layout(&f, &vs, T_SIZE, false); /* no _top */
	assert_int_equal(allocgap_build(&vs, &l), -ENOENT);
	layout(&f, &vs, T_ALLOCATED, true); /* _allocated_bytes past the thread's end */
	assert_int_equal(allocgap_build(&vs, &l), -ENOENT);
	layout(&f, &vs, ALLOCGAP_THREAD_MAX + 8, true);
	assert_int_equal(allocgap_build(&vs, &l), -ENOENT);
	/* not bound: no reading */
	layout(&f, &vs, T_SIZE, true);
	assert_int_equal(allocgap_build(&vs, &l), 0);
	assert_false(allocgap_read(&l, jni_of_thread(), &b));
	/* a JNIEnv before the thread, or past its end, is no binding */
	assert_int_equal(allocgap_bind(&l, thread_mem, jni_of_thread()), -EINVAL);
	assert_int_equal(allocgap_bind(&l, (const char *)thread_mem + T_SIZE, thread_mem), -EINVAL);
	assert_int_equal(allocgap_bind(&l, jni_of_thread(), thread_mem), 0);
	assert_int_equal(l.env_off, T_ENV);
}

static void test_the_gaps_add_up_to_the_threads_bytes(void **state)
{
	const uint64_t iv = 512 * 1024;
	uint64_t st = 0, bytes = 5000000, first, sum = 0, w;
	uint64_t rng = 0x9e3779b97f4a7c15ull;

	(void)state;
	/* the first sample of the thread: the interval weight */
	assert_int_equal(allocgap_weigh(&st, 3, bytes, 64, iv), 0);
	first = bytes;
	for (int i = 0; i < 10000; i++) {
		uint64_t size, interval = i < 5000 ? iv : 4 * iv; /* the budget moves it */

		rng ^= rng >> 12;
		rng ^= rng << 25;
		rng ^= rng >> 27;
		size = 16 + (rng >> 40) % 8192;
		bytes += size + (rng >> 20) % (2 * interval); /* the object and those before it */
		w = allocgap_weigh(&st, 3, bytes, size, interval);
		assert_true(w >= size);
		sum += w;
	}
	assert_int_equal(sum, bytes - first);
}

static void test_a_new_epoch_starts_over(void **state)
{
	uint64_t st = 0;

	(void)state;
	assert_int_equal(allocgap_weigh(&st, 1, 1000, 100, 4096), 0);
	assert_int_equal(allocgap_weigh(&st, 1, 3000, 100, 4096), 2000);
	/* alloc went off and on: the bytes between are no sample's */
	assert_int_equal(allocgap_weigh(&st, 2, 900000, 100, 4096), 0);
	assert_int_equal(allocgap_weigh(&st, 2, 901000, 100, 4096), 1000);
	/* epoch 0 is never one */
	st = 0;
	assert_int_equal(allocgap_weigh(&st, 0, 1000, 100, 4096), 0);
	assert_int_equal(allocgap_weigh(&st, 0, 2000, 100, 4096), 0);
}

static void test_a_gap_out_of_bounds_is_refused(void **state)
{
	const uint64_t iv = 4096;
	uint64_t st = 0;

	(void)state;
	assert_int_equal(allocgap_weigh(&st, 1, 10000, 100, iv), 0);
	/* below the object itself: a count that went back, or lags */
	assert_int_equal(allocgap_weigh(&st, 1, 10050, 100, iv), 0);
	/* the counter went back: modulo 2^48 that is a huge gap, past the cap */
	assert_int_equal(allocgap_weigh(&st, 1, 5000, 100, iv), 0);
	/* at the cap, and one past it */
	assert_int_equal(allocgap_weigh(&st, 1, 5000 + 100 + ALLOCRING_GAP_INTERVALS * iv, 100, iv),
			 100 + ALLOCRING_GAP_INTERVALS * iv);
	st = (uint64_t)1 << 48;
	assert_int_equal(allocgap_weigh(&st, 1, 101 + ALLOCRING_GAP_INTERVALS * iv, 100, iv), 0);
	/* but the next one, from that reading, is sound again */
	assert_int_equal(allocgap_weigh(&st, 1, 101 + ALLOCRING_GAP_INTERVALS * iv + 300, 100, iv),
			 300);
}

static void test_the_counter_wraps_modulo_2_48(void **state)
{
	uint64_t st = 0, top = (1ull << 48) - 100;

	(void)state;
	assert_int_equal(allocgap_weigh(&st, 5, top, 64, 4096), 0);
	assert_int_equal(allocgap_weigh(&st, 5, top + 1000, 64, 4096), 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_reading_is_retired_bytes_plus_the_tlab),
		cmocka_unit_test(test_a_layout_not_known_or_outside_the_thread_is_refused),
		cmocka_unit_test(test_the_gaps_add_up_to_the_threads_bytes),
		cmocka_unit_test(test_a_new_epoch_starts_over),
		cmocka_unit_test(test_a_gap_out_of_bounds_is_refused),
		cmocka_unit_test(test_the_counter_wraps_modulo_2_48),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
