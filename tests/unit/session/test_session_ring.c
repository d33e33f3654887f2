// SPDX-License-Identifier: MIT
/*
 * test_session_ring.c - `record --event alloc` over an agent's ring of stack copies
 * (shared/allocring.h) built in this process's own memory, announced in the fake source's
 * VM_LAYOUT: the JVM is this process (its PID, so the session's process_vm_readv reads the
 * ring, the Klass and the Symbol here). Each copy is walked with the vm walker over the code
 * table (a runtime stub, then two compiled methods chained by rbp), cut to its innermost Java
 * frame, named with its Klass's class, weighed by its own interval; lapped copies are counted
 * lost, what they weighed (from the slots' sums) counted under [lost before read] so the total
 * stays whole, and the summary says which path took the stacks. A copy through a method the JVM
 * runs before announcing it (code in executable anonymous memory, as HotSpot's code cache) waits
 * for that method's load, however many copies wait with it, and one whose code never comes is
 * counted as walked without it, its stub never shown as the allocating frame.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#define JVM_PID ((uint32_t)getpid())
#include "session_fakes.h"
#include "session_walk_fakes.h"
#include "allocring.h"
#include "evweigh.h"
#include "session_report.h"
#include "stackagg.h"

#define SLOTS 16u
#define COPY 1024u
#define STUB_PC 0x7f0000000100ull /* a runtime stub the allocation went through */
#define ALLOC_PC 0x7f0000001000ull
#define MAIN_PC 0x7f0000002000ull

static uint64_t ring_words
	[(sizeof(struct allocring_head) + SLOTS * (sizeof(struct allocring_slot) + COPY)) / 8 + 8];
static unsigned char *ring = (unsigned char *)ring_words;
static uint64_t klass[8], symbol[4]; /* Klass::_name at 24; Symbol: _length at 4, _body at 6 */
static uint64_t stack[6];	     /* a thread's stack from its last Java frame's sp */

static void ring_init(void)
{
	struct allocring_head *h = (struct allocring_head *)(void *)ring;

	memset(ring_words, 0, sizeof(ring_words));
	*h = (struct allocring_head){ .magic = ALLOCRING_MAGIC,
				      .slots = SLOTS,
				      .slot_size = (uint32_t)(allocring_bytes(1, COPY) -
							      sizeof(struct allocring_head)),
				      .copy_max = COPY,
				      .head_size = sizeof(*h) };
	/* byte[]'s Klass and Symbol */
	klass[3] = (uint64_t)(uintptr_t)symbol;
	memcpy((char *)symbol + 4, "\002\000[B", 4);
	/* sp: the stub's return address into Hot::alloc; rbp (sp + 16): the saved rbp (sp + 32)
	 * and the return address into Hot::main; there: 0, the end */
	stack[0] = ALLOC_PC + 0x10;
	stack[2] = (uint64_t)(uintptr_t)&stack[4];
	stack[3] = MAIN_PC + 0x20;
}

/* Sample n of size bytes at a mean interval, taken at ts: written whole into its slot. */
static void ring_put(uint64_t n, uint64_t ts, uint64_t size, uint64_t interval)
{
	struct allocring_head *h = (struct allocring_head *)(void *)ring;
	struct allocring_slot *s = (void *)(ring + allocring_slot_off(h, n));
	double p = -expm1(-(double)size / (double)interval);
	uint64_t wb = (uint64_t)llround((double)size / p),
		 wo = (uint64_t)llround(ALLOCRING_OBJ_SCALE / p);

	/* its weight, and the slot's sums of every sample it held, as the agent writes them */
	*s = (struct allocring_slot){ .w_bytes = wb,
				      .w_objs = wo,
				      .sum_bytes = s->sum_bytes + wb,
				      .sum_objs = s->sum_objs + wo,
				      .seq = allocring_done_seq(n),
				      .ts = ts,
				      .size = size,
				      .interval = interval,
				      .klass = (uint64_t)(uintptr_t)klass,
				      .sp = (uint64_t)(uintptr_t)stack,
				      .fp = (uint64_t)(uintptr_t)&stack[2],
				      .pc = STUB_PC + 8,
				      .tid = (uint32_t)getpid(),
				      .len = sizeof(stack) };
	memcpy(s + 1, stack, sizeof(stack));
	if (n + 1 > h->claimed)
		h->claimed = n + 1;
}

static const char *threads_regex; /* --threads of the next open_alloc (NULL: none) */

static struct session *open_alloc(void)
{
	struct session_opts o = { .target = SESSION_TARGET_ALL,
				  .event = FG_EVENT_ALLOC,
				  .settle_ns = 300 * MS,
				  .merge_threads = true,
				  .threads_regex = threads_regex };
	struct fgp_record rec = { .type = FGP_VM_LAYOUT };
	struct fgp_vm_layout *l = &rec.u.layout;
	uint64_t addr = (uint64_t)(uintptr_t)ring;
	struct session *s = NULL;
	char why[256];

	memset(&fs, 0, sizeof(fs));
	clock_ns = 1000 * MS;
	ring_init();
	if (session_open_seams(&o, &seams, &s, why, sizeof(why)) != 0)
		fail_msg("session_open_seams: %s", why);
	l->caps = FGP_VML_CAP_NAMES | FGP_VML_CAP_ALLOC_RING;
	fgp_vml_set(l, FGP_VML_JDK_MAJOR, 17);
	fgp_vml_set(l, FGP_VML_METHOD_CONSTMETHOD, 8);
	fgp_vml_set(l, FGP_VML_CONSTMETHOD_CONSTANTS, 8);
	fgp_vml_set(l, FGP_VML_CONSTMETHOD_FLAGS, 28);
	fgp_vml_set(l, FGP_VML_CONSTMETHOD_FLAGS_SIZE, 2);
	fgp_vml_set(l, FGP_VML_CONSTMETHOD_HAS_LINES, 1);
	fgp_vml_set(l, FGP_VML_CONSTMETHOD_CODE_SIZE, 32);
	fgp_vml_set(l, FGP_VML_CONSTMETHOD_NAME_INDEX, 34);
	fgp_vml_set(l, FGP_VML_CONSTMETHOD_SIGNATURE_INDEX, 36);
	fgp_vml_set(l, FGP_VML_CONSTMETHOD_IDNUM, 38);
	fgp_vml_set(l, FGP_VML_CONSTMETHOD_SIZE, 48);
	fgp_vml_set(l, FGP_VML_CONSTPOOL_HOLDER, 24);
	fgp_vml_set(l, FGP_VML_CONSTPOOL_SIZE, 72);
	fgp_vml_set(l, FGP_VML_KLASS_NAME, 24);
	fgp_vml_set(l, FGP_VML_SYMBOL_LENGTH, 4);
	fgp_vml_set(l, FGP_VML_SYMBOL_BODY, 6);
	fgp_vml_set(l, FGP_VML_ALLOC_RING_LO, (uint32_t)addr);
	fgp_vml_set(l, FGP_VML_ALLOC_RING_HI, (uint32_t)(addr >> 32));
	fgp_vml_set(l, FGP_VML_ALLOC_RING_SIZE, (uint32_t)allocring_bytes(SLOTS, COPY));
	assert_int_equal(codetab_apply(src->tab, &rec), 0);
	assert_int_equal(
		codetab_add(src->tab, CODEBLOB_DYNAMIC, STUB_PC, 0x100, 1 * MS, "_new_array_Java"),
		1);
	assert_int_equal(
		codetab_add(src->tab, CODEBLOB_COMPILED, ALLOC_PC, 0x100, 1 * MS, "Hot::alloc"), 1);
	assert_int_equal(
		codetab_add(src->tab, CODEBLOB_COMPILED, MAIN_PC, 0x100, 1 * MS, "Hot::main"), 1);
	return s;
}

/* The weight of the folded line that ends with ";leaf" (0: none). */
static uint64_t weight_of(const char *text, const char *leaf)
{
	char want[128];
	const char *p;

	snprintf(want, sizeof(want), ";%s ", leaf);
	p = strstr(text, want);
	return p ? strtoull(p + strlen(want), NULL, 10) : 0;
}

static void report_line(void *arg, const char *text)
{
	char *out = arg;

	if (strstr(text, "allocation stacks:"))
		snprintf(out, 1024, "%s", text);
}

static void test_copies_are_walked_named_and_weighed(void **state)
{
	struct session *s = open_alloc();
	struct session_summary sm;
	double want;
	char *text, line[1024] = "";

	(void)state;
	ring_put(0, 900 * MS, 1024, 1024); /* claimed before the ring is opened: not read */
	assert_int_equal(session_step(s, 0), 0);
	for (uint64_t n = 1; n <= 3; n++)
		ring_put(n, 1100 * MS, 1024, 1024);
	ring_put(4, 1100 * MS, 4096, 2048); /* another interval: weighed by its own */
	clock_ns = 2000 * MS;
	assert_int_equal(session_step(s, 0), 0);
	clock_ns = 2100 * MS;
	session_finish(s, 0);
	text = folded(s);
	/* the stub left out; the stack ends at the allocating method, its class the leaf */
	assert_non_null(strstr(text, "Hot::main_[j];Hot::alloc_[j];byte[] "));
	assert_null(strstr(text, "_new_array_Java"));
	want = 3 * 1024.0 * evweigh_inv_p(1024, 1024) + 4096.0 * evweigh_inv_p(4096, 2048);
	assert_true(fabs((double)weight_of(text, "byte[]") - want) <= 4.0);
	free(text);
	session_summary(s, &sm);
	assert_int_equal(sm.ev.ring_jvms, 1);
	assert_int_equal(sm.ev.ring_counted, 4);
	assert_int_equal(sm.ev.counted, 4);
	assert_int_equal(sm.ev.ring_lost, 0);
	assert_int_equal(sm.ev.ring_no_class, 0);
	assert_int_equal(sm.ev.ring_no_java, 0);
	assert_int_equal(sm.ev.intervals[0].interval, 1024);
	assert_int_equal(sm.ev.intervals[0].samples, 3);
	assert_int_equal(sm.ev.intervals[1].interval, 2048);
	assert_int_equal(sm.ev.intervals[1].samples, 1);
	session_report(&sm, report_line, line);
	assert_non_null(strstr(line, "allocation stacks: 4 copied by the agents into their rings "
				     "(1 JVMs) and walked here, 0 taken by the agents with "
				     "GetStackTrace; 0 copies lost"));
	session_close(s);
}

static void test_lapped_copies_are_lost_and_an_unknown_klass_is_said(void **state)
{
	struct session *s = open_alloc();
	struct session_summary sm;
	uint64_t lost;
	double want;
	char *text;

	(void)state;
	assert_int_equal(session_step(s, 0), 0); /* the ring is opened: nothing claimed yet */
	for (uint64_t n = 0; n < SLOTS + 5; n++)
		ring_put(n, 1100 * MS, 1024, 1024); /* the first 5 overwritten before any read */
	klass[3] = 0;				    /* a Klass whose _name reads as nothing */
	clock_ns = 2000 * MS;
	session_finish(s, 0);
	session_summary(s, &sm);
	assert_int_equal(sm.ev.ring_lost, 5);
	assert_int_equal(sm.ev.ring_counted, SLOTS);
	assert_int_equal(sm.ev.ring_no_class, SLOTS);
	text = folded(s);
	assert_non_null(strstr(text, "Hot::alloc_[j];[unknown class] "));
	/* the lapped five weighed in under their own frame, no stack, no class: the total whole */
	want = 1024.0 * evweigh_inv_p(1024, 1024);
	lost = weight_of(text, "[lost before read];[unknown class]");
	assert_true(fabs((double)lost - 5 * want) <= 5.0);
	assert_true(fabs((double)sm.ev.ring_lost_bytes - 5 * want) <= 5.0);
	assert_true(fabs((double)sm.ev.bytes - (SLOTS + 5) * want) <= SLOTS + 5.0);
	assert_true(fabs((double)sm.ev.objects - (SLOTS + 5) * evweigh_inv_p(1024, 1024)) <=
		    SLOTS + 5.0); /* each rounded to a whole object */
	assert_int_equal(sm.ev.ring_unweighed, 0);
	assert_int_equal(sm.ev.ring_refused, 0);
	free(text);
	session_close(s);
}

/* With --threads, what lost copies weighed is left out: their threads are not known. */
static void test_lost_weight_is_left_out_with_threads(void **state)
{
	struct session *s;
	struct session_summary sm;
	char *text;

	(void)state;
	threads_regex = "."; /* every named thread: the whole copies are counted */
	s = open_alloc();
	threads_regex = NULL;
	assert_int_equal(session_step(s, 0), 0);
	for (uint64_t n = 0; n < SLOTS + 5; n++)
		ring_put(n, 1100 * MS, 1024, 1024);
	clock_ns = 2000 * MS;
	session_finish(s, 0);
	session_summary(s, &sm);
	assert_int_equal(sm.ev.ring_lost, 5);
	assert_int_equal(sm.ev.ring_counted, SLOTS);
	assert_int_equal(sm.ev.ring_lost_bytes, 0);
	text = folded(s);
	assert_null(strstr(text, "[lost before read]"));
	assert_true(fabs((double)weight_of(text, "byte[]") -
			 SLOTS * 1024.0 * evweigh_inv_p(1024, 1024)) <= SLOTS);
	free(text);
	session_close(s);
}

static void test_copies_from_before_the_start_are_left_out(void **state)
{
	struct session *s = open_alloc();
	struct session_summary sm;

	(void)state;
	assert_int_equal(session_step(s, 0), 0);
	ring_put(0, 500 * MS, 1024, 1024); /* an earlier recording's, read late */
	ring_put(1, 1100 * MS, 1024, 1024);
	clock_ns = 2000 * MS;
	session_finish(s, 0);
	session_summary(s, &sm);
	assert_int_equal(sm.ev.ring_early, 1);
	assert_int_equal(sm.ev.ring_counted, 1);
	session_close(s);
}

/* Reads of the ring by steps of 1 ms from clock_ns for ms milliseconds. */
static uint64_t reads_over(struct session *s, uint64_t ms)
{
	struct session_summary sm;
	uint64_t before;

	session_summary(s, &sm);
	before = sm.ev.ring_reads;
	for (uint64_t i = 0; i < ms; i++) {
		clock_ns += MS;
		assert_int_equal(session_step(s, 0), 0);
	}
	session_summary(s, &sm);
	return sm.ev.ring_reads - before;
}

/*
 * A quiet ring is polled less and less often, each poll one read of its counts: up to every
 * 200 ms when its copies' interval says half the ring takes longer than that to fill at a high
 * allocation rate, every 20 ms while no copy said, every 10 ms when the interval is so short
 * that half the ring fills in less. A poll that takes a quarter of the ring brings it back to
 * every 10 ms.
 */
static void test_a_quiet_ring_is_polled_seldom_but_never_lapped(void **state)
{
	struct session *s = open_alloc();
	struct session_summary sm;
	uint64_t n;

	(void)state;
	assert_int_equal(session_step(s, 0), 0);
	n = reads_over(s, 1000); /* no copy yet: every 20 ms after 10 */
	assert_true(n >= 45 && n <= 55);
	ring_put(0, 1100 * MS, 1024, 1ull << 30); /* half of 16 slots of 1 GiB: seconds */
	n = reads_over(s, 2000);
	assert_true(n >= 12 && n <= 20); /* the copy's 3 reads, then every 200 ms */
	session_summary(s, &sm);
	assert_int_equal(sm.ev.ring_counted, 1);
	for (uint64_t k = 1; k <= 5; k++) /* more than a quarter of the ring at once */
		ring_put(k, 1100 * MS, 1024, 1ull << 30);
	n = reads_over(s, 200);
	session_summary(s, &sm);
	assert_int_equal(sm.ev.ring_counted, 6);
	assert_true(n >= 6); /* 3 for the copies, then 10, 20, 40 ms waits at least */
	ring_put(6, 1100 * MS, 1024, 1024); /* half the ring of 1 KiB samples: microseconds */
	(void)reads_over(s, 50);
	n = reads_over(s, 1000);
	assert_true(n >= 95 && n <= 105);
	session_summary(s, &sm);
	assert_int_equal(sm.ev.ring_lost, 0);
	session_close(s);
}

/*
 * A method fresh from the compiler, hot in every thread: its copies (20 polls of 16, more than
 * waited at once before) all wait for its load, which comes after them; the poll after it
 * walks every one of them, long before the tables are complete up to their time.
 */
static void test_copies_through_code_announced_after_them_wait_for_it(void **state)
{
	uint64_t late = late_code(), n = 0, all;
	struct session *s = open_alloc();
	struct session_summary sm;
	char *text, line[1024] = "";

	(void)state;
	stack[0] = late + 0x10; /* the stub returns into the fresh method, not announced yet */
	add_facts(MAIN_PC, 16); /* its caller's frame: up to stack[5], where the walk ends */
	assert_int_equal(session_step(s, 0), 0);
	for (int poll = 0; poll < 20; poll++) {
		for (int i = 0; i < 16; i++, n++)
			ring_put(n, clock_ns, 1024, 1024);
		clock_ns += 10 * MS;
		assert_int_equal(session_step(s, 0), 0);
	}
	session_summary(s, &sm);
	assert_int_equal(sm.ev.ring_lost, 0);
	assert_int_equal(sm.ev.ring_counted, 0);
	assert_int_equal(sm.ev.ring_waited, n);
	assert_int_equal(sm.ev.ring_no_code, 0);
	/* its load, stamped after the first copies (the JVM announces code after it ran) */
	assert_int_equal(
		codetab_add(src->tab, CODEBLOB_COMPILED, late, 0x100, 1005 * MS, "Hot::late"), 1);
	add_facts(late, 24); /* its frame: the stub's return address up to Hot::main's */
	clock_ns += 10 * MS; /* the tables are complete up to 910 ms only */
	assert_int_equal(session_step(s, 0), 0);
	session_summary(s, &sm);
	assert_int_equal(sm.ev.ring_counted, n);
	clock_ns = 2000 * MS;
	session_finish(s, 0);
	session_summary(s, &sm);
	assert_int_equal(sm.ev.ring_counted, n);
	assert_int_equal(sm.ev.ring_no_java, 0);
	assert_int_equal(sm.ev.ring_no_code, 0);
	assert_int_equal(sm.ev.ring_unrooted, n);
	text = folded(s);
	all = weight_with(text, "byte[]");
	assert_true(all > 0);
	assert_int_equal(weight_with(text, "Hot::main_[j];Hot::late_[j];byte[] "), all);
	assert_null(strstr(text, "_new_array_Java"));
	free(text);
	session_report(&sm, report_line, line);
	assert_non_null(strstr(line, "320 waited for code announced after them, 0 were walked "
				     "without it"));
	session_close(s);
}

/*
 * Code that is never announced: the copy waits until the tables are complete up to its time,
 * then is walked without it and counted so; the stub it went through is not shown as the
 * allocating frame, and its stack is marked cut.
 */
static void test_a_copy_whose_code_never_comes_is_walked_at_its_watermark(void **state)
{
	struct session *s = open_alloc();
	struct session_summary sm;
	char *text, line[1024] = "";

	(void)state;
	stack[0] = late_code() + 0x10;
	add_facts(MAIN_PC, 16);
	assert_int_equal(session_step(s, 0), 0);
	for (uint64_t n = 0; n < 4; n++)
		ring_put(n, 1010 * MS, 1024, 1024);
	clock_ns = 1100 * MS;
	assert_int_equal(session_step(s, 0), 0);
	session_summary(s, &sm);
	assert_int_equal(sm.ev.ring_counted, 0);
	assert_int_equal(sm.ev.ring_waited, 4);
	clock_ns = 1400 * MS; /* complete up to 1100 ms */
	assert_int_equal(session_step(s, 0), 0);
	session_summary(s, &sm);
	assert_int_equal(sm.ev.ring_counted, 4);
	assert_int_equal(sm.ev.ring_no_code, 4);
	assert_int_equal(sm.ev.ring_no_java, 4);
	assert_int_equal(sm.ev.ring_unrooted, 4);
	clock_ns = 2000 * MS;
	session_finish(s, 0);
	text = folded(s);
	assert_true(weight_with(text, "byte[]") > 0);
	assert_int_equal(weight_with(text, "[truncated]"), weight_with(text, "byte[]"));
	assert_null(strstr(text, "_new_array_Java"));
	free(text);
	session_summary(s, &sm);
	session_report(&sm, report_line, line);
	assert_non_null(strstr(line,
			       "4 walks found no Java frame, 4 stopped short of the "
			       "thread's start (under [truncated]), 4 waited for code announced "
			       "after them, 4 were walked without it"));
	session_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copies_are_walked_named_and_weighed),
		cmocka_unit_test(test_lapped_copies_are_lost_and_an_unknown_klass_is_said),
		cmocka_unit_test(test_lost_weight_is_left_out_with_threads),
		cmocka_unit_test(test_copies_from_before_the_start_are_left_out),
		cmocka_unit_test(test_a_quiet_ring_is_polled_seldom_but_never_lapped),
		cmocka_unit_test(test_copies_through_code_announced_after_them_wait_for_it),
		cmocka_unit_test(test_a_copy_whose_code_never_comes_is_walked_at_its_watermark),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
