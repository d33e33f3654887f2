// SPDX-License-Identifier: MIT
/*
 * test_agent_vthread.c - when a virtual thread's mount began, from its thread-local word at
 * its unmount or end (vthread_mount_t0, vthread.h): its mount's stamp of this recording; the
 * time the kinds went on for a thread mounted then, of no mount or wait of this recording
 * (none, a stamp or a held stack of an earlier one); none while unmounted or without mounts.
 * A carrier's time off the CPU in a mount (vthread_cpu0, vthread_offcpu) counted from its
 * previous unmount's reading of its CPU time: exact when it kept the CPU, never more than the
 * truth, short of it by the gap's CPU time at most; read afresh after a long gap. What the
 * callbacks do for the kinds on (vthread_does): a CPU recording's mounts alone read no CPU
 * clock and time no wait. A virtual thread's name (vthread_name) from java.lang.Thread's name
 * field through a JNI of our own: as it is at each call, cut at VTHREAD_NAME_MAX bytes, none
 * when unnamed, the field looked up once, in three JNI calls a read (one when unnamed): the
 * callback's local references go as it returns, and no exception is asked about.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vthread.h"

#define SINCE 1000000ull /* the kinds went on */

static uint64_t mounted_at(uint64_t ts)
{
	return ts << 2 | VTHREAD_TLS_STAMP | VTHREAD_TLS_MOUNTED;
}

static uint64_t unmounted_at(uint64_t ts)
{
	return ts << 2 | VTHREAD_TLS_STAMP;
}

/* A mount stamped in this recording: its own start. */
static void test_mounted_this_recording(void **state)
{
	bool open = true;

	(void)state;
	assert_int_equal(vthread_mount_t0(mounted_at(SINCE + 50), SINCE + 50, SINCE, true,
					  SINCE + 90, &open),
			 SINCE + 50);
	assert_false(open);
	/* at the kinds' own start: still this recording's */
	assert_int_equal(vthread_mount_t0(mounted_at(SINCE), SINCE, SINCE, true, SINCE + 1, &open),
			 SINCE);
	assert_false(open);
	/* a clock that did not move: nothing to send */
	assert_int_equal(vthread_mount_t0(mounted_at(SINCE + 50), SINCE + 50, SINCE, true,
					  SINCE + 50, &open),
			 0);
}

/* Never seen, or seen only in an earlier recording: mounted since the kinds went on. */
static void test_open_when_the_kinds_went_on(void **state)
{
	bool open = false;

	(void)state;
	assert_int_equal(vthread_mount_t0(0, 0, SINCE, true, SINCE + 7, &open), SINCE);
	assert_true(open);
	open = false;
	/* an earlier recording's mount, or unmount: it mounted again while the kinds were off */
	assert_int_equal(
		vthread_mount_t0(mounted_at(SINCE - 10), SINCE - 10, SINCE, true, SINCE + 7, &open),
		SINCE);
	assert_true(open);
	open = false;
	assert_int_equal(vthread_mount_t0(unmounted_at(SINCE - 10), SINCE - 10, SINCE, true,
					  SINCE + 7, &open),
			 SINCE);
	assert_true(open);
	open = false;
	/* a held stack of an earlier generation (its wait's start unknown: 0) */
	assert_int_equal(vthread_mount_t0(64, 0, SINCE, true, SINCE + 7, &open), SINCE);
	assert_true(open);
	/* at the very moment the kinds went on: no time mounted */
	assert_int_equal(vthread_mount_t0(0, 0, SINCE, true, SINCE, &open), 0);
	assert_false(open);
}

/* Unmounted in this recording (a stamp, or a held stack): no mount ends here. */
static void test_unmounted_this_recording(void **state)
{
	bool open = true;

	(void)state;
	assert_int_equal(vthread_mount_t0(unmounted_at(SINCE + 5), SINCE + 5, SINCE, true,
					  SINCE + 90, &open),
			 0);
	assert_false(open);
	assert_int_equal(vthread_mount_t0(64, SINCE + 5, SINCE, true, SINCE + 90, &open), 0);
	assert_false(open);
}

/* Mounts not asked (or the kinds never on): none, open or not. */
static void test_no_mounts_asked(void **state)
{
	bool open = true;

	(void)state;
	assert_int_equal(
		vthread_mount_t0(mounted_at(SINCE + 5), SINCE + 5, SINCE, false, SINCE + 90, &open),
		0);
	assert_false(open);
	assert_int_equal(vthread_mount_t0(0, 0, SINCE, false, SINCE + 90, &open), 0);
	assert_false(open);
	assert_int_equal(vthread_mount_t0(0, 0, 0, true, SINCE + 90, &open), 0);
	assert_false(open);
}

#define US 1000ull
#define READ_AT 50000000ull /* the carrier's previous unmount, its CPU time read */
#define READ_CPU 7000000ull /* its CPU time then */

/*
 * A carrier's time off the CPU in a mount of d ns that began gap ns after its previous
 * unmount's reading, having run gap_ran of the gap and mount_ran of the mount.
 */
static uint64_t off_after(uint64_t gap, uint64_t gap_ran, uint64_t d, uint64_t mount_ran)
{
	uint64_t t0 = READ_AT + gap, cpu0 = vthread_cpu0(READ_CPU, READ_AT, t0);

	assert_int_equal(cpu0, READ_CPU); /* not read again */
	return vthread_offcpu(t0, t0 + d, cpu0, READ_CPU + gap_ran + mount_ran);
}

/* The carrier kept the CPU through the mount: none, whatever it did in the gap. */
static void test_offcpu_none_when_it_ran(void **state)
{
	(void)state;
	assert_int_equal(off_after(3 * US, 3 * US, 100 * US, 100 * US), 0);
	/* parked in the gap (3 ms, 10 us of it run) */
	assert_int_equal(off_after(3000 * US, 10 * US, 100 * US, 100 * US), 0);
}

/* Off the CPU in the mount (pinned): short by the gap's CPU time at most, never more. */
static void test_offcpu_pinned(void **state)
{
	(void)state;
	/* 1 ms mounted, 800 us of it off the CPU, 5 us run in the gap */
	assert_int_equal(off_after(5 * US, 5 * US, 1000 * US, 200 * US), 795 * US);
	/* the same after a park in the gap */
	assert_int_equal(off_after(2000 * US, 5 * US, 1000 * US, 200 * US), 795 * US);
	/* off the CPU for less than the gap's CPU time: none shown */
	assert_int_equal(off_after(5 * US, 5 * US, 100 * US, 97 * US), 0);
	/* read at the mount (cpu0 exact): exact */
	assert_int_equal(
		vthread_offcpu(READ_AT, READ_AT + 1000 * US, READ_CPU, READ_CPU + 200 * US),
		800 * US);
}

/* No reading, an old one or one from the future: the clock is read at the mount. Unknown CPU
 * times: no time off the CPU. */
static void test_cpu0_read_again(void **state)
{
	(void)state;
	assert_int_equal(vthread_cpu0(READ_CPU, READ_AT, READ_AT + VTHREAD_CPU_GAP_NS), 0);
	assert_int_equal(vthread_cpu0(READ_CPU, READ_AT, READ_AT + VTHREAD_CPU_GAP_NS - 1),
			 READ_CPU);
	assert_int_equal(vthread_cpu0(0, READ_AT, READ_AT + 1), 0);
	assert_int_equal(vthread_cpu0(READ_CPU, 0, READ_AT), 0);
	assert_int_equal(vthread_cpu0(READ_CPU, READ_AT, READ_AT - 1), 0);
	assert_int_equal(vthread_offcpu(READ_AT, READ_AT + 100, 0, READ_CPU), 0);
	assert_int_equal(vthread_offcpu(READ_AT, READ_AT + 100, READ_CPU, 0), 0);
	assert_int_equal(vthread_offcpu(READ_AT, READ_AT, READ_CPU, READ_CPU), 0);
}

/* The waits alone; with the mounts, each mount's time off the CPU too; the mounts alone for a
 * CPU recording (FGP_EVM_VCPU): no wait, no clock. */
static void test_what_the_callbacks_do(void **state)
{
	const uint32_t vt = FGP_EVM_VTHREAD, vm = FGP_EVM_VMOUNT, vc = FGP_EVM_VCPU;

	(void)state;
	assert_int_equal(vthread_does(0), 0);
	assert_int_equal(vthread_does(vm | vc | FGP_EVM_VTID), 0); /* not without vthread */
	assert_int_equal(vthread_does(vt), VTHREAD_DO_WAITS);
	assert_int_equal(vthread_does(vt | vc), VTHREAD_DO_WAITS); /* vcpu only with vmount */
	assert_int_equal(vthread_does(vt | vm),
			 VTHREAD_DO_WAITS | VTHREAD_DO_MOUNTS | VTHREAD_DO_OFFCPU);
	assert_int_equal(vthread_does(vt | vm | FGP_EVM_VTID),
			 VTHREAD_DO_WAITS | VTHREAD_DO_MOUNTS | VTHREAD_DO_OFFCPU);
	assert_int_equal(vthread_does(vt | vm | vc), VTHREAD_DO_MOUNTS);
	assert_int_equal(vthread_does(vt | vm | vc | FGP_EVM_VTID | FGP_EVM_LOCK),
			 VTHREAD_DO_MOUNTS);
	assert_true(vthread_vcpu(vt | vm | vc));
	assert_false(vthread_vcpu(vt | vm));
	assert_false(vthread_vcpu(vt | vc));
	assert_false(vthread_vcpu(vm | vc));
}

/* A JNI of our own: a thread is a struct fake_thread, its name a struct fake_str of UTF-16. */
struct fake_str {
	const uint16_t *chars;
	jsize n;
};

struct fake_thread {
	struct fake_str *name; /* NULL: none */
};

static int finds, fields, calls; /* calls: the JNI's, but the lookups */
static bool no_nul;		 /* GetStringUTFRegion ends with no NUL */

static jclass JNICALL fake_find_class(JNIEnv *env, const char *name)
{
	(void)env;
	finds++;
	return strcmp(name, "java/lang/Thread") == 0 ? (jclass)&finds : NULL;
}

static jfieldID JNICALL fake_field_id(JNIEnv *env, jclass c, const char *name, const char *sig)
{
	(void)env;
	(void)c;
	fields++;
	return strcmp(name, "name") == 0 && strcmp(sig, "Ljava/lang/String;") == 0
		       ? (jfieldID)&fields
		       : NULL;
}

static jobject JNICALL fake_object_field(JNIEnv *env, jobject o, jfieldID f)
{
	struct fake_thread *t = (struct fake_thread *)o;

	(void)env;
	assert_ptr_equal(f, &fields);
	calls++;
	return (jobject)t->name;
}

static jsize JNICALL fake_length(JNIEnv *env, jstring s)
{
	(void)env;
	calls++;
	return ((struct fake_str *)s)->n;
}

/* Modified UTF-8 of chars [start, start + len), then a NUL (unless no_nul). */
static void JNICALL fake_utf_region(JNIEnv *env, jstring s, jsize start, jsize len, char *buf)
{
	const struct fake_str *f = (const struct fake_str *)s;
	size_t o = 0;

	(void)env;
	calls++;
	assert_true(start >= 0 && len >= 0 && start + len <= f->n);
	for (jsize i = start; i < start + len; i++) {
		uint16_t c = f->chars[i];

		if (c && c < 0x80) {
			buf[o++] = (char)c;
		} else if (c < 0x800) {
			buf[o++] = (char)(0xc0 | c >> 6);
			buf[o++] = (char)(0x80 | (c & 0x3f));
		} else {
			buf[o++] = (char)(0xe0 | c >> 12);
			buf[o++] = (char)(0x80 | (c >> 6 & 0x3f));
			buf[o++] = (char)(0x80 | (c & 0x3f));
		}
	}
	if (!no_nul)
		buf[o] = 0;
}

/* The class's, at the field's lookup */
static void JNICALL fake_delete_ref(JNIEnv *env, jobject o)
{
	(void)env;
	assert_ptr_equal(o, &finds);
}

static struct JNINativeInterface_ fake_jni_fns;

static JNIEnv *fake_jni(void)
{
	static JNIEnv env = &fake_jni_fns;

	fake_jni_fns.FindClass = fake_find_class;
	fake_jni_fns.GetFieldID = fake_field_id;
	fake_jni_fns.GetObjectField = fake_object_field;
	fake_jni_fns.GetStringLength = fake_length;
	fake_jni_fns.GetStringUTFRegion = fake_utf_region;
	fake_jni_fns.DeleteLocalRef = fake_delete_ref;
	return &env;
}

/* A name of n chars, each c, into chars. */
static struct fake_str str_of(uint16_t *chars, jsize n, uint16_t c)
{
	for (jsize i = 0; i < n; i++)
		chars[i] = c;
	return (struct fake_str){ chars, n };
}

static void test_name_read_as_it_is(void **state)
{
	static const uint16_t worker[] = { 'v', 't', '-', 'w', 'o', 'r', 'k', 'e', 'r', '-', '7' };
	static const uint16_t renamed[] = { 'r', 'e', 'q', '-', '4', '2' };
	struct fake_str s = { worker, 11 }, r = { renamed, 6 }, empty = { worker, 0 };
	struct fake_thread t = { &s };
	uint16_t chars[100];
	char name[VTHREAD_NAME_MAX + 8];
	JNIEnv *jni = fake_jni();

	(void)state;
	assert_int_equal(vthread_name(jni, (jthread)&t, name), 11);
	assert_memory_equal(name, "vt-worker-7", 11);
	assert_int_equal(calls, 3); /* the field, the length, the bytes */
	/* Thread.setName: the next read has the new name */
	t.name = &r;
	assert_int_equal(vthread_name(jni, (jthread)&t, name), 6);
	assert_memory_equal(name, "req-42", 6);
	/* unnamed: no name at all, or an empty one */
	t.name = NULL;
	calls = 0;
	assert_int_equal(vthread_name(jni, (jthread)&t, name), 0);
	assert_int_equal(calls, 1);
	t.name = &empty;
	assert_int_equal(vthread_name(jni, (jthread)&t, name), 0);
	/* long: its first VTHREAD_NAME_MAX bytes, not one more */
	memset(name, '#', sizeof(name));
	s = str_of(chars, 100, 'x');
	t.name = &s;
	assert_int_equal(vthread_name(jni, (jthread)&t, name), VTHREAD_NAME_MAX);
	assert_int_equal(name[VTHREAD_NAME_MAX - 1], 'x');
	assert_int_equal(name[VTHREAD_NAME_MAX], '#');
	/* two bytes a char: still VTHREAD_NAME_MAX bytes, from the first chars */
	s = str_of(chars, VTHREAD_NAME_MAX, 0xe9);
	assert_int_equal(vthread_name(jni, (jthread)&t, name), VTHREAD_NAME_MAX);
	assert_memory_equal(name, "\xc3\xa9\xc3\xa9", 4);
	assert_int_equal(name[VTHREAD_NAME_MAX], '#');
	/* a JNI that ends the bytes with no NUL: the count is still theirs */
	no_nul = true;
	s = str_of(chars, 5, 'y');
	assert_int_equal(vthread_name(jni, (jthread)&t, name), 5);
	no_nul = false;
	/* the field looked up once */
	assert_int_equal(finds, 1);
	assert_int_equal(fields, 1);
}

/* A JVMTI whose GetStackTrace notes the thread it was given and gives two frames. */
static jthread stack_of;
static int stack_calls;

static jvmtiError JNICALL fake_stack(jvmtiEnv *env, jthread thread, jint start, jint max,
				     jvmtiFrameInfo *fi, jint *count)
{
	(void)env;
	stack_calls++;
	stack_of = thread;
	if (start != 0 || max < 2)
		return JVMTI_ERROR_ILLEGAL_ARGUMENT;
	fi[0] = (jvmtiFrameInfo){ (jmethodID)(uintptr_t)0x10, 3 };
	fi[1] = (jvmtiFrameInfo){ (jmethodID)(uintptr_t)0x20, 7 };
	*count = 2;
	return JVMTI_ERROR_NONE;
}

/* The unmounting thread's stack is asked of it by name, never of NULL: NULL disables every
 * virtual thread's transitions on HotSpot 21. */
static void test_stack_asked_of_the_thread(void **state)
{
	static struct jvmtiInterface_1_ fns;
	jvmtiEnv env = &fns;
	struct fake_thread vt = { NULL };
	jvmtiFrameInfo fi[4];
	jint count = -1;

	(void)state;
	fns.GetStackTrace = fake_stack;
	assert_int_equal(vthread_stack(&env, (jthread)&vt, 4, fi, &count), JVMTI_ERROR_NONE);
	assert_int_equal(stack_calls, 1);
	assert_ptr_equal(stack_of, (jthread)&vt);
	assert_int_equal(count, 2);
	assert_ptr_equal(fi[1].method, (jmethodID)(uintptr_t)0x20);
	/* No thread: an error, not the current thread's stack. */
	assert_int_equal(vthread_stack(&env, NULL, 4, fi, &count), JVMTI_ERROR_INVALID_THREAD);
	assert_int_equal(stack_calls, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mounted_this_recording),
		cmocka_unit_test(test_open_when_the_kinds_went_on),
		cmocka_unit_test(test_unmounted_this_recording),
		cmocka_unit_test(test_no_mounts_asked),
		cmocka_unit_test(test_offcpu_none_when_it_ran),
		cmocka_unit_test(test_offcpu_pinned),
		cmocka_unit_test(test_cpu0_read_again),
		cmocka_unit_test(test_what_the_callbacks_do),
		cmocka_unit_test(test_name_read_as_it_is),
		cmocka_unit_test(test_stack_asked_of_the_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
