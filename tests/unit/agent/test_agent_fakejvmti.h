/* SPDX-License-Identifier: MIT */
/*
 * test_agent_fakejvmti.h - a fake jvmtiEnv for the agent's unit tests: a few methods with
 * known classes and signatures, failure injection by method id, and a count of strings
 * allocated and not yet Deallocate'd (must be 0 after every call under test). Safe to call from
 * several threads at once, as JVMTI is.
 */
#ifndef FG_TEST_AGENT_FAKEJVMTI_H
#define FG_TEST_AGENT_FAKEJVMTI_H

#include <stdatomic.h>
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

static atomic_int fake_live_strings;

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

/*
 * Line number tables: method 1 out of bci order with a repeated bci (HotSpot takes the first
 * exact match, else the last entry with the largest bci below), 2 and 4 plain, 3 has none
 * (ABSENT_INFORMATION), 5 is whatever fake_t5/fake_n5 hold, FAKE_FAIL_LINES fails.
 * fake_line_calls counts the calls.
 */
#define FAKE_FAIL_LINES 96
static atomic_int fake_line_calls;
/* Method 5's table, set by a test. */
static jvmtiLineNumberEntry fake_t5[64];
static jint fake_n5;

static jvmtiError JNICALL fake_get_line_number_table(jvmtiEnv *env, jmethodID m, jint *count,
						     jvmtiLineNumberEntry **tab)
{
	static const jvmtiLineNumberEntry t1[] = { { 0, 10 }, { 8, 12 }, { 4, 11 }, { 8, 99 } };
	static const jvmtiLineNumberEntry t2[] = { { 0, 20 }, { 5, 21 } };
	static const jvmtiLineNumberEntry t4[] = { { 0, 40 } };
	const jvmtiLineNumberEntry *src;
	jint n;

	(void)env;
	fake_line_calls++;
	switch ((uintptr_t)m) {
	case 1:
		src = t1, n = 4;
		break;
	case 2:
		src = t2, n = 2;
		break;
	case 4:
		src = t4, n = 1;
		break;
	case 5:
		src = fake_t5, n = fake_n5;
		break;
	case 3:
		return JVMTI_ERROR_ABSENT_INFORMATION;
	default:
		return JVMTI_ERROR_INVALID_METHODID;
	}
	*tab = malloc((size_t)n * sizeof(**tab));
	if (!*tab)
		return JVMTI_ERROR_OUT_OF_MEMORY;
	fake_live_strings++; /* a JVMTI buffer the caller must Deallocate */
	memcpy(*tab, src, (size_t)n * sizeof(**tab));
	*count = n;
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
	fake_iface.GetLineNumberTable = fake_get_line_number_table;
	fake_env = &fake_iface;
	return &fake_env;
}

#endif
