/* SPDX-License-Identifier: MIT */
/*
 * collapse.h - `perf script` text to folded stacks, byte for byte what FlameGraph's
 * stackcollapse-perf.pl prints for the same input and options.
 *
 * Streaming: feed the text in chunks of any size (or line by line), then walk the folded
 * stacks in the order stackcollapse-perf.pl prints them (byte-wise sorted). Memory grows with
 * the number of distinct stacks, never with the input size.
 *
 * The one invariant: the parser reproduces the Perl script's regular expressions exactly,
 * including their backtracking corner cases and the script's state machine (a sample is only
 * counted at the blank line that ends it; a filtered event header leaves the previous sample's
 * state in place), so "byte-identical" holds for odd input too, not only for typical lines.
 */
#ifndef FG_COLLAPSE_H
#define FG_COLLAPSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct collapse;

/* Options, named after stackcollapse-perf.pl's. Zero-initialised = the script's defaults. */
struct collapse_opts {
	bool pid;     /* --pid: root frame "comm-PID" */
	bool tid;     /* --tid: root frame "comm-PID/TID" (wins over pid) */
	bool kernel;  /* --kernel: "_[k]" on frames of [..] and *vmlinux modules */
	bool jit;     /* --jit: "_[j]" on frames of /tmp/perf-N.map */
	bool addrs;   /* --addrs: "[module <pc>]" for unresolved symbols */
	bool srcline; /* --srcline: each known frame line is followed by a source line */
	const char *event_filter; /* --event-filter; NULL or "" = the first event type seen */
	size_t max_line;	  /* longer lines are skipped and counted; 0 = 1 MiB */
	size_t max_stack;  /* bytes of one folded stack; larger samples dropped; 0 = 16 MiB */
	size_t max_memory; /* bytes of distinct stacks kept; 0 = 4 GiB */
};

/* What the input contained besides samples; the script warns about some of these on stderr. */
struct collapse_stats {
	uint64_t lines;		  /* lines seen (srcline lines included) */
	uint64_t samples;	  /* samples counted into a folded stack */
	uint64_t stacks;	  /* distinct folded stacks */
	uint64_t unrecognized;	  /* lines matching no pattern (the script's "Unrecognized line") */
	uint64_t filtered;	  /* event headers skipped by the event filter */
	uint64_t long_lines;	  /* lines over max_line, skipped (the script would parse them) */
	uint64_t dropped_samples; /* samples over max_stack, not counted */
	bool count_overflow;	  /* a count passed 2^64-1 and was saturated */
	const char *event;	  /* the event type kept (borrowed; NULL before the first header) */
	const char *other_event;  /* the first other event type skipped, or NULL */
};

/*
 * Allocate a collapser. opts is copied (event_filter too); NULL means defaults.
 * Returns NULL when out of memory.
 */
struct collapse *collapse_new(const struct collapse_opts *opts);

/* Free everything, including the strings handed out by collapse_stats(). NULL is fine. */
void collapse_free(struct collapse *c);

/*
 * Feed a chunk of `perf script` text: any size, lines may straddle chunks. A line is complete
 * at its '\n'; the tail is kept until the next chunk or collapse_end_input().
 * Returns 0, -ENOMEM, or -E2BIG when the distinct stacks exceed max_memory (the collapser is
 * then unusable except for collapse_free()).
 */
int collapse_feed(struct collapse *c, const char *buf, size_t len);

/*
 * End of one input file: a last line without '\n' is processed as a line, as Perl's <> does.
 * The state of an unfinished sample carries over to the next file, as in the script.
 * Returns as collapse_feed().
 */
int collapse_end_input(struct collapse *c);

/* Process one line, without its '\n'. Returns as collapse_feed(). */
int collapse_line(struct collapse *c, const char *line, size_t len);

/*
 * Call fn for every folded stack in byte-wise sorted order, the script's output order; the
 * script prints "<stack> <count>\n" for each. stack is borrowed until collapse_free() and is not
 * NUL-terminated. Stops at and returns the first non-zero return of fn; 0 when all were
 * visited; -ENOMEM if the sorted index cannot be allocated.
 */
int collapse_foreach(struct collapse *c,
		     int (*fn)(void *arg, const char *stack, size_t len, uint64_t count),
		     void *arg);

/* Copy out the counters; borrowed strings live until collapse_free(). */
void collapse_stats(const struct collapse *c, struct collapse_stats *out);

#endif
