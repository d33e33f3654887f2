// SPDX-License-Identifier: MIT
/*
 * test_evlive.c - the live profile's table (samples in, frees out, what is left counted at the
 * window's end, caps counted) and the named stacks it keeps (stackagg_named: the labels of
 * agent events, as the CPU profiles print Java frames).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evlive.h"
#include "stackagg.h"

static const struct stackagg_nframe frames[] = {
	{ "com.example.Main::main", 22, 10 },
	{ "com.example.Leak::grow", 22, 42 },
};

/* The folded text of a (at most 4 KiB). */
static void folded(const struct stackagg *a, char *buf, size_t cap)
{
	FILE *f = fmemopen(buf, cap, "w");

	assert_non_null(f);
	assert_int_equal(stackagg_write_folded(a, f), 0);
	assert_int_equal(fclose(f), 0);
}

static void ids_of(struct stackagg *a, const char *leaf, uint32_t *ids, size_t *n)
{
	struct stackagg_named nm = {
		.tid = 7, .thread = "worker-1", .frames = frames, .n = 2, .leaf = leaf
	};

	assert_int_equal(stackagg_named_ids(a, &nm, ids, n), 0);
}

static void test_named_stacks_are_labelled_as_java_frames(void **state)
{
	struct stackagg_opts o = { .lines = true };
	struct stackagg *a = stackagg_new(&o, NULL), *b = stackagg_new(NULL, NULL);
	struct stackagg_named nm = { .tid = 9,
				     .thread = "http-1",
				     .truncated = true,
				     .frames = frames,
				     .n = 2,
				     .leaf = "byte[]" };
	char buf[4096];

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(stackagg_named(a, &nm, 4096, 3), 0);
	assert_int_equal(stackagg_named(a, &nm, 100, 1), 0);
	folded(a, buf, sizeof(buf));
	assert_string_equal(buf, "http-1;[truncated];com.example.Main::main:10_[j];"
				 "com.example.Leak::grow:42_[j];byte[] 4196\n");
	/* Without --lines, and a thread without a name. */
	nm.thread = NULL;
	nm.truncated = false;
	assert_int_equal(stackagg_named(b, &nm, 5, 1), 0);
	folded(b, buf, sizeof(buf));
	assert_string_equal(buf, "[tid 9];com.example.Main::main_[j];"
				 "com.example.Leak::grow_[j];byte[] 5\n");
	stackagg_free(a);
	stackagg_free(b);
}

struct seen {
	uint64_t count, aux;
	size_t stacks;
};

static int on_stack(void *arg, const uint32_t *ids, size_t n, uint64_t count, uint64_t aux)
{
	struct seen *s = arg;

	(void)ids;
	(void)n;
	s->count += count;
	s->aux += aux;
	s->stacks++;
	return 0;
}

static void test_live_is_what_was_not_freed(void **state)
{
	struct stackagg *a = stackagg_new(NULL, NULL);
	struct evlive l;
	struct evlive_stats st;
	struct seen seen = { 0 };
	uint32_t ids[STACKAGG_MAX_FRAMES];
	size_t n;

	(void)state;
	evlive_init(&l, 0, 0);
	ids_of(a, "byte[]", ids, &n);
	for (uint64_t tag = 1; tag <= 10; tag++)
		assert_int_equal(evlive_add(&l, 100, tag, ids, n, 1000, 2), 0);
	/* The same tag of another JVM is another object. */
	assert_int_equal(evlive_add(&l, 200, 1, ids, n, 500, 1), 0);
	assert_int_equal(evlive_add(&l, 100, 3, ids, n, 1000, 2), -EEXIST);
	assert_int_equal(evlive_add(&l, 100, 0, ids, n, 1000, 2), -EINVAL);
	for (uint64_t tag = 1; tag <= 10; tag += 2)
		assert_int_equal(evlive_free(&l, 100, tag), 1);
	assert_int_equal(evlive_free(&l, 100, 1), 0);	/* freed already */
	assert_int_equal(evlive_free(&l, 100, 999), 0); /* never seen */
	/* A freed slot is reused. */
	assert_int_equal(evlive_add(&l, 100, 11, ids, n, 1000, 2), 0);
	assert_int_equal(evlive_flush(&l, a), 7);
	assert_int_equal(stackagg_foreach_aux(a, on_stack, &seen), 0);
	assert_int_equal(seen.count, 6 * 1000 + 500);
	assert_int_equal(seen.aux, 6 * 2 + 1);
	assert_int_equal(seen.stacks, 1);
	evlive_stats(&l, &st);
	assert_int_equal(st.added, 12);
	assert_int_equal(st.freed, 5);
	assert_int_equal(st.flushed, 7);
	assert_int_equal(st.dup_tag, 1);
	assert_int_equal(st.unknown_free, 2);
	assert_int_equal(st.entries, 0);
	/* Empty again: a free of an earlier window's tag is unknown. */
	assert_int_equal(evlive_free(&l, 100, 2), 0);
	evlive_fini(&l);
	stackagg_free(a);
}

static void test_live_objects_keep_when_and_where_they_were_allocated(void **state)
{
	struct stackagg_opts o = { .timeline = true };
	struct stackagg *a = stackagg_new(&o, NULL);
	const struct stackagg_tsample *t;
	struct evlive l;
	uint32_t ids[STACKAGG_MAX_FRAMES];
	size_t n;

	(void)state;
	evlive_init(&l, 0, 0);
	ids_of(a, "byte[]", ids, &n);
	assert_int_equal(evlive_add_at(&l, 100, 1, ids, n, 1000, 2, 5000, 42), 0);
	assert_int_equal(evlive_add_at(&l, 100, 2, ids, n, 700, 1, 6000, 43), 0);
	assert_int_equal(evlive_free(&l, 100, 1), 1);
	assert_int_equal(evlive_flush(&l, a), 1);
	t = stackagg_timeline(a, &n);
	assert_int_equal(n, 1);
	assert_int_equal(t[0].ts, 6000);
	assert_int_equal(t[0].tid, 43);
	assert_int_equal(t[0].weight, 700);
	evlive_fini(&l);
	stackagg_free(a);
}

static void test_a_full_table_counts_what_it_cannot_keep(void **state)
{
	struct stackagg *a = stackagg_new(NULL, NULL);
	struct evlive l, m;
	struct evlive_stats st;
	uint32_t ids[STACKAGG_MAX_FRAMES];
	size_t n;

	(void)state;
	ids_of(a, "java.lang.String", ids, &n);
	evlive_init(&l, 4, 0);
	for (uint64_t tag = 1; tag <= 6; tag++)
		assert_int_equal(evlive_add(&l, 1, tag, ids, n, 100, 1), tag <= 4 ? 0 : -ENOSPC);
	evlive_stats(&l, &st);
	assert_int_equal(st.overflow, 2);
	assert_int_equal(st.overflow_bytes, 200);
	assert_int_equal(st.entries, 4);
	/* A free makes room. */
	assert_int_equal(evlive_free(&l, 1, 2), 1);
	assert_int_equal(evlive_add(&l, 1, 7, ids, n, 100, 1), 0);
	evlive_fini(&l);
	/* The frame ids are capped too (a flood of deep stacks). */
	evlive_init(&m, 0, 2 * n);
	assert_int_equal(evlive_add(&m, 1, 1, ids, n, 100, 1), 0);
	assert_int_equal(evlive_add(&m, 1, 2, ids, n, 100, 1), 0);
	assert_int_equal(evlive_add(&m, 1, 3, ids, n, 100, 1), -ENOSPC);
	evlive_clear(&m);
	evlive_stats(&m, &st);
	assert_int_equal(st.entries, 0);
	assert_int_equal(st.ids, 0);
	assert_int_equal(evlive_add(&m, 1, 3, ids, n, 100, 1), 0);
	evlive_fini(&m);
	stackagg_free(a);
}

static void test_many_tags_churn(void **state)
{
	struct stackagg *a = stackagg_new(NULL, NULL);
	struct evlive l;
	struct evlive_stats st;
	uint32_t ids[STACKAGG_MAX_FRAMES];
	size_t n;

	(void)state;
	ids_of(a, "int[]", ids, &n);
	evlive_init(&l, 1000, 0);
	for (uint64_t tag = 1; tag <= 100000; tag++) {
		assert_int_equal(evlive_add(&l, 5, tag, ids, n, 16, 1), 0);
		if (tag > 500)
			assert_int_equal(evlive_free(&l, 5, tag - 500), 1);
	}
	evlive_stats(&l, &st);
	assert_int_equal(st.entries, 500);
	assert_true(l.n <= 1000); /* slots are reused, not grown */
	assert_int_equal(evlive_flush(&l, a), 500);
	evlive_fini(&l);
	stackagg_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_named_stacks_are_labelled_as_java_frames),
		cmocka_unit_test(test_live_is_what_was_not_freed),
		cmocka_unit_test(test_live_objects_keep_when_and_where_they_were_allocated),
		cmocka_unit_test(test_a_full_table_counts_what_it_cannot_keep),
		cmocka_unit_test(test_many_tags_churn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
