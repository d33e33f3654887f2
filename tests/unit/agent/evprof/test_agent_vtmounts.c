// SPDX-License-Identifier: MIT
/*
 * test_agent_vtmounts.c - a CPU recording's mounts alone (FGP_EVM_VCPU, vthread.h) through the
 * real callbacks over a fake JVMTI and JNI: each unmount sends its mount (FGP_EV_VMOUNT) from
 * the stamp its carrier's mount left, with no JVMTI call at all; each carrier (a thread) keeps
 * its own; a mount seen while the callbacks were closed still times the mount; one of before
 * the kinds went on counts from then; an unmount and the thread's end, in either order, send
 * one mount; the name and id as they are at each unmount (Thread.setName). A wall
 * recording counts each wait from its unmount to its mount, none after an unmount the
 * callbacks did not see.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "evbatch.h"
#include "evctl.h"
#include "evjvmti.h"
#include "fgclock.h"
#include "fgproto.h"
#include "queue.h"
#include "vtclaim.h"
#include "vthread.h"

#define VCPU (FGP_EVM_VTHREAD | FGP_EVM_VMOUNT | FGP_EVM_VCPU)

/* ---- a fake JVMTI: two extension events, thread-local storage calls counted ---------------- */

typedef void(JNICALL *vt_cb)(jvmtiEnv *, JNIEnv *, jthread);

static vt_cb cb_mount, cb_unmount, cb_start, cb_end;
static int tls_calls;

static jvmtiError JNICALL fake_add_caps(jvmtiEnv *env, const jvmtiCapabilities *c)
{
	(void)env;
	(void)c;
	return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL fake_ext_events(jvmtiEnv *env, jint *n, jvmtiExtensionEventInfo **out)
{
	static const char *const ids[2] = { "com.sun.hotspot.events.VirtualThreadMount",
					    "com.sun.hotspot.events.VirtualThreadUnmount" };
	jvmtiExtensionEventInfo *infos = calloc(2, sizeof(*infos));

	(void)env;
	assert_non_null(infos);
	for (int i = 0; i < 2; i++) {
		infos[i].extension_event_index = 100 + i;
		infos[i].id = strdup(ids[i]);
		infos[i].short_description = strdup("");
		infos[i].params = calloc(1, sizeof(jvmtiParamInfo));
	}
	*n = 2;
	*out = infos;
	return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL fake_ext_callback(jvmtiEnv *env, jint index, jvmtiExtensionEvent cb)
{
	(void)env;
	if (index == 100)
		cb_mount = (vt_cb)(void *)cb;
	else if (index == 101)
		cb_unmount = (vt_cb)(void *)cb;
	else
		return JVMTI_ERROR_ILLEGAL_ARGUMENT;
	return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL fake_deallocate(jvmtiEnv *env, unsigned char *p)
{
	(void)env;
	free(p);
	return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL fake_notification(jvmtiEnv *env, jvmtiEventMode mode, jvmtiEvent ev,
					    jthread t, ...)
{
	(void)env;
	(void)mode;
	(void)ev;
	(void)t;
	return JVMTI_ERROR_NONE;
}

struct vt;

static jvmtiError JNICALL fake_get_tls(jvmtiEnv *env, jthread t, void **v);
static jvmtiError JNICALL fake_set_tls(jvmtiEnv *env, jthread t, const void *v);

/* No stack can be taken: the waits are counted with none. */
static jvmtiError JNICALL fake_stack(jvmtiEnv *env, jthread t, jint start, jint max,
				     jvmtiFrameInfo *fi, jint *count)
{
	(void)env;
	(void)t;
	(void)start;
	(void)max;
	(void)fi;
	(void)count;
	return JVMTI_ERROR_WRONG_PHASE;
}

static struct jvmtiInterface_1_ jvmti_fns;
static jvmtiEnv jvmti = &jvmti_fns;

/* ---- a fake JNI: a thread is a struct vt, its name a C string ------------------------------ */

struct vt {
	const char *name;
	jlong tid;
	const void *tls; /* its JVMTI thread-local storage */
};

static jclass JNICALL fake_find_class(JNIEnv *env, const char *name)
{
	(void)env;
	return strcmp(name, "java/lang/Thread") == 0 ? (jclass)&jvmti : NULL;
}

static char field_name, field_tid;

static jfieldID JNICALL fake_field_id(JNIEnv *env, jclass c, const char *name, const char *sig)
{
	(void)env;
	(void)c;
	if (strcmp(name, "name") == 0 && strcmp(sig, "Ljava/lang/String;") == 0)
		return (jfieldID)&field_name;
	if (strcmp(name, "tid") == 0 && strcmp(sig, "J") == 0)
		return (jfieldID)&field_tid;
	return NULL;
}

static jobject JNICALL fake_object_field(JNIEnv *env, jobject o, jfieldID f)
{
	(void)env;
	assert_ptr_equal(f, &field_name);
	return (jobject)((struct vt *)o)->name;
}

static jlong JNICALL fake_long_field(JNIEnv *env, jobject o, jfieldID f)
{
	(void)env;
	assert_ptr_equal(f, &field_tid);
	return ((struct vt *)o)->tid;
}

static jsize JNICALL fake_length(JNIEnv *env, jstring s)
{
	(void)env;
	return (jsize)strlen((const char *)s);
}

static void JNICALL fake_utf_region(JNIEnv *env, jstring s, jsize start, jsize len, char *buf)
{
	(void)env;
	memcpy(buf, (const char *)s + start, (size_t)len);
	buf[len] = 0;
}

static jboolean JNICALL fake_exception_check(JNIEnv *env)
{
	(void)env;
	return JNI_FALSE;
}

static void JNICALL fake_delete_ref(JNIEnv *env, jobject o)
{
	(void)env;
	(void)o;
}

static jvmtiError JNICALL fake_get_tls(jvmtiEnv *env, jthread t, void **v)
{
	(void)env;
	tls_calls++;
	*v = (void *)(uintptr_t)((struct vt *)t)->tls;
	return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL fake_set_tls(jvmtiEnv *env, jthread t, const void *v)
{
	(void)env;
	tls_calls++;
	((struct vt *)t)->tls = v;
	return JVMTI_ERROR_NONE;
}

static struct JNINativeInterface_ jni_fns;
static JNIEnv jni = &jni_fns;

/* ---- the switch and its queue ------------------------------------------------------------ */

static struct evctl ctl;
static struct queue *q;

static int no_apply(void *arg, const struct evset *want, struct evset *got)
{
	(void)arg;
	*got = *want;
	return 0;
}

static int setup(void **state)
{
	const struct evctl_ops ops = { no_apply, NULL, NULL, NULL, NULL };

	(void)state;
	jvmti_fns.AddCapabilities = fake_add_caps;
	jvmti_fns.GetExtensionEvents = fake_ext_events;
	jvmti_fns.SetExtensionEventCallback = fake_ext_callback;
	jvmti_fns.Deallocate = fake_deallocate;
	jvmti_fns.SetEventNotificationMode = fake_notification;
	jvmti_fns.GetThreadLocalStorage = fake_get_tls;
	jvmti_fns.SetThreadLocalStorage = fake_set_tls;
	jvmti_fns.GetStackTrace = fake_stack;
	jni_fns.FindClass = fake_find_class;
	jni_fns.GetFieldID = fake_field_id;
	jni_fns.GetObjectField = fake_object_field;
	jni_fns.GetLongField = fake_long_field;
	jni_fns.GetStringLength = fake_length;
	jni_fns.GetStringUTFRegion = fake_utf_region;
	jni_fns.ExceptionCheck = fake_exception_check;
	jni_fns.DeleteLocalRef = fake_delete_ref;
	q = queue_new(1 << 20);
	assert_non_null(q);
	assert_int_equal(evctl_init(&ctl, q, &ops, VCPU, 0, 16, 64), 0);
	assert_int_equal(vthread_caps(&jvmti), VCPU | FGP_EVM_VTID);
	vthread_callbacks((void(JNICALL **)(void)) & cb_start, (void(JNICALL **)(void)) & cb_end);
	assert_non_null(cb_mount);
	assert_non_null(cb_unmount);
	evjvmti_init(&(struct evjvmti_cfg){ .jvmti = &jvmti, .ctl = &ctl });
	return 0;
}

/* The kinds go on (vthread_enable, then the callbacks open): when, by the clock before. */
static uint64_t turn_on(uint32_t on)
{
	uint64_t t = fg_now_ns();

	atomic_store(&ctl.on, 0);
	assert_int_equal(vthread_enable(&jvmti, false), 0);
	assert_int_equal(vthread_enable(&jvmti, true), 0);
	atomic_store(&ctl.on, on);
	return t;
}

/* The queue entry read from, and where its next record starts (an entry may hold a carrier's
 * records one after another: evbatch.h). */
static struct qentry *cur;
static uint32_t cur_off;

/* The next record queued, the carriers' entries swept into the queue first. */
static bool next_record(const uint8_t **rec, uint32_t *len)
{
	if (!cur || cur_off >= cur->len) {
		queue_release(q, cur);
		cur_off = 0;
		evbatch_sweep(ctl.batch, 0);
		if (!(cur = queue_pop(q)))
			return false;
	}
	assert_true(cur->len - cur_off >= FGP_REC_HEADER_SIZE);
	*rec = cur->data + cur_off;
	*len = fgp_rec_size(*rec);
	assert_true(*len <= cur->len - cur_off);
	cur_off += *len;
	return true;
}

/* The next mount sent, decoded (its name copied into name); false when none is queued. */
static bool next_mount(struct fgp_stack_event *ev, char *name)
{
	struct fgp_record r;
	const uint8_t *rec;
	uint32_t len;

	if (!next_record(&rec, &len))
		return false;
	assert_int_equal(fgp_decode_record(rec, len, &r), 1);
	assert_int_equal(r.type, FGP_STACK_EVENT);
	*ev = r.u.ev;
	assert_int_equal(ev->kind, FGP_EV_VMOUNT);
	assert_int_equal(ev->depth, 0);
	memcpy(name, ev->cls.ptr, ev->cls.len);
	name[ev->cls.len] = 0;
	ev->cls.ptr = name;
	return true;
}

/* One mount and unmount: the mount is sent at the unmount, spanning the two, with no JVMTI
 * call; the name and id as they are at the unmount. */
static void test_mount_to_unmount(void **state)
{
	struct vt t = { "req-1", 42, NULL };
	struct fgp_stack_event ev;
	uint64_t before, after;
	char name[VTHREAD_NAME_MAX + 1];

	(void)state;
	turn_on(VCPU);
	tls_calls = 0;
	before = fg_now_ns();
	cb_mount(&jvmti, &jni, (jthread)&t);
	t.name = "req-1-renamed"; /* Thread.setName while mounted */
	cb_unmount(&jvmti, &jni, (jthread)&t);
	after = fg_now_ns();
	assert_true(next_mount(&ev, name));
	assert_string_equal(name, "req-1-renamed");
	assert_int_equal(ev.tag, 42);
	assert_true(ev.value > 0);
	assert_true(ev.ts - ev.value >= before && ev.ts <= after);
	assert_int_equal(ev.interval, 0); /* no time off the CPU in a CPU recording */
	assert_false(next_mount(&ev, name));
	/* the thread's end after its unmount: nothing more (it is unmounted) */
	cb_end(&jvmti, &jni, (jthread)&t);
	assert_false(next_mount(&ev, name));
	/* a first run: its start is its mount, its end its unmount */
	before = fg_now_ns();
	cb_start(&jvmti, &jni, (jthread)&t);
	cb_end(&jvmti, &jni, (jthread)&t);
	assert_true(next_mount(&ev, name));
	assert_true(ev.ts - ev.value >= before);
	assert_false(next_mount(&ev, name));
	/* an unmount after the end (either order): one mount */
	cb_mount(&jvmti, &jni, (jthread)&t);
	cb_end(&jvmti, &jni, (jthread)&t);
	cb_unmount(&jvmti, &jni, (jthread)&t);
	assert_true(next_mount(&ev, name));
	assert_false(next_mount(&ev, name));
	assert_int_equal(tls_calls, 0);
}

struct carrier {
	struct vt *t;
	uint64_t before, after;
};

static void *other_carrier(void *arg)
{
	struct carrier *c = arg;

	c->before = fg_now_ns();
	cb_mount(&jvmti, &jni, (jthread)c->t);
	cb_unmount(&jvmti, &jni, (jthread)c->t);
	c->after = fg_now_ns();
	return NULL;
}

/* Two carriers: each unmount ends the mount its own carrier stamped, whatever the other did
 * meanwhile. */
static void test_each_carrier_its_own(void **state)
{
	struct vt a = { "a", 1, NULL }, b = { "b", 2, NULL };
	struct carrier c = { &b, 0, 0 };
	struct fgp_stack_event ev;
	char name[VTHREAD_NAME_MAX + 1];
	uint64_t before, after;
	pthread_t th;

	(void)state;
	turn_on(VCPU);
	tls_calls = 0;
	before = fg_now_ns();
	cb_mount(&jvmti, &jni, (jthread)&a);
	assert_int_equal(pthread_create(&th, NULL, other_carrier, &c), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	cb_unmount(&jvmti, &jni, (jthread)&a);
	after = fg_now_ns();
	/* each carrier's in its own order; the two carriers' in either */
	for (int i = 0; i < 2; i++) {
		assert_true(next_mount(&ev, name));
		if (strcmp(name, "b") == 0) {
			assert_true(ev.ts - ev.value >= c.before && ev.ts <= c.after);
			continue;
		}
		assert_string_equal(name, "a");
		/* from a's own mount, before b's */
		assert_true(ev.ts - ev.value >= before && ev.ts - ev.value <= c.before);
		assert_true(ev.ts >= c.after && ev.ts <= after);
	}
	assert_false(next_mount(&ev, name));
	assert_int_equal(tls_calls, 0);
}

static void *unmount_only(void *arg)
{
	struct carrier *c = arg;

	cb_unmount(&jvmti, &jni, (jthread)c->t);
	c->after = fg_now_ns();
	return NULL;
}

/* A thread mounted before the kinds went on (its carrier's stamp older, or none): its mount is
 * sent from when they went on. */
static void test_mounted_before_the_kinds(void **state)
{
	struct vt t = { "early", 7, NULL };
	struct carrier c = { &t, 0, 0 };
	struct fgp_stack_event ev;
	char name[VTHREAD_NAME_MAX + 1];
	uint64_t on, before;
	pthread_t th;

	(void)state;
	turn_on(VCPU);
	before = fg_now_ns();
	cb_mount(&jvmti, &jni, (jthread)&t); /* a stamp of the recording before */
	on = turn_on(VCPU);
	assert_true(on >= before);
	cb_unmount(&jvmti, &jni, (jthread)&t);
	assert_true(next_mount(&ev, name));
	assert_true(ev.ts - ev.value >= on);
	assert_false(next_mount(&ev, name));
	/* a carrier that never stamped */
	on = turn_on(VCPU);
	assert_int_equal(pthread_create(&th, NULL, unmount_only, &c), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(next_mount(&ev, name));
	assert_true(ev.ts - ev.value >= on && ev.ts <= c.after);
	assert_false(next_mount(&ev, name));
}

/* Closed callbacks (the kinds turning): a mount seen then still times the mount that an open
 * unmount ends; an unmount seen then ends it, and nothing is sent for it later. */
static void test_closed_callbacks(void **state)
{
	struct vt t = { "c", 9, NULL };
	struct fgp_stack_event ev;
	char name[VTHREAD_NAME_MAX + 1];
	uint64_t before;

	(void)state;
	turn_on(VCPU);
	atomic_store(&ctl.on, 0);
	before = fg_now_ns();
	cb_mount(&jvmti, &jni, (jthread)&t);
	atomic_store(&ctl.on, VCPU);
	cb_unmount(&jvmti, &jni, (jthread)&t);
	assert_true(next_mount(&ev, name));
	assert_true(ev.ts - ev.value >= before);
	assert_false(next_mount(&ev, name));
	/* an unmount while closed: the end that follows, open, sends nothing */
	cb_mount(&jvmti, &jni, (jthread)&t);
	atomic_store(&ctl.on, 0);
	cb_unmount(&jvmti, &jni, (jthread)&t);
	atomic_store(&ctl.on, VCPU);
	cb_end(&jvmti, &jni, (jthread)&t);
	assert_false(next_mount(&ev, name));
}

#define WALL (FGP_EVM_VTHREAD | FGP_EVM_VMOUNT)

/* One loop of a wall recording: a mount then an unmount of t; the unmount's end and the
 * mount's start by the clock around them into *unmounted and *mounted (either may be NULL). */
struct span {
	uint64_t lo, hi;
};

static void wall_loop(struct vt *t, struct span *mounted, struct span *unmounted)
{
	struct span m, u;

	m.lo = fg_now_ns();
	cb_mount(&jvmti, &jni, (jthread)t);
	m.hi = u.lo = fg_now_ns();
	cb_unmount(&jvmti, &jni, (jthread)t);
	u.hi = fg_now_ns();
	if (mounted)
		*mounted = m;
	if (unmounted)
		*unmounted = u;
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };

	nanosleep(&ts, NULL);
}

/*
 * A wall recording: each wait is counted from the unmount to the next mount, none after an
 * unmount the callbacks did not see (closed); every mount is sent. The waits with no stack are
 * sent together once due (VTCLAIM_FLUSH_NS).
 */
static void test_wall_waits(void **state)
{
	struct vt t = { "w", 5, NULL };
	struct span m1, u1, m2, u2;
	struct fgp_stack_event ev;
	char name[VTHREAD_NAME_MAX + 1];
	uint64_t lo, hi, got = 0;
	int mounts = 0, waits = 0;

	(void)state;
	turn_on(WALL);
	wall_loop(&t, NULL, &u1); /* first seen: no wait before */
	nap_ms(2);
	wall_loop(&t, &m1, NULL); /* a wait from u1 to m1 */
	/* an unmount not seen: the wait after it is not counted */
	cb_mount(&jvmti, &jni, (jthread)&t);
	atomic_store(&ctl.on, 0);
	cb_unmount(&jvmti, &jni, (jthread)&t);
	atomic_store(&ctl.on, WALL);
	nap_ms(5);
	wall_loop(&t, NULL, &u2);
	/* after VTCLAIM_FLUSH_NS, the next loop sends the group's time */
	nap_ms((long)(VTCLAIM_FLUSH_NS / 1000000) + 20);
	wall_loop(&t, &m2, NULL);
	lo = (m1.lo - u1.hi) + (m2.lo - u2.hi);
	hi = (m1.hi - u1.lo) + (m2.hi - u2.lo);
	for (struct qentry *e; (e = queue_pop(q)) != NULL; queue_release(q, e)) {
		struct fgp_record r;

		assert_int_equal(fgp_decode_record(e->data, e->len, &r), 1);
		assert_int_equal(r.type, FGP_STACK_EVENT);
		ev = r.u.ev;
		if (ev.kind == FGP_EV_VMOUNT) {
			mounts++;
			assert_true(ev.interval <= ev.value);
			continue;
		}
		assert_int_equal(ev.kind, FGP_EV_VWAIT);
		assert_int_equal(ev.depth, 0);
		memcpy(name, ev.cls.ptr, ev.cls.len);
		name[ev.cls.len] = 0;
		assert_string_equal(name, "w");
		got += (uint64_t)((double)ev.value * (double)ev.interval / FGP_VWAIT_ONE + 0.5);
		waits++;
	}
	assert_int_equal(mounts, 4);
	assert_int_equal(waits, 1);
	assert_true(got + 1000 >= lo && got <= hi + 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mount_to_unmount),
		cmocka_unit_test(test_each_carrier_its_own),
		cmocka_unit_test(test_mounted_before_the_kinds),
		cmocka_unit_test(test_closed_callbacks),
		cmocka_unit_test(test_wall_waits),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
