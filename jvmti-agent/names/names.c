// SPDX-License-Identifier: MIT
/*
 * names.c - method names from JVMTI class and method signatures.
 *
 * Invariant: every string JVMTI allocates here is Deallocate'd before returning, on every path.
 */
#include "names.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Append c to dst if there is room for it and the terminator; count it either way. */
static inline void put(char *dst, size_t cap, size_t *n, char c)
{
	if (*n + 1 < cap)
		dst[*n] = c;
	(*n)++;
}

static void put_str(char *dst, size_t cap, size_t *n, const char *s)
{
	for (; *s; s++)
		put(dst, cap, n, *s);
}

size_t names_format(char *dst, size_t cap, const char *class_sig, const char *method,
		    const char *method_sig)
{
	size_t n = 0;

	if (class_sig == NULL || *class_sig == '\0') {
		put_str(dst, cap, &n, "[unknown]");
	} else if (class_sig[0] == 'L') {
		/* "Lpkg/Class;" -> "pkg.Class"; a hidden class's ".0x..." suffix is kept as is. */
		size_t len = strlen(class_sig);
		size_t end = class_sig[len - 1] == ';' ? len - 1 : len;

		for (size_t i = 1; i < end; i++)
			put(dst, cap, &n, class_sig[i] == '/' ? '.' : class_sig[i]);
	} else {
		/* Arrays ("[I") and primitives: keep the JVM form, readable enough and unambiguous.
		 */
		put_str(dst, cap, &n, class_sig);
	}
	put_str(dst, cap, &n, "::");
	put_str(dst, cap, &n, method ? method : "[unknown]");
	if (method_sig)
		put_str(dst, cap, &n, method_sig);
	if (cap > 0)
		dst[n < cap ? n : cap - 1] = '\0';
	return n;
}

static void dealloc(jvmtiEnv *jvmti, char *p)
{
	if (p)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)p);
}

/*
 * The three JVMTI strings of m's name: 0 with *mname, *msig (signatures only) and *csig set, or
 * -ENOENT; the caller deallocates them (release_parts) on every path.
 */
static int get_parts(jvmtiEnv *jvmti, JNIEnv *jni, jmethodID m, bool signatures, char **mname,
		     char **msig, char **csig)
{
	jclass klass = NULL;
	int rv = 0;

	*mname = *msig = *csig = NULL;
	if ((*jvmti)->GetMethodName(jvmti, m, mname, signatures ? msig : NULL, NULL) !=
		    JVMTI_ERROR_NONE ||
	    (*jvmti)->GetMethodDeclaringClass(jvmti, m, &klass) != JVMTI_ERROR_NONE ||
	    (*jvmti)->GetClassSignature(jvmti, klass, csig, NULL) != JVMTI_ERROR_NONE)
		rv = -ENOENT;
	/* Callbacks without a JNIEnv run in a local frame the JVM pops; release early anyway. */
	if (klass && jni)
		(*jni)->DeleteLocalRef(jni, klass);
	return rv;
}

static void release_parts(jvmtiEnv *jvmti, char *mname, char *msig, char *csig)
{
	dealloc(jvmti, csig);
	dealloc(jvmti, msig);
	dealloc(jvmti, mname);
}

int names_resolve(jvmtiEnv *jvmti, JNIEnv *jni, jmethodID m, bool signatures, char **out)
{
	char *mname, *msig, *csig, *name;
	size_t len;
	int rv;

	if ((rv = get_parts(jvmti, jni, m, signatures, &mname, &msig, &csig)) == 0) {
		len = names_format(NULL, 0, csig, mname, msig);
		name = malloc(len + 1);
		if (name == NULL) {
			rv = -ENOMEM;
		} else {
			names_format(name, len + 1, csig, mname, msig);
			*out = name;
		}
	}
	release_parts(jvmti, mname, msig, csig);
	return rv;
}

int names_resolve_to(jvmtiEnv *jvmti, JNIEnv *jni, jmethodID m, bool signatures, char *dst,
		     size_t cap, size_t *len)
{
	char *mname, *msig, *csig;
	size_t n;
	int rv;

	if (cap == 0)
		return -EINVAL;
	if ((rv = get_parts(jvmti, jni, m, signatures, &mname, &msig, &csig)) == 0) {
		n = names_format(dst, cap, csig, mname, msig);
		*len = n < cap ? n : cap - 1;
	}
	release_parts(jvmti, mname, msig, csig);
	return rv;
}

int names_lines_to(jvmtiEnv *jvmti, jmethodID m, names_lines_place_fn place, void *arg, uint32_t *n)
{
	jvmtiLineNumberEntry *tab = NULL;
	struct names_line *v;
	int32_t lo = 0, hi = 0;
	jint count = 0;
	jvmtiError err;

	*n = 0;
	err = (*jvmti)->GetLineNumberTable(jvmti, m, &count, &tab);
	if (err == JVMTI_ERROR_ABSENT_INFORMATION || err == JVMTI_ERROR_NATIVE_METHOD)
		count = 0; /* a method without lines: a fact, not a failure */
	else if (err != JVMTI_ERROR_NONE)
		return -ENOENT;
	if (count < 0 || !tab)
		count = 0;
	/* HotSpot's jlocation is the bytecode index. */
	for (jint i = 0; i < count; i++) {
		int32_t b = (int32_t)tab[i].start_location;

		lo = i == 0 || b < lo ? b : lo;
		hi = i == 0 || b > hi ? b : hi;
	}
	v = place(arg, (uint32_t)count, lo, hi);
	if (v)
		for (jint i = 0; i < count; i++)
			v[i] = (struct names_line){ (int32_t)tab[i].start_location,
						    (int32_t)tab[i].line_number };
	if (tab)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)tab);
	if (!v)
		return -ENOMEM;
	*n = (uint32_t)count;
	return 0;
}
