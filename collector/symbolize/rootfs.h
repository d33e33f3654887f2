/* SPDX-License-Identifier: MIT */
/*
 * rootfs.h - open a file as a (containerized) process sees it, without escaping its root.
 *
 * Invariant: a path taken from a target process is only ever resolved with openat2(2)
 * RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS under that process's root, so its absolute symlinks
 * and ".." stay inside it. The one magic link we follow on purpose is
 * /proc/<pid>/map_files/<start>-<end>, which is the mapped file itself.
 */
#ifndef FG_ROOTFS_H
#define FG_ROOTFS_H

#include <sys/types.h>

struct procmap;

/*
 * An O_PATH directory fd of /proc/<pid>/root (the process's root, e.g. the container's
 * pivot_root), or -errno (-ENOENT: process gone; -EACCES: not permitted). It stays valid after
 * the process exits. Close it with close(2).
 */
int rootfs_open_root(pid_t pid);

/*
 * Open path read-only (O_RDONLY|O_CLOEXEC) resolved inside the directory rootfd as if it were
 * "/" (absolute symlinks and ".." cannot leave it; magic links are refused). Returns an fd or
 * -errno; -ENOSYS when the kernel lacks openat2 (before 5.6): there is no unsafe fallback.
 */
int rootfs_openat(int rootfd, const char *path);

/* How rootfs_open_mapping() found the file. */
enum rootfs_via {
	ROOTFS_VIA_PATH,      /* the mapping's path under the process root, identity verified */
	ROOTFS_VIA_MAP_FILES, /* /proc/<pid>/map_files/<start>-<end>: the mapped file itself */
};

/* Flags for rootfs_open_mapping(). */
#define ROOTFS_NO_MAP_FILES 0x1u /* do not fall back to /proc/<pid>/map_files */

/*
 * Open the file backing mapping m of process pid, whose root is rootfd (from
 * rootfs_open_root(); may be -1 to use map_files only). The path is tried first and accepted
 * only if fstat's dev and inode equal the mapping's; otherwise (deleted, memfd, replaced on
 * disk, overlayfs device numbers) map_files is tried, which needs the process alive and
 * CAP_SYS_ADMIN. Returns an fd and sets *via, or -errno: -ESTALE when a file exists at the
 * path but is not the mapped one (a "mismatch") and map_files could not be used; -EINVAL for
 * a mapping without a file.
 */
int rootfs_open_mapping(int rootfd, pid_t pid, const struct procmap *m, unsigned int flags,
			enum rootfs_via *via);

#endif
