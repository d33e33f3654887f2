// SPDX-License-Identifier: MIT
/*
 * test_javaframes.c - interpreted frames of a sample named end to end over a fake JVM: a code
 * table with the interpreter blob and a VM layout, a stack copy with three interpreter frames,
 * and the JVM's metadata in fake memory. Also: what is left as `Interpreter` (no layout, no
 * copy) and what becomes `[unknown] (interpreted)` (beyond the copy, unloaded methods).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codetab.h"
#include "fgclock.h"
#include "javaframes.h"
#include "symbolize/interp/fakevm.h"

#define PID 777
#define INTERP 0x7f0000010000ull
#define SP 0x7ffd00000000ull
#define NATIVE 0x7f1000001000ull

static const uint8_t lines_x0[] = { 0xff, 0x00, 0x14, 0x22, 0xff, 0x08, 0x38, 0x00 };

struct fix {
	struct fakevm vm;
	struct vmmem_ops ops;
	struct codetab *tab;
	struct javaframes *jf;
	uint8_t stack[2048];
	uint64_t ips[4];
	uint64_t code[3], m[3];
	struct uregs regs;
	struct ustack st;
	struct stackagg_uframe out[4];
	uint64_t ts;	/* sample time */
	uint8_t *count; /* the JVM's unloaded-class count (add_unload_count) */
	bool bump;	/* every metadata read bumps it (classes unloaded while we read) */
};

static void put(struct fix *f, uint64_t addr, uint64_t v)
{
	memcpy(f->stack + (addr - SP), &v, 8);
}

static void add_layout(struct codetab *tab, uint32_t caps)
{
	struct fgp_record rec = { .type = FGP_VM_LAYOUT };

	fv_layout17_proof(&rec.u.layout);
	rec.u.layout.caps &= caps;
	assert_int_equal(codetab_apply(tab, &rec), 0);
}

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	static const char *names[3] = { "Leaf", "Middle", "Outer" };

	f->vm.pid = PID;
	f->ops = (struct vmmem_ops){ fv_readv, &f->vm };
	f->tab = codetab_new(NULL);
	f->jf = javaframes_new(&f->ops, true);
	assert_int_equal(codetab_add(f->tab, CODEBLOB_DYNAMIC, INTERP, 0x10000, 1, "Interpreter"),
			 1);
	add_layout(f->tab, ~0u);
	for (int i = 0; i < 3; i++)
		f->m[i] = fv_method(&f->vm, 0x100000 * (uint64_t)(i + 1), names[i], "run", 10,
				    lines_x0, sizeof(lines_x0), &f->code[i]);
	/* Leaf (fp SP+0x100) <- Middle (SP+0x300) <- Outer (SP+0x500) <- native root. */
	f->ips[0] = INTERP + 0x100;
	f->ips[1] = INTERP + 0x200;
	f->ips[2] = INTERP + 0x300;
	f->ips[3] = NATIVE;
	put(f, SP + 0x100, SP + 0x300);
	put(f, SP + 0x108, f->ips[1]);
	put(f, SP + 0x300, SP + 0x500);
	put(f, SP + 0x308, f->ips[2]);
	put(f, SP + 0x500, 0);
	put(f, SP + 0x508, f->ips[3]);
	for (int i = 0; i < 3; i++) {
		uint64_t fp = SP + 0x100 + 0x200 * (uint64_t)i;

		put(f, fp - 24, f->m[i]);
		put(f, fp - 48, FV_CACHE(f->m[i]));
		put(f, fp - 64, f->code[i] + (i == 0 ? 1 : 4 * (uint64_t)i)); /* bci 1, 4, 8 */
	}
	f->regs = (struct uregs){
		.valid = true, .ip = f->ips[0], .sp = SP, .bp = SP + 0x100, .r13 = f->code[0] + 9
	}; /* the leaf runs at bci 9 */
	f->st = (struct ustack){ f->stack, SP, sizeof(f->stack) };
	*state = f;
	return f->tab && f->jf ? 0 : -1;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	javaframes_free(f->jf);
	codetab_free(f->tab);
	fv_free(&f->vm);
	free(f);
	return 0;
}

static uint32_t run_in_drain(struct fix *f)
{
	struct javaframes_in in = {
		PID, f->ts, f->tab, f->ips, 4, &f->regs, &f->st, NULL, NULL, 0
	};

	return javaframes_name(f->jf, &in, f->out);
}

/* One sample as the only one of its drain. */
static uint32_t run(struct fix *f)
{
	javaframes_drain(f->jf);
	return run_in_drain(f);
}

/* The caller's own unwind (vmstack) gives the frame pointers: they are used as given. */
static void test_a_given_walk_replaces_the_frame_pointer_chain(void **state)
{
	struct fix *f = *state;
	struct framewalk_frame walk[4];
	struct javaframes_in in = {
		PID, f->ts, f->tab, f->ips, 4, &f->regs, &f->st, walk, NULL, 0
	};

	framewalk_fp(&f->regs, &f->st, f->ips, 4, walk);
	assert_int_equal(javaframes_name(f->jf, &in, f->out), 3);
	assert_string_equal(f->out[1].name, "Middle::run:12");
	assert_string_equal(f->out[2].name, "Outer::run:40");
	walk[2].state = FRAMEWALK_NO_STACK; /* the unwinder could not vouch for this one */
	assert_int_equal(javaframes_name(f->jf, &in, f->out), 3);
	assert_string_equal(f->out[1].name, "Middle::run:12");
	assert_string_equal(f->out[2].name, "[unknown] (interpreted)");
}

static void test_interpreted_frames_are_named_with_lines(void **state)
{
	struct fix *f = *state;
	struct javaframes_stats st;

	assert_int_equal(run(f), 3);
	assert_string_equal(f->out[0].name, "Leaf::run:40"); /* r13, not the stale slot */
	assert_string_equal(f->out[1].name, "Middle::run:12");
	assert_string_equal(f->out[2].name, "Outer::run:40");
	assert_null(f->out[3].name);
	assert_false(f->out[0].unresolved);
	/* The leaf's r13 outside its bytecode: the frame's saved bcp is used. */
	f->regs.r13 = 0x1234;
	assert_int_equal(run(f), 3);
	assert_string_equal(f->out[0].name, "Leaf::run:10");
	javaframes_stats(f->jf, &st);
	assert_int_equal(st.interp, 6);
	assert_int_equal(st.named, 6);
	assert_int_equal(st.lines, 6);
	assert_int_equal(st.namer.misses, 3);
	assert_int_equal(f->vm.bad_pid_calls, 0);
}

/* A frame whose cache slot is not its method's (a slot the layout misplaced): no name. */
static void test_a_frame_its_pool_cache_does_not_prove_is_unknown(void **state)
{
	struct fix *f = *state;
	struct javaframes_stats st;

	put(f, SP + 0x300 - 48, FV_CACHE(f->m[2])); /* Middle's frame, Outer's cache */
	assert_int_equal(run(f), 3);
	assert_string_equal(f->out[0].name, "Leaf::run:40");
	assert_string_equal(f->out[1].name, "[unknown] (interpreted)");
	assert_true(f->out[1].unresolved);
	assert_string_equal(f->out[2].name, "Outer::run:40");
	javaframes_stats(f->jf, &st);
	assert_int_equal(st.bad_frame, 1);
	assert_int_equal(st.unknown, 1);
	assert_int_equal(st.named, 2);
}

static void test_without_layout_or_copy_frames_stay_interpreter(void **state)
{
	struct fix *f = *state;
	struct javaframes_stats st;
	struct codetab *old = f->tab;

	/* An agent without VM_LAYOUT. */
	f->tab = codetab_new(NULL);
	codetab_add(f->tab, CODEBLOB_DYNAMIC, INTERP, 0x10000, 1, "Interpreter");
	assert_int_equal(run(f), 0);
	javaframes_stats(f->jf, &st);
	assert_int_equal(st.no_layout, 3);
	assert_non_null(st.layout_why);
	/* A layout whose JDK has no known frame slots: the same, with the reason. */
	add_layout(f->tab, FGP_VML_CAP_NAMES | FGP_VML_CAP_LINES);
	assert_int_equal(run(f), 0);
	javaframes_stats(f->jf, &st);
	assert_int_equal(st.no_layout, 6);
	assert_string_equal(st.layout_why,
			    "the agent does not know this JDK's interpreter frame layout");
	codetab_free(f->tab);
	f->tab = old;
	/* A sample without a stack copy (--stack-copy 0). */
	f->st.bytes = NULL;
	assert_int_equal(run(f), 0);
	javaframes_stats(f->jf, &st);
	assert_int_equal(st.no_regs, 3);
}

static void test_frames_beyond_the_copy_or_unloaded_are_unknown(void **state)
{
	struct fix *f = *state;
	struct javaframes_stats st;

	/* A copy that ends inside the middle frame: the outer one cannot be read. */
	f->st.len = 0x310;
	assert_int_equal(run(f), 3);
	assert_string_equal(f->out[0].name, "Leaf::run:40");
	assert_string_equal(f->out[1].name, "Middle::run:12");
	assert_string_equal(f->out[2].name, "[unknown] (interpreted)");
	assert_true(f->out[2].unresolved);
	javaframes_stats(f->jf, &st);
	assert_int_equal(st.no_stack, 1);
	/* The middle method's class was unloaded: its memory is gone. */
	f->st.len = sizeof(f->stack);
	for (unsigned i = 0; i < f->vm.n; i++)
		if (f->vm.r[i].addr >= 0x200000 && f->vm.r[i].addr < 0x300000)
			f->vm.r[i].addr += 0x7000000000ull;
	assert_int_equal(run(f), 3);
	assert_string_equal(f->out[1].name, "[unknown] (interpreted)");
	assert_string_equal(f->out[2].name, "Outer::run:40");
	javaframes_stats(f->jf, &st);
	assert_int_equal(st.unreadable, 1);
	assert_int_equal(st.unknown, 2);
	/* A frame the kernel's chain does not agree with. */
	f->ips[2] = INTERP + 0x333;
	assert_int_equal(run(f), 3);
	assert_string_equal(f->out[2].name, "[unknown] (interpreted)");
	javaframes_stats(f->jf, &st);
	assert_int_equal(st.desync, 1);
}

static void test_a_gc_after_the_sample_makes_its_names_unknown(void **state)
{
	struct fix *f = *state;
	struct fgp_record rec = { .type = FGP_VM_LAYOUT };
	struct javaframes_stats st;
	uint8_t *clock = fv_region(&f->vm, 0x900000, 16);

	fv_layout17(&rec.u.layout);
	rec.u.layout.caps |= FGP_VML_CAP_GC_CLOCK;
	fgp_vml_set(&rec.u.layout, FGP_VML_GC_CLOCK_LO, 0x900000);
	fgp_vml_set(&rec.u.layout, FGP_VML_GC_CLOCK_HI, 0);
	assert_int_equal(codetab_apply(f->tab, &rec), 0);
	f->ts = 5000;
	/* The last GC ended before the sample: names stand. */
	fv_put64(clock, 1000);
	fv_put64(clock + 8, 2000);
	assert_int_equal(run(f), 3);
	assert_string_equal(f->out[1].name, "Middle::run:12");
	/* Again, later: no GC since the methods were read, so only the clock is read. */
	unsigned before = f->vm.calls;

	f->ts = 5100;
	assert_int_equal(run(f), 3);
	assert_int_equal(f->vm.calls - before, 1);
	assert_string_equal(f->out[2].name, "Outer::run:40");
	/* A GC started after the sample (classes may have been unloaded since). */
	fv_put64(clock, 6000);
	fv_put64(clock + 8, 7000);
	assert_int_equal(run(f), 3);
	for (int k = 0; k < 3; k++) {
		assert_string_equal(f->out[k].name, "[unknown] (interpreted)");
		assert_true(f->out[k].unresolved);
	}
	/* A GC is running now (started before the sample, not finished). */
	fv_put64(clock, 4000);
	fv_put64(clock + 8, 2000);
	assert_int_equal(run(f), 3);
	assert_true(f->out[0].unresolved);
	javaframes_stats(f->jf, &st);
	assert_int_equal(st.gc_since, 6);
	assert_int_equal(st.named, 6);
	assert_int_equal(st.unknown, 6);
}

/* Reads of the fake JVM; with f->bump, a read of metadata first moves the unload count. */
static ssize_t bump_readv(void *ctx, pid_t pid, const struct iovec *local, unsigned long nl,
			  const struct iovec *remote, unsigned long nr)
{
	struct fix *f = ctx;

	uint64_t v;

	if (f->bump && (uint64_t)(uintptr_t)remote[0].iov_base < 0x900000) {
		memcpy(&v, f->count, 8);
		fv_put64(f->count, v + 1);
	}
	return fv_readv(&f->vm, pid, local, nl, remote, nr);
}

/* A layout with the GC clock at 0x900000 and the unload count's slot at 0x910000, the count at
 * 0x920000 (0: nothing unloaded yet), read through bump_readv. */
static uint8_t *add_unload_count(struct fix *f)
{
	struct fgp_record rec = { .type = FGP_VM_LAYOUT };
	uint8_t *clock = fv_region(&f->vm, 0x900000, 16);

	fv_put64(fv_region(&f->vm, 0x910000, 8), 0x920000);
	f->count = fv_region(&f->vm, 0x920000, 8);
	fv_layout17(&rec.u.layout);
	rec.u.layout.caps |= FGP_VML_CAP_GC_CLOCK | FGP_VML_CAP_UNLOAD_EPOCH;
	fgp_vml_set(&rec.u.layout, FGP_VML_GC_CLOCK_LO, 0x900000);
	fgp_vml_set(&rec.u.layout, FGP_VML_GC_CLOCK_HI, 0);
	fgp_vml_set(&rec.u.layout, FGP_VML_UNLOAD_SLOT_LO, 0x910000);
	fgp_vml_set(&rec.u.layout, FGP_VML_UNLOAD_SLOT_HI, 0);
	assert_int_equal(codetab_apply(f->tab, &rec), 0);
	f->ops = (struct vmmem_ops){ bump_readv, f };
	javaframes_free(f->jf);
	f->jf = javaframes_new(&f->ops, true);
	assert_non_null(f->jf);
	return clock;
}

static void test_gcs_that_unload_nothing_keep_names(void **state)
{
	struct fix *f = *state;
	uint8_t *clock = add_unload_count(f);
	struct javaframes_stats st;

	f->ts = 5000;
	fv_put64(clock, 1000);
	fv_put64(clock + 8, 2000);
	assert_int_equal(run(f), 3);
	assert_string_equal(f->out[1].name, "Middle::run:12");
	/* A young GC after the sample: the count did not move, names stand. */
	fv_put64(clock, 6000);
	fv_put64(clock + 8, 7000);
	f->ts = 5100;
	assert_int_equal(run(f), 3);
	assert_string_equal(f->out[0].name, "Leaf::run:40");
	assert_string_equal(f->out[2].name, "Outer::run:40");
	/* Classes unloaded after the sample: unknown. */
	fv_put64(f->count, 1);
	assert_int_equal(run(f), 3);
	for (int k = 0; k < 3; k++)
		assert_string_equal(f->out[k].name, "[unknown] (interpreted)");
	/* A sample after the new count was seen is named again. */
	f->ts = fg_now_ns();
	assert_int_equal(run(f), 3);
	assert_string_equal(f->out[1].name, "Middle::run:12");
	javaframes_stats(f->jf, &st);
	assert_int_equal(st.gc_since, 3);
	assert_int_equal(st.named, 9);
}

static void test_names_read_while_classes_unload_are_taken_back(void **state)
{
	struct fix *f = *state;
	struct javaframes_stats st;

	add_unload_count(f);
	f->ts = 5000;
	f->bump = true;
	assert_int_equal(run(f), 3);
	for (int k = 0; k < 3; k++) {
		assert_string_equal(f->out[k].name, "[unknown] (interpreted)");
		assert_true(f->out[k].unresolved);
	}
	javaframes_stats(f->jf, &st);
	assert_int_equal(st.gc_since, 3);
	assert_int_equal(st.named, 0);
	/* Nothing moves any more: a later sample is named. */
	f->bump = false;
	f->ts = fg_now_ns();
	assert_int_equal(run(f), 3);
	assert_string_equal(f->out[2].name, "Outer::run:40");
}

/* The count is read once per drain, and again only for a sample taken after that read. */
static void test_the_count_is_read_once_per_drain(void **state)
{
	struct fix *f = *state;
	struct javaframes_stats st;
	uint64_t reads;

	add_unload_count(f);
	f->ts = 5000;
	assert_int_equal(run(f), 3); /* names read from memory: the count before and after */
	javaframes_stats(f->jf, &st);
	assert_int_equal(st.epoch_reads, 2);
	javaframes_drain(f->jf);
	for (int i = 0; i < 10; i++) {
		f->ts = 5000 + (uint64_t)i;
		assert_int_equal(run_in_drain(f), 3);
		assert_string_equal(f->out[1].name, "Middle::run:12");
	}
	javaframes_stats(f->jf, &st);
	assert_int_equal(st.epoch_reads, 3); /* cached names: one read for the drain */
	reads = st.epoch_reads;
	/* Classes unloaded during the drain: an earlier sample's cached names still hold (read
	 * under its count), a sample taken since is checked by a new read. */
	fv_put64(f->count, 1);
	assert_int_equal(run_in_drain(f), 3);
	assert_string_equal(f->out[0].name, "Leaf::run:40");
	f->ts = fg_now_ns();
	assert_int_equal(run_in_drain(f), 3);
	javaframes_stats(f->jf, &st);
	assert_int_equal(st.epoch_reads, reads + 1);
	/* ... which sees the move, at an unknown time before it: the sample is not trusted. */
	assert_string_equal(f->out[2].name, "[unknown] (interpreted)");
	f->ts = fg_now_ns();
	assert_int_equal(run_in_drain(f), 3);
	assert_string_equal(f->out[2].name, "Outer::run:40");
	/* The next drain sees the move: a sample from before it is not trusted. */
	f->ts = 5100;
	assert_int_equal(run(f), 3);
	assert_string_equal(f->out[1].name, "[unknown] (interpreted)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_a_given_walk_replaces_the_frame_pointer_chain,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_gc_after_the_sample_makes_its_names_unknown,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_gcs_that_unload_nothing_keep_names, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_the_count_is_read_once_per_drain, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_names_read_while_classes_unload_are_taken_back,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_interpreted_frames_are_named_with_lines, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_a_frame_its_pool_cache_does_not_prove_is_unknown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_without_layout_or_copy_frames_stay_interpreter,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_frames_beyond_the_copy_or_unloaded_are_unknown,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
