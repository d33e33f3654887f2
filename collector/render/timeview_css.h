/* SPDX-License-Identifier: MIT */
/*
 * timeview_css.h - timeview.css, embedded at build time (cmake/embed.cmake generates
 * timeview_css.c in the build tree). Private to the render stage.
 */
#ifndef FG_TIMEVIEW_CSS_H
#define FG_TIMEVIEW_CSS_H

#include <stddef.h>

/* The file's bytes (NUL-terminated) and their number without the NUL. Static storage. */
extern const char timeview_css[];
extern const size_t timeview_css_len;

#endif
