// SPDX-License-Identifier: MIT
/*
 * perfmap.c - atomic, symlink-safe perf map writer (see perfmap.h).
 *
 * Invariant: the only path operations are openat(O_CREAT|O_EXCL|O_NOFOLLOW), renameat and
 * unlinkat relative to a directory fd we checked, so nothing in the directory is ever followed.
 */
#include "perfmap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "codetab.h"
#include "fgsearch.h"
#include "util.h"
#include "fgfree.h"

struct perfmap_dir {
	int fd;
	ssize_t (*write_fn)(int, const void *, size_t);
};

int perfmap_dir_open(const char *path, struct perfmap_dir **out)
{
	struct perfmap_dir *d;
	struct stat st;
	int fd = fg_open_dir(path, &st);

	if (fd < 0)
		return fd;
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

/* Where a map line's text goes: "START SIZE name\n". */
static void put_line(struct out *o, const struct codeblob *b)
{
	size_t nl = b->name_len;
	char *p;

	if (o->len + 40 + nl > sizeof(o->buf))
		out_flush(o);
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

/* One line of a map file as the writer indexes it: the blob's range and load time. */
struct line {
	uint64_t addr, end, load_ts;
};

/*
 * Write the live set of t to a new temporary file and rename it over perf-<pid>.map, through the
 * buffer o (a writer's own, or NULL: one allocated for this call). On success the new file's
 * descriptor goes to *fd_out (or is closed when fd_out is NULL), its identity to *f, and, when
 * lines is not NULL, its lines (n_live of them at most) to lines[0..*n_lines).
 */
static int rewrite(struct perfmap_dir *d, uint32_t pid, const struct codetab *t, struct out *o,
		   int *fd_out, struct perfmap_file *f, uint64_t *skipped, struct line *lines,
		   size_t *n_lines)
{
	char tmp[64], target[32];
	struct out *own = NULL;
	struct stat st;
	uint64_t prev_end = 0, skip = 0;
	size_t n = codetab_live_count(t), k = 0;
	int fd, rv;

	perfmap_name(pid, target, sizeof(target));
	if (!o && !(o = own = malloc(sizeof(*o))))
		return -ENOMEM;
	fd = open_temp(d, pid, tmp, sizeof(tmp));
	if (fd < 0) {
		free(own);
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
		if (b->addr < prev_end) {
			skip++;
			continue;
		}
		prev_end = b->addr + b->size;
		put_line(o, b);
		if (lines)
			lines[k++] = (struct line){ b->addr, b->addr + b->size, b->load_ts };
	}
	out_flush(o);
	rv = o->err;
	free(own);
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
	if (fd_out)
		*fd_out = fd;
	else
		close(fd);
	if (f) {
		f->dev = st.st_dev;
		f->ino = st.st_ino;
		f->ctime = st.st_ctim;
		f->valid = st.st_ino != 0;
	}
	if (skipped)
		*skipped += skip;
	if (n_lines)
		*n_lines = k;
	return 0;
}

int perfmap_write(struct perfmap_dir *d, uint32_t pid, const struct codetab *t,
		  struct perfmap_file *f, uint64_t *skipped)
{
	return rewrite(d, pid, t, NULL, NULL, f, skipped, NULL, NULL);
}

/* ---- the incremental writer ---------------------------------------------------------- */

#define RECENT_MAX 64	     /* appended lines kept unsorted before merging into the index */
#define NOTES_MAX (1u << 16) /* beyond this many pending notes, compact instead */

struct perfmap_writer {
	struct perfmap_dir *d;
	uint32_t pid;
	int fd; /* the file we created and renamed into place, kept for appends; -1 none */
	struct perfmap_file file;
	struct line *lines; /* the file's lines minus recent[], sorted, never overlapping */
	size_t n_lines, cap_lines;
	struct line recent[RECENT_MAX];
	size_t n_recent;
	uint64_t *notes; /* addresses of blobs that became live since the last update */
	size_t n_notes, cap_notes;
	bool notes_lost; /* a note could not be kept: only a compaction is exact */
	/*
	 * The write buffer, allocated at the first write and kept: a 64 KiB buffer taken from
	 * malloc at every append was fresh pages (page faults) for each batch of lines.
	 */
	struct out *out;
	struct perfmap_writer_stats st;
};

struct perfmap_writer *perfmap_writer_new(struct perfmap_dir *d, uint32_t pid)
{
	struct perfmap_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->d = d;
	w->pid = pid;
	w->fd = -1;
	return w;
}

void perfmap_writer_release(struct perfmap_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	w->n_lines = 0;
	w->n_recent = 0;
}

void perfmap_writer_free(struct perfmap_writer *w)
{
	if (!w)
		return;
	perfmap_writer_release(w);
	FG_FREE_ALL(w->lines, w->notes, w->out, w);
}

const struct perfmap_file *perfmap_writer_file(const struct perfmap_writer *w)
{
	return &w->file;
}

void perfmap_writer_stats(const struct perfmap_writer *w, struct perfmap_writer_stats *out)
{
	*out = w->st;
}

void perfmap_writer_note(struct perfmap_writer *w, uint64_t addr)
{
	if (w->notes_lost)
		return;
	if (w->n_notes == NOTES_MAX || ARRAY_GROW(w->notes, w->cap_notes, w->n_notes + 1) != 0) {
		w->notes_lost = true;
		return;
	}
	w->notes[w->n_notes++] = addr;
}

static int line_cmp(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Merge recent[] into lines[]. 0 or -ENOMEM (then nothing changed). */
static int merge_recent(struct perfmap_writer *w)
{
	size_t n = w->n_lines + w->n_recent, i = w->n_lines, j = w->n_recent, k = n;

	if (ARRAY_GROW(w->lines, w->cap_lines, n) != 0)
		return -ENOMEM;
	qsort(w->recent, w->n_recent, sizeof(w->recent[0]), line_cmp);
	while (j > 0) {
		if (i > 0 && w->lines[i - 1].addr > w->recent[j - 1].addr)
			w->lines[--k] = w->lines[--i];
		else
			w->lines[--k] = w->recent[--j];
	}
	w->n_lines = n;
	w->n_recent = 0;
	return 0;
}

enum fit { FIT_NEW, FIT_PRESENT, FIT_OVERLAP };

static bool line_ends_by(const struct line *l, uint64_t addr)
{
	return l->end <= addr;
}
FG_LOWER_BOUND(line_lower_bound, struct line, uint64_t, line_ends_by)

/* How the range of b relates to the lines of the file. */
static enum fit fit_of(const struct perfmap_writer *w, const struct codeblob *b)
{
	uint64_t end = b->addr + b->size;
	const struct line *l = NULL;
	/* Lines never overlap, so their ends are sorted too: find the first ending above addr. */
	size_t lo = line_lower_bound(w->lines, w->n_lines, b->addr);

	if (lo < w->n_lines && w->lines[lo].addr < end)
		l = &w->lines[lo];
	for (size_t i = 0; !l && i < w->n_recent; i++)
		if (w->recent[i].addr < end && b->addr < w->recent[i].end)
			l = &w->recent[i];
	if (!l)
		return FIT_NEW;
	if (l->addr == b->addr && l->end == end && l->load_ts == b->load_ts)
		return FIT_PRESENT;
	return FIT_OVERLAP;
}

/* Is the file at the map's name still the one we hold open? */
static bool still_ours(struct perfmap_writer *w)
{
	char target[32];
	struct stat st;

	perfmap_name(w->pid, target, sizeof(target));
	if (fstatat(w->d->fd, target, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return false;
	return S_ISREG(st.st_mode) && st.st_dev == w->file.dev && st.st_ino == w->file.ino;
}

/* The writer's buffer: NULL without memory. */
static struct out *writer_out(struct perfmap_writer *w)
{
	if (!w->out)
		w->out = malloc(sizeof(*w->out));
	return w->out;
}

static int compact(struct perfmap_writer *w, const struct codetab *t)
{
	size_t n = codetab_live_count(t), k = 0;
	struct line *lines = NULL;
	int fd = -1, rv;

	if (!writer_out(w))
		return -ENOMEM;
	if (n > w->cap_lines) {
		lines = malloc(n * sizeof(*lines));
		if (!lines)
			return -ENOMEM;
	}
	rv = rewrite(w->d, w->pid, t, w->out, &fd, &w->file, NULL, lines ? lines : w->lines, &k);
	if (rv != 0) {
		if (!lines)
			perfmap_writer_release(w); /* the index was overwritten in place */
		free(lines);
		return rv;
	}
	if (lines) {
		free(w->lines);
		w->lines = lines;
		w->cap_lines = n;
	}
	if (w->fd >= 0)
		close(w->fd);
	w->fd = fd;
	w->n_lines = k;
	w->n_recent = 0;
	w->n_notes = 0;
	w->notes_lost = false;
	w->st.compactions++;
	return 0;
}

/*
 * Append the lines of noted blobs that fit. Notes of blobs that are no longer live or already in
 * the file are dropped, notes of blobs that overlap a line are kept (*deferred counts them).
 */
static int append_notes(struct perfmap_writer *w, const struct codetab *t, size_t *deferred)
{
	struct out *o;
	struct stat st;
	size_t keep = 0, added = 0;
	int rv;

	*deferred = 0;
	if (!(o = writer_out(w)))
		return -ENOMEM;
	o->fd = w->fd;
	o->write_fn = w->d->write_fn;
	o->len = 0;
	o->err = 0;
	for (size_t i = 0; i < w->n_notes && !o->err; i++) {
		const struct codeblob *b = codetab_lookup_live(t, w->notes[i]);

		if (!b || b->addr != w->notes[i])
			continue; /* ended since, or never made it into the live set */
		switch (fit_of(w, b)) {
		case FIT_PRESENT:
			continue;
		case FIT_OVERLAP:
			w->notes[keep++] = w->notes[i];
			continue;
		case FIT_NEW:
			break;
		}
		if (w->n_recent == RECENT_MAX && merge_recent(w) != 0) {
			o->err = -ENOMEM;
			break;
		}
		put_line(o, b);
		w->recent[w->n_recent++] = (struct line){ b->addr, b->addr + b->size, b->load_ts };
		added++;
	}
	out_flush(o);
	rv = o->err;
	if (rv != 0) {
		/* What reached the file is unknown now: only a compaction makes it exact again. */
		perfmap_writer_release(w);
		return rv;
	}
	w->n_notes = keep;
	*deferred = keep;
	if (added) {
		w->st.appends++;
		w->st.lines_appended += added;
		/* An append changes the ctime that perfmap_remove checks. */
		if (fstat(w->fd, &st) == 0)
			w->file.ctime = st.st_ctim;
	}
	return 0;
}

int perfmap_writer_update(struct perfmap_writer *w, const struct codetab *t, bool may_compact)
{
	size_t deferred, lines, live;
	int rv;

	if (w->fd < 0 || w->notes_lost || !still_ours(w)) {
		if (!may_compact)
			return 1;
		return compact(w, t);
	}
	if ((rv = append_notes(w, t, &deferred)) != 0)
		return rv;
	/* Every live blob is in the file but the deferred ones; the other lines are dead. */
	lines = w->n_lines + w->n_recent;
	live = codetab_live_count(t) - deferred;
	if (deferred || (lines > live && lines - live >= PERFMAP_COMPACT_MIN_DEAD &&
			 (lines - live) * 2 > lines)) {
		if (!may_compact) {
			w->st.deferred += deferred != 0;
			return deferred ? 1 : 0;
		}
		return compact(w, t);
	}
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

/* ".perf-<digits>.map.<16 hex>": a name open_temp makes. */
static bool temp_name(const char *n)
{
	size_t i = 6, d;

	if (strncmp(n, ".perf-", 6) != 0)
		return false;
	for (d = 0; n[i] >= '0' && n[i] <= '9'; i++)
		d++;
	if (!d || d > 10 || strncmp(n + i, ".map.", 5) != 0)
		return false;
	i += 5;
	for (d = 0; (n[i] >= '0' && n[i] <= '9') || (n[i] >= 'a' && n[i] <= 'f'); i++)
		d++;
	return d == 16 && !n[i];
}

int perfmap_sweep(struct perfmap_dir *d, unsigned min_age_s)
{
	time_t now = time(NULL);
	struct dirent *e;
	DIR *dir;
	int n = 0, rv = fg_opendir_at(d->fd, &dir);

	if (rv != 0)
		return rv;
	while ((e = readdir(dir))) {
		struct stat st;

		if (!temp_name(e->d_name) ||
		    fstatat(d->fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
		    st.st_mtim.tv_sec + (time_t)min_age_s > now)
			continue;
		if (unlinkat(d->fd, e->d_name, 0) == 0)
			n++;
	}
	closedir(dir);
	return n;
}
