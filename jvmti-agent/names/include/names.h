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
#include <stdint.h>

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

/*
 * names_resolve without an allocation: the name in dst[0..cap) with a terminator, truncated to
 * cap - 1 bytes, and its length in *len. 0, -ENOENT (as names_resolve) or -EINVAL (cap 0);
 * dst and *len are left as they were on failure.
 */
int names_resolve_to(jvmtiEnv *jvmti, JNIEnv *jni, jmethodID m, bool signatures, char *dst,
		     size_t cap, size_t *len);

/* One entry of a method's line number table: bytecodes from bci on belong to line. */
struct names_line {
	int32_t bci;
	int32_t line;
};

/*
 * Where names_lines_to() writes a table of n entries whose bcis lie in [min_bci, max_bci] (both
 * 0 when n is 0): room for n entries, or NULL when memory is short. Called once per table, the
 * table without lines included, so the caller can keep that fact too.
 */
typedef struct names_line *(*names_lines_place_fn)(void *arg, uint32_t n, int32_t min_bci,
						   int32_t max_bci);

/*
 * m's line number table (GetLineNumberTable, which needs can_get_line_numbers), written in the
 * table's own order where place(arg, ...) says, *n its entries. Returns 0 (*n is 0 for a method
 * without a table: native, or compiled without -g:lines), -ENOENT if JVMTI cannot answer for m
 * (unloaded, no capability: place is not called) or -ENOMEM (place returned NULL). Like
 * names_resolve: no lock, and the JVMTI buffer is deallocated on every path.
 */
int names_lines_to(jvmtiEnv *jvmti, jmethodID m, names_lines_place_fn place, void *arg,
		   uint32_t *n);

#endif
