/* SPDX-License-Identifier: MIT */
/*
 * timeview_js.h - timeview.js, embedded at build time (cmake/embed.cmake generates
 * timeview_js.c in the build tree). Private to the render stage.
 */
#ifndef FG_TIMEVIEW_JS_H
#define FG_TIMEVIEW_JS_H

#include <stddef.h>

/* The file's bytes (NUL-terminated) and their number without the NUL. Static storage. */
extern const char timeview_js[];
extern const size_t timeview_js_len;

#endif
