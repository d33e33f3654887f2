// SPDX-License-Identifier: MIT
/*
 * test_agent_stackring.c - the allocation samples' ring (stackring.h, shared/allocring.h): a
 * head a reader accepts (and each field of it that lies refused), its memory taken only once
 * populated, a sample's slot whole with its
 * copy capped at copy_max and rounded to 8, laps that overwrite older samples, a slot being
 * written never taken twice, and writers on several threads against a reader that checks every
 * copy it accepts word for word: a torn slot is never accepted. Each sample carries its weight,
 * size / (1 - exp(-size / I)), and its slot's sums grow by it (a busy slot's sample weighs in the
 * head's): over any laps and any writers, the slots' and the head's sums add up to every
 * sample's weight.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sys/mman.h>
#include <unistd.h>

#include "stackring.h"

#define SLOTS 16u
#define COPY 1024u

static const struct allocring_head *head(const struct stackring *r)
{
	return stackring_base(r);
}

static const struct allocring_slot *slot(const struct stackring *r, uint64_t n)
{
	const struct allocring_head *h = head(r);

	return (const void *)((const char *)h + allocring_slot_off(h, n));
}

static void test_the_head_says_the_geometry(void **state)
{
	struct stackring *r;
	struct allocring_head h;

	(void)state;
	assert_int_equal(stackring_new(SLOTS, COPY, &r), 0);
	h = *head(r);
	assert_true(allocring_geom_ok(&h, stackring_size(r)));
	assert_int_equal(h.slots, SLOTS);
	assert_int_equal(h.copy_max, COPY);
	assert_true(stackring_size(r) ==
		    sizeof(h) + SLOTS * (sizeof(struct allocring_slot) + COPY));
	assert_false(allocring_geom_ok(&h, stackring_size(r) + 8)); /* another size announced */
	h.slots = 24;						    /* not a power of two */
	assert_false(allocring_geom_ok(&h, stackring_size(r)));
	h = *head(r);
	h.slot_size += 8; /* slots that would overlap the next */
	assert_false(allocring_geom_ok(&h, stackring_size(r)));
	h = *head(r);
	h.copy_max = ALLOCRING_COPY_MAX * 2;
	assert_false(allocring_geom_ok(&h, stackring_size(r)));
	h = *head(r);
	h.magic ^= 1;
	assert_false(allocring_geom_ok(&h, stackring_size(r)));
	stackring_free(r);
	assert_int_equal(stackring_new(SLOTS + 1, COPY, &r), -EINVAL);
	assert_int_equal(stackring_new(SLOTS, COPY + 4, &r), -EINVAL);
	assert_int_equal(stackring_new(ALLOCRING_SLOTS_MAX * 2, COPY, &r), -EINVAL);
}

/* Pages of the ring resident in memory now (mincore). */
static size_t resident(const struct stackring *r)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (stackring_size(r) + page - 1) / page,
	       in = 0;
	unsigned char *v = calloc(n, 1);

	assert_non_null(v);
	assert_int_equal(mincore((void *)(uintptr_t)stackring_base(r), stackring_size(r), v), 0);
	for (size_t i = 0; i < n; i++)
		in += v[i] & 1;
	free(v);
	return in;
}

static void test_the_ring_takes_memory_once_populated(void **state)
{
	struct stackring *r;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t word = 7;
	struct stackring_sample s = { .ts = 1, .size = 8, .interval = 8, .stack = &word, .len = 8 };

	(void)state;
	assert_int_equal(stackring_new(64, 4096, &r), 0);
	assert_int_equal(resident(r), 1); /* the head's page alone */
	stackring_populate(r);
	assert_int_equal(resident(r), (stackring_size(r) + page - 1) / page);
	assert_true(allocring_geom_ok(head(r), stackring_size(r)));
	assert_int_equal(stackring_put(r, &s), 0);
	assert_true(allocring_slot_ok(head(r), slot(r, 0), slot(r, 0)->seq, 0));
	stackring_free(r);
}

static void test_a_sample_is_whole_in_its_slot(void **state)
{
	struct stackring *r;
	uint64_t stack[COPY / 8 + 64];
	struct stackring_sample s = { .ts = 5,
				      .size = 24,
				      .interval = 524288,
				      .klass = 0x800,
				      .sp = 0x7000,
				      .fp = 0x7100,
				      .pc = 0x4000,
				      .tid = 42,
				      .stack = stack };
	const struct allocring_slot *sl;

	(void)state;
	for (size_t i = 0; i < sizeof(stack) / 8; i++)
		stack[i] = 0x1000 + i;
	assert_int_equal(stackring_new(SLOTS, COPY, &r), 0);
	s.len = 100; /* rounded down to whole words */
	assert_int_equal(stackring_put(r, &s), 0);
	sl = slot(r, 0);
	assert_true(allocring_slot_ok(head(r), sl, sl->seq, 0));
	assert_int_equal(sl->len, 96);
	assert_true(sl->size == 24 && sl->interval == 524288 && sl->klass == 0x800 &&
		    sl->sp == 0x7000 && sl->fp == 0x7100 && sl->pc == 0x4000 && sl->tid == 42 &&
		    sl->ts == 5);
	assert_memory_equal(sl + 1, stack, 96);
	assert_false(allocring_slot_ok(head(r), sl, sl->seq, 1));     /* not sample 1 */
	assert_false(allocring_slot_ok(head(r), sl, sl->seq + 1, 0)); /* rewritten meanwhile */
	s.len = sizeof(stack);					      /* capped at copy_max */
	assert_int_equal(stackring_put(r, &s), 1);
	assert_int_equal(slot(r, 1)->len, COPY);
	assert_memory_equal(slot(r, 1) + 1, stack, COPY);
	/* a lap later, sample 0's slot holds sample SLOTS */
	for (uint64_t n = 2; n <= SLOTS; n++)
		assert_int_equal(stackring_put(r, &s), (int64_t)n);
	assert_false(allocring_slot_ok(head(r), slot(r, 0), slot(r, 0)->seq, 0));
	assert_true(allocring_slot_ok(head(r), slot(r, SLOTS), slot(r, SLOTS)->seq, SLOTS));
	assert_true(stackring_claimed(r) == SLOTS + 1);
	stackring_free(r);
}

static void test_a_slot_being_written_is_not_taken(void **state)
{
	struct stackring *r;
	uint64_t word = 7;
	struct stackring_sample s = { .stack = &word, .len = 8 };
	_Atomic uint64_t *seq;

	(void)state;
	assert_int_equal(stackring_new(SLOTS, COPY, &r), 0);
	seq = (_Atomic uint64_t *)(void *)&((struct allocring_slot *)(uintptr_t)slot(r, 1))->seq;
	atomic_store(seq, 3); /* a writer of sample 1 still at work */
	assert_int_equal(stackring_put(r, &s), 0);
	assert_int_equal(stackring_put(r, &s), -1);
	assert_true(atomic_load(seq) == 3);
	assert_true(stackring_busy(r) == 1);
	assert_int_equal(stackring_put(r, &s), 2);
	stackring_free(r);
}

/* The weight is what the collector's weighing gives (evweigh.h), small and large objects. */
static void test_a_sample_weighs_what_the_collector_weighs(void **state)
{
	static const uint64_t sizes[] = { 1, 16, 24, 1000, 65536, 1 << 20, 3u << 20, 1ull << 40 };
	static const uint64_t ivs[] = { 1, 4096, 65536, 524288, 741455 /* 2^19.5 */, 1u << 30 };
	uint64_t b, o;

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (size_t j = 0; j < sizeof(ivs) / sizeof(ivs[0]); j++) {
			double p = -expm1(-(double)sizes[i] / (double)ivs[j]);

			stackring_weigh(sizes[i], ivs[j], &b, &o);
			assert_true(fabs((double)b - sizes[i] / p) <= 0.5 + 1e-9 * sizes[i] / p);
			assert_true(fabs((double)o - ALLOCRING_OBJ_SCALE / p) <=
				    0.5 + 1e-9 * ALLOCRING_OBJ_SCALE / p);
		}
	}
	stackring_weigh(0, 4096, &b, &o);
	assert_true(b == 0 && o == 0);
	stackring_weigh(16, 0, &b, &o);
	assert_true(b == 0 && o == 0);
}

/* A slot's sums hold every sample it held; a busy slot's sample weighs in the head's. */
static void test_a_slots_sums_keep_what_laps_overwrote(void **state)
{
	struct stackring *r;
	uint64_t word = 7, want_b[SLOTS] = { 0 }, want_o[SLOTS] = { 0 }, b, o;
	struct stackring_sample s = { .interval = 65536, .stack = &word, .len = 8 };
	_Atomic uint64_t *seq;

	(void)state;
	assert_int_equal(stackring_new(SLOTS, COPY, &r), 0);
	for (uint64_t n = 0; n < 3 * SLOTS + 5; n++) {
		s.size = 16 + 40 * n;
		assert_int_equal(stackring_put(r, &s), (int64_t)n);
		stackring_weigh(s.size, s.interval, &b, &o);
		want_b[n % SLOTS] += b;
		want_o[n % SLOTS] += o;
		assert_true(slot(r, n)->w_bytes == b && slot(r, n)->w_objs == o);
	}
	for (uint64_t j = 0; j < SLOTS; j++)
		assert_true(slot(r, j)->sum_bytes == want_b[j] &&
			    slot(r, j)->sum_objs == want_o[j]);
	/* the next sample's slot being written: its weight in the head's busy sums */
	seq = (_Atomic uint64_t *)(void *)&((struct allocring_slot *)(uintptr_t)slot(r, 5))->seq;
	atomic_store(seq, 2 * (3 * SLOTS + 5) + 1);
	s.size = 4096;
	assert_int_equal(stackring_put(r, &s), -1);
	stackring_weigh(4096, 65536, &b, &o);
	assert_true(head(r)->busy == 1 && head(r)->busy_bytes == b && head(r)->busy_objs == o);
	assert_true(slot(r, 5)->sum_bytes == want_b[5]);
	stackring_free(r);
}

/* A gap weight (allocgap.h) is the slot's bytes weight, flagged, in its sums; its objects
 * weight stays 1 / p; a busy slot's gap goes to the head's sums. */
static void test_a_gap_weight_is_the_slots_bytes_weight(void **state)
{
	struct stackring *r;
	uint64_t word = 7, b, o;
	struct stackring_sample s = { .size = 64, .interval = 65536, .stack = &word, .len = 8 };
	_Atomic uint64_t *seq;

	(void)state;
	assert_int_equal(stackring_new(SLOTS, COPY, &r), 0);
	s.gap = 123456;
	assert_int_equal(stackring_put(r, &s), 0);
	stackring_weigh(64, 65536, &b, &o);
	assert_true(slot(r, 0)->w_bytes == 123456 && slot(r, 0)->sum_bytes == 123456);
	assert_true(slot(r, 0)->w_objs == o && slot(r, 0)->flags == ALLOCRING_F_GAP);
	s.gap = 0; /* the interval weight: no flag */
	assert_int_equal(stackring_put(r, &s), 1);
	assert_true(slot(r, 1)->w_bytes == b && slot(r, 1)->flags == 0);
	seq = (_Atomic uint64_t *)(void *)&((struct allocring_slot *)(uintptr_t)slot(r, 2))->seq;
	atomic_store(seq, 5);
	s.gap = 99999;
	assert_int_equal(stackring_put(r, &s), -1);
	assert_true(head(r)->busy_bytes == 99999 && head(r)->busy_objs == o);
	stackring_free(r);
}

/* Several writers, each sample's words derived from its size; a reader checks each copy. */
#define WRITERS 3
#define PER_WRITER 20000

static struct stackring *shared_ring;
static atomic_bool writing;

static void *writer(void *arg)
{
	uint64_t stack[COPY / 8];
	uint64_t id = (uint64_t)(uintptr_t)arg;

	for (uint64_t i = 0; i < PER_WRITER; i++) {
		uint64_t v = id << 32 | i;
		struct stackring_sample s = {
			.size = v, .interval = 65536, .stack = stack, .len = 8 * (1 + i % 64)
		};

		for (size_t w = 0; w < s.len / 8; w++)
			stack[w] = v ^ w;
		(void)stackring_put(shared_ring, &s);
	}
	return NULL;
}

/* What a reader outside the process does: seq, the slot, seq again. */
static bool read_one(uint64_t n, uint64_t *copy, struct allocring_slot *sl)
{
	const struct allocring_head *h = head(shared_ring);
	const struct allocring_slot *live = slot(shared_ring, n);
	const _Atomic uint64_t *seq = (const _Atomic uint64_t *)(const void *)&live->seq;
	uint64_t after;

	sl->seq = atomic_load_explicit(seq, memory_order_acquire);
	/* The fields and words are read racily, as process_vm_readv would. */
	__atomic_load((const uint64_t *)&live->size, &sl->size, __ATOMIC_RELAXED);
	__atomic_load((const uint32_t *)&live->len, &sl->len, __ATOMIC_RELAXED);
	sl->sp = 0;
	for (size_t w = 0; w < COPY / 8; w++)
		__atomic_load((const uint64_t *)(const void *)(live + 1) + w, &copy[w],
			      __ATOMIC_RELAXED);
	atomic_thread_fence(memory_order_acquire);
	after = atomic_load_explicit(seq, memory_order_relaxed);
	return allocring_slot_ok(h, sl, after, n);
}

static void *reader(void *arg)
{
	uint64_t copy[COPY / 8], *whole = arg;
	struct allocring_slot sl;

	for (bool last = false; !last;) {
		uint64_t claimed;

		last = !atomic_load(&writing); /* a last pass once the writers are done */
		claimed = stackring_claimed(shared_ring);

		for (uint64_t n = claimed > SLOTS ? claimed - SLOTS : 0; n < claimed; n++) {
			if (!read_one(n, copy, &sl))
				continue;
			for (size_t w = 0; w < sl.len / 8; w++)
				if (copy[w] != (sl.size ^ w))
					abort(); /* a torn slot accepted */
			(*whole)++;
		}
	}
	return NULL;
}

static void test_a_torn_slot_is_never_accepted(void **state)
{
	pthread_t w[WRITERS], rd;
	uint64_t whole = 0, want_b = 0, want_o = 0, got_b, got_o;

	(void)state;
	assert_int_equal(stackring_new(SLOTS, COPY, &shared_ring), 0);
	atomic_store(&writing, true);
	assert_int_equal(pthread_create(&rd, NULL, reader, &whole), 0);
	for (uintptr_t i = 0; i < WRITERS; i++)
		assert_int_equal(pthread_create(&w[i], NULL, writer, (void *)(i + 1)), 0);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(w[i], NULL);
	atomic_store(&writing, false);
	pthread_join(rd, NULL);
	assert_true(stackring_claimed(shared_ring) == (uint64_t)WRITERS * PER_WRITER);
	assert_true(whole >= SLOTS); /* the last pass, at least, finds every slot whole */
	/* every sample's weight in its slot's sums or, dropped, in the head's */
	for (uint64_t id = 1; id <= WRITERS; id++) {
		for (uint64_t i = 0; i < PER_WRITER; i++) {
			uint64_t b, o;

			stackring_weigh(id << 32 | i, 65536, &b, &o);
			want_b += b;
			want_o += o;
		}
	}
	got_b = head(shared_ring)->busy_bytes;
	got_o = head(shared_ring)->busy_objs;
	for (uint64_t j = 0; j < SLOTS; j++) {
		got_b += slot(shared_ring, j)->sum_bytes;
		got_o += slot(shared_ring, j)->sum_objs;
	}
	assert_true(got_b == want_b && got_o == want_o);
	stackring_free(shared_ring);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_head_says_the_geometry),
		cmocka_unit_test(test_the_ring_takes_memory_once_populated),
		cmocka_unit_test(test_a_sample_is_whole_in_its_slot),
		cmocka_unit_test(test_a_slot_being_written_is_not_taken),
		cmocka_unit_test(test_a_sample_weighs_what_the_collector_weighs),
		cmocka_unit_test(test_a_slots_sums_keep_what_laps_overwrote),
		cmocka_unit_test(test_a_gap_weight_is_the_slots_bytes_weight),
		cmocka_unit_test(test_a_torn_slot_is_never_accepted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
