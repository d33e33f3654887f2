/* SPDX-License-Identifier: MIT */
/*
 * service.h - the service name the agent puts in its HELLO, so every profile of this JVM is
 * labelled with it: the service= option, else OTEL_SERVICE_NAME from the JVM's environment,
 * else the main class or jar (the first word of the launcher's sun.java.command).
 *
 * Pure string work (no JVMTI): agent.c fetches the inputs. A name keeps only characters that
 * are safe in a file name and in a Pyroscope label value: letters, digits and . _ - : /;
 * anything else becomes '_'. At most SERVICE_MAX bytes; "" when nothing usable is known.
 */
#ifndef FG_SERVICE_H
#define FG_SERVICE_H

#include <stdbool.h>
#include <stddef.h>

#define SERVICE_MAX 128

/* Whether c may appear in a service name as given (the service= option is checked with it). */
bool service_char_ok(char c);

/*
 * The service from, in order: opt (the service= option, used verbatim: the option parser has
 * validated it), env (OTEL_SERVICE_NAME), cmd (sun.java.command: "com.example.Main args" or
 * "/app/shop.jar args"; a jar gives its file name without directory and ".jar"). Any may be NULL
 * or empty. Writes a NUL-terminated name of at most SERVICE_MAX bytes to out (cap > SERVICE_MAX).
 */
void service_pick(const char *opt, const char *env, const char *cmd, char *out, size_t cap);

#endif
