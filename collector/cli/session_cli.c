// SPDX-License-Identifier: MIT
/* session_cli.c - the options `record` and `top` share (and `watch`'s --event list), as rows
 * validated in one place; the stop on SIGINT and SIGTERM of both. */
#include "session_cli.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sampler.h"
#include "switchbpf.h"
#include "util.h"

#define SO struct session_opts

const struct cli_name session_cli_event_names[] = {
#define EVENT_NAME(id, word) { word, FG_EVENT_##id },
	FG_EVENTS(EVENT_NAME)
#undef EVENT_NAME
		{ NULL, 0 },
};

static const struct cli_name unwind_names[] = {
	{ "fp", SESSION_UNWIND_FP },
	{ "vm", SESSION_UNWIND_VM },
	{ NULL, 0 },
};

static const struct cli_name scope_names[] = {
	{ "cpus", SESSION_SCOPE_CPUS },
	{ "threads", SESSION_SCOPE_THREADS },
	{ NULL, 0 },
};

#define EVENT_LIST "cpu, offcpu, wall, alloc, live or lock"

const char *session_cli_event_name(enum fg_event ev)
{
	return evkind_name(ev);
}

int session_cli_event_list(const char *cmd, const char *arg, unsigned *mask)
{
	unsigned m = 0;
	const char *p = arg;

	for (;;) {
		size_t n = strcspn(p, ",");
		char one[16];
		enum fg_event ev;

		if (n == 0 || n >= sizeof(one)) {
			fg_err(cmd, "--event '%s': a comma-separated list of " EVENT_LIST, arg);
			return -1;
		}
		memcpy(one, p, n);
		one[n] = '\0';
		if (evkind_find(one, &ev) != 0) {
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

static int pid_opt(const char *cmd, const struct cli_opt *r, const char *arg, void *opts)
{
	SO *so = opts;
	uint64_t v;

	if (fg_parse_u64(arg, 1, INT32_MAX, &v) != 0) {
		fg_err(cmd, "--%s '%s' is not a process id", r->name, arg);
		return -1;
	}
	so->target = SESSION_TARGET_PID;
	so->pid = (uint32_t)v;
	return 1;
}

static int container_opt(const char *cmd, const struct cli_opt *r, const char *arg, void *opts)
{
	SO *so = opts;

	if (!*arg || strspn(arg, "0123456789abcdef") != strlen(arg) || strlen(arg) > 64) {
		fg_err(cmd, "--%s '%s' is not a container id (hex digits)", r->name, arg);
		return -1;
	}
	so->target = SESSION_TARGET_CONTAINER;
	so->container = arg;
	return 1;
}

int session_cli_budget_opt(const char *cmd, const struct cli_opt *r, const char *arg, void *opts)
{
	uint32_t ppm;
	char *end = NULL;
	double pct;

	errno = 0;
	pct = arg && (isdigit((unsigned char)arg[0]) || arg[0] == '.') ? strtod(arg, &end) : -1;
	if (errno || !end || *end || !(pct >= 0 && pct <= 100)) {
		fg_err(cmd,
		       "--%s '%s' must be a percentage of the JVM's CPU from 0 (no budget) to 100",
		       r->name, arg ? arg : "");
		return -1;
	}
	ppm = (uint32_t)(pct * 10000 + 0.5);
	if (pct > 0 && ppm == 0)
		ppm = 1;
	if (pct == 0)
		ppm = SESSION_ALLOC_BUDGET_OFF;
	memcpy((char *)opts + r->off, &ppm, sizeof(ppm));
	return 1;
}

static int stack_copy_opt(const char *cmd, const struct cli_opt *r, const char *arg, void *opts)
{
	SO *so = opts;
	uint64_t v;

	if (fg_parse_u64(arg, 0, SAMPLER_MAX_STACK_COPY, &v) != 0 || v % 8 != 0) {
		fg_err(cmd, "--%s '%s' must be a multiple of 8 from 0 (off) to %u bytes", r->name,
		       arg, SAMPLER_MAX_STACK_COPY);
		return -1;
	}
	so->stack_copy = (unsigned int)v;
	return 1;
}

/* clang-format off */
const struct cli_opt session_cli_targets[] = {
	{ .name = "pid", .key = 'p', .kind = CLI_FN, .fn = pid_opt, CLI_AT(SO, pid),
	  CLI_ALSO(SO, target), .arg = "HOSTPID",
	  .help = "the process to sample (its PID on this host)" },
	{ .name = "container", .key = 'c', .kind = CLI_FN, .fn = container_opt,
	  CLI_AT(SO, container), CLI_ALSO(SO, target), .arg = "ID",
	  .help = "every process of the container whose id (in /proc/<pid>/cgroup) starts with "
		  "ID" },
	{ .name = "all", .key = 'a', .kind = CLI_CONST, .lo = SESSION_TARGET_ALL,
	  CLI_AT(SO, target),
	  .help = "every JVM whose agent is connected" },
	{ .name = "freq", .key = 'F', .kind = CLI_U64, .lo = 1, .hi = 10000, .unit = "Hz",
	  CLI_AT(SO, freq_hz), .arg = "HZ",
	  .help = "samples per second per thread (default 99, at most 10000)" },
	{ 0 },
};
/* clang-format on */

/* clang-format off */
const struct cli_opt session_cli_sampling[] = {
	{ .name = "no-kernel", .kind = CLI_SET, CLI_AT(SO, no_kernel),
	  .help = "leave kernel frames out" },
	{ .name = "no-inline", .kind = CLI_SET, CLI_AT(SO, no_inline),
	  .help = "keep inlined Java methods folded into their caller" },
	{ .name = "stack-copy", .kind = CLI_FN, .fn = stack_copy_opt, CLI_AT(SO, stack_copy),
	  .arg = "BYTES",
	  .help = "user stack copied per sample to name interpreted Java frames and unwind "
		  "(a multiple of 8, 0..65528, 0 = off: interpreted frames stay Interpreter; "
		  "default 65528, 16384 with --event offcpu|wall)",
	  .doc = "Off-CPU stacks taken by BPF copy at most 61440 bytes." },
	{ .name = "lines", .kind = CLI_SET, CLI_AT(SO, lines),
	  .help = "add the source line to Java frames (Class::method:LINE)",
	  .doc = "Interpreted frames get it from their bcp (`Class::method:LINE_[0]`), compiled and "
		  "inlined ones from the agent's line tables (`..._[j]`, `..._[i]`)." },
	{ .name = "unwind", .kind = CLI_ENUM, .names = unwind_names, CLI_AT(SO, unwind),
	  .arg = "fp|vm",
	  .help = "user stacks from frame pointers (the kernel's chain) or from the stack copy "
		  "and the JVM's frame facts, which needs no -XX:+PreserveFramePointer "
		  "(default: fp when the JVM keeps frame pointers, else vm)" },
	{ .name = "unwind-check", .kind = CLI_SET, CLI_AT(SO, unwind_check),
	  .help = "with frame pointers, also unwind every sample the vm way and count how many "
		  "agree with the kernel's chain frame for frame",
	  .doc = "The count is in the summary." },
	{ .name = "socket", .kind = CLI_STR, CLI_AT(SO, socket_path), .arg = "PATH",
	  .help = "agent socket to listen on when no watch daemon answers (default "
		  FG_DEFAULT_SOCKET ")" },
	{ .name = "ctl", .kind = CLI_STR, CLI_AT(SO, ctl_path), .arg = "PATH",
	  .help = "control channel of a running watch daemon",
	  .doc = "Default: `/run/fgcollect-ctl/ctl.sock`." },
	{ 0 },
};
/* clang-format on */

/* clang-format off */
const struct cli_opt session_cli_events[] = {
	{ .name = "event", .key = 'e', .kind = CLI_ENUM, .names = session_cli_event_names,
	  CLI_AT(SO, event), .arg = "EVENT",
	  .help = "cpu (default): CPU samples; offcpu: time off the CPU, a stack at each "
		  "switch-out weighed by the time until the thread runs again; wall: both on one "
		  "time scale. offcpu and wall count microseconds. From the JVM's agent: alloc: "
		  "allocated bytes (sampled, weighed to unbiased totals), the allocated class as "
		  "the leaf; live: the sampled objects not freed at the end; lock: contended "
		  "monitor entries, microseconds waited, the monitor's class as the leaf",
	  .doc = "See [offcpu-wall.md](offcpu-wall.md) and [alloc-lock.md](alloc-lock.md); `top` "
		  "names the event and its unit in its header and shows self time in ms (`SELF-MS`) or "
		  "self bytes in KiB (`SELF-KB`)." },
	SESSION_CLI_EVENT_KNOBS(SO),
	{ .name = "threads", .kind = CLI_STR, CLI_AT(SO, threads_regex), .arg = "REGEX",
	  .help = "only threads whose name matches (POSIX extended regex)",
	  .doc = "Any event." },
	{ .name = "per-thread", .kind = CLI_CONST, .lo = SESSION_THREADS_EACH,
	  CLI_AT(SO, threads_view),
	  .help = "each thread's stacks under its name (the default for platform threads); "
		  "given, each virtual thread's too",
	  .doc = "With `--container` or `--all` the thread sits below its process's frame. By "
		 "default virtual threads share a root per name pattern; given, each has its own "
		 "(its name, or `#ID` when unnamed), for the first 1024 of them: "
		 "[offcpu-wall.md](offcpu-wall.md#virtual-threads)." },
	{ .name = "no-per-thread", .kind = CLI_CONST, .lo = SESSION_THREADS_MERGED,
	  CLI_AT(SO, threads_view),
	  .help = "no thread-name root frame: the threads' stacks merge",
	  .doc = "It is async-profiler's default view; pprof samples then carry no `thread` label." },
	{ .name = "scope", .kind = CLI_ENUM, .names = scope_names, CLI_AT(SO, scope),
	  .arg = "cpus|threads",
	  .help = "cpus: events per CPU, the targets' samples kept by BPF in the kernel (the "
		  "default when privileged; offcpu and wall: needs CAP_BPF); threads: events per "
		  "thread, which cost the JVM at each context switch (the fallback)",
	  .doc = "`cpus` has no fallback: an error if the BPF program cannot load; CPU-wide events "
		  "need root or `CAP_PERFMON`, the off-CPU program `CAP_BPF` and BTF. `threads` is "
		  "said in the summary." },
	{ 0 },
};
/* clang-format on */

int session_cli_parse(const struct cli_cmd *c, int argc, char **argv, void *opts,
		      struct session_opts *so)
{
	struct cli_seen seen;
	int rv = cli_parse(c, argc, argv, opts, &seen);

	if (rv)
		return rv;
	if (optind < argc) {
		fg_err(c->name, "unexpected argument '%s'", argv[optind]);
		return FG_EXIT_USAGE;
	}
	if (cli_given(c, &seen, "pid") + cli_given(c, &seen, "container") +
		    cli_given(c, &seen, "all") !=
	    1) {
		fg_err(c->name, "give exactly one of --pid, --container or --all");
		cli_usage(c, stderr);
		return FG_EXIT_USAGE;
	}
	if (cli_given(c, &seen, "switch-rate") && cli_given(c, &seen, "switch-period")) {
		fg_err(c->name, "give --switch-rate or --switch-period, not both");
		return FG_EXIT_USAGE;
	}
	/* the last of --per-thread and --no-per-thread given */
	so->merge_threads = so->threads_view == SESSION_THREADS_MERGED;
	so->per_thread = so->threads_view == SESSION_THREADS_EACH;
	if (so->switch_rate == SESSION_SWITCH_RATE_AUTO)
		so->switch_rate = so->switch_period ? 0 : SESSION_DEFAULT_SWITCH_RATE;
	if (so->switch_period == 0)
		so->switch_period = SESSION_DEFAULT_SWITCH_PERIOD;
	if (so->stack_copy == SESSION_STACK_COPY_AUTO)
		so->stack_copy = so->event == FG_EVENT_CPU ? SESSION_DEFAULT_STACK_COPY
							   : SESSION_DEFAULT_SWITCH_STACK_COPY;
	return 0;
}

static volatile sig_atomic_t stop_flag;

static void on_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

const volatile sig_atomic_t *session_cli_catch_stop(void)
{
	struct sigaction sa = { .sa_handler = on_stop };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return &stop_flag;
}

int session_cli_start(const char *cmd, const struct session_opts *so, struct session **s,
		      const volatile sig_atomic_t **stop)
{
	char why[512];

	*stop = session_cli_catch_stop();
	if (!evkind_of(so->event)->from_agent) /* the agents' events need no perf */
		cli_warn_privs(cmd, so->event != FG_EVENT_CPU);
	if (session_open(so, s, why, sizeof(why)) != 0) {
		fg_err(cmd, "%s", why);
		return FG_EXIT_FAIL;
	}
	return FG_EXIT_OK;
}
