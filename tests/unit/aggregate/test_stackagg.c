// SPDX-License-Identifier: MIT
/*
 * test_stackagg.c - symbolized stack aggregation: frame order and suffixes, time-exact JIT
 * lookups deferred to settle, inline unfolding, unknown frames with modules, the
 * counted-exactly-once invariant, and the timeline (each counting's time, thread and stack).
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

#include "stackagg.h"

#define FG_TEST_ARRAY(a) (sizeof(a) / sizeof((a)[0]))

#define K_SYSCALL 0xffffffff81000100ull
#define K_UNKNOWN 0xffffffff8fff0000ull
#define LIBJVM 0x400000ull
#define JIT 0x7f0000001000ull

/* A fake JIT history: blob i covers [addr, addr+size) during [from, to). */
struct fake_blob {
	uint64_t addr, size, from, to;
	enum stackagg_jit_kind kind;
	int n;
	const char *names[4]; /* innermost first */
	uint16_t lines[4];    /* the resolver's lines for names[], 0 = none */
};

struct fake {
	const struct fake_blob *blobs;
	size_t nblobs;
	const char *libjvm_sym; /* name of [LIBJVM, LIBJVM + 0x1000) */
	int native_calls, jit_calls;
	uint32_t jvm_pid;
};

static int fake_kernel(void *ctx, uint64_t addr, const char **name, const char **module)
{
	(void)ctx;
	*module = "[kernel.kallsyms]";
	if (addr == K_SYSCALL) {
		*name = "do_syscall_64";
		return 0;
	}
	return -ENOENT;
}

static int fake_native(void *ctx, uint32_t pid, uint64_t addr, bool ret, struct stackagg_nsym *out)
{
	struct fake *f = ctx;

	(void)pid;
	(void)ret;
	f->native_calls++;
	if (addr >= LIBJVM && addr < LIBJVM + 0x100000) {
		out->module = "libjvm.so";
		if (addr < LIBJVM + 0x1000)
			out->name = f->libjvm_sym;
		if (addr >= LIBJVM + 0x80000 && addr < LIBJVM + 0x82000) {
			/* stripped: its label */
			out->name =
				addr < LIBJVM + 0x81000 ? "libjvm.so+0x80000" : "libjvm.so+0x81000";
			out->unresolved = true;
		}
		return 0;
	}
	if (addr >= 0x7f0000000000ull) {
		out->jit_candidate = true;
		return 0;
	}
	return -ENOENT;
}

static int fake_jit(void *ctx, uint32_t pid, uint64_t addr, uint64_t ts, bool ret, bool no_inline,
		    const char **names, size_t max, enum stackagg_jit_kind *kind, uint16_t *lines)
{
	struct fake *f = ctx;

	(void)ret;
	f->jit_calls++;
	if (pid != f->jvm_pid)
		return -ENOENT;
	for (size_t i = 0; i < f->nblobs; i++) {
		const struct fake_blob *b = &f->blobs[i];

		if (addr < b->addr || addr >= b->addr + b->size || ts < b->from || ts >= b->to)
			continue;
		*kind = b->kind;
		if (no_inline) {
			names[0] = b->names[b->n - 1];
			if (lines)
				lines[0] = b->lines[b->n - 1];
			return 1;
		}
		for (int k = 0; k < b->n && (size_t)k < max; k++) {
			names[k] = b->names[k];
			if (lines)
				lines[k] = b->lines[k];
		}
		return b->n;
	}
	return 0;
}

static const struct fake_blob blobs[] = {
	{ JIT, 0x100, 0, 150, STACKAGG_JIT_COMPILED, 1, { "Gen1::work" }, { 0 } },
	{ JIT, 0x100, 150, UINT64_MAX, STACKAGG_JIT_COMPILED, 1, { "Gen2::work" }, { 0 } },
	{ JIT + 0x1000,
	  0x100,
	  0,
	  UINT64_MAX,
	  STACKAGG_JIT_COMPILED,
	  3,
	  { "Chain::c", "Chain::b", "Chain::a" },
	  { 17, 0, 9 } },
	{ JIT + 0x2000, 0x100, 0, UINT64_MAX, STACKAGG_JIT_DYNAMIC, 1, { "Interpreter" }, { 0 } },
};

static struct fake fk;

static bool retry_misses;

static struct stackagg *new_agg(bool no_inline, bool no_kernel)
{
	struct stackagg_resolver r = {
		.ctx = &fk, .kernel = fake_kernel, .native = fake_native, .jit = fake_jit
	};
	struct stackagg_opts o = { .no_inline = no_inline,
				   .no_kernel = no_kernel,
				   .retry_misses = retry_misses };

	memset(&fk, 0, sizeof(fk));
	fk.blobs = blobs;
	fk.nblobs = FG_TEST_ARRAY(blobs);
	fk.libjvm_sym = "JavaThread::run()";
	fk.jvm_pid = 100;
	return stackagg_new(&o, &r);
}

/* The folded text of a (caller frees). */
static char *folded(struct stackagg *a)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(stackagg_write_folded(a, f), 0);
	fclose(f);
	return buf;
}

static void add(struct stackagg *a, uint64_t ts, const char *thread, const uint64_t *user,
		uint32_t nu, const uint64_t *kern, uint32_t nk)
{
	struct stackagg_sample s = {
		.pid = 100,
		.tid = 101,
		.ts = ts,
		.kernel = kern,
		.nr_kernel = nk,
		.user = user,
		.nr_user = nu,
		.thread = thread,
	};

	assert_int_equal(stackagg_sample(a, &s), 0);
}

/* stackagg_foreach_aux's callback: the stacks' weights and aux summed. */
static int sum_aux(void *arg, const uint32_t *ids, size_t n, uint64_t count, uint64_t aux)
{
	uint64_t *sum = arg;

	(void)ids;
	(void)n;
	sum[0] += count;
	sum[1] += aux;
	return 0;
}

static void test_an_allocation_sample_counts_its_objects_under_its_class(void **state)
{
	/* an allocation sample's walk: JIT leaf (waits for settle), then a native caller */
	uint64_t user[] = { JIT + 0x10, LIBJVM + 0x20 }, sum[2] = { 0 };
	struct stackagg *a = new_agg(false, false);
	struct stackagg_sample smp = { .pid = 100,
				       .tid = 101,
				       .ts = 100,
				       .user = user,
				       .nr_user = 2,
				       .thread = "main",
				       .leaf = "byte[]",
				       .leaf_stub = true,
				       .weight = 1600,
				       .aux = 3 };
	char *out;

	(void)state;
	assert_int_equal(stackagg_sample(a, &smp), 0);
	/* a stack without JIT frames is counted at once, aux beyond 32 bits capped */
	smp.user = user + 1;
	smp.nr_user = 1;
	smp.aux = 1ull << 40;
	assert_int_equal(stackagg_sample(a, &smp), 0);
	stackagg_settle(a, UINT64_MAX);
	out = folded(a);
	assert_string_equal(out, "main;JavaThread::run();Gen1::work_[j];byte[] 1600\n"
				 "main;JavaThread::run();byte[] 1600\n");
	free(out);
	assert_int_equal(stackagg_foreach_aux(a, sum_aux, sum), 0);
	assert_int_equal(sum[0], 3200);
	assert_int_equal(sum[1], 3 + (uint64_t)UINT32_MAX);
	stackagg_free(a);
}

static void test_frames_are_root_first_with_suffixes(void **state)
{
	/* Leaf first, as perf delivers: kernel leaf, then user leaf JIT (Gen1), caller libjvm. */
	uint64_t user[] = { JIT + 0x10, LIBJVM + 0x20 };
	uint64_t kern[] = { K_SYSCALL };
	struct stackagg *a = new_agg(false, false);
	char *out;

	(void)state;
	add(a, 100, "main", user, 2, kern, 1);
	stackagg_settle(a, UINT64_MAX);
	out = folded(a);
	assert_string_equal(out, "main;JavaThread::run();Gen1::work_[j];do_syscall_64_[k] 1\n");
	free(out);
	stackagg_free(a);
}

static void test_jit_lookup_waits_for_settle_and_uses_sample_time(void **state)
{
	uint64_t user[] = { JIT + 0x10 };
	struct stackagg *a = new_agg(false, false);
	struct stackagg_stats st;
	char *out;

	(void)state;
	add(a, 100, "main", user, 1, NULL, 0);
	add(a, 200, "main", user, 1, NULL, 0);
	add(a, 201, "main", user, 1, NULL, 0);
	assert_int_equal(fk.jit_calls, 0);
	stackagg_stats(a, &st);
	assert_int_equal(st.pending, 3);
	assert_int_equal(st.counted, 0);

	/* Settling up to 150 resolves only the first sample, with the blob live at 100. */
	assert_int_equal(stackagg_settle(a, 150), 1);
	assert_int_equal(stackagg_settle(a, UINT64_MAX), 2);
	out = folded(a);
	assert_string_equal(out, "main;Gen1::work_[j] 1\nmain;Gen2::work_[j] 2\n");
	free(out);
	stackagg_stats(a, &st);
	assert_int_equal(st.pending, 0);
	assert_int_equal(st.deferred, 3);
	assert_int_equal(st.frames[STACKAGG_CLASS_JAVA], 3);
	assert_int_equal(st.unresolved[STACKAGG_CLASS_JAVA], 0);
	stackagg_free(a);
}

static void test_settle_stops_at_first_later_sample(void **state)
{
	uint64_t user[] = { JIT + 0x10 };
	struct stackagg *a = new_agg(false, false);

	(void)state;
	add(a, 300, "main", user, 1, NULL, 0);
	add(a, 100, "main", user, 1, NULL, 0);
	/* Arrival order: the sample at 300 blocks the one at 100 (it waits for more history). */
	assert_int_equal(stackagg_settle(a, 200), 0);
	assert_int_equal(stackagg_settle(a, 300), 2);
	stackagg_free(a);
}

static void test_inline_chain_unfolds_outermost_first(void **state)
{
	uint64_t user[] = { JIT + 0x1010, LIBJVM + 0x2000 };
	struct stackagg *a = new_agg(false, false);
	struct stackagg_stats st;
	char *out;

	(void)state;
	add(a, 10, "main", user, 2, NULL, 0);
	stackagg_settle(a, UINT64_MAX);
	out = folded(a);
	assert_string_equal(
		out, "main;[unknown] (libjvm.so);Chain::a_[j];Chain::b_[i];Chain::c_[i] 1\n");
	free(out);
	stackagg_stats(a, &st);
	assert_int_equal(st.inlined, 2);
	assert_int_equal(st.unresolved[STACKAGG_CLASS_NATIVE], 1);
	stackagg_free(a);
}

static void test_no_inline_keeps_the_compiled_method_only(void **state)
{
	uint64_t user[] = { JIT + 0x1010 };
	struct stackagg *a = new_agg(true, false);
	char *out;

	(void)state;
	add(a, 10, "main", user, 1, NULL, 0);
	stackagg_settle(a, UINT64_MAX);
	out = folded(a);
	assert_string_equal(out, "main;Chain::a_[j] 1\n");
	free(out);
	stackagg_free(a);
}

/* With opts.lines, compiled and inlined frames carry the resolver's lines; 0 means none. */
static void test_lines_are_appended_where_known_and_counted_where_not(void **state)
{
	struct stackagg_resolver r = {
		.ctx = &fk, .kernel = fake_kernel, .native = fake_native, .jit = fake_jit
	};
	struct stackagg_opts o = { .lines = true };
	uint64_t user[] = { JIT + 0x1010, JIT + 0x10 };
	struct stackagg_stats st;
	struct stackagg *a;
	char *out;

	(void)state;
	memset(&fk, 0, sizeof(fk));
	fk.blobs = blobs;
	fk.nblobs = FG_TEST_ARRAY(blobs);
	fk.jvm_pid = 100;
	a = stackagg_new(&o, &r);
	assert_non_null(a);
	add(a, 10, "main", user, 2, NULL, 0);
	add(a, 11, "main", user, 2, NULL, 0);
	stackagg_settle(a, UINT64_MAX);
	out = folded(a);
	assert_string_equal(out,
			    "main;Gen1::work_[j];Chain::a:9_[j];Chain::b_[i];Chain::c:17_[i] 2\n");
	free(out);
	stackagg_stats(a, &st);
	assert_int_equal(st.jit_lines, 4);
	assert_int_equal(st.jit_no_line, 4);
	stackagg_free(a);

	/* --no-inline: the compiled method's own line (the chain's outermost). */
	o.no_inline = true;
	a = stackagg_new(&o, &r);
	add(a, 10, "main", user, 1, NULL, 0);
	stackagg_settle(a, UINT64_MAX);
	out = folded(a);
	assert_string_equal(out, "main;Chain::a:9_[j] 1\n");
	free(out);
	stackagg_free(a);

	/* Without opts.lines the resolver is not asked and nothing is counted. */
	a = new_agg(false, false);
	add(a, 10, "main", user, 1, NULL, 0);
	stackagg_settle(a, UINT64_MAX);
	out = folded(a);
	assert_string_equal(out, "main;Chain::a_[j];Chain::b_[i];Chain::c_[i] 1\n");
	free(out);
	stackagg_stats(a, &st);
	assert_int_equal(st.jit_lines + st.jit_no_line, 0);
	stackagg_free(a);
}

static void test_dynamic_code_is_a_stub_without_suffix(void **state)
{
	uint64_t user[] = { JIT + 0x2004, JIT + 0x10 };
	struct stackagg *a = new_agg(false, false);
	char *out;

	(void)state;
	add(a, 10, "main", user, 2, NULL, 0);
	stackagg_settle(a, UINT64_MAX);
	out = folded(a);
	assert_string_equal(out, "main;Gen1::work_[j];Interpreter 1\n");
	free(out);
	stackagg_free(a);
}

static void test_unresolved_frames_are_unknown_with_module_and_counted(void **state)
{
	/* JIT region miss, a non-JVM anonymous address, an unknown kernel address. */
	uint64_t user[] = { JIT + 0x9000 };
	uint64_t kern[] = { K_UNKNOWN };
	struct stackagg *a = new_agg(false, false);
	struct stackagg_sample s = {
		.pid = 7, .tid = 7, .ts = 5, .user = user, .nr_user = 1, .thread = "other"
	};
	struct stackagg_stats st;
	char *out;

	(void)state;
	add(a, 10, "main", user, 1, kern, 1);
	assert_int_equal(stackagg_sample(a, &s), 0);
	stackagg_settle(a, UINT64_MAX);
	out = folded(a);
	assert_string_equal(out, "main;[unknown] (jit)_[j];[unknown] ([kernel.kallsyms])_[k] 1\n"
				 "other;[unknown] (anon) 1\n");
	free(out);
	stackagg_stats(a, &st);
	assert_int_equal(st.unresolved[STACKAGG_CLASS_JAVA], 1);
	assert_int_equal(st.unresolved[STACKAGG_CLASS_NATIVE], 1);
	assert_int_equal(st.unresolved[STACKAGG_CLASS_KERNEL], 1);
	assert_int_equal(st.frames[STACKAGG_CLASS_KERNEL], 1);
	stackagg_free(a);
}

static void test_no_kernel_drops_kernel_frames(void **state)
{
	uint64_t user[] = { LIBJVM + 0x10 };
	uint64_t kern[] = { K_SYSCALL };
	struct stackagg *a = new_agg(false, true);
	char *out;

	(void)state;
	add(a, 10, "main", user, 1, kern, 1);
	out = folded(a);
	assert_string_equal(out, "main;JavaThread::run() 1\n");
	free(out);
	stackagg_free(a);
}

static void test_separator_and_control_bytes_in_names_are_replaced(void **state)
{
	uint64_t user[] = { LIBJVM + 0x10 };
	struct stackagg *a = new_agg(false, false);
	char *out;

	(void)state;
	fk.libjvm_sym = "a;b\nc";
	add(a, 10, "th;r", user, 1, NULL, 0);
	out = folded(a);
	assert_string_equal(out, "th:r;a:b?c 1\n");
	free(out);
	stackagg_free(a);
}

static void test_process_root_and_missing_thread_name(void **state)
{
	uint64_t user[] = { LIBJVM + 0x10 };
	struct stackagg *a = new_agg(false, false);
	struct stackagg_sample s = {
		.pid = 100, .tid = 123, .ts = 5, .user = user, .nr_user = 1, .process = "java-100"
	};
	char *out;

	(void)state;
	assert_int_equal(stackagg_sample(a, &s), 0);
	out = folded(a);
	assert_string_equal(out, "java-100;[tid 123];JavaThread::run() 1\n");
	free(out);
	stackagg_free(a);
}

/*
 * --no-per-thread: no thread-name root frame, so two threads' identical stacks are one stack
 * (async-profiler's merged view); the process root frame stays. By default (--per-thread) they
 * are two stacks under their names.
 */
static void test_no_thread_merges_the_threads_stacks(void **state)
{
	uint64_t user[] = { JIT + 0x10, LIBJVM + 0x20 };
	struct stackagg_resolver r = {
		.ctx = &fk, .kernel = fake_kernel, .native = fake_native, .jit = fake_jit
	};
	struct stackagg_opts o = { .no_thread = true };
	const char *threads[] = { "worker-1", "worker-2", "main" };
	struct stackagg *per, *merged;
	struct stackagg_stats st;
	char *out;

	(void)state;
	per = new_agg(false, false);
	merged = stackagg_new(&o, &r);
	assert_non_null(merged);
	for (int i = 0; i < 6; i++) {
		struct stackagg_sample s = { .pid = 100,
					     .tid = 101 + (uint32_t)(i % 3),
					     .ts = 100,
					     .user = user,
					     .nr_user = 2,
					     .thread = threads[i % 3],
					     .process = i % 3 == 2 ? "java-100" : NULL };

		assert_int_equal(stackagg_sample(per, &s), 0);
		assert_int_equal(stackagg_sample(merged, &s), 0);
	}
	stackagg_settle(per, UINT64_MAX);
	stackagg_settle(merged, UINT64_MAX);
	out = folded(per);
	assert_non_null(strstr(out, "worker-1;JavaThread::run();Gen1::work_[j] 2\n"));
	assert_non_null(strstr(out, "worker-2;JavaThread::run();Gen1::work_[j] 2\n"));
	assert_non_null(strstr(out, "java-100;main;JavaThread::run();Gen1::work_[j] 2\n"));
	free(out);
	out = folded(merged);
	assert_string_equal(out, "JavaThread::run();Gen1::work_[j] 4\n"
				 "java-100;JavaThread::run();Gen1::work_[j] 2\n");
	free(out);
	stackagg_stats(merged, &st);
	assert_int_equal(st.stacks, 2);
	assert_int_equal(st.counted, 6);
	stackagg_free(per);
	stackagg_free(merged);
}

static void test_identical_stacks_are_counted_together(void **state)
{
	uint64_t u1[] = { LIBJVM + 0x10 };
	uint64_t u2[] = { LIBJVM + 0x2000 };
	struct stackagg *a = new_agg(false, false);
	struct stackagg_stats st;
	char *out;

	(void)state;
	for (int i = 0; i < 1000; i++)
		add(a, (uint64_t)i, "main", i % 4 ? u1 : u2, 1, NULL, 0);
	out = folded(a);
	assert_string_equal(out, "main;JavaThread::run() 750\nmain;[unknown] (libjvm.so) 250\n");
	free(out);
	stackagg_stats(a, &st);
	assert_int_equal(st.stacks, 2);
	/* The resolution cache: two distinct addresses, two resolver calls. */
	assert_int_equal(fk.native_calls, 2);
	stackagg_free(a);
}

static void test_maps_changed_forgets_cached_resolutions(void **state)
{
	uint64_t user[] = { LIBJVM + 0x10 };
	struct stackagg *a = new_agg(false, false);
	char *out;

	(void)state;
	add(a, 1, "main", user, 1, NULL, 0);
	fk.libjvm_sym = "Other::fn()";
	add(a, 2, "main", user, 1, NULL, 0); /* cached: still the old name */
	stackagg_maps_changed(a);
	add(a, 3, "main", user, 1, NULL, 0);
	out = folded(a);
	assert_string_equal(out, "main;JavaThread::run() 2\nmain;Other::fn() 1\n");
	free(out);
	stackagg_free(a);
}

static void test_every_sample_is_counted_exactly_once(void **state)
{
	struct stackagg *a;
	struct stackagg_stats st;
	uint64_t user[8], kern[2] = { K_SYSCALL, K_UNKNOWN };
	uint64_t total = 0;
	unsigned int seed = 12345;

	(void)state;
	retry_misses = true; /* misses wait for the final settle: still counted exactly once */
	a = new_agg(false, false);
	retry_misses = false;
	for (int i = 0; i < 20000; i++) {
		uint32_t nu = (uint32_t)(rand_r(&seed) % 8);

		for (uint32_t k = 0; k < nu; k++) {
			switch (rand_r(&seed) % 4) {
			case 0:
				user[k] = LIBJVM + (uint64_t)(rand_r(&seed) % 0x2000);
				break;
			case 1:
				user[k] = JIT + (uint64_t)(rand_r(&seed) % 0x3000);
				break;
			case 2:
				user[k] = 0x1000 + (uint64_t)(rand_r(&seed) % 100);
				break;
			default:
				user[k] = 0;
				break;
			}
		}
		add(a, (uint64_t)i, i % 3 ? "main" : NULL, user, nu, kern, (uint32_t)(i % 3));
		if (i % 1000 == 999)
			stackagg_settle(a, (uint64_t)i - 500);
	}
	stackagg_settle(a, UINT64_MAX);
	stackagg_stats(a, &st);
	assert_int_equal(st.samples, 20000);
	assert_int_equal(st.pending, 0);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.counted, 20000);
	/* The per-stack counts add up to the same number. */
	char *out = folded(a);
	for (char *p = out; *p;) {
		char *nl = strchr(p, '\n');
		char *sp;

		assert_non_null(nl);
		*nl = '\0';
		sp = strrchr(p, ' ');
		assert_non_null(sp);
		total += strtoull(sp + 1, NULL, 10);
		p = nl + 1;
	}
	assert_int_equal(total, 20000);
	free(out);
	stackagg_free(a);
}

static void test_overlong_stacks_are_truncated_and_counted(void **state)
{
	static uint64_t user[STACKAGG_MAX_FRAMES + 100];
	struct stackagg *a = new_agg(false, false);
	struct stackagg_stats st;

	(void)state;
	for (size_t i = 0; i < FG_TEST_ARRAY(user); i++)
		user[i] = LIBJVM + 0x10;
	add(a, 1, "main", user, (uint32_t)FG_TEST_ARRAY(user), NULL, 0);
	stackagg_stats(a, &st);
	assert_int_equal(st.truncated, 1);
	assert_int_equal(st.counted, 1);
	stackagg_free(a);
}

static const struct fake_blob late_blobs[] = {
	{ JIT + 0x5000, 0x100, 90, UINT64_MAX, STACKAGG_JIT_COMPILED, 1, { "Late::m" }, { 0 } },
};

static void test_jit_miss_is_retried_at_the_end_with_the_whole_history(void **state)
{
	uint64_t user[] = { JIT + 0x5010 };
	struct stackagg *a;
	struct stackagg_stats st;
	char *out;

	(void)state;
	retry_misses = true;
	a = new_agg(false, false);
	retry_misses = false;
	fk.nblobs = 0; /* the load event has not arrived yet */
	add(a, 100, "main", user, 1, NULL, 0);
	assert_int_equal(stackagg_settle(a, 150), 1);
	stackagg_stats(a, &st);
	assert_int_equal(st.counted, 0);
	assert_int_equal(st.pending, 1);
	assert_int_equal(st.retried, 1);
	assert_int_equal(st.unresolved[STACKAGG_CLASS_JAVA], 0); /* the miss is not counted */
	/* The event arrives (load ts 90, before the sample), after the settle delay. */
	fk.blobs = late_blobs;
	fk.nblobs = FG_TEST_ARRAY(late_blobs);
	stackagg_settle(a, UINT64_MAX);
	out = folded(a);
	assert_string_equal(out, "main;Late::m_[j] 1\n");
	free(out);
	stackagg_stats(a, &st);
	assert_int_equal(st.late_resolved, 1);
	assert_int_equal(st.pending, 0);
	assert_int_equal(st.counted, 1);
	assert_int_equal(st.frames[STACKAGG_CLASS_JAVA], 1);
	assert_int_equal(st.unresolved[STACKAGG_CLASS_JAVA], 0);
	stackagg_free(a);
}

static void test_jit_miss_without_retry_is_unknown_at_once(void **state)
{
	uint64_t user[] = { JIT + 0x5010 };
	struct stackagg *a = new_agg(false, false);
	struct stackagg_stats st;
	char *out;

	(void)state;
	add(a, 100, "main", user, 1, NULL, 0);
	stackagg_settle(a, 150);
	out = folded(a);
	assert_string_equal(out, "main;[unknown] (jit)_[j] 1\n");
	free(out);
	stackagg_stats(a, &st);
	assert_int_equal(st.retried, 0);
	assert_int_equal(st.unresolved[STACKAGG_CLASS_JAVA], 1);
	stackagg_free(a);
}

static char mutable_name[32];

static int jit_mutable(void *ctx, uint32_t pid, uint64_t addr, uint64_t ts, bool ret,
		       bool no_inline, const char **names, size_t max, enum stackagg_jit_kind *kind,
		       uint16_t *lines)
{
	(void)ctx, (void)pid, (void)addr, (void)ts, (void)ret, (void)no_inline, (void)max;
	(void)lines;
	*kind = STACKAGG_JIT_COMPILED;
	names[0] = mutable_name;
	return 1;
}

static void test_jit_names_are_reread_after_jit_changed(void **state)
{
	struct stackagg_resolver r = { .native = fake_native, .jit = jit_mutable, .ctx = &fk };
	uint64_t user[] = { JIT + 0x10 };
	struct stackagg *a;
	char *out;

	(void)state;
	memset(&fk, 0, sizeof(fk));
	a = stackagg_new(NULL, &r);
	snprintf(mutable_name, sizeof(mutable_name), "Old::m");
	add(a, 1, "main", user, 1, NULL, 0);
	stackagg_settle(a, UINT64_MAX);
	/* The table changed (same pointer, new text): the caller says so, the new name is used. */
	snprintf(mutable_name, sizeof(mutable_name), "New::m");
	stackagg_jit_changed(a);
	add(a, 2, "main", user, 1, NULL, 0);
	stackagg_settle(a, UINT64_MAX);
	out = folded(a);
	assert_string_equal(out, "main;New::m_[j] 1\nmain;Old::m_[j] 1\n");
	free(out);
	stackagg_free(a);
}

static void test_caller_named_interpreted_frames_get_the_interpreted_mark(void **state)
{
	/* The interpreter's blob at JIT + 0x2000: named by the caller (javaframes) frame by
	 * frame; frames it leaves alone resolve as usual (here: the Interpreter stub). */
	uint64_t user[] = { JIT + 0x2010, JIT + 0x2020, JIT + 0x2030, LIBJVM + 0x20 };
	const struct stackagg_uframe uf[] = {
		{ "a.Leaf::spin:60", false, false },
		{ "[unknown] (interpreted)", true, false },
		{ NULL, false, false },
		{ NULL, false, false },
	};
	struct stackagg_sample s = {
		.pid = 100,
		.tid = 101,
		.ts = 10,
		.user = user,
		.nr_user = 4,
		.uframes = uf,
		.thread = "main",
	};
	struct stackagg *a = new_agg(false, false);
	struct stackagg_stats st;
	char *out;

	(void)state;
	assert_int_equal(stackagg_sample(a, &s), 0);
	stackagg_settle(a, UINT64_MAX);
	out = folded(a);
	assert_string_equal(out, "main;JavaThread::run();Interpreter;[unknown] "
				 "(interpreted)_[0];a.Leaf::spin:60_[0] 1\n");
	free(out);
	stackagg_stats(a, &st);
	assert_int_equal(st.interpreted, 2);
	assert_int_equal(st.frames[STACKAGG_CLASS_JAVA], 3);
	assert_int_equal(st.unresolved[STACKAGG_CLASS_JAVA], 1);
	assert_string_equal(stackagg_suffix(STACKAGG_INTERP), "_[0]");
	assert_int_equal(stackagg_kind_class(STACKAGG_INTERP), STACKAGG_CLASS_JAVA);
	stackagg_free(a);
}

static void test_markers_and_stacks_that_reach_a_thread_root(void **state)
{
	/* leaf JIT frame, libjvm's thread entry as the outermost frame, then a stack cut short
	 * by a `[truncated]` marker above the same leaf. */
	uint64_t user[] = { JIT + 0x10, LIBJVM + 0x20 };
	uint64_t cut[] = { JIT + 0x10, 1 };
	const struct stackagg_uframe marks[] = { { NULL, false, false },
						 { "[truncated]", true, true } };
	struct stackagg_sample s = {
		.pid = 100, .tid = 101, .ts = 10, .user = user, .nr_user = 2, .thread = "main"
	};
	struct stackagg *a = new_agg(false, false);
	struct stackagg_stats st;
	char *out;

	(void)state;
	fk.libjvm_sym = "thread_native_entry";
	assert_int_equal(stackagg_sample(a, &s), 0);
	s.user = cut;
	s.uframes = marks;
	assert_int_equal(stackagg_sample(a, &s), 0);
	fk.libjvm_sym = "JavaThread::run()";
	s.user = user;
	s.uframes = NULL;
	stackagg_maps_changed(a);
	assert_int_equal(stackagg_sample(a, &s), 0);
	stackagg_settle(a, UINT64_MAX);
	out = folded(a);
	assert_string_equal(out, "main;JavaThread::run();Gen1::work_[j] 1\n"
				 "main;[truncated];Gen1::work_[j] 1\n"
				 "main;thread_native_entry;Gen1::work_[j] 1\n");
	free(out);
	stackagg_stats(a, &st);
	assert_int_equal(st.markers, 1);
	assert_int_equal(st.user_stacks, 3);
	assert_int_equal(st.rooted, 1);
	assert_int_equal(st.interpreted, 0);
	stackagg_free(a);
}

static void test_an_unnamed_frame_the_unwinder_proved_outermost_is_a_root(void **state)
{
	/* a stripped library's thread start, below a JIT leaf: unnamed, proved by its CFI */
	uint64_t user[] = { JIT + 0x10, LIBJVM + 0x81000 };
	struct stackagg_sample s = {
		.pid = 100, .tid = 101, .ts = 10, .user = user, .nr_user = 2, .thread = "main"
	};
	struct stackagg_opts o = { .mark_unrooted = true };
	struct stackagg_resolver r = {
		.ctx = &fk, .kernel = fake_kernel, .native = fake_native, .jit = fake_jit
	};
	struct stackagg *a = new_agg(false, false);
	struct stackagg_stats st;
	char *out;

	(void)state;
	stackagg_free(a);
	a = stackagg_new(&o, &r);
	assert_non_null(a);
	/* not proved: cut short, so marked */
	assert_int_equal(stackagg_sample(a, &s), 0);
	/* proved: a root, in this stack and any other through the same address */
	user[1] = LIBJVM + 0x80000;
	s.user_rooted = true;
	assert_int_equal(stackagg_sample(a, &s), 0);
	s.user_rooted = false;
	assert_int_equal(stackagg_sample(a, &s), 0);
	/* an [unknown] placeholder is never made a root */
	user[1] = LIBJVM + 0x4000;
	s.user_rooted = true;
	assert_int_equal(stackagg_sample(a, &s), 0);
	stackagg_settle(a, UINT64_MAX);
	out = folded(a);
	assert_string_equal(out, "main;[truncated];[unknown] (libjvm.so);Gen1::work_[j] 1\n"
				 "main;[truncated];libjvm.so+0x81000;Gen1::work_[j] 1\n"
				 "main;libjvm.so+0x80000;Gen1::work_[j] 2\n");
	free(out);
	stackagg_stats(a, &st);
	assert_int_equal(st.user_stacks, 4);
	assert_int_equal(st.rooted, 2);
	stackagg_free(a);
}

static void test_unnamed_native_frames_are_counted_by_library(void **state)
{
	uint64_t user[] = { JIT + 0x10, LIBJVM + 0x80000, LIBJVM + 0x81000, LIBJVM + 0x20 };
	struct stackagg_sample s = {
		.pid = 100, .tid = 101, .ts = 10, .user = user, .nr_user = 4, .thread = "main"
	};
	struct stackagg *a = new_agg(false, false);
	struct stackagg_stats st;

	(void)state;
	assert_int_equal(stackagg_sample(a, &s), 0);
	assert_int_equal(stackagg_sample(a, &s), 0); /* the second from the cache */
	stackagg_settle(a, UINT64_MAX);
	stackagg_stats(a, &st);
	assert_int_equal(st.n_unnamed_libs, 1);
	assert_string_equal(st.unnamed[0].lib, "libjvm.so");
	assert_int_equal(st.unnamed[0].frames, 4); /* the named JavaThread::run() is not */
	assert_int_equal(st.unresolved[STACKAGG_CLASS_NATIVE], 4);
	stackagg_free(a);
}

static double half_and_triple(void *arg, uint32_t stratum)
{
	(void)arg;
	return stratum == 1 ? 0.5 : stratum == 2 ? 3.0 : 1.0;
}

/* vroot's fake: tid 101 carries "[virtual threads] vt-N" during [100, 200]. */
static const char *fake_vroot(void *vctx, uint32_t pid, uint32_t tid, uint64_t ts)
{
	int *asked = vctx;

	(*asked)++;
	return pid == 100 && tid == 101 && ts >= 100 && ts <= 200 ? "[virtual threads] vt-N" : NULL;
}

/*
 * A carrier's sample is rooted at settle under the virtual thread mounted at its time, with
 * "[pinned]" before an off-CPU leaf; outside every mount it keeps the carrier's root; a process
 * root stays above the virtual thread's.
 */
static void test_a_carriers_samples_are_rooted_under_the_mounted_virtual_thread(void **state)
{
	uint64_t user[] = { LIBJVM + 0x20 };
	struct stackagg_opts o = { 0 };
	struct stackagg_resolver r = { .ctx = &fk,
				       .kernel = fake_kernel,
				       .native = fake_native,
				       .jit = fake_jit,
				       .vroot = fake_vroot };
	struct stackagg *a;
	struct stackagg_sample s = { .pid = 100,
				     .tid = 101,
				     .user = user,
				     .nr_user = 1,
				     .thread = "ForkJoinPool-1-worker-1",
				     .vroot = true };
	int asked = 0;
	char *out;

	(void)state;
	r.vctx = &asked;
	memset(&fk, 0, sizeof(fk));
	fk.libjvm_sym = "JavaThread::run()";
	a = stackagg_new(&o, &r);
	s.ts = 150; /* mounted: CPU */
	assert_int_equal(stackagg_sample(a, &s), 0);
	s.ts = 160; /* mounted, off the CPU: pinned */
	s.leaf = "[off-cpu: sleeping]";
	s.pin = true;
	assert_int_equal(stackagg_sample(a, &s), 0);
	s.ts = 300; /* the carrier's own wait */
	assert_int_equal(stackagg_sample(a, &s), 0);
	s.process = "java/100"; /* below a process root */
	s.ts = 170;
	assert_int_equal(stackagg_sample(a, &s), 0);
	assert_int_equal(asked, 0); /* asked at settle, not before */
	assert_int_equal(stackagg_settle(a, UINT64_MAX), 4);
	assert_int_equal(asked, 4);
	out = folded(a);
	assert_non_null(strstr(out, "[virtual threads] vt-N;JavaThread::run() 1\n"));
	assert_non_null(strstr(
		out,
		"[virtual threads] vt-N;JavaThread::run();[pinned];[off-cpu: sleeping]_[k] 1\n"));
	assert_non_null(strstr(
		out, "ForkJoinPool-1-worker-1;JavaThread::run();[off-cpu: sleeping]_[k] 1\n"));
	assert_non_null(strstr(
		out,
		"java/100;[virtual threads] vt-N;JavaThread::run();[pinned];[off-cpu: sleeping]_[k] 1\n"));
	free(out);
	stackagg_free(a);
}

static void test_strata_are_scaled_and_merged_when_folded(void **state)
{
	uint64_t u1[] = { LIBJVM + 0x10 };
	uint64_t u2[] = { JIT + 0x10 };
	struct stackagg *a = new_agg(false, false);
	struct stackagg_sample s = { .pid = 100, .tid = 101, .thread = "main", .nr_user = 1 };
	struct stackagg_stats st;
	char *out;

	(void)state;
	/* The same frames in strata 1 and 2 and in none; a JIT stack of stratum 2 waits. */
	s.user = u1;
	s.weight = 100;
	s.stratum = 1;
	assert_int_equal(stackagg_sample(a, &s), 0);
	s.stratum = 2;
	assert_int_equal(stackagg_sample(a, &s), 0);
	s.stratum = 0;
	s.weight = 7;
	assert_int_equal(stackagg_sample(a, &s), 0);
	s.user = u2;
	s.weight = 10;
	s.stratum = 2;
	assert_int_equal(stackagg_sample(a, &s), 0);
	stackagg_stats(a, &st);
	assert_int_equal(st.stacks, 3); /* unfolded: each stratum apart */
	assert_int_equal(st.user_stacks, 3);
	stackagg_settle(a, UINT64_MAX);
	assert_int_equal(stackagg_fold_strata(a, half_and_triple, NULL), 0);
	out = folded(a);
	/* 100 x 0.5 + 100 x 3 + 7; 10 x 3 */
	assert_string_equal(out, "main;Gen1::work_[j] 30\nmain;JavaThread::run() 357\n");
	free(out);
	stackagg_stats(a, &st);
	assert_int_equal(st.stacks, 2);
	assert_int_equal(st.counted, 4); /* samples, not weight */
	stackagg_free(a);
}

/* The frames of timeline entry i's stack as folded text ("a;b"), into buf. */
static const char *tl_stack(struct stackagg *a, size_t i, char *buf, size_t len)
{
	size_t n, nids, off = 0;
	const struct stackagg_tsample *t = stackagg_timeline(a, &n);
	const uint32_t *ids;

	assert_true(i < n);
	ids = stackagg_stack_ids(a, t[i].stack, &nids);
	assert_non_null(ids);
	buf[0] = '\0';
	for (size_t k = 0; k < nids; k++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", k ? ";" : "",
					stackagg_frame_name(a, ids[k]));
	return buf;
}

static void test_timeline_keeps_each_countings_time_thread_and_stack(void **state)
{
	struct stackagg_resolver r = {
		.ctx = &fk, .kernel = fake_kernel, .native = fake_native, .jit = fake_jit
	};
	struct stackagg_opts o = { .timeline = true };
	uint64_t u1[] = { LIBJVM + 0x10 };
	uint64_t u2[] = { JIT + 0x10 };
	struct stackagg *a, *off = new_agg(false, false);
	struct stackagg_sample s = { .pid = 100, .tid = 7, .thread = "main", .nr_user = 1 };
	const struct stackagg_tsample *t;
	char buf[256];
	size_t n;

	(void)state;
	a = stackagg_new(&o, &r);
	assert_non_null(a);
	/* A native stack at 50, a JIT one at 100 (waits, and is settled after the next), a native
	 * one of another thread at 200 weighing 5. */
	s.user = u1;
	s.ts = 50;
	assert_int_equal(stackagg_sample(a, &s), 0);
	assert_int_equal(stackagg_sample(off, &s), 0);
	s.user = u2;
	s.ts = 100;
	assert_int_equal(stackagg_sample(a, &s), 0);
	s.user = u1;
	s.ts = 200;
	s.tid = 8;
	s.thread = "worker";
	s.weight = 5;
	assert_int_equal(stackagg_sample(a, &s), 0);
	stackagg_settle(a, UINT64_MAX);
	t = stackagg_timeline(a, &n);
	assert_int_equal(n, 3);
	assert_int_equal(t[0].ts, 50);
	assert_int_equal(t[0].tid, 7);
	assert_int_equal(t[0].weight, 1);
	assert_string_equal(tl_stack(a, 0, buf, sizeof(buf)), "main;JavaThread::run()");
	assert_int_equal(t[1].ts, 200); /* counted before the deferred one */
	assert_int_equal(t[1].tid, 8);
	assert_int_equal(t[1].weight, 5);
	assert_string_equal(tl_stack(a, 1, buf, sizeof(buf)), "worker;JavaThread::run()");
	assert_int_equal(t[2].ts, 100);
	assert_int_equal(t[2].tid, 7);
	assert_string_equal(tl_stack(a, 2, buf, sizeof(buf)), "main;Gen1::work");
	/* Off by default: nothing kept. */
	(void)stackagg_timeline(off, &n);
	assert_int_equal(n, 0);
	stackagg_reset(a);
	(void)stackagg_timeline(a, &n);
	assert_int_equal(n, 0);
	stackagg_free(a);
	stackagg_free(off);
}

/* One named stack of labelled frames ("a;b;c") under thread, weight w; cut: "[truncated]"
 * after the roots. */
static void add_named(struct stackagg *a, const char *thread, bool cut, const char *frames,
		      uint64_t w)
{
	struct stackagg_nframe nf[16];
	struct stackagg_named nm = {
		.tid = 5, .thread = thread, .truncated = cut, .frames = nf, .labelled = true
	};
	const char *p = frames;

	while (*p && nm.n < 16) {
		const char *e = strchr(p, ';');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		nf[nm.n++] = (struct stackagg_nframe){ p, len, 0 };
		p += len + (e ? 1 : 0);
	}
	assert_int_equal(stackagg_named(a, &nm, w, 0), 0);
}

static void test_cut_stacks_under_a_root_get_the_callers_of_whole_stacks(void **state)
{
	struct stackagg *a = new_agg(false, false);
	struct stackagg_graft_stats st;
	char *out;

	(void)state;
	assert_non_null(a);
	/* Whole stacks: the socket read under queryDb (3 parts) and under render (1 part). */
	add_named(a, "[virtual threads]", false,
		  "VirtualThread::run_[j];App::serve_[j];App::queryDb_[j];Sock::read_[j];"
		  "Sock::park_[j]",
		  300);
	add_named(a, "[virtual threads]", false,
		  "VirtualThread::run_[j];App::serve_[j];App::render_[j];Sock::read_[j]", 100);
	add_named(a, "[virtual threads]", false,
		  "VirtualThread::run_[j];App::serve_[j];App::queryDb_[j]", 50);
	/* Another root's whole stack lends nothing to these. */
	add_named(a, "ForkJoinPool-1-worker-1", false, "Pool::idle_[j];Sock::read_[j]", 1000);
	/* Cut at a return barrier: the walked frames from Sock::read (another kind here). */
	add_named(a, "[virtual threads]", true, "Sock::read_[i];Sock::recv_[j]", 80);
	add_named(a, "[virtual threads]", true, "Other::spin_[j]", 7); /* no whole stack has it */
	add_named(a, "ForkJoinPool-1-worker-1", true, "Sock::read_[j]", 5); /* not the root */
	assert_int_equal(stackagg_graft_cut(a, "[virtual threads]", "[callers]", &st), 0);
	assert_int_equal(st.cut, 2);
	assert_int_equal(st.cut_w, 87);
	assert_int_equal(st.grafted, 1);
	assert_int_equal(st.grafted_w, 80);
	out = folded(a);
	assert_non_null(strstr(out,
			       "[virtual threads];VirtualThread::run_[j];App::serve_[j];"
			       "App::queryDb_[j];[callers];Sock::read_[i];Sock::recv_[j] 60\n"));
	assert_non_null(strstr(out,
			       "[virtual threads];VirtualThread::run_[j];App::serve_[j];"
			       "App::render_[j];[callers];Sock::read_[i];Sock::recv_[j] 20\n"));
	assert_null(strstr(out, "[virtual threads];[truncated];Sock::read"));
	assert_non_null(strstr(out, "[virtual threads];[truncated];Other::spin_[j] 7\n"));
	assert_non_null(strstr(out, "ForkJoinPool-1-worker-1;[truncated];Sock::read_[j] 5\n"));
	assert_null(strstr(out, "ForkJoinPool-1-worker-1;Pool::idle_[j];[callers]"));
	free(out);
	/* Again: nothing left to graft, nothing changes. */
	assert_int_equal(stackagg_graft_cut(a, "[virtual threads]", "[callers]", &st), 0);
	assert_int_equal(st.grafted, 0);
	assert_int_equal(st.cut, 1);
	stackagg_free(a);
}

static void test_graft_stats_add_every_count(void **state)
{
	struct stackagg_graft_stats a = { .cut = 1,
					  .cut_w = 2,
					  .grafted = 3,
					  .grafted_w = 4,
					  .too_deep = 5,
					  .failed = 6,
					  .over_budget = 7 };
	const struct stackagg_graft_stats b = { .cut = 10,
						.cut_w = 20,
						.grafted = 30,
						.grafted_w = 40,
						.too_deep = 50,
						.failed = 60,
						.over_budget = 70,
						.timeline = true };

	(void)state;
	stackagg_graft_stats_add(&a, &b);
	assert_int_equal(a.cut, 11);
	assert_int_equal(a.cut_w, 22);
	assert_int_equal(a.grafted, 33);
	assert_int_equal(a.grafted_w, 44);
	assert_int_equal(a.too_deep, 55);
	assert_int_equal(a.failed, 66);
	assert_int_equal(a.over_budget, 77);
	assert_true(a.timeline);
}

static void test_a_grafted_weight_is_moved_whole_with_uneven_shares(void **state)
{
	struct stackagg *a = new_agg(false, false);
	struct stackagg_graft_stats st;
	uint64_t sum[2] = { 0, 0 };

	(void)state;
	assert_non_null(a);
	add_named(a, "[virtual threads]", false, "R::run_[j];A::a_[j];X::x_[j]", 1);
	add_named(a, "[virtual threads]", false, "R::run_[j];B::b_[j];X::x_[j]", 1);
	add_named(a, "[virtual threads]", false, "R::run_[j];C::c_[j];X::x_[j]", 1);
	add_named(a, "[virtual threads]", true, "X::x_[j];Y::y_[j]", 100);
	assert_int_equal(stackagg_graft_cut(a, "[virtual threads]", "[callers]", &st), 0);
	assert_int_equal(st.grafted_w, 100);
	assert_int_equal(stackagg_foreach_aux(a, sum_aux, sum), 0);
	assert_int_equal(sum[0], 103); /* 3 whole + 100 moved, none lost to rounding */
	stackagg_free(a);
}

static void test_a_cut_stack_takes_the_callers_of_the_most_alike_whole_stacks(void **state)
{
	struct stackagg *a = new_agg(false, false);
	struct stackagg_graft_stats st;
	char *out;

	(void)state;
	assert_non_null(a);
	/* Sock::read then Sock::recv only under queryDb; Sock::read alone under render too. */
	add_named(a, "[virtual threads]", false,
		  "R::run_[j];App::queryDb_[j];Sock::read_[j];Sock::recv_[j];Sock::poll_[j]", 10);
	add_named(a, "[virtual threads]", false, "R::run_[j];App::render_[j];Sock::read_[j]", 1000);
	add_named(a, "[virtual threads]", true, "Sock::read_[j];Sock::recv_[j]", 40);
	assert_int_equal(stackagg_graft_cut(a, "[virtual threads]", "[callers]", &st), 0);
	assert_int_equal(st.grafted_w, 40);
	out = folded(a);
	assert_non_null(strstr(out, "[virtual threads];R::run_[j];App::queryDb_[j];[callers];"
				    "Sock::read_[j];Sock::recv_[j] 40\n"));
	assert_null(strstr(out, "App::render_[j];[callers]"));
	free(out);
	stackagg_free(a);
}

static void test_timeline_follows_folded_strata_and_named_stacks(void **state)
{
	struct stackagg_resolver r = {
		.ctx = &fk, .kernel = fake_kernel, .native = fake_native, .jit = fake_jit
	};
	struct stackagg_opts o = { .timeline = true };
	uint64_t u1[] = { LIBJVM + 0x10 };
	struct stackagg_nframe nf[] = { { "Alloc.make", 10, 0 } };
	struct stackagg_named nm = {
		.tid = 9, .thread = "alloc", .frames = nf, .n = 1, .leaf = "byte[]", .ts = 300
	};
	struct stackagg *a;
	struct stackagg_sample s = {
		.pid = 100, .tid = 7, .thread = "main", .nr_user = 1, .user = u1, .weight = 100
	};
	const struct stackagg_tsample *t;
	char buf[256];
	size_t n;

	(void)state;
	stackagg_free(new_agg(false, false)); /* sets the fake resolvers up */
	a = stackagg_new(&o, &r);
	assert_non_null(a);
	s.ts = 10;
	s.stratum = 1; /* x 0.5 */
	assert_int_equal(stackagg_sample(a, &s), 0);
	s.ts = 20;
	s.stratum = 2; /* x 3 */
	assert_int_equal(stackagg_sample(a, &s), 0);
	s.ts = 30;
	s.stratum = 0;
	assert_int_equal(stackagg_sample(a, &s), 0);
	assert_int_equal(stackagg_named(a, &nm, 64, 1), 0);
	assert_int_equal(stackagg_fold_strata(a, half_and_triple, NULL), 0);
	t = stackagg_timeline(a, &n);
	assert_int_equal(n, 4);
	assert_int_equal(t[0].weight, 50);
	assert_int_equal(t[1].weight, 300);
	assert_int_equal(t[2].weight, 100);
	assert_int_equal(t[0].stack, t[1].stack); /* merged into one stack by the fold */
	assert_int_equal(t[0].stack, t[2].stack);
	assert_string_equal(tl_stack(a, 0, buf, sizeof(buf)), "main;JavaThread::run()");
	assert_int_equal(t[3].ts, 300);
	assert_int_equal(t[3].tid, 9);
	assert_int_equal(t[3].weight, 64);
	assert_string_equal(tl_stack(a, 3, buf, sizeof(buf)), "alloc;Alloc.make;byte[]");
	assert_int_equal(stackagg_stack_count(a), 2);
	assert_null(stackagg_stack_ids(a, 2, &n));
	stackagg_free(a);
}

static double zero(void *arg, uint32_t stratum)
{
	(void)arg;
	(void)stratum;
	return 0.0;
}

static void test_a_mark_stands_in_for_a_stack_and_a_stratum_scaled_to_zero_goes(void **state)
{
	struct stackagg *a = new_agg(false, false);
	struct stackagg_sample s = { .pid = 100,
				     .tid = 101,
				     .thread = "idle",
				     .mark = "[no stack sampled]",
				     .leaf = "[off-cpu: sleeping]",
				     .weight = 8000000 };
	uint64_t u1[] = { LIBJVM + 0x10 };
	struct stackagg_stats st;
	char *out;

	(void)state;
	assert_int_equal(stackagg_sample(a, &s), 0);
	s = (struct stackagg_sample){
		.pid = 100, .tid = 102, .thread = "w", .user = u1, .nr_user = 1, .stratum = 9
	};
	assert_int_equal(stackagg_sample(a, &s), 0);
	assert_int_equal(stackagg_fold_strata(a, zero, NULL), 0);
	out = folded(a);
	assert_string_equal(out, "idle;[no stack sampled];[off-cpu: sleeping]_[k] 8000000\n");
	free(out);
	stackagg_stats(a, &st);
	assert_int_equal(st.markers, 1);
	stackagg_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_caller_named_interpreted_frames_get_the_interpreted_mark),
		cmocka_unit_test(test_markers_and_stacks_that_reach_a_thread_root),
		cmocka_unit_test(test_an_unnamed_frame_the_unwinder_proved_outermost_is_a_root),
		cmocka_unit_test(test_unnamed_native_frames_are_counted_by_library),
		cmocka_unit_test(test_frames_are_root_first_with_suffixes),
		cmocka_unit_test(test_an_allocation_sample_counts_its_objects_under_its_class),
		cmocka_unit_test(test_jit_lookup_waits_for_settle_and_uses_sample_time),
		cmocka_unit_test(test_settle_stops_at_first_later_sample),
		cmocka_unit_test(test_inline_chain_unfolds_outermost_first),
		cmocka_unit_test(test_no_inline_keeps_the_compiled_method_only),
		cmocka_unit_test(test_lines_are_appended_where_known_and_counted_where_not),
		cmocka_unit_test(test_dynamic_code_is_a_stub_without_suffix),
		cmocka_unit_test(test_unresolved_frames_are_unknown_with_module_and_counted),
		cmocka_unit_test(test_no_kernel_drops_kernel_frames),
		cmocka_unit_test(test_separator_and_control_bytes_in_names_are_replaced),
		cmocka_unit_test(test_process_root_and_missing_thread_name),
		cmocka_unit_test(test_identical_stacks_are_counted_together),
		cmocka_unit_test(test_no_thread_merges_the_threads_stacks),
		cmocka_unit_test(test_maps_changed_forgets_cached_resolutions),
		cmocka_unit_test(test_every_sample_is_counted_exactly_once),
		cmocka_unit_test(test_overlong_stacks_are_truncated_and_counted),
		cmocka_unit_test(test_jit_names_are_reread_after_jit_changed),
		cmocka_unit_test(test_jit_miss_is_retried_at_the_end_with_the_whole_history),
		cmocka_unit_test(test_jit_miss_without_retry_is_unknown_at_once),
		cmocka_unit_test(test_strata_are_scaled_and_merged_when_folded),
		cmocka_unit_test(
			test_a_carriers_samples_are_rooted_under_the_mounted_virtual_thread),
		cmocka_unit_test(
			test_a_mark_stands_in_for_a_stack_and_a_stratum_scaled_to_zero_goes),
		cmocka_unit_test(test_timeline_keeps_each_countings_time_thread_and_stack),
		cmocka_unit_test(test_timeline_follows_folded_strata_and_named_stacks),
		cmocka_unit_test(test_cut_stacks_under_a_root_get_the_callers_of_whole_stacks),
		cmocka_unit_test(test_a_grafted_weight_is_moved_whole_with_uneven_shares),
		cmocka_unit_test(test_graft_stats_add_every_count),
		cmocka_unit_test(test_a_cut_stack_takes_the_callers_of_the_most_alike_whole_stacks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
