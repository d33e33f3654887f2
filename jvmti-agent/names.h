/* SPDX-License-Identifier: MIT */
/*
 * names.h - Java method names as they appear in perf maps and flame graphs.
 *
 * A method is named "pkg.Class::method" from its class signature "Lpkg/Class;": '/' becomes
 * '.', nested classes keep their '$' ("pkg.Outer$Inner::run"), array classes keep their JVM
 * form. With signatures the JVM method signature follows: "pkg.Class::method(I)V".
 *
 * Invariant: names_resolve() deallocates every string JVMTI hands it, on every path.
 */
#ifndef FG_NAMES_H
#define FG_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#include <jvmti.h>

/*
 * Write the name built from class_sig ("Lpkg/Class;", may be NULL), method (may be NULL) and
 * method_sig (used only if non-NULL) into dst[0..cap) with a terminator, truncating if needed.
 * Returns the length the full name has (like snprintf), so a result >= cap means truncated.
 * Pure: no allocation.
 */
size_t names_format(char *dst, size_t cap, const char *class_sig, const char *method,
		    const char *method_sig);

/*
 * Resolve m into a malloc'd, NUL-terminated name in *out (the caller frees it). Returns 0,
 * -ENOENT if JVMTI cannot name the method (e.g. it was unloaded) or -ENOMEM. Safe to call from
 * any JVMTI callback: no lock is taken; jni (may be NULL) is used to release the class reference.
 */
int names_resolve(jvmtiEnv *jvmti, JNIEnv *jni, jmethodID m, bool signatures, char **out);

#endif
