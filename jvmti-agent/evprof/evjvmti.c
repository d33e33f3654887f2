// SPDX-License-Identifier: MIT
/*
 * evjvmti.c - JVMTI callbacks of alloc, live and lock events, and their switch (see evjvmti.h).
 */
#include "evjvmti.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "allocgap.h"
#include "codelines.h"
#include "fgclock.h"
#include "fgjname.h"
#include "intern.h"
#include "names.h"
#include "samplefix.h"
#include "stackring.h"
#include "vmanchor.h"
#include "vmflags.h"
#include "vthread.h"

#define CLASS_MAX 1024 /* bytes of a class name kept (the wire allows FGP_MAX_STR) */
/* Frames a callback keeps on its own stack (the default depth and its flag frame fit). */
#define FRAMES_ON_STACK ((int)EVCTL_DEPTH_DEFAULT + 1)

static struct evjvmti_cfg cfg;
static const char unknown_key; /* the name table's key of "[unknown]" frames */
static uint32_t enabled;       /* FGP_EVM_* enabled in the JVM (the worker's own) */

/* allocstack=copy: the anchor's offsets, then cfg.ring in use (published last, with release
 * order, once the anchor is known). */
static struct vmanchor anchor;
static struct stackring *_Atomic ring;
static bool ring_tried; /* the worker's own */
static atomic_uint_fast64_t ring_fellback;
static atomic_bool ring_asked; /* alloc went on with cfg.ring: the ring was tried */

/* Gap weights (allocgap.h): the layout, bound once on the worker (gap_ok published with
 * release order after it), and the epoch the threads' readings are of (1..65535, moved each
 * time alloc goes on). */
static struct allocgap_layout gap;
static atomic_bool gap_ok;
static bool gap_tried; /* the worker's own */
static _Atomic uint16_t gap_epoch;

void evjvmti_init(const struct evjvmti_cfg *c)
{
	cfg = *c;
	vthread_init(c->ctl);
}

jvmtiEnv *evjvmti_env(void)
{
	return cfg.jvmti;
}

uint32_t evjvmti_caps(jvmtiEnv *jvmti)
{
	jvmtiCapabilities want;
	uint32_t on = 0;

	memset(&want, 0, sizeof(want));
	want.can_generate_sampled_object_alloc_events = 1;
	if ((*jvmti)->AddCapabilities(jvmti, &want) == JVMTI_ERROR_NONE)
		on |= FGP_EVM_ALLOC | FGP_EVM_EXACT; /* gap weights where the layout is known */
	memset(&want, 0, sizeof(want));
	want.can_tag_objects = 1;
	want.can_generate_object_free_events = 1;
	if ((on & FGP_EVM_ALLOC) && (*jvmti)->AddCapabilities(jvmti, &want) == JVMTI_ERROR_NONE)
		on |= FGP_EVM_LIVE;
	memset(&want, 0, sizeof(want));
	want.can_generate_monitor_events = 1;
	if ((*jvmti)->AddCapabilities(jvmti, &want) == JVMTI_ERROR_NONE)
		on |= FGP_EVM_LOCK;
	return on | vthread_caps(jvmti);
}

/* ---- names -------------------------------------------------------------------------------- */

size_t evjvmti_class_name(const char *sig, char *dst, size_t cap)
{
	return fg_java_class_name(sig ? sig : "", sig ? strlen(sig) : 0, dst, cap);
}

/* The class of k as Java writes it into dst: its length, or 0 when JVMTI cannot say. */
static size_t class_of(jclass k, char *dst, size_t cap)
{
	char *sig = NULL;
	size_t n;

	if (!k || (*cfg.jvmti)->GetClassSignature(cfg.jvmti, k, &sig, NULL) != JVMTI_ERROR_NONE)
		return 0;
	n = evjvmti_class_name(sig, dst, cap);
	(*cfg.jvmti)->Deallocate(cfg.jvmti, (unsigned char *)sig);
	return n;
}

/* m's interned id: resolved and added the first time. 0 when the table cannot take it. */
static uint32_t method_id(JNIEnv *jni, jmethodID m)
{
	char *name = NULL;
	uint32_t id;

	if (names_resolve(cfg.jvmti, jni, m, cfg.signatures, &name) != 0) {
		static const char unknown[] = "[unknown]";

		return intern_add_spin(cfg.names, &unknown_key, unknown, sizeof(unknown) - 1);
	}
	id = intern_add_spin(cfg.names, m, name, strlen(name));
	free(name);
	return id;
}

int evjvmti_frames(JNIEnv *jni, const jvmtiFrameInfo *fi, int n, struct fgp_frame_in *out)
{
	const void *keys_here[FRAMES_ON_STACK], **keys = keys_here;
	uint32_t ids_here[FRAMES_ON_STACK], *ids = ids_here;
	int rv = 0;

	if (n <= 0)
		return 0;
	if (n > FRAMES_ON_STACK) {
		keys = calloc((size_t)n, sizeof(*keys) + sizeof(*ids));
		if (!keys)
			return -ENOSPC;
		ids = (uint32_t *)(keys + n);
	}
	for (int i = 0; i < n; i++)
		keys[i] = fi[i].method;
	if (intern_find_many(cfg.names, keys, (size_t)n, ids) != 0) {
		rv = -EBUSY;
		goto out;
	}
	for (int i = 0; i < n && rv == 0; i++) {
		if (!ids[i] && !(ids[i] = method_id(jni, fi[i].method)))
			rv = -ENOSPC;
		out[i].method_id = ids[i];
		out[i].line =
			codelines_line(cfg.lines, cfg.jvmti, fi[i].method, (jint)fi[i].location);
	}
out:
	if (keys != keys_here)
		free(keys);
	return rv;
}

/* ---- one event ---------------------------------------------------------------------------- */

/* An event in the making: its record and the buffers behind it. */
struct ev {
	struct fgp_stack_event_in in;
	jthread thread; /* the calling thread, as the event gave it */
	char cls[CLASS_MAX];
	jvmtiFrameInfo *fi; /* fi_here, or malloc'ed for a deeper stack */
	struct fgp_frame_in *frames;
	jvmtiFrameInfo fi_here[FRAMES_ON_STACK];
	struct fgp_frame_in frames_here[FRAMES_ON_STACK];
};

/*
 * The calling thread's stack into e (at most the depth asked). 0, or the drop's cause. The
 * stack is asked of the event's thread, not NULL: on OpenJDK 21 a NULL thread holds every
 * virtual thread's mounts and unmounts while it is taken (a disabler for all), where the
 * thread itself holds only its own.
 */
static int take_stack(JNIEnv *jni, struct ev *e)
{
	uint32_t depth = atomic_load(&cfg.ctl->depth);
	jint count = 0;
	int rv;

	if (depth == 0 || depth > FGP_MAX_EVENT_DEPTH)
		depth = EVCTL_DEPTH_DEFAULT;
	/* One frame more than kept: a stack cut at the cap is flagged. */
	e->fi = e->fi_here;
	e->frames = e->frames_here;
	if (depth + 1 > (uint32_t)FRAMES_ON_STACK) {
		e->fi = malloc((depth + 1) * (sizeof(*e->fi) + sizeof(*e->frames)));
		if (!e->fi)
			return EVCTL_DROP_NO_STACK;
		e->frames = (struct fgp_frame_in *)(e->fi + depth + 1);
	}
	if ((*cfg.jvmti)->GetStackTrace(cfg.jvmti, e->thread, 0, (jint)depth + 1, e->fi, &count) !=
	    JVMTI_ERROR_NONE)
		return EVCTL_DROP_NO_STACK;
	if ((uint32_t)count > depth) {
		count = (jint)depth;
		e->in.flags |= FGP_REC_STACK_TRUNCATED;
	}
	rv = evjvmti_frames(jni, e->fi, count, e->frames);
	if (rv != 0)
		return EVCTL_DROP_NO_NAME;
	e->in.depth = (uint16_t)count;
	e->in.frames = e->frames;
	return -1;
}

/* The calling thread's slot: its tid (low 32 bits), asked of the kernel once per thread, not
 * once per event, and the interval in force at its last allocation sample (high 32 bits; 0:
 * none yet). (A _Thread_local would make the agent need ld.so's __tls_get_addr.) */
static pthread_key_t tid_key, prev_key, gap_key;
static bool tid_key_ok, prev_key_ok, gap_key_ok;
static pthread_once_t tid_once = PTHREAD_ONCE_INIT;
static atomic_bool tid_made; /* the keys are made: a load, not a call, every time after */

static void tid_key_make(void)
{
	tid_key_ok = pthread_key_create(&tid_key, NULL) == 0;
	prev_key_ok = cfg.sampler_fix && pthread_key_create(&prev_key, NULL) == 0;
	gap_key_ok = sizeof(void *) >= sizeof(uint64_t) && pthread_key_create(&gap_key, NULL) == 0;
	atomic_store_explicit(&tid_made, true, memory_order_release);
}

static uint64_t my_slot(void)
{
	uint64_t slot;

	if (!atomic_load_explicit(&tid_made, memory_order_acquire))
		(void)pthread_once(&tid_once, tid_key_make);
	if (tid_key_ok && (slot = (uint64_t)(uintptr_t)pthread_getspecific(tid_key)) != 0)
		return slot;
	slot = (uint32_t)syscall(SYS_gettid);
	if (tid_key_ok)
		(void)pthread_setspecific(tid_key, (void *)(uintptr_t)slot);
	return slot;
}

uint32_t evjvmti_tid(void)
{
	return (uint32_t)my_slot();
}

uint64_t evjvmti_sample_interval(uint64_t *slot, uint64_t now)
{
	uint64_t prev = *slot >> 32;

	if (now > UINT32_MAX)
		now = UINT32_MAX;
	*slot = (*slot & UINT32_MAX) | now << 32;
	return prev ? prev : now;
}

/* The interval the calling thread's sample was drawn with (evjvmti.h), now in force. */
static uint64_t my_interval(uint64_t now)
{
	uint64_t slot = my_slot(), iv = evjvmti_sample_interval(&slot, now);

	if (tid_key_ok && sizeof(void *) >= sizeof(uint64_t))
		(void)pthread_setspecific(tid_key, (void *)(uintptr_t)slot);
	else
		iv = now; /* no slot to keep it in: the interval in force */
	return iv;
}

/* The size of the calling thread's previous allocation sample (0: none, or not kept), size now
 * (samplefix.h: only where the JVM's sampler needs the correction). */
static uint64_t my_prev_size(uint64_t size)
{
	uint64_t prev;

	(void)pthread_once(&tid_once, tid_key_make);
	if (!prev_key_ok || sizeof(void *) < sizeof(uint64_t))
		return 0;
	prev = (uint64_t)(uintptr_t)pthread_getspecific(prev_key);
	(void)pthread_setspecific(prev_key, (void *)(uintptr_t)size);
	return prev;
}

/* The gap weight of the calling thread's sample (allocgap.h), or 0 for the interval weight. */
static uint64_t my_gap(JNIEnv *jni, uint64_t size, uint64_t interval)
{
	uint64_t bytes, state, w;

	(void)pthread_once(&tid_once, tid_key_make);
	if (!gap_key_ok || !atomic_load_explicit(&gap_ok, memory_order_acquire) ||
	    !allocgap_read(&gap, jni, &bytes))
		return 0;
	state = (uint64_t)(uintptr_t)pthread_getspecific(gap_key);
	w = allocgap_weigh(&state, atomic_load_explicit(&gap_epoch, memory_order_relaxed), bytes,
			   size, interval);
	(void)pthread_setspecific(gap_key, (void *)(uintptr_t)state);
	return w;
}

/* A uniform draw in [0, 1) for any thread, lock-free (splitmix64 over a shared counter). */
static double uniform01(void)
{
	static atomic_uint_fast64_t seq;
	uint64_t z = atomic_fetch_add_explicit(&seq, 0x9e3779b97f4a7c15ull, memory_order_relaxed);

	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (double)(z >> 11) * 0x1.0p-53;
}

/* Take the stack and push the event (e's class, kind and values are set). */
static void finish(JNIEnv *jni, struct ev *e, jobject tagged)
{
	int why;

	e->in.ts = fg_now_ns();
	e->in.tid = evjvmti_tid();
	e->in.cls = (struct fgp_str){ e->cls, (uint16_t)strlen(e->cls) };
	why = take_stack(jni, e);
	if (why >= 0)
		evctl_drop(cfg.ctl, (enum evctl_drop)why);
	else if (evctl_push_event(cfg.ctl, &e->in) == 0)
		tagged = NULL; /* sent: the tag stays */
	if (tagged && e->in.tag) {
		(*cfg.jvmti)->SetTag(cfg.jvmti, tagged, 0); /* never sent: not tracked */
		evctl_untrack(cfg.ctl);
	}
	if (e->fi != e->fi_here)
		free(e->fi);
}

/* e ready for an event of kind: its record zeroed, its buffers not (4 KiB a callback need not
 * clear: each is written before it is read). */
static void ev_init(struct ev *e, uint16_t kind, jthread thread)
{
	e->in = (struct fgp_stack_event_in){ .kind = kind };
	e->thread = thread;
	e->cls[0] = '\0';
	e->fi = e->fi_here;
	e->frames = e->frames_here;
}

/*
 * allocstack=copy: the calling thread's last Java frame and the top of its stack into the ring,
 * with e's size and interval and the class's Klass*: true when done (the sample is the ring's,
 * sent or lost there), false when the thread has no usable anchor (GetStackTrace then).
 */
static bool copy_stack(JNIEnv *jni, jclass klass, const struct ev *e)
{
	struct stackring *r = atomic_load_explicit(&ring, memory_order_acquire);
	struct vmanchor_frame f;
	struct stackring_sample s;

	if (!r)
		return false;
	if (vmanchor_take(&anchor, jni, (uintptr_t)__builtin_frame_address(0), &f) != 0) {
		atomic_fetch_add_explicit(&ring_fellback, 1, memory_order_relaxed);
		return false;
	}
	/* No pc in the anchor: the frame's pc is the return address just below its sp (on this
	 * thread's stack, above the callback's own frame: vmanchor_take checked sp > here). */
	if (!f.pc)
		memcpy(&f.pc, (const void *)(uintptr_t)(f.sp - 8), sizeof(f.pc));
	s = (struct stackring_sample){
		.ts = fg_now_ns(),
		.size = e->in.value,
		.interval = e->in.interval,
		.klass = vmanchor_klass(&anchor, klass),
		.sp = f.sp,
		.fp = f.fp,
		.pc = f.pc,
		.tid = evjvmti_tid(),
		.flags = 0,
		.gap = (e->in.flags & FGP_REC_ALLOC_GAP) ? e->in.weight : 0,
		.stack = (const void *)(uintptr_t)f.sp,
		.len = (size_t)(f.top - f.sp),
	};
	(void)stackring_put(r, &s); /* a busy slot is counted in the ring's head */
	return true;
}

static void alloc_event(JNIEnv *jni, jthread thread, jobject object, jclass klass, jlong size,
			uint32_t on)
{
	struct ev e;
	uint64_t prev;

	if (size <= 0)
		return;
	ev_init(&e, FGP_EV_ALLOC, thread);
	e.in.value = (uint64_t)size;
	e.in.interval = atomic_load(&cfg.ctl->alloc_interval);
	if (e.in.interval == 0)
		return;
	e.in.interval = my_interval(e.in.interval);
	/* JDK 11's sampler takes too many samples after a sample: the surplus is thinned out
	 * (samplefix.h) before anything is spent on it. */
	prev = cfg.sampler_fix ? my_prev_size(e.in.value) : 0;
	if (prev && uniform01() < samplefix_drop_chance(prev, e.in.value, e.in.interval)) {
		atomic_fetch_add_explicit(&cfg.ctl->thinned, 1, memory_order_relaxed);
		return;
	}
	if ((on & FGP_EVM_EXACT) && (e.in.weight = my_gap(jni, e.in.value, e.in.interval)) != 0)
		e.in.flags |= FGP_REC_ALLOC_GAP;
	if (!(on & FGP_EVM_LIVE) && (cfg.ring_always || (on & FGP_EVM_RING)) &&
	    copy_stack(jni, klass, &e)) {
		evctl_copied(cfg.ctl);
		return;
	}
	if (!class_of(klass, e.cls, sizeof(e.cls))) {
		evctl_drop(cfg.ctl, EVCTL_DROP_NO_CLASS);
		return;
	}
	if ((on & FGP_EVM_LIVE) && (e.in.tag = evctl_new_tag(cfg.ctl)) != 0 &&
	    (*cfg.jvmti)->SetTag(cfg.jvmti, object, (jlong)e.in.tag) != JVMTI_ERROR_NONE) {
		evctl_untrack(cfg.ctl); /* never tracked after all */
		e.in.tag = 0;
		evctl_drop(cfg.ctl, EVCTL_DROP_LIVE_FULL);
	}
	finish(jni, &e, e.in.tag ? object : NULL);
}

/* The calling thread's CPU time: its own cost, not the time others ran while it was
 * preempted (a system call: asked for one callback in EVCTL_TIME_EVERY only). */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void JNICALL on_sampled_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
				     jclass klass, jlong size)
{
	uint32_t on = evctl_enter(cfg.ctl);

	(void)jvmti;
	if ((on & FGP_EVM_ALLOC) && evctl_sample_timed(cfg.ctl)) {
		uint64_t t0 = thread_cpu_ns();

		alloc_event(jni, thread, object, klass, size, on);
		evctl_timed(cfg.ctl, thread_cpu_ns() - t0);
	} else if (on & FGP_EVM_ALLOC) {
		alloc_event(jni, thread, object, klass, size, on);
	}
	evctl_leave(cfg.ctl);
}

static void JNICALL on_object_free(jvmtiEnv *jvmti, jlong tag)
{
	uint32_t on = evctl_enter(cfg.ctl);

	(void)jvmti;
	if (on & FGP_EVM_LIVE)
		evctl_freed(cfg.ctl, (uint64_t)tag);
	evctl_leave(cfg.ctl);
}

static void JNICALL on_contended_enter(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object)
{
	uint32_t on = evctl_enter(cfg.ctl);

	(void)jni;
	(void)thread;
	(void)object;
	if (on & FGP_EVM_LOCK)
		(*jvmti)->SetThreadLocalStorage(jvmti, NULL, (const void *)(uintptr_t)fg_now_ns());
	evctl_leave(cfg.ctl);
}

static void lock_event(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object)
{
	struct ev e;
	void *start = NULL;
	uint64_t t0, now = fg_now_ns();
	jclass k;

	if ((*jvmti)->GetThreadLocalStorage(jvmti, NULL, &start) != JVMTI_ERROR_NONE || !start)
		return;
	ev_init(&e, FGP_EV_LOCK, thread);
	(*jvmti)->SetThreadLocalStorage(jvmti, NULL, NULL);
	t0 = (uint64_t)(uintptr_t)start;
	if (t0 < atomic_load(&cfg.ctl->lock_since) || now < t0)
		return; /* entered before lock went on: not timed whole */
	e.in.value = now - t0;
	e.in.interval = atomic_load(&cfg.ctl->lock_ns);
	if (e.in.value < e.in.interval) {
		evctl_lock_short(cfg.ctl, e.in.value);
		return;
	}
	k = (*jni)->GetObjectClass(jni, object);
	if (!class_of(k, e.cls, sizeof(e.cls))) {
		evctl_drop(cfg.ctl, EVCTL_DROP_NO_CLASS);
		if (k)
			(*jni)->DeleteLocalRef(jni, k);
		return;
	}
	(*jni)->DeleteLocalRef(jni, k);
	finish(jni, &e, NULL);
}

static void JNICALL on_contended_entered(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
					 jobject object)
{
	uint32_t on = evctl_enter(cfg.ctl);

	if (on & FGP_EVM_LOCK)
		lock_event(jvmti, jni, thread, object);
	evctl_leave(cfg.ctl);
}

_Static_assert(sizeof(jvmtiEventCallbacks) <= sizeof(((union evjvmti_callbacks *)0)->slot),
	       "the slots cover every callback the headers name");

void evjvmti_callbacks(union evjvmti_callbacks *cb, uint32_t caps)
{
	if (caps & FGP_EVM_ALLOC)
		cb->cb.SampledObjectAlloc = on_sampled_alloc;
	if (caps & FGP_EVM_LIVE)
		cb->cb.ObjectFree = on_object_free;
	if (caps & FGP_EVM_LOCK) {
		cb->cb.MonitorContendedEnter = on_contended_enter;
		cb->cb.MonitorContendedEntered = on_contended_entered;
	}
	if (caps & FGP_EVM_VTHREAD)
		vthread_callbacks(&cb->slot[EVJVMTI_EVENT_VT_START - 50],
				  &cb->slot[EVJVMTI_EVENT_VT_END - 50]);
}

/* ---- the switch --------------------------------------------------------------------------- */

/* Turn the JVMTI events of kind (FGP_EVM_*) on or off: 0 or -EIO. */
static int set_kind(uint32_t kind, bool on)
{
	static const struct {
		uint32_t kind;
		jvmtiEvent ev;
	} evs[] = {
		{ FGP_EVM_ALLOC, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC },
		{ FGP_EVM_LIVE, JVMTI_EVENT_OBJECT_FREE },
		{ FGP_EVM_LOCK, JVMTI_EVENT_MONITOR_CONTENDED_ENTER },
		{ FGP_EVM_LOCK, JVMTI_EVENT_MONITOR_CONTENDED_ENTERED },
	};
	jvmtiEventMode mode = on ? JVMTI_ENABLE : JVMTI_DISABLE;
	int rv = 0;

	if (kind == FGP_EVM_VTHREAD)
		return vthread_enable(cfg.jvmti, on);
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		if (evs[i].kind == kind &&
		    (*cfg.jvmti)->SetEventNotificationMode(cfg.jvmti, mode, evs[i].ev, NULL) !=
			    JVMTI_ERROR_NONE)
			rv = -EIO;
	if (rv != 0 && on)
		(void)set_kind(kind, false); /* all of a kind's events or none */
	return rv;
}

/* The worker's thread, attached to the VM (as a daemon) the first time. */
static int attach(void)
{
	JavaVMAttachArgs a = { JNI_VERSION_1_6, (char *)"fgagent events", NULL };
	JNIEnv *jni = NULL;

	if (!cfg.live || !atomic_load(cfg.live))
		return -EAGAIN; /* attaching before VMInit crashes HotSpot (agent.c) */
	if ((*cfg.vm)->GetEnv(cfg.vm, (void **)&jni, JNI_VERSION_1_6) == JNI_OK ||
	    (*cfg.vm)->AttachCurrentThreadAsDaemon(cfg.vm, (void **)&jni, &a) == JNI_OK)
		return 0;
	return -EAGAIN;
}

/*
 * The anchor's offsets, for a JVM whose collector keeps plain addresses in JNI handles: with
 * ZGC or Shenandoah a handle's oop may be colored or forwarded, and the class's mirror is not
 * read outside the VM's barriers (every sample takes GetStackTrace there).
 */
static int anchor_of(const struct vmstructs *vs, void *arg)
{
	static const char *const barriered[] = { "UseZGC", "UseShenandoahGC" };
	bool on;

	(void)arg;
	for (size_t i = 0; i < sizeof(barriered) / sizeof(barriered[0]); i++)
		if (vmflags_bool(vs, barriered[i], &on) == 0 && on)
			return -ENOTSUP;
	if (vmflags_bool(vs, "UseG1GC", &on) != 0)
		return -ENOENT; /* not a flag table this agent reads */
	return vmanchor_build(vs, &anchor);
}

/* The calling thread's JavaThread* (java.lang.Thread.eetop): 0 with *out, or -ENOENT. */
static int eetop_of(JNIEnv *jni, uint64_t *out)
{
	jthread t = NULL;
	jclass k;
	jfieldID f;
	jlong v = 0;

	if ((*cfg.jvmti)->GetCurrentThread(cfg.jvmti, &t) != JVMTI_ERROR_NONE || !t)
		return -ENOENT;
	k = (*jni)->FindClass(jni, "java/lang/Thread");
	f = k ? (*jni)->GetFieldID(jni, k, "eetop", "J") : NULL;
	if (f)
		v = (*jni)->GetLongField(jni, t, f);
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	if (k)
		(*jni)->DeleteLocalRef(jni, k);
	(*jni)->DeleteLocalRef(jni, t);
	*out = (uint64_t)v;
	return v ? 0 : -ENOENT;
}

static int gap_of(const struct vmstructs *vs, void *arg)
{
	(void)arg;
	return allocgap_build(vs, &gap);
}

/* Gap weights: the layout, once (on the worker, attached). */
static void gap_setup(void)
{
	JNIEnv *jni = NULL;
	uint64_t thread;

	gap_tried = true;
	if ((*cfg.vm)->GetEnv(cfg.vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK ||
	    vmstructs_with((const void *)(*cfg.jvmti)->GetVersionNumber, gap_of, NULL) != 0 ||
	    eetop_of(jni, &thread) != 0 ||
	    allocgap_bind(&gap, jni, (const void *)(uintptr_t)thread) != 0)
		return; /* interval weights */
	atomic_store_explicit(&gap_ok, true, memory_order_release);
}

/* allocstack=copy: the anchor's offsets and the ring, once (on the worker, attached). */
static void ring_setup(void)
{
	JNIEnv *jni = NULL;
	uint64_t thread;

	ring_tried = true;
	atomic_store_explicit(&ring_asked, true, memory_order_relaxed);
	if ((*cfg.vm)->GetEnv(cfg.vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK ||
	    vmstructs_with((const void *)(*cfg.jvmti)->GetVersionNumber, anchor_of, NULL) != 0 ||
	    eetop_of(jni, &thread) != 0 ||
	    vmanchor_bind(&anchor, jni, (const void *)(uintptr_t)thread,
			  (uintptr_t)__builtin_frame_address(0)) != 0)
		return;		      /* GetStackTrace for every sample */
	stackring_populate(cfg.ring); /* its memory, now that alloc is on: no fault in a sample */
	atomic_store_explicit(&ring, cfg.ring, memory_order_release);
}

bool evjvmti_ring(const void **base, uint64_t *size, uint64_t *copied, uint64_t *fellback)
{
	struct stackring *r = atomic_load_explicit(&ring, memory_order_acquire);

	if (copied)
		*copied = r ? stackring_claimed(r) - stackring_busy(r) : 0;
	if (fellback)
		*fellback = atomic_load_explicit(&ring_fellback, memory_order_relaxed);
	if (!r)
		return false;
	*base = stackring_base(r);
	*size = stackring_size(r);
	return true;
}

bool evjvmti_ring_asked(void)
{
	return atomic_load_explicit(&ring_asked, memory_order_relaxed);
}

int evjvmti_apply(void *arg, const struct evset *want, struct evset *got)
{
	static const uint32_t kinds[] = { FGP_EVM_LIVE, FGP_EVM_ALLOC, FGP_EVM_LOCK,
					  FGP_EVM_VTHREAD };
	uint32_t was = enabled;
	int rv = 0, r;

	(void)arg;
	if ((r = attach()) != 0)
		return r;
	if (cfg.ring && (want->on & FGP_EVM_ALLOC) &&
	    (cfg.ring_always || (want->on & FGP_EVM_RING)) && !ring_tried)
		ring_setup();
	if ((want->on & FGP_EVM_ALLOC) && (want->on & FGP_EVM_EXACT) && !gap_tried)
		gap_setup();
	if ((want->on & FGP_EVM_ALLOC) &&
	    (*cfg.jvmti)->SetHeapSamplingInterval(cfg.jvmti, (jint)want->alloc_interval) !=
		    JVMTI_ERROR_NONE)
		rv = -EIO;
	/* The mounts alone, or with their waits, from a fresh start of the virtual threads'
	 * events: what the carriers kept of the other way is of before it. */
	if ((enabled & FGP_EVM_VTHREAD) && (want->on & FGP_EVM_VTHREAD) &&
	    !(enabled & FGP_EVM_VCPU) != !vthread_vcpu(want->on) &&
	    set_kind(FGP_EVM_VTHREAD, false) == 0)
		enabled &= ~(FGP_EVM_VTHREAD | FGP_EVM_VCPU);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		bool on = (want->on & kinds[i]) && !(kinds[i] == FGP_EVM_ALLOC && rv);

		if (on == !!(enabled & kinds[i]))
			continue;
		if ((r = set_kind(kinds[i], on)) == 0)
			enabled = on ? enabled | kinds[i] : enabled & ~kinds[i];
		else
			rv = r;
	}
	/* Mounts are sent by the virtual threads' callbacks: on with them, no event of their own.
	 */
	if ((want->on & FGP_EVM_VMOUNT) && (enabled & FGP_EVM_VTHREAD))
		enabled |= FGP_EVM_VMOUNT;
	else
		enabled &= ~FGP_EVM_VMOUNT;
	/* Gap weights, where the layout is known and the collector reads them (with alloc on);
	 * alloc going on, or they, start a new epoch: no gap spans a time alloc was off. */
	if ((want->on & FGP_EVM_EXACT) && (enabled & FGP_EVM_ALLOC) &&
	    atomic_load_explicit(&gap_ok, memory_order_acquire)) {
		if (!(enabled & FGP_EVM_EXACT) || !(was & FGP_EVM_ALLOC)) {
			uint16_t ep = (uint16_t)(atomic_load(&gap_epoch) + 1);

			atomic_store(&gap_epoch, ep ? ep : 1);
		}
		enabled |= FGP_EVM_EXACT;
	} else {
		enabled &= ~FGP_EVM_EXACT;
	}
	/* The collector reads the ring: the callbacks may copy into it (with alloc on). */
	if ((want->on & FGP_EVM_RING) && (enabled & FGP_EVM_ALLOC))
		enabled |= FGP_EVM_RING;
	else
		enabled &= ~FGP_EVM_RING;
	/* ... as is sending the mounts alone */
	if ((enabled & FGP_EVM_VMOUNT) && vthread_vcpu(want->on))
		enabled |= FGP_EVM_VCPU;
	else
		enabled &= ~FGP_EVM_VCPU;
	/* ... as is naming an unnamed one's stacks by its id */
	if ((want->on & FGP_EVM_VTID) && (enabled & FGP_EVM_VTHREAD))
		enabled |= FGP_EVM_VTID;
	else
		enabled &= ~FGP_EVM_VTID;
	/* Live without alloc tracks nothing: off too. */
	if ((enabled & FGP_EVM_LIVE) && !(enabled & FGP_EVM_ALLOC) &&
	    set_kind(FGP_EVM_LIVE, false) == 0)
		enabled &= ~FGP_EVM_LIVE;
	*got = *want;
	got->on = enabled;
	if (!(enabled & FGP_EVM_ALLOC))
		got->alloc_interval = 0;
	if (!(enabled & FGP_EVM_LOCK))
		got->lock_ns = 0;
	if (!enabled)
		got->depth = 0;
	return rv;
}

void evjvmti_leave(void *arg)
{
	JNIEnv *jni = NULL;

	(void)arg;
	if ((*cfg.vm)->GetEnv(cfg.vm, (void **)&jni, JNI_VERSION_1_6) == JNI_OK)
		(*cfg.vm)->DetachCurrentThread(cfg.vm);
}
