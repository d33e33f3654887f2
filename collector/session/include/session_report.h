/* SPDX-License-Identifier: MIT */
/*
 * session_report.h - what a recording tells its user when it ends (`record`'s summary): its
 * samples and what was lost, the frames it could not name and why, how user stacks were unwound
 * and how far they got, the off-CPU accounting of offcpu and wall recordings, debuginfod's
 * lookups and each JVM's agent; and the one-line subtitle of an SVG saying how stacks were
 * unwound.
 *
 * Invariant: never prints: each line (no newline) goes to the caller's sink, in order.
 */
#ifndef FG_SESSION_REPORT_H
#define FG_SESSION_REPORT_H

#include <stddef.h>

struct session_summary;

/* The summary of sm, line by line to line(arg, text) (text borrowed for the call). */
void session_report(const struct session_summary *sm, void (*line)(void *arg, const char *text),
		    void *arg);

/* How user stacks were unwound and how many reached their thread's start, into buf. */
void session_report_subtitle(const struct session_summary *sm, char *buf, size_t len);

#endif
