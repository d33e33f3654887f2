// SPDX-License-Identifier: MIT
/*
 * test_session_defer.c - CPU samples walked without frame pointers (--unwind vm), or from the
 * stack copy where frame pointers stop short, through code the JVM runs before it announces it:
 * each waits, its stack copy kept, until the code tables are complete up to its time, however many
 * wait with it (a burst of fresh code in every thread), and is then walked through the method
 * announced meanwhile. Past the cap on samples waiting at once, a sample is walked at once, and the
 * summary counts it. The JVM is this process (its PID), so that the session sees the fresh code as
 * executable anonymous memory, as HotSpot's code cache.
 */
#include <errno.h>
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
#include "sampler.h"
#include "session_report.h"
#include "stackagg.h"

#define STUB_PC 0x7f0000000100ull /* a runtime stub the thread is in */
#define MAIN_PC 0x7f0000002000ull

static uint64_t stack[6];			 /* the thread's stack from sp */
static uint64_t regs[5];			 /* SAMPLER_REGS_MASK's, lowest bit first */
static const uint64_t chain[] = { STUB_PC + 8 }; /* the kernel's: frame pointers end at once */

/*
 * The thread is in a stub (ip), which returns into the fresh method (stack[0]); its frame
 * (24 bytes) holds the return address into Hot::main (stack[3]), whose frame (16 bytes) ends
 * the stack (stack[5]: 0).
 */
static struct session *open_unwind(enum session_unwind unwind)
{
	struct session_opts o = { .target = SESSION_TARGET_ALL,
				  .event = FG_EVENT_CPU,
				  .settle_ns = 300 * MS,
				  .merge_threads = true,
				  .stack_copy = sizeof(stack),
				  .unwind = unwind };
	struct session *s = NULL;
	uint64_t mask = SAMPLER_REGS_MASK;
	size_t k = 0;
	char why[256];

	memset(&fs, 0, sizeof(fs));
	clock_ns = 1000 * MS;
	memset(stack, 0, sizeof(stack));
	stack[0] = late_code() + 0x10;
	stack[2] = (uint64_t)(uintptr_t)&stack[4];
	stack[3] = MAIN_PC + 0x20;
	for (unsigned b = 0; b < 64; b++) {
		if (!(mask >> b & 1))
			continue;
		regs[k++] = b == SAMPLER_REG_IP	  ? STUB_PC + 8
			    : b == SAMPLER_REG_SP ? (uint64_t)(uintptr_t)stack
			    : b == SAMPLER_REG_BP ? (uint64_t)(uintptr_t)&stack[2]
						  : 0;
	}
	assert_int_equal(k, 5);
	if (session_open_seams(&o, &seams, &s, why, sizeof(why)) != 0)
		fail_msg("session_open_seams: %s", why);
	assert_int_equal(
		codetab_add(src->tab, CODEBLOB_DYNAMIC, STUB_PC, 0x100, 1 * MS, "_new_array_Java"),
		1);
	assert_int_equal(
		codetab_add(src->tab, CODEBLOB_COMPILED, MAIN_PC, 0x100, 1 * MS, "Hot::main"), 1);
	add_facts(MAIN_PC, 16);
	return s;
}

static struct session *open_cpu(void)
{
	return open_unwind(SESSION_UNWIND_VM);
}

/* A CPU sample of the thread, taken at ts, with its registers and its stack copy. */
static void queue_walkable(uint64_t ts)
{
	struct perfring_rec *r = &fs.q[fs.nq++];

	memset(r, 0, sizeof(*r));
	r->type = PERF_RECORD_SAMPLE;
	r->pid = r->tid = JVM_PID;
	r->time = ts;
	r->u.sample.user = chain;
	r->u.sample.nr_user = 1;
	r->u.sample.regs = regs;
	r->u.sample.regs_mask = SAMPLER_REGS_MASK;
	r->u.sample.stack = (const uint8_t *)stack;
	r->u.sample.stack_len = r->u.sample.stack_dyn = sizeof(stack);
}

/* n samples, 16 at each step of 1 ms. */
static void sample(struct session *s, unsigned n)
{
	while (n) {
		unsigned b = n < 16 ? n : 16;

		for (unsigned i = 0; i < b; i++)
			queue_walkable(clock_ns);
		n -= b;
		clock_ns += 1 * MS;
		assert_int_equal(session_step(s, 0), 0);
	}
}

static void early_line(void *arg, const char *text)
{
	char *out = arg;

	if (strstr(text, "walked before their code was announced"))
		snprintf(out, 512, "%s", text);
}

/* The fresh method announced (stamped after the first samples ran in it), and the recording
 * run until the tables are complete past every sample; the folded profile returned. */
static char *announce_and_finish(struct session *s, struct session_summary *sm, char *line)
{
	uint64_t late = late_code();
	char *text;

	assert_int_equal(
		codetab_add(src->tab, CODEBLOB_COMPILED, late, 0x100, 1005 * MS, "Hot::late"), 1);
	add_facts(late, 24);
	clock_ns += 1000 * MS;
	assert_int_equal(session_step(s, 0), 0);
	session_finish(s, 0);
	text = folded(s);
	session_summary(s, sm);
	session_report(sm, early_line, line);
	return text;
}

/* 1 200 samples in fresh code, more than waited at once before: every one waits for it. */
static void test_a_burst_of_samples_in_fresh_code_waits_for_it(void **state)
{
	struct session *s = open_cpu();
	struct session_summary sm;
	char *text, line[512] = "";
	uint64_t all;

	(void)state;
	assert_int_equal(session_step(s, 0), 0);
	sample(s, 1200);
	text = announce_and_finish(s, &sm, line);
	/* every sample through the fresh method up to Hot::main, where this stack ends (its
	 * outermost frame is no thread root: [truncated]) */
	all = weight_with(text, "Hot::late_[j]");
	assert_int_equal(all, 1200);
	assert_int_equal(weight_with(text, "[truncated];Hot::main_[j];Hot::late_[j];"), all);
	assert_int_equal(sm.unwound_vm, 1200);
	assert_int_equal(sm.unwound_early, 0);
	assert_string_equal(line, "");
	free(text);
	session_close(s);
}

/*
 * With frame pointers (a JVM run with PreserveFramePointer), a chain that stops short of a
 * root goes on from the stack copy: such a walk waits for fresh code likewise, rather than
 * keeping the short chain.
 */
static void test_a_frame_pointer_chain_continued_from_the_copy_waits_for_fresh_code(void **state)
{
	struct session *s = open_unwind(SESSION_UNWIND_FP);
	struct session_summary sm;
	char *text, line[512] = "";

	(void)state;
	assert_int_equal(session_step(s, 0), 0);
	sample(s, 40);
	text = announce_and_finish(s, &sm, line);
	/* each walk waited once, and went through the method announced meanwhile (this stack
	 * ends at Hot::main, no thread root: its kernel chain is kept, as for any walk from the
	 * copy that does not reach a root) */
	assert_int_equal(sm.vm.deferred, 40);
	assert_int_equal(sm.vm.samples, 40);
	assert_int_equal(sm.vm.end[UNW_END_ROOT], 0);
	assert_int_equal(sm.vm.lost_at[UNW_ANON], 0);
	assert_int_equal(weight_with(text, "[truncated];_new_array_Java"), 40);
	assert_int_equal(sm.unwound_early, 0);
	free(text);
	session_close(s);
}

/* Past SESSION_DEFER_MAX waiting at once, the next samples are walked at once, and said. */
static void test_samples_past_the_cap_are_walked_at_once_and_counted(void **state)
{
	struct session *s = open_cpu();
	struct session_summary sm;
	char *text, line[512] = "";

	(void)state;
	assert_int_equal(session_step(s, 0), 0);
	sample(s, SESSION_DEFER_MAX + 3);
	text = announce_and_finish(s, &sm, line);
	assert_int_equal(sm.unwound_vm, SESSION_DEFER_MAX + 3);
	assert_int_equal(sm.unwound_early, 3);
	/* the 3 walked at once stop in the method not announced then; the rest waited for it */
	assert_int_equal(weight_with(text, "[truncated];Hot::late_[j];"), 3);
	assert_int_equal(weight_with(text, "Hot::main_[j];Hot::late_[j];"), SESSION_DEFER_MAX);
	assert_non_null(strstr(line, "3 samples walked before their code was announced: more "
				     "than 4096 samples or 32 MiB of them waited for it at once"));
	free(text);
	session_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_burst_of_samples_in_fresh_code_waits_for_it),
		cmocka_unit_test(test_samples_past_the_cap_are_walked_at_once_and_counted),
		cmocka_unit_test(
			test_a_frame_pointer_chain_continued_from_the_copy_waits_for_fresh_code),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
