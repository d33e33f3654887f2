/* SPDX-License-Identifier: MIT */
/*
 * flamegraph_js.h - flamegraph.js, embedded at build time (cmake/embed.cmake generates
 * flamegraph_js.c in the build tree). Private to the render stage.
 */
#ifndef FG_FLAMEGRAPH_JS_H
#define FG_FLAMEGRAPH_JS_H

#include <stddef.h>

/* The script's bytes (NUL-terminated) and their number without the NUL. Static storage. */
extern const char flamegraph_js[];
extern const size_t flamegraph_js_len;

#endif
