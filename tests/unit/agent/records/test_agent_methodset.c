// SPDX-License-Identifier: MIT
/*
 * test_agent_methodset.c - the distinct methods of an inline record, sorted, against a plain
 * sort-and-unique of the same ids: records with heavy repetition (the usual case), a NULL id,
 * and more distinct methods than the set holds (the fallback path). Then the pcs as the inline
 * and line tables keep them: filtered, first wins, chains capped, repeats folded.
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

/*
 * The set is zeroed for the record at hand only (twice its frames): a record of any size right
 * after a bigger one, whose methods are still in the set's memory on the stack, loses none.
 */
static void test_records_of_every_size_after_a_bigger_one(void **state)
{
	static const size_t sizes[] = { 1,  2,	3,  7,	8,   9,	  15,  16,  17,	 31,  32,
					33, 63, 64, 65, 200, 255, 256, 257, 511, 512, 513 };

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		check(600, 1, 400, 10 + (unsigned)i, false);
		check(sizes[i], 1, sizes[i], 40 + (unsigned)i, false); /* mostly distinct */
		check(600, 1, 400, 70 + (unsigned)i, false);
		check(sizes[i], 2, sizes[i] / 2 + 1, 90 + (unsigned)i, i % 2); /* repeats */
	}
}

/* ---- methodset_pcs_tables ---- */

#define BLOB 0x10000u
#define BLOB_SIZE 0x400u

/* Values: the low 16 bits of each frame's method id. */
static void fill_low(void *arg, const PCStackInfo *p, uint16_t depth, uint16_t *out)
{
	(*(int *)arg)++;
	for (uint16_t k = 0; k < depth; k++)
		out[k] = (uint16_t)(uintptr_t)p->methods[k];
}

/* One table alone through the walk: its entries, *truncated set when a chain was cut. */
static size_t walk_one(const jvmtiCompiledMethodLoadInlineRecord *r, uintptr_t addr, uint32_t size,
		       methodset_fill_fn fill, void *arg, struct fgp_pc_in *pcs, uint16_t *vals,
		       bool *truncated)
{
	struct methodset_table tab = { .fill = fill, .arg = arg, .pcs = pcs, .vals = vals };

	methodset_pcs_tables(r, addr, size, &tab, 1);
	*truncated |= tab.truncated;
	return tab.n_pcs;
}

struct pcspec {
	uintptr_t pc;
	jint depth;
	uint16_t first; /* methods first, first + 1, ... */
};

static jvmtiCompiledMethodLoadInlineRecord *pcs_record(const struct pcspec *spec, size_t n)
{
	jvmtiCompiledMethodLoadInlineRecord *r = calloc(1, sizeof(*r));
	PCStackInfo *pcs = calloc(n, sizeof(*pcs));

	for (size_t i = 0; i < n; i++) {
		jmethodID *m = calloc(spec[i].depth > 0 ? (size_t)spec[i].depth : 1, sizeof(*m));

		for (jint k = 0; k < spec[i].depth; k++)
			m[k] = (jmethodID)(uintptr_t)(spec[i].first + k);
		pcs[i] = (PCStackInfo){ .pc = (void *)spec[i].pc,
					.methods = m,
					.numstackframes = spec[i].depth };
	}
	r->numpcs = (jint)n;
	r->pcinfo = pcs;
	return r;
}

static void pcs_free(jvmtiCompiledMethodLoadInlineRecord *r)
{
	for (jint i = 0; i < r->numpcs; i++)
		free(r->pcinfo[i].methods);
	free(r->pcinfo);
	free(r);
}

static void test_pcs_outside_out_of_order_or_empty_are_skipped(void **state)
{
	static const struct pcspec spec[] = {
		{ BLOB - 1, 1, 1 },	       /* before the blob */
		{ BLOB + 0x10, 0, 2 },	       /* no frames */
		{ BLOB + 0x10, 1, 3 },	       /* kept */
		{ BLOB + 0x10, 1, 4 },	       /* the same pc again: the first wins */
		{ BLOB + 0x08, 1, 5 },	       /* out of order */
		{ BLOB + 0x20, 2, 6 },	       /* kept */
		{ BLOB + BLOB_SIZE, 1, 8 },    /* the blob's end itself: kept */
		{ BLOB + BLOB_SIZE + 1, 1, 9 } /* past it */
	};
	jvmtiCompiledMethodLoadInlineRecord *r = pcs_record(spec, 8);
	struct fgp_pc_in pcs[8];
	uint16_t vals[16];
	bool too_big, truncated = false;
	int fills = 0;
	size_t n;

	(void)state;
	assert_int_equal(methodset_frames(r, &too_big), 8);
	assert_false(too_big);
	n = walk_one(r, BLOB, BLOB_SIZE, fill_low, &fills, pcs, vals, &truncated);
	assert_int_equal(n, 3);
	assert_false(truncated);
	assert_int_equal(fills, 3);
	assert_int_equal(pcs[0].pc_off, 0x10);
	assert_int_equal(pcs[0].depth, 1);
	assert_int_equal(pcs[0].chain[0], 3);
	assert_int_equal(pcs[1].pc_off, 0x20);
	assert_int_equal(pcs[1].depth, 2);
	assert_int_equal(pcs[1].chain[0], 6);
	assert_int_equal(pcs[1].chain[1], 7);
	assert_int_equal(pcs[2].pc_off, BLOB_SIZE);
	assert_int_equal(pcs[2].chain[0], 8);
	pcs_free(r);
}

static void test_repeated_values_fold_into_the_later_pc(void **state)
{
	static const struct pcspec spec[] = {
		{ BLOB + 0x10, 2, 1 },
		{ BLOB + 0x18, 2, 1 }, /* the same chain: one entry at 0x18 */
		{ BLOB + 0x20, 1, 1 }, /* shallower: its own entry */
		{ BLOB + 0x28, 2, 1 }, /* deeper again */
	};
	jvmtiCompiledMethodLoadInlineRecord *r = pcs_record(spec, 4);
	struct fgp_pc_in pcs[4];
	uint16_t vals[8];
	bool truncated = false;
	int fills = 0;
	size_t n;

	(void)state;
	n = walk_one(r, BLOB, BLOB_SIZE, fill_low, &fills, pcs, vals, &truncated);
	assert_int_equal(n, 3);
	assert_int_equal(pcs[0].pc_off, 0x18);
	assert_int_equal(pcs[0].depth, 2);
	assert_int_equal(pcs[1].pc_off, 0x20);
	assert_int_equal(pcs[1].depth, 1);
	assert_int_equal(pcs[2].pc_off, 0x28);
	assert_int_equal(pcs[2].depth, 2);
	pcs_free(r);
}

static void test_deep_chains_keep_the_innermost_frames(void **state)
{
	static const struct pcspec spec[] = {
		{ BLOB + 0x10, (jint)FGP_MAX_INLINE_DEPTH + 5, 100 },
	};
	jvmtiCompiledMethodLoadInlineRecord *r = pcs_record(spec, 1);
	struct fgp_pc_in pcs[1];
	uint16_t vals[FGP_MAX_INLINE_DEPTH + 5];
	bool truncated = false;
	int fills = 0;

	(void)state;
	assert_int_equal(walk_one(r, BLOB, BLOB_SIZE, fill_low, &fills, pcs, vals, &truncated), 1);
	assert_true(truncated);
	assert_int_equal(pcs[0].depth, FGP_MAX_INLINE_DEPTH);
	assert_int_equal(pcs[0].chain[0], 100); /* innermost first */
	assert_int_equal(pcs[0].chain[FGP_MAX_INLINE_DEPTH - 1], 100 + FGP_MAX_INLINE_DEPTH - 1);
	pcs_free(r);
}

static void test_too_many_frames_or_pcs_are_too_big(void **state)
{
	jvmtiCompiledMethodLoadInlineRecord r = { 0 };
	PCStackInfo one = { .numstackframes = (jint)METHODSET_MAX_FRAMES + 1 };
	bool too_big = true;

	(void)state;
	assert_int_equal(methodset_frames(&r, &too_big), 0); /* no pcs: not too big */
	assert_false(too_big);
	r.numpcs = 1;
	r.pcinfo = &one;
	assert_int_equal(methodset_frames(&r, &too_big), 0);
	assert_true(too_big);
	one.numstackframes = 0;
	assert_int_equal(methodset_frames(&r, &too_big), 0); /* no frames at all: nothing */
	assert_false(too_big);
	one.numstackframes = 1;
	r.numpcs = (jint)FGP_MAX_INLINE_PCS + 1;
	r.pcinfo = calloc((size_t)r.numpcs, sizeof(PCStackInfo));
	assert_int_equal(methodset_frames(&r, &too_big), 0);
	assert_false(too_big); /* none of those pcs has frames */
	((PCStackInfo *)r.pcinfo)[7].numstackframes = 1;
	assert_int_equal(methodset_frames(&r, &too_big), 0);
	assert_true(too_big);
	free(r.pcinfo);
}

/* Through a seen slot, every method gets the index a search gives, repeats and changes alike. */
static void test_index_through_a_seen_slot_matches_the_search(void **state)
{
	jmethodID ids[5], seq[12];
	struct methodset_seen seen = { 0 };

	(void)state;
	for (int i = 0; i < 5; i++)
		ids[i] = (jmethodID)(uintptr_t)(0x1000 + 16 * i);
	for (int i = 0; i < 12; i++)
		seq[i] = ids[(i * 7 / 3) % 5]; /* runs of repeats, then changes */
	for (int i = 0; i < 12; i++)
		assert_int_equal(methodset_index_seen(&seen, ids, 5, seq[i]),
				 methodset_index(ids, 5, seq[i]));
	/* index 0 is a real answer, not "nothing seen" */
	assert_int_equal(methodset_index_seen(&seen, ids, 5, ids[0]), 0);
	assert_int_equal(methodset_index_seen(&seen, ids, 5, ids[4]), 4);
}

/* The set's depth is its deepest chain, capped where the walk caps chains. */
static void test_the_set_knows_its_deepest_chain(void **state)
{
	const struct pcspec spec[] = {
		{ BLOB + 8, 2, 1 }, { BLOB + 16, 5, 1 }, { BLOB + 24, 0, 1 }, { BLOB + 32, 3, 1 }
	};
	const struct pcspec deep[] = { { BLOB + 8, 1, 1 },
				       { BLOB + 16, (jint)FGP_MAX_INLINE_DEPTH + 6, 1 } };
	jvmtiCompiledMethodLoadInlineRecord *r = pcs_record(spec, 4);
	struct methodset s;

	(void)state;
	r->header.kind = JVMTI_CMLR_INLINE_INFO;
	methodset_of(&s, &r->header);
	assert_int_equal(s.depth, 5);
	methodset_fini(&s);
	pcs_free(r);
	r = pcs_record(deep, 2);
	r->header.kind = JVMTI_CMLR_INLINE_INFO;
	methodset_of(&s, &r->header);
	assert_int_equal(s.depth, FGP_MAX_INLINE_DEPTH);
	methodset_fini(&s);
	pcs_free(r);
	methodset_of(&s, NULL);
	assert_int_equal(s.depth, 0);
}

/* The set of a compile_info list: its inline record found among others, or none. */
static void test_the_set_of_a_compile_is_its_inline_records(void **state)
{
	jmethodID *all;
	size_t nall;
	jvmtiCompiledMethodLoadInlineRecord *r = record(50, 3, 7, 9, &all, &nall);
	jvmtiCompiledMethodLoadDummyRecord dummy = { .header.kind = JVMTI_CMLR_DUMMY };
	struct methodset s;

	(void)state;
	dummy.header.next = &r->header;
	r->header.kind = JVMTI_CMLR_INLINE_INFO;
	methodset_of(&s, &dummy.header);
	assert_ptr_equal(s.r, r);
	assert_int_equal(s.frames, 150);
	assert_false(s.too_big);
	assert_false(s.failed);
	assert_true(s.n_ids >= 1 && s.n_ids <= 7);
	for (size_t i = 1; i < s.n_ids; i++)
		assert_true((uintptr_t)s.ids[i - 1] < (uintptr_t)s.ids[i]);
	for (size_t i = 0; i < nall; i++)
		assert_ptr_equal(s.ids[methodset_index(s.ids, s.n_ids, all[i])], all[i]);
	methodset_fini(&s);
	/* no inline record at all; an inline record without frames */
	dummy.header.next = NULL;
	methodset_of(&s, &dummy.header);
	assert_null(s.r);
	assert_null(s.ids);
	methodset_fini(&s);
	methodset_of(&s, NULL);
	assert_null(s.r);
	r->numpcs = 0;
	methodset_of(&s, &r->header);
	assert_ptr_equal(s.r, r);
	assert_int_equal(s.frames, 0);
	assert_null(s.ids);
	methodset_fini(&s);
	free(all);
	free(r->pcinfo);
	free(r);
}

/* Values that repeat more often than fill_low's: method ids / 8 (folds other entries). */
static void fill_coarse(void *arg, const PCStackInfo *p, uint16_t depth, uint16_t *out)
{
	(*(int *)arg)++;
	for (uint16_t k = 0; k < depth; k++)
		out[k] = (uint16_t)((uintptr_t)p->methods[k] / 8);
}

static void assert_same_table(const struct fgp_pc_in *a, size_t na, const struct fgp_pc_in *b,
			      size_t nb)
{
	assert_int_equal(na, nb);
	for (size_t i = 0; i < na; i++) {
		assert_int_equal(a[i].pc_off, b[i].pc_off);
		assert_int_equal(a[i].depth, b[i].depth);
		assert_memory_equal(a[i].chain, b[i].chain, a[i].depth * sizeof(a[i].chain[0]));
	}
}

/*
 * Two tables filled in one walk are the tables of two walks: random records (pcs outside the
 * blob, repeated, out of order, chains past FGP_MAX_INLINE_DEPTH), each table folding its own
 * repeats; one table alone in the walk too.
 */
static void test_one_walk_fills_each_table_as_its_own_walk(void **state)
{
	(void)state;
	srand(7);
	for (int round = 0; round < 300; round++) {
		size_t n = 1 + (size_t)(rand() % 200), frames, na, nb;
		struct pcspec *spec = calloc(n, sizeof(*spec));
		jvmtiCompiledMethodLoadInlineRecord *r;
		struct fgp_pc_in *pa = calloc(n, sizeof(*pa)), *pb = calloc(n, sizeof(*pb));
		struct fgp_pc_in *pc = calloc(n, sizeof(*pc)), *pd = calloc(n, sizeof(*pd));
		uint16_t *va, *vb, *vc, *vd;
		struct methodset_table tabs[2];
		bool ta = false, tb = false, too_big;
		uintptr_t at = BLOB - 8;
		int fills = 0;

		for (size_t i = 0; i < n; i++) {
			int k = rand() % 10;

			/* mostly forward, some repeats and steps back; past the blob's end too */
			at += k < 1 ? 0 : k < 2 ? (uintptr_t)-4 : (uintptr_t)(1 + rand() % 24);
			spec[i].pc = at;
			spec[i].depth = rand() % 16 == 0 ? 60 + rand() % 10 : rand() % 5;
			spec[i].first = (uint16_t)(rand() % 3 == 0 ? 16 : rand() % 40);
		}
		r = pcs_record(spec, n);
		frames = methodset_frames(r, &too_big) + 1;
		va = calloc(frames, sizeof(*va));
		vb = calloc(frames, sizeof(*vb));
		vc = calloc(frames, sizeof(*vc));
		vd = calloc(frames, sizeof(*vd));
		na = walk_one(r, BLOB, BLOB_SIZE, fill_low, &fills, pa, va, &ta);
		nb = walk_one(r, BLOB, BLOB_SIZE, fill_coarse, &fills, pb, vb, &tb);
		tabs[0] = (struct methodset_table){
			.fill = fill_low, .arg = &fills, .pcs = pc, .vals = vc
		};
		tabs[1] = (struct methodset_table){
			.fill = fill_coarse, .arg = &fills, .pcs = pd, .vals = vd
		};
		methodset_pcs_tables(r, BLOB, BLOB_SIZE, tabs, 2);
		assert_same_table(pa, na, tabs[0].pcs, tabs[0].n_pcs);
		assert_same_table(pb, nb, tabs[1].pcs, tabs[1].n_pcs);
		assert_int_equal(tabs[0].truncated, ta);
		assert_int_equal(tabs[1].truncated, tb);
		/* the second table alone */
		memset(vd, 0, frames * sizeof(*vd));
		tabs[1].truncated = false;
		methodset_pcs_tables(r, BLOB, BLOB_SIZE, &tabs[1], 1);
		assert_same_table(pb, nb, tabs[1].pcs, tabs[1].n_pcs);
		assert_int_equal(tabs[1].truncated, tb);
		free(pa);
		free(pb);
		free(pc);
		free(pd);
		free(va);
		free(vb);
		free(vc);
		free(vd);
		free(spec);
		pcs_free(r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repeated_methods_are_kept_once_in_order),
		cmocka_unit_test(test_a_null_method_is_one_entry),
		cmocka_unit_test(test_more_methods_than_the_set_holds),
		cmocka_unit_test(test_records_of_every_size_after_a_bigger_one),
		cmocka_unit_test(test_the_set_knows_its_deepest_chain),
		cmocka_unit_test(test_pcs_outside_out_of_order_or_empty_are_skipped),
		cmocka_unit_test(test_repeated_values_fold_into_the_later_pc),
		cmocka_unit_test(test_deep_chains_keep_the_innermost_frames),
		cmocka_unit_test(test_too_many_frames_or_pcs_are_too_big),
		cmocka_unit_test(test_the_set_of_a_compile_is_its_inline_records),
		cmocka_unit_test(test_index_through_a_seen_slot_matches_the_search),
		cmocka_unit_test(test_one_walk_fills_each_table_as_its_own_walk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
