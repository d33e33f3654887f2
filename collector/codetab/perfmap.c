// SPDX-License-Identifier: MIT
/*
 * perfmap.c - atomic, symlink-safe perf map writer (see perfmap.h).
 *
 * Invariant: the only path operations are openat(O_CREAT|O_EXCL|O_NOFOLLOW), renameat and
 * unlinkat relative to a directory fd we checked, so nothing in the directory is ever followed.
 */
#include "perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codetab.h"

struct perfmap_dir {
	int fd;
	ssize_t (*write_fn)(int, const void *, size_t);
};

int perfmap_dir_open(const char *path, struct perfmap_dir **out)
{
	struct perfmap_dir *d;
	struct stat st;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOTDIR ? -ENOTDIR : -errno;
	if (fstat(fd, &st) != 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	/* Others can write here: only the sticky bit stops them renaming our files away. */
	if ((st.st_uid != 0 && st.st_uid != geteuid()) ||
	    ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))) {
		close(fd);
		return -EPERM;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	d->fd = fd;
	d->write_fn = write;
	*out = d;
	return 0;
}

void perfmap_dir_close(struct perfmap_dir *d)
{
	if (!d)
		return;
	close(d->fd);
	free(d);
}

void perfmap_dir_set_write(struct perfmap_dir *d, ssize_t (*fn)(int, const void *, size_t))
{
	d->write_fn = fn ? fn : write;
}

void perfmap_name(uint32_t pid, char *buf, size_t cap)
{
	snprintf(buf, cap, "perf-%u.map", pid);
}

/* Lowercase hex without 0x or leading zeros; the map is rewritten often, so no printf. */
static char *put_hex(char *p, uint64_t v)
{
	int n = v ? (67 - __builtin_clzll(v)) / 4 : 1;

	for (int i = n - 1; i >= 0; i--, v >>= 4)
		p[i] = "0123456789abcdef"[v & 15];
	return p + n;
}

struct out {
	int fd;
	ssize_t (*write_fn)(int, const void *, size_t);
	char buf[65536];
	size_t len;
	int err;
};

static void out_flush(struct out *o)
{
	size_t off = 0;

	while (off < o->len && !o->err) {
		ssize_t n = o->write_fn(o->fd, o->buf + off, o->len - off);

		if (n < 0) {
			if (errno != EINTR)
				o->err = -errno;
			continue;
		}
		if (n == 0)
			o->err = -EIO;
		off += (size_t)n;
	}
	o->len = 0;
}

static int open_temp(struct perfmap_dir *d, uint32_t pid, char *name, size_t cap)
{
	for (int attempt = 0; attempt < 16; attempt++) {
		uint64_t r;
		int fd;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&r ^
			    (uint64_t)attempt;
		snprintf(name, cap, ".perf-%u.map.%016llx", pid, (unsigned long long)r);
		fd = openat(d->fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0644);
		if (fd >= 0) {
			/* The umask must not make a map unreadable to perf run by another user. */
			fchmod(fd, 0644);
			return fd;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/*
 * Put tmp at target atomically. RENAME_EXCHANGE and then unlinking what was swapped out costs
 * about half of a plain rename over an existing file on ext4, whose auto_da_alloc heuristic
 * starts writeback of the new file on every replace-by-rename: a map is rewritten up to hundreds
 * of times a second and never needs to reach the disk. Whatever was at target (our old map, or
 * a planted symlink or hard link) ends up under tmp and is unlinked, never followed; a planted
 * non-empty directory stays under tmp (nothing to follow there either).
 */
static int replace(int dfd, const char *tmp, const char *target)
{
	if (renameat2(dfd, tmp, dfd, target, RENAME_EXCHANGE) == 0) {
		if (unlinkat(dfd, tmp, 0) != 0 && errno == EISDIR)
			unlinkat(dfd, tmp, AT_REMOVEDIR);
		return 0;
	}
	/* No target yet (ENOENT), or a filesystem or kernel without exchange. */
	if (errno != ENOENT && errno != EINVAL && errno != ENOSYS)
		return -errno;
	return renameat(dfd, tmp, dfd, target) == 0 ? 0 : -errno;
}

int perfmap_write(struct perfmap_dir *d, uint32_t pid, const struct codetab *t,
		  struct perfmap_file *f, uint64_t *skipped)
{
	char tmp[64], target[32];
	struct out *o;
	struct stat st;
	uint64_t prev_end = 0, skip = 0;
	size_t n = codetab_live_count(t);
	int fd, rv;

	perfmap_name(pid, target, sizeof(target));
	o = malloc(sizeof(*o));
	if (!o)
		return -ENOMEM;
	fd = open_temp(d, pid, tmp, sizeof(tmp));
	if (fd < 0) {
		free(o);
		return fd;
	}
	o->fd = fd;
	o->write_fn = d->write_fn;
	o->len = 0;
	o->err = 0;
	for (size_t i = 0; i < n && !o->err; i++) {
		const struct codeblob *b = codetab_live_at(t, i);

		/* Blobs and names are scattered on the heap: fetch a few lines ahead. */
		if (i + 8 < n)
			__builtin_prefetch(codetab_live_at(t, i + 8));
		if (i + 4 < n)
			__builtin_prefetch(codetab_live_at(t, i + 4)->name);
		size_t nl = b->name_len;
		char *p;

		if (b->addr < prev_end) {
			skip++;
			continue;
		}
		prev_end = b->addr + b->size;
		if (o->len + 40 + nl > sizeof(o->buf))
			out_flush(o);
		if (40 + nl > sizeof(o->buf))
			continue; /* cannot happen: names are at most FGP_MAX_STR */
		p = o->buf + o->len;
		p = put_hex(p, b->addr);
		*p++ = ' ';
		p = put_hex(p, b->size);
		*p++ = ' ';
		memcpy(p, b->name, nl);
		p += nl;
		*p++ = '\n';
		o->len = (size_t)(p - o->buf);
	}
	out_flush(o);
	rv = o->err;
	free(o);
	if (rv == 0)
		rv = replace(d->fd, tmp, target);
	if (rv != 0) {
		close(fd);
		unlinkat(d->fd, tmp, 0);
		return rv;
	}
	/* After the rename: it changes the inode's ctime, which identifies the file later. */
	if (fstat(fd, &st) != 0)
		st.st_ino = 0;
	close(fd);
	if (f) {
		f->dev = st.st_dev;
		f->ino = st.st_ino;
		f->ctime = st.st_ctim;
		f->valid = st.st_ino != 0;
	}
	if (skipped)
		*skipped += skip;
	return 0;
}

int perfmap_remove(struct perfmap_dir *d, uint32_t pid, const struct perfmap_file *f)
{
	char target[32];
	struct stat st;

	if (!f || !f->valid)
		return 0;
	perfmap_name(pid, target, sizeof(target));
	if (fstatat(d->fd, target, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : -errno;
	/*
	 * In a sticky directory only we (the owner) can rename or remove our file, so if the name
	 * still holds our inode now, it still does at the unlink.
	 */
	if (!S_ISREG(st.st_mode) || st.st_dev != f->dev || st.st_ino != f->ino ||
	    st.st_ctim.tv_sec != f->ctime.tv_sec || st.st_ctim.tv_nsec != f->ctime.tv_nsec ||
	    st.st_uid != geteuid())
		return 0;
	if (unlinkat(d->fd, target, 0) != 0)
		return errno == ENOENT ? 0 : -errno;
	return 1;
}
