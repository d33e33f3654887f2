// SPDX-License-Identifier: MIT
/*
 * test_interp.c - naming interpreted frames from a fake JVM's memory: names and lines from
 * HotSpot's metadata, cache hits revalidated in one read, class unloading (freed or reused
 * memory) never giving a stale name, the cache keyed by (pid, Method*), bcp checks, the
 * per-sample read budget, and wild in-range offsets from a hostile peer that only make reads
 * fail. The layout checks and the line tables alone: test_interp_layout.c, test_interp_lines.c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fakevm.h"
#include "interp.h"

#define PID 4242

/* bci 0 -> line 10, bci 4 -> 12, bci 8 -> 40 (short and escaped pairs), x = 0. */
static const uint8_t lines_x0[] = { 0xff, 0x00, 0x14, 0x22, 0xff, 0x08, 0x38, 0x00 };

struct fix {
	struct fakevm vm;
	struct vmmem_ops ops;
	struct fgp_vm_layout raw;
	struct interp_layout l;
	struct interp_namer *n;
};

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	const char *why = NULL;

	f->vm.pid = PID;
	f->ops = (struct vmmem_ops){ fv_readv, &f->vm };
	fv_layout17(&f->raw);
	assert_int_equal(interp_layout_init(&f->raw, &f->l, &why), 0);
	assert_true(f->l.frames && f->l.lines);
	f->n = interp_namer_new(&f->ops);
	*state = f;
	return f->n ? 0 : -1;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	interp_namer_free(f->n);
	fv_free(&f->vm);
	free(f);
	return 0;
}

static int name_of(struct fix *f, uint64_t m, uint64_t bcp, bool lines, const char **name,
		   int *line)
{
	interp_begin_sample(f->n);
	return interp_name(f->n, PID, &f->l, m, &bcp, 1, lines, name, line);
}

static void test_method_is_named_with_the_line_of_its_bcp(void **state)
{
	struct fix *f = *state;
	static const int want[10] = { 10, 10, 10, 10, 12, 12, 12, 12, 40, 40 };
	const char *name;
	uint64_t code;
	uint64_t m = fv_method(&f->vm, 0x100000, "com/example/Foo", "bar", 10, lines_x0,
			       sizeof(lines_x0), &code);
	int line;

	for (int bci = 0; bci < 10; bci++) {
		assert_int_equal(name_of(f, m, code + (uint64_t)bci, true, &name, &line), 0);
		assert_string_equal(name, "com.example.Foo::bar");
		assert_int_equal(line, want[bci]);
	}
	/* Without --lines: no line, and no line table read. */
	assert_int_equal(name_of(f, m, code, false, &name, &line), 0);
	assert_int_equal(line, -1);
}

/* A lambda's hidden class: the agent's JVMTI names carry '.' where the Symbol has '+'. */
static void test_hidden_class_is_named_as_jvmti_names_it(void **state)
{
	struct fix *f = *state;
	uint64_t code, m = fv_method(&f->vm, 0x100000, "p/Main$$Lambda$5+0x0000000800c0b000", "run",
				     4, NULL, 0, &code);
	const char *name;
	int line;

	assert_int_equal(name_of(f, m, code, false, &name, &line), 0);
	assert_string_equal(name, "p.Main$$Lambda$5.0x0000000800c0b000::run");
}

static void test_cache_hit_costs_one_read(void **state)
{
	struct fix *f = *state;
	uint64_t code, m = fv_method(&f->vm, 0x100000, "a/B", "c", 4, NULL, 0, &code);
	struct interp_stats st;
	const char *name;
	unsigned before;
	int line;

	assert_int_equal(name_of(f, m, code, true, &name, &line), 0);
	before = f->vm.calls;
	for (int i = 0; i < 100; i++)
		assert_int_equal(name_of(f, m, code + 3, true, &name, &line), 0);
	assert_int_equal(f->vm.calls - before, 100);
	assert_string_equal(name, "a.B::c");
	assert_int_equal(line, -1); /* no line table */
	interp_stats(f->n, &st);
	assert_int_equal(st.misses, 1);
	assert_int_equal(st.hits, 100);
}

/* Two JVMs, each with its own fake memory, read through one vmmem_ops. */
struct two_vms {
	struct fakevm *a, *b;
};

static ssize_t two_readv(void *ctx, pid_t pid, const struct iovec *local, unsigned long nl,
			 const struct iovec *remote, unsigned long nr)
{
	struct two_vms *t = ctx;

	return fv_readv((uint32_t)pid == t->b->pid ? t->b : t->a, pid, local, nl, remote, nr);
}

/* The cache is keyed by (pid, Method*): the same address in two processes is two methods. */
static void test_same_method_address_in_two_processes_is_two_entries(void **state)
{
	struct fix *f = *state;
	struct fakevm *other = calloc(1, sizeof(*other));
	struct two_vms both = { &f->vm, other };
	struct vmmem_ops ops = { two_readv, &both };
	struct interp_namer *n = interp_namer_new(&ops);
	uint64_t code_a, code_b, ma, mb;
	struct interp_stats st;
	const char *name;
	int line;

	(void)state;
	assert_non_null(other);
	assert_non_null(n);
	other->pid = PID + 1;
	ma = fv_method(&f->vm, 0x100000, "a/B", "c", 4, NULL, 0, &code_a);
	mb = fv_method(other, 0x100000, "x/Y", "z", 4, NULL, 0, &code_b);
	assert_int_equal(ma, mb);
	for (int round = 0; round < 2; round++) {
		interp_begin_sample(n);
		assert_int_equal(interp_name(n, PID, &f->l, ma, &code_a, 1, false, &name, &line),
				 0);
		assert_string_equal(name, "a.B::c");
		assert_int_equal(
			interp_name(n, PID + 1, &f->l, mb, &code_b, 1, false, &name, &line), 0);
		assert_string_equal(name, "x.Y::z");
	}
	interp_stats(n, &st);
	assert_int_equal(st.misses, 2);
	assert_int_equal(st.hits, 2);
	/* Forgetting one process keeps the other's entry. */
	interp_forget(n, PID + 1);
	assert_int_equal(interp_name(n, PID, &f->l, ma, &code_a, 1, false, &name, &line), 0);
	interp_stats(n, &st);
	assert_int_equal(st.hits, 3); /* still cached */
	assert_int_equal(interp_name(n, PID + 1, &f->l, mb, &code_b, 1, false, &name, &line), 0);
	assert_string_equal(name, "x.Y::z");
	interp_stats(n, &st);
	assert_int_equal(st.misses, 3); /* read again */
	interp_namer_free(n);
	fv_free(other);
	free(other);
}

static void test_reused_memory_gives_the_new_name_never_the_cached_one(void **state)
{
	struct fix *f = *state;
	uint64_t code, m = fv_method(&f->vm, 0x100000, "Gen0001", "spin", 4, NULL, 0, &code);
	struct interp_stats st;
	const char *name;
	int line;

	assert_int_equal(name_of(f, m, code, false, &name, &line), 0);
	assert_string_equal(name, "Gen0001::spin");
	/* Generation 1 unloaded; generation 2 allocated at the very same addresses. */
	fv_free(&f->vm);
	m = fv_method(&f->vm, 0x100000, "Gen0002", "spin", 4, NULL, 0, &code);
	assert_int_equal(name_of(f, m, code, false, &name, &line), 0);
	assert_string_equal(name, "Gen0002::spin");
	interp_stats(f->n, &st);
	assert_int_equal(st.changed, 1);

	/* Only a Symbol's bytes changed (same pointers everywhere): still noticed. */
	memcpy(f->vm.r[4].bytes + 6, "Gen0003", 7);
	assert_int_equal(name_of(f, m, code, false, &name, &line), 0);
	assert_string_equal(name, "Gen0003::spin");

	/* The ConstMethod pointer moved (the Method* was reused by another method). */
	uint64_t code2;

	fv_method(&f->vm, 0x200000, "Other", "run", 4, NULL, 0, &code2);
	fv_put64(f->vm.r[0].bytes + 8, 0x201000);
	assert_int_equal(name_of(f, m, code2, false, &name, &line), 0);
	assert_string_equal(name, "Other::run");
}

static void test_freed_memory_and_garbage_are_errors_not_names(void **state)
{
	struct fix *f = *state;
	uint64_t code, m = fv_method(&f->vm, 0x100000, "a/B", "c", 4, NULL, 0, &code);
	const char *name;
	int line;

	assert_int_equal(name_of(f, m, code, false, &name, &line), 0);
	fv_free(&f->vm); /* unloaded and unmapped */
	assert_int_equal(name_of(f, m, code, false, &name, &line), -EFAULT);
	assert_int_equal(name_of(f, 0x100008, code, false, &name, &line), -EFAULT);
	assert_int_equal(name_of(f, 0, code, false, &name, &line), -EBADMSG);
	assert_int_equal(name_of(f, 0x100003, code, false, &name, &line), -EBADMSG);

	/* Readable, but the name holds control bytes / an invalid UTF-8 sequence. */
	m = fv_method(&f->vm, 0x300000, "bad\001name", "c", 4, NULL, 0, &code);
	assert_int_equal(name_of(f, m, code, false, &name, &line), -EBADMSG);
	m = fv_method(&f->vm, 0x400000, "ok", "\xe2\x28\xa1", 4, NULL, 0, &code);
	assert_int_equal(name_of(f, m, code, false, &name, &line), -EBADMSG);
	/* Modified UTF-8 that is well formed is fine. */
	m = fv_method(&f->vm, 0x500000, "p/K\xc3\xa9", "\xe2\x82\xac", 4, NULL, 0, &code);
	assert_int_equal(name_of(f, m, code, false, &name, &line), 0);
	assert_string_equal(name, "p.K\xc3\xa9::\xe2\x82\xac");
	/* Another process's memory is another process's: the fake has none for it. */
	interp_begin_sample(f->n);
	assert_int_equal(interp_name(f->n, PID + 1, &f->l, m, &code, 1, false, &name, &line),
			 -ESRCH);
}

static void test_bcp_must_lie_inside_the_bytecode(void **state)
{
	struct fix *f = *state;
	uint64_t code,
		m = fv_method(&f->vm, 0x100000, "a/B", "c", 10, lines_x0, sizeof(lines_x0), &code);
	uint64_t bcps[2] = { code + 10, code + 9 };
	const char *name;
	int line;

	assert_int_equal(name_of(f, m, code - 1, false, &name, &line), -ERANGE);
	assert_int_equal(name_of(f, m, code + 10, false, &name, &line), -ERANGE);
	assert_int_equal(name_of(f, m, 0, false, &name, &line), -ERANGE);
	/* The first candidate inside wins (a leaf's r13, then the frame's slot). */
	interp_begin_sample(f->n);
	assert_int_equal(interp_name(f->n, PID, &f->l, m, bcps, 2, true, &name, &line), 0);
	assert_int_equal(line, 40);

	/* A native method has no bytecode: named, no line, whatever the bcp. */
	m = fv_method(&f->vm, 0x200000, "java/lang/Thread", "sleep", 0, NULL, 0, &code);
	assert_int_equal(name_of(f, m, 0, true, &name, &line), 0);
	assert_string_equal(name, "java.lang.Thread::sleep");
	assert_int_equal(line, -1);
}

static void test_reads_per_sample_are_capped(void **state)
{
	struct fix *f = *state;
	const char *name;
	uint64_t code[40], m[40];
	int line, ok = 0, capped = 0;

	for (int i = 0; i < 40; i++)
		m[i] = fv_method(&f->vm, 0x1000000 + (uint64_t)i * 0x10000, "a/B", "c", 4, NULL, 0,
				 &code[i]);
	/* A fresh sample asking for more than the budget gets -EDQUOT for the rest. */
	interp_begin_sample(f->n);
	unsigned before = f->vm.calls;

	for (int i = 0; i < 40; i++) {
		for (int k = 0; k < 20; k++) {
			int rv = interp_name(f->n, PID, &f->l, m[i] + 0, &code[i], 1, false, &name,
					     &line);

			ok += rv == 0;
			capped += rv == -EDQUOT;
		}
	}
	assert_true(f->vm.calls - before <= INTERP_MAX_READS);
	assert_true(capped > 0);
	assert_true(ok > 0);
	/* The next sample has a fresh budget and the cache. */
	assert_int_equal(name_of(f, m[39], code[39], false, &name, &line), 0);
}

static void test_wild_offsets_in_range_only_fail_reads(void **state)
{
	struct fix *f = *state;
	struct fgp_vm_layout l;
	struct interp_layout il;
	const char *why = NULL, *name;
	uint64_t code, m;
	int line;

	/* Wild but in-range offsets: every read of every frame fails or validates nothing, and
	 * no sample costs more than the budget. */
	unsigned seed = 7;

	m = fv_method(&f->vm, 0x100000, "a/B", "c", 4, lines_x0, sizeof(lines_x0), &code);
	for (int iter = 0; iter < 2000; iter++) {
		fv_layout17(&l);
		for (unsigned k = 2; k < FGP_VML_NKEYS; k++)
			if (rand_r(&seed) % 3 == 0)
				fgp_vml_set(&l, (enum fgp_vml_key)k, (uint32_t)rand_r(&seed) % 300);
		if (interp_layout_init(&l, &il, &why) != 0)
			continue;
		interp_begin_sample(f->n);
		unsigned before = f->vm.calls;

		for (int k = 0; k < 50; k++) {
			int rv = interp_name(f->n, PID, &il, m + 8 * (uint64_t)(k % 3), &code, 1,
					     true, &name, &line);

			if (rv == 0)
				assert_non_null(name);
		}
		assert_true(f->vm.calls - before <= INTERP_MAX_READS);
		interp_forget(f->n, PID);
	}
	assert_int_equal(f->vm.bad_pid_calls, 0);
}

static void test_a_sample_revalidates_its_cached_methods_in_one_read(void **state)
{
	struct fix *f = *state;
	struct interp_req req[6];
	uint64_t code[6], m[6];
	char want[32];
	unsigned before;

	for (int i = 0; i < 6; i++) {
		snprintf(want, sizeof(want), "K%d", i);
		m[i] = fv_method(&f->vm, 0x100000 * (uint64_t)(i + 1), want, "run", 10, lines_x0,
				 sizeof(lines_x0), &code[i]);
	}
	for (int round = 0; round < 2; round++) {
		interp_begin_sample(f->n);
		for (int i = 0; i < 6; i++)
			req[i] = (struct interp_req){ .method = m[i],
						      .bcps = { code[i] + 4 },
						      .nbcp = 1 };
		before = f->vm.calls;
		interp_name_many(f->n, PID, &f->l, req, 6, true, UINT64_MAX, 1);
		for (int i = 0; i < 6; i++) {
			snprintf(want, sizeof(want), "K%d::run", i);
			assert_int_equal(req[i].rv, 0);
			assert_string_equal(req[i].name, want);
			assert_int_equal(req[i].line, 12);
		}
		if (round == 1)
			assert_int_equal(f->vm.calls - before, 1); /* all six cached: one read */
	}
	/* Generation change behind the third method, and the fifth's memory gone (a partial read):
	 * the third is renamed, the fifth unknown, the rest still named. */
	memcpy(f->vm.r[2 * 6 + 4].bytes + 6, "Z", 1);
	for (unsigned i = 0; i < f->vm.n; i++)
		if (f->vm.r[i].addr >= 0x500000 && f->vm.r[i].addr < 0x600000)
			f->vm.r[i].addr += 0x70000000000ull;
	interp_begin_sample(f->n);
	for (int i = 0; i < 6; i++)
		req[i] = (struct interp_req){ .method = m[i], .bcps = { code[i] + 4 }, .nbcp = 1 };
	interp_name_many(f->n, PID, &f->l, req, 6, false, UINT64_MAX, 2);
	assert_string_equal(req[0].name, "K0::run");
	assert_string_equal(req[2].name, "Z2::run");
	assert_int_equal(req[4].rv, -EFAULT);
	assert_string_equal(req[5].name, "K5::run");
	assert_int_equal(req[5].line, -1);
}

/* The Symbol region at addr. */
static uint8_t *sym_at(struct fakevm *vm, uint64_t addr)
{
	for (unsigned i = 0; i < vm->n; i++)
		if (vm->r[i].addr == addr)
			return vm->r[i].bytes;
	fail_msg("no region at %#llx", (unsigned long long)addr);
	return NULL;
}

static void test_a_batch_reads_a_class_and_a_name_once(void **state)
{
	static const char *const want[6] = { "p.A::run", "p.A::two",   "p.A::run",
					     "p.B::run", "p.B::three", "p.B::run" };
	struct fix *f = *state;
	struct interp_req req[6];
	uint64_t code[6], m[6];
	unsigned calls;
	unsigned long ranges;

	/* Two classes of three methods; the third of each is named by A's "run" Symbol. */
	m[0] = fv_method(&f->vm, 0x100000, "p/A", "run", 10, NULL, 0, &code[0]);
	m[1] = fv_method_of(&f->vm, 0x110000, 0x100000, 3, "two", 0x106000, 10, &code[1]);
	m[2] = fv_method_of(&f->vm, 0x120000, 0x100000, 7, NULL, 0x104800, 10, &code[2]);
	m[3] = fv_method(&f->vm, 0x200000, "p/B", "run", 10, NULL, 0, &code[3]);
	m[4] = fv_method_of(&f->vm, 0x210000, 0x200000, 4, "three", 0x206000, 10, &code[4]);
	m[5] = fv_method_of(&f->vm, 0x220000, 0x200000, 7, NULL, 0x104800, 10, &code[5]);
	for (int round = 0; round < 3; round++) {
		if (round == 2) /* B's holder renamed in place: all of B's methods, none of A's */
			sym_at(&f->vm, 0x204000)[6 + 2] = 'C';
		interp_begin_sample(f->n);
		for (int i = 0; i < 6; i++)
			req[i] = (struct interp_req){ .method = m[i],
						      .bcps = { code[i] + 4 },
						      .nbcp = 1 };
		calls = f->vm.calls;
		ranges = f->vm.ranges;
		interp_name_many(f->n, PID, &f->l, req, 6, false, UINT64_MAX, 1);
		for (int i = 0; i < 6; i++) {
			char b[32];

			snprintf(b, sizeof(b), "%s", want[i]);
			if (round == 2 && i >= 3)
				b[2] = 'C';
			assert_int_equal(req[i].rv, 0);
			assert_string_equal(req[i].name, b);
		}
		if (round == 1) {
			assert_int_equal(f->vm.calls - calls, 1);
			/* 8 ranges for a class's first method, 4 for the others, 1 less again for
			 * a name Symbol read already */
			assert_int_equal(f->vm.ranges - ranges, 8 + 4 + 3 + 8 + 4 + 3);
		}
	}
}

static void test_methods_read_since_the_last_gc_are_trusted_without_a_read(void **state)
{
	struct fix *f = *state;
	uint64_t code, m = fv_method(&f->vm, 0x100000, "Gen0001", "spin", 4, NULL, 0, &code);
	struct interp_req r;
	unsigned before;

#define REQ() (r = (struct interp_req){ .method = m, .bcps = { code }, .nbcp = 1 })
	/* Read at 1000 (the last GC began at 100). */
	REQ();
	interp_name_many(f->n, PID, &f->l, &r, 1, false, 100, 1000);
	assert_string_equal(r.name, "Gen0001::spin");
	/* No GC since: trusted, no read at all. */
	before = f->vm.calls;
	REQ();
	interp_name_many(f->n, PID, &f->l, &r, 1, false, 100, 2000);
	assert_int_equal(f->vm.calls, before);
	assert_string_equal(r.name, "Gen0001::spin");
	/* A GC began at 3000 (the class was unloaded, the memory reused): read again. */
	memcpy(f->vm.r[4].bytes + 6, "Gen0002", 7);
	REQ();
	interp_name_many(f->n, PID, &f->l, &r, 1, false, 3000, 4000);
	assert_true(f->vm.calls > before);
	assert_string_equal(r.name, "Gen0002::spin");
	/* Trust ends INTERP_TRUST_NS after the last read, GC or not; never without a clock. */
	before = f->vm.calls;
	REQ();
	interp_name_many(f->n, PID, &f->l, &r, 1, false, 3000, 4000 + INTERP_TRUST_NS);
	assert_true(f->vm.calls > before);
	before = f->vm.calls;
	REQ();
	interp_name_many(f->n, PID, &f->l, &r, 1, false, UINT64_MAX, 4000 + INTERP_TRUST_NS);
	assert_true(f->vm.calls > before);
#undef REQ
}

/*
 * With a layout that proves frames, a frame is named only when the ConstantPoolCache* it keeps
 * is its method's: a slot read from the wrong place (another method's cache, garbage, none)
 * gives no name, trusted cache entry or not, and a pool whose cache changed is read again.
 */
static void test_frames_are_named_only_when_their_pool_cache_proves_them(void **state)
{
	struct fix *f = *state;
	struct fgp_vm_layout raw;
	struct interp_layout l;
	struct interp_stats st;
	struct interp_req r;
	const char *why = NULL;
	uint64_t code_a, code_b;
	uint64_t a = fv_method(&f->vm, 0x100000, "p/A", "run", 10, NULL, 0, &code_a);
	uint64_t b = fv_method(&f->vm, 0x200000, "p/B", "run", 10, NULL, 0, &code_b);

	fv_layout17_proof(&raw);
	assert_int_equal(interp_layout_init(&raw, &l, &why), 0);
	assert_true(l.proof);
#define NAME(lay, m, code, c, has, gc, stamp)                                                      \
	do {                                                                                       \
		r = (struct interp_req){ .method = (m),                                            \
					 .bcps = { (code) },                                       \
					 .nbcp = 1,                                                \
					 .cache = (c),                                             \
					 .has_cache = (has) };                                     \
		interp_begin_sample(f->n);                                                         \
		interp_name_many(f->n, PID, (lay), &r, 1, false, (gc), (stamp));                   \
	} while (0)
	NAME(&l, a, code_a, FV_CACHE(a), true, 100, 1000);
	assert_int_equal(r.rv, 0);
	assert_string_equal(r.name, "p.A::run");
	/* Trusted without a read, and still checked against the frame. */
	NAME(&l, a, code_a, FV_CACHE(b), true, 100, 2000);
	assert_int_equal(r.rv, -ENOEXEC);
	assert_null(r.name);
	NAME(&l, a, code_a, 0x7f0000001000ull, true, 100, 2000);
	assert_int_equal(r.rv, -ENOEXEC);
	NAME(&l, a, code_a, FV_CACHE(a), false, 100, 2000); /* the slot was beyond the copy */
	assert_int_equal(r.rv, -ENOEXEC);
	NAME(&l, b, code_b, FV_CACHE(b), true, 100, 2000);
	assert_int_equal(r.rv, 0);
	assert_string_equal(r.name, "p.B::run");
	interp_stats(f->n, &st);
	assert_int_equal(st.bad_frame, 3);
	/* A GC began at 3000 and A's pool now points to another cache: read again. */
	fv_put64(f->vm.r[2].bytes + 16, FV_CACHE(0x300000));
	NAME(&l, a, code_a, FV_CACHE(a), true, 3000, 4000);
	assert_int_equal(r.rv, -ENOEXEC);
	interp_stats(f->n, &st);
	assert_int_equal(st.changed, 1);
	NAME(&l, a, code_a, FV_CACHE(0x300000), true, 3000, 5000);
	assert_int_equal(r.rv, 0);
	assert_string_equal(r.name, "p.A::run");
	/* Without proof (an older agent's layout) the frame is named from its slots alone. */
	interp_forget(f->n, PID);
	NAME(&f->l, a, code_a, 0, false, 100, 6000);
	assert_int_equal(r.rv, 0);
	assert_string_equal(r.name, "p.A::run");
#undef NAME
}

/* When each unloaded-class count held: only between reads that saw it, 0 since the start. */
static void test_epoch_at_vouches_only_between_reads(void **state)
{
	struct interp_epoch w = { 0 };
	uint64_t v = 99;

	(void)state;
	assert_int_equal(interp_epoch_at(&w, 10, &v), -ENOENT);
	interp_epoch_note(&w, 100, 0, 110); /* 0: nothing was ever unloaded */
	assert_int_equal(interp_epoch_at(&w, 5, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(interp_epoch_at(&w, 101, &v), -ENOENT); /* after the last read began */
	interp_epoch_note(&w, 200, 0, 210);
	assert_int_equal(interp_epoch_at(&w, 150, &v), 0);
	interp_epoch_note(&w, 300, 4, 310); /* moved somewhere in (200, 310] */
	assert_int_equal(interp_epoch_at(&w, 200, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(interp_epoch_at(&w, 250, &v), -ENOENT);
	assert_int_equal(interp_epoch_at(&w, 305, &v), -ENOENT);
	interp_epoch_note(&w, 400, 4, 410);
	assert_int_equal(interp_epoch_at(&w, 310, &v), 0);
	assert_int_equal(v, 4);
	assert_int_equal(interp_epoch_at(&w, 401, &v), -ENOENT);
	interp_epoch_note(&w, 500, 7, 510); /* 0 is forgotten: two values are kept */
	assert_int_equal(interp_epoch_at(&w, 150, &v), -ENOENT);
	assert_int_equal(interp_epoch_at(&w, 350, &v), 0);
	assert_int_equal(v, 4);
	interp_epoch_note(&w, 600, 7, 610);
	assert_int_equal(interp_epoch_at(&w, 550, &v), 0);
	assert_int_equal(v, 7);
	/* A first value other than 0 holds only from its read on. */
	w = (struct interp_epoch){ 0 };
	interp_epoch_note(&w, 100, 3, 110);
	interp_epoch_note(&w, 200, 3, 210);
	assert_int_equal(interp_epoch_at(&w, 105, &v), -ENOENT);
	assert_int_equal(interp_epoch_at(&w, 110, &v), 0);
	assert_int_equal(v, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_epoch_at_vouches_only_between_reads),
		cmocka_unit_test_setup_teardown(
			test_methods_read_since_the_last_gc_are_trusted_without_a_read, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_sample_revalidates_its_cached_methods_in_one_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hidden_class_is_named_as_jvmti_names_it, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_method_is_named_with_the_line_of_its_bcp,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_hit_costs_one_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_batch_reads_a_class_and_a_name_once, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_same_method_address_in_two_processes_is_two_entries, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_reused_memory_gives_the_new_name_never_the_cached_one, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_freed_memory_and_garbage_are_errors_not_names,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_bcp_must_lie_inside_the_bytecode, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reads_per_sample_are_capped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wild_offsets_in_range_only_fail_reads, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_frames_are_named_only_when_their_pool_cache_proves_them, setup,
			teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
