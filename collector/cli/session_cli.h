/* SPDX-License-Identifier: MIT */
/*
 * session_cli.h - the command-line options `record` and `top` share (the sampling session's:
 * its target, one of --pid, --container or --all; --freq, --no-kernel, --no-inline, --stack-copy,
 * --lines, --unwind, --socket, --ctl, --scope) and getopt's error reporting, so the two commands
 * validate them in one place. For cmd_*.c only: it prints the errors it finds.
 */
#ifndef FG_SESSION_CLI_H
#define FG_SESSION_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "session.h"

/* getopt_long codes of the shared long-only options; a command's own start at SESSION_OPT_END. */
enum {
	SESSION_OPT_NO_KERNEL = 256,
	SESSION_OPT_NO_INLINE,
	SESSION_OPT_SOCKET,
	SESSION_OPT_CTL,
	SESSION_OPT_STACK_COPY,
	SESSION_OPT_LINES,
	SESSION_OPT_UNWIND,
	SESSION_OPT_UNWIND_CHECK,
	SESSION_OPT_MIN_BLOCK,
	SESSION_OPT_SWITCH_PERIOD,
	SESSION_OPT_SWITCH_RATE,
	SESSION_OPT_THREADS,
	SESSION_OPT_PER_THREAD,
	SESSION_OPT_NO_PER_THREAD,
	SESSION_OPT_SCOPE,
	SESSION_OPT_ALLOC_INTERVAL,
	SESSION_OPT_ALLOC_DEPTH,
	SESSION_OPT_LOCK_THRESHOLD,
	SESSION_OPT_END,
};

#define SESSION_CLI_LONGOPTS                                                                       \
	{ "pid", required_argument, NULL, 'p' }, { "container", required_argument, NULL, 'c' },    \
		{ "all", no_argument, NULL, 'a' }, { "freq", required_argument, NULL, 'F' },       \
		{ "no-kernel", no_argument, NULL, SESSION_OPT_NO_KERNEL },                         \
		{ "no-inline", no_argument, NULL, SESSION_OPT_NO_INLINE },                         \
		{ "socket", required_argument, NULL, SESSION_OPT_SOCKET },                         \
		{ "stack-copy", required_argument, NULL, SESSION_OPT_STACK_COPY },                 \
		{ "lines", no_argument, NULL, SESSION_OPT_LINES },                                 \
		{ "unwind", required_argument, NULL, SESSION_OPT_UNWIND },                         \
		{ "unwind-check", no_argument, NULL, SESSION_OPT_UNWIND_CHECK },                   \
		{ "event", required_argument, NULL, 'e' },                                         \
		{ "min-block", required_argument, NULL, SESSION_OPT_MIN_BLOCK },                   \
		{ "switch-period", required_argument, NULL, SESSION_OPT_SWITCH_PERIOD },           \
		{ "switch-rate", required_argument, NULL, SESSION_OPT_SWITCH_RATE },               \
		{ "threads", required_argument, NULL, SESSION_OPT_THREADS },                       \
		{ "per-thread", no_argument, NULL, SESSION_OPT_PER_THREAD },                       \
		{ "no-per-thread", no_argument, NULL, SESSION_OPT_NO_PER_THREAD },                 \
		{ "scope", required_argument, NULL, SESSION_OPT_SCOPE },                           \
		{ "alloc-interval", required_argument, NULL, SESSION_OPT_ALLOC_INTERVAL },         \
		{ "alloc-depth", required_argument, NULL, SESSION_OPT_ALLOC_DEPTH },               \
		{ "lock-threshold", required_argument, NULL, SESSION_OPT_LOCK_THRESHOLD },         \
	{                                                                                          \
		"ctl", required_argument, NULL, SESSION_OPT_CTL                                    \
	}

/* The usage lines of the target options, for both commands' help. */
#define SESSION_CLI_HELP_TARGETS                                                                   \
	"  -p, --pid=HOSTPID      the process to sample (its PID on this host)\n"                  \
	"  -c, --container=ID     every process of the container whose id starts with ID\n"        \
	"  -a, --all              every JVM whose agent is connected\n"

/* The usage lines of --stack-copy and --lines, for both commands' help. */
#define SESSION_CLI_HELP_JAVA                                                                      \
	"      --stack-copy=BYTES user stack copied per sample to name interpreted Java\n"         \
	"                         frames and unwind (multiple of 8, 0..65528, 0 = off;\n"          \
	"                         default 65528, 16384 with --event offcpu|wall)\n"                \
	"      --lines            add the source line to Java frames (Class::method:LINE)\n"       \
	"      --unwind=fp|vm     user stacks from frame pointers (the kernel's chain) or from\n"  \
	"                         the stack copy and the JVM's frame facts, which needs no\n"      \
	"                         -XX:+PreserveFramePointer (default: fp when the JVM keeps\n"     \
	"                         frame pointers, else vm)\n"                                      \
	"      --unwind-check     with frame pointers, also unwind every sample the vm way and\n"  \
	"                         count how many agree with the kernel's chain frame for frame\n"

/* The usage lines of --event and its options, for both commands' help. */
#define SESSION_CLI_HELP_EVENT                                                                     \
	"  -e, --event=EVENT      cpu (default): CPU samples; offcpu: time off the CPU,\n"         \
	"                         a stack at each switch-out weighed by the time until\n"          \
	"                         the thread runs again; wall: both on one time scale.\n"          \
	"                         offcpu and wall count microseconds. From the JVM's\n"            \
	"                         agent: alloc: allocated bytes (sampled, weighed to\n"            \
	"                         unbiased totals), the allocated class as the leaf;\n"            \
	"                         live: the sampled objects not freed at the end;\n"               \
	"                         lock: contended monitor entries, microseconds waited,\n"         \
	"                         the monitor's class as the leaf\n"                               \
	"      --alloc-interval=BYTES  alloc/live: mean bytes between samples (default\n"          \
	"                         524288)\n"                                                       \
	"      --alloc-depth=N    alloc/live/lock: frames taken of a stack (default 128)\n"        \
	"      --lock-threshold=US  lock: leave out waits shorter than US microseconds\n"          \
	"                         (counted; default 0: every wait)\n"                              \
	"      --min-block=US     offcpu/wall: leave out waits shorter than US\n"                  \
	"                         microseconds (counted; default 0: every wait)\n"                 \
	"      --switch-rate=HZ   offcpu/wall: about HZ stacks a second in all, each\n"            \
	"                         switch-out taken by a chance its weight undoes (default\n"       \
	"                         25; 0: every switch-out, exact)\n"                               \
	"      --switch-period=N  offcpu/wall: instead, each switch-out by chance 1/N,\n"          \
	"                         weighed N times (per thread without BPF: every Nth)\n"           \
	"      --threads=REGEX    only threads whose name matches (extended regex)\n"              \
	"      --per-thread       each thread's stacks under its name (the default)\n"             \
	"      --no-per-thread    no thread-name root frame: the threads' stacks merge\n"          \
	"      --scope=cpus|threads\n"                                                             \
	"                         cpus: events per CPU, the targets' samples kept by BPF\n"        \
	"                         in the kernel (the default when privileged; offcpu and\n"        \
	"                         wall: needs CAP_BPF); threads: events per thread, which\n"       \
	"                         cost the JVM at each context switch (the fallback)\n"

/* An --event value: cpu, offcpu, wall, alloc, live or lock. 0, or -1 (printed, naming cmd). */
int session_cli_event(const char *cmd, const char *arg, enum session_event *out);

/* The events --event takes, for lists: bit (1 << SESSION_EVENT_x) each. */
#define SESSION_CLI_EVENTS_ALL 63u

/*
 * A comma-separated --event list ("cpu,offcpu"): the set of events as bits (1 << event), each
 * at most once. 0, or -1 (printed, naming cmd: empty, unknown or repeated event).
 */
int session_cli_event_list(const char *cmd, const char *arg, unsigned *mask);

/* The name --event takes for ev ("cpu", "offcpu", "wall"). */
const char *session_cli_event_name(enum session_event ev);

/*
 * Apply c (getopt_long's return, arg its optarg) to so if it is a shared option: 1 when applied
 * (--pid, --container and --all set so->target), 0 when c is not a shared option, -1 for a
 * bad value (printed, naming cmd, the option and the value: exit with FG_EXIT_USAGE).
 */
int session_cli_opt(const char *cmd, int c, const char *arg, struct session_opts *so);

/*
 * Report getopt's ':' (missing value) or any unknown option c for argv (opterr = 0 and an
 * optstring starting with ':'). Always returns FG_EXIT_USAGE; the caller prints its usage.
 */
int session_cli_bad_opt(const char *cmd, int c, char **argv);

/*
 * A command's own options: 1 when c was applied, 0 when c is not one of them, -1 for a bad value
 * (printed).
 */
typedef int (*session_cli_local_fn)(int c, const char *arg, void *ctx);

/*
 * getopt_long over argv (optstring starting with ':'): each option goes to local first, then to
 * the shared ones in so; no positional arguments, exactly one target option ('p', 'c' or 'a'; the
 * optstring must have "p:c:a"). A stack_copy left at SESSION_STACK_COPY_AUTO becomes the event's
 * default (session.h); a switch_rate left at SESSION_SWITCH_RATE_AUTO becomes 0 when
 * --switch-period was given, else SESSION_DEFAULT_SWITCH_RATE (both given: a usage error). 0 when
 * all were taken, -1 after --help ('h', usage(stdout) printed), or FG_EXIT_USAGE (the error and
 * usage(stderr) printed).
 */
int session_cli_parse(const char *cmd, int argc, char **argv, const char *optstring,
		      const struct option *longopts, session_cli_local_fn local, void *ctx,
		      struct session_opts *so, void (*usage)(FILE *));

#endif
