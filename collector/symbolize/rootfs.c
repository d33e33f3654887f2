// SPDX-License-Identifier: MIT
/*
 * rootfs.c - safe opening of a target process's files through its root directory.
 *
 * Invariant: no path from a target is resolved by plain open(2) under /proc/<pid>/root (that
 * follows the container's absolute symlinks out to host files); only openat2 RESOLVE_IN_ROOT.
 */
#include "rootfs.h"

#include "procmaps.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

int rootfs_open_root(pid_t pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int rootfs_openat(int rootfd, const char *path)
{
	struct open_how how;
	long fd;

	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY;
	how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
	/* glibc 2.36 has no openat2() wrapper: call the syscall directly. */
	do
		fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	while (fd < 0 && (errno == EINTR || errno == EAGAIN));
	return fd < 0 ? -errno : (int)fd;
}

static int open_map_files(pid_t pid, const struct procmap *m)
{
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, m->start,
		 m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	return fd < 0 ? -errno : fd;
}

static int is_regular(int fd)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return -errno;
	return S_ISREG(st.st_mode) ? 0 : -EINVAL;
}

int rootfs_open_mapping(int rootfd, pid_t pid, const struct procmap *m, unsigned int flags,
			enum rootfs_via *via)
{
	int path_err = -ENOENT, fd, rv;

	if (m->kind != PROCMAP_FILE && m->kind != PROCMAP_DELETED && m->kind != PROCMAP_MEMFD)
		return -EINVAL;
	if (m->kind == PROCMAP_FILE && rootfd >= 0 && m->path[0] == '/') {
		struct stat st;

		fd = rootfs_openat(rootfd, m->path);
		if (fd >= 0) {
			if (fstat(fd, &st) != 0) {
				path_err = -errno;
			} else if (S_ISREG(st.st_mode) && st.st_ino == m->ino &&
				   major(st.st_dev) == m->maj && minor(st.st_dev) == m->min) {
				*via = ROOTFS_VIA_PATH;
				return fd;
			} else {
				path_err = -ESTALE;
			}
			close(fd);
		} else {
			path_err = fd;
		}
	}
	if (flags & ROOTFS_NO_MAP_FILES)
		return path_err;
	fd = open_map_files(pid, m);
	if (fd < 0)
		return path_err == -ESTALE ? path_err : (m->kind == PROCMAP_FILE ? path_err : fd);
	if ((rv = is_regular(fd)) != 0) {
		close(fd);
		return rv;
	}
	*via = ROOTFS_VIA_MAP_FILES;
	return fd;
}
