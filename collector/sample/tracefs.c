// SPDX-License-Identifier: MIT
/* tracefs.c - the sched:sched_switch tracepoint's id and prev_state field (see tracefs.h). */
#include "tracefs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#define FORMAT_MAX 16384 /* a format file is a few hundred bytes */

static const char *memfind(const char *h, size_t hl, const char *n, size_t nl)
{
	if (nl == 0 || hl < nl)
		return NULL;
	for (size_t i = 0; i + nl <= hl; i++)
		if (h[i] == n[0] && !memcmp(h + i, n, nl))
			return h + i;
	return NULL;
}

/* The unsigned number after `key` in line [p, end), or -1. */
static long line_num(const char *p, const char *end, const char *key)
{
	const char *k = memfind(p, (size_t)(end - p), key, strlen(key));
	long v = 0;
	bool any = false;

	if (!k)
		return -1;
	for (k += strlen(key); k < end && *k == ' '; k++)
		;
	for (; k < end && *k >= '0' && *k <= '9' && v < 1000000; k++) {
		v = v * 10 + (*k - '0');
		any = true;
	}
	return any ? v : -1;
}

int tracefs_field(const char *text, size_t len, const char *name, uint32_t *off, uint32_t *size)
{
	const char *p = text, *end = text + len;
	size_t nl = strlen(name);

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *semi, *q;

		if (!eol)
			eol = end;
		/* "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;" */
		semi = memchr(p, ';', (size_t)(eol - p));
		q = memfind(p, (size_t)(eol - p), "field:", 6);
		if (q && semi && (size_t)(semi - q) > nl && !memcmp(semi - nl, name, nl) &&
		    (semi[-(long)nl - 1] == ' ' || semi[-(long)nl - 1] == '*')) {
			long o = line_num(semi, eol, "offset:"), s = line_num(semi, eol, "size:");

			if (o < 0 || s < 0)
				return -EBADMSG;
			if (s != 1 && s != 2 && s != 4 && s != 8)
				return -ERANGE;
			*off = (uint32_t)o;
			*size = (uint32_t)s;
			return 0;
		}
		p = eol + 1;
	}
	return -ENOENT;
}

static ssize_t read_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	size_t n = 0;

	if (fd < 0)
		return -errno;
	while (n < cap - 1) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);

		if (r < 0) {
			int e = errno;

			close(fd);
			return -e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	return (ssize_t)n;
}

static int from_dir(const char *dir, struct tracefs_switch *out)
{
	char path[160], *buf = malloc(FORMAT_MAX), *end;
	ssize_t n;
	int rv;

	if (!buf)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/events/sched/sched_switch/id", dir);
	n = read_file(path, buf, 64);
	if (n < 0) {
		rv = (int)n;
		goto out;
	}
	out->id = strtoull(buf, &end, 10);
	if (end == buf) {
		rv = -EBADMSG;
		goto out;
	}
	snprintf(path, sizeof(path), "%s/events/sched/sched_switch/format", dir);
	n = read_file(path, buf, FORMAT_MAX);
	if (n < 0) {
		rv = (int)n;
		goto out;
	}
	rv = tracefs_field(buf, (size_t)n, "prev_state", &out->state_off, &out->state_size);
	if (rv == 0)
		snprintf(out->dir, sizeof(out->dir), "%s", dir);
out:
	free(buf);
	return rv;
}

int tracefs_sched_switch(struct tracefs_switch *out)
{
	static const char *const dirs[] = TRACEFS_DIRS;
	int rv = -ENOENT, first = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		rv = from_dir(dirs[i], out);
		if (rv == 0)
			return 0;
		if (rv != -ENOENT && !first)
			first = rv;
	}
	if (first)
		return first;
	/* Not mounted (a stock system mounts it on first use of /sys/kernel/tracing only with
	 * systemd's automount): mount it where the kernel provides the mount point. */
	if (mount("tracefs", dirs[0], "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
		return -ENOENT;
	rv = from_dir(dirs[0], out);
	if (rv == 0)
		out->mounted = 1;
	return rv;
}

const char *tracefs_state_frame(uint64_t st)
{
	if (st & TRACEFS_TASK_UNINTERRUPTIBLE)
		return "[off-cpu: uninterruptible (disk I/O)]";
	if (st & TRACEFS_TASK_INTERRUPTIBLE)
		return "[off-cpu: sleeping]";
	if (st & (TRACEFS_TASK_STOPPED | TRACEFS_TASK_TRACED))
		return "[off-cpu: stopped]";
	if (st & TRACEFS_TASK_PARKED)
		return "[off-cpu: parked]";
	if (st & TRACEFS_TASK_IDLE)
		return "[off-cpu: idle]";
	if ((st & 0xff) == 0) /* runnable: switched out by preemption (maybe flagged "R+") */
		return "[off-cpu: preempted]";
	return "[off-cpu: other]";
}
