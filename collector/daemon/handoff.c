// SPDX-License-Identifier: MIT
/*
 * handoff.c - the maps a stopping watch leaves, told to the next one (see handoff.h).
 *
 * Format: a first line "fgcollect-maps-left 1", then one line per map:
 *   PID START_TIME DEV INO CTIME_SEC CTIME_NSEC a|x EXIT_TS
 * (a: the JVM was alive at the save; x: it had exited, seen at EXIT_TS, CLOCK_MONOTONIC ns).
 */
#include "handoff.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#define MAGIC "fgcollect-maps-left 1\n"
#define LINE_MAX_LEN 160
#define FILE_MAX ((size_t)HANDOFF_MAX * LINE_MAX_LEN + sizeof(MAGIC))

static int path_in(char *buf, size_t cap, const char *dir, const char *name)
{
	return (size_t)snprintf(buf, cap, "%s/%s", dir, name) < cap ? 0 : -ENAMETOOLONG;
}

int handoff_save(const char *dir, const struct handoff_entry *e, size_t n)
{
	char path[4096], tmp[4096 + 32];
	FILE *f;
	int fd, rv = 0;

	if (path_in(path, sizeof(path), dir, HANDOFF_NAME) != 0 ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid()) >= sizeof(tmp))
		return -ENAMETOOLONG;
	if (n == 0)
		return unlink(path) == 0 || errno == ENOENT ? 0 : -errno;
	unlink(tmp); /* a leftover of a killed save of ours (same PID) */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		rv = -errno;
		close(fd);
		unlink(tmp);
		return rv;
	}
	fputs(MAGIC, f);
	for (size_t i = 0; i < n && i < HANDOFF_MAX; i++)
		fprintf(f,
			"%" PRIu32 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %lld %ld %c %" PRIu64 "\n",
			e[i].pid, e[i].start_time, (uint64_t)e[i].file.dev, (uint64_t)e[i].file.ino,
			(long long)e[i].file.ctime.tv_sec, e[i].file.ctime.tv_nsec,
			e[i].exited ? 'x' : 'a', e[i].exited ? e[i].exit_ts : 0);
	if (fflush(f) != 0 || fsync(fileno(f)) != 0)
		rv = -errno;
	if (fclose(f) != 0 && rv == 0)
		rv = -errno;
	return fg_tmp_commit(AT_FDCWD, tmp, path, rv);
}

/* One decimal field ending in sep; advances *p. */
static int field(const char **p, const char *end, char sep, uint64_t max, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	if (s >= end || *s < '0' || *s > '9')
		return -1;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (x > (max - (uint64_t)(*s - '0')) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	if (s >= end || *s != sep)
		return -1;
	*v = x;
	*p = s + 1;
	return 0;
}

int handoff_parse(const char *text, size_t len, struct handoff_entry *out, size_t cap, size_t *n)
{
	const char *p = text, *end = text + len;

	*n = 0;
	if (len < strlen(MAGIC) || memcmp(text, MAGIC, strlen(MAGIC)) != 0)
		return -EBADMSG;
	p += strlen(MAGIC);
	while (p < end && *n < cap) {
		struct handoff_entry e = { 0 };
		uint64_t pid, dev, ino, sec, nsec, age;
		char st;

		if (field(&p, end, ' ', UINT32_MAX, &pid) || pid == 0 ||
		    field(&p, end, ' ', UINT64_MAX, &e.start_time) ||
		    field(&p, end, ' ', UINT64_MAX, &dev) ||
		    field(&p, end, ' ', UINT64_MAX, &ino) || field(&p, end, ' ', INT64_MAX, &sec) ||
		    field(&p, end, ' ', 999999999, &nsec) || p + 2 > end ||
		    (p[0] != 'a' && p[0] != 'x') || p[1] != ' ')
			return -EBADMSG;
		st = p[0];
		p += 2;
		if (field(&p, end, '\n', UINT64_MAX, &age))
			return -EBADMSG;
		e.pid = (uint32_t)pid;
		e.file.dev = (dev_t)dev;
		e.file.ino = (ino_t)ino;
		e.file.ctime.tv_sec = (time_t)sec;
		e.file.ctime.tv_nsec = (long)nsec;
		e.file.valid = true;
		e.exited = st == 'x';
		e.exit_ts = e.exited ? age : 0;
		out[(*n)++] = e;
	}
	return 0;
}

int handoff_load(const char *dir, struct handoff_entry **out, size_t *n)
{
	char path[4096], *buf = NULL;
	struct stat st;
	ssize_t got = 0;
	int fd, rv;

	*out = NULL;
	*n = 0;
	if (path_in(path, sizeof(path), dir, HANDOFF_NAME) != 0)
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	/* Ours, a plain file, of a size we could have written. */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (size_t)st.st_size > FILE_MAX) {
		rv = -EBADMSG;
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	*out = calloc(HANDOFF_MAX, sizeof(**out));
	if (!buf || !*out) {
		rv = -ENOMEM;
		goto out;
	}
	while (got < st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - (size_t)got);

		if (r <= 0)
			break;
		got += r;
	}
	rv = handoff_parse(buf, (size_t)got, *out, HANDOFF_MAX, n);
out:
	close(fd);
	free(buf);
	/* Told once: a later collector hears of these maps from us, not from this file. */
	unlink(path);
	if (rv != 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rv;
}
