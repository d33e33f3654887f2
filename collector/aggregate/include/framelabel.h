/* SPDX-License-Identifier: MIT */
/*
 * framelabel.h - a frame as every output prints it (folded text, SVG, pprof, the `top` table,
 * rolling profiles): its name and its FlameGraph suffix ("_[j]", "_[i]", "_[0]", "_[k]"), with
 * ';' (the folded separator) as ':' and control bytes as '?', the way stackagg interns names
 * and stackagg_write_folded writes them. The one place labels are built, so `record` and `watch
 * --profile-every` print the same frame the same way; an aggregate's labels, each built once,
 * come from stackagg_labels_get() (stackagg.h). Pure: no state, no dependency on stackagg.
 *
 * Invariant: a label never holds ';' or a control byte, whatever name it was given.
 */
#ifndef FG_FRAMELABEL_H
#define FG_FRAMELABEL_H

#include <stddef.h>

/*
 * name + suffix into out (cap >= 1), sanitised as above and cut to cap - 1 bytes; the length
 * it has (or would have had uncut), as snprintf.
 */
size_t framelabel_format(const char *name, const char *suffix, char *out, size_t cap);

#endif
