// SPDX-License-Identifier: MIT
/*
 * peer.c - /proc parsers for the identity of an agent's process (see peer.h).
 *
 * Invariant: parsers only read inside the NUL-terminated text they are given and never return
 * a partially parsed value as success.
 */
#include "peer.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int peer_parse_nspid(const char *status, uint32_t *ns_pid, uint32_t *depth)
{
	const char *p = status;
	uint32_t last = 0, n = 0;

	while (p && *p) {
		if (!strncmp(p, "NSpid:", 6)) {
			p += 6;
			for (;;) {
				char *end;
				unsigned long v;

				while (*p == ' ' || *p == '\t')
					p++;
				if (*p == '\n' || *p == '\0')
					break;
				if (!isdigit((unsigned char)*p))
					return -EINVAL;
				errno = 0;
				v = strtoul(p, &end, 10);
				if (errno || v == 0 || v > INT_MAX)
					return -EINVAL;
				last = (uint32_t)v;
				n++;
				p = end;
			}
			if (n == 0)
				return -EINVAL;
			*ns_pid = last;
			*depth = n;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -EINVAL;
}

int peer_parse_start_time(const char *stat, uint64_t *start_time)
{
	const char *p = strrchr(stat, ')');
	unsigned long long v;
	char *end;

	if (!p || !strchr(stat, '('))
		return -EINVAL;
	p++;
	/* After ") " comes field 3 (state); starttime is field 22, 19 fields further. */
	for (int field = 3; field < 22; field++) {
		while (*p == ' ')
			p++;
		if (*p == '\0' || *p == '\n')
			return -EINVAL;
		while (*p && *p != ' ' && *p != '\n')
			p++;
	}
	while (*p == ' ')
		p++;
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (errno || (*end != ' ' && *end != '\n' && *end != '\0'))
		return -EINVAL;
	*start_time = v;
	return 0;
}

static int all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return 0;
	return 1;
}

/* Is the component c[0..n) a container id, bare or wrapped? Sets *id to its 64 digits. */
static int component_id(const char *c, size_t n, const char **id)
{
	static const char *const prefixes[] = { "docker-", "cri-containerd-", "crio-", "libpod-" };
	const size_t idlen = PEER_CONTAINER_ID_MAX;

	if (n > 6 && !memcmp(c + n - 6, ".scope", 6))
		n -= 6;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t pl = strlen(prefixes[i]);

		if (n == pl + idlen && !memcmp(c, prefixes[i], pl)) {
			c += pl;
			n -= pl;
			break;
		}
	}
	if (n != idlen || !all_hex(c, n))
		return 0;
	*id = c;
	return 1;
}

int peer_parse_container_id(const char *cgroup, char *out, size_t cap)
{
	const char *line = cgroup, *found = NULL;

	if (cap < PEER_CONTAINER_ID_MAX + 1)
		return -EINVAL;
	out[0] = '\0';
	while (line && *line) {
		const char *eol = strchr(line, '\n');
		const char *path, *c;

		if (!eol)
			eol = line + strlen(line);
		/* "hierarchy-ID:controller-list:path"; the path is after the second ':'. */
		path = memchr(line, ':', (size_t)(eol - line));
		if (path)
			path = memchr(path + 1, ':', (size_t)(eol - path - 1));
		if (path) {
			path++;
			c = path;
			while (c < eol) {
				const char *slash = memchr(c, '/', (size_t)(eol - c));
				const char *cend = slash ? slash : eol;
				const char *id;

				if (component_id(c, (size_t)(cend - c), &id))
					found = id; /* deepest component of the last matching line
						     */
				c = cend + 1;
			}
		}
		line = *eol ? eol + 1 : NULL;
	}
	if (!found)
		return -ENOENT;
	memcpy(out, found, PEER_CONTAINER_ID_MAX);
	out[PEER_CONTAINER_ID_MAX] = '\0';
	return 0;
}

/* Read a small /proc file into buf (NUL-terminated); 0 or negative errno. */
static int read_small(const char *proc_root, uint32_t pid, const char *name, char *buf, size_t cap)
{
	char path[PATH_MAX];
	size_t got = 0;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%u/%s", proc_root, pid, name) >= sizeof(path))
		return -ENAMETOOLONG;
	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : errno ? -errno : -EIO;
	while (got < cap - 1) {
		ssize_t n = read(fd, buf + got, cap - 1 - got);

		if (n < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			close(fd);
			return e == ESRCH ? -ESRCH : e ? -e : -EIO;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	close(fd);
	return 0;
}

int peer_start_time(const char *proc_root, uint32_t pid, uint64_t *start_time)
{
	char buf[1024]; /* starttime, field 22, lies within the first ~450 bytes */
	int rv;

	if (pid == 0)
		return -EINVAL;
	if ((rv = read_small(proc_root, pid, "stat", buf, sizeof(buf))) != 0)
		return rv;
	return peer_parse_start_time(buf, start_time);
}

int peer_read(const char *proc_root, uint32_t pid, struct peer_info *out)
{
	struct peer_info pi = { .host_pid = pid };
	char *buf;
	int rv;

	if (pid == 0)
		return -EINVAL;
	buf = malloc(16384);
	if (!buf)
		return -ENOMEM;
	if ((rv = read_small(proc_root, pid, "status", buf, 16384)) != 0 ||
	    (rv = peer_parse_nspid(buf, &pi.ns_pid, &pi.ns_depth)) != 0)
		goto out;
	if ((rv = peer_start_time(proc_root, pid, &pi.start_time)) != 0)
		goto out;
	/* A process without a readable cgroup file is simply not in a container we know. */
	if (read_small(proc_root, pid, "cgroup", buf, 16384) == 0)
		peer_parse_container_id(buf, pi.container_id, sizeof(pi.container_id));
	*out = pi;
out:
	free(buf);
	return rv;
}
