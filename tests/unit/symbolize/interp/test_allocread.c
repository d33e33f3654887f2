// SPDX-License-Identifier: MIT
/*
 * test_allocread.c - the collector's reader of an agent's ring of allocation samples' stack
 * copies (allocread.h) over a ring laid out in this process's memory as shared/allocring.h says
 * and read through a fake vmmem: samples handed on whole and in order; samples lapped before
 * the read counted lost; a slot rewritten during its read (the fake writer strikes between the
 * two reads) counted torn and lost, never handed on; a slot still being written waited for, then
 * given up after ALLOCREAD_STUCK_POLLS polls; a head or a count that lies refused; a slot whose
 * length passes the copy's room never handed on; a batch of samples read with a few reads and
 * only the stack bytes their heads announce. What lapped samples weighed comes from their
 * slots' sums, and busy ones' from the head's, exactly, those before the open left out; sums or
 * weights that lie are refused, and a slot being written at the open leaves its lost unweighed.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "allocread.h"

#define SLOTS 16u
#define COPY 1024u
/* what a poll reads of the head: claimed and the busy counts */
#define COUNTS (sizeof(struct allocring_head) - offsetof(struct allocring_head, claimed))

static unsigned char *ring;
static uint64_t ring_bytes;
static int strike_at; /* the fake readv's call that rewrites slot strike_n first (0: never) */
static int calls;
static uint64_t strike_n;
static uint64_t read_bytes; /* by the fake readv */

static struct allocring_head *head(void)
{
	return (struct allocring_head *)(void *)ring;
}

static struct allocring_slot *slot(uint64_t n)
{
	return (struct allocring_slot *)(void *)(ring + allocring_slot_off(head(), n));
}

/* Sample n written whole as the agent writes it: size n, len bytes of words n ^ w. */
static void put(uint64_t n, uint32_t len)
{
	struct allocring_slot *s = slot(n);
	uint64_t *w = (uint64_t *)(void *)(s + 1);

	memset(s, 0, sizeof(*s));
	s->size = n;
	s->len = len;
	s->sp = 0x7000;
	for (uint32_t i = 0; i < len / 8; i++)
		w[i] = n ^ i;
	s->seq = allocring_done_seq(n);
	if (head()->claimed < n + 1)
		head()->claimed = n + 1;
}

static ssize_t fake_readv(void *ctx, pid_t pid, const struct iovec *l, unsigned long nl,
			  const struct iovec *r, unsigned long nr)
{
	ssize_t got = 0;

	(void)ctx;
	(void)pid;
	assert_int_equal(nl, nr);
	for (unsigned long i = 0; i < nr; i++) {
		assert_true(l[i].iov_len == r[i].iov_len);
		assert_true((unsigned char *)r[i].iov_base >= ring &&
			    (unsigned char *)r[i].iov_base + r[i].iov_len <= ring + ring_bytes);
		memcpy(l[i].iov_base, r[i].iov_base, l[i].iov_len);
		got += (ssize_t)l[i].iov_len;
	}
	read_bytes += (uint64_t)got;
	if (++calls == strike_at) /* a writer takes the slot over after this read */
		slot(strike_n)->seq = allocring_done_seq(strike_n + SLOTS) - 1;
	return got;
}

static const struct vmmem_ops mem = { fake_readv, NULL };

static void make(void)
{
	ring_bytes = allocring_bytes(SLOTS, COPY);
	ring = calloc(1, ring_bytes);
	assert_non_null(ring);
	*head() = (struct allocring_head){ .magic = ALLOCRING_MAGIC,
					   .slots = SLOTS,
					   .slot_size = (uint32_t)(allocring_bytes(1, COPY) -
								   sizeof(struct allocring_head)),
					   .copy_max = COPY,
					   .head_size = sizeof(struct allocring_head) };
	strike_at = 0;
	calls = 0;
	read_bytes = 0;
}

struct got {
	uint64_t sizes[64];
	unsigned n;
	bool bad_words;
};

static void each(void *arg, const struct allocring_slot *s, const uint8_t *stack)
{
	struct got *g = arg;
	uint64_t w;

	for (uint32_t i = 0; i < s->len / 8; i++) {
		memcpy(&w, stack + 8 * i, 8);
		if (w != (s->size ^ i))
			g->bad_words = true;
	}
	if (g->n < 64)
		g->sizes[g->n++] = s->size;
}

static int open_ring(struct allocread *r)
{
	return allocread_open(r, &mem, 1, (uint64_t)(uintptr_t)ring, ring_bytes);
}

static void test_samples_are_read_whole_in_order(void **state)
{
	struct allocread r;
	struct got g = { 0 };

	(void)state;
	make();
	put(0, 64); /* before the open: not this reader's */
	assert_int_equal(open_ring(&r), 0);
	put(1, 8);
	put(2, COPY);
	put(3, 0);
	assert_int_equal(allocread_poll(&r, &mem, 100, each, &g), 3);
	assert_int_equal(g.n, 3);
	assert_true(g.sizes[0] == 1 && g.sizes[1] == 2 && g.sizes[2] == 3);
	assert_false(g.bad_words);
	assert_int_equal(allocread_poll(&r, &mem, 100, each, &g), 0);
	put(4, 16);
	put(5, 16);
	assert_int_equal(allocread_poll(&r, &mem, 1, each, &g), 1); /* max 1: 5 waits */
	assert_int_equal(allocread_poll(&r, &mem, 100, each, &g), 1);
	assert_true(r.st.whole == 5 && r.st.lost == 0);
	allocread_close(&r);
	free(ring);
}

static void test_lapped_and_torn_samples_are_lost(void **state)
{
	struct allocread r;
	struct got g = { 0 };

	(void)state;
	make();
	assert_int_equal(open_ring(&r), 0);
	for (uint64_t n = 0; n < SLOTS + 5; n++)
		put(n, 32);
	assert_int_equal(allocread_poll(&r, &mem, 100, each, &g), (int)SLOTS);
	assert_true(r.st.lost == 5 && r.st.whole == SLOTS);
	assert_true(g.sizes[0] == 5);
	/* sample SLOTS + 5 rewritten between the slot's read and its seq's */
	put(SLOTS + 5, 32);
	strike_at = calls + 2; /* claimed, then the slot: the writer strikes after it */
	strike_n = SLOTS + 5;
	g.n = 0;
	assert_int_equal(allocread_poll(&r, &mem, 100, each, &g), 0);
	assert_int_equal(g.n, 0);
	assert_true(r.st.torn == 1 && r.st.lost == 6);
	assert_false(g.bad_words);
	allocread_close(&r);
	free(ring);
}

static void test_a_slot_being_written_is_waited_for(void **state)
{
	struct allocread r;
	struct got g = { 0 };

	(void)state;
	make();
	assert_int_equal(open_ring(&r), 0);
	put(0, 8);
	slot(0)->seq = allocring_done_seq(0) - 1; /* its writer is at work */
	assert_int_equal(allocread_poll(&r, &mem, 100, each, &g), 0);
	assert_true(r.st.lost == 0 && r.next == 0);
	slot(0)->seq = allocring_done_seq(0);
	assert_int_equal(allocread_poll(&r, &mem, 100, each, &g), 1);
	/* one that stays odd is given up */
	put(1, 8);
	slot(1)->seq = allocring_done_seq(1) - 1;
	for (unsigned i = 1; i < ALLOCREAD_STUCK_POLLS; i++)
		assert_int_equal(allocread_poll(&r, &mem, 100, each, &g), 0);
	assert_true(r.st.lost == 0);
	assert_int_equal(allocread_poll(&r, &mem, 100, each, &g), 0);
	assert_true(r.st.lost == 1 && r.next == 2);
	allocread_close(&r);
	free(ring);
}

static void test_what_lies_is_refused(void **state)
{
	struct allocread r;
	struct got g = { 0 };

	(void)state;
	make();
	head()->slot_size += 8;
	assert_int_equal(open_ring(&r), -EPROTO);
	head()->slot_size -= 8;
	assert_int_equal(allocread_open(&r, &mem, 1, (uint64_t)(uintptr_t)ring, ring_bytes - 8),
			 -EPROTO);
	assert_int_equal(allocread_open(&r, &mem, 1, (uint64_t)(uintptr_t)ring, 1ull << 40),
			 -EPROTO);
	assert_int_equal(open_ring(&r), 0);
	put(0, 8);
	slot(0)->len = COPY + 8; /* more than the slot holds */
	assert_int_equal(allocread_poll(&r, &mem, 100, each, &g), 0);
	assert_true(g.n == 0 && r.st.lost == 1);
	head()->claimed = 0; /* the count went back */
	assert_int_equal(allocread_poll(&r, &mem, 100, each, &g), -EPROTO);
	allocread_close(&r);
	free(ring);
}

/* Many samples cost a few reads of the process, and only the stack bytes their heads announce. */
static void test_batches_read_only_what_slots_hold(void **state)
{
	struct allocread r;
	struct got g = { 0 };
	uint64_t want;
	int before;

	(void)state;
	make();
	assert_int_equal(open_ring(&r), 0);
	for (uint64_t n = 0; n < SLOTS; n++)
		put(n, 16);
	before = calls;
	read_bytes = 0;
	assert_int_equal(allocread_poll(&r, &mem, 100, each, &g), (int)SLOTS);
	assert_false(g.bad_words);
	/* the counts, then one batch: heads, then stacks and seqs */
	assert_int_equal(calls - before, 3);
	want = COUNTS + SLOTS * (sizeof(struct allocring_slot) + 16 + sizeof(uint64_t));
	assert_true(read_bytes == want);
	/* the open: the head, then every slot's head (one batch) */
	assert_true(r.st.reads == 5 && r.st.bytes == want + sizeof(struct allocring_head) +
							     SLOTS * sizeof(struct allocring_slot));
	/* a slot being written cuts the batch there: those before it are handed on */
	for (uint64_t n = SLOTS; n < SLOTS + 4; n++)
		put(n, 8);
	slot(SLOTS + 2)->seq = allocring_done_seq(SLOTS + 2) - 1;
	g.n = 0;
	assert_int_equal(allocread_poll(&r, &mem, 100, each, &g), 2);
	assert_true(g.n == 2 && g.sizes[0] == SLOTS && g.sizes[1] == SLOTS + 1);
	assert_true(r.next == SLOTS + 2 && r.st.lost == 0);
	slot(SLOTS + 2)->seq = allocring_done_seq(SLOTS + 2);
	assert_int_equal(allocread_poll(&r, &mem, 100, each, &g), 2);
	assert_true(g.sizes[2] == SLOTS + 2 && g.sizes[3] == SLOTS + 3);
	allocread_close(&r);
	free(ring);
}

/* What the agent weighs a sample of size bytes at interval: bytes and 1/256 objects. */
static void weigh(uint64_t size, uint64_t interval, uint64_t *wb, uint64_t *wo)
{
	double p = -expm1(-(double)size / (double)interval);

	*wb = (uint64_t)llround((double)size / p);
	*wo = (uint64_t)llround(ALLOCRING_OBJ_SCALE / p);
}

/*
 * Sample n of size bytes at interval written as the agent writes it, its weight added to its
 * slot's sums: with gap 0 weighed by the interval, else a gap weight (gap bytes, flagged); its
 * objects 1 / p either way. Its bytes weight returned.
 */
static uint64_t put_weighed(uint64_t n, uint64_t size, uint64_t interval, uint64_t gap)
{
	struct allocring_slot *s = slot(n);
	uint64_t wb, wo, sb = s->sum_bytes, so = s->sum_objs;

	weigh(size, interval, &wb, &wo);
	put(n, 8);
	if (gap) {
		s->flags = ALLOCRING_F_GAP;
		wb = gap;
	}
	s->size = size;
	s->interval = interval;
	s->w_bytes = wb;
	s->w_objs = wo;
	s->sum_bytes = sb + wb;
	s->sum_objs = so + wo;
	return wb;
}

static uint64_t put_w(uint64_t n, uint64_t size, uint64_t interval)
{
	return put_weighed(n, size, interval, 0);
}

struct weights {
	uint64_t bytes, objs;
};

static void each_w(void *arg, const struct allocring_slot *s, const uint8_t *stack)
{
	struct weights *w = arg;

	(void)stack;
	w->bytes += s->w_bytes;
	w->objs += s->w_objs;
}

/* Samples lapped before they were read weigh in from their slots' sums, to the byte; those
 * written before the open do not. */
static void test_lapped_samples_weigh_in_from_the_sums(void **state)
{
	struct allocread r;
	struct weights got = { 0 };
	uint64_t wrote = 0, wrote_objs = 0, wb, wo, n;

	(void)state;
	make();
	for (n = 0; n < SLOTS + 3; n++) /* an earlier reader's: not this one's */
		(void)put_w(n, 100 + n, 4096);
	assert_int_equal(open_ring(&r), 0);
	r.since_ns = 0;
	/* three laps and 5 more, sizes and intervals mixed: all but the last lap lost */
	for (; n < 4 * SLOTS + 8; n++) {
		uint64_t size = 16 + 977 * (n % 7), iv = n % 3 ? 65536 : 524288 + 4096 * n;

		wrote += put_w(n, size, iv);
		weigh(size, iv, &wb, &wo);
		wrote_objs += wo;
	}
	assert_int_equal(allocread_poll(&r, &mem, 100, each_w, &got), (int)SLOTS);
	assert_true(r.st.lost == 3 * SLOTS + 5 - SLOTS);
	assert_true(r.st.lost_bytes + got.bytes == wrote);
	assert_true(r.st.lost_objs + got.objs == wrote_objs);
	assert_true(r.st.unweighed == 0 && r.st.refused == 0);
	/* another lap, read in time: nothing more lost */
	for (uint64_t m = n; n < m + SLOTS; n++)
		wrote += put_w(n, 64, 65536);
	assert_int_equal(allocread_poll(&r, &mem, 100, each_w, &got), (int)SLOTS);
	assert_true(r.st.lost_bytes + got.bytes == wrote);
	allocread_close(&r);
	free(ring);
}

/* A sample dropped for a busy slot weighs in from the head's sums. */
static void test_busy_samples_weigh_in_from_the_head(void **state)
{
	struct allocread r;
	struct weights got = { 0 };

	(void)state;
	make();
	head()->busy = 3;
	head()->busy_bytes = 1000; /* before the open */
	assert_int_equal(open_ring(&r), 0);
	(void)put_w(0, 64, 65536);
	/* samples 1 and 2 dropped: their slots were busy (never written) */
	head()->claimed = 3;
	head()->busy = 5;
	head()->busy_bytes = 1000 + 2 * 65568;
	head()->busy_objs = 2 * 262144;
	for (unsigned i = 0; i < ALLOCREAD_STUCK_POLLS; i++)
		(void)allocread_poll(&r, &mem, 100, each_w, &got);
	assert_true(r.st.whole == 1 && r.st.lost == 2);
	assert_true(r.st.lost_bytes == 2 * 65568 && r.st.lost_objs == 2 * 262144);
	/* the head says more than two samples weigh: refused */
	head()->busy = 6;
	head()->busy_bytes += ALLOCRING_W_MAX + 1;
	assert_int_equal(allocread_poll(&r, &mem, 100, each_w, &got), 0);
	assert_true(r.st.lost_bytes == 2 * 65568 && r.st.refused == 1 && r.st.unweighed == 1);
	allocread_close(&r);
	free(ring);
}

/* Sums or weights that lie are refused, their lost counted unweighed; a slot being written at
 * the open has its lost unweighed; lost found at a sample before since_ns is left out. */
static void test_sums_that_lie_are_refused(void **state)
{
	struct allocread r;
	struct weights got = { 0 };
	uint64_t n, wb;

	(void)state;
	make();
	slot(1)->seq = 1; /* sample 1 being written at the open: its slot's base is not known */
	head()->claimed = 2;
	assert_int_equal(open_ring(&r), 0);
	r.since_ns = 0;
	for (n = 2; n < 3 * SLOTS; n++)
		(void)put_w(n, 64, 65536);
	/* samples 2..31 lapped: two a slot, one in slots 0 and 1 */
	slot(2 * SLOTS + 2)->sum_bytes += 3 * ALLOCRING_W_MAX; /* more than two can weigh */
	slot(2 * SLOTS + 3)->w_bytes += 1000; /* its own weight not what its size gives */
	assert_int_equal(allocread_poll(&r, &mem, 100, each_w, &got), (int)SLOTS);
	assert_int_equal(r.st.lost, 2 * SLOTS - 2);
	assert_int_equal(r.st.refused, 2);
	/* slots 2 and 3 refused (two lost each), slot 1 not known (one lost) */
	assert_int_equal(r.st.unweighed, 5);
	assert_true(r.st.lost_bytes == (2 * SLOTS - 2 - 5) * 65568ull);
	/* a lap found at a sample before since_ns: left out */
	r.since_ns = 1;
	for (; n < 5 * SLOTS; n++)
		(void)put_w(n, 64, 65536); /* their ts is 0 */
	wb = r.st.lost_bytes;
	assert_int_equal(allocread_poll(&r, &mem, 100, each_w, &got), (int)SLOTS);
	assert_true(r.st.lost_bytes == wb && r.st.lost == 3 * SLOTS - 2);
	allocread_close(&r);
	free(ring);
}

/* Sample n as the agent writes a gap weight (gap > 0). */
static uint64_t put_gap(uint64_t n, uint64_t size, uint64_t interval, uint64_t gap)
{
	return put_weighed(n, size, interval, gap);
}

/* Sample n's gap weight made w, its slot's sums with it. */
static void relie(uint64_t n, uint64_t w)
{
	struct allocring_slot *s = slot(n);

	s->sum_bytes += w - s->w_bytes;
	s->w_bytes = w;
}

/* Lapped samples with gap weights weigh in from the sums to the byte; a gap weight below its
 * object, past its cap, or a slot flag not known, is refused. */
static void test_gap_weights_are_checked_by_their_bounds(void **state)
{
	struct allocread r;
	struct weights got = { 0 };
	uint64_t wrote = 0, n;

	(void)state;
	make();
	assert_int_equal(open_ring(&r), 0);
	r.since_ns = 0;
	for (n = 0; n < 3 * SLOTS; n++)
		wrote += n % 2 ? put_gap(n, 64, 65536, 64 + 1000 * n) : put_w(n, 64, 65536);
	assert_int_equal(allocread_poll(&r, &mem, 100, each_w, &got), (int)SLOTS);
	assert_true(r.st.lost_bytes + got.bytes == wrote);
	assert_true(r.st.refused == 0 && r.st.unweighed == 0);
	/* three slots that lie, lapped once each */
	for (; n < 5 * SLOTS; n++)
		(void)put_gap(n, 64, 65536, 5000);
	/* their sums agree with their weights: only the weights' bounds refuse them */
	relie(4 * SLOTS + 1, 63);					   /* below its object */
	relie(4 * SLOTS + 2, 64 + ALLOCRING_GAP_INTERVALS * 65536ull + 1); /* past the cap */
	slot(4 * SLOTS + 3)->flags |= 2; /* a flag this reader does not know */
	got = (struct weights){ 0 };
	assert_int_equal(allocread_poll(&r, &mem, 100, each_w, &got), (int)SLOTS);
	assert_int_equal(r.st.refused, 3);
	assert_int_equal(r.st.unweighed, 3);
	allocread_close(&r);
	free(ring);
}

/* A poll that finds nothing new reads the head's counts, once, and nothing else. */
static void test_an_empty_poll_reads_only_the_counts(void **state)
{
	struct allocread r;
	struct got g = { 0 };

	(void)state;
	make();
	put(0, 64);
	assert_int_equal(open_ring(&r), 0);
	for (int i = 0; i < 3; i++) {
		uint64_t reads = r.st.reads;

		read_bytes = 0;
		assert_int_equal(allocread_poll(&r, &mem, 64, each, &g), 0);
		assert_int_equal(r.st.reads - reads, 1);
		assert_int_equal(read_bytes, COUNTS);
	}
	put(1, 64);
	slot(1)->interval = 4096;
	assert_int_equal(allocread_poll(&r, &mem, 64, each, &g), 1);
	assert_int_equal(r.interval, 4096);
	allocread_close(&r);
	free(ring);
}

/* The wait before a ring's next poll: longer while polls take little, never past half a ring's
 * filling time at ALLOCREAD_RATE_MAX, back to the shortest once a poll takes a quarter. */
static void test_quiet_rings_wait_longer_but_not_past_half_a_ring(void **state)
{
	const uint64_t big = 64ull << 20; /* 128 slots of 64 MiB: seconds at 2 GiB/s */
	int w = 0, want[] = { 10, 20, 40, 80, 160, 200, 200 };

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		w = allocread_pace(w, 0, 256, big);
		assert_int_equal(w, want[i]);
	}
	assert_int_equal(allocread_pace(w, 31, 256, big), 200); /* under an eighth */
	assert_int_equal(allocread_pace(80, 40, 256, big), 80); /* between: held */
	assert_int_equal(allocread_pace(w, 65, 256, big), 10);	/* a quarter: back */
	/* no interval said: 20 ms at most */
	assert_int_equal(allocread_pace(20, 0, 256, 0), 20);
	/* 128 slots of 512 KiB fill in 31 ms at 2 GiB/s */
	assert_int_equal(allocread_pace(20, 0, 256, 512u << 10), 31);
	assert_int_equal(allocread_pace(31, 0, 256, 512u << 10), 31);
	/* a ring that fills halfway in under 10 ms: every 10 ms */
	assert_int_equal(allocread_pace(10, 0, 16, 1024), 10);
	/* an interval that lies: 200 ms at most, no overflow */
	assert_int_equal(allocread_pace(160, 0, ALLOCRING_SLOTS_MAX, UINT64_MAX), 200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples_are_read_whole_in_order),
		cmocka_unit_test(test_gap_weights_are_checked_by_their_bounds),
		cmocka_unit_test(test_lapped_and_torn_samples_are_lost),
		cmocka_unit_test(test_a_slot_being_written_is_waited_for),
		cmocka_unit_test(test_what_lies_is_refused),
		cmocka_unit_test(test_batches_read_only_what_slots_hold),
		cmocka_unit_test(test_lapped_samples_weigh_in_from_the_sums),
		cmocka_unit_test(test_busy_samples_weigh_in_from_the_head),
		cmocka_unit_test(test_sums_that_lie_are_refused),
		cmocka_unit_test(test_an_empty_poll_reads_only_the_counts),
		cmocka_unit_test(test_quiet_rings_wait_longer_but_not_past_half_a_ring),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
