/* SPDX-License-Identifier: MIT */
/*
 * session_int.h - what session.c (lifecycle, sampling, settling) and session_src.c (where code
 * tables come from: our own agent socket or a watch daemon's control channel) share. Private to
 * the aggregate stage.
 */
#ifndef FG_SESSION_INT_H
#define FG_SESSION_INT_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "javaframes.h"
#include "resolve.h"
#include "session.h"
#include "targets.h"
#include "threadnames.h"

#define SESSION_NOTES 64

struct session {
	struct session_opts o;
	enum session_src src;
	uint64_t start_ns, end_ns;

	struct targets targets;
	bool multi; /* more than one process possible: process root frames */
	struct threadnames names;

	struct sampler *sampler;
	struct symbolizer *sz;
	struct resolve_ctx rc; /* the resolvers' view of sz and the code tables */
	struct stackagg *agg;
	struct stackagg_opts agg_opts; /* for session_rotate's fresh aggregators */
	struct stackagg_resolver agg_res;
	struct javaframes *jf; /* interpreted frames; NULL without a stack copy */
	struct stackagg_uframe uframes[STACKAGG_MAX_FRAMES];
	struct vmstack *vs; /* unwinding without frame pointers; NULL without a stack copy */
	uint64_t unwound_fp, unwound_vm;

	/* listen source */
	struct receive *rx;
	struct jvmset *js;
	bool want_failed; /* the last want file could not be written (said once) */

	/* ctl source */
	struct ctl_client *ctl;
	bool ctl_dead; /* the channel closed during the recording: keep the tables we have */
	uint64_t ctl_bad;
	uint64_t ctl_quiet_ns; /* when a pump last found nothing (history streamed) */

	char notes[SESSION_NOTES][SESSION_NOTE_MAX];
	size_t note_head, note_len;
	uint64_t notes_lost;
};

/* Queue a note for the user (dropped and counted when the queue is full). */
void session_note(struct session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * pid as a target: known already, or added (thread names loaded, symbolizer told). NULL when
 * the target set is full.
 */
struct target *session_target_add(struct session *s, uint32_t pid);

/* --all: a JVM announced by a source becomes a target and is sampled from now on. */
struct target *session_adopt(struct session *s, uint32_t pid);

/* ---- session_src.c --------------------------------------------------------------------- */

/*
 * Open the code-table source: the daemon's control channel, else our own listener on the agent
 * socket (s->o.src may force either). Sets s->src. 0, or a negative errno with why naming every
 * path tried.
 */
int session_src_open(struct session *s, char *why, size_t whylen);
/* The code table of pid from the current source, NULL when none (yet). */
const struct codetab *session_src_table(const struct session *s, uint32_t pid);
/* Fill fds with what the source wants polled (POLLIN); returns how many (at most 3). */
nfds_t session_src_pollfds(const struct session *s, struct pollfd *fds);
/* Handle whatever the source has ready, without waiting. */
void session_src_pump(struct session *s);
/* Close the source (tables owned by targets stay). */
void session_src_close(struct session *s);

#endif
