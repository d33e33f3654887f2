// SPDX-License-Identifier: MIT
/*
 * alloc_floor.c - the floor of any JVMTI allocation profiler, for bench/agent/alloc.sh only.
 *
 * Turns on SampledObjectAlloc at the heap sampling interval libfgagent.so uses by default
 * (512 KiB; `interval=BYTES`) and, in the callback, does nothing (`stack=0`) or only what every
 * JVMTI profiler that names its frames must do: GetStackTrace of the allocating thread, at most
 * `stack=N` frames (libfgagent.so's default depth is 128), into a buffer on the thread's stack.
 * A JVM run with it measures what HotSpot itself spends sampling and posting the event, and
 * walking the stack; the difference between it and libfgagent.so is the cost of our agent.
 */
#include <jvmti.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 1024

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved);

static jint depth;

static void JNICALL on_alloc(jvmtiEnv *e, JNIEnv *jni, jthread t, jobject o, jclass c, jlong size)
{
	jvmtiFrameInfo frames[MAX_DEPTH];
	jint n = 0;

	(void)jni, (void)o, (void)c, (void)size;
	if (depth > 0)
		(void)(*e)->GetStackTrace(e, t, 0, depth, frames, &n);
}

/* "interval=BYTES,stack=N", either or both; 0 on success. */
static int parse(const char *options, jint *interval)
{
	const char *p = options;

	while (p && *p) {
		char *end;
		long v;

		if (strncmp(p, "interval=", 9) == 0) {
			v = strtol(p + 9, &end, 10);
			if (end == p + 9 || v < 1 || v > (1L << 30))
				return -1;
			*interval = (jint)v;
		} else if (strncmp(p, "stack=", 6) == 0) {
			v = strtol(p + 6, &end, 10);
			if (end == p + 6 || v < 0 || v > MAX_DEPTH)
				return -1;
			depth = (jint)v;
		} else {
			return -1;
		}
		if (*end != ',' && *end != '\0')
			return -1;
		p = *end ? end + 1 : end;
	}
	return 0;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	jint interval = 512 * 1024;
	jvmtiCapabilities caps;
	jvmtiEventCallbacks cb;
	jvmtiEnv *jvmti;

	(void)reserved;
	if (parse(options, &interval) != 0)
		return JNI_ERR;
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_11) != JNI_OK)
		return JNI_ERR;
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_sampled_object_alloc_events = 1;
	memset(&cb, 0, sizeof(cb));
	cb.SampledObjectAlloc = on_alloc;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE ||
	    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE ||
	    (*jvmti)->SetHeapSamplingInterval(jvmti, interval) != JVMTI_ERROR_NONE ||
	    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE,
					       JVMTI_EVENT_SAMPLED_OBJECT_ALLOC,
					       NULL) != JVMTI_ERROR_NONE)
		return JNI_ERR;
	return JNI_OK;
}
