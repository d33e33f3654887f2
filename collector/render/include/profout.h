/* SPDX-License-Identifier: MIT */
/*
 * profout.h - a recording's counted stacks (stackagg.h) written as one profile: FlameGraph's
 * folded text, an interactive SVG (flame_svg.h, Java palette), gzipped pprof (pprof.h), the
 * time view page (HTML) or speedscope's JSON; the format picked by a file name's extension, the
 * file replaced atomically. The last two need the aggregate's timeline (stackagg_opts.timeline:
 * profout_timed says which formats do).
 */
#ifndef FG_PROFOUT_H
#define FG_PROFOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evkind.h"
#include "stackagg.h"

enum profout_fmt { PROFOUT_FOLDED, PROFOUT_SVG, PROFOUT_PPROF, PROFOUT_HTML, PROFOUT_SPEEDSCOPE };

/*
 * The time view of rolling profiles (PROFOUT_HTML): a heatmap column per interval instead of a
 * column per second. Column k starts at start_unix[k] (UTC seconds) and lasts interval_s; its
 * stacks are the ones counted with a timeline time (stackagg_named.ts) of
 * PROFOUT_COLUMN_TS(k). Borrowed for the call.
 */
struct profout_columns {
	const int64_t *start_unix;
	size_t n;
	unsigned interval_s;
};
#define PROFOUT_COLUMN_TS(k) ((uint64_t)((k) + 1) * 1000000000ull)

/* What a profile says besides its stacks. Strings are borrowed for the call. */
struct profout {
	enum profout_fmt fmt;
	bool multi;	      /* roots are process then thread (pprof: the thread label) */
	bool merged;	      /* no thread root frame (--no-per-thread): no thread label */
	unsigned int freq;    /* CPU samples per second (pprof's period; 0 = 99) */
	uint64_t duration_ns; /* the recording's length (pprof) */
	const char *title;    /* SVG title, pprof comment */
	const char *subtitle; /* SVG subtitle */
	/*
	 * NULL: counts are CPU samples. Else a time profile whose counts are microseconds: SVG
	 * counts say "us" and pprof's sample type is this ("off_cpu", "wall").
	 */
	const char *time_type;
	/* NULL, or an event profile's units (time_type is then ignored). */
	const struct evkind_types *types; /* an agent event's (evkind.h), or NULL */
	/* NULL: the time view's columns are seconds; else intervals (rolling profiles). */
	const struct profout_columns *columns;
	/* The time view's columns per block of countings the page decodes together (0: chosen
	 * from the countings; timeview.h). */
	size_t block_cols;
};

/*
 * The format path's extension picks (.folded, .svg, .pb.gz, .html, .speedscope.json): 0, or
 * -EINVAL for another.
 */
int profout_format(const char *path, enum profout_fmt *fmt);

/* Does fmt show when each stack ran (the aggregate must keep its timeline)? */
bool profout_timed(enum profout_fmt fmt);

/* Write a's stacks to fd (not closed) as p says. 0 or a negative errno. */
int profout_write(struct stackagg *a, const struct profout *p, int fd);

/*
 * Write to a new temporary file next to path (O_EXCL, no symlink followed), fsync it and rename
 * it over path; on error nothing is left but an older path. 0 or a negative errno.
 */
int profout_write_file(const char *path, struct stackagg *a, const struct profout *p);

#endif
