// SPDX-License-Identifier: MIT
/* vthread.c - virtual threads' waits as FGP_EV_VWAIT stack events (see vthread.h). */
#include "vthread.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "evctl.h"
#include "evjvmti.h"
#include "fgclock.h"
#include "fgproto.h"
#include "vtclaim.h"
#include "vtheld.h"

#define BUCKET_NS 100000000ull /* the chance is set again this often */
#define CHANCE_ONE 0xffffffffu /* chance in 2^-32 units */
#define MOUNTS_MASK ((1ull << 40) - 1)
#define SEEN_MAX ((1ull << 24) - 1)
#define VCPU_ON (FGP_EVM_VTHREAD | FGP_EVM_VMOUNT | FGP_EVM_VCPU) /* the mounts alone */

_Static_assert(VTHREAD_HELD <= VTHELD_SLOTS_MAX, "the pool's handles index every slot");

static const char vt_class[] = "java.lang.VirtualThread";

/*
 * A wait whose stack was taken at the unmount, held until the mount in a slot of the pool
 * (vtheld.h): this header, then cap frames, then the cap + 1 jvmtiFrameInfo GetStackTrace
 * fills (the frames are named from them).
 */
struct vwait {
	uint64_t t0;
	uint16_t depth, flags;
	uint16_t group;	   /* its name group's (vtclaim.h) */
	uint16_t name_len; /* 0: unnamed (sent as vt_class) */
	char name[VTHREAD_NAME_MAX];
	struct fgp_frame_in frames[];
};

/* The bytes of a slot for depth frames. */
#define VWAIT_STRIDE(depth)                                                                        \
	(sizeof(struct vwait) + (depth) * sizeof(struct fgp_frame_in) +                            \
	 ((depth) + 1) * sizeof(jvmtiFrameInfo))

static struct evctl *ctl;
static jint ext_index[2] = { -1, -1 }; /* mount, unmount */
static atomic_uint_fast64_t since;     /* when the kind went on */
static atomic_uint_fast64_t mounts, seen;
static atomic_uint_fast64_t bucket_t0, bucket_n;
static atomic_uint chance = CHANCE_ONE;
/* Unmounted time counted and not yet sent, per name group (made at the first vthread_enable). */
static struct vtclaim claims;
/* The held stacks (made by the events worker at the first vthread_enable, then kept). */
static _Atomic(struct vtheld *) pool;

/*
 * Thread-local storage of a virtual thread: 0 never seen; (ts << 2) | 1: unmounted since ts
 * with no stack; (ts << 2) | 3: mounted at ts; even: the handle of its slot in the pool
 * (vtheld.h), whose wait began at its t0. A stamp older than since, or a handle of an earlier
 * generation, is of an earlier recording: the thread is seen anew. The mounts alone (a CPU
 * recording) neither read nor write it: their carrier keeps each mount's start (KEY_WORD).
 */
#define TLS_STAMP VTHREAD_TLS_STAMP
#define TLS_MOUNTED VTHREAD_TLS_MOUNTED

static uint64_t stamp_ts(const void *v)
{
	return (uint64_t)(uintptr_t)v >> 2;
}

/* The held wait of handle v, or NULL (of an earlier recording, or no pool). *cap: its frames
 * at most. */
static struct vwait *held_wait(const void *v, uint32_t *cap)
{
	struct vtheld *h = atomic_load(&pool);
	size_t stride = 0;
	struct vwait *w = h ? vtheld_get(h, (uint64_t)(uintptr_t)v, &stride) : NULL;

	if (!w || stride < VWAIT_STRIDE(0))
		return NULL;
	*cap = (uint32_t)((stride - VWAIT_STRIDE(0)) /
			  (sizeof(struct fgp_frame_in) + sizeof(jvmtiFrameInfo)));
	return w;
}

/* When v's wait began; 0 for a stack of an earlier recording (seen anew). */
static uint64_t wait_since(const void *v)
{
	uint32_t cap;
	const struct vwait *w;

	if ((uintptr_t)v & TLS_STAMP)
		return stamp_ts(v);
	w = held_wait(v, &cap);
	return w ? w->t0 : 0;
}

static void count_seen(void)
{
	if (atomic_load_explicit(&seen, memory_order_relaxed) < SEEN_MAX)
		atomic_fetch_add_explicit(&seen, 1, memory_order_relaxed);
}

/* Let go of v's slot if it holds one of this recording (one of an earlier one is free). */
static void let_go(void *v)
{
	struct vtheld *h = atomic_load(&pool);

	if (h && vtheld_is_handle((uint64_t)(uintptr_t)v))
		(void)vtheld_put(h, (uint64_t)(uintptr_t)v);
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Whether this unmount takes its stack; the chance follows the unmount rate. */
static bool take_this(uint64_t now)
{
	uint64_t n = atomic_fetch_add_explicit(&bucket_n, 1, memory_order_relaxed) + 1;
	uint64_t t0 = atomic_load_explicit(&bucket_t0, memory_order_relaxed);

	if (now - t0 >= BUCKET_NS && atomic_compare_exchange_strong(&bucket_t0, &t0, now)) {
		/* The unmounts of the bucket just ended: stacks wanted / unmounts, at most 1. */
		double want = (double)VTHREAD_STACKS_PER_S * (double)(now - t0) / 1e9;
		double c = n ? want / (double)n : 1.0;

		atomic_store_explicit(&chance, c >= 1.0 ? CHANCE_ONE : (unsigned)(c * CHANCE_ONE),
				      memory_order_relaxed);
		atomic_store_explicit(&bucket_n, 0, memory_order_relaxed);
	}
	return (mix(now ^ n << 32) >> 32) <= atomic_load_explicit(&chance, memory_order_relaxed);
}

/*
 * Whether the stack fi (count frames, innermost first) is of a virtual thread's last unmount,
 * as it ends (HotSpot posts one from VirtualThread.notifyJvmtiEnd): no mount follows, its
 * stack would be held for ever. The method is known by name once, then by its id.
 */
static bool last_unmount(const jvmtiFrameInfo *fi, jint count)
{
	static const char end[] = "notifyJvmtiEnd";
	static atomic_uintptr_t end_mid;
	jvmtiEnv *e = evjvmti_env();

	for (jint i = 0; i < count && i < 3; i++) {
		uintptr_t m = (uintptr_t)(void *)fi[i].method, known = atomic_load(&end_mid);
		char *name = NULL;
		bool is;

		if (known) {
			if (m == known)
				return true;
			continue;
		}
		if ((*e)->GetMethodName(e, fi[i].method, &name, NULL, NULL) != JVMTI_ERROR_NONE ||
		    !name)
			continue;
		is = strcmp(name, end) == 0;
		(*e)->Deallocate(e, (unsigned char *)name);
		if (is) {
			atomic_store(&end_mid, m);
			return true;
		}
	}
	return false;
}

/* A field of java.lang.Thread, looked up once (*fid; *none when it has no such field). */
static jfieldID thread_field(JNIEnv *jni, _Atomic(jfieldID) *fid, atomic_bool *none,
			     const char *name, const char *sig)
{
	jfieldID f = atomic_load(fid);
	jclass c;

	if (f || atomic_load(none))
		return f;
	if (!(c = (*jni)->FindClass(jni, "java/lang/Thread"))) {
		(*jni)->ExceptionClear(jni);
		atomic_store(none, true);
		return NULL;
	}
	f = (*jni)->GetFieldID(jni, c, name, sig);
	(*jni)->DeleteLocalRef(jni, c);
	if (!f) {
		(*jni)->ExceptionClear(jni);
		atomic_store(none, true);
		return NULL;
	}
	atomic_store(fid, f);
	return f;
}

int vthread_name(JNIEnv *jni, jthread t, char *name)
{
	static _Atomic(jfieldID) fid;
	static atomic_bool none;
	jfieldID f = thread_field(jni, &fid, &none, "name", "Ljava/lang/String;");
	/* GetStringUTFRegion writes up to 3 bytes a char, and a NUL */
	char buf[3 * VTHREAD_NAME_MAX + 1];
	size_t len = 0;
	jstring s;
	jsize n;

	if (!f)
		return -ENOENT;
	/* Three JNI calls, each a transition into the VM and out: the local reference is the
	 * callback's (freed as it returns), and a region within the string's length, which never
	 * changes, throws nothing. */
	if (!(s = (jstring)(*jni)->GetObjectField(jni, t, f)))
		return 0;
	n = (*jni)->GetStringLength(jni, s);
	if (n > 0) {
		memset(buf, 0, sizeof(buf)); /* a JNI that did not end it with a NUL */
		(*jni)->GetStringUTFRegion(
			jni, s, 0, n < (jsize)VTHREAD_NAME_MAX ? n : (jsize)VTHREAD_NAME_MAX, buf);
		len = strnlen(buf, VTHREAD_NAME_MAX);
		memcpy(name, buf, len);
	}
	return (int)len;
}

/* The thread's name, at most VTHREAD_NAME_MAX bytes of it, into w (none when unnamed). */
static void take_name(JNIEnv *jni, jthread t, struct vwait *w)
{
	int got = vthread_name(jni, t, w->name);
	jvmtiThreadInfo ti;
	size_t n;

	w->name_len = got > 0 ? (uint16_t)got : 0;
	if (got >= 0)
		return;
	memset(&ti, 0, sizeof(ti));
	if ((*evjvmti_env())->GetThreadInfo(evjvmti_env(), t, &ti) != JVMTI_ERROR_NONE)
		return;
	if (ti.name) {
		n = strnlen(ti.name, VTHREAD_NAME_MAX);
		memcpy(w->name, ti.name, n);
		w->name_len = (uint16_t)n;
		(*evjvmti_env())->Deallocate(evjvmti_env(), (unsigned char *)ti.name);
	}
	if (ti.thread_group)
		(*jni)->DeleteLocalRef(jni, ti.thread_group);
	if (ti.context_class_loader)
		(*jni)->DeleteLocalRef(jni, ti.context_class_loader);
}

static uint64_t thread_id(JNIEnv *jni, jthread t);

/* An unnamed thread's name as its id, "#ID" (FGP_EVM_VTID), into w. */
static void name_by_id(JNIEnv *jni, jthread t, struct vwait *w)
{
	uint64_t id = thread_id(jni, t);
	char d[24];
	size_t n = 0;

	if (!id)
		return;
	while (id && n < sizeof(d)) {
		d[n++] = (char)('0' + id % 10);
		id /= 10;
	}
	w->name[0] = '#';
	for (size_t i = 0; i < n; i++)
		w->name[1 + i] = d[n - 1 - i];
	w->name_len = (uint16_t)(n + 1);
}

/* The depth the collector asks (the default when it gives none). */
static uint32_t asked_depth(void)
{
	uint32_t depth = atomic_load(&ctl->depth);

	return depth == 0 || depth > FGP_MAX_EVENT_DEPTH ? EVCTL_DEPTH_DEFAULT : depth;
}

jvmtiError vthread_stack(jvmtiEnv *jvmti, jthread t, jint max, jvmtiFrameInfo *fi, jint *count)
{
	return t ? (*jvmti)->GetStackTrace(jvmti, t, 0, max, fi, count)
		 : JVMTI_ERROR_INVALID_THREAD;
}

/*
 * The calling (virtual) thread's stack into a slot of the pool: its handle, or NULL (none
 * free, or the stack could not be taken: counted). on: the kinds on (FGP_EVM_VTID: an unnamed
 * thread named by its id).
 */
static void *take_stack(JNIEnv *jni, jthread t, uint64_t now, uint32_t on)
{
	struct vtheld *h = atomic_load(&pool);
	uint32_t depth = asked_depth(), cap;
	uint64_t handle = 0;
	size_t stride = 0;
	jvmtiFrameInfo *fi;
	struct vwait *w;
	void *mem = NULL;
	jint count = 0;

	if (!h || vtheld_take(h, &handle, &mem, &stride) != 0) {
		evctl_drop(ctl, EVCTL_DROP_QUEUE); /* every slot held (or none yet) */
		return NULL;
	}
	w = mem;
	cap = (uint32_t)((stride - VWAIT_STRIDE(0)) /
			 (sizeof(struct fgp_frame_in) + sizeof(jvmtiFrameInfo)));
	if (depth > cap)
		depth = cap; /* asked deeper since the slots were cut: truncated there */
	fi = (jvmtiFrameInfo *)(w->frames + cap);
	w->t0 = now;
	w->flags = 0;
	if (vthread_stack(evjvmti_env(), t, (jint)depth + 1, fi, &count) != JVMTI_ERROR_NONE ||
	    count < 0) {
		evctl_drop(ctl, EVCTL_DROP_NO_STACK);
		goto fail;
	}
	if (last_unmount(fi, count))
		goto fail;
	if ((uint32_t)count > depth) {
		count = (jint)depth;
		w->flags = FGP_REC_STACK_TRUNCATED;
	}
	if (evjvmti_frames(jni, fi, count, w->frames) != 0) {
		evctl_drop(ctl, EVCTL_DROP_NO_NAME);
		goto fail;
	}
	w->depth = (uint16_t)count;
	take_name(jni, t, w);
	w->group = (uint16_t)vtclaim_group(&claims, w->name, w->name_len);
	if (!w->name_len && (on & FGP_EVM_VTID))
		name_by_id(jni, t, w);
	return (void *)(uintptr_t)handle;
fail:
	(void)vtheld_put(h, handle);
	return NULL;
}

/*
 * What a carrier keeps of the virtual thread it mounted until its unmount (mounts and unmounts
 * of one virtual thread on one carrier run on that carrier's thread), in keys of the carrier's
 * thread (a _Thread_local would make the agent need ld.so's __tls_get_addr): its CPU time at
 * the mount, and when the wait before the mount began (0: none to count at the unmount); and
 * of itself: its CPU time read last (at an unmount) with when, and its own word (vthread.h:
 * VTHREAD_TLS_* as a virtual thread's, with the time its last mount or unmount was seen; every
 * mount and start stamps it, whatever the kinds), from which the mounts alone are timed with
 * no JVMTI call. Its tid is evjvmti_tid()'s.
 */
enum { KEY_CPU0, KEY_WAIT0, KEY_READ_CPU, KEY_READ_AT, KEY_WORD, NKEYS };
static pthread_key_t keys[NKEYS];
static bool keys_ok;
static atomic_bool keys_made; /* keys_ok is set (a load, not a call, every time after) */
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;

static void keys_make(void)
{
	keys_ok = true;
	for (int k = 0; k < NKEYS; k++)
		keys_ok = keys_ok && pthread_key_create(&keys[k], NULL) == 0;
	atomic_store_explicit(&keys_made, true, memory_order_release);
}

static bool keys_ready(void)
{
	if (!atomic_load_explicit(&keys_made, memory_order_acquire))
		(void)pthread_once(&keys_once, keys_make);
	return keys_ok;
}

static uint64_t carrier_get(int k)
{
	return keys_ready() ? (uint64_t)(uintptr_t)pthread_getspecific(keys[k]) : 0;
}

static void carrier_set(int k, uint64_t v)
{
	if (keys_ready())
		(void)pthread_setspecific(keys[k], (void *)(uintptr_t)v);
}

static uint64_t carrier_cpu0(void)
{
	return carrier_get(KEY_CPU0);
}

static void carrier_cpu0_set(uint64_t ns)
{
	carrier_set(KEY_CPU0, ns);
}

/* The carrier's word: a virtual thread mounted on it at now (mounted), or none since now. */
static void carrier_stamp(uint64_t now, bool mounted)
{
	carrier_set(KEY_WORD, now << 2 | TLS_STAMP | (mounted ? TLS_MOUNTED : 0));
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The carrier's CPU time for a mount at now: its last reading when it is that recent
 * (vthread_cpu0), else read. */
static void mount_cpu0(uint64_t now)
{
	uint64_t cpu = vthread_cpu0(carrier_get(KEY_READ_CPU), carrier_get(KEY_READ_AT), now);

	carrier_cpu0_set(cpu ? cpu : thread_cpu_ns());
}

/* The virtual thread's id (java.lang.Thread's tid field, read once by its id), 0 unknown. */
static uint64_t thread_id(JNIEnv *jni, jthread t)
{
	static _Atomic(jfieldID) fid;
	static atomic_bool none;
	jfieldID f = thread_field(jni, &fid, &none, "tid", "J");

	return f ? (uint64_t)(*jni)->GetLongField(jni, t, f) : 0;
}

/* A mount's event, its name and id taken (before the unmount's time: they cost). */
struct vmount {
	struct vwait w; /* its name only */
	struct fgp_stack_event_in e;
};

static void mount_begin(JNIEnv *jni, jthread t, struct vmount *m)
{
	take_name(jni, t, &m->w);
	m->e = (struct fgp_stack_event_in){
		.tid = evjvmti_tid(),
		.kind = FGP_EV_VMOUNT,
		.tag = thread_id(jni, t),
		.cls = m->w.name_len ? (struct fgp_str){ m->w.name, m->w.name_len }
				     : (struct fgp_str){ vt_class, sizeof(vt_class) - 1 },
	};
}

/* The mount from t0 to end on this carrier, as an FGP_EV_VMOUNT; with VTHREAD_DO_OFFCPU in
 * does, its carrier's time off the CPU, the carrier's CPU time kept as its last reading. */
static void mount_end(struct vmount *m, uint64_t t0, uint64_t end, unsigned does)
{
	uint64_t cpu;

	m->e.ts = end;
	m->e.value = end - t0;
	m->e.interval = 0;
	if (does & VTHREAD_DO_OFFCPU) {
		cpu = thread_cpu_ns();
		carrier_set(KEY_READ_CPU, cpu);
		carrier_set(KEY_READ_AT, cpu ? end : 0);
		/* the carrier's time off the CPU while it was mounted: pinned (or preempted) */
		m->e.interval = vthread_offcpu(t0, end, carrier_cpu0(), cpu);
	}
	/* The mounts alone: gathered in the carrier's own entry (evctl_push_batched), one malloc
	 * and one push for many; with the waits, pushed in turn with them. */
	if (does == VTHREAD_DO_MOUNTS)
		(void)evctl_push_batched(ctl, &m->e, VCPU_ON, VCPU_ON);
	else
		(void)evctl_push_event(ctl, &m->e);
}

static void count_carried(const struct vmount *m, uint64_t mounted, uint64_t now);

/*
 * When the mount of t (thread-local word v) that ends now began (vthread_mount_t0), 0: none to
 * send. One open when the kinds went on: its carrier's CPU time at the mount is not known (it
 * is sent with no time off the CPU), nor is a wait before it.
 */
static uint64_t mount_t0(const void *v, uint32_t on, uint64_t now)
{
	bool open;
	uint64_t t0 = vthread_mount_t0((uint64_t)(uintptr_t)v, v ? wait_since(v) : 0,
				       atomic_load(&since), on & FGP_EVM_VMOUNT, now, &open);

	if (open) {
		carrier_cpu0_set(0);
		carrier_set(KEY_WAIT0, 0);
	}
	return t0;
}

/*
 * The mounts alone: the mount's stamp is the carrier's, the one the mount that this unmount
 * ends left there (no JVMTI call; the virtual thread's storage is not read nor written). One
 * clock reading, after the name and id: the mount ends, and the carrier's word is stamped,
 * when the callback's work is done. No callback count (evctl_enter): the push checks the kinds
 * on itself (evctl_push_batched), and the rest is the carrier's own. Whether they are on.
 */
static bool unmount_vcpu(JNIEnv *jni, jthread t)
{
	const uint64_t both = TLS_STAMP | TLS_MOUNTED;
	uint32_t on = atomic_load(&ctl->on);
	uint64_t v, mounted, now;
	bool ends;
	struct vmount m;

	if (!vthread_vcpu(on))
		return false;
	v = carrier_get(KEY_WORD);
	/* a mount to end (vthread_mount_t0 but for the clock): stamped mounted, or open */
	ends = !v || (v & both) == both || stamp_ts((void *)(uintptr_t)v) < atomic_load(&since);
	if (ends)
		mount_begin(jni, t, &m);
	now = fg_now_ns();
	carrier_stamp(now, false);
	if (ends && (mounted = mount_t0((void *)(uintptr_t)v, on, now)) && now > mounted)
		mount_end(&m, mounted, now, VTHREAD_DO_MOUNTS);
	return true;
}

static void JNICALL on_unmount(jvmtiEnv *jvmti, JNIEnv *jni, jthread t)
{
	uint32_t on, cap;
	unsigned does;
	uint64_t now, mounted = 0;
	struct vwait *w;
	struct vmount m;
	void *v = NULL;

	if (unmount_vcpu(jni, t))
		return;
	on = evctl_enter(ctl);
	does = vthread_does(on);
	now = fg_now_ns();
	if (!does) {
		carrier_stamp(now, false);
		goto out;
	}
	if ((*jvmti)->GetThreadLocalStorage(jvmti, t, &v) != JVMTI_ERROR_NONE)
		goto out;
	if ((does & VTHREAD_DO_WAITS) && (!v || wait_since(v) < atomic_load(&since)))
		count_seen();
	mounted = mount_t0(v, on, now);
	if (does != VTHREAD_DO_MOUNTS)
		let_go(v); /* a stack no mount took */
	v = (does & VTHREAD_DO_WAITS) && take_this(now) ? take_stack(jni, t, now, on) : NULL;
	if (mounted)
		mount_begin(jni, t, &m);
	/*
	 * The wait begins, and the mount ends, when this callback's work is done: the carrier's
	 * time in it, with the virtual thread's frames, is not counted as unmounted too.
	 */
	now = fg_now_ns();
	carrier_stamp(now, false);
	if (does != VTHREAD_DO_MOUNTS) {
		if (v && (w = held_wait(v, &cap)))
			w->t0 = now;
		else
			v = (void *)(uintptr_t)(now << 2 | TLS_STAMP);
		(*jvmti)->SetThreadLocalStorage(jvmti, t, v);
	}
	if (mounted && now > mounted) {
		mount_end(&m, mounted, now, does);
		if (does & VTHREAD_DO_WAITS)
			count_carried(&m, mounted, now);
	}
out:
	evctl_leave(ctl);
}

static uint64_t tag_of(uint64_t m)
{
	return (m & MOUNTS_MASK) | atomic_load(&seen) << 40;
}

/* A wait of ns with its stack (cap frames at most), counted into its group already: pushed as
 * an event that stands for all the time of its group it claims. */
static void send(const struct vwait *w, uint32_t cap, uint64_t now, uint64_t m, uint64_t ns)
{
	uint64_t t0, d = vtclaim_claim(&claims, w->group, ns, now, &t0);
	double iv = (double)FGP_VWAIT_ONE * (double)d / (double)ns;
	struct fgp_stack_event_in e = {
		.ts = now,
		.tid = evjvmti_tid(),
		.kind = FGP_EV_VWAIT,
		.flags = w->flags,
		.value = ns,
		.interval = iv >= 1.8e19 ? UINT64_MAX : (uint64_t)(iv + 0.5),
		.tag = tag_of(m),
		.cls = w->name_len ? (struct fgp_str){ w->name, w->name_len }
				   : (struct fgp_str){ vt_class, sizeof(vt_class) - 1 },
		.depth = w->depth <= cap ? w->depth : (uint16_t)cap,
		.frames = w->frames,
	};

	if (evctl_push_event(ctl, &e) != 0)
		vtclaim_unclaim(&claims, w->group, d, t0);
}

/*
 * No stack claimed group g's time for VTCLAIM_FLUSH_NS (stacks that could not be taken, or
 * none chosen): it is pushed with no stack, depth 0, under the group's name, so that the
 * totals stay whole. Its value is the span since the earliest of its waits began (its sum when
 * shorter), its interval the sum over that: a collector that cuts the waits at its window's
 * start (the value, as a single wait's) cuts the sum in proportion, and none that began in it.
 */
static void flush(unsigned g, uint64_t now, uint64_t m)
{
	uint64_t d, t0;
	size_t len;
	const char *name;
	double iv;
	struct fgp_stack_event_in e = {
		.ts = now,
		.kind = FGP_EV_VWAIT,
		.tag = tag_of(m),
	};

	if (!vtclaim_due(&claims, g, now, &d, &t0))
		return;
	e.tid = evjvmti_tid();
	name = vtclaim_name(&claims, g, &len);
	e.cls = len ? (struct fgp_str){ name, (uint16_t)len }
		    : (struct fgp_str){ vt_class, sizeof(vt_class) - 1 };
	e.value = t0 < now && now - t0 < d ? now - t0 : d;
	iv = (double)FGP_VWAIT_ONE * (double)d / (double)e.value;
	e.interval = iv >= 1.8e19 ? UINT64_MAX : (uint64_t)(iv + 0.5);
	if (evctl_push_event(ctl, &e) != 0)
		vtclaim_unclaim(&claims, g, d, t0);
}

/* A wait of ns that began at t0, whose stack was not taken, counted into group g; g's time,
 * and in turn another group's, flushed when due. */
static void count_wait(unsigned g, uint64_t ns, uint64_t t0, uint64_t now, uint64_t m)
{
	unsigned other;

	vtclaim_count(&claims, g, ns, t0);
	flush(g, now, m);
	if ((other = vtclaim_next(&claims)) != g)
		flush(other, now, m);
}

/* The mount that began at mounted ends now, its thread's name taken (m): the wait before it,
 * which its carrier kept (KEY_WAIT0), counted into that name's group. */
static void count_carried(const struct vmount *m, uint64_t mounted, uint64_t now)
{
	uint64_t t0 = carrier_get(KEY_WAIT0);

	if (!t0)
		return;
	carrier_set(KEY_WAIT0, 0);
	if (t0 >= mounted || t0 < atomic_load(&since))
		return;
	count_wait(vtclaim_group(&claims, m->w.name, m->w.name_len), mounted - t0, t0, now,
		   atomic_load(&mounts));
}

/*
 * The mounts alone, at a mount or a start: the carrier's stamp is all they need, and it is the
 * carrier's own word, which every mount stamps whatever the kinds: no callback count
 * (evctl_enter), as nothing the worker changes is touched. Whether they are on.
 */
static bool mount_vcpu(void)
{
	if (!vthread_vcpu(atomic_load(&ctl->on)))
		return false;
	carrier_stamp(fg_now_ns(), true);
	return true;
}

static void JNICALL on_mount(jvmtiEnv *jvmti, JNIEnv *jni, jthread t)
{
	uint32_t on, cap = 0;
	unsigned does;
	uint64_t now, m, t0;
	const struct vwait *w;
	void *v = NULL;

	(void)jni;
	if (mount_vcpu())
		return;
	on = evctl_enter(ctl);
	does = vthread_does(on);
	now = fg_now_ns();
	/* Whatever the kinds (a mount while they turn on is one a CPU recording times). */
	carrier_stamp(now, true);
	if (does == VTHREAD_DO_MOUNTS) {
		/* The mounts alone: the carrier's stamp is all they need. No stack of theirs is
		 * held: turning them on or off starts a new generation of the pool. */
		goto out;
	}
	if ((*jvmti)->GetThreadLocalStorage(jvmti, t, &v) != JVMTI_ERROR_NONE)
		goto out;
	if (!does) {
		/* Closed to callbacks (turning on or off): a held stack is let go. */
		if (vtheld_is_handle((uint64_t)(uintptr_t)v))
			(*jvmti)->SetThreadLocalStorage(jvmti, t, NULL);
		goto done;
	}
	(*jvmti)->SetThreadLocalStorage(
		jvmti, t, (const void *)(uintptr_t)(now << 2 | TLS_MOUNTED | TLS_STAMP));
	if (does & VTHREAD_DO_OFFCPU) {
		mount_cpu0(now);
		carrier_set(KEY_WAIT0, 0);
	}
	if (!v || wait_since(v) < atomic_load(&since)) {
		count_seen(); /* first seen in this recording: its wait, if any, not timed whole */
		goto done;
	}
	if (((uintptr_t)v & TLS_STAMP) && ((uintptr_t)v & TLS_MOUNTED))
		goto done; /* its unmount was not seen */
	t0 = wait_since(v);
	if (now <= t0)
		goto done;
	m = atomic_fetch_add_explicit(&mounts, 1, memory_order_relaxed) + 1;
	if (!((uintptr_t)v & TLS_STAMP) && (w = held_wait(v, &cap))) {
		vtclaim_count(&claims, w->group, now - t0, t0);
		send(w, cap, now, m, now - t0);
	} else if (on & FGP_EVM_VMOUNT) {
		/* Its group is its name's, taken at its unmount (for its FGP_EV_VMOUNT): the wait
		 * is counted there, its start kept by the carrier until then. */
		carrier_set(KEY_WAIT0, t0);
	} else {
		count_wait(0, now - t0, t0, now, m);
	}
done:
	let_go(v);
out:
	evctl_leave(ctl);
}

/*
 * A virtual thread's first run begins: a mount with no wait before it (a JDK may post
 * VirtualThreadStart alone for it; one that posts the mount event after it too finds the
 * thread mounted there and times the mount from then).
 */
static void JNICALL on_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread t)
{
	uint32_t on;
	unsigned does;
	uint64_t now;

	(void)jni;
	if (mount_vcpu())
		return;
	on = evctl_enter(ctl);
	does = vthread_does(on);
	now = fg_now_ns();
	carrier_stamp(now, true); /* whatever the kinds, as at a mount */
	if (!does || does == VTHREAD_DO_MOUNTS)
		goto out;
	if ((*jvmti)->SetThreadLocalStorage(
		    jvmti, t, (const void *)(uintptr_t)(now << 2 | TLS_MOUNTED | TLS_STAMP)) !=
	    JVMTI_ERROR_NONE)
		goto out;
	if (does & VTHREAD_DO_OFFCPU) {
		mount_cpu0(now);
		carrier_set(KEY_WAIT0, 0); /* a first run: no wait before it */
	}
	if (does & VTHREAD_DO_WAITS)
		count_seen();
out:
	evctl_leave(ctl);
}

/*
 * A virtual thread's last run ends: an unmount with no wait after it (a JDK may post
 * VirtualThreadEnd alone for it; after one that posts the unmount event before it the thread
 * is unmounted here already). A stack still held for it is let go: no mount follows.
 */
static void JNICALL on_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread t)
{
	uint32_t on = evctl_enter(ctl);
	unsigned does = vthread_does(on);
	uint64_t now, mounted;
	struct vmount m;
	void *v = NULL;

	now = fg_now_ns();
	if (does == VTHREAD_DO_MOUNTS) {
		/* The mounts alone: from the carrier's stamp (on_unmount) */
		v = (void *)(uintptr_t)carrier_get(KEY_WORD);
		carrier_stamp(now, false);
		mounted = mount_t0(v, on, now);
	} else {
		if ((*jvmti)->GetThreadLocalStorage(jvmti, t, &v) != JVMTI_ERROR_NONE)
			goto out;
		carrier_stamp(now, false);
		if (!does) {
			if (v)
				(*jvmti)->SetThreadLocalStorage(jvmti, t, NULL);
			let_go(v);
			goto out;
		}
		/* Unmounted from now on, in this recording: an unmount that follows sends no
		 * mount. */
		(*jvmti)->SetThreadLocalStorage(jvmti, t,
						(const void *)(uintptr_t)(now << 2 | TLS_STAMP));
		mounted = mount_t0(v, on, now);
		let_go(v); /* a stack no mount took */
	}
	if (!mounted)
		goto out;
	mount_begin(jni, t, &m);
	now = fg_now_ns();
	carrier_stamp(now, false);
	if (now > mounted) {
		mount_end(&m, mounted, now, does);
		if (does & VTHREAD_DO_WAITS)
			count_carried(&m, mounted, now);
	}
out:
	evctl_leave(ctl);
}

void vthread_callbacks(void(JNICALL **start)(void), void(JNICALL **end)(void))
{
	*start = (void(JNICALL *)(void))on_start;
	*end = (void(JNICALL *)(void))on_end;
}

/* Add can_support_virtual_threads: the bit after can_generate_sampled_object_alloc_events in
 * jvmtiCapabilities (JDK 21), which the headers the agent is built with do not name. */
static void want_vthreads(jvmtiCapabilities *c)
{
	jvmtiCapabilities probe;
	const unsigned char *b;

	memset(&probe, 0, sizeof(probe));
	probe.can_generate_sampled_object_alloc_events = 1;
	b = (const unsigned char *)&probe; /* read after it is set */
	for (size_t i = 0; i < sizeof(probe); i++)
		for (unsigned bit = 0; b[i] && bit < 8; bit++)
			if (b[i] & (1u << bit)) {
				size_t next = i * 8 + bit + 1;

				((unsigned char *)c)[next / 8] |= (unsigned char)(1u << (next % 8));
				return;
			}
}

uint32_t vthread_caps(jvmtiEnv *jvmti)
{
	static const char *const names[2] = { "com.sun.hotspot.events.VirtualThreadMount",
					      "com.sun.hotspot.events.VirtualThreadUnmount" };
	void (*const cbs[2])(jvmtiEnv *, JNIEnv *, jthread) = { on_mount, on_unmount };
	jvmtiExtensionEventInfo *infos = NULL;
	jvmtiCapabilities want;
	jint n = 0;

	memset(&want, 0, sizeof(want));
	want_vthreads(&want);
	if ((*jvmti)->AddCapabilities(jvmti, &want) != JVMTI_ERROR_NONE)
		return 0; /* before JDK 21 */
	if ((*jvmti)->GetExtensionEvents(jvmti, &n, &infos) != JVMTI_ERROR_NONE)
		return 0;
	for (jint i = 0; i < n; i++)
		for (int k = 0; k < 2; k++)
			if (strcmp(infos[i].id, names[k]) == 0 &&
			    (*jvmti)->SetExtensionEventCallback(
				    jvmti, infos[i].extension_event_index,
				    (jvmtiExtensionEvent)(void *)cbs[k]) == JVMTI_ERROR_NONE)
				ext_index[k] = infos[i].extension_event_index;
	for (jint i = 0; i < n; i++) {
		for (jint p = 0; p < infos[i].param_count; p++)
			(*jvmti)->Deallocate(jvmti, (unsigned char *)infos[i].params[p].name);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)infos[i].params);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)infos[i].id);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)infos[i].short_description);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)infos);
	return ext_index[0] >= 0 && ext_index[1] >= 0
		       ? FGP_EVM_VTHREAD | FGP_EVM_VMOUNT | FGP_EVM_VTID | FGP_EVM_VCPU
		       : 0;
}

void vthread_init(struct evctl *c)
{
	ctl = c;
}

int vthread_enable(jvmtiEnv *jvmti, bool on)
{
	jvmtiEventMode mode = on ? JVMTI_ENABLE : JVMTI_DISABLE;
	int rv = 0;

	if (ext_index[0] < 0 || ext_index[1] < 0)
		return -EIO;
	if (on) {
		struct vtheld *h = atomic_load(&pool);

		/* Once, at the size of VTHREAD_HELD stacks of the default depth; a new generation
		 * frees every stack an earlier recording left (vtheld.h), cut for the depth asked.
		 */
		if (!h && vtheld_new(VTHREAD_HELD * VWAIT_STRIDE(EVCTL_DEPTH_DEFAULT), VTHREAD_HELD,
				     &h) == 0)
			atomic_store(&pool, h);
		if (h)
			(void)vtheld_reset(h, VWAIT_STRIDE(asked_depth()));
		atomic_store(&mounts, 0);
		atomic_store(&seen, 0);
		atomic_store(&bucket_n, 0);
		atomic_store(&bucket_t0, fg_now_ns());
		atomic_store(&chance, CHANCE_ONE);
		vtclaim_restart(&claims, fg_now_ns());
		atomic_store(&since, fg_now_ns());
	}
	/* HotSpot posts an extension event only when it is also enabled, by its index; the
	 * first and last runs' events are JVMTI's own. */
	for (int k = 0; k < 2; k++)
		if ((*jvmti)->SetEventNotificationMode(jvmti, mode, (jvmtiEvent)ext_index[k],
						       NULL) != JVMTI_ERROR_NONE)
			rv = -EIO;
	for (int k = EVJVMTI_EVENT_VT_START; k <= EVJVMTI_EVENT_VT_END; k++)
		if ((*jvmti)->SetEventNotificationMode(jvmti, mode, (jvmtiEvent)k, NULL) !=
		    JVMTI_ERROR_NONE)
			rv = -EIO;
	if (rv && on)
		(void)vthread_enable(jvmti, false);
	return rv;
}
