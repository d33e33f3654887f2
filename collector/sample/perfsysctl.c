// SPDX-License-Identifier: MIT
/* perfsysctl.c - kernel.perf_event_* sysctls (see perfsysctl.h). */
#include "perfsysctl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int perfsysctl_read(const char *path, unsigned int *out)
{
	char buf[32];
	ssize_t n;
	unsigned long v;
	char *end;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	v = strtoul(buf, &end, 10);
	if (end == buf || v > UINT_MAX)
		return -EIO;
	*out = (unsigned int)v;
	return 0;
}

int perfsysctl_write(const char *path, unsigned int v)
{
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%u\n", v);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, buf, (size_t)len);
	if (n < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);
	return n == len ? 0 : -EIO;
}

int perfsysctl_fit_stack(const char *path, unsigned int want, bool may_raise,
			 struct perfsysctl_stack *out)
{
	struct perfsysctl_stack f = { .depth = want };
	int rv;

	if ((rv = perfsysctl_read(path, &f.sysctl)) != 0)
		return rv;
	if (f.sysctl < want) {
		rv = may_raise ? perfsysctl_write(path, want) : -EPERM;
		if (rv == 0) {
			f.raised = true;
		} else {
			f.raise_err = rv;
			f.depth = f.sysctl;
		}
	}
	*out = f;
	return 0;
}
