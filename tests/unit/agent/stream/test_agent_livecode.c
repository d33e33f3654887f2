// SPDX-License-Identifier: MIT
/* test_agent_livecode.c - the live code table: overlap replacement, removal, order, budget. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "livecode.h"

struct seen {
	uint64_t addr[64];
	uint32_t size[64];
	char tag[64];
	size_t n;
};

static int collect(void *arg, uint64_t addr, uint32_t size, const uint8_t *rec, size_t len)
{
	struct seen *s = arg;

	assert_true(s->n < 64);
	assert_int_equal(len, 4);
	s->addr[s->n] = addr;
	s->size[s->n] = size;
	s->tag[s->n] = (char)rec[0];
	s->n++;
	return 0;
}

static struct seen dump(const struct livecode *t)
{
	struct seen s;

	memset(&s, 0, sizeof(s));
	assert_int_equal(livecode_each(t, collect, &s), 0);
	assert_int_equal(s.n, livecode_count(t));
	return s;
}

static int put(struct livecode *t, uint64_t addr, uint32_t size, char tag)
{
	uint8_t rec[4] = { (uint8_t)tag, 1, 2, 3 };

	return livecode_put(t, addr, size, rec, sizeof(rec));
}

static void test_entries_come_out_in_address_order(void **state)
{
	struct livecode *t = livecode_new(1 << 20);
	struct seen s;

	(void)state;
	assert_int_equal(put(t, 0x3000, 0x100, 'c'), 0);
	assert_int_equal(put(t, 0x1000, 0x100, 'a'), 0);
	assert_int_equal(put(t, 0x2000, 0x100, 'b'), 0);
	s = dump(t);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.addr[0], 0x1000);
	assert_int_equal(s.addr[1], 0x2000);
	assert_int_equal(s.addr[2], 0x3000);
	assert_memory_equal(s.tag, "abc", 3);
	livecode_free(t);
}

static void test_newer_blob_replaces_every_overlapping_one(void **state)
{
	static const struct {
		uint64_t addr;
		uint32_t size;
		const char *left; /* tags left, in address order */
	} cases[] = {
		{ 0x1000, 0x100, "Nbcd" },  /* same start as a */
		{ 0x1080, 0x100, "Nbcd" },  /* tail of a, ends before b */
		{ 0x10ff, 0x102, "Ncd" },   /* last byte of a to first byte of b */
		{ 0x0f00, 0x100, "Nabcd" }, /* ends exactly where a starts: no overlap */
		{ 0x1100, 0x100, "aNbcd" }, /* starts exactly at a's end, ends at b's start */
		{ 0x0000, 0x10000, "N" },   /* covers everything */
		{ 0x1250, 0x10, "aNcd" },   /* inside b */
		{ 0x1f00, 0x200, "abN" },   /* across c and d */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct livecode *t = livecode_new(1 << 20);
		struct seen s;

		/* a [1000,1100) b [1200,1300) c [1f80,2000) d [2000,2080) */
		assert_int_equal(put(t, 0x1000, 0x100, 'a'), 0);
		assert_int_equal(put(t, 0x1200, 0x100, 'b'), 0);
		assert_int_equal(put(t, 0x1f80, 0x80, 'c'), 0);
		assert_int_equal(put(t, 0x2000, 0x80, 'd'), 0);
		assert_int_equal(put(t, cases[i].addr, cases[i].size, 'N'), 0);
		s = dump(t);
		s.tag[s.n] = '\0';
		if (strcmp(s.tag, cases[i].left) != 0)
			fail_msg("case %zu: left %s, want %s", i, s.tag, cases[i].left);
		for (size_t k = 1; k < s.n; k++)
			assert_true(s.addr[k - 1] + s.size[k - 1] <= s.addr[k]);
		livecode_free(t);
	}
}

static void test_remove_needs_the_exact_start(void **state)
{
	struct livecode *t = livecode_new(1 << 20);

	(void)state;
	assert_int_equal(put(t, 0x1000, 0x100, 'a'), 0);
	assert_int_equal(livecode_remove(t, 0x1010), -ENOENT);
	assert_int_equal(livecode_remove(t, 0x2000), -ENOENT);
	assert_int_equal(livecode_remove(t, 0x1000), 0);
	assert_int_equal(livecode_count(t), 0);
	assert_int_equal(livecode_remove(t, 0x1000), -ENOENT);
	livecode_free(t);
}

static void test_budget_caps_records_and_index(void **state)
{
	/* The index takes 256 entries x 32 bytes first; then 100 records of 4 bytes fit. */
	struct livecode *t = livecode_new(256 * 32 + 100 * 4);
	size_t used;

	(void)state;
	for (uint64_t i = 0; i < 100; i++)
		assert_int_equal(put(t, 0x1000 + i * 0x100, 0x100, 'x'), 0);
	assert_int_equal(put(t, 0x100000, 0x100, 'y'), -ENOSPC);
	assert_int_equal(livecode_count(t), 100);
	used = livecode_used(t);
	assert_true(used <= 256 * 32 + 100 * 4);
	/* Replacing an overlapping blob frees its bytes first, so it fits again. */
	assert_int_equal(put(t, 0x1000, 0x100, 'z'), 0);
	assert_int_equal(livecode_used(t), used);
	/* A refused blob still evicts what it overlaps: stale code is never replayed. */
	assert_int_equal(livecode_put(t, 0x1000, 0x200, (const uint8_t *)"0123456789", 10),
			 -ENOSPC);
	assert_int_equal(livecode_count(t), 98);
	livecode_free(t);
}

static void test_zero_size_and_wrapping_ranges_are_refused(void **state)
{
	struct livecode *t = livecode_new(1 << 20);

	(void)state;
	assert_int_equal(put(t, 0x1000, 0, 'a'), -EINVAL);
	assert_int_equal(put(t, UINT64_MAX - 10, 0x100, 'a'), -EINVAL);
	assert_int_equal(livecode_count(t), 0);
	livecode_free(t);
	livecode_free(NULL);
}

static int stop_at_second(void *arg, uint64_t addr, uint32_t size, const uint8_t *rec, size_t len)
{
	int *calls = arg;

	(void)addr;
	(void)size;
	(void)rec;
	(void)len;
	return ++*calls == 2 ? -42 : 0;
}

static void test_each_stops_at_first_error(void **state)
{
	struct livecode *t = livecode_new(1 << 20);
	int calls = 0;

	(void)state;
	for (uint64_t i = 0; i < 5; i++)
		assert_int_equal(put(t, 0x1000 + i * 0x100, 0x10, 'x'), 0);
	assert_int_equal(livecode_each(t, stop_at_second, &calls), -42);
	assert_int_equal(calls, 2);
	livecode_free(t);
}

static uint64_t walk_end;

static int check_disjoint(void *arg, uint64_t addr, uint32_t size, const uint8_t *rec, size_t len)
{
	(void)arg;
	(void)rec;
	(void)len;
	assert_true(addr >= walk_end);
	walk_end = addr + size;
	return 0;
}

static void test_many_entries_stay_sorted_and_disjoint(void **state)
{
	struct livecode *t = livecode_new(64 << 20);
	uint64_t x = 88172645463325252ull;
	uint8_t rec[4] = { 0 };

	(void)state;
	for (int i = 0; i < 20000; i++) {
		uint64_t addr;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		addr = (x % 0x1000000) & ~0xfull;
		assert_int_equal(livecode_put(t, addr, (uint32_t)(16 + (x >> 40) % 4096), rec, 4),
				 0);
		if (i % 3 == 0)
			assert_int_equal(livecode_remove(t, addr), 0);
	}
	assert_true(livecode_count(t) > 100);
	walk_end = 0;
	assert_int_equal(livecode_each(t, check_disjoint, NULL), 0);
	livecode_free(t);
}

static int copy_rec(void *arg, uint64_t addr, uint32_t size, const uint8_t *rec, size_t len)
{
	uint8_t *out = arg;

	(void)addr;
	(void)size;
	assert_true(len <= 64);
	memcpy(out + 1, rec, len);
	out[0] = (uint8_t)len;
	return 0;
}

static void test_attached_records_follow_theirs_and_replace_each_other(void **state)
{
	/* Records whose header says their size, as every wire record's does: a load, two
	 * attachments of type 15 (a CODE_FRAME's) and one of type 10 (a CODE_LINES'). */
	uint8_t rec[12] = { 2, 0, 0, 0, 12, 0, 0, 0, 'r', 'e', 'c', '!' };
	uint8_t a1[9] = { 15, 0, 0, 0, 9, 0, 0, 0, 'a' };
	uint8_t a2[10] = { 15, 0, 0, 0, 10, 0, 0, 0, 'x', 'y' };
	uint8_t b1[11] = { 10, 0, 0, 0, 11, 0, 0, 0, 'l', 'n', 's' };
	uint8_t bad[9] = { 10, 0, 0, 0, 12, 0, 0, 0, 'z' }; /* says 12 bytes, has 9 */
	uint8_t out[65];
	struct livecode *t = livecode_new(1 << 20);
	size_t used, len = 0;

	(void)state;
	assert_int_equal(livecode_attach(t, 0x1000, a1, sizeof(a1)), -ENOENT);
	assert_int_equal(livecode_put(t, 0x1000, 0x100, rec, sizeof(rec)), 0);
	used = livecode_used(t);
	assert_int_equal(livecode_attach(t, 0x1010, a1, sizeof(a1)), -ENOENT);
	assert_int_equal(livecode_attach(t, 0x1000, bad, sizeof(bad)), -EINVAL);
	assert_int_equal(livecode_attach(t, 0x1000, a1, sizeof(a1)), 0);
	assert_int_equal(livecode_used(t), used + 9);
	livecode_each(t, copy_rec, out);
	assert_int_equal(out[0], 21);
	assert_memory_equal(out + 1, rec, 12);
	assert_memory_equal(out + 13, a1, 9);
	/* another type rides along; the record alone is still found */
	assert_int_equal(livecode_attach(t, 0x1000, b1, sizeof(b1)), 0);
	assert_int_equal(livecode_used(t), used + 20);
	livecode_each(t, copy_rec, out);
	assert_int_equal(out[0], 32);
	assert_memory_equal(out + 13, a1, 9);
	assert_memory_equal(out + 22, b1, 11);
	assert_ptr_not_equal(livecode_record(t, 0x1000, &len), NULL);
	assert_int_equal(len, 12);
	assert_memory_equal(livecode_record(t, 0x1000, &len), rec, 12);
	assert_null(livecode_record(t, 0x1001, &len));
	/* one of the same type replaces the first, keeps the other, and the budget follows */
	assert_int_equal(livecode_attach(t, 0x1000, a2, sizeof(a2)), 0);
	assert_int_equal(livecode_used(t), used + 21);
	livecode_each(t, copy_rec, out);
	assert_int_equal(out[0], 33);
	assert_memory_equal(out + 1, rec, 12);
	assert_memory_equal(out + 13, b1, 11);
	assert_memory_equal(out + 24, a2, 10);
	livecode_free(t);
	/* over the budget: refused, the entry unchanged */
	t = livecode_new(256 * 32 + 13); /* 256 index entries of 32 bytes, then the record */
	assert_int_equal(livecode_put(t, 0x1000, 0x100, rec, sizeof(rec)), 0);
	assert_int_equal(livecode_attach(t, 0x1000, a2, sizeof(a2)), -ENOSPC);
	livecode_each(t, copy_rec, out);
	assert_int_equal(out[0], 12);
	livecode_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entries_come_out_in_address_order),
		cmocka_unit_test(test_newer_blob_replaces_every_overlapping_one),
		cmocka_unit_test(test_remove_needs_the_exact_start),
		cmocka_unit_test(test_budget_caps_records_and_index),
		cmocka_unit_test(test_zero_size_and_wrapping_ranges_are_refused),
		cmocka_unit_test(test_each_stops_at_first_error),
		cmocka_unit_test(test_many_entries_stay_sorted_and_disjoint),
		cmocka_unit_test(test_attached_records_follow_theirs_and_replace_each_other),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
