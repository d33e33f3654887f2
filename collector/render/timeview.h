/* SPDX-License-Identifier: MIT */
/*
 * timeview.h - the outputs that keep when each stack ran, from an aggregate made with
 * stackagg_opts.timeline: the time view page (one self-contained HTML file: a heatmap of
 * seconds by sub-second slices, the flame graph of any selected range, a thread filter and
 * the difference of two ranges) and speedscope's file format (one sampled profile per thread,
 * samples in time order). Private to the render stage (profout.c dispatches to it).
 */
#ifndef FG_TIMEVIEW_H
#define FG_TIMEVIEW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stackagg.h"

/* What the outputs say besides the stacks. Strings borrowed for the call. */
struct timeview_opts {
	const char *title, *subtitle;
	const char *unit; /* what a weight is: "samples", "us", "bytes" */
	/* Root frames above a stack's own: process and/or thread (0..2), and which of them is the
	 * thread's (-1: none, --no-per-thread). */
	size_t roots;
	int thread_root;
	/* speedscope: what one CPU sample weighs, in microseconds (0: weights as counted). */
	double sample_us;
	/*
	 * The page's heatmap: rows cells a column, each cell_ns long, cell 0 starting at origin
	 * (the countings' clock); 0 each: 50 rows of 20 ms, from the first counting. ncols: at
	 * least so many columns. col_unix (NULL: columns of seconds): each of the ncols columns'
	 * start (UTC seconds), each col_s long, when a column is an interval (rolling profiles).
	 */
	unsigned rows;
	uint64_t cell_ns, origin;
	size_t ncols;
	const int64_t *col_unix;
	unsigned col_s;
	/* The page's time blocks, the countings it decodes together: columns each (0: as many as
	 * hold about 48 Ki countings). */
	size_t block_cols;
};

/* The page, written to f. 0, -ENOMEM, -E2BIG (over 8 Mi heatmap cells) or -EIO. */
int timeview_write_html(const struct stackagg *a, const struct timeview_opts *o, FILE *f);

/* speedscope's JSON, written to f. 0, -ENOMEM or -EIO. */
int timeview_write_speedscope(const struct stackagg *a, const struct timeview_opts *o, FILE *f);

/* s as a JSON string literal, '<', '>', '&' and control bytes as \u escapes. */
void timeview_json_str(FILE *f, const char *s);

#endif
