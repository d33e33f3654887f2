// SPDX-License-Identifier: MIT
/*
 * test_agent_selfmem.c - fault-free reads of our own memory: the bytes asked for, through the
 * pipe; -EFAULT for NULL, unmapped and PROT_NONE memory, never a signal; a range running into an
 * unreadable page gives its readable part; reads from several threads at once never see another
 * read's bytes (whichever way each went); large reads take process_vm_readv.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "selfmem.h"

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7);
}

static void test_readable_memory_is_copied_through_the_pipe(void **state)
{
	static uint8_t src[4096];
	uint8_t dst[4096];
	uint64_t p0, v0, p1, v1;

	(void)state;
	fill(src, sizeof(src), 1);
	selfmem_counts(&p0, &v0);
	for (size_t n = 1; n <= sizeof(src); n *= 2) {
		memset(dst, 0, sizeof(dst));
		assert_int_equal(selfmem_read(dst, (uint64_t)(uintptr_t)src, n), n);
		assert_memory_equal(dst, src, n);
	}
	selfmem_counts(&p1, &v1);
	assert_int_equal(p1 - p0, 13); /* 1, 2, 4, ..., 4096 */
	assert_int_equal(v1 - v0, 0);
}

static void test_bad_addresses_are_efault_not_a_signal(void **state)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t dst[64];
	uint8_t *m = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)state;
	assert_true(m != MAP_FAILED);
	assert_int_equal(selfmem_read(dst, 0, 8), -EFAULT);
	assert_int_equal(mprotect(m, (size_t)page, PROT_NONE), 0);
	assert_int_equal(selfmem_read(dst, (uint64_t)(uintptr_t)m, 8), -EFAULT);
	assert_int_equal(munmap(m + page, (size_t)page), 0);
	assert_int_equal(selfmem_read(dst, (uint64_t)(uintptr_t)(m + page), 8), -EFAULT);
	assert_int_equal(selfmem_read(dst, UINT64_MAX - 15, 8), -EFAULT);
	munmap(m, (size_t)page);
}

static void test_a_range_running_into_an_unreadable_page_gives_its_readable_part(void **state)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t dst[64], after[64];
	uint8_t *m = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)state;
	assert_true(m != MAP_FAILED);
	fill(m, (size_t)page, 2);
	assert_int_equal(mprotect(m + page, (size_t)page, PROT_NONE), 0);
	assert_int_equal(selfmem_read(dst, (uint64_t)(uintptr_t)(m + page - 24), 64), 24);
	assert_memory_equal(dst, m + page - 24, 24);
	/* and nothing of it is left for the next read */
	assert_int_equal(selfmem_read(after, (uint64_t)(uintptr_t)m, 64), 64);
	assert_memory_equal(after, m, 64);
	munmap(m, (size_t)page * 2);
}

static void test_large_reads_take_process_vm_readv(void **state)
{
	static uint8_t src[16384], dst[16384];
	uint64_t p0, v0, p1, v1;

	(void)state;
	fill(src, sizeof(src), 3);
	selfmem_counts(&p0, &v0);
	assert_int_equal(selfmem_read(dst, (uint64_t)(uintptr_t)src, sizeof(src)), sizeof(src));
	assert_memory_equal(dst, src, sizeof(src));
	selfmem_counts(&p1, &v1);
	assert_int_equal(p1 - p0, 0);
	assert_int_equal(v1 - v0, 1);
}

static void test_two_ranges_come_in_one_round_trip_or_not_at_all(void **state)
{
	long page = sysconf(_SC_PAGESIZE);
	static uint8_t a[1024], b[3072];
	uint8_t da[1024], db[3072], after[64];
	uint64_t p0, v0, p1, v1;
	uint8_t *m = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)state;
	assert_true(m != MAP_FAILED);
	fill(a, sizeof(a), 4);
	fill(b, sizeof(b), 5);
	fill(m, (size_t)page, 6);
	selfmem_counts(&p0, &v0);
	assert_int_equal(selfmem_read2(da, (uint64_t)(uintptr_t)a, sizeof(a), db,
				       (uint64_t)(uintptr_t)b, sizeof(b)),
			 0);
	assert_memory_equal(da, a, sizeof(a));
	assert_memory_equal(db, b, sizeof(b));
	selfmem_counts(&p1, &v1);
	assert_int_equal(p1 - p0, 1);
	assert_int_equal(v1 - v0, 0);
	/* over 4 KiB together, a NULL range, either range running into an unreadable page */
	assert_int_equal(selfmem_read2(da, (uint64_t)(uintptr_t)a, sizeof(a), db,
				       (uint64_t)(uintptr_t)b, sizeof(b) + 1),
			 -EAGAIN);
	assert_int_equal(selfmem_read2(da, 0, 8, db, (uint64_t)(uintptr_t)b, 8), -EAGAIN);
	assert_int_equal(mprotect(m + page, (size_t)page, PROT_NONE), 0);
	assert_int_equal(selfmem_read2(da, (uint64_t)(uintptr_t)a, 64, db,
				       (uint64_t)(uintptr_t)(m + page - 24), 64),
			 -EAGAIN);
	assert_int_equal(selfmem_read2(da, (uint64_t)(uintptr_t)(m + page - 24), 64, db,
				       (uint64_t)(uintptr_t)a, 64),
			 -EAGAIN);
	/* and nothing of a refused pair is left for the next read */
	assert_int_equal(selfmem_read(after, (uint64_t)(uintptr_t)m, 64), 64);
	assert_memory_equal(after, m, 64);
	assert_int_equal(
		selfmem_read2(da, (uint64_t)(uintptr_t)m, 16, db, (uint64_t)(uintptr_t)b, 16), 0);
	assert_memory_equal(da, m, 16);
	assert_memory_equal(db, b, 16);
	munmap(m, (size_t)page * 2);
}

#define THREADS 4
#define ROUNDS 20000

struct reader {
	uint8_t src[512];
	unsigned bad;
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	uint8_t dst[512];

	for (unsigned i = 0; i < ROUNDS; i++) {
		size_t n = 8 + (i * 37) % (sizeof(dst) - 8);

		if (selfmem_read(dst, (uint64_t)(uintptr_t)r->src, n) != (ssize_t)n ||
		    memcmp(dst, r->src, n) != 0)
			r->bad++;
	}
	return NULL;
}

static void test_concurrent_reads_never_see_each_others_bytes(void **state)
{
	static struct reader rd[THREADS];
	pthread_t t[THREADS];
	uint64_t p0, v0, p1, v1;

	(void)state;
	selfmem_counts(&p0, &v0);
	for (int i = 0; i < THREADS; i++) {
		fill(rd[i].src, sizeof(rd[i].src), 10 + (unsigned)i);
		rd[i].bad = 0;
		assert_int_equal(pthread_create(&t[i], NULL, reader_main, &rd[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(rd[i].bad, 0);
	}
	selfmem_counts(&p1, &v1);
	assert_int_equal((p1 - p0) + (v1 - v0), THREADS * ROUNDS);
	assert_true(p1 - p0 > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readable_memory_is_copied_through_the_pipe),
		cmocka_unit_test(test_bad_addresses_are_efault_not_a_signal),
		cmocka_unit_test(
			test_a_range_running_into_an_unreadable_page_gives_its_readable_part),
		cmocka_unit_test(test_large_reads_take_process_vm_readv),
		cmocka_unit_test(test_two_ranges_come_in_one_round_trip_or_not_at_all),
		cmocka_unit_test(test_concurrent_reads_never_see_each_others_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
