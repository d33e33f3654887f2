// SPDX-License-Identifier: MIT
/*
 * null_agent.c - the floor of any JIT-symbol agent, for bench/agent/jvm_overhead.sh only.
 *
 * Asks for exactly the events libfgagent.so uses (CompiledMethodLoad/Unload with compile info,
 * DynamicCodeGenerated) and does nothing in them, so a JVM run with it measures what HotSpot
 * itself spends producing and posting those events. The difference between it and
 * libfgagent.so is the cost of our agent; the difference between it and no agent is the price
 * every JVMTI code-event consumer (perf's libperf-jvmti, perf-map-agent, ...) pays.
 */
#include <jvmti.h>
#include <string.h>

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved);

static void JNICALL on_load(jvmtiEnv *e, jmethodID m, jint size, const void *addr, jint n,
			    const jvmtiAddrLocationMap *map, const void *info)
{
	(void)e, (void)m, (void)size, (void)addr, (void)n, (void)map, (void)info;
}

static void JNICALL on_unload(jvmtiEnv *e, jmethodID m, const void *addr)
{
	(void)e, (void)m, (void)addr;
}

static void JNICALL on_dynamic(jvmtiEnv *e, const char *name, const void *addr, jint len)
{
	(void)e, (void)name, (void)addr, (void)len;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	static const jvmtiEvent events[] = { JVMTI_EVENT_COMPILED_METHOD_LOAD,
					     JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
					     JVMTI_EVENT_DYNAMIC_CODE_GENERATED };
	jvmtiCapabilities caps;
	jvmtiEventCallbacks cb;
	jvmtiEnv *jvmti;

	(void)options, (void)reserved;
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK)
		return JNI_ERR;
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_compiled_method_load_events = 1;
	memset(&cb, 0, sizeof(cb));
	cb.CompiledMethodLoad = on_load;
	cb.CompiledMethodUnload = on_unload;
	cb.DynamicCodeGenerated = on_dynamic;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE ||
	    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE)
		return JNI_ERR;
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL) !=
		    JVMTI_ERROR_NONE)
			return JNI_ERR;
	return JNI_OK;
}
