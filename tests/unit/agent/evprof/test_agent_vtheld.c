// SPDX-License-Identifier: MIT
/*
 * test_agent_vtheld.c - the pool of virtual threads' held stacks (vtheld.h): a new generation
 * frees every slot an earlier one held (a virtual thread that ended with the events off leaves
 * nothing behind), a stale handle neither reads nor frees another holder's slot, a full pool
 * refuses a claim at once and counts it, the slots are cut for the generation's size inside the
 * block, claimers on several threads never share a slot, and new generations racing them leave
 * every claim answered (taken or refused and counted) and nothing held.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vtheld.h"

#define SLOTS 8u
#define STRIDE 64u

static struct vtheld *pool_of(size_t bytes, uint32_t slots, size_t stride)
{
	struct vtheld *h = NULL;

	assert_int_equal(vtheld_new(bytes, slots, &h), 0);
	assert_int_equal(vtheld_reset(h, stride), bytes / stride < slots ? bytes / stride : slots);
	return h;
}

/* Claim every slot: their handles into hs. */
static void take_all(struct vtheld *h, uint64_t *hs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		void *mem = NULL;
		size_t stride = 0;

		assert_int_equal(vtheld_take(h, &hs[i], &mem, &stride), 0);
		assert_true(vtheld_is_handle(hs[i]));
		assert_non_null(mem);
		assert_int_equal(stride, STRIDE);
		assert_ptr_equal(vtheld_get(h, hs[i], &stride), mem); /* the claim's own slot */
	}
}

static void test_no_claim_before_a_generation(void **state)
{
	struct vtheld *h = NULL;
	uint64_t handle = 0;
	size_t stride = 0;
	void *mem = NULL;

	(void)state;
	assert_int_equal(vtheld_new(SLOTS * STRIDE, SLOTS, &h), 0);
	assert_int_equal(vtheld_take(h, &handle, &mem, &stride), -ENODEV);
	assert_int_equal(vtheld_full(h), 0);
	assert_int_equal(vtheld_new(SLOTS * STRIDE, 0, &h), -EINVAL);
	assert_int_equal(vtheld_new(SLOTS * STRIDE, VTHELD_SLOTS_MAX + 1, &h), -EINVAL);
	assert_int_equal(vtheld_new(0, SLOTS, &h), -EINVAL);
	vtheld_free(NULL);
	vtheld_free(h);
}

static void test_full_pool_refuses_at_once_and_counts(void **state)
{
	struct vtheld *h = pool_of(SLOTS * STRIDE, SLOTS, STRIDE);
	uint64_t hs[SLOTS], extra = 0;
	size_t stride = 0;
	void *mem = NULL;

	(void)state;
	take_all(h, hs, SLOTS);
	assert_int_equal(vtheld_held(h), SLOTS);
	for (int i = 0; i < 3; i++)
		assert_int_equal(vtheld_take(h, &extra, &mem, &stride), -ENOSPC);
	assert_int_equal(vtheld_full(h), 3);
	/* one let go: one claim again, the same slot */
	assert_true(vtheld_put(h, hs[5]));
	assert_false(vtheld_put(h, hs[5])); /* let go twice: nothing */
	assert_int_equal(vtheld_take(h, &extra, &mem, &stride), 0);
	assert_int_equal(extra, hs[5]);
	assert_int_equal(vtheld_take(h, &extra, &mem, &stride), -ENOSPC);
	assert_int_equal(vtheld_full(h), 4);
	vtheld_free(h);
}

static void test_new_generation_frees_every_slot(void **state)
{
	struct vtheld *h = pool_of(SLOTS * STRIDE, SLOTS, STRIDE);
	uint64_t old[SLOTS], now[SLOTS];
	size_t stride = 0;

	(void)state;
	take_all(h, old, SLOTS); /* their threads end with the events off: never let go */
	assert_int_equal(vtheld_reset(h, STRIDE), SLOTS);
	assert_int_equal(vtheld_held(h), 0);
	take_all(h, now, SLOTS); /* every slot claimed again */
	assert_int_equal(vtheld_full(h), 0);
	for (uint32_t i = 0; i < SLOTS; i++) {
		/* a stale handle gives no memory and frees nothing of the new holders */
		assert_null(vtheld_get(h, old[i], &stride));
		assert_false(vtheld_put(h, old[i]));
		assert_non_null(vtheld_get(h, now[i], &stride));
		assert_int_not_equal(old[i], now[i]);
	}
	assert_int_equal(vtheld_held(h), SLOTS);
	vtheld_free(h);
}

static void test_slot_memory_is_its_holders(void **state)
{
	struct vtheld *h = pool_of(SLOTS * STRIDE, SLOTS, STRIDE);
	uint64_t hs[SLOTS];
	size_t stride = 0;
	char *mem[SLOTS];

	(void)state;
	take_all(h, hs, SLOTS);
	for (uint32_t i = 0; i < SLOTS; i++) {
		mem[i] = vtheld_get(h, hs[i], &stride);
		assert_non_null(mem[i]);
		assert_int_equal((uintptr_t)mem[i] % 16, 0);
		memset(mem[i], (int)i + 1, STRIDE);
	}
	for (uint32_t i = 0; i < SLOTS; i++)
		for (uint32_t k = 0; k < STRIDE; k++)
			assert_int_equal(mem[i][k], (char)(i + 1)); /* no two slots overlap */
	assert_true(vtheld_put(h, hs[2]));
	assert_null(vtheld_get(h, hs[2], &stride)); /* let go: no memory */
	assert_null(vtheld_get(h, 0, &stride));
	assert_null(vtheld_get(h, hs[3] | 1u, &stride)); /* not a handle's shape */
	vtheld_free(h);
}

static void test_generation_cuts_the_block_for_its_size(void **state)
{
	struct vtheld *h = pool_of(SLOTS * STRIDE, SLOTS, STRIDE);
	uint64_t hs[SLOTS], handle = 0;
	size_t stride = 0;
	char *base = NULL, *mem = NULL;

	(void)state;
	/* twice the size: half the slots, each inside the block */
	assert_int_equal(vtheld_reset(h, 2 * STRIDE), SLOTS / 2);
	for (uint32_t i = 0; i < SLOTS / 2; i++) {
		assert_int_equal(vtheld_take(h, &hs[i], (void **)&mem, &stride), 0);
		assert_int_equal(stride, 2 * STRIDE);
		if (!base || mem < base)
			base = mem;
	}
	assert_int_equal(vtheld_take(h, &handle, (void **)&mem, &stride), -ENOSPC);
	for (uint32_t i = 0; i < SLOTS / 2; i++) {
		mem = vtheld_get(h, hs[i], &stride);
		assert_true(mem >= base && mem + stride <= base + SLOTS * STRIDE);
	}
	/* a size rounded up to 16; one larger than the block: no slot */
	assert_int_equal(vtheld_reset(h, STRIDE - 15), SLOTS);
	assert_int_equal(vtheld_reset(h, SLOTS * STRIDE + 1), 0);
	assert_int_equal(vtheld_take(h, &handle, (void **)&mem, &stride), -ENODEV);
	/* smaller slots than slots_max allows: slots_max of them */
	assert_int_equal(vtheld_reset(h, 16), SLOTS);
	vtheld_free(h);
}

/* ---- claimers on several threads, generations racing them -------------------------------- */

#define THREADS 4
#define ROUNDS 20000

struct race {
	struct vtheld *h;
	atomic_int holder[VTHELD_SLOTS_MAX]; /* by the handle's index: 1 while claimed */
	bool check;			     /* no new generations: one holder per slot */
	atomic_uint_fast64_t shared, claims, refused;
};

static void *claimer(void *arg)
{
	struct race *r = arg;

	for (int i = 0; i < ROUNDS; i++) {
		uint64_t handle = 0;
		size_t stride = 0, k;
		void *mem = NULL;

		if (vtheld_take(r->h, &handle, &mem, &stride) != 0) {
			atomic_fetch_add(&r->refused, 1);
			continue;
		}
		atomic_fetch_add(&r->claims, 1);
		k = (size_t)(handle >> 2) % VTHELD_SLOTS_MAX;
		if (r->check && atomic_exchange(&r->holder[k], 1) != 0)
			atomic_fetch_add(&r->shared, 1); /* two holders of one slot */
		if (r->check) {
			sched_yield(); /* held while the others claim */
			atomic_store(&r->holder[k], 0);
		}
		(void)vtheld_put(r->h, handle);
	}
	return NULL;
}

static void race(struct race *r, int generations)
{
	pthread_t th[THREADS];

	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, claimer, r), 0);
	for (int g = 0; g < generations; g++) /* the events worker: sizes alternating */
		(void)vtheld_reset(r->h, g % 2 ? STRIDE : 2 * STRIDE);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	/* every claim answered at once: taken or refused, and each refusal counted */
	assert_int_equal(atomic_load(&r->claims) + atomic_load(&r->refused),
			 (uint64_t)THREADS * ROUNDS);
	assert_true(atomic_load(&r->claims) > 0);
	assert_int_equal(vtheld_full(r->h), atomic_load(&r->refused));
}

static void test_claimers_on_threads_never_share_a_slot(void **state)
{
	static struct race r;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.h = pool_of(2 * STRIDE, 2, STRIDE); /* two slots: every claim races for them */
	r.check = true;
	race(&r, 0);
	assert_int_equal(atomic_load(&r.shared), 0);
	assert_int_equal(vtheld_held(r.h), 0); /* every claim let go */
	vtheld_free(r.h);
}

static void test_claimers_race_new_generations(void **state)
{
	static struct race r;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.h = pool_of(SLOTS * STRIDE, SLOTS, STRIDE);
	race(&r, 500);
	/* whatever was held across the generations: a new one holds nothing, all claimable */
	assert_int_equal(vtheld_reset(r.h, STRIDE), SLOTS);
	assert_int_equal(vtheld_held(r.h), 0);
	vtheld_free(r.h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_claim_before_a_generation),
		cmocka_unit_test(test_full_pool_refuses_at_once_and_counts),
		cmocka_unit_test(test_new_generation_frees_every_slot),
		cmocka_unit_test(test_slot_memory_is_its_holders),
		cmocka_unit_test(test_generation_cuts_the_block_for_its_size),
		cmocka_unit_test(test_claimers_on_threads_never_share_a_slot),
		cmocka_unit_test(test_claimers_race_new_generations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
