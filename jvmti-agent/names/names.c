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

int names_resolve(jvmtiEnv *jvmti, JNIEnv *jni, jmethodID m, bool signatures, char **out)
{
	char *mname = NULL, *msig = NULL, *csig = NULL;
	jclass klass = NULL;
	char *name = NULL;
	size_t len;
	int rv = 0;

	if ((*jvmti)->GetMethodName(jvmti, m, &mname, signatures ? &msig : NULL, NULL) !=
	    JVMTI_ERROR_NONE) {
		rv = -ENOENT;
		goto out;
	}
	if ((*jvmti)->GetMethodDeclaringClass(jvmti, m, &klass) != JVMTI_ERROR_NONE) {
		rv = -ENOENT;
		goto out;
	}
	if ((*jvmti)->GetClassSignature(jvmti, klass, &csig, NULL) != JVMTI_ERROR_NONE) {
		rv = -ENOENT;
		goto out;
	}
	len = names_format(NULL, 0, csig, mname, msig);
	name = malloc(len + 1);
	if (name == NULL) {
		rv = -ENOMEM;
		goto out;
	}
	names_format(name, len + 1, csig, mname, msig);
	*out = name;
out:
	dealloc(jvmti, csig);
	dealloc(jvmti, msig);
	dealloc(jvmti, mname);
	/* Callbacks without a JNIEnv run in a local frame the JVM pops; release early anyway. */
	if (klass && jni)
		(*jni)->DeleteLocalRef(jni, klass);
	return rv;
}

int names_lines(jvmtiEnv *jvmti, jmethodID m, struct names_line **out, uint32_t *n)
{
	jvmtiLineNumberEntry *tab = NULL;
	struct names_line *v = NULL;
	jint count = 0;
	jvmtiError err;

	*out = NULL;
	*n = 0;
	err = (*jvmti)->GetLineNumberTable(jvmti, m, &count, &tab);
	if (err == JVMTI_ERROR_ABSENT_INFORMATION || err == JVMTI_ERROR_NATIVE_METHOD)
		return 0; /* a method without lines: a fact, not a failure */
	if (err != JVMTI_ERROR_NONE)
		return -ENOENT;
	if (count > 0 && tab) {
		v = malloc((size_t)count * sizeof(*v));
		if (!v) {
			(*jvmti)->Deallocate(jvmti, (unsigned char *)tab);
			return -ENOMEM;
		}
		/* HotSpot's jlocation is the bytecode index. */
		for (jint i = 0; i < count; i++)
			v[i] = (struct names_line){ (int32_t)tab[i].start_location,
						    (int32_t)tab[i].line_number };
		*out = v;
		*n = (uint32_t)count;
	}
	if (tab)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)tab);
	return 0;
}
