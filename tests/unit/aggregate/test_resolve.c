// SPDX-License-Identifier: MIT
/*
 * test_resolve.c - the JIT resolver over a real code table: inline chains and, with lines
 * asked for, each frame's line from the agent's CODE_LINES (leaf pc and return addresses by
 * HotSpot's pc rule), the compiled method's own line with --no-inline, zeros where nothing
 * matches (never guessed), and lines that belong to one load only at a reused address.
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

#include "codetab.h"
#include "fgproto.h"
#include "resolve.h"
#include "symbolizer.h"

#define PID 77
#define MS 1000000ull

static uint8_t buf[1 << 16];

static const struct codetab *table_of(void *arg, uint32_t pid)
{
	return pid == PID ? arg : NULL;
}

static void apply_bytes(struct codetab *t, int n)
{
	struct fgp_reader r;
	struct fgp_record rec;

	assert_true(n > 0);
	assert_int_equal(fgp_reader_init(&r, buf, 8 + (size_t)n), 0);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_true(codetab_apply(t, &rec) >= 0);
}

/* Loop::run inlines Step::go (0x10..0x20) which inlines Leaf::spin (0x18). */
static void load(struct codetab *t, uint64_t addr, uint64_t ts, const char *name)
{
	static const struct fgp_str methods[] = { { "Loop::run", 9 },
						  { "Step::go", 8 },
						  { "Leaf::spin", 10 } };
	static const uint16_t c0[] = { 0 }, c1[] = { 1, 0 }, c2[] = { 2, 1, 0 };
	static const struct fgp_pc_in pcs[] = {
		{ 0x08, 1, c0 }, { 0x10, 2, c1 }, { 0x18, 3, c2 }, { 0x20, 2, c1 }, { 0x40, 1, c0 },
	};
	struct fgp_code_load_in in = { .addr = addr,
				       .size = 0x40,
				       .ts = ts,
				       .name = { name, (uint16_t)strlen(name) },
				       .n_methods = 3,
				       .methods = methods,
				       .n_pcs = 5,
				       .pcs = pcs };

	fgp_encode_msg_header(buf, sizeof(buf));
	apply_bytes(t, fgp_encode_code_load(buf + 8, sizeof(buf) - 8, &in));
}

/* Lines for load()'s code, plus bump; pc 0x30 splits (0x20, 0x40]. Chains that do not match
 * the inline table's: shallow gives the entry at 0x18 2 lines, deep the one at 0x10 3. */
enum shape { MATCHING, SHALLOW, DEEP };

static void lines(struct codetab *t, uint64_t addr, uint64_t ts, uint16_t bump, enum shape shape)
{
	uint16_t l[6][3] = { { 5 }, { 12, 6, 99 }, { 77, 13, 6 }, { 14, 6 }, { 7 }, { 8 } };
	struct fgp_pc_in pcs[6] = {
		{ 0x08, 1, l[0] }, { 0x10, 2, l[1] }, { 0x18, 3, l[2] },
		{ 0x20, 2, l[3] }, { 0x30, 1, l[4] }, { 0x40, 1, l[5] },
	};
	struct fgp_code_lines_in in = {
		.addr = addr, .size = 0x40, .ts = ts, .n_pcs = 6, .pcs = pcs
	};

	for (int i = 0; i < 6; i++)
		for (int d = 0; d < pcs[i].depth; d++)
			l[i][d] = (uint16_t)(l[i][d] + bump);
	if (shape == SHALLOW)
		pcs[2].depth = 2;
	if (shape == DEEP)
		pcs[1].depth = 3;
	fgp_encode_msg_header(buf, sizeof(buf));
	apply_bytes(t, fgp_encode_code_lines(buf + 8, sizeof(buf) - 8, &in));
}

struct res {
	int n;
	const char *names[8];
	uint16_t lines[8];
};

static struct res jit(struct stackagg_resolver *r, uint64_t addr, uint64_t ts, bool ret,
		      bool no_inline, bool want_lines)
{
	struct res out;
	enum stackagg_jit_kind kind;

	memset(&out, 0xff, sizeof(out));
	out.n = r->jit(r->ctx, PID, addr, ts, ret, no_inline, out.names, 8, &kind,
		       want_lines ? out.lines : NULL);
	return out;
}

static void test_each_frame_gets_its_own_line(void **state)
{
	struct codetab *t = codetab_new(NULL);
	struct resolve_ctx rc = { .table_of = table_of, .arg = t };
	struct stackagg_resolver r;
	struct res x;

	(void)state;
	resolve_init(&r, &rc);
	load(t, 0x1000, 10 * MS, "Loop::run");
	/* before lines arrive: names, and zeros */
	x = jit(&r, 0x1014, 11 * MS, false, false, true);
	assert_int_equal(x.n, 3);
	assert_int_equal(x.lines[0] | x.lines[1] | x.lines[2], 0);
	lines(t, 0x1000, 10 * MS, 0, MATCHING);
	/* a leaf pc in (0x10, 0x18]: spin:77 <- go:13 <- run:6 */
	x = jit(&r, 0x1014, 11 * MS, false, false, true);
	assert_int_equal(x.n, 3);
	assert_string_equal(x.names[0], "Leaf::spin");
	assert_int_equal(x.lines[0], 77);
	assert_int_equal(x.lines[1], 13);
	assert_int_equal(x.lines[2], 6);
	/* a return address equal to pc 0x10 is that entry's: go:12 <- run:6 */
	x = jit(&r, 0x1010, 11 * MS, true, false, true);
	assert_int_equal(x.n, 2);
	assert_string_equal(x.names[0], "Step::go");
	assert_int_equal(x.lines[0], 12);
	assert_int_equal(x.lines[1], 6);
	/* lines finer than the inline table: (0x20, 0x30] and (0x30, 0x40] */
	x = jit(&r, 0x1028, 11 * MS, false, false, true);
	assert_int_equal(x.n, 1);
	assert_int_equal(x.lines[0], 7);
	x = jit(&r, 0x1038, 11 * MS, false, false, true);
	assert_int_equal(x.lines[0], 8);
	/* --no-inline: the compiled method alone, with its own line (the call site of go) */
	x = jit(&r, 0x1014, 11 * MS, false, true, true);
	assert_int_equal(x.n, 1);
	assert_string_equal(x.names[0], "Loop::run");
	assert_int_equal(x.lines[0], 6);
	/* lines not asked for: not written */
	x = jit(&r, 0x1014, 11 * MS, false, false, false);
	assert_int_equal(x.lines[0], 0xffff);
	codetab_free(t);
}

static void test_mismatched_or_foreign_lines_are_not_used(void **state)
{
	struct codetab *t = codetab_new(NULL);
	struct resolve_ctx rc = { .table_of = table_of, .arg = t };
	struct stackagg_resolver r;
	struct res x;

	(void)state;
	resolve_init(&r, &rc);
	load(t, 0x1000, 10 * MS, "Loop::run");
	lines(t, 0x1000, 10 * MS, 0, SHALLOW); /* 2 lines where the chain has 3 names */
	x = jit(&r, 0x1014, 11 * MS, false, false, true);
	assert_int_equal(x.n, 3);
	assert_int_equal(x.lines[0] | x.lines[1] | x.lines[2], 0);
	x = jit(&r, 0x1010, 11 * MS, true, false, true); /* the rest still match */
	assert_int_equal(x.lines[0], 12);
	/* the address is reused by a newer load without lines: its frames get none, the old
	 * load's samples keep theirs */
	load(t, 0x1000, 20 * MS, "Loop::run");
	x = jit(&r, 0x1010, 21 * MS, true, false, true);
	assert_int_equal(x.n, 2);
	assert_int_equal(x.lines[0] | x.lines[1], 0);
	x = jit(&r, 0x1010, 11 * MS, true, false, true);
	assert_int_equal(x.lines[0], 12);
	lines(t, 0x1000, 20 * MS, 1000, DEEP); /* 3 lines for 2 names at 0x10 */
	x = jit(&r, 0x1014, 21 * MS, false, false, true);
	assert_int_equal(x.lines[0], 1077);
	x = jit(&r, 0x1010, 21 * MS, true, false, true);
	assert_int_equal(x.n, 2);
	assert_int_equal(x.lines[0] | x.lines[1], 0);
	x = jit(&r, 0x1014, 11 * MS, false, false, true);
	assert_int_equal(x.lines[0], 0); /* old load, mismatched chain: still none */
	/* not a JVM: -ENOENT, lines untouched */
	{
		enum stackagg_jit_kind kind;
		const char *names[4];
		uint16_t l[4] = { 9, 9, 9, 9 };

		assert_int_equal(
			r.jit(r.ctx, PID + 1, 0x1014, 11 * MS, false, false, names, 4, &kind, l),
			-ENOENT);
		assert_int_equal(l[0], 9);
	}
	codetab_free(t);
}

/*
 * One sample of a process whose maps are `maps` into a fresh aggregate over the resolvers
 * (rc->sz is created here), settled; returns its folded text (free it) and leaves the
 * aggregate in *out.
 */
static char *fold_one(struct resolve_ctx *rc, const char *maps, const struct stackagg_sample *s,
		      struct stackagg **out)
{
	struct stackagg_resolver r;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	rc->sz = symbolizer_new(NULL);
	assert_non_null(rc->sz);
	assert_int_equal(symbolizer_add_process_maps(rc->sz, PID, -1, maps, strlen(maps)), 0);
	resolve_init(&r, rc);
	*out = stackagg_new(NULL, &r);
	assert_non_null(*out);
	assert_int_equal(stackagg_sample(*out, s), 0);
	stackagg_settle(*out, UINT64_MAX);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(stackagg_write_folded(*out, f), 0);
	fclose(f);
	return text;
}

/*
 * A native frame with no name shows where to look it up, module+offset (the call instruction
 * for a return address), and still counts as unresolved, never as a thread's root.
 */
static void test_unnamed_native_frame_is_module_plus_offset(void **state)
{
	static const char maps[] =
		"7f1000000000-7f1000010000 r-xp 00003000 00:00 0 /nonexistent/libgone.so\n";
	struct resolve_ctx rc = { .table_of = table_of };
	uint64_t user[] = { 0x7f1000001235, 0x7f1000002001 };
	struct stackagg_sample s = {
		.pid = PID, .tid = PID, .user = user, .nr_user = 2, .thread = "main"
	};
	struct stackagg_stats st;
	struct stackagg *a;
	char *out;

	(void)state;
	out = fold_one(&rc, maps, &s, &a);
	assert_string_equal(out, "main;libgone.so+0x5000;libgone.so+0x4235 1\n");
	free(out);
	stackagg_stats(a, &st);
	assert_int_equal(st.frames[STACKAGG_CLASS_NATIVE], 2);
	assert_int_equal(st.unresolved[STACKAGG_CLASS_NATIVE], 2);
	assert_int_equal(st.rooted, 0);
	stackagg_free(a);
	symbolizer_free(rc.sz);
}

/*
 * JIT code in a part of the code cache that the maps still show reserved (---p: its commit's
 * mmap record was lost) is named from the code table, not shown as "[unknown] ([anon])".
 */
static void test_jit_code_in_reserved_looking_memory_is_named(void **state)
{
	static const char maps[] = "7f2000000000-7f2000100000 ---p 00000000 00:00 0 \n";
	struct codetab *t = codetab_new(NULL);
	struct resolve_ctx rc = { .table_of = table_of, .arg = t };
	uint64_t user[] = { 0x7f2000000018, 0x7f2000080000 };
	struct stackagg_sample s = {
		.pid = PID, .tid = PID, .ts = 10 * MS, .user = user, .nr_user = 2, .thread = "main"
	};
	struct stackagg *a;
	char *out;

	(void)state;
	assert_int_equal(
		codetab_add(t, CODEBLOB_COMPILED, 0x7f2000000000, 0x100, 1 * MS, "Hot::loop"), 1);
	out = fold_one(&rc, maps, &s, &a);
	/* The table's code is named; reserved memory it does not cover is unknown JIT. */
	assert_string_equal(out, "main;[unknown] (jit)_[j];Hot::loop_[j] 1\n");
	free(out);
	stackagg_free(a);
	symbolizer_free(rc.sz);
	codetab_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_frame_gets_its_own_line),
		cmocka_unit_test(test_mismatched_or_foreign_lines_are_not_used),
		cmocka_unit_test(test_unnamed_native_frame_is_module_plus_offset),
		cmocka_unit_test(test_jit_code_in_reserved_looking_memory_is_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
