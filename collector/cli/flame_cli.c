// SPDX-License-Identifier: MIT
/*
 * flame_cli.c - parse flamegraph.pl-style rendering options into struct flame_opts; read
 * folded files into a flame graph, input's reader (folded.h) handing its stacks to render's
 * trie (flame_fold.h).
 *
 * Invariant: a rejected value leaves o and *flags unchanged.
 */
#include "flame_cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static int parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (!*s)
		return -EINVAL;
	v = strtod(s, &end);
	if (*end || !(v >= min && v <= max))
		return -EINVAL;
	*out = v;
	return 0;
}

/* flamegraph.pl's --minwidth: /^([0-9.]+)%?$/, pixels or a percentage of all samples. */
static int parse_minwidth(const char *arg, struct flame_opts *o)
{
	size_t n = strlen(arg);
	char buf[64];
	double d;

	if (!n || n >= sizeof(buf) || strspn(arg, "0123456789.") < n - (arg[n - 1] == '%'))
		return -EINVAL;
	memcpy(buf, arg, n + 1);
	if (buf[n - 1] == '%')
		buf[n - 1] = '\0';
	if (parse_double(buf, 0, 1e300, &d) != 0)
		return -EINVAL;
	o->minwidth = d;
	o->minwidth_pct = arg[n - 1] == '%';
	return 0;
}

/* The numeric options: sizes in pixels and font metrics. 0 or -EINVAL (o unchanged). */
static int apply_size(int id, const char *arg, struct flame_opts *o)
{
	uint64_t u;
	double d;

	switch (id) {
	case FLAME_CLI_WIDTH:
		if (fg_parse_u64(arg, 21, 1000000, &u) != 0)
			return -EINVAL;
		o->width = (unsigned)u;
		return 0;
	case FLAME_CLI_HEIGHT:
		if (fg_parse_u64(arg, 1, 10000, &u) != 0)
			return -EINVAL;
		o->frameheight = (unsigned)u;
		return 0;
	case FLAME_CLI_MINWIDTH:
		return parse_minwidth(arg, o);
	case FLAME_CLI_FONTSIZE:
		if (parse_double(arg, 0.1, 1000, &d) != 0)
			return -EINVAL;
		o->fontsize = d;
		return 0;
	case FLAME_CLI_FONTWIDTH:
		if (parse_double(arg, 0.01, 100, &d) != 0)
			return -EINVAL;
		o->fontwidth = d;
		return 0;
	default:
		return -EINVAL;
	}
}

int flame_cli_apply(int id, const char *arg, struct flame_opts *o, unsigned *flags)
{
	char c1[8], c2[8];

	switch (id) {
	case FLAME_CLI_WIDTH:
	case FLAME_CLI_HEIGHT:
	case FLAME_CLI_MINWIDTH:
	case FLAME_CLI_FONTSIZE:
	case FLAME_CLI_FONTWIDTH:
		return apply_size(id, arg, o);
	case FLAME_CLI_TITLE:
		o->title = arg;
		return 0;
	case FLAME_CLI_SUBTITLE:
		o->subtitle = arg;
		return 0;
	case FLAME_CLI_FONTTYPE:
		o->fonttype = arg;
		return 0;
	case FLAME_CLI_COUNTNAME:
		o->countname = arg;
		return 0;
	case FLAME_CLI_NAMETYPE:
		o->nametype = arg;
		return 0;
	case FLAME_CLI_NOTES:
		o->notes = arg;
		return 0;
	case FLAME_CLI_COLORS:
		return flame_palette_parse(arg, &o->palette);
	case FLAME_CLI_BGCOLORS:
		if (flame_palette_bg(o->palette, arg, c1, c2) != 0)
			return -EINVAL;
		o->bgcolors = arg;
		return 0;
	case FLAME_CLI_HASH:
		o->hash = true;
		return 0;
	case FLAME_CLI_REVERSE:
		*flags |= FLAME_REVERSE;
		return 0;
	case FLAME_CLI_INVERTED:
		o->inverted = true;
		return 0;
	case FLAME_CLI_FLAMECHART:
		*flags |= FLAME_CHART;
		return 0;
	case FLAME_CLI_NEGATE:
		o->negate = true;
		return 0;
	case FLAME_CLI_PL_COMPAT:
		o->pl_compat = true;
		return 0;
	default:
		return -EINVAL;
	}
}

struct folded *flame_cli_reader(struct flame *f, unsigned flags, unsigned in_flags)
{
	const struct stack_sink sink = flame_sink(f);

	return folded_new((flags & FLAME_REVERSE ? FOLDED_REVERSE : 0) |
				  (in_flags & (FOLDED_STRIP_HEX | FOLDED_FOLD)),
			  &sink);
}

int flame_cli_read(const char *cmd, struct folded *rd, const char *path, enum folded_in in)
{
	bool std = !strcmp(path, "-");
	int fd = std ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	uint64_t line = 0;
	int rv;

	if (fd < 0) {
		fg_err(cmd, "cannot open %s: %s", path, strerror(errno));
		return FG_EXIT_FAIL;
	}
	rv = folded_read_fd(rd, fd, in, &line);
	if (!std)
		close(fd);
	if (rv == -E2BIG)
		fg_err(cmd, "%s:%llu: line, stack depth or number of frames over the limit", path,
		       (unsigned long long)line);
	else if (rv)
		fg_err(cmd, "%s:%llu: %s", std ? "stdin" : path, (unsigned long long)line,
		       strerror(-rv));
	return rv ? FG_EXIT_FAIL : 0;
}
