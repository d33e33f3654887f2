// SPDX-License-Identifier: MIT
/*
 * test_agent_codelines.c - CODE_LINES from compile info: lines per (method, bci) by HotSpot's
 * rule, the inline table's pc filter, folding only where lines repeat, deep chains cut, the
 * line table cache (one JVMTI call per method), and no JVMTI buffer left behind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <jvmti.h>
#include <jvmticmlr.h>

#include "agent/test_agent_fakejvmti.h"
#include "codelines.h"
#include "fgproto.h"
#include "queue.h"

#define ADDR 0x7f0000001000ull

/* Pop one entry and decode it as the only record of a message into *rec (borrowing buf). */
static void decode_one(struct queue *q, uint8_t *buf, size_t cap, struct fgp_record *rec)
{
	struct qentry *e = queue_pop(q);
	struct fgp_reader r;

	assert_non_null(e);
	assert_true(e->len + FGP_MSG_HEADER_SIZE <= cap);
	fgp_encode_msg_header(buf, cap);
	memcpy(buf + FGP_MSG_HEADER_SIZE, e->data, e->len);
	assert_int_equal(fgp_reader_init(&r, buf, FGP_MSG_HEADER_SIZE + e->len), 0);
	assert_int_equal(fgp_next(&r, rec), 1);
	queue_release(q, e);
}

/* The record's table as text: "off:l0,l1 off:l0 ...". */
static const char *table_text(const struct fgp_code_lines *l)
{
	static char out[1024];
	struct fgp_inline_iter it;
	struct fgp_pc pc;
	size_t k = 0;

	out[0] = '\0';
	fgp_lines_begin(l, &it);
	while (fgp_pcs_next(&it, &pc) == 1) {
		k += (size_t)snprintf(out + k, sizeof(out) - k, "%s%x:", k ? " " : "", pc.pc_off);
		for (unsigned d = 0; d < pc.depth; d++)
			k += (size_t)snprintf(out + k, sizeof(out) - k, "%s%u", d ? "," : "",
					      fgp_pc_line(&pc, d));
	}
	return out;
}

struct compile {
	jmethodID m[8][3];
	jint bci[8][3];
	PCStackInfo pcs[8];
	jvmtiCompiledMethodLoadInlineRecord rec;
};

/* One pc of a compile: depth frames, innermost first. */
static void add_pc(struct compile *c, uint64_t pc, int depth, const int *methods, const int *bcis)
{
	int i = c->rec.numpcs++;

	for (int k = 0; k < depth; k++) {
		c->m[i][k] = FAKE_M(methods[k]);
		c->bci[i][k] = bcis[k];
	}
	c->pcs[i] = (PCStackInfo){ (void *)(uintptr_t)pc, depth, c->m[i], c->bci[i] };
	c->rec.header.kind = JVMTI_CMLR_INLINE_INFO;
	c->rec.pcinfo = c->pcs;
}

/* Hot::loop (1) inlines Inner::step (2) inlines Math::max (3, no line table). */
static void hot_compile(struct compile *c)
{
	memset(c, 0, sizeof(*c));
	add_pc(c, ADDR + 0x10, 1, (int[]){ 1 }, (int[]){ 2 });		   /* line 10 */
	add_pc(c, ADDR + 0x20, 2, (int[]){ 2, 1 }, (int[]){ 0, 9 });	   /* 20, 99 */
	add_pc(c, ADDR + 0x28, 2, (int[]){ 2, 1 }, (int[]){ 1, 9 });	   /* the same: folded */
	add_pc(c, ADDR + 0x30, 3, (int[]){ 3, 2, 1 }, (int[]){ 3, 5, 8 }); /* 0, 21, 12 */
	add_pc(c, ADDR + 0x30, 1, (int[]){ 1 }, (int[]){ 4 });		   /* same pc: first wins */
	add_pc(c, ADDR - 0x10, 1, (int[]){ 1 }, (int[]){ 4 });		   /* outside the blob */
	add_pc(c, ADDR + 0x40, 1, (int[]){ 1 }, (int[]){ -1 });		   /* sync entry: bci 0 */
}

static void test_lines_follow_hotspot_rules_and_the_inline_filter(void **state)
{
	struct codelines *cl = codelines_new(1 << 20);
	struct queue *q = queue_new(1 << 20);
	static uint8_t buf[1 << 16];
	struct codelines_stats st;
	struct fgp_record rec;
	struct compile c;

	(void)state;
	hot_compile(&c);
	fake_line_calls = 0;
	codelines_push(cl, q, fake_jvmti(), 0x100, (void *)ADDR, &c.rec, 777);
	assert_int_equal(fake_live_strings, 0);
	decode_one(q, buf, sizeof(buf), &rec);
	assert_int_equal(rec.type, FGP_CODE_LINES);
	assert_int_equal(rec.flags, 0);
	assert_int_equal(rec.u.lines.addr, ADDR);
	assert_int_equal(rec.u.lines.size, 0x100);
	assert_int_equal(rec.u.lines.ts, 777);
	assert_string_equal(table_text(&rec.u.lines), "10:10 28:20,99 30:0,21,12 40:10");
	assert_null(queue_pop(q));
	assert_int_equal(fake_line_calls, 3);
	/* a second compile of the same methods asks JVMTI nothing */
	codelines_push(cl, q, fake_jvmti(), 0x100, (void *)ADDR, &c.rec, 778);
	assert_int_equal(fake_line_calls, 3);
	decode_one(q, buf, sizeof(buf), &rec);
	assert_string_equal(table_text(&rec.u.lines), "10:10 28:20,99 30:0,21,12 40:10");
	codelines_stats(cl, &st);
	assert_int_equal(st.records, 2);
	assert_int_equal(st.lookups, 3);
	assert_int_equal(st.cached, 3);
	assert_int_equal(st.no_table, 1);
	/* without a cache the same record comes out, and nothing leaks */
	codelines_push(NULL, q, fake_jvmti(), 0x100, (void *)ADDR, &c.rec, 779);
	assert_int_equal(fake_live_strings, 0);
	assert_int_equal(fake_line_calls, 6);
	decode_one(q, buf, sizeof(buf), &rec);
	assert_string_equal(table_text(&rec.u.lines), "10:10 28:20,99 30:0,21,12 40:10");
	queue_free(q);
	codelines_free(cl);
}

static void test_bci_lookup_matches_hotspot_for_every_bci(void **state)
{
	/* Method 1's table { 0:10, 8:12, 4:11, 8:99 }: exact match first in table order,
	 * otherwise the last entry with the largest bci below. Each probe pc is followed by
	 * one in method 2 (line 20), so no two probes fold into one entry. */
	static const int want[] = { 10, 10, 10, 10, 11, 11, 11, 11, 12, 99, 99, 99 };
	struct queue *q = queue_new(1 << 20);
	static uint8_t buf[1 << 16];
	struct fgp_record rec;
	struct compile c;
	char expect[512];
	size_t k = 0;

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_true(sizeof(c.pcs) / sizeof(c.pcs[0]) >= 8);
	for (int round = 0; round < 3; round++) {
		memset(&c, 0, sizeof(c));
		k = 0;
		expect[0] = '\0';
		for (int i = 0; i < 4; i++) {
			int bci = round * 4 + i;
			uint64_t off = 0x20 * (uint64_t)(i + 1);

			add_pc(&c, ADDR + off, 1, (int[]){ 1 }, (int[]){ bci });
			add_pc(&c, ADDR + off + 8, 1, (int[]){ 2 }, (int[]){ 0 });
			k += (size_t)snprintf(expect + k, sizeof(expect) - k, "%s%x:%d %x:20",
					      i ? " " : "", (unsigned)off, want[bci],
					      (unsigned)off + 8);
		}
		codelines_push(NULL, q, fake_jvmti(), 0x1000, (void *)ADDR, &c.rec, 1);
		decode_one(q, buf, sizeof(buf), &rec);
		assert_string_equal(table_text(&rec.u.lines), expect);
	}
	assert_int_equal(fake_live_strings, 0);
	queue_free(q);
}

/* HotSpot's Method::line_number_from_bci over fake_t5, written the way HotSpot does it. */
static unsigned hotspot_line(int bci)
{
	int best_bci = 0, best_line = -1;

	if (bci < 0)
		bci = 0;
	for (int i = 0; i < fake_n5; i++) {
		if (fake_t5[i].start_location == bci) {
			best_line = fake_t5[i].line_number;
			break;
		}
		if (fake_t5[i].start_location < bci && fake_t5[i].start_location >= best_bci) {
			best_bci = (int)fake_t5[i].start_location;
			best_line = fake_t5[i].line_number;
		}
	}
	return best_line > 0 && best_line <= UINT16_MAX ? (unsigned)best_line : 0;
}

#define PROBES 160

/*
 * Random tables (ties, gaps, lines past u16, short ones and ones reaching past the direct
 * array's bcis), probed at every bci near their starts: the record says what HotSpot says.
 */
static void test_random_tables_give_hotspots_line_for_every_bci(void **state)
{
	static jmethodID m[2 * PROBES][1];
	static jint bci[2 * PROBES][1];
	static PCStackInfo pcs[2 * PROBES];
	static uint8_t buf[1 << 16];
	struct queue *q = queue_new(1 << 22);
	unsigned seed = 12345;

	(void)state;
	for (int round = 0; round < 400; round++) {
		jvmtiCompiledMethodLoadInlineRecord rec = { .header.kind = JVMTI_CMLR_INLINE_INFO };
		int span = round % 3 == 0 ? 9000 : round % 3 == 1 ? 60 : 5;
		int probe[PROBES], np = 0;
		struct fgp_inline_iter it;
		struct fgp_record r;
		struct fgp_pc pc;

		fake_n5 = 1 + (int)((seed = seed * 1103515245 + 12345) >> 16) % 12;
		for (int i = 0; i < fake_n5; i++) {
			seed = seed * 1103515245 + 12345;
			fake_t5[i].start_location = (jlocation)((seed >> 8) % (unsigned)span);
			/* never 20: method 2's line, which would fold into it */
			fake_t5[i].line_number =
				(jint)(21 + (seed >> 4) % (round % 5 ? 500 : 70000));
		}
		for (int i = 0; i < fake_n5 && np + 3 <= PROBES; i++)
			for (int d = -1; d <= 1; d++)
				probe[np++] = (int)fake_t5[i].start_location + d;
		while (np < PROBES) {
			seed = seed * 1103515245 + 12345;
			probe[np++] = (int)((seed >> 8) % (unsigned)(span + 8)) - 1;
		}
		for (int i = 0; i < np; i++) {
			/* each probe is followed by a pc in method 2 (line 20): nothing folds */
			m[2 * i][0] = FAKE_M(5);
			bci[2 * i][0] = probe[i];
			m[2 * i + 1][0] = FAKE_M(2);
			bci[2 * i + 1][0] = 0;
			pcs[2 * i] =
				(PCStackInfo){ (void *)(uintptr_t)(ADDR + 16 * (uint64_t)i + 4), 1,
					       m[2 * i], bci[2 * i] };
			pcs[2 * i + 1] =
				(PCStackInfo){ (void *)(uintptr_t)(ADDR + 16 * (uint64_t)i + 8), 1,
					       m[2 * i + 1], bci[2 * i + 1] };
		}
		rec.numpcs = 2 * np;
		rec.pcinfo = pcs;
		codelines_push(NULL, q, fake_jvmti(), 16 * PROBES, (void *)ADDR, &rec.header, 1);
		decode_one(q, buf, sizeof(buf), &r);
		fgp_lines_begin(&r.u.lines, &it);
		for (int i = 0; i < np; i++) {
			assert_int_equal(fgp_pcs_next(&it, &pc), 1);
			assert_int_equal(pc.pc_off, 16 * i + 4);
			if (fgp_pc_line(&pc, 0) != hotspot_line(probe[i]))
				fail_msg("round %d: bci %d: line %u, HotSpot says %u", round,
					 probe[i], fgp_pc_line(&pc, 0), hotspot_line(probe[i]));
			assert_int_equal(fgp_pcs_next(&it, &pc), 1);
			assert_int_equal(fgp_pc_line(&pc, 0), 20);
		}
	}
	assert_int_equal(fake_live_strings, 0);
	queue_free(q);
}

/* Neighbouring pcs of one method share a line only where they share the bci. */
static void test_neighbouring_pcs_take_their_own_bci_lines(void **state)
{
	struct queue *q = queue_new(1 << 20);
	static uint8_t buf[1 << 16];
	struct fgp_record rec;
	struct compile c;

	(void)state;
	memset(&c, 0, sizeof(c));
	add_pc(&c, ADDR + 0x10, 2, (int[]){ 1, 2 }, (int[]){ 0, 0 });
	add_pc(&c, ADDR + 0x20, 2, (int[]){ 1, 2 }, (int[]){ 4, 0 });
	add_pc(&c, ADDR + 0x30, 2, (int[]){ 1, 2 }, (int[]){ 4, 0 }); /* folds 0x20 */
	add_pc(&c, ADDR + 0x40, 2, (int[]){ 1, 2 }, (int[]){ 8, 0 });
	add_pc(&c, ADDR + 0x50, 1, (int[]){ 1 }, (int[]){ 9 });
	codelines_push(NULL, q, fake_jvmti(), 0x100, (void *)ADDR, &c.rec, 1);
	decode_one(q, buf, sizeof(buf), &rec);
	assert_string_equal(table_text(&rec.u.lines), "10:10,20 30:11,20 40:12,20 50:99");
	assert_int_equal(fake_live_strings, 0);
	queue_free(q);
}

static void test_nothing_is_sent_without_lines_or_inline_info(void **state)
{
	struct codelines *cl = codelines_new(1 << 20);
	struct queue *q = queue_new(1 << 20);
	struct compile c;

	(void)state;
	/* no compile info, an empty one, a blob of size 0 */
	codelines_push(cl, q, fake_jvmti(), 0x100, (void *)ADDR, NULL, 1);
	memset(&c, 0, sizeof(c));
	c.rec.header.kind = JVMTI_CMLR_INLINE_INFO;
	codelines_push(cl, q, fake_jvmti(), 0x100, (void *)ADDR, &c.rec, 1);
	hot_compile(&c);
	codelines_push(cl, q, fake_jvmti(), 0, (void *)ADDR, &c.rec, 1);
	/* only methods without a table, or that JVMTI cannot answer for: all lines 0 */
	memset(&c, 0, sizeof(c));
	add_pc(&c, ADDR + 0x10, 2, (int[]){ 3, FAKE_FAIL_LINES }, (int[]){ 0, 0 });
	codelines_push(cl, q, fake_jvmti(), 0x100, (void *)ADDR, &c.rec, 1);
	/* every pc outside the blob */
	memset(&c, 0, sizeof(c));
	add_pc(&c, ADDR + 0x200, 1, (int[]){ 1 }, (int[]){ 0 });
	codelines_push(cl, q, fake_jvmti(), 0x100, (void *)ADDR, &c.rec, 1);
	assert_null(queue_pop(q));
	assert_int_equal(fake_live_strings, 0);
	queue_free(q);
	codelines_free(cl);
}

static void test_deep_chains_keep_the_innermost_and_are_flagged(void **state)
{
	enum { DEPTH = FGP_MAX_INLINE_DEPTH + 6 };
	static jmethodID m[DEPTH];
	static jint bci[DEPTH];
	PCStackInfo pc = { (void *)(uintptr_t)(ADDR + 8), DEPTH, m, bci };
	jvmtiCompiledMethodLoadInlineRecord r = { .header.kind = JVMTI_CMLR_INLINE_INFO,
						  .numpcs = 1,
						  .pcinfo = &pc };
	struct queue *q = queue_new(1 << 20);
	static uint8_t buf[1 << 16];
	struct fgp_inline_iter it;
	struct fgp_record rec;
	struct fgp_pc p;

	(void)state;
	for (int i = 0; i < DEPTH; i++) {
		m[i] = FAKE_M(i == 0 ? 2 : 4); /* innermost: line 21 at bci 5; others line 40 */
		bci[i] = 5;
	}
	codelines_push(NULL, q, fake_jvmti(), 0x100, (void *)ADDR, &r, 1);
	decode_one(q, buf, sizeof(buf), &rec);
	assert_int_equal(rec.flags, FGP_REC_INLINE_TRUNCATED);
	fgp_lines_begin(&rec.u.lines, &it);
	assert_int_equal(fgp_pcs_next(&it, &p), 1);
	assert_int_equal(p.depth, FGP_MAX_INLINE_DEPTH);
	assert_int_equal(fgp_pc_line(&p, 0), 21);
	assert_int_equal(fgp_pc_line(&p, FGP_MAX_INLINE_DEPTH - 1), 40);
	assert_int_equal(fake_live_strings, 0);
	queue_free(q);
}

static void test_a_full_cache_still_gives_lines(void **state)
{
	struct codelines *cl = codelines_new(1); /* nothing fits */
	struct queue *q = queue_new(1 << 20);
	static uint8_t buf[1 << 16];
	struct codelines_stats st;
	struct fgp_record rec;
	struct compile c;

	(void)state;
	hot_compile(&c);
	fake_line_calls = 0;
	for (int i = 0; i < 2; i++) {
		codelines_push(cl, q, fake_jvmti(), 0x100, (void *)ADDR, &c.rec, 1);
		decode_one(q, buf, sizeof(buf), &rec);
		assert_string_equal(table_text(&rec.u.lines), "10:10 28:20,99 30:0,21,12 40:10");
	}
	assert_int_equal(fake_line_calls, 6); /* asked every time */
	codelines_stats(cl, &st);
	assert_int_equal(st.cached, 0);
	assert_int_equal(fake_live_strings, 0);
	queue_free(q);
	codelines_free(cl);
}

/* A stack frame's line: HotSpot's rule, cached after the first ask, 0 where none is known. */
static void test_a_frames_line_is_looked_up_once(void **state)
{
	struct codelines *cl = codelines_new(1 << 20);

	(void)state;
	fake_line_calls = 0;
	/* method 1: { 0 10 } { 8 12 } { 4 11 } { 8 99 } (out of order, bci 8 twice) */
	assert_int_equal(codelines_line(cl, fake_jvmti(), FAKE_M(1), 0), 10);
	assert_int_equal(codelines_line(cl, fake_jvmti(), FAKE_M(1), 5), 11);
	assert_int_equal(codelines_line(cl, fake_jvmti(), FAKE_M(1), 8), 12);
	assert_int_equal(codelines_line(cl, fake_jvmti(), FAKE_M(1), 100), 99);
	assert_int_equal(codelines_line(cl, fake_jvmti(), FAKE_M(1), -1), 10); /* native / entry */
	assert_int_equal(fake_line_calls, 1);
	assert_int_equal(codelines_line(cl, fake_jvmti(), FAKE_M(3), 4), 0); /* no table */
	assert_int_equal(codelines_line(cl, fake_jvmti(), FAKE_M(FAKE_FAIL_LINES), 4), 0);
	assert_int_equal(codelines_line(NULL, fake_jvmti(), FAKE_M(2), 6), 21); /* no cache */
	assert_int_equal(fake_live_strings, 0);
	codelines_free(cl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_follow_hotspot_rules_and_the_inline_filter),
		cmocka_unit_test(test_a_frames_line_is_looked_up_once),
		cmocka_unit_test(test_bci_lookup_matches_hotspot_for_every_bci),
		cmocka_unit_test(test_random_tables_give_hotspots_line_for_every_bci),
		cmocka_unit_test(test_neighbouring_pcs_take_their_own_bci_lines),
		cmocka_unit_test(test_nothing_is_sent_without_lines_or_inline_info),
		cmocka_unit_test(test_deep_chains_keep_the_innermost_and_are_flagged),
		cmocka_unit_test(test_a_full_cache_still_gives_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
