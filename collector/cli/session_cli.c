// SPDX-License-Identifier: MIT
/* session_cli.c - the options `record` and `top` share (and `watch`'s --event), validated in
 * one place. */
#include "session_cli.h"

#include <stdint.h>
#include <string.h>

#include "cli_opt.h"
#include "sampler.h"
#include "switchbpf.h"
#include "util.h"

static const char *const event_names[SESSION_NEVENTS] = { "cpu",   "offcpu", "wall",
							  "alloc", "live",   "lock" };

#define EVENT_LIST "cpu, offcpu, wall, alloc, live or lock"

const char *session_cli_event_name(enum session_event ev)
{
	return (unsigned)ev < SESSION_NEVENTS ? event_names[ev] : "?";
}

static int event_of(const char *arg, enum session_event *out)
{
	for (unsigned i = 0; i < SESSION_NEVENTS; i++) {
		if (!strcmp(arg, event_names[i])) {
			*out = (enum session_event)i;
			return 0;
		}
	}
	return -1;
}

int session_cli_event(const char *cmd, const char *arg, enum session_event *out)
{
	if (event_of(arg, out) == 0)
		return 0;
	fg_err(cmd, "--event '%s': use " EVENT_LIST, arg);
	return -1;
}

int session_cli_event_list(const char *cmd, const char *arg, unsigned *mask)
{
	unsigned m = 0;
	const char *p = arg;

	for (;;) {
		size_t n = strcspn(p, ",");
		char one[16];
		enum session_event ev;

		if (n == 0 || n >= sizeof(one)) {
			fg_err(cmd, "--event '%s': a comma-separated list of " EVENT_LIST, arg);
			return -1;
		}
		memcpy(one, p, n);
		one[n] = '\0';
		if (event_of(one, &ev) != 0) {
			fg_err(cmd, "--event '%s': '%s' is not " EVENT_LIST, arg, one);
			return -1;
		}
		if (m & (1u << ev)) {
			fg_err(cmd, "--event '%s': %s given twice", arg, one);
			return -1;
		}
		m |= 1u << ev;
		if (!p[n])
			break;
		p += n + 1;
	}
	*mask = m;
	return 0;
}

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
	case 'e':
		return session_cli_event(cmd, arg, &so->event) == 0 ? 1 : -1;
	case SESSION_OPT_MIN_BLOCK:
		if (cli_u64(cmd, "min-block", arg, 0, 3600ull * 1000000, "microseconds", &v) < 0)
			return -1;
		so->min_block_ns = v * 1000;
		return 1;
	case SESSION_OPT_SWITCH_PERIOD:
		if (cli_u64(cmd, "switch-period", arg, 1, 1000000, NULL, &v) < 0)
			return -1;
		if (so->switch_rate != SESSION_SWITCH_RATE_AUTO) {
			fg_err(cmd, "give --switch-rate or --switch-period, not both");
			return -1;
		}
		so->switch_period = (unsigned int)v;
		return 1;
	case SESSION_OPT_SWITCH_RATE:
		if (cli_u64(cmd, "switch-rate", arg, 0, SWITCHBPF_MAX_RATE, "stacks a second", &v) <
		    0)
			return -1;
		if (so->switch_period != 0) {
			fg_err(cmd, "give --switch-rate or --switch-period, not both");
			return -1;
		}
		so->switch_rate = (unsigned int)v;
		return 1;
	case SESSION_OPT_THREADS:
		so->threads_regex = arg;
		return 1;
	case SESSION_OPT_PER_THREAD:
		so->merge_threads = false;
		return 1;
	case SESSION_OPT_NO_PER_THREAD:
		so->merge_threads = true;
		return 1;
	case SESSION_OPT_ALLOC_INTERVAL:
		if (cli_u64(cmd, "alloc-interval", arg, 1, 1ull << 30, "bytes", &v) < 0)
			return -1;
		so->alloc_interval = v;
		return 1;
	case SESSION_OPT_ALLOC_DEPTH:
		if (cli_u64(cmd, "alloc-depth", arg, 1, FGP_MAX_EVENT_DEPTH, "frames", &v) < 0)
			return -1;
		so->alloc_depth = (unsigned int)v;
		return 1;
	case SESSION_OPT_LOCK_THRESHOLD:
		if (cli_u64(cmd, "lock-threshold", arg, 0, 3600ull * 1000000, "microseconds", &v) <
		    0)
			return -1;
		so->lock_threshold_us = v;
		return 1;
	case SESSION_OPT_SCOPE:
		if (strcmp(arg, "cpus") == 0) {
			so->scope = SESSION_SCOPE_CPUS;
		} else if (strcmp(arg, "threads") == 0) {
			so->scope = SESSION_SCOPE_THREADS;
		} else {
			fg_err(cmd, "--scope '%s' must be cpus (one event per CPU) or threads",
			       arg);
			return -1;
		}
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
	if (so->switch_rate == SESSION_SWITCH_RATE_AUTO)
		so->switch_rate = so->switch_period ? 0 : SESSION_DEFAULT_SWITCH_RATE;
	if (so->switch_period == 0)
		so->switch_period = SESSION_DEFAULT_SWITCH_PERIOD;
	if (so->stack_copy == SESSION_STACK_COPY_AUTO)
		so->stack_copy = so->event == SESSION_EVENT_CPU ? SESSION_DEFAULT_STACK_COPY
								: SESSION_DEFAULT_SWITCH_STACK_COPY;
	return 0;
}
