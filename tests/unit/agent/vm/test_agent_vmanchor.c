// SPDX-License-Identifier: MIT
/*
 * test_agent_vmanchor.c - a JVM thread's last Java frame read from a JavaThread laid out in
 * memory as VMStructs describes it (JDK 17's offsets): the anchor's sp, fp and pc, the stack's
 * end; an sp off the thread's stack or below the caller's refused; an env not inside the thread
 * refused at binding; a layout missing a field or placing it past the type refused; and a
 * class's Klass* through its mirror.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fake_vmstructs.h"
#include "vmanchor.h"

#define T_SIZE 1024u
#define T_ANCHOR 656u
#define T_BASE 592u
#define T_SSIZE 600u
#define T_ENV 512u /* where the JNIEnv lies in the JavaThread */

static uint64_t thread_mem[T_SIZE / 8];
static uint64_t stack[512]; /* the thread's "stack": its end is stack + 512 */
static int32_t klass_offset = 96;

static void layout(struct fake_vm *f, struct vmstructs *vs, uint64_t tsize)
{
	memset(f, 0, sizeof(*f));
	fake_vm_field(f, "JavaFrameAnchor", "_last_Java_sp", "intptr_t*", 0);
	fake_vm_field(f, "JavaFrameAnchor", "_last_Java_pc", "address", 8);
	fake_vm_field(f, "JavaFrameAnchor", "_last_Java_fp", "intptr_t*", 16);
	fake_vm_field(f, "JavaThread", "_anchor", "JavaFrameAnchor", T_ANCHOR);
	fake_vm_field(f, "JavaThread", "_stack_base", "address", T_BASE);
	fake_vm_field(f, "JavaThread", "_stack_size", "size_t", T_SSIZE);
	fake_vm_static(f, "java_lang_Class", "_klass_offset", "int", &klass_offset);
	fake_vm_type(f, "JavaThread", tsize);
	fake_vm_tables(f, vs);
}

static void put(uint32_t off, uint64_t v)
{
	memcpy((char *)thread_mem + off, &v, 8);
}

/* The thread: its stack [stack, stack + 512), its anchor at the word sp_word. */
static void thread(unsigned sp_word)
{
	memset(thread_mem, 0, sizeof(thread_mem));
	put(T_BASE, (uint64_t)(uintptr_t)(stack + 512));
	put(T_SSIZE, sizeof(stack));
	put(T_ANCHOR, sp_word ? (uint64_t)(uintptr_t)(stack + sp_word) : 0);
	put(T_ANCHOR + 8, 0x7f0000001234ull);
	put(T_ANCHOR + 16, (uint64_t)(uintptr_t)(stack + 300));
}

static const void *env(void)
{
	return (const char *)thread_mem + T_ENV;
}

static void bound(struct vmanchor *a)
{
	struct fake_vm f;
	struct vmstructs vs;

	layout(&f, &vs, T_SIZE);
	assert_int_equal(vmanchor_build(&vs, a), 0);
	thread(200);
	assert_int_equal(vmanchor_bind(a, env(), thread_mem, (uintptr_t)(stack + 10)), 0);
}

static void test_the_anchor_is_read(void **state)
{
	struct vmanchor a;
	struct vmanchor_frame fr;

	(void)state;
	bound(&a);
	assert_int_equal(a.env_off, T_ENV);
	assert_int_equal(vmanchor_take(&a, env(), (uintptr_t)(stack + 10), &fr), 0);
	assert_true(fr.sp == (uint64_t)(uintptr_t)(stack + 200));
	assert_true(fr.fp == (uint64_t)(uintptr_t)(stack + 300));
	assert_true(fr.pc == 0x7f0000001234ull);
	assert_true(fr.top == (uint64_t)(uintptr_t)(stack + 512));
}

static void test_an_sp_off_the_stack_is_refused(void **state)
{
	struct vmanchor a;
	struct vmanchor_frame fr;

	(void)state;
	bound(&a);
	thread(0); /* no Java frame */
	assert_int_equal(vmanchor_take(&a, env(), (uintptr_t)(stack + 10), &fr), -ENOENT);
	thread(200); /* below the caller's own sp: not a frame of its callers */
	assert_int_equal(vmanchor_take(&a, env(), (uintptr_t)(stack + 250), &fr), -ERANGE);
	put(T_ANCHOR, (uint64_t)(uintptr_t)stack + 600 * 8); /* past the stack's end */
	assert_int_equal(vmanchor_take(&a, env(), (uintptr_t)(stack + 10), &fr), -ERANGE);
	put(T_ANCHOR, (uint64_t)(uintptr_t)(stack + 200) + 4); /* misaligned */
	assert_int_equal(vmanchor_take(&a, env(), (uintptr_t)(stack + 10), &fr), -ERANGE);
	thread(200);
	put(T_SSIZE, 0); /* a thread without a stack size */
	assert_int_equal(vmanchor_take(&a, env(), (uintptr_t)(stack + 10), &fr), -ERANGE);
}

static void test_binding_checks_the_env_and_stack(void **state)
{
	struct fake_vm f;
	struct vmstructs vs;
	struct vmanchor a;
	struct vmanchor_frame fr;

	(void)state;
	layout(&f, &vs, T_SIZE);
	assert_int_equal(vmanchor_build(&vs, &a), 0);
	thread(200);
	assert_int_equal(vmanchor_take(&a, env(), (uintptr_t)(stack + 10), &fr), -ENOENT);
	/* an env before the thread, or past its end */
	assert_int_equal(vmanchor_bind(&a, thread_mem, env(), (uintptr_t)(stack + 10)), -EINVAL);
	assert_int_equal(vmanchor_bind(&a, (const char *)thread_mem + T_SIZE, thread_mem,
				       (uintptr_t)(stack + 10)),
			 -EINVAL);
	/* an sp that is not on the thread's stack */
	assert_int_equal(vmanchor_bind(&a, env(), thread_mem, (uintptr_t)&f), -EINVAL);
	assert_int_equal(a.env_off, 0);
}

static void test_a_layout_not_known_is_refused(void **state)
{
	struct fake_vm f;
	struct vmstructs vs;
	struct vmanchor a;

	(void)state;
	layout(&f, &vs, 600); /* the anchor would lie past the type's end */
	assert_int_equal(vmanchor_build(&vs, &a), -ENOENT);
	layout(&f, &vs, T_SIZE);
	f.s[2].field = "_last_Java_fp_moved"; /* a JDK without the field */
	assert_int_equal(vmanchor_build(&vs, &a), -ENOENT);
}

static void test_the_klass_comes_from_the_mirror(void **state)
{
	struct vmanchor a;
	uint64_t mirror[32] = { 0 };
	const void *handle = mirror;

	(void)state;
	bound(&a);
	assert_int_equal(a.klass_off, 96);
	mirror[96 / 8] = 0x800001234ull;
	assert_true(vmanchor_klass(&a, &handle) == 0x800001234ull);
	assert_true(vmanchor_klass(&a, NULL) == 0);
	a.klass_off = -1;
	assert_true(vmanchor_klass(&a, &handle) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_anchor_is_read),
		cmocka_unit_test(test_an_sp_off_the_stack_is_refused),
		cmocka_unit_test(test_binding_checks_the_env_and_stack),
		cmocka_unit_test(test_a_layout_not_known_is_refused),
		cmocka_unit_test(test_the_klass_comes_from_the_mirror),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
