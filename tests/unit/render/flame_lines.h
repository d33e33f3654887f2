/* SPDX-License-Identifier: MIT */
/*
 * flame_lines.h - folded lines into a flame graph for render's tests: input's reader handing
 * its stacks to flame_sink(), as `fgcollect flamegraph` connects them.
 */
#ifndef FG_TEST_FLAME_LINES_H
#define FG_TEST_FLAME_LINES_H

#include <errno.h>
#include <string.h>

#include "flame_fold.h"
#include "folded.h"

/* One line `f1;...;fn COUNT` (or `... A B`) into f: folded_add_line()'s result. */
static inline int add_folded(struct flame *f, const char *line)
{
	const struct stack_sink s = flame_sink(f);
	struct folded *rd = folded_new(0, &s);
	int rv = rd ? folded_add_line(rd, line, strlen(line), FOLDED_IN_AUTO) : -ENOMEM;

	folded_free(rd);
	return rv;
}

#endif
