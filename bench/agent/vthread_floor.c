// SPDX-License-Identifier: MIT
/*
 * vthread_floor.c - what HotSpot's virtual-thread events cost a JVM, for bench/agent/vthread.sh
 * only: the floor under any agent that sees virtual threads mount and unmount.
 *
 * `mode=` one of:
 *   caps        can_support_virtual_threads only (no event on)
 *   startend    VirtualThreadStart and VirtualThreadEnd on, empty callbacks
 *   mount       the HotSpot extension events VirtualThreadMount and VirtualThreadUnmount on,
 *               empty callbacks
 *   mounttime   as mount, and each callback does what exact unmounted totals need: the unmount
 *               stamps the virtual thread's JVMTI thread-local storage with CLOCK_MONOTONIC, the
 *               mount adds the time since to a total (printed at exit with the mount count)
 * The capability can only be added while the JVM loads (OnLoad).
 */
#include <jvmti.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved);

enum mode { CAPS, STARTEND, MOUNT, MOUNTTIME };

static enum mode mode;
static atomic_uint_fast64_t mounts, unmounted_ns;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * can_support_virtual_threads is the capability bit after can_generate_sampled_object_alloc_events
 * (JVMTI 21); headers older than JDK 21 leave it unnamed, so it is found from its neighbour.
 */
static void want_vthreads(jvmtiCapabilities *c)
{
	jvmtiCapabilities probe;
	const unsigned char *b;

	memset(&probe, 0, sizeof(probe));
	probe.can_generate_sampled_object_alloc_events = 1;
	b = (const unsigned char *)&probe;
	for (size_t i = 0; i < sizeof(probe); i++) {
		if (!b[i])
			continue;
		for (int bit = 0; bit < 8; bit++) {
			if (b[i] & (1u << bit)) {
				size_t next = i * 8 + (size_t)bit + 1;

				((unsigned char *)c)[next / 8] |= (unsigned char)(1u << (next % 8));
				return;
			}
		}
	}
}

static atomic_uint_fast64_t calls;

static void JNICALL on_empty(jvmtiEnv *e, JNIEnv *jni, jthread t)
{
	(void)e, (void)jni, (void)t;
	atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
}

static void JNICALL on_unmount(jvmtiEnv *e, JNIEnv *jni, jthread t)
{
	(void)jni;
	(*e)->SetThreadLocalStorage(e, t, (const void *)(uintptr_t)now_ns());
}

static void JNICALL on_mount(jvmtiEnv *e, JNIEnv *jni, jthread t)
{
	void *since = NULL;

	(void)jni;
	atomic_fetch_add_explicit(&mounts, 1, memory_order_relaxed);
	if ((*e)->GetThreadLocalStorage(e, t, &since) == JVMTI_ERROR_NONE && since)
		atomic_fetch_add_explicit(&unmounted_ns, now_ns() - (uint64_t)(uintptr_t)since,
					  memory_order_relaxed);
}

/* The extension event named name (com.sun.hotspot.events.*) set to cb: 0, or -1. */
static int extension(jvmtiEnv *e, const char *name, void (*cb)(jvmtiEnv *, JNIEnv *, jthread))
{
	jvmtiExtensionEventInfo *infos = NULL;
	jint n = 0;
	int rv = -1;

	if ((*e)->GetExtensionEvents(e, &n, &infos) != JVMTI_ERROR_NONE)
		return -1;
	for (jint i = 0; i < n; i++)
		if (rv < 0 && strcmp(infos[i].id, name) == 0 &&
		    (*e)->SetExtensionEventCallback(e, infos[i].extension_event_index,
						    (jvmtiExtensionEvent)(void *)cb) ==
			    JVMTI_ERROR_NONE &&
		    /* HotSpot posts it only when also enabled, as any event. */
		    (*e)->SetEventNotificationMode(e, JVMTI_ENABLE,
						   (jvmtiEvent)infos[i].extension_event_index,
						   NULL) == JVMTI_ERROR_NONE)
			rv = 0;
	/* The strings and parameter arrays of each entry, then the array. */
	for (jint i = 0; i < n; i++) {
		for (jint p = 0; p < infos[i].param_count; p++)
			(*e)->Deallocate(e, (unsigned char *)infos[i].params[p].name);
		(*e)->Deallocate(e, (unsigned char *)infos[i].params);
		(*e)->Deallocate(e, (unsigned char *)infos[i].id);
		(*e)->Deallocate(e, (unsigned char *)infos[i].short_description);
	}
	(*e)->Deallocate(e, (unsigned char *)infos);
	return rv;
}

static void JNICALL on_death(jvmtiEnv *e, JNIEnv *jni)
{
	(void)e, (void)jni;
	fprintf(stderr, "vthread_floor: %llu calls, %llu mounts, %.3f s unmounted\n",
		(unsigned long long)atomic_load(&calls), (unsigned long long)atomic_load(&mounts),
		atomic_load(&unmounted_ns) / 1e9);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	static const char *const names[] = { "caps", "startend", "mount", "mounttime" };
	/* The callbacks, with room for VirtualThreadStart and VirtualThreadEnd after
	 * SampledObjectAlloc (events 87 and 88), which headers before JDK 21 do not name. */
	union {
		jvmtiEventCallbacks cb;
		void *slot[sizeof(jvmtiEventCallbacks) / sizeof(void *) + 3];
	} u;
	size_t vstart = offsetof(jvmtiEventCallbacks, SampledObjectAlloc) / sizeof(void *) + 1;
	size_t size = (vstart + 2) * sizeof(void *);
	jvmtiCapabilities caps;
	jvmtiEnv *e = NULL;
	int m = -1;

	(void)reserved;
	for (int i = 0; i < 4; i++)
		if (options && strncmp(options, "mode=", 5) == 0 &&
		    strcmp(options + 5, names[i]) == 0)
			m = i;
	if (m < 0) {
		fprintf(stderr, "vthread_floor: expected mode=caps|startend|mount|mounttime\n");
		return JNI_ERR;
	}
	mode = (enum mode)m;
	if ((*vm)->GetEnv(vm, (void **)&e, JVMTI_VERSION_11) != JNI_OK)
		return JNI_ERR;
	memset(&caps, 0, sizeof(caps));
	want_vthreads(&caps);
	if ((*e)->AddCapabilities(e, &caps) != JVMTI_ERROR_NONE) {
		fprintf(stderr, "vthread_floor: this JVM has no can_support_virtual_threads\n");
		return JNI_ERR;
	}
	memset(&u, 0, sizeof(u));
	u.cb.VMDeath = on_death;
	u.slot[vstart] = (void *)on_empty;
	u.slot[vstart + 1] = (void *)on_empty;
	if (size < sizeof(u.cb))
		size = sizeof(u.cb);
	if ((*e)->SetEventCallbacks(e, &u.cb, (jint)size) != JVMTI_ERROR_NONE)
		return JNI_ERR;
	(*e)->SetEventNotificationMode(e, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
	if (mode == STARTEND) {
		if ((*e)->SetEventNotificationMode(e, JVMTI_ENABLE, (jvmtiEvent)87, NULL) !=
			    JVMTI_ERROR_NONE ||
		    (*e)->SetEventNotificationMode(e, JVMTI_ENABLE, (jvmtiEvent)88, NULL) !=
			    JVMTI_ERROR_NONE) {
			fprintf(stderr, "vthread_floor: VirtualThreadStart/End refused\n");
			return JNI_ERR;
		}
	} else if (mode == MOUNT || mode == MOUNTTIME) {
		if (extension(e, "com.sun.hotspot.events.VirtualThreadMount",
			      mode == MOUNT ? on_empty : on_mount) != 0 ||
		    extension(e, "com.sun.hotspot.events.VirtualThreadUnmount",
			      mode == MOUNT ? on_empty : on_unmount) != 0) {
			fprintf(stderr,
				"vthread_floor: no VirtualThreadMount/Unmount extension events\n");
			return JNI_ERR;
		}
	}
	return JNI_OK;
}
