// SPDX-License-Identifier: MIT
/* test_codetab.c - the per-JVM code history: intervals, overlap, reuse, grace, inline, caps. */
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

#define MS 1000000ull

static uint8_t buf[1 << 16];

/* Encode one record into buf and decode it back into *rec (which then borrows buf). */
static void decode_one(size_t n, struct fgp_record *rec)
{
	struct fgp_reader r;

	assert_int_equal(fgp_reader_init(&r, buf, n), 0);
	assert_int_equal(fgp_next(&r, rec), 1);
}

static void load_inline(struct codetab *t, uint64_t addr, uint32_t size, uint64_t ts,
			const char *name, uint16_t flags)
{
	/* Hot::loop inlines Hot::step (pcs 0x10..0x20) which inlines Math::abs (pc 0x18). */
	static const struct fgp_str methods[] = { { "Hot::loop", 9 },
						  { "Hot::step", 9 },
						  { "Math::abs", 9 } };
	static const uint16_t c_loop[] = { 0 }, c_step[] = { 1, 0 }, c_abs[] = { 2, 1, 0 };
	static const struct fgp_pc_in pcs[] = {
		{ 0x08, 1, c_loop }, { 0x10, 2, c_step }, { 0x18, 3, c_abs },
		{ 0x20, 2, c_step }, { 0x40, 1, c_loop },
	};
	struct fgp_code_load_in in = {
		.addr = addr,
		.size = size,
		.ts = ts,
		.flags = flags,
		.name = { name, (uint16_t)strlen(name) },
		.n_methods = 3,
		.methods = methods,
		.n_pcs = 5,
		.pcs = pcs,
	};
	struct fgp_record rec;
	int n;

	fgp_encode_msg_header(buf, sizeof(buf));
	n = fgp_encode_code_load(buf + 8, sizeof(buf) - 8, &in);
	assert_true(n > 0);
	decode_one(8 + (size_t)n, &rec);
	assert_true(codetab_apply(t, &rec) >= 0);
}

static void snapshot(struct codetab *t, uint16_t type, uint64_t ts)
{
	struct fgp_snapshot s = { .ts = ts };
	struct fgp_record rec;

	fgp_encode_msg_header(buf, sizeof(buf));
	assert_int_equal(fgp_encode_snapshot(buf + 8, sizeof(buf) - 8, type, &s),
			 FGP_SNAPSHOT_SIZE);
	decode_one(8 + FGP_SNAPSHOT_SIZE, &rec);
	codetab_apply(t, &rec);
}

static const char *name_at(const struct codetab *t, uint64_t a, uint64_t ts)
{
	const struct codeblob *b = codetab_lookup(t, a, ts);

	return b ? b->name : NULL;
}

/* A table with a 50 ms late-load window, which the window tests below are written for. */
static struct codetab *new50(void)
{
	const struct codetab_limits lim = { .grace_ns = 50 * MS };

	return codetab_new(&lim);
}

static void test_lookup_respects_load_and_unload_times(void **state)
{
	struct codetab *t = new50();

	(void)state;
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, 0x1000, 0x100, 100 * MS, "A::a"), 1);
	assert_int_equal(codetab_unload(t, 0x1000, 200 * MS), 1);
	assert_null(name_at(t, 0x1050, 10 * MS)); /* long before: outside the grace */
	assert_string_equal(name_at(t, 0x1050, 100 * MS), "A::a");
	assert_string_equal(name_at(t, 0x10ff, 199 * MS), "A::a");
	assert_null(name_at(t, 0x1050, 200 * MS)); /* unload_ts is exclusive */
	assert_null(name_at(t, 0x1100, 150 * MS)); /* end is exclusive */
	assert_int_equal(codetab_live_count(t), 0);
	codetab_free(t);
}

/*
 * Names handed in through one buffer whose bytes change (a connection's table does that when an
 * id is defined again) are each interned as they read then, and a name freed by pruning is never
 * handed out again (the ASan build checks that no freed name is touched).
 */
static void test_names_through_one_buffer_stay_right(void **state)
{
	struct codetab *t = codetab_new(NULL);
	char name[32], last[32];

	(void)state;
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 50; i++) {
			uint64_t addr = 0x100000 * (uint64_t)(round + 1) + 0x100 * (uint64_t)i;

			snprintf(name, sizeof(name), "N%d::m%d", i % 7, round);
			assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, addr, 0x80,
						     (uint64_t)(1000 * (round + 1) + i) * MS, name),
					 1);
		}
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 50; i++) {
			uint64_t addr = 0x100000 * (uint64_t)(round + 1) + 0x100 * (uint64_t)i;

			snprintf(name, sizeof(name), "N%d::m%d", i % 7, round);
			assert_string_equal(name_at(t, addr + 8, 5000 * MS), name);
			assert_int_equal(codetab_unload(t, addr, 6000 * MS), 1);
		}
	assert_int_equal(codetab_prune(t, 7000 * MS), 150);
	/* every name is gone; the buffer still holds the last one, which comes back fresh */
	memcpy(last, name, sizeof(last));
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, 0x9000, 0x80, 8000 * MS, name), 1);
	assert_string_equal(name_at(t, 0x9010, 8000 * MS), name);
	snprintf(name, sizeof(name), "Other::x");
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, 0xa000, 0x80, 8000 * MS, name), 1);
	assert_string_equal(name_at(t, 0xa010, 8000 * MS), "Other::x");
	assert_string_equal(name_at(t, 0x9010, 8000 * MS), last);
	codetab_free(t);
}

static void test_address_reuse_keeps_each_generation(void **state)
{
	struct codetab *t = codetab_new(NULL);
	char name[32];

	(void)state;
	/* Ten generations of a method at the same address, each unloaded before the next. */
	for (int g = 0; g < 10; g++) {
		snprintf(name, sizeof(name), "Gen%d::hot", g);
		codetab_add(t, CODEBLOB_COMPILED, 0x7f0000001000, 0x200,
			    (uint64_t)(1000 + g * 100) * MS, name);
		codetab_unload(t, 0x7f0000001000, (uint64_t)(1000 + g * 100 + 90) * MS);
	}
	for (int g = 0; g < 10; g++) {
		snprintf(name, sizeof(name), "Gen%d::hot", g);
		assert_string_equal(
			name_at(t, 0x7f0000001100, (uint64_t)(1000 + g * 100 + 45) * MS), name);
	}
	codetab_free(t);
}

static void test_overlapping_load_ends_the_old_blob(void **state)
{
	struct codetab *t = codetab_new(NULL);
	struct codetab_stats st;

	(void)state;
	codetab_add(t, CODEBLOB_COMPILED, 0x1000, 0x100, 100 * MS, "Old::a");
	codetab_add(t, CODEBLOB_COMPILED, 0x1100, 0x100, 100 * MS, "Old::b");
	/* New blob covers the tail of a and the head of b, with no unload events. */
	codetab_add(t, CODEBLOB_COMPILED, 0x1080, 0x100, 300 * MS, "New::c");
	assert_int_equal(codetab_live_count(t), 1);
	assert_string_equal(codetab_live_at(t, 0)->name, "New::c");
	assert_string_equal(name_at(t, 0x1010, 200 * MS), "Old::a");
	assert_string_equal(name_at(t, 0x1150, 299 * MS), "Old::b");
	assert_string_equal(name_at(t, 0x1150, 300 * MS), "New::c");
	assert_null(name_at(t, 0x1010, 400 * MS)); /* a ended at c's load */
	codetab_stats(t, &st);
	assert_int_equal(st.overlap_ended, 2);
	codetab_free(t);
}

static void test_older_overlapping_load_is_history_only(void **state)
{
	struct codetab *t = codetab_new(NULL);

	(void)state;
	codetab_add(t, CODEBLOB_COMPILED, 0x1000, 0x100, 500 * MS, "Newer::x");
	/* Arrives later but was loaded earlier (e.g. a replayed record): live until x's load. */
	codetab_add(t, CODEBLOB_COMPILED, 0x1000, 0x80, 100 * MS, "Older::y");
	assert_int_equal(codetab_live_count(t), 1);
	assert_string_equal(codetab_live_at(t, 0)->name, "Newer::x");
	assert_string_equal(name_at(t, 0x1010, 200 * MS), "Older::y");
	assert_string_equal(name_at(t, 0x1010, 600 * MS), "Newer::x");
	codetab_free(t);
}

static void test_grace_window_accepts_a_late_callback(void **state)
{
	struct codetab *t = new50();

	(void)state;
	codetab_add(t, CODEBLOB_COMPILED, 0x1000, 0x100, 100 * MS, "Old::a");
	codetab_unload(t, 0x1000, 150 * MS);
	codetab_add(t, CODEBLOB_COMPILED, 0x1000, 0x100, 200 * MS, "New::b");
	codetab_add(t, CODEBLOB_COMPILED, 0x9000, 0x100, 400 * MS, "Far::c");
	/* Sample 20 ms before b's callback, after a's unload: b was already running. */
	assert_string_equal(name_at(t, 0x1010, 180 * MS), "New::b");
	/* While a was live, a wins. */
	assert_string_equal(name_at(t, 0x1010, 149 * MS), "Old::a");
	/* 60 ms before c's callback: outside the 50 ms grace. */
	assert_null(name_at(t, 0x9010, 340 * MS));
	assert_string_equal(name_at(t, 0x9010, 351 * MS), "Far::c");
	codetab_free(t);
}

/* The default window is a second: the JVM's ServiceThread posts load events that late. */
static void test_default_grace_covers_a_slow_service_thread(void **state)
{
	struct codetab *t = codetab_new(NULL);

	(void)state;
	codetab_add(t, CODEBLOB_COMPILED, 0x1000, 0x100, 2000 * MS, "Late::a");
	assert_string_equal(name_at(t, 0x1010, 1100 * MS), "Late::a"); /* 900 ms before */
	assert_null(name_at(t, 0x1010, 900 * MS));		       /* 1.1 s before */
	codetab_free(t);
}

static void test_grace_never_overrides_a_live_occupant(void **state)
{
	struct codetab *t = new50();

	(void)state;
	codetab_add(t, CODEBLOB_COMPILED, 0x1000, 0x100, 100 * MS, "Old::a");
	codetab_add(t, CODEBLOB_COMPILED, 0x1000, 0x100, 120 * MS, "New::b"); /* ends a at 120 */
	assert_string_equal(name_at(t, 0x1010, 110 * MS), "Old::a");
	assert_string_equal(name_at(t, 0x1010, 120 * MS), "New::b");
	assert_null(name_at(t, 0x1010, 30 * MS)); /* before anything, beyond the grace */
	assert_string_equal(name_at(t, 0x1010, 60 * MS), "Old::a"); /* within the grace of a */
	codetab_free(t);
}

static void test_inline_chain_follows_hotspot_ranges(void **state)
{
	struct codetab *t = codetab_new(NULL);
	const struct codeblob *b;
	const char *names[8];

	(void)state;
	load_inline(t, 0x2000, 0x40, 10 * MS, "Hot::loop", 0);
	b = codetab_lookup(t, 0x2014, 10 * MS);
	assert_non_null(b);
	/* (0x10, 0x18] is Math::abs <- Hot::step <- Hot::loop. */
	assert_int_equal(codetab_inline_chain(b, 0x2014, names, 8), 3);
	assert_string_equal(names[0], "Math::abs");
	assert_string_equal(names[1], "Hot::step");
	assert_string_equal(names[2], "Hot::loop");
	/* A return address equal to a pc offset belongs to that entry. */
	assert_int_equal(codetab_inline_chain(b, 0x2018, names, 8), 3);
	assert_int_equal(codetab_inline_chain(b, 0x2010, names, 8), 2);
	assert_string_equal(names[0], "Hot::step");
	/* No ret - 1: one past a pc offset is the next entry, for a return address too. */
	assert_int_equal(codetab_inline_chain(b, 0x2011, names, 8), 3);
	assert_string_equal(names[0], "Math::abs");
	assert_int_equal(codetab_inline_chain(b, 0x2019, names, 8), 2);
	assert_int_equal(codetab_inline_chain(b, 0x2000, names, 8), 1);
	assert_string_equal(names[0], "Hot::loop");
	/* max truncates, innermost kept. */
	assert_int_equal(codetab_inline_chain(b, 0x2014, names, 1), 1);
	assert_string_equal(names[0], "Math::abs");
	codetab_free(t);
}

static void test_names_are_interned_and_freed_with_history(void **state)
{
	struct codetab_limits lim = { .max_bytes = 0 };
	struct codetab *t = codetab_new(&lim);
	struct codetab_stats a, b;

	(void)state;
	codetab_stats(t, &a);
	for (int i = 0; i < 100; i++) {
		load_inline(t, 0x3000, 0x40, (uint64_t)(i + 1) * MS, "Hot::loop", 0);
		codetab_unload(t, 0x3000, (uint64_t)(i + 1) * MS + 1000);
	}
	codetab_stats(t, &b);
	assert_int_equal(b.blobs, 100);
	/* 100 copies of three names would be > 100 * 3 * 25 bytes; interned, much less. */
	assert_true(codetab_prune(t, 1000 * MS) == 100);
	codetab_stats(t, &b);
	assert_int_equal(b.blobs, 0);
	assert_int_equal(b.pruned, 100);
	assert_true(b.bytes <= a.bytes + 8192); /* only index capacity (hist, live) remains */
	codetab_free(t);
}

static void test_replay_merges_and_ends_what_vanished(void **state)
{
	struct codetab *t = codetab_new(NULL);
	struct codetab_stats st;

	(void)state;
	load_inline(t, 0x1000, 0x40, 10 * MS, "Keep::me", 0);
	load_inline(t, 0x2000, 0x40, 20 * MS, "Gone::me", 0);
	/* The agent reconnects: its snapshot holds Keep::me (same ts) and a new blob. */
	snapshot(t, FGP_SNAPSHOT_BEGIN, 500 * MS);
	load_inline(t, 0x1000, 0x40, 10 * MS, "Keep::me", FGP_REC_REPLAY);
	load_inline(t, 0x3000, 0x40, 400 * MS, "New::one", FGP_REC_REPLAY);
	/* Until the snapshot ends, what it has not named yet is still live (and asked for). */
	assert_string_equal(name_at(t, 0x2010, 600 * MS), "Gone::me");
	snapshot(t, FGP_SNAPSHOT_END, 500 * MS);
	codetab_stats(t, &st);
	assert_int_equal(st.replay_dups, 1);
	assert_int_equal(st.replay_gone, 1);
	assert_int_equal(codetab_live_count(t), 2);
	assert_string_equal(name_at(t, 0x2010, 100 * MS), "Gone::me");
	assert_null(name_at(t, 0x2010, 600 * MS));
	assert_string_equal(name_at(t, 0x1010, 600 * MS), "Keep::me");
	codetab_free(t);
}

struct hist {
	int n;
	uint64_t last_ts;
	bool ordered;
	int unloads;
};

static int hist_cb(void *arg, const struct codeblob *b, bool is_unload)
{
	struct hist *h = arg;
	uint64_t ts = is_unload ? b->unload_ts : b->load_ts;

	if (ts < h->last_ts)
		h->ordered = false;
	h->last_ts = ts;
	h->n++;
	h->unloads += is_unload;
	return 0;
}

static void test_history_is_in_time_order(void **state)
{
	struct codetab *t = codetab_new(NULL);
	struct hist h = { .ordered = true };

	(void)state;
	for (int i = 0; i < 300; i++) {
		uint64_t a = 0x10000 + (uint64_t)((i * 7919) % 300) * 0x100;

		codetab_add(t, CODEBLOB_COMPILED, a, 0x80, (uint64_t)(i + 1) * MS, "M::m");
		if (i % 3 == 0)
			codetab_unload(t, a, (uint64_t)(i + 1) * MS + 500);
	}
	assert_int_equal(codetab_history(t, hist_cb, &h), 0);
	assert_true(h.ordered);
	assert_int_equal(h.n, 300 + 100);
	assert_int_equal(h.unloads, 100);
	codetab_free(t);
}

static void test_memory_cap_prunes_history_then_refuses(void **state)
{
	struct codetab_limits lim = { .max_bytes = 64 * 1024 };
	struct codetab *t = codetab_new(&lim);
	struct codetab_stats st;
	char name[64];
	int refused = 0;

	(void)state;
	/* Ended history first: it must be pruned to make room, never live blobs. */
	for (int i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "Churn%d::method", i);
		codetab_add(t, CODEBLOB_COMPILED, 0x100000, 0x100, (uint64_t)(i + 1) * MS, name);
		codetab_unload(t, 0x100000, (uint64_t)(i + 1) * MS + 10);
	}
	codetab_stats(t, &st);
	assert_true(st.pruned > 0);
	assert_true(st.bytes <= lim.max_bytes);
	/* Newest history survives pruning. */
	assert_string_equal(name_at(t, 0x100010, 2000 * MS), "Churn1999::method");
	/* Live blobs fill the cap: then new ones are refused and counted. */
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "Live%d::method", i);
		if (codetab_add(t, CODEBLOB_COMPILED, 0x200000 + (uint64_t)i * 0x100, 0x100,
				3000 * MS, name) == -ENOSPC)
			refused++;
	}
	codetab_stats(t, &st);
	assert_true(refused > 0);
	assert_int_equal(st.refused, refused);
	assert_true(st.bytes <= lim.max_bytes);
	codetab_free(t);
}

static void test_invalid_blobs_are_counted(void **state)
{
	struct codetab *t = codetab_new(NULL);
	struct codetab_stats st;

	(void)state;
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, 0x1000, 0, 1, "Zero::size"), -EINVAL);
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, UINT64_MAX - 4, 0x100, 1, "Wrap::x"),
			 -EINVAL);
	assert_int_equal(codetab_unload(t, 0x5000, 1), 0);
	codetab_stats(t, &st);
	assert_int_equal(st.bad, 2);
	assert_int_equal(st.unknown_unloads, 1);
	codetab_free(t);
}

/* codetab_lookup(a, ts) against the model of blobs kept (load, unload): -1 when none is live. */
static void check_lookups(const struct codetab *t, const uint64_t *addr, const uint64_t *load,
			  const uint64_t *unload, const bool *gone, int n)
{
	for (int q = 0; q < 2000; q++) {
		uint64_t a = 0x400000 + (uint64_t)(rand() % 2000) * 0x40 + 5;
		uint64_t ts = (uint64_t)(rand() % n + 1) * 1000 + 10;
		const struct codeblob *b = codetab_lookup(t, a, ts);
		int want = -1;

		for (int k = 0; k < n; k++)
			if (!gone[k] && a >= addr[k] && a < addr[k] + 0x40 && load[k] <= ts &&
			    ts < unload[k])
				want = k;
		if (want < 0) {
			/* Nothing live: only a grace hit is allowed, loaded after ts. */
			if (b)
				assert_true(b->load_ts > ts);
		} else {
			assert_non_null(b);
			assert_int_equal(b->load_ts, load[want]);
		}
	}
}

static void test_many_blobs_lookup_matches_linear_scan(void **state)
{
	struct codetab *t = codetab_new(NULL);
	enum { N = 3000 };
	static uint64_t addr[N], load[N], unload[N];
	static bool gone[N];
	uint64_t cut = (uint64_t)N / 2 * 1000;

	(void)state;
	srand(7);
	for (int i = 0; i < N; i++) {
		addr[i] = 0x400000 + (uint64_t)(rand() % 2000) * 0x40;
		load[i] = (uint64_t)(i + 1) * 1000;
		codetab_add(t, CODEBLOB_COMPILED, addr[i], 0x40, load[i], "X::x");
		unload[i] = UINT64_MAX;
		for (int k = 0; k < i; k++) /* our own model of "ended by overlap" */
			if (addr[k] == addr[i] && unload[k] == UINT64_MAX)
				unload[k] = load[i];
	}
	check_lookups(t, addr, load, unload, gone, N);
	/* History that ended before cut is pruned: what stays is found where it was. */
	assert_true(codetab_prune(t, cut) > 0);
	for (int k = 0; k < N; k++)
		gone[k] = unload[k] != UINT64_MAX && unload[k] < cut;
	check_lookups(t, addr, load, unload, gone, N);
	codetab_free(t);
}

/* A model of the table for the lookups below: each blob's range and life. */
struct mblob {
	uint64_t addr, size, load, unload;
	bool gone;
};

/* The lookup rule by a scan of the model: live at ts (latest load), else loaded within
 * grace after ts (earliest load). The index, or -1. */
static int model_lookup(const struct mblob *m, int n, uint64_t a, uint64_t ts, uint64_t grace)
{
	int live = -1, early = -1;

	for (int k = 0; k < n; k++) {
		if (m[k].gone || a < m[k].addr || a >= m[k].addr + m[k].size)
			continue;
		if (m[k].load <= ts && ts < m[k].unload) {
			if (live < 0 || m[k].load > m[live].load)
				live = k;
		} else if (m[k].load > ts && m[k].load - ts <= grace) {
			if (early < 0 || m[k].load < m[early].load)
				early = k;
		}
	}
	return live >= 0 ? live : early;
}

/*
 * A lookup that remembers its answers (the same hot addresses come sample after sample) gives
 * the answer a search would: asked again and again for the same addresses at times before,
 * within and after each blob's life, between loads that overlap and end older code, unloads
 * and prunes.
 */
static void test_remembered_lookups_answer_as_a_search_does(void **state)
{
	const uint64_t grace = 5 * MS;
	struct codetab_limits lim = { .grace_ns = grace };
	struct codetab *t = codetab_new(&lim);
	enum { N = 1200, SLOTS = 48 };
	static struct mblob m[N];
	int n = 0;
	uint64_t now = 10 * MS, checked = 0;
	unsigned seed = 11;

	(void)state;
	assert_non_null(t);
	while (n < N) {
		int op = rand_r(&seed) % 10;

		now += (uint64_t)(rand_r(&seed) % 3000) * 1000;
		if (op < 6) { /* a load, its range overlapping others' at times */
			uint64_t a = 0x400000 + (uint64_t)(rand_r(&seed) % SLOTS) * 0x40;
			uint64_t size = 0x40 * (uint64_t)(1 + rand_r(&seed) % 3);

			assert_true(codetab_add(t, CODEBLOB_COMPILED, a, (uint32_t)size, now,
						"M::m") >= 0);
			for (int k = 0; k < n; k++)
				if (!m[k].gone && m[k].unload == UINT64_MAX &&
				    m[k].addr < a + size && a < m[k].addr + m[k].size)
					m[k].unload = now;
			m[n++] = (struct mblob){ a, size, now, UINT64_MAX, false };
		} else if (op < 9) { /* an unload of a live blob, the first from a random one on */
			int k = n ? rand_r(&seed) % n : 0, i;

			for (i = 0; i < n && (m[k].gone || m[k].unload != UINT64_MAX); i++)
				k = (k + 1) % n;
			if (i == n)
				continue;
			assert_int_equal(codetab_unload(t, m[k].addr, now), 1);
			m[k].unload = now;
		} else { /* history that ended a while ago is pruned */
			uint64_t cut = now > 200 * MS ? now - 200 * MS : 0;

			codetab_prune(t, cut);
			for (int k = 0; k < n; k++)
				if (m[k].unload != UINT64_MAX && m[k].unload < cut)
					m[k].gone = true;
		}
		/* Few addresses, each asked at several times, so that most asks find an answer
		 * remembered, from this round or from before the last change: within each blob's
		 * life and around its edges (its load, its end, the grace before its load). */
		for (int q = 0; q < 8; q++) {
			uint64_t a = 0x400000 + (uint64_t)(rand_r(&seed) % (SLOTS + 3)) * 0x40 +
				     (uint64_t)(rand_r(&seed) % 4) * 0x10;

			for (int r = 0; r < 6; r++) {
				uint64_t ts = now - (uint64_t)(rand_r(&seed) % 40) * MS / 4 +
					      (uint64_t)(rand_r(&seed) % 40) * MS / 4;
				const struct codeblob *b = codetab_lookup(t, a, ts);
				int want = model_lookup(m, n, a, ts, grace);

				if (want < 0) {
					assert_null(b);
				} else {
					assert_non_null(b);
					assert_int_equal(b->addr, m[want].addr);
					assert_int_equal(b->load_ts, m[want].load);
				}
				checked++;
			}
		}
	}
	print_message("%llu lookups checked against the model\n", (unsigned long long)checked);
	codetab_free(t);
}

static int apply_frame(struct codetab *t, uint64_t addr, uint32_t frame_size)
{
	struct fgp_code_frame f = { .addr = addr,
				    .kind = FGP_CF_NMETHOD,
				    .frame_size = frame_size,
				    .code_begin = addr,
				    .code_size = 0x100,
				    .frame_complete = 0x10 };
	struct fgp_record rec;

	rec.type = FGP_CODE_FRAME;
	rec.flags = 0;
	rec.size = FGP_CODE_FRAME_SIZE;
	rec.u.frame = f;
	return codetab_apply(t, &rec);
}

static void test_frame_facts_attach_to_the_live_blob_at_their_address(void **state)
{
	struct codetab *t = codetab_new(NULL);
	const struct codeblob *b;
	struct codetab_stats st;
	size_t bytes;

	(void)state;
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, 0x1000, 0x100, 10, "A::a"), 1);
	codetab_stats(t, &st);
	bytes = st.bytes;
	assert_int_equal(apply_frame(t, 0x1000, 48), 0);
	assert_int_equal(apply_frame(t, 0x1008, 48), 0); /* not where a blob starts */
	assert_int_equal(apply_frame(t, 0x5000, 48), 0); /* no blob */
	b = codetab_lookup(t, 0x1010, 11);
	assert_non_null(b);
	assert_non_null(b->frame);
	assert_int_equal(b->frame->frame_size, 48);
	assert_int_equal(b->frame->frame_complete, 0x10);
	codetab_stats(t, &st);
	assert_int_equal(st.frames, 1);
	assert_int_equal(st.frames_orphan, 2);
	assert_true(st.bytes > bytes);
	/* newer facts replace older ones without growing */
	bytes = st.bytes;
	assert_int_equal(apply_frame(t, 0x1000, 64), 0);
	codetab_stats(t, &st);
	assert_int_equal(st.bytes, bytes);
	assert_int_equal(codetab_lookup(t, 0x1010, 11)->frame->frame_size, 64);
	/* a blob that replaces it at the same address starts without facts; history keeps them */
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, 0x1000, 0x80, 20, "B::b"), 1);
	assert_null(codetab_lookup(t, 0x1010, 21)->frame);
	assert_int_equal(codetab_lookup(t, 0x1010, 11)->frame->frame_size, 64);
	assert_int_equal(codetab_prune(t, 30), 1); /* frees A::a with its facts (ASan checks) */
	codetab_free(t);
}

/* Lines for load_inline's code: same depths as its chains, finer pcs (0x0c, 0x30). */
static const uint16_t l08[] = { 30 }, l0c[] = { 40, 31 }, l10[] = { 41, 31 }, l18[] = { 7, 42, 31 },
		      l20[] = { 43, 31 }, l30[] = { 33 }, l40[] = { 34 };
static const struct fgp_pc_in line_pcs[] = {
	{ 0x08, 1, l08 }, { 0x0c, 2, l0c }, { 0x10, 2, l10 }, { 0x18, 3, l18 },
	{ 0x20, 2, l20 }, { 0x30, 1, l30 }, { 0x40, 1, l40 },
};

/* Apply a CODE_LINES for (addr, size, ts) with line_pcs, every line plus bump. */
static int apply_lines(struct codetab *t, uint64_t addr, uint32_t size, uint64_t ts, uint16_t bump)
{
	uint16_t lines[7][3];
	struct fgp_pc_in pcs[7];
	struct fgp_code_lines_in in = {
		.addr = addr, .size = size, .ts = ts, .n_pcs = 7, .pcs = pcs
	};
	struct fgp_record rec;
	int n;

	for (int i = 0; i < 7; i++) {
		pcs[i] = line_pcs[i];
		for (int d = 0; d < pcs[i].depth; d++)
			lines[i][d] = (uint16_t)(line_pcs[i].chain[d] + bump);
		pcs[i].chain = lines[i];
	}
	fgp_encode_msg_header(buf, sizeof(buf));
	n = fgp_encode_code_lines(buf + 8, sizeof(buf) - 8, &in);
	assert_true(n > 0);
	decode_one(8 + (size_t)n, &rec);
	return codetab_apply(t, &rec);
}

/* The lines at addr of the blob live at ts, as "a,b,c" (or "" when none). */
static const char *lines_at(const struct codetab *t, uint64_t addr, uint64_t ts)
{
	static char out[64];
	const struct codeblob *b = codetab_lookup(t, addr, ts);
	uint16_t l[8];
	int n = b ? codetab_lines_at(b, addr, l, 8) : 0;
	size_t k = 0;

	out[0] = '\0';
	for (int i = 0; i < n; i++)
		k += (size_t)snprintf(out + k, sizeof(out) - k, "%s%u", i ? "," : "", l[i]);
	return out;
}

static void test_lines_attach_to_their_load_and_follow_hotspot_ranges(void **state)
{
	struct codetab *t = codetab_new(NULL);
	const struct codeblob *b;
	struct codetab_stats st;
	const char *names[8];
	size_t bytes;

	(void)state;
	load_inline(t, 0x2000, 0x40, 10 * MS, "Hot::loop", 0);
	codetab_stats(t, &st);
	bytes = st.bytes;
	assert_string_equal(lines_at(t, 0x2014, 11 * MS), ""); /* none yet */
	assert_int_equal(apply_lines(t, 0x2000, 0x40, 10 * MS, 0), 0);
	codetab_stats(t, &st);
	assert_int_equal(st.lines, 1);
	assert_true(st.bytes > bytes);
	/* (0x10, 0x18]: Math::abs:7 <- Hot::step:42 <- Hot::loop:31, as deep as the chain */
	assert_string_equal(lines_at(t, 0x2014, 11 * MS), "7,42,31");
	b = codetab_lookup(t, 0x2014, 11 * MS);
	assert_int_equal(codetab_inline_chain(b, 0x2014, names, 8), 3);
	/* a return address equal to a pc offset belongs to that entry; the finer pcs split
	 * the inline table's (0x08, 0x10] */
	assert_string_equal(lines_at(t, 0x2018, 11 * MS), "7,42,31");
	assert_string_equal(lines_at(t, 0x200c, 11 * MS), "40,31");
	assert_string_equal(lines_at(t, 0x200d, 11 * MS), "41,31");
	assert_string_equal(lines_at(t, 0x2000, 11 * MS), "30");
	assert_string_equal(lines_at(t, 0x2031, 11 * MS), "34");
	/* max limits what is written, not the depth returned */
	{
		uint16_t one[1];

		assert_int_equal(codetab_lines_at(b, 0x2014, one, 1), 3);
		assert_int_equal(one[0], 7);
	}
	/* newer lines for the same load replace the old ones without growing */
	codetab_stats(t, &st);
	bytes = st.bytes;
	assert_int_equal(apply_lines(t, 0x2000, 0x40, 10 * MS, 100), 0);
	codetab_stats(t, &st);
	assert_int_equal(st.bytes, bytes);
	assert_string_equal(lines_at(t, 0x2014, 11 * MS), "107,142,131");
	/* lines that match no load: another ts, another size, not a blob's start, no blob */
	assert_int_equal(apply_lines(t, 0x2000, 0x40, 9 * MS, 0), 0);
	assert_int_equal(apply_lines(t, 0x2000, 0x41, 10 * MS, 0), 0);
	assert_int_equal(apply_lines(t, 0x2008, 0x40, 10 * MS, 0), 0);
	assert_int_equal(apply_lines(t, 0x9000, 0x40, 10 * MS, 0), 0);
	codetab_stats(t, &st);
	assert_int_equal(st.lines_orphan, 4);
	assert_string_equal(lines_at(t, 0x2014, 11 * MS), "107,142,131");
	/* lines never attach to a stub */
	assert_int_equal(codetab_add(t, CODEBLOB_DYNAMIC, 0x8000, 0x40, 10 * MS, "stub"), 1);
	assert_int_equal(apply_lines(t, 0x8000, 0x40, 10 * MS, 0), 0);
	assert_null(codetab_lookup(t, 0x8004, 11 * MS)->lines);
	codetab_free(t);
}

/* The code cache reuses 0x2000: each load keeps its own lines, late ones included. */
static void test_lines_at_a_reused_address_stay_with_their_load(void **state)
{
	struct codetab *t = codetab_new(NULL);
	struct fgp_pc_in pcs[16];
	const struct codeblob *b;
	struct codetab_stats st;
	uint32_t n = 0;
	uint16_t flags = 1;

	(void)state;
	load_inline(t, 0x2000, 0x40, 10 * MS, "Old::gen", 0);
	assert_int_equal(apply_lines(t, 0x2000, 0x40, 10 * MS, 0), 0);
	load_inline(t, 0x2000, 0x40, 20 * MS, "New::gen", 0);
	/* the new load starts without lines: the old load's are not its */
	assert_string_equal(lines_at(t, 0x2014, 21 * MS), "");
	assert_string_equal(lines_at(t, 0x2014, 11 * MS), "7,42,31");
	/* the new load's lines arrive, then a late resend of the old one's (a replay) */
	assert_int_equal(apply_lines(t, 0x2000, 0x40, 20 * MS, 1000), 0);
	assert_int_equal(apply_lines(t, 0x2000, 0x40, 10 * MS, 500), 0);
	assert_string_equal(lines_at(t, 0x2014, 21 * MS), "1007,1042,1031");
	assert_string_equal(lines_at(t, 0x2014, 11 * MS), "507,542,531");
	codetab_stats(t, &st);
	assert_int_equal(st.lines, 3);
	assert_int_equal(st.lines_orphan, 0);
	/* export gives what came in (for the watch daemon's history) */
	b = codetab_lookup(t, 0x2014, 21 * MS);
	assert_int_equal(codetab_lines_export(b, pcs, 2, &n, &flags), -ENOSPC);
	assert_int_equal(n, 7);
	assert_int_equal(codetab_lines_export(b, pcs, 16, &n, &flags), 0);
	assert_int_equal(flags, 0);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(pcs[i].pc_off, line_pcs[i].pc_off);
		assert_int_equal(pcs[i].depth, line_pcs[i].depth);
		for (unsigned d = 0; d < pcs[i].depth; d++)
			assert_int_equal(pcs[i].chain[d], line_pcs[i].chain[d] + 1000);
	}
	/* pruning the old load frees its lines (ASan checks), the new one keeps its own */
	assert_int_equal(codetab_prune(t, 30 * MS), 1);
	assert_string_equal(lines_at(t, 0x2014, 21 * MS), "1007,1042,1031");
	assert_int_equal(
		codetab_lines_export(codetab_lookup(t, 0x2000, 21 * MS), pcs, 16, &n, &flags), 0);
	codetab_free(t);
}

/*
 * Facts and lines usually follow their load at once (found without a search); when they do not
 * (the load ended, went to history only, or was freed), they go where a search says.
 */
static void test_frames_and_lines_follow_a_load_that_ended_or_went(void **state)
{
	struct codetab *t = codetab_new(NULL);
	struct codetab_stats st;

	(void)state;
	/* live B, then a late older load A at the same address: A is history only */
	load_inline(t, 0x2000, 0x40, 20 * MS, "B::b", 0);
	load_inline(t, 0x2000, 0x40, 10 * MS, "A::a", 0);
	assert_int_equal(apply_frame(t, 0x2000, 48), 0);
	assert_non_null(codetab_lookup(t, 0x2010, 21 * MS)->frame); /* B's */
	assert_null(codetab_lookup(t, 0x2010, 11 * MS)->frame);	    /* not A's */
	assert_int_equal(apply_lines(t, 0x2000, 0x40, 10 * MS, 0), 0);
	assert_string_equal(lines_at(t, 0x2014, 11 * MS), "7,42,31");
	assert_string_equal(lines_at(t, 0x2014, 21 * MS), "");
	/* C loaded and unloaded: its facts come too late, its lines still find it */
	load_inline(t, 0x3000, 0x40, 30 * MS, "C::c", 0);
	assert_int_equal(codetab_unload(t, 0x3000, 35 * MS), 1);
	assert_int_equal(apply_frame(t, 0x3000, 48), 0);
	assert_int_equal(apply_lines(t, 0x3000, 0x40, 30 * MS, 0), 0);
	assert_string_equal(lines_at(t, 0x3014, 31 * MS), "7,42,31");
	codetab_stats(t, &st);
	assert_int_equal(st.frames, 1);
	assert_int_equal(st.frames_orphan, 1);
	/* pruned with history: what comes for it then is orphaned (ASan: no use after free) */
	assert_true(codetab_prune(t, 40 * MS) >= 1);
	assert_int_equal(apply_frame(t, 0x3000, 48), 0);
	assert_int_equal(apply_lines(t, 0x3000, 0x40, 30 * MS, 0), 0);
	codetab_stats(t, &st);
	assert_int_equal(st.frames_orphan, 2);
	assert_int_equal(st.lines_orphan, 1);
	codetab_free(t);
}

/* Tables on demand: live code announced again (FGP_REC_AGAIN) gets its tables, keeps its time. */
static void test_code_announced_again_takes_its_tables_and_keeps_its_load_time(void **state)
{
	struct codetab *t = codetab_new(NULL);
	const struct codeblob *b;
	struct codetab_stats st;
	const char *names[8];

	(void)state;
	/* Names only, as an agent sends while nobody profiles. */
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, 0x2000, 0x40, 10 * MS, "Hot::loop"), 1);
	b = codetab_lookup(t, 0x2014, 11 * MS);
	assert_non_null(b);
	assert_int_equal(codetab_inline_chain(b, 0x2014, names, 8), 0); /* no inline table */
	/* Announced again with its tables at 50 ms: the same blob, loaded at 10 ms. */
	load_inline(t, 0x2000, 0x40, 50 * MS, "Hot::loop", FGP_REC_AGAIN);
	codetab_stats(t, &st);
	assert_int_equal(st.refreshed, 1);
	assert_int_equal(st.live, 1);
	assert_int_equal(st.blobs, 1);
	b = codetab_lookup(t, 0x2014, 11 * MS); /* a sample taken before the tables came */
	assert_non_null(b);
	assert_int_equal(b->load_ts, 10 * MS);
	assert_int_equal(codetab_inline_chain(b, 0x2014, names, 8), 3);
	assert_string_equal(names[0], "Math::abs");
	/* Its lines are keyed by the load that announced it again. */
	assert_int_equal(apply_lines(t, 0x2000, 0x40, 50 * MS, 0), 0);
	assert_string_equal(lines_at(t, 0x2014, 11 * MS), "7,42,31");
	codetab_stats(t, &st);
	assert_int_equal(st.lines, 1);
	/* Another name, or a load not flagged again, is new code at a reused address. */
	load_inline(t, 0x2000, 0x40, 60 * MS, "Hot::other", FGP_REC_AGAIN);
	assert_string_equal(name_at(t, 0x2014, 61 * MS), "Hot::other");
	assert_string_equal(name_at(t, 0x2014, 59 * MS), "Hot::loop");
	load_inline(t, 0x2000, 0x40, 70 * MS, "Hot::other", 0);
	codetab_stats(t, &st);
	assert_int_equal(st.refreshed, 1);
	assert_int_equal(st.blobs, 3);
	b = codetab_lookup(t, 0x2014, 65 * MS);
	assert_int_equal(b->load_ts, 60 * MS);
	codetab_free(t);
}

/*
 * Pruning skips its scan while nothing ended before its cut: every way a blob ends (unload,
 * overlap, history-only load, replay) must still make it prunable, also after a prune that
 * kept it.
 */
static void test_prune_finds_every_ended_blob(void **state)
{
	struct codetab *t = codetab_new(NULL);
	struct codetab_stats st;

	(void)state;
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, 0x1000, 0x100, 10 * MS, "A::a"), 1);
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, 0x2000, 0x100, 10 * MS, "B::b"), 1);
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, 0x3000, 0x100, 10 * MS, "C::c"), 1);
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, 0x4000, 0x100, 10 * MS, "D::d"), 1);
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, 0x5000, 0x100, 10 * MS, "G::g"), 1);
	assert_int_equal(codetab_prune(t, 1000 * MS), 0); /* all live */
	/* each way to end, alone, then a prune just past it */
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, 0x1080, 0x100, 20 * MS, "E::e"), 1);
	assert_int_equal(codetab_prune(t, 21 * MS), 1); /* A::a, ended by an overlapping load */
	/* history only: older than the live blob it overlaps, ended where that began (10 ms) */
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, 0x3000, 0x100, 5 * MS, "F::f"), 0);
	assert_int_equal(codetab_prune(t, 11 * MS), 1); /* F::f */
	assert_int_equal(codetab_unload(t, 0x2000, 30 * MS), 1);
	assert_int_equal(codetab_prune(t, 31 * MS), 1); /* B::b */
	/* a prune that keeps what ended later must not forget it */
	assert_int_equal(codetab_unload(t, 0x3000, 40 * MS), 1);
	assert_int_equal(codetab_unload(t, 0x4000, 50 * MS), 1);
	assert_int_equal(codetab_prune(t, 45 * MS), 1); /* C::c */
	assert_int_equal(codetab_prune(t, 45 * MS), 0);
	assert_int_equal(codetab_prune(t, 55 * MS), 1); /* D::d */
	/* gone from a replay: ended at the replay's start */
	snapshot(t, FGP_SNAPSHOT_BEGIN, 60 * MS);
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, 0x1080, 0x100, 20 * MS, "E::e"), 0);
	snapshot(t, FGP_SNAPSHOT_END, 61 * MS);
	assert_int_equal(codetab_prune(t, 60 * MS), 0);
	assert_int_equal(codetab_prune(t, 61 * MS), 1); /* G::g */
	codetab_stats(t, &st);
	assert_int_equal(st.blobs, 1);
	assert_int_equal(st.live, 1);
	codetab_free(t);
}

/*
 * A load named by references the caller holds (a connection's NAMEs) takes references of its
 * own: the names outlive the caller's, and go with the last blob that uses them.
 */
static void test_interned_names_are_shared_and_counted(void **state)
{
	struct codetab *t = codetab_new(NULL);
	static const uint16_t chain[] = { 1, 0 };
	const struct fgp_pc_in pcs[] = { { 0x10, 2, chain } };
	struct fgp_code_load_ids_in in = { .addr = 0x1000,
					   .size = 0x100,
					   .ts = 10 * MS,
					   .name_id = 1,
					   .n_methods = 2,
					   .n_pcs = 1,
					   .pcs = pcs };
	const uint32_t ids[] = { 1, 2 };
	struct codetab_stats st0, st;
	const char *outer, *inner, *names[4];
	struct fgp_str methods[2];
	struct fgp_record rec;
	int n;

	(void)state;
	in.method_ids = ids;
	/* the live set's array, sized by a blob that comes and goes, is not what is counted */
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, 0x9000, 0x100, 1 * MS, "x.Y::z"), 1);
	assert_int_equal(codetab_unload(t, 0x9000, 2 * MS), 1);
	assert_int_equal(codetab_prune(t, 3 * MS), 1);
	codetab_stats(t, &st0);
	outer = codetab_name_get(t, "a.B::outer", 10);
	inner = codetab_name_get(t, "a.B::inner", 10);
	assert_non_null(outer);
	assert_non_null(inner);
	assert_ptr_equal(codetab_name_get(t, "a.B::outer", 10), outer); /* one copy */
	codetab_name_put(t, outer);
	assert_int_equal(codetab_name_len(inner), 10);
	fgp_encode_msg_header(buf, sizeof(buf));
	n = fgp_encode_code_load_ids(buf + 8, sizeof(buf) - 8, &in);
	assert_true(n > 0);
	decode_one(8 + (size_t)n, &rec);
	/* resolved as the collector resolves ids */
	methods[0] = (struct fgp_str){ outer, 10 };
	methods[1] = (struct fgp_str){ inner, 10 };
	rec.u.load.name = methods[0];
	rec.u.load.methods = methods;
	rec.type = FGP_CODE_LOAD;
	assert_int_equal(codetab_apply_interned(t, &rec), 1);
	/* the caller lets its references go: the blob keeps the names */
	codetab_name_put(t, outer);
	codetab_name_put(t, inner);
	assert_string_equal(name_at(t, 0x1010, 20 * MS), "a.B::outer");
	assert_int_equal(codetab_inline_chain(codetab_lookup(t, 0x1008, 20 * MS), 0x1008, names, 4),
			 2);
	assert_string_equal(names[0], "a.B::inner");
	assert_string_equal(names[1], "a.B::outer");
	/* the same text named by a plain load is the same name */
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, 0x2000, 0x100, 10 * MS, "a.B::outer"),
			 1);
	assert_ptr_equal(codetab_lookup_live(t, 0x2000)->name, outer);
	assert_int_equal(codetab_unload(t, 0x1000, 30 * MS), 1);
	assert_int_equal(codetab_unload(t, 0x2000, 30 * MS), 1);
	assert_int_equal(codetab_prune(t, 40 * MS), 2);
	codetab_stats(t, &st);
	assert_int_equal(st.bytes, st0.bytes); /* every name freed with the last reference */
	codetab_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup_respects_load_and_unload_times),
		cmocka_unit_test(test_frame_facts_attach_to_the_live_blob_at_their_address),
		cmocka_unit_test(test_address_reuse_keeps_each_generation),
		cmocka_unit_test(test_overlapping_load_ends_the_old_blob),
		cmocka_unit_test(test_older_overlapping_load_is_history_only),
		cmocka_unit_test(test_grace_window_accepts_a_late_callback),
		cmocka_unit_test(test_default_grace_covers_a_slow_service_thread),
		cmocka_unit_test(test_grace_never_overrides_a_live_occupant),
		cmocka_unit_test(test_inline_chain_follows_hotspot_ranges),
		cmocka_unit_test(test_names_are_interned_and_freed_with_history),
		cmocka_unit_test(test_replay_merges_and_ends_what_vanished),
		cmocka_unit_test(test_history_is_in_time_order),
		cmocka_unit_test(test_memory_cap_prunes_history_then_refuses),
		cmocka_unit_test(test_invalid_blobs_are_counted),
		cmocka_unit_test(test_many_blobs_lookup_matches_linear_scan),
		cmocka_unit_test(test_remembered_lookups_answer_as_a_search_does),
		cmocka_unit_test(test_lines_attach_to_their_load_and_follow_hotspot_ranges),
		cmocka_unit_test(test_lines_at_a_reused_address_stay_with_their_load),
		cmocka_unit_test(test_names_through_one_buffer_stay_right),
		cmocka_unit_test(test_frames_and_lines_follow_a_load_that_ended_or_went),
		cmocka_unit_test(
			test_code_announced_again_takes_its_tables_and_keeps_its_load_time),
		cmocka_unit_test(test_prune_finds_every_ended_blob),
		cmocka_unit_test(test_interned_names_are_shared_and_counted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
