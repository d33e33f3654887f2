// SPDX-License-Identifier: MIT
/*
 * test_agent_events.c - JVMTI events to queued records: names, the inline table built from
 * PCStackInfo (dedup, folding, bounds), and every record decoding with the shared decoder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <jvmti.h>
#include <jvmticmlr.h>

#include "agent/test_agent_fakejvmti.h"
#include "codelines.h"
#include "events.h"
#include "fgproto.h"
#include "intern.h"
#include "methodset.h"
#include "queue.h"

/* Pop one entry and decode it as the only record of a message. */
static struct fgp_record decode_one(struct queue *q, uint8_t *buf, size_t cap)
{
	struct qentry *e = queue_pop(q);
	struct fgp_reader r;
	struct fgp_record rec;

	assert_non_null(e);
	assert_true(e->len + FGP_MSG_HEADER_SIZE <= cap);
	fgp_encode_msg_header(buf, cap);
	memcpy(buf + FGP_MSG_HEADER_SIZE, e->data, e->len);
	assert_int_equal(fgp_reader_init(&r, buf, FGP_MSG_HEADER_SIZE + e->len), 0);
	assert_int_equal(fgp_next(&r, &rec), 1);
	queue_release(q, e);
	return rec;
}

/* A load as the callback makes it, from a compile_info (NULL: none), without lines or frame. */
static void load(struct queue *q, struct intern *st, bool signatures, jmethodID m, jint size,
		 const void *addr, const void *compile_info, uint64_t ts)
{
	struct methodset set;
	struct events_load_ctx ctx = { .q = q,
				       .names = st,
				       .jvmti = fake_jvmti(),
				       .signatures = signatures,
				       .method = m,
				       .code_size = size,
				       .code_addr = addr,
				       .set = &set,
				       .ts = ts };

	methodset_of(&set, compile_info);
	events_code_load(&ctx);
	methodset_fini(&set);
}

static int str_is(struct fgp_str s, const char *want)
{
	return s.len == strlen(want) && memcmp(s.ptr, want, s.len) == 0;
}

static void test_code_load_without_inline_info(void **state)
{
	struct queue *q = queue_new(1 << 20);
	static uint8_t buf[1 << 16];
	struct fgp_record rec;

	(void)state;
	load(q, NULL, false, FAKE_M(1), 0x200, (void *)0x7f0000001000, NULL, 12345);
	rec = decode_one(q, buf, sizeof(buf));
	assert_int_equal(rec.type, FGP_CODE_LOAD);
	assert_int_equal(rec.u.load.addr, 0x7f0000001000);
	assert_int_equal(rec.u.load.size, 0x200);
	assert_int_equal(rec.u.load.ts, 12345);
	assert_true(str_is(rec.u.load.name, "com.acme.Hot::loop"));
	assert_int_equal(rec.u.load.n_pcs, 0);
	assert_int_equal(fake_live_strings, 0);
	queue_free(q);
}

static void test_code_load_with_signatures_and_unknown_method(void **state)
{
	struct queue *q = queue_new(1 << 20);
	static uint8_t buf[1 << 16];
	struct fgp_record rec;

	(void)state;
	load(q, NULL, true, FAKE_M(4), 0x10, (void *)0x1000, NULL, 1);
	rec = decode_one(q, buf, sizeof(buf));
	assert_true(str_is(rec.u.load.name, "Hot::main([Ljava/lang/String;)V"));
	load(q, NULL, false, FAKE_M(FAKE_FAIL_NAME), 0x10, (void *)0x1000, NULL, 1);
	rec = decode_one(q, buf, sizeof(buf));
	assert_true(str_is(rec.u.load.name, "[unknown]"));
	assert_int_equal(fake_live_strings, 0);
	queue_free(q);
}

static void test_inline_table_dedups_folds_and_bounds(void **state)
{
	struct queue *q = queue_new(1 << 20);
	static uint8_t buf[1 << 16];
	uintptr_t base = 0x5000;
	/* Chains innermost first, as HotSpot lists them. */
	jmethodID c_loop[1] = { FAKE_M(1) };
	jmethodID c_step[2] = { FAKE_M(2), FAKE_M(1) };
	jmethodID c_max[3] = { FAKE_M(3), FAKE_M(2), FAKE_M(1) };
	PCStackInfo pcs[] = {
		{ (void *)(base - 4), 1, c_loop, NULL },    /* before the blob: skipped */
		{ (void *)(base + 0x10), 1, c_loop, NULL }, /* folded into the next (same chain) */
		{ (void *)(base + 0x20), 1, c_loop, NULL }, /* kept */
		{ (void *)(base + 0x30), 2, c_step, NULL }, /* kept */
		{ (void *)(base + 0x30), 3, c_max, NULL },  /* same pc again: first wins, skipped */
		{ (void *)(base + 0x28), 3, c_max, NULL },  /* goes backwards: skipped */
		{ (void *)(base + 0x40), 3, c_max, NULL },  /* kept */
		{ (void *)(base + 0x50), 0, c_loop, NULL }, /* no frames: skipped */
		{ (void *)(base + 0x100), 1, c_loop, NULL }, /* == size: kept (a return address) */
		{ (void *)(base + 0x101), 1, c_loop, NULL }, /* past the end: skipped */
	};
	jvmtiCompiledMethodLoadRecordHeader other = { JVMTI_CMLR_DUMMY, 1, 0, NULL };
	jvmtiCompiledMethodLoadInlineRecord inl = { { JVMTI_CMLR_INLINE_INFO, 1, 0, NULL },
						    (jint)(sizeof(pcs) / sizeof(pcs[0])),
						    pcs };
	struct fgp_record rec;
	struct fgp_inline_iter it;
	struct fgp_str names[8];
	struct fgp_pc pc;
	unsigned nm = 0, np = 0;
	static const struct {
		uint32_t off;
		const char *chain[3];
		uint16_t depth;
	} want[] = {
		{ 0x20, { "com.acme.Hot::loop" }, 1 },
		{ 0x30, { "com.acme.Hot$Inner::step", "com.acme.Hot::loop" }, 2 },
		{ 0x40,
		  { "java.lang.Math::max", "com.acme.Hot$Inner::step", "com.acme.Hot::loop" },
		  3 },
		{ 0x100, { "com.acme.Hot::loop" }, 1 },
	};

	(void)state;
	other.next = &inl.header;
	load(q, NULL, false, FAKE_M(1), 0x100, (void *)base, &other, 7);
	rec = decode_one(q, buf, sizeof(buf));
	assert_int_equal(rec.u.load.n_methods, 3);
	fgp_methods_begin(&rec.u.load, &it);
	while (fgp_methods_next(&it, &names[nm]))
		nm++;
	assert_int_equal(nm, 3);
	fgp_pcs_begin(&rec.u.load, &it);
	while (fgp_pcs_next(&it, &pc)) {
		assert_true(np < 4);
		assert_int_equal(pc.pc_off, want[np].off);
		assert_int_equal(pc.depth, want[np].depth);
		for (unsigned k = 0; k < pc.depth; k++) {
			uint16_t m = fgp_pc_method(&pc, k);

			assert_true(m < nm);
			if (!str_is(names[m], want[np].chain[k]))
				fail_msg("pc %u frame %u: %.*s, want %s", np, k, names[m].len,
					 names[m].ptr, want[np].chain[k]);
		}
		np++;
	}
	assert_int_equal(np, 4);
	assert_false(rec.flags & FGP_REC_INLINE_TRUNCATED);
	assert_int_equal(fake_live_strings, 0);
	queue_free(q);
}

/* Neighbouring pcs of one depth with another method in a frame keep their own chains. */
static void test_neighbouring_pcs_keep_their_own_methods(void **state)
{
	struct queue *q = queue_new(1 << 20);
	static uint8_t buf[1 << 16];
	uintptr_t base = 0x6000;
	jmethodID a[2] = { FAKE_M(3), FAKE_M(1) }, b[2] = { FAKE_M(2), FAKE_M(1) };
	PCStackInfo pcs[] = {
		{ (void *)(base + 0x10), 2, a, NULL },
		{ (void *)(base + 0x20), 2, b, NULL },
		{ (void *)(base + 0x30), 2, a, NULL },
	};
	jvmtiCompiledMethodLoadInlineRecord inl = { { JVMTI_CMLR_INLINE_INFO, 1, 0, NULL },
						    3,
						    pcs };
	static const char *const inner[] = { "java.lang.Math::max", "com.acme.Hot$Inner::step",
					     "java.lang.Math::max" };
	struct fgp_record rec;
	struct fgp_inline_iter it;
	struct fgp_str names[4];
	struct fgp_pc pc;
	unsigned nm = 0, np = 0;

	(void)state;
	load(q, NULL, false, FAKE_M(1), 0x100, (void *)base, &inl.header, 7);
	rec = decode_one(q, buf, sizeof(buf));
	fgp_methods_begin(&rec.u.load, &it);
	while (nm < 4 && fgp_methods_next(&it, &names[nm]))
		nm++;
	fgp_pcs_begin(&rec.u.load, &it);
	while (fgp_pcs_next(&it, &pc)) {
		assert_true(np < 3);
		assert_int_equal(pc.depth, 2);
		assert_true(str_is(names[fgp_pc_method(&pc, 0)], inner[np]));
		assert_true(str_is(names[fgp_pc_method(&pc, 1)], "com.acme.Hot::loop"));
		np++;
	}
	assert_int_equal(np, 3);
	queue_free(q);
}

/*
 * With an intern table, a compile whose names all have ids goes out as a CODE_LOAD_IDS; one with a
 * name that cannot be interned (here: JVMTI cannot name an inlined method) goes out with every name
 * inline, the interned ones included.
 */
static void test_a_load_with_an_unnamed_method_carries_every_name_inline(void **state)
{
	struct queue *q = queue_new(1 << 20);
	struct intern *st = intern_new(1 << 20);
	static uint8_t buf[1 << 16];
	uintptr_t base = 0x8000;
	jmethodID a[2] = { FAKE_M(2), FAKE_M(1) }, b[2] = { FAKE_M(FAKE_FAIL_NAME), FAKE_M(1) };
	PCStackInfo pcs[] = {
		{ (void *)(base + 0x10), 2, a, NULL },
		{ (void *)(base + 0x20), 2, b, NULL },
	};
	jvmtiCompiledMethodLoadInlineRecord inl = { { JVMTI_CMLR_INLINE_INFO, 1, 0, NULL },
						    1,
						    pcs };
	struct fgp_record rec;
	struct fgp_inline_iter it;
	struct fgp_str names[4];
	unsigned nm = 0;
	bool loop = false, step = false, unknown = false;

	(void)state;
	load(q, st, false, FAKE_M(1), 0x100, (void *)base, &inl.header, 7);
	rec = decode_one(q, buf, sizeof(buf));
	assert_int_equal(rec.type, FGP_CODE_LOAD_IDS);
	inl.numpcs = 2;
	load(q, st, false, FAKE_M(1), 0x100, (void *)base, &inl.header, 8);
	rec = decode_one(q, buf, sizeof(buf));
	assert_int_equal(rec.type, FGP_CODE_LOAD);
	assert_true(str_is(rec.u.load.name, "com.acme.Hot::loop"));
	fgp_methods_begin(&rec.u.load, &it);
	while (nm < 4 && fgp_methods_next(&it, &names[nm])) {
		loop |= str_is(names[nm], "com.acme.Hot::loop");
		step |= str_is(names[nm], "com.acme.Hot$Inner::step");
		unknown |= str_is(names[nm], "[unknown]");
		nm++;
	}
	assert_int_equal(nm, 3);
	assert_true(loop && step && unknown);
	assert_int_equal(fake_live_strings, 0);
	queue_free(q);
	intern_free(st);
}

static void test_too_deep_chain_is_cut_and_flagged(void **state)
{
	struct queue *q = queue_new(1 << 20);
	static uint8_t buf[1 << 16];
	jmethodID deep[100];
	PCStackInfo pcs[1] = { { (void *)0x1008, 100, deep, NULL } };
	jvmtiCompiledMethodLoadInlineRecord inl = { { JVMTI_CMLR_INLINE_INFO, 1, 0, NULL },
						    1,
						    pcs };
	struct fgp_record rec;
	struct fgp_inline_iter it;
	struct fgp_pc pc;

	(void)state;
	for (int i = 0; i < 100; i++)
		deep[i] = FAKE_M(1 + i % 4);
	load(q, NULL, false, FAKE_M(1), 0x100, (void *)0x1000, &inl, 7);
	rec = decode_one(q, buf, sizeof(buf));
	assert_true(rec.flags & FGP_REC_INLINE_TRUNCATED);
	fgp_pcs_begin(&rec.u.load, &it);
	assert_int_equal(fgp_pcs_next(&it, &pc), 1);
	assert_int_equal(pc.depth, FGP_MAX_INLINE_DEPTH);
	assert_int_equal(fake_live_strings, 0);
	queue_free(q);
}

static void test_unload_and_dynamic_code_records(void **state)
{
	struct queue *q = queue_new(1 << 20);
	static uint8_t buf[1 << 16];
	struct fgp_record rec;

	(void)state;
	events_code_unload(q, (void *)0xabc000, 99);
	events_dynamic_code(q, "StubRoutines (1)", (void *)0xdef000, 0x80, 100);
	events_dynamic_code(q, "empty", (void *)0xdef000, 0, 101); /* nothing to name: ignored */
	rec = decode_one(q, buf, sizeof(buf));
	assert_int_equal(rec.type, FGP_CODE_UNLOAD);
	assert_int_equal(rec.u.unload.addr, 0xabc000);
	assert_int_equal(rec.u.unload.ts, 99);
	rec = decode_one(q, buf, sizeof(buf));
	assert_int_equal(rec.type, FGP_DYNAMIC_CODE);
	assert_true(str_is(rec.u.dyn.name, "StubRoutines (1)"));
	assert_int_equal(rec.u.dyn.size, 0x80);
	assert_null(queue_pop(q));
	queue_free(q);
}

static void test_full_queue_drops_and_counts(void **state)
{
	struct queue *q = queue_new(sizeof(struct qentry) + FGP_CODE_UNLOAD_SIZE);

	(void)state;
	events_code_unload(q, (void *)0x1000, 1);
	events_code_unload(q, (void *)0x2000, 2);
	load(q, NULL, false, FAKE_M(1), 0x100, (void *)0x1000, NULL, 3);
	events_dynamic_code(q, "x", (void *)0x1000, 0x10, 4);
	assert_int_equal(queue_dropped(q), 3);
	assert_int_equal(fake_live_strings, 0);
	queue_free(q);
}

/* Pop every entry of a and b: the same records, byte for byte, in the same order. n: how many. */
static void assert_same_records(struct queue *a, struct queue *b, int n)
{
	for (int i = 0; i < n; i++) {
		struct qentry *x = queue_pop(a), *y = queue_pop(b);

		assert_non_null(x);
		assert_non_null(y);
		assert_int_equal(x->len, y->len);
		assert_memory_equal(x->data, y->data, x->len);
		queue_release(a, x);
		queue_release(b, y);
	}
	assert_null(queue_pop(a));
	assert_null(queue_pop(b));
}

/*
 * The callback's way (events_code_load with lines and frame: both tables in one walk) sends what
 * the tables built one by one send: the load, the frame facts, the lines, with and without each of
 * them.
 */
static void test_one_walk_sends_what_separate_tables_send(void **state)
{
	uintptr_t base = 0x9000;
	jmethodID a[3] = { FAKE_M(2), FAKE_M(1), FAKE_M(4) }, b[2] = { FAKE_M(1), FAKE_M(4) };
	jint ba[3] = { 5, 0, 8 }, bb[2] = { 4, 8 }, bc[3] = { 0, 8, 8 };
	PCStackInfo pcs[] = {
		{ (void *)(base + 0x10), 3, a, ba }, { (void *)(base + 0x18), 3, a, bc },
		{ (void *)(base + 0x20), 2, b, bb }, { (void *)(base + 0x30), 2, b, bb },
		{ (void *)(base + 0x38), 3, a, ba },
	};
	jvmtiCompiledMethodLoadInlineRecord inl = { { JVMTI_CMLR_INLINE_INFO, 1, 0, NULL },
						    5,
						    pcs };
	struct fgp_code_frame f = { .addr = base,
				    .kind = FGP_CF_NMETHOD,
				    .frame_size = 32,
				    .code_begin = base,
				    .code_size = 0x100,
				    .frame_complete = 0x10 };
	struct intern *st = intern_new(1 << 20);
	struct codelines *c1 = codelines_new(1 << 20), *c2 = codelines_new(1 << 20);
	struct methodset set;

	(void)state;
	methodset_of(&set, &inl.header);
	for (int with = 0; with < 4; with++) {
		struct queue *one = queue_new(1 << 20), *two = queue_new(1 << 20);
		bool lines = with & 1, frame = with & 2;

		struct events_load_ctx ctx = { .q = one,
					       .names = st,
					       .lines = lines ? c1 : NULL,
					       .jvmti = fake_jvmti(),
					       .method = FAKE_M(4),
					       .code_size = 0x100,
					       .code_addr = (void *)base,
					       .set = &set,
					       .ts = 11,
					       .frame = frame ? &f : NULL };

		events_code_load(&ctx);
		ctx.q = two;
		ctx.lines = NULL;
		ctx.frame = NULL;
		events_code_load(&ctx);
		if (frame)
			events_frame_push(two, &f);
		if (lines)
			codelines_push_set(c2, two, fake_jvmti(), 0x100, (void *)base, &set, 11);
		assert_same_records(one, two, 1 + frame + lines);
		queue_free(one);
		queue_free(two);
	}
	methodset_fini(&set);
	codelines_free(c1);
	codelines_free(c2);
	intern_free(st);
}

/*
 * Every record kind that meets a full queue is counted as dropped, once; so is one that cannot
 * be encoded (a CODE_FRAME whose facts fail the encoder's check).
 */
static void test_a_drop_of_every_record_kind_is_counted(void **state)
{
	uintptr_t base = 0x9000;
	jmethodID a[2] = { FAKE_M(2), FAKE_M(1) };
	jint bci[2] = { 5, 0 };
	PCStackInfo pcs[] = { { (void *)(base + 0x10), 2, a, bci } };
	jvmtiCompiledMethodLoadInlineRecord inl = { { JVMTI_CMLR_INLINE_INFO, 1, 0, NULL },
						    1,
						    pcs };
	struct fgp_code_frame f = { .addr = base,
				    .kind = FGP_CF_NMETHOD,
				    .frame_size = 32,
				    .code_begin = base,
				    .code_size = 0x100,
				    .frame_complete = 0x10 },
			      bad = f;
	struct queue *q = queue_new(sizeof(struct qentry) + FGP_CODE_UNLOAD_SIZE);
	struct queue *roomy = queue_new(1 << 20);
	struct intern *st = intern_new(1 << 20);
	struct codelines *cl = codelines_new(1 << 20);
	struct methodset set;
	uint64_t n = 0;

	(void)state;
	events_code_unload(q, (void *)0x1000, 1); /* fills the queue */
	assert_int_equal(queue_dropped(q), 0);
	events_code_unload(q, (void *)0x2000, 2);
	assert_int_equal(queue_dropped(q), ++n);
	load(q, NULL, false, FAKE_M(1), 0x100, (void *)base, &inl.header, 3); /* CODE_LOAD */
	assert_int_equal(queue_dropped(q), ++n);
	load(roomy, st, false, FAKE_M(1), 0x100, (void *)base, &inl.header, 3); /* names interned */
	load(q, st, false, FAKE_M(1), 0x100, (void *)base, &inl.header, 3);	/* CODE_LOAD_IDS */
	assert_int_equal(queue_dropped(q), ++n);
	load(q, NULL, false, FAKE_M(1), 0, (void *)base, NULL, 3); /* no code: nothing to name */
	assert_int_equal(queue_dropped(q), ++n);
	events_dynamic_code(q, "x", (void *)0x1000, 0x10, 4);
	assert_int_equal(queue_dropped(q), ++n);
	events_tables(q, true, 5);
	assert_int_equal(queue_dropped(q), ++n);
	events_frame_push(q, &f);
	assert_int_equal(queue_dropped(q), ++n);
	methodset_of(&set, &inl.header);
	codelines_push_set(cl, roomy, fake_jvmti(), 0x100, (void *)base, &set, 6);
	codelines_push_set(cl, q, fake_jvmti(), 0x100, (void *)base, &set, 6); /* CODE_LINES */
	methodset_fini(&set);
	assert_int_equal(queue_dropped(q), ++n);
	assert_int_equal(queue_dropped(roomy), 0);
	bad.kind = 0xffff; /* refused by fgp_encode_code_frame */
	events_frame_push(roomy, &bad);
	assert_int_equal(queue_dropped(roomy), 1);
	assert_int_equal(fake_live_strings, 0);
	codelines_free(cl);
	intern_free(st);
	queue_free(q);
	queue_free(roomy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_code_load_without_inline_info),
		cmocka_unit_test(test_code_load_with_signatures_and_unknown_method),
		cmocka_unit_test(test_inline_table_dedups_folds_and_bounds),
		cmocka_unit_test(test_neighbouring_pcs_keep_their_own_methods),
		cmocka_unit_test(test_too_deep_chain_is_cut_and_flagged),
		cmocka_unit_test(test_unload_and_dynamic_code_records),
		cmocka_unit_test(test_full_queue_drops_and_counts),
		cmocka_unit_test(test_a_drop_of_every_record_kind_is_counted),
		cmocka_unit_test(test_one_walk_sends_what_separate_tables_send),
		cmocka_unit_test(test_a_load_with_an_unnamed_method_carries_every_name_inline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
