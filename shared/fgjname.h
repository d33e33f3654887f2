/* SPDX-License-Identifier: MIT */
/*
 * fgjname.h - a class's name as Java writes it (`java.lang.String`, `byte[]`,
 * `java.util.HashMap$Node[][]`), from the JVM's own spelling of it: a JVMTI class signature
 * (`Ljava/lang/String;`, `[B`) in the agent, a Klass's name Symbol (`java/lang/String`,
 * `[Ljava/lang/Object;`) read from the JVM's memory in the collector. Header-only, libc-free.
 */
#ifndef FG_FGJNAME_H
#define FG_FGJNAME_H

#include <stddef.h>

/* The primitive type of a descriptor character, or NULL. */
static inline const char *fg_jname_prim(char c)
{
	switch (c) {
	case 'B':
		return "byte";
	case 'C':
		return "char";
	case 'D':
		return "double";
	case 'F':
		return "float";
	case 'I':
		return "int";
	case 'J':
		return "long";
	case 'S':
		return "short";
	case 'Z':
		return "boolean";
	default:
		return NULL;
	}
}

static inline void fg_jname_put(char *dst, size_t cap, size_t *n, char c)
{
	if (*n + 1 < cap)
		dst[(*n)++] = c;
}

/*
 * The len bytes at s (not terminated) written into dst (cap bytes, always terminated when
 * cap > 0, cut to fit) as Java writes the class: an array of a primitive (`[[I`: `int[][]`), a
 * signature or an array of objects (`[Ljava/util/HashMap$Node;`: `java.util.HashMap$Node[]`),
 * and anything else as it is with `/` written `.`. Its length; 0 (dst "") when cap is 0 or s
 * holds a control byte (no class's name: bytes from another process are not trusted).
 */
static inline size_t fg_java_class_name(const char *s, size_t len, char *dst, size_t cap)
{
	size_t dims = 0, n = 0, from = 0, to = len;
	const char *prim = NULL;

	if (cap == 0)
		return 0;
	dst[0] = '\0';
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	while (dims < len && s[dims] == '[')
		dims++;
	if (dims && len == dims + 1)
		prim = fg_jname_prim(s[dims]);
	if (prim) {
		for (; *prim; prim++)
			fg_jname_put(dst, cap, &n, *prim);
	} else {
		if (len >= dims + 3 && s[dims] == 'L' && s[len - 1] == ';') {
			from = dims + 1; /* a signature: the class between L and ; */
			to = len - 1;
		} else {
			dims = 0; /* neither: as it is */
		}
		for (size_t i = from; i < to; i++)
			fg_jname_put(dst, cap, &n, s[i] == '/' ? '.' : s[i]);
	}
	for (size_t d = 0; d < dims; d++) {
		fg_jname_put(dst, cap, &n, '[');
		fg_jname_put(dst, cap, &n, ']');
	}
	dst[n] = '\0';
	return n;
}

#endif /* FG_FGJNAME_H */
