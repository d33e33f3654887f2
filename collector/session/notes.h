/* SPDX-License-Identifier: MIT */
/*
 * notes.h - a bounded queue of one-line notes for the user ("PID 42: agent connected"), written
 * by the recording and its code-table source, read by the command that prints them.
 *
 * Invariant: at most NOTES_MAX notes wait; one more is dropped and counted, never blocks.
 */
#ifndef FG_NOTES_H
#define FG_NOTES_H

#include <stddef.h>
#include <stdint.h>

#define NOTES_MAX 64
#define NOTES_LEN 256 /* bytes of a note, its NUL included (session.h: SESSION_NOTE_MAX) */

struct notes {
	char v[NOTES_MAX][NOTES_LEN];
	size_t head, len;
	uint64_t lost;
};

/* Queue a note (cut at NOTES_LEN - 1 bytes; dropped and counted when full). */
void notes_add(struct notes *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The oldest note into buf (cut to len): 1, or 0 when none waits. */
int notes_next(struct notes *n, char *buf, size_t len);

#endif
