// SPDX-License-Identifier: MIT
/*
 * service.c - pick and sanitise the service name of the HELLO (see service.h).
 *
 * Invariant: out always ends up NUL-terminated, holding only service_char_ok() characters.
 */
#include "service.h"

#include <string.h>

bool service_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-' || c == ':' || c == '/';
}

/* Copy s[0..n) sanitised and truncated; returns the bytes written. */
static size_t put(const char *s, size_t n, char *out, size_t cap)
{
	size_t max = cap - 1 < SERVICE_MAX ? cap - 1 : SERVICE_MAX;

	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++)
		out[i] = service_char_ok(s[i]) ? s[i] : '_';
	out[n] = '\0';
	return n;
}

/* The main class or jar of a sun.java.command value. */
static size_t from_command(const char *cmd, char *out, size_t cap)
{
	size_t n;
	const char *slash;

	cmd += strspn(cmd, " \t");
	n = strcspn(cmd, " \t");
	if (n > 4 && memcmp(cmd + n - 4, ".jar", 4) == 0) {
		/* the last '/' inside the word */
		for (slash = cmd + n; slash > cmd && slash[-1] != '/'; slash--)
			;
		n -= (size_t)(slash - cmd) + 4;
		cmd = slash;
	}
	return put(cmd, n, out, cap);
}

void service_pick(const char *opt, const char *env, const char *cmd, char *out, size_t cap)
{
	out[0] = '\0';
	if (opt && *opt && put(opt, strlen(opt), out, cap))
		return;
	if (env) {
		size_t n;

		env += strspn(env, " \t");
		n = strlen(env);
		while (n && (env[n - 1] == ' ' || env[n - 1] == '\t'))
			n--;
		if (put(env, n, out, cap))
			return;
	}
	if (cmd)
		from_command(cmd, out, cap);
}
