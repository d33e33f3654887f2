/* SPDX-License-Identifier: MIT */
/*
 * options.h - the agent's option string: -agentpath:libfgagent.so=key=value,key=value
 *
 * Exact parsing, as the JVM parses -XX flags: every item is key=value with a known key, a valid
 * value and no duplicate; anything else is refused with one message naming the item at fault,
 * so a typo is caught at the first deploy instead of silently running with defaults.
 *
 *   socket=PATH            absolute path of the collector's socket, at most 107 bytes
 *                          (default /var/run/fgcollect/fgcollect.sock)
 *   signatures=true|false  add JVM signatures to method names (default false)
 *   maxmem=N[k|m|g]        cap for the agent's memory, 1m..1g (default 32m): see options_budget
 *   log=quiet|warn|info    what the agent may print on stderr (default warn: drop summary)
 *   service=NAME           the service name profiles are labelled with, 1..128 characters of
 *                          A-Z a-z 0-9 . _ - : / (default: OTEL_SERVICE_NAME, else the main
 *                          class or jar)
 *   events=true|false      hold the JVMTI capabilities of alloc, live and lock events, so a
 *                          collector may turn them on (default true); false: this JVM never
 *                          offers them (no FGP_HELLO_EVENTS)
 *   depth=N                frames an alloc or lock event's stack keeps, 1..2048 (default
 *                          128; a collector may ask another depth)
 *   allocstack=auto|copy|jvmti  how an allocation sample's stack is taken (default auto):
 *                          jvmti walks it in the JVM's thread (GetStackTrace, names
 *                          interned); copy takes the thread's last Java frame and the top of
 *                          its stack into the agent's ring for the collector to walk
 *                          (stackring.h); auto copies while the collector says it reads the
 *                          ring, else as jvmti; where the JVM's layout is unknown, copy and
 *                          auto fall back to jvmti
 *
 * Values cannot contain ','.
 */
#ifndef FG_OPTIONS_H
#define FG_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "fgsocket.h" /* FG_DEFAULT_SOCKET */

#define OPTIONS_SOCKET_MAX 107 /* sizeof(sun_path) - 1 */
#define OPTIONS_SERVICE_MAX 128
#define OPTIONS_MAXMEM_DEFAULT (32ull << 20)
#define OPTIONS_MAXMEM_MIN (1ull << 20)
#define OPTIONS_MAXMEM_MAX (1ull << 30)
#define OPTIONS_DEPTH_DEFAULT 128u
#define OPTIONS_DEPTH_MAX 2048u /* FGP_MAX_EVENT_DEPTH */

enum options_log {
	OPTIONS_LOG_QUIET = 0,
	OPTIONS_LOG_WARN = 1,
	OPTIONS_LOG_INFO = 2,
};

struct options {
	char socket[OPTIONS_SOCKET_MAX + 1];
	bool signatures;
	unsigned long long maxmem;
	enum options_log log;
	char service[OPTIONS_SERVICE_MAX + 1]; /* "" = not given */
	bool events;			       /* hold the capabilities of the events */
	unsigned depth;			       /* default stack depth of events */
	bool alloc_copy;		       /* allocstack=copy: always */
	bool alloc_auto; /* allocstack=auto: when the collector reads the ring */
};

/* Fill *o with the defaults. */
void options_defaults(struct options *o);

/*
 * Parse s (NULL or "" means all defaults) into *o. Returns 0, or -EINVAL with a one-line
 * message (no trailing newline, no "fgagent:" prefix) in err[0..errlen) naming the item at
 * fault and what is valid. *o is written only on success.
 */
int options_parse(const char *s, struct options *o, char *err, size_t errlen);

/*
 * The one split of maxmem= (all of it, nothing more):
 *   queue     1/4   records in flight between JVM threads and the sender (queue.h)
 *   names     1/8   interned method names (intern.h)
 *   lines     1/16  cached line number tables of compiled methods (codelines.h)
 *   livecode  the rest, 9/16 (plus rounding)   the live code table replayed on connect
 *                                              (livecode.h), frame facts and lines included
 * With the default 32m: 8 MiB queue, 4 MiB names, 2 MiB lines, 18 MiB live code.
 */
struct options_budget {
	size_t queue, names, lines, livecode;
};

void options_budget(const struct options *o, struct options_budget *out);

#endif
