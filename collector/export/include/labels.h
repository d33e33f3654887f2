/* SPDX-License-Identifier: MIT */
/*
 * labels.h - what every rolling profile is labelled with, so a user with twenty containers
 * knows which graph is which: the service (the agent's HELLO), the container id, the host PID
 * and the host name. One place turns them into a file-name stem, a title and Pyroscope labels.
 *
 * Invariant: every string these functions produce is made only of characters that are safe
 * where it goes (file names: A-Z a-z 0-9 . -; label values: A-Z a-z 0-9 . - _), whatever the
 * agent or the host sent.
 */
#ifndef FG_LABELS_H
#define FG_LABELS_H

#include <stddef.h>
#include <stdint.h>

#include "evkind.h"

#define LABELS_SERVICE_MAX 128
#define LABELS_CID_MAX 64
#define LABELS_HOST_MAX 64
/* "YYYYmmddTHHMMSSZ_service_cid12_pid_host.offcpu" at most (the longest suffix) */
#define LABELS_STEM_MAX                                                                            \
	(16 + 1 + LABELS_SERVICE_MAX + 1 + 12 + 1 + 10 + 1 + LABELS_HOST_MAX + 7 + 1)

/* kind e's word ("cpu", "offcpu", ...; index.html's Event column), title and file suffix
 * (evkind.h). */
const char *prof_event_name(enum fg_event e);
const char *prof_event_title(enum fg_event e);
const char *prof_event_suffix(enum fg_event e);

struct prof_labels {
	char service[LABELS_SERVICE_MAX + 1];  /* "" unknown */
	char container_id[LABELS_CID_MAX + 1]; /* "" when not in a container */
	uint32_t host_pid;
	char hostname[LABELS_HOST_MAX + 1];
	enum fg_event event; /* FG_EVENT_CPU unless set after prof_labels_set */
};

/* Fill l from its parts (any string may be NULL; event CPU); values are truncated, not
 * sanitised. */
void prof_labels_set(struct prof_labels *l, const char *service, const char *container_id,
		     uint32_t host_pid, const char *hostname);

/* The service, or "pid-N" when the agent sent none. */
const char *prof_labels_service(const struct prof_labels *l, char *buf, size_t cap);

/*
 * The title of one JVM's profile (the SVG's title, the pprof comment), the same for `record
 * --pid` and rolling profiles: "CPU: SERVICE | container CID12 | PID N | host HOST", SERVICE as
 * prof_labels_service, CID12 "none" outside a container; "Off-CPU time (us): ..." and
 * "Wall-clock time (us): ..." for those events. Cut to cap - 1 bytes; a title, not
 * sanitised (the SVG writer escapes it).
 */
void prof_labels_title(const struct prof_labels *l, char *out, size_t cap);

/*
 * The file-name stem of a profile that started at start_unix (seconds, UTC):
 * "20261122T093000Z_SERVICE_CID12_PID_HOST" with CID12 the first 12 digits of the container id
 * or "host"; SERVICE and HOST keep A-Z a-z 0-9 . - and turn anything else into '-', so '_'
 * separates the five fields unambiguously; then prof_event_suffix(l->event) (".offcpu",
 * ".wall"; nothing for cpu). out must hold LABELS_STEM_MAX bytes.
 */
void prof_labels_stem(const struct prof_labels *l, int64_t start_unix, char *out);

/* Parsed back from a stem (a file found in the directory at start): 0 or -EINVAL. */
struct prof_stem {
	int64_t start_unix;
	char service[LABELS_SERVICE_MAX + 1];
	char cid12[13]; /* "host" when none */
	uint32_t host_pid;
	char hostname[LABELS_HOST_MAX + 1];
	enum fg_event event; /* from a trailing ".offcpu" / ".wall", else cpu */
};
int prof_stem_parse(const char *stem, size_t len, struct prof_stem *out);

/* A label value for Pyroscope: A-Z a-z 0-9 . - _ kept, anything else '_'; "" gives "unknown". */
void prof_label_value(const char *in, char *out, size_t cap);

#endif
