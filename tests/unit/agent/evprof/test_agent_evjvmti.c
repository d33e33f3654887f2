// SPDX-License-Identifier: MIT
/*
 * test_agent_evjvmti.c - the JVMTI side of events (evjvmti.h) on a fake JVMTI: class names as
 * Java writes them, and a stack's frames named with the interned names code loads use (one id
 * per method, resolved once) and given their lines; an allocation or lock event's stack asked
 * of the event's thread.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codelines.h"
#include "evjvmti.h"
#include "intern.h"
#include "queue.h"
#include "agent/test_agent_fakejvmti.h"

static void test_class_names_are_written_as_java_writes_them(void **state)
{
	static const char *const cases[][2] = {
		{ "Ljava/lang/String;", "java.lang.String" },
		{ "[B", "byte[]" },
		{ "[[I", "int[][]" },
		{ "[Z", "boolean[]" },
		{ "[J", "long[]" },
		{ "[Ljava/util/HashMap$Node;", "java.util.HashMap$Node[]" },
		{ "[[Ljava/lang/Object;", "java.lang.Object[][]" },
		{ "LHot;", "Hot" },
		{ "Lcom/acme/Foo$$Lambda.0x0000000800c01000;",
		  "com.acme.Foo$$Lambda.0x0000000800c01000" },
		/* not signatures: as they are */
		{ "I", "I" },
		{ "[", "[" },
		{ "[Q", "[Q" },
		{ "L;", "L;" },
		{ "Lnoend", "Lnoend" },
		{ "", "" },
	};
	char out[128];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = evjvmti_class_name(cases[i][0], out, sizeof(out));

		assert_string_equal(out, cases[i][1]);
		assert_int_equal(n, strlen(cases[i][1]));
	}
	/* Truncated to the room given, always terminated. */
	assert_int_equal(evjvmti_class_name("[Ljava/lang/String;", out, 8), 7);
	assert_string_equal(out, "java.la");
	assert_int_equal(evjvmti_class_name(NULL, out, sizeof(out)), 0);
	assert_int_equal(evjvmti_class_name("[B", out, 0), 0);
}

static void test_frames_get_interned_ids_and_lines(void **state)
{
	struct intern *names = intern_new(1 << 20);
	struct codelines *lines = codelines_new(1 << 20);
	struct evctl ctl = { 0 };
	struct evjvmti_cfg cfg = {
		.jvmti = fake_jvmti(), .ctl = &ctl, .names = names, .lines = lines
	};
	jvmtiFrameInfo fi[] = { { FAKE_M(2), 6 },
				{ FAKE_M(1), 5 },
				{ FAKE_M(2), 0 },
				{ FAKE_M(FAKE_FAIL_NAME), 3 },
				{ FAKE_M(3), 1 } };
	struct fgp_frame_in out[5];
	uint32_t code_id;

	(void)state;
	/* A method a code load named first keeps its id. */
	code_id = intern_add(names, FAKE_M(1), "com.acme.Hot::loop", 18);
	evjvmti_init(&cfg);
	assert_int_equal(evjvmti_frames(NULL, fi, 5, out), 0);
	assert_int_equal(out[1].method_id, code_id);
	assert_int_equal(out[0].method_id, out[2].method_id); /* one id per method */
	assert_true(out[0].method_id != code_id && out[0].method_id != 0);
	assert_int_equal(intern_name(names, out[0].method_id).len, 24);
	assert_memory_equal(intern_name(names, out[0].method_id).ptr, "com.acme.Hot$Inner::step",
			    24);
	assert_int_equal(intern_name(names, out[3].method_id).len, 9);
	assert_memory_equal(intern_name(names, out[3].method_id).ptr, "[unknown]", 9);
	/* lines: method 2 { 0 20 } { 5 21 }, method 1 { 4 11 } ..., method 3 none */
	assert_int_equal(out[0].line, 21);
	assert_int_equal(out[1].line, 11);
	assert_int_equal(out[2].line, 20);
	assert_int_equal(out[4].line, 0);
	assert_int_equal(fake_live_strings, 0);
	assert_int_equal(evjvmti_frames(NULL, fi, 0, out), 0);
	codelines_free(lines);
	intern_free(names);
}

/* Stacks past the default depth (their buffers on the heap) and at it (on the callback's
 * stack) are named alike, frame by frame. */
static void test_deep_stacks_are_named_whole(void **state)
{
	static const int depths[] = { 129, 130, 300, 2049 };
	struct intern *names = intern_new(1 << 20);
	struct codelines *lines = codelines_new(1 << 20);
	struct evctl ctl = { 0 };
	struct evjvmti_cfg cfg = {
		.jvmti = fake_jvmti(), .ctl = &ctl, .names = names, .lines = lines
	};
	static jvmtiFrameInfo fi[2049];
	static struct fgp_frame_in out[2049];
	uint32_t id1, id2;

	(void)state;
	evjvmti_init(&cfg);
	for (int i = 0; i < 2049; i++)
		fi[i] = i % 2 ? (jvmtiFrameInfo){ FAKE_M(1), 5 } : (jvmtiFrameInfo){ FAKE_M(2), 6 };
	for (size_t d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
		memset(out, 0, sizeof(out));
		assert_int_equal(evjvmti_frames(NULL, fi, depths[d], out), 0);
		id2 = out[0].method_id;
		id1 = out[1].method_id;
		assert_true(id1 != 0 && id2 != 0 && id1 != id2);
		for (int i = 0; i < depths[d]; i++) {
			assert_int_equal(out[i].method_id, i % 2 ? id1 : id2);
			assert_int_equal(out[i].line, i % 2 ? 11 : 21);
		}
		if (depths[d] < 2049)
			assert_int_equal(out[depths[d]].method_id, 0); /* nothing past n */
	}
	assert_int_equal(fake_live_strings, 0);
	codelines_free(lines);
	intern_free(names);
}

static jthread stack_of; /* the thread the last GetStackTrace was asked for */

static int no_apply(void *arg, const struct evset *want, struct evset *got)
{
	(void)arg;
	(void)want;
	(void)got;
	return -EIO; /* never called: no worker runs */
}

static jvmtiError JNICALL fake_stack(jvmtiEnv *env, jthread t, jint start, jint max,
				     jvmtiFrameInfo *fi, jint *count)
{
	(void)env;
	(void)start;
	stack_of = t;
	if (max < 1)
		return JVMTI_ERROR_ILLEGAL_ARGUMENT;
	fi[0] = (jvmtiFrameInfo){ FAKE_M(1), 4 };
	*count = 1;
	return JVMTI_ERROR_NONE;
}

/*
 * An allocation sample's stack is asked of the thread the event names, never NULL: on
 * OpenJDK 21 a NULL thread holds every virtual thread's mounts and unmounts while it is taken.
 */
static void test_an_event_stack_is_asked_of_the_event_thread(void **state)
{
	struct intern *names = intern_new(1 << 20);
	struct queue *q = queue_new(1 << 20);
	struct evctl ctl;
	struct evjvmti_cfg cfg = { .jvmti = fake_jvmti(), .ctl = &ctl, .names = names };
	const struct evctl_ops ops = { .apply = no_apply };
	union evjvmti_callbacks cb;
	const jthread me = (jthread)(uintptr_t)0x5150;
	struct qentry *e;
	int pushed = 0;

	(void)state;
	assert_non_null(names);
	assert_non_null(q);
	assert_int_equal(evctl_init(&ctl, q, &ops, FGP_EVM_ALLOC, 64, 100, 64), 0);
	fake_iface.GetStackTrace = fake_stack;
	evjvmti_init(&cfg);
	memset(&cb, 0, sizeof(cb));
	evjvmti_callbacks(&cb, FGP_EVM_ALLOC);
	assert_non_null(cb.cb.SampledObjectAlloc);
	atomic_store(&ctl.alloc_interval, 4096);
	atomic_store(&ctl.on, FGP_EVM_ALLOC);
	stack_of = NULL;
	cb.cb.SampledObjectAlloc(&fake_env, NULL, me, (jobject)(uintptr_t)0x10, (jclass)FAKE_M(1),
				 48);
	assert_ptr_equal(stack_of, me);
	while ((e = queue_pop(q)) != NULL) {
		pushed++;
		queue_release(q, e);
	}
	assert_true(pushed > 0);
	assert_int_equal(fake_live_strings, 0);
	fake_iface.GetStackTrace = NULL;
	evctl_fini(&ctl);
	queue_free(q);
	intern_free(names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_class_names_are_written_as_java_writes_them),
		cmocka_unit_test(test_frames_get_interned_ids_and_lines),
		cmocka_unit_test(test_deep_stacks_are_named_whole),
		cmocka_unit_test(test_an_event_stack_is_asked_of_the_event_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
