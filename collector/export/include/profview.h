/* SPDX-License-Identifier: MIT */
/*
 * profview.h - the time view of a directory of rolling profiles (`fgcollect view DIR`): for
 * each JVM and event, one self-contained page (profout.h's PROFOUT_HTML) whose heatmap has a
 * column per interval, made from the STEM.folded files `watch --out` wrote (profdir.h), so
 * nothing is recorded again. A selected interval's flame graph is that interval's profile.
 *
 * Pages are named "view_SERVICE_CID12_PID_HOST[.EVENT].html" (a stem without its time, so each
 * run replaces the JVM's page) and written next to the profiles unless told otherwise; the
 * profile directory's scan ignores them. Library code: never prints.
 */
#ifndef FG_PROFVIEW_H
#define FG_PROFVIEW_H

#include <stddef.h>
#include <stdint.h>

/* Columns a page has at most (a year of one-minute intervals). */
#define PROFVIEW_MAX_COLUMNS (1u << 19)

/* What happened to one page: its path, the profiles it holds, 0 or the -errno of its write. */
struct profview_page {
	const char *path;
	size_t profiles;
	size_t columns;
	unsigned interval_s;
	uint64_t ignored_lines; /* lines of its profiles that are not folded stacks */
	int err;
};

/*
 * Write one page per JVM and event found in dir (its *.folded files whose names are rolling
 * profiles' stems) into outdir (dir when NULL). done (may be NULL) is called after each page,
 * with arg. *pages gets the number of pages attempted. 0 when every page was written, else the
 * first page's error, or -errno opening dir; -ENOENT when dir holds no rolling profile.
 */
int profview_write(const char *dir, const char *outdir,
		   void (*done)(void *arg, const struct profview_page *pg), void *arg,
		   size_t *pages);

/* What each page was last written from: the names of its profiles, hashed. Not thread-safe. */
struct profview_memo;

struct profview_memo *profview_memo_new(void);
void profview_memo_free(struct profview_memo *m); /* NULL is fine */

/*
 * Bring dir's own pages up to date (`watch --out`): write the page of each JVM and event whose
 * set of profiles is not the one m remembers from the page's last write (or whose page is
 * missing), and remove every page (view_KEY.html) whose JVM and event have no profile left.
 * done as profview_write's, for the pages written. *written gets the pages attempted, *removed
 * the pages removed. 0, the first page's error, -ENOMEM (m is then left as it was), or -errno
 * opening dir. A page not written is tried again on the next call.
 */
int profview_update(const char *dir, struct profview_memo *m,
		    void (*done)(void *arg, const struct profview_page *pg), void *arg,
		    size_t *written, size_t *removed);

#endif
