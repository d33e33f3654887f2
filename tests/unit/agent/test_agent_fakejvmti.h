/* SPDX-License-Identifier: MIT */
/*
 * test_agent_fakejvmti.h - a fake jvmtiEnv for the agent's unit tests: a few methods with
 * known classes and signatures, failure injection by method id, and a count of strings
 * allocated and not yet Deallocate'd (must be 0 after every call under test).
 */
#ifndef FG_TEST_AGENT_FAKEJVMTI_H
#define FG_TEST_AGENT_FAKEJVMTI_H

#include <stdlib.h>
#include <string.h>

#include <jvmti.h>

#define FAKE_M(i) ((jmethodID)(uintptr_t)(i))
#define FAKE_FAIL_NAME 99  /* GetMethodName fails */
#define FAKE_FAIL_CLASS 98 /* GetMethodDeclaringClass fails */
#define FAKE_FAIL_SIG 97   /* GetClassSignature fails */

static const struct {
	const char *csig, *name, *msig;
} fake_methods[] = {
	{ NULL, NULL, NULL },
	{ "Lcom/acme/Hot;", "loop", "(J)J" },
	{ "Lcom/acme/Hot$Inner;", "step", "(I)I" },
	{ "Ljava/lang/Math;", "max", "(II)I" },
	{ "LHot;", "main", "([Ljava/lang/String;)V" },
};

static int fake_live_strings;

static char *fake_dup(const char *s)
{
	fake_live_strings++;
	return strdup(s);
}

static jvmtiError JNICALL fake_get_method_name(jvmtiEnv *env, jmethodID m, char **name, char **sig,
					       char **gen)
{
	uintptr_t i = (uintptr_t)m;

	(void)env;
	if (i == FAKE_FAIL_NAME || i == 0)
		return JVMTI_ERROR_INVALID_METHODID;
	if (i >= sizeof(fake_methods) / sizeof(fake_methods[0]))
		i = 1 + i % 4;
	if (name)
		*name = fake_dup(fake_methods[i].name);
	if (sig)
		*sig = fake_dup(fake_methods[i].msig);
	if (gen)
		*gen = NULL;
	return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL fake_get_declaring_class(jvmtiEnv *env, jmethodID m, jclass *k)
{
	(void)env;
	if ((uintptr_t)m == FAKE_FAIL_CLASS)
		return JVMTI_ERROR_INVALID_METHODID;
	*k = (jclass)m; /* the class "is" the method id: the signature lookup uses it */
	return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL fake_get_class_signature(jvmtiEnv *env, jclass k, char **sig, char **gen)
{
	uintptr_t i = (uintptr_t)k;

	(void)env;
	if (i == FAKE_FAIL_SIG)
		return JVMTI_ERROR_INVALID_CLASS;
	if (i >= sizeof(fake_methods) / sizeof(fake_methods[0]))
		i = 1 + i % 4;
	if (sig)
		*sig = fake_dup(fake_methods[i].csig);
	if (gen)
		*gen = NULL;
	return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL fake_deallocate(jvmtiEnv *env, unsigned char *p)
{
	(void)env;
	if (p) {
		fake_live_strings--;
		free(p);
	}
	return JVMTI_ERROR_NONE;
}

static struct jvmtiInterface_1_ fake_iface;
static jvmtiEnv fake_env;

static jvmtiEnv *fake_jvmti(void)
{
	fake_iface.GetMethodName = fake_get_method_name;
	fake_iface.GetMethodDeclaringClass = fake_get_declaring_class;
	fake_iface.GetClassSignature = fake_get_class_signature;
	fake_iface.Deallocate = fake_deallocate;
	fake_env = &fake_iface;
	return &fake_env;
}

#endif
