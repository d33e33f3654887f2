// SPDX-License-Identifier: MIT
/*
 * cmd_collapse.c - `fgcollect collapse`: `perf script` text (files or stdin) to folded stacks on
 * stdout, the output of FlameGraph's stackcollapse-perf.pl with the same options.
 *
 * Only wiring: options, big reads into the collapse module, one buffered write of the result.
 * Invariant: stdout carries the folded stacks only; every diagnostic goes to stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_opt.h"
#include "cmds.h"
#include "collapse.h"
#include "util.h"

#define CMD "collapse"
#define READ_SIZE ((size_t)256 << 10)
#define OUT_SIZE ((size_t)1 << 20)

#define CO struct collapse_opts

static int inline_opt(const char *cmd, const struct cli_opt *r, const char *arg, void *opts)
{
	(void)r;
	(void)arg;
	(void)opts;
	fg_err(cmd, "--inline (addr2line per frame) is not supported; use `perf script --inline` "
		    "instead");
	return -1;
}

/* clang-format off */
static const struct cli_opt collapse_rows[] = {
	{ .name = "pid", .kind = CLI_SET, CLI_AT(CO, pid),
	  .help = "root frame is comm-PID (needs perf script -F comm,pid,tid,...)" },
	{ .name = "tid", .kind = CLI_SET, CLI_AT(CO, tid),
	  .help = "root frame is comm-PID/TID" },
	{ .name = "kernel", .kind = CLI_SET, CLI_AT(CO, kernel),
	  .help = "annotate kernel frames with _[k]" },
	{ .name = "jit", .kind = CLI_SET, CLI_AT(CO, jit),
	  .help = "annotate frames from /tmp/perf-PID.map with _[j]" },
	{ .name = "all", .kind = CLI_SET, CLI_AT(CO, kernel), CLI_ALSO(CO, jit),
	  .help = "--kernel and --jit" },
	{ .name = "addrs", .kind = CLI_SET, CLI_AT(CO, addrs),
	  .help = "show raw addresses of unresolved frames: [module <addr>]" },
	{ .name = "srcline", .kind = CLI_SET, CLI_AT(CO, srcline),
	  .help = "input is `perf script -F+srcline`: append source lines" },
	{ .name = "event-filter", .kind = CLI_STR, CLI_AT(CO, event_filter), .arg = "EV",
	  .help = "keep samples of event EV (default: the first event seen)" },
	{ .name = "context", .kind = CLI_NOOP,
	  .help = "accepted for compatibility (only matters with --inline)" },
	{ .name = "inline", .kind = CLI_FN, .fn = inline_opt,
	  .help = "refused: addr2line per frame is not implemented; use `perf script --inline`" },
	{ 0 },
};
/* clang-format on */

static const struct cli_group collapse_groups[] = { { NULL, collapse_rows, 0 } };

static void opts_init(void *opts)
{
	*(CO *)opts = (CO){ 0 };
}

const struct cli_cmd cmd_collapse_cli = {
	.name = CMD,
	.usage =
		"Usage: fgcollect collapse [OPTION...] [FILE...]\n"
		"\n"
		"Turn `perf script` output (FILEs, or stdin; '-' is stdin) into folded stacks, one\n"
		"\"frame;frame;... count\" line per distinct stack, exactly as FlameGraph's\n"
		"stackcollapse-perf.pl prints them with the same options (also with one dash:\n"
		"-all).\n",
	.examples = "  perf script | fgcollect collapse --all > out.folded\n"
		    "  fgcollect collapse --tid perf.txt | fgcollect flamegraph > out.svg\n",
	CLI_CMD_OPTS(collapse_groups, CO, opts_init),
	.long_only = true,
};

/* Output: one big buffer flushed with write(2); stdio's per-call cost shows at 100k lines. */
struct out {
	char *buf;
	size_t len;
	int fd;
	int err;
};

static void out_flush(struct out *o)
{
	size_t off = 0;

	while (off < o->len && !o->err) {
		ssize_t n = write(o->fd, o->buf + off, o->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			o->err = n < 0 ? errno : EIO;
		else
			off += (size_t)n;
	}
	o->len = 0;
}

static void out_put(struct out *o, const char *s, size_t n)
{
	while (n) {
		size_t room = OUT_SIZE - o->len, k = n < room ? n : room;

		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
		if (o->len == OUT_SIZE)
			out_flush(o);
	}
}

static int emit(void *arg, const char *stack, size_t len, uint64_t count)
{
	struct out *o = arg;
	char num[24];
	int i = (int)sizeof(num);

	num[--i] = '\n';
	do {
		num[--i] = (char)('0' + count % 10);
		count /= 10;
	} while (count);
	num[--i] = ' ';
	out_put(o, stack, len);
	out_put(o, num + i, sizeof(num) - (size_t)i);
	return o->err ? -o->err : 0;
}

/* Read one file (fd) to its end into c. Returns 0, a negative errno of read, or of collapse. */
static int feed_fd(struct collapse *c, int fd, char *buf, int *read_err)
{
	int rv;

	*read_err = 0;
	for (;;) {
		ssize_t n = read(fd, buf, READ_SIZE);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			*read_err = errno;
			return -errno;
		}
		if (n == 0)
			break;
		if ((rv = collapse_feed(c, buf, (size_t)n)) != 0)
			return rv;
	}
	return collapse_end_input(c);
}

static void report_collapse_error(int rv, const char *what)
{
	if (rv == -E2BIG)
		fg_err(CMD, "%s: the distinct stacks exceed the memory cap; split the input", what);
	else
		fg_err(CMD, "%s: %s", what, strerror(-rv));
}

/* Feed every input (the files, or stdin when none or "-"). 0, or -1 with the error printed. */
static int read_inputs(struct collapse *c, char **files, int n, char *buf)
{
	for (int i = 0; i < n || i == 0; i++) {
		const char *name = i < n ? files[i] : "-";
		bool is_stdin = !strcmp(name, "-");
		int fd = is_stdin ? STDIN_FILENO : open(name, O_RDONLY | O_CLOEXEC);
		int read_err, rv;

		if (fd < 0) {
			fg_err(CMD, "cannot open %s: %s", name, strerror(errno));
			return -1;
		}
		rv = feed_fd(c, fd, buf, &read_err);
		if (!is_stdin)
			close(fd);
		if (rv) {
			if (read_err)
				fg_err(CMD, "reading %s: %s", is_stdin ? "stdin" : name,
				       strerror(read_err));
			else
				report_collapse_error(rv, is_stdin ? "stdin" : name);
			return -1;
		}
		if (i >= n)
			break;
	}
	return 0;
}

/* What was skipped or capped, once each, on stderr. */
static void report_stats(const struct collapse *c)
{
	struct collapse_stats st;

	collapse_stats(c, &st);
	if (st.unrecognized)
		fg_err(CMD, "%" PRIu64 " unrecognized line(s) ignored", st.unrecognized);
	if (st.other_event)
		fg_err(CMD,
		       "kept events of type '%s' only; %" PRIu64
		       " sample(s) of other types (first '%s') skipped; see --event-filter",
		       st.event, st.filtered, st.other_event);
	if (st.long_lines)
		fg_err(CMD, "%" PRIu64 " line(s) longer than 1 MiB skipped", st.long_lines);
	if (st.dropped_samples)
		fg_err(CMD, "%" PRIu64 " sample(s) with stacks over 16 MiB dropped",
		       st.dropped_samples);
	if (st.count_overflow)
		fg_err(CMD, "a count exceeded 2^64-1 and was capped");
}

int cmd_collapse(int argc, char **argv)
{
	struct collapse_opts opts = { 0 };
	struct collapse *c;
	struct out out = { .fd = STDOUT_FILENO };
	char *buf = NULL;
	struct cli_seen seen;
	int rv, status = FG_EXIT_FAIL;

	rv = cli_parse(&cmd_collapse_cli, argc, argv, &opts, &seen);
	if (rv)
		return rv < 0 ? FG_EXIT_OK : rv;
	c = collapse_new(&opts);
	buf = malloc(READ_SIZE);
	out.buf = malloc(OUT_SIZE);
	if (!c || !buf || !out.buf) {
		fg_err(CMD, "out of memory");
		goto done;
	}
	if (read_inputs(c, argv + optind, argc - optind, buf) != 0)
		goto done;
	rv = collapse_foreach(c, emit, &out);
	if (!rv)
		out_flush(&out);
	if (rv || out.err) {
		if (out.err)
			fg_err(CMD, "writing stdout: %s", strerror(out.err));
		else
			report_collapse_error(rv, "output");
		goto done;
	}
	report_stats(c);
	status = FG_EXIT_OK;
done:
	collapse_free(c);
	free(buf);
	free(out.buf);
	return status;
}
