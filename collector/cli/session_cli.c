// SPDX-License-Identifier: MIT
/* session_cli.c - the options `record` and `top` share, validated in one place. */
#include "session_cli.h"

#include <stdint.h>
#include <string.h>

#include "cli_opt.h"
#include "sampler.h"
#include "util.h"

int session_cli_opt(const char *cmd, int c, const char *arg, struct session_opts *so)
{
	uint64_t v;

	switch (c) {
	case 'p':
		if (fg_parse_u64(arg, 1, INT32_MAX, &v) != 0) {
			fg_err(cmd, "--pid '%s' is not a process id", arg);
			return -1;
		}
		so->target = SESSION_TARGET_PID;
		so->pid = (uint32_t)v;
		return 1;
	case 'c':
		if (!*arg || strspn(arg, "0123456789abcdef") != strlen(arg) || strlen(arg) > 64) {
			fg_err(cmd, "--container '%s' is not a container id (hex digits)", arg);
			return -1;
		}
		so->target = SESSION_TARGET_CONTAINER;
		so->container = arg;
		return 1;
	case 'a':
		so->target = SESSION_TARGET_ALL;
		return 1;
	case 'F':
		if (cli_u64(cmd, "freq", arg, 1, 10000, "Hz", &v) < 0)
			return -1;
		so->freq_hz = (unsigned int)v;
		return 1;
	case SESSION_OPT_NO_KERNEL:
		so->no_kernel = true;
		return 1;
	case SESSION_OPT_NO_INLINE:
		so->no_inline = true;
		return 1;
	case SESSION_OPT_SOCKET:
		so->socket_path = arg;
		return 1;
	case SESSION_OPT_CTL:
		so->ctl_path = arg;
		return 1;
	case SESSION_OPT_STACK_COPY:
		if (fg_parse_u64(arg, 0, SAMPLER_MAX_STACK_COPY, &v) != 0 || v % 8 != 0) {
			fg_err(cmd,
			       "--stack-copy '%s' must be a multiple of 8 from 0 (off) to %u bytes",
			       arg, SAMPLER_MAX_STACK_COPY);
			return -1;
		}
		so->stack_copy = (unsigned int)v;
		return 1;
	case SESSION_OPT_LINES:
		so->lines = true;
		return 1;
	case SESSION_OPT_UNWIND:
		if (strcmp(arg, "fp") == 0) {
			so->unwind = SESSION_UNWIND_FP;
		} else if (strcmp(arg, "vm") == 0) {
			so->unwind = SESSION_UNWIND_VM;
		} else {
			fg_err(cmd, "--unwind '%s' must be fp (frame pointers) or vm", arg);
			return -1;
		}
		return 1;
	case SESSION_OPT_UNWIND_CHECK:
		so->unwind_check = true;
		return 1;
	default:
		return 0;
	}
}

int session_cli_bad_opt(const char *cmd, int c, char **argv)
{
	if (c == ':')
		fg_err(cmd, "option '%s' needs a value", argv[optind - 1]);
	else
		fg_err(cmd, "unknown option '%s'", argv[optind - 1]);
	return FG_EXIT_USAGE;
}

int session_cli_parse(const char *cmd, int argc, char **argv, const char *optstring,
		      const struct option *longopts, session_cli_local_fn local, void *ctx,
		      struct session_opts *so, void (*usage)(FILE *))
{
	int c, rv, targets = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return -1;
		}
		if ((rv = local(c, optarg, ctx)) == 0)
			rv = session_cli_opt(cmd, c, optarg, so);
		if (rv < 0)
			return FG_EXIT_USAGE;
		if (rv == 0) {
			rv = session_cli_bad_opt(cmd, c, argv);
			usage(stderr);
			return rv;
		}
		targets += c == 'p' || c == 'c' || c == 'a';
	}
	if (optind < argc) {
		fg_err(cmd, "unexpected argument '%s'", argv[optind]);
		return FG_EXIT_USAGE;
	}
	if (targets != 1) {
		fg_err(cmd, "give exactly one of --pid, --container or --all");
		usage(stderr);
		return FG_EXIT_USAGE;
	}
	return 0;
}
