// SPDX-License-Identifier: MIT
/* util.c - small helpers shared by the collector's stages (see util.h). */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void *fg_new_conf(size_t size, size_t conf_off, const void *conf, size_t conf_size)
{
	char *p = calloc(1, size);

	if (p && conf)
		memcpy(p + conf_off, conf, conf_size);
	return p;
}

const char *fg_html_entity(long c)
{
	switch (c) {
	case '&':
		return "&amp;";
	case '<':
		return "&lt;";
	case '>':
		return "&gt;";
	case '"':
		return "&quot;";
	}
	return NULL;
}

void fg_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fgcollect %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void fg_say(void (*line)(void *arg, const char *text), void *arg, const char *fmt, ...)
{
	char text[FG_SAY_MAX];
	va_list ap;

	if (!line)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	line(arg, text);
}

int fg_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int fg_read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return 0;
}

int fg_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int fg_tmp_commit(int dfd, const char *tmp, const char *path, int rv)
{
	if (rv == 0 && renameat(dfd, tmp, dfd, path) != 0)
		rv = -errno;
	if (rv != 0)
		(void)unlinkat(dfd, tmp, 0);
	return rv;
}

int fg_open_dir(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), rv;

	if (fd < 0)
		return -errno;
	if (fstat(fd, st) != 0) {
		rv = -errno;
		close(fd);
		return rv;
	}
	return fd;
}

int fg_opendir_at(int dfd, DIR **out)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	*out = fdopendir(fd);
	if (!*out) {
		int e = errno;

		close(fd);
		return -e;
	}
	return 0;
}

int fg_read_file(const char *path, size_t initial, size_t max, char **buf, size_t *len)
{
	size_t cap = initial, n = 0;
	char *b;
	int fd, rv = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	b = malloc(cap);
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *nb;

			if (cap * 2 > max) {
				char probe;

				/* Full at the largest size: fine if this is the end of the file. */
				r = read(fd, &probe, 1);
				if (r < 0 && errno == EINTR)
					continue;
				rv = r == 0 ? 0 : r < 0 ? -errno : -EFBIG;
				break;
			}
			cap *= 2;
			nb = realloc(b, cap);
			if (!nb) {
				rv = -ENOMEM;
				break;
			}
			b = nb;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rv = -errno;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (rv) {
		free(b);
		return rv;
	}
	*buf = b;
	*len = n;
	return 0;
}

uint64_t fg_thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
