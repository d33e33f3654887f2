// SPDX-License-Identifier: MIT
/*
 * demangle.c - C++ names through libstdc++'s __cxa_demangle, legacy Rust on top of it.
 *
 * Invariant: only names with the "_Z" prefix reach __cxa_demangle (it would otherwise turn
 * plain C names such as "i" into type names such as "int").
 */
#include "demangle.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* From libstdc++ (the Itanium C++ ABI); linked through fg_symbol. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* "::h" followed by exactly 16 hex digits at the end: the legacy Rust hash. */
static bool has_rust_hash(const char *s, size_t len)
{
	if (len < 19 || memcmp(s + len - 19, "::h", 3) != 0)
		return false;
	for (size_t i = len - 16; i < len; i++) {
		char c = s[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
	}
	return true;
}

static const struct {
	const char *esc;
	char c;
} rust_escapes[] = {
	{ "$SP$", '@' },  { "$BP$", '*' },  { "$RF$", '&' },  { "$LT$", '<' },	{ "$GT$", '>' },
	{ "$LP$", '(' },  { "$RP$", ')' },  { "$C$", ',' },   { "$u20$", ' ' }, { "$u27$", '\'' },
	{ "$u5b$", '[' }, { "$u5d$", ']' }, { "$u7b$", '{' }, { "$u7d$", '}' }, { "$u7e$", '~' },
};

/* Drop the hash and undo legacy Rust's '$..$' and '..' escapes, in place. */
static void rust_cleanup(char *s)
{
	size_t len = strlen(s) - 19, o = 0;

	for (size_t i = 0; i < len;) {
		bool done = false;

		/* rustc prefixes '_' to a path component that starts with an escape. */
		if (s[i] == '_' && i + 1 < len && s[i + 1] == '$' &&
		    (o == 0 || (o >= 2 && s[o - 1] == ':' && s[o - 2] == ':'))) {
			i++;
			continue;
		}
		if (s[i] == '$') {
			for (size_t k = 0; k < sizeof(rust_escapes) / sizeof(rust_escapes[0]);
			     k++) {
				size_t el = strlen(rust_escapes[k].esc);

				if (i + el <= len && memcmp(s + i, rust_escapes[k].esc, el) == 0) {
					s[o++] = rust_escapes[k].c;
					i += el;
					done = true;
					break;
				}
			}
		} else if (s[i] == '.' && i + 1 < len && s[i + 1] == '.') {
			s[o++] = ':';
			s[o++] = ':';
			i += 2;
			done = true;
		}
		if (!done)
			s[o++] = s[i++];
	}
	s[o] = '\0';
}

char *demangle_symbol(const char *sym)
{
	int status = 0;
	char *out;

	if (strncmp(sym, "_Z", 2) != 0 || strnlen(sym, DEMANGLE_MAX_INPUT + 1) > DEMANGLE_MAX_INPUT)
		return NULL;
	out = __cxa_demangle(sym, NULL, NULL, &status);
	if (status != 0 || !out) {
		free(out);
		return NULL;
	}
	if (strncmp(sym, "_ZN", 3) == 0 && has_rust_hash(out, strlen(out)))
		rust_cleanup(out);
	return out;
}
