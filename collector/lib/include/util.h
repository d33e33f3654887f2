/* SPDX-License-Identifier: MIT */
/*
 * util.h - small helpers every collector stage may use.
 *
 * Exit statuses follow argp: 0 success, 1 runtime failure, 64 usage error.
 */
#ifndef FG_UTIL_H
#define FG_UTIL_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>

#include "fgclock.h" /* fg_now_ns: CLOCK_MONOTONIC ns, the clock of events and samples */

/*
 * The calling thread's CPU time in ns (CLOCK_THREAD_CPUTIME_ID): what a piece of the
 * collector's own work cost, as the difference of two reads in the same thread. Never goes
 * back within a thread; 0 when the clock cannot be read (a difference then reads 0 or the
 * second read's value, never a negative time).
 */
uint64_t fg_thread_cpu_ns(void);

#define FG_EXIT_OK 0
#define FG_EXIT_FAIL 1
#define FG_EXIT_USAGE 64

#define FG_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * A zeroed object of size bytes whose configuration, the conf_size bytes at conf_off, is a
 * copy of *conf (left zeroed when conf is NULL), or NULL when out of memory. The caller frees
 * it. Through FG_NEW_CONF, which checks that conf points to the member's type.
 */
void *fg_new_conf(size_t size, size_t conf_off, const void *conf, size_t conf_size);

/* A calloc'd `type` whose `member` is a copy of *conf: FG_NEW_CONF(struct symcache, lim, lim). */
#define FG_NEW_CONF(type, member, conf)                                                            \
	((type *)fg_new_conf(sizeof(type), offsetof(type, member),                                 \
			     (const __typeof__(((type *)0)->member) *){ (conf) },                  \
			     sizeof(((type *)0)->member)))

/* An option the caller left 0 takes its default: FG_DEFAULT(o->max_files, DEFAULT_MAX_FILES). */
#define FG_DEFAULT(opt, dflt)                                                                      \
	do {                                                                                       \
		if (!(opt))                                                                        \
			(opt) = (dflt);                                                            \
	} while (0)

/*
 * Print "fgcollect <cmd>: <message>\n" to stderr. For main.c and cmd_*.c only: library
 * modules return errors and never print.
 */
void fg_err(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Format one line for the user (cut at FG_SAY_MAX - 1 bytes, no newline) and hand it to
 * line(arg, text): how modules that never print speak, through the log callback their caller
 * gave them (the daemon, its rollers, a recording's report). Nothing when line is NULL.
 */
#define FG_SAY_MAX 4096
void fg_say(void (*line)(void *arg, const char *text), void *arg, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The HTML entity that stands for the character c (&, <, > or "), or NULL for any other. */
const char *fg_html_entity(long c);

/* Parse a whole decimal unsigned integer in [min, max]; 0 or -EINVAL/-ERANGE. */
int fg_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * Read all of path into a malloc'd buffer: it starts at initial bytes and doubles while it
 * stays <= max. On success *buf (the caller frees it) and *len are set; else 0 is not returned
 * and nothing is: -EFBIG when the file holds more than the largest buffer, -ENOMEM, or the
 * negative errno of open/read.
 */
int fg_read_file(const char *path, size_t initial, size_t max, char **buf, size_t *len);

/*
 * Read a small file (a /proc comm, a sysctl) into buf[0..len), cut to len - 1 bytes, trailing
 * newlines removed, always NUL-terminated. 0 or the negative errno of fopen.
 */
int fg_read_small(const char *path, char *buf, size_t len);

/* Write all of buf[0..len) to fd (again after EINTR and short writes). 0 or -errno. */
int fg_write_all(int fd, const void *buf, size_t len);

/*
 * Finish a file written under the temporary name tmp (both names relative to dfd, AT_FDCWD for
 * plain paths): with rv 0, rename it over path; otherwise, or when the rename fails, remove
 * it. Returns rv, or the rename's -errno.
 */
int fg_tmp_commit(int dfd, const char *tmp, const char *path, int rv);

/*
 * Open the directory path, not following a link in its last component, and fstat it into *st.
 * The descriptor (close-on-exec, the caller closes it), or the negative errno of open (a link
 * or no directory: -ENOTDIR, or -ELOOP for a link where O_NOFOLLOW is checked first) or of fstat.
 */
struct stat;
int fg_open_dir(const char *path, struct stat *st);

/*
 * A directory stream over the directory open at dfd (which stays open and is not moved: the
 * stream reads a descriptor of its own). 0 with *out, or -errno.
 */
int fg_opendir_at(int dfd, DIR **out);

#endif
