/* SPDX-License-Identifier: MIT */
/*
 * flame_diff.h - differential flame graphs with difffolded.pl semantics.
 *
 * A diff is one struct flame holding both profiles: the baseline A read with FOLDED_IN_A, the
 * profile B read with FOLDED_IN_B (input's folded.h; FOLDED_STRIP_HEX for difffolded -s),
 * their stacks merged with flame_add_spans(). The graph has the shape
 * of B; each frame's colour is the change of its own (self) samples, B - A: red where B grew,
 * blue where it shrank (flame_opts.negate swaps them). flame_write_folded() then prints
 * difffolded.pl's `stack A B` lines.
 */
#ifndef FG_FLAME_DIFF_H
#define FG_FLAME_DIFF_H

#include "flame_fold.h"

/*
 * difffolded.pl -n: scale every baseline count by total(B) / total(A), truncated to an
 * integer, so both sides have (about) the same total. 0, or -EINVAL if A has no samples while
 * B has some (Perl dies dividing by zero there).
 */
int flame_diff_normalize(struct flame *f);

#endif
