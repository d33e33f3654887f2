/* SPDX-License-Identifier: MIT */
/*
 * folded.h - the folded text format (FlameGraph's collapsed stacks, `f1;f2;...;fn COUNT` per
 * line) read into stacks: each line split into its frames and count(s), handed to a sink.
 *
 * Parsing follows flamegraph.pl: COUNT is the last whitespace-separated `\d+(\.\d*)?` (counts
 * may be fractional), a second trailing count makes a differential line `stack A B`
 * (difffolded.pl's output), empty trailing frames are dropped. Lines flamegraph.pl would
 * ignore are counted and skipped. Nothing is allocated per line: the frames are slices of the
 * line, valid during the sink's call only.
 *
 * Typical use, into a flame graph (render's flame_fold.h; the CLI connects the two):
 *
 *	struct stack_sink s = flame_sink(f);
 *	struct folded *rd = folded_new(0, &s);
 *	folded_read_fd(rd, fd, FOLDED_IN_AUTO, &lineno);
 *	folded_free(rd);
 *
 * Not thread-safe: one reader per thread.
 */
#ifndef FG_FOLDED_H
#define FG_FOLDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "framespan.h"

/* Caps (framespan.h); exceeding one fails with -E2BIG. */
#define FOLDED_MAX_LINE STACK_MAX_LINE	 /* bytes in one line */
#define FOLDED_MAX_DEPTH STACK_MAX_DEPTH /* frames in one stack */

/* folded_new() flags. */
#define FOLDED_REVERSE 0x1u   /* reverse every stack (flamegraph.pl --reverse) */
#define FOLDED_STRIP_HEX 0x2u /* rewrite 0x[0-9a-fA-F]+ to 0x... in names (difffolded -s) */
#define FOLDED_FOLD 0x4u      /* folded_fold_stack() every stack first (diff --fold) */

/*
 * Which count(s) a line carries.
 *   FOLDED_IN_AUTO  `stack N` or the differential `stack A B` (flamegraph.pl's input)
 *   FOLDED_IN_A     `stack N` is the baseline (first file of a diff)
 *   FOLDED_IN_B     `stack N` is the profile drawn (second file of a diff, or a plain graph)
 */
enum folded_in { FOLDED_IN_AUTO, FOLDED_IN_A, FOLDED_IN_B };

struct folded;

/*
 * A reader with FOLDED_* flags handing stacks to *sink (framespan.h; copied), root first,
 * already reversed under FOLDED_REVERSE. NULL if out of memory.
 */
struct folded *folded_new(unsigned flags, const struct stack_sink *sink);
/* Free everything; NULL is fine. */
void folded_free(struct folded *rd);

/*
 * One line (no trailing newline needed; a trailing "\r\n" or "\n" is ignored), its count the
 * side in says. Returns 0, -EINVAL for a line flamegraph.pl would ignore (counted, see
 * folded_ignored()), -E2BIG, -ENOMEM or the sink's error.
 */
int folded_add_line(struct folded *rd, const char *line, size_t len, enum folded_in in);

/*
 * Read lines from fd until EOF (the fd is not closed). Invalid lines are counted and skipped.
 * Returns 0 or a negative errno. *lineno (if not NULL) is the number of lines of this fd read:
 * on -E2BIG/-ENOMEM/-EIO (or the sink's error), the 1-based line at fault.
 */
int folded_read_fd(struct folded *rd, int fd, enum folded_in in, uint64_t *lineno);

/*
 * What differs between two runs of one program, folded so that their stacks compare equal
 * (diff --fold): each run of digits in the first two frames (the process and thread roots:
 * "java-4711" becomes "java-*", "pool-1-thread-3" "pool-*-thread-*"), the Java frame-type
 * suffixes _[j], _[i] and _[0] at a frame's end (a method is itself whether compiled, inlined
 * or interpreted; kernel frames keep _[k]) and a lambda class's address ("$$Lambda$5/0x7f3a"
 * and "$$Lambda.0x7f3a" become "$$Lambda$5" and "$$Lambda"). s[0..n) is the stack without its
 * count; the result goes to out, which holds n bytes (never more is written) and must not
 * overlap s. Returns the result's length.
 */
size_t folded_fold_stack(const char *s, size_t n, char *out);

/* Lines read and lines ignored as invalid, over every call on rd. */
uint64_t folded_lines(const struct folded *rd);
uint64_t folded_ignored(const struct folded *rd);

#endif
