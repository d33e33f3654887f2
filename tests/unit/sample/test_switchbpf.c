// SPDX-License-Identifier: MIT
/*
 * test_switchbpf.c - the off-CPU BPF program's records from bytes: decoding (every truncation
 * and every field out of range refused), the task state as the tracepoint reports it, where a
 * kernel chain starts (__schedule in kallsyms text) and what is left out above it; the reason
 * a refused load gives.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "switchbpf.h"
#include "tracefs.h"

/* An OUT record with nk kernel frames, nu user frames and ns stack bytes, in buf (aligned). */
static size_t make_out(uint64_t *buf, size_t cap, uint16_t nk, uint16_t nu, uint32_t ns)
{
	struct switchrec h = { .kind = SWITCHREC_OUT,
			       .tid = 12,
			       .pid = 10,
			       .prev_state = 1,
			       .flags = SWITCHREC_F_REGS,
			       .nr_kernel = nk,
			       .nr_user = nu,
			       .stack_len = ns,
			       .time = 1000,
			       .thr = SWITCHREC_ONE / 4,
			       .regs = { 1, 2, 3, 4, 5 } };
	size_t len = sizeof(h) + ((size_t)nk + nu) * 8 + ns;
	uint8_t *p = (uint8_t *)buf;

	assert_true(len <= cap);
	memcpy(p, &h, sizeof(h));
	for (size_t i = 0; i < (size_t)nk + nu; i++) {
		uint64_t v = 0xffffffff81000000ull + i;

		memcpy(p + sizeof(h) + i * 8, &v, 8);
	}
	memset(p + sizeof(h) + ((size_t)nk + nu) * 8, 0xab, ns);
	return len;
}

static void test_an_out_record_decodes_with_its_chains_and_stack(void **state)
{
	static uint64_t buf[4096];
	struct switchrec_view v;
	size_t len = make_out(buf, sizeof(buf), 3, 2, 64);

	(void)state;
	assert_int_equal(switchrec_decode(buf, len, &v), 0);
	assert_int_equal(v.h.kind, SWITCHREC_OUT);
	assert_int_equal(v.h.tid, 12);
	assert_int_equal(v.h.nr_kernel, 3);
	assert_int_equal(v.kernel[0], 0xffffffff81000000ull);
	assert_int_equal(v.user[1], 0xffffffff81000004ull);
	assert_int_equal(v.h.stack_len, 64);
	assert_int_equal(v.stack[63], 0xab);
	assert_int_equal(v.h.regs[4], 5);
	/* nothing of a kind that is absent */
	len = make_out(buf, sizeof(buf), 0, 0, 0);
	assert_int_equal(switchrec_decode(buf, len, &v), 0);
	assert_null(v.kernel);
	assert_null(v.user);
	assert_null(v.stack);
	/* trailing bytes (the perf record's padding) are allowed */
	assert_int_equal(switchrec_decode(buf, len + 4, &v), 0);
}

/* Every truncation of a valid record is refused, never read past. */
static void test_every_truncation_is_refused(void **state)
{
	static uint64_t buf[4096];
	struct switchrec_view v;
	size_t len = make_out(buf, sizeof(buf), 5, 7, 200);

	(void)state;
	for (size_t n = 0; n < len; n++) {
		void *copy = malloc(n ? n : 1); /* exactly n bytes: ASan sees any overread */

		memcpy(copy, buf, n);
		assert_int_equal(switchrec_decode(copy, n, &v), -EBADMSG);
		free(copy);
	}
}

/* Counts and chances out of the program's range, unknown kinds, and an IN with a payload. */
static void test_fields_out_of_range_are_refused(void **state)
{
	static uint64_t buf[8192];
	struct switchrec *h = (struct switchrec *)(void *)buf;
	struct switchrec_view v;
	size_t len;

	(void)state;
	len = make_out(buf, sizeof(buf), 1, 1, 8);
	h->kind = 3;
	assert_int_equal(switchrec_decode(buf, len, &v), -EBADMSG);
	h->kind = SWITCHREC_OUT;
	h->thr = 0; /* a chance of 0 would weigh infinitely */
	assert_int_equal(switchrec_decode(buf, len, &v), -EBADMSG);
	h->thr = SWITCHREC_ONE + 1;
	assert_int_equal(switchrec_decode(buf, len, &v), -EBADMSG);
	h->thr = SWITCHREC_ONE;
	h->nr_kernel = SWITCHREC_MAX_KDEPTH + 1;
	assert_int_equal(switchrec_decode(buf, sizeof(buf), &v), -EBADMSG);
	h->nr_kernel = 1;
	h->nr_user = SWITCHREC_MAX_UDEPTH + 1;
	assert_int_equal(switchrec_decode(buf, sizeof(buf), &v), -EBADMSG);
	h->nr_user = 1;
	h->stack_len = SWITCHREC_MAX_STACK + 8;
	assert_int_equal(switchrec_decode(buf, sizeof(buf), &v), -EBADMSG);
	h->stack_len = 8;
	assert_int_equal(switchrec_decode(buf, len, &v), 0);
	/* an IN carries nothing after its header */
	memset(h, 0, sizeof(*h));
	h->kind = SWITCHREC_IN;
	h->tid = 7;
	h->time = 5;
	assert_int_equal(switchrec_decode(buf, sizeof(*h), &v), 0);
	assert_int_equal(v.h.tid, 7);
	h->nr_user = 1;
	assert_int_equal(switchrec_decode(buf, sizeof(buf), &v), -EBADMSG);
	/* misaligned bytes are the caller's bug */
	assert_int_equal(switchrec_decode((uint8_t *)buf + 4, len, &v), -EINVAL);
}

/* The kernel's prev_state and preemption, reported the way the sched_switch tracepoint does. */
static void test_states_are_reported_as_the_tracepoint_does(void **state)
{
	static const struct {
		uint32_t prev_state, flags;
		uint64_t want;
	} t[] = {
		{ 0x1, 0, TRACEFS_TASK_INTERRUPTIBLE },		  /* S */
		{ 0x2, 0, TRACEFS_TASK_UNINTERRUPTIBLE },	  /* D */
		{ 0x2 | 0x400, 0, TRACEFS_TASK_IDLE },		  /* TASK_IDLE: I */
		{ 0x1000, 0, TRACEFS_TASK_UNINTERRUPTIBLE },	  /* RT lock wait: D */
		{ 0x4, 0, TRACEFS_TASK_STOPPED },		  /* T */
		{ 0x8, 0, TRACEFS_TASK_TRACED },		  /* t */
		{ 0x40, 0, TRACEFS_TASK_PARKED },		  /* P */
		{ 0x1 | 0x100, 0, TRACEFS_TASK_INTERRUPTIBLE },	  /* wakekill: S */
		{ 0x2 | 0x100, 0, TRACEFS_TASK_UNINTERRUPTIBLE }, /* killable: D */
		{ 0x1, SWITCHREC_F_PREEMPT, 0x100 },		  /* preempted: R+ */
		{ 0x0, 0, 0 },					  /* running (a yield) */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t st = switchrec_state(t[i].prev_state, t[i].flags);

		assert_int_equal(st, t[i].want);
	}
	assert_string_equal(tracefs_state_frame(switchrec_state(0x1, SWITCHREC_F_PREEMPT)),
			    "[off-cpu: preempted]");
	assert_string_equal(tracefs_state_frame(switchrec_state(0x2, 0)),
			    "[off-cpu: uninterruptible (disk I/O)]");
}

static void test_sched_range_is_found_in_kallsyms_text(void **state)
{
	static const char text[] = "ffffffff81000000 T _stext\n"
				   "ffffffff821facc0 t __schedule_helper\n"
				   "ffffffff821fa000 T __schedule\n"
				   "ffffffff821fb600 T schedule\n"
				   "ffffffffc0001000 t bpf_prog_abc_fg_switch\t[bpf]\n"
				   "ffffffff821fa800 t __schedule.cold\n";
	static const char hidden[] = "0000000000000000 T _stext\n"
				     "0000000000000000 T __schedule\n"
				     "0000000000000000 T schedule\n";
	static const char data_only[] = "ffffffff821fa000 D __schedule\n";
	uint64_t lo = 0, hi = 0;

	(void)state;
	assert_int_equal(switchbpf_sched_range(text, sizeof(text) - 1, &lo, &hi), 0);
	assert_int_equal(lo, 0xffffffff821fa000ull);
	assert_int_equal(hi, 0xffffffff821fa800ull); /* the next symbol up, wherever listed */
	assert_int_equal(switchbpf_sched_range(hidden, sizeof(hidden) - 1, &lo, &hi), -ENOENT);
	assert_int_equal(switchbpf_sched_range(data_only, sizeof(data_only) - 1, &lo, &hi),
			 -ENOENT);
	assert_int_equal(switchbpf_sched_range("", 0, &lo, &hi), -ENOENT);
	/* a last line without a newline, and junk lines around it */
	static const char ragged[] = "garbage\n\nffffffff82000000 t __schedule\nzz T x";
	assert_int_equal(switchbpf_sched_range(ragged, sizeof(ragged) - 1, &lo, &hi), -ENOENT);
	static const char ragged2[] =
		"garbage\n\nffffffff82000000 t __schedule\nffffffff82000100 T x";
	assert_int_equal(switchbpf_sched_range(ragged2, sizeof(ragged2) - 1, &lo, &hi), 0);
	assert_int_equal(hi, 0xffffffff82000100ull);
}

static void test_frames_above_schedule_are_left_out(void **state)
{
	const uint64_t chain[] = { 0xffffffffc0001234ull, 0xffffffff814ba96cull,
				   0xffffffff821fa0d8ull, 0xffffffff821fb643ull };
	const uint64_t lo = 0xffffffff821fa000ull, hi = 0xffffffff821fa800ull;

	(void)state;
	assert_int_equal(switchrec_kernel_skip(chain, 4, lo, hi), 2);
	/* no __schedule in the chain, or no range known: nothing left out */
	assert_int_equal(switchrec_kernel_skip(chain, 2, lo, hi), 0);
	assert_int_equal(switchrec_kernel_skip(chain, 4, 0, 0), 0);
	assert_int_equal(switchrec_kernel_skip(chain, 0, lo, hi), 0);
}

/* The capabilities a refusal is tested with (privs.h's numbers). */
#define CAP(c) (1ull << (c))
#define ALL_CAPS (CAP(38) | CAP(39))

/*
 * When the program cannot be used, the reason given is the real one: each missing capability
 * named (and no held one), lockdown, a seccomp filter, a kernel too old (its release, and what
 * it lacks in its own words), the verifier's refusal (its decisive line, not a capability).
 */
static void test_a_refusal_names_its_real_reason(void **state)
{
	static const char vlog_access[] = "0: R1=ctx() R10=fp0\n12: (79) r2 = *(u64 *)(r1 +0)\n"
					  "R1 invalid mem access 'scalar'\nprocessed 12 insns "
					  "(limit 1000000)\nverification time 20 usec\n";
	static const char vlog_helper[] = "0: R1=ctx() R10=fp0\n40: (85) call unknown#175\n"
					  "invalid func unknown#175\nprocessed 40 insns\n";
	static const struct {
		struct switchbpf_refusal r;
		int want;
		const char *has, *hasnt;
	} cases[] = {
		{ { -EPERM, "", "", CAP(38), 40, 6, 1, NULL }, -EPERM, "no CAP_BPF ", "PERFMON" },
		{ { -EPERM, "", "", CAP(39), 40, 6, 1, NULL },
		  -EPERM,
		  "no CAP_PERFMON",
		  "CAP_BPF" },
		{ { -EPERM, "", "", 0, 40, 6, 1, NULL },
		  -EPERM,
		  "no CAP_BPF and no CAP_PERFMON",
		  NULL },
		{ { -EPERM, "", "", CAP(38), 37, 5, 4, NULL }, -EPERM, "no CAP_SYS_ADMIN", NULL },
		{ { -EPERM, "", "", CAP(21), 40, 6, 1, NULL }, 0, NULL, "no CAP" }, /* admin */
		{ { -EACCES, vlog_access, "", ALL_CAPS, 40, 6, 1, NULL },
		  -EOPNOTSUPP,
		  "verifier refused the program (Permission denied): \"R1 invalid mem access "
		  "'scalar'\"",
		  "CAP_" },
		{ { -EINVAL, vlog_helper, "", ALL_CAPS, 40, 5, 10, NULL },
		  -EOPNOTSUPP,
		  "lacks a helper the program calls (Linux 5.15 or later has them; this is 5.10): "
		  "the verifier says \"invalid func unknown#175\"",
		  NULL },
		{ { -EINVAL, "", "map 'threads': failed to create: Invalid argument(-22)", ALL_CAPS,
		    40, 5, 8, NULL },
		  -EOPNOTSUPP,
		  "Linux 5.8 is too old (5.15 or later is needed): map 'threads': failed to create",
		  NULL },
		{ { -EPERM, "", "", ALL_CAPS, 40, 6, 1, "none integrity [confidentiality]\n" },
		  -EPERM,
		  "locked down",
		  NULL },
		{ { -EPERM, "", "", ALL_CAPS, 40, 6, 1, "[none] integrity confidentiality\n" },
		  -EPERM,
		  "seccomp",
		  "no CAP" },
		{ { -ESRCH, "", "prog 'fg_switch': relo #3: kind <byte_off> failed", ALL_CAPS, 40,
		    6, 8, NULL },
		  -EOPNOTSUPP,
		  "the kernel refused the program: prog 'fg_switch': relo #3",
		  NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[SWITCHBPF_WHY_MAX];
		int rv = switchbpf_why_refused(&cases[i].r, buf, sizeof(buf));

		print_message("%zu: %d %s\n", i, rv, buf);
		if (cases[i].want && rv != cases[i].want)
			fail_msg("case %zu: %d, not %d (%s)", i, rv, cases[i].want, buf);
		if (cases[i].has && !strstr(buf, cases[i].has))
			fail_msg("case %zu: \"%s\" does not say \"%s\"", i, buf, cases[i].has);
		if (cases[i].hasnt && strstr(buf, cases[i].hasnt))
			fail_msg("case %zu: \"%s\" says \"%s\"", i, buf, cases[i].hasnt);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_an_out_record_decodes_with_its_chains_and_stack),
		cmocka_unit_test(test_every_truncation_is_refused),
		cmocka_unit_test(test_fields_out_of_range_are_refused),
		cmocka_unit_test(test_states_are_reported_as_the_tracepoint_does),
		cmocka_unit_test(test_sched_range_is_found_in_kallsyms_text),
		cmocka_unit_test(test_frames_above_schedule_are_left_out),
		cmocka_unit_test(test_a_refusal_names_its_real_reason),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
