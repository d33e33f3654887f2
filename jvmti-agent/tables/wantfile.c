// SPDX-License-Identifier: MIT
/*
 * wantfile.c - reading and parsing the collector's want file (see wantfile.h).
 */
#include "wantfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fgsocket.h"

int wantfile_init(struct wantfile *w, const char *socket_path)
{
	memset(w, 0, sizeof(*w));
	if ((size_t)snprintf(w->path, sizeof(w->path), "%s%s", socket_path, FG_WANT_SUFFIX) >=
	    sizeof(w->path))
		return -ENAMETOOLONG;
	return 0;
}

void wantfile_fini(struct wantfile *w)
{
	free(w->buf);
	w->buf = NULL;
}

int wantfile_read(struct wantfile *w, uint64_t token)
{
	struct stat st;
	ssize_t n;
	int fd;

	if (stat(w->path, &st) != 0 || !S_ISREG(st.st_mode)) {
		w->st.st_ino = 0;
		return 0;
	}
	if (w->st.st_ino && st.st_ino == w->st.st_ino && st.st_size == w->st.st_size &&
	    st.st_mtim.tv_sec == w->st.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == w->st.st_mtim.tv_nsec)
		return w->answer;
	if (!w->buf && !(w->buf = malloc(FG_WANT_MAX)))
		return 0;
	fd = open(w->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, w->buf, FG_WANT_MAX);
	close(fd);
	if (n < 0)
		return 0;
	w->st = st;
	w->answer = wantfile_listed(w->buf, (size_t)n, token);
	return w->answer;
}

bool wantfile_listed(const char *buf, size_t len, uint64_t token)
{
	char want[17];
	size_t i = 0;

	if (token == 0)
		return false;
	snprintf(want, sizeof(want), "%016llx", (unsigned long long)token);
	while (i < len) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - buf) : len;

		if (end - i == 16 && memcmp(buf + i, want, 16) == 0)
			return true;
		i = end + 1;
	}
	return false;
}
