/* SPDX-License-Identifier: MIT */
/*
 * session_cli.h - the command-line options `record` and `top` share (the sampling session's:
 * its target, one of --pid, --container or --all; --freq, --no-kernel, --no-inline,
 * --stack-copy, --lines, --unwind, --socket, --ctl, --scope, --event and its options) as option
 * rows (cli_opt.h) on struct session_opts, the checks across them, and the two commands' stop
 * on SIGINT or SIGTERM. For cmd_*.c only: it prints the errors it finds.
 */
#ifndef FG_SESSION_CLI_H
#define FG_SESSION_CLI_H

#include <signal.h>
#include <stddef.h>

#include "cli_opt.h"
#include "fgproto.h"
#include "session.h"
#include "switchbpf.h"

/* Rows on struct session_opts: the target (--pid, --container, --all) and --freq. */
extern const struct cli_opt session_cli_targets[];
/* Rows on struct session_opts: --no-kernel, --no-inline, the stack copy and unwinding,
 * --socket, --ctl. */
extern const struct cli_opt session_cli_sampling[];
/* Rows on struct session_opts: --event and the options of its events, --threads, --scope. */
extern const struct cli_opt session_cli_events[];

/*
 * The option groups (cli_group) of a recording command whose options struct T holds its
 * session_opts as member `so`: the target, the command's own rows, sampling, events.
 */
#define SESSION_CLI_GROUPS(T, own)                                                                 \
	{ NULL, session_cli_targets, offsetof(T, so) }, { NULL, (own), 0 },                        \
		{ NULL, session_cli_sampling, offsetof(T, so) },                                   \
	{                                                                                          \
		NULL, session_cli_events, offsetof(T, so)                                          \
	}

/*
 * The rows of the events' own options (--alloc-interval, --alloc-budget, --alloc-depth,
 * --lock-threshold, --min-block, --switch-rate, --switch-period) on an options struct T whose
 * fields have these names: record and top take them on session_opts (session_cli_events), watch
 * on its daemon_opts, with one wording and one set of bounds.
 */
/* clang-format off */
#define SESSION_CLI_EVENT_KNOBS(T)                                                                 \
	{ .name = "alloc-interval", .kind = CLI_U64, .lo = 1, .hi = 1ull << 30, .unit = "bytes",   \
	  CLI_AT(T, alloc_interval), .arg = "BYTES",                                               \
	  .help = "alloc/live: mean bytes between samples (default 524288)",                       \
	  .doc = "1 to 2^30; each sample is weighed to the bytes and objects it stands for." },    \
	{ .name = "alloc-budget", .kind = CLI_FN, .fn = session_cli_budget_opt,                    \
	  CLI_AT(T, alloc_budget_ppm), .arg = "PCT",                                               \
	  .help = "alloc/live: keep what sampling costs each JVM under PCT% of its CPU by "        \
		  "widening the interval (default 1; 0: no budget)",                               \
	  .doc = "The agent times its sampling against the JVM's CPU time and moves the interval " \
		 "(--alloc-interval times a power of 2^(1/4), never below it); each sample is "     \
		 "weighed by the interval it was drawn with. "                                      \
		 "[alloc-lock.md](alloc-lock.md#cost-budget)." },                                   \
	{ .name = "alloc-depth", .kind = CLI_U64, .lo = 1, .hi = FGP_MAX_EVENT_DEPTH,              \
	  .unit = "frames", CLI_AT(T, alloc_depth), .arg = "N",                                    \
	  .help = "alloc/live/lock: frames taken of a stack (default 128)",                        \
	  .doc = "1 to 2048; a stack cut there gets a `[truncated]` frame." },                     \
	{ .name = "lock-threshold", .kind = CLI_U64, .hi = 3600ull * 1000000,                      \
	  .unit = "microseconds", CLI_AT(T, lock_threshold_us), .arg = "US",                       \
	  .help = "lock: leave out waits shorter than US microseconds (counted; default 0: "       \
		  "every wait)" },                                                                 \
	{ .name = "min-block", .kind = CLI_U64, .hi = 3600ull * 1000000, .mul = 1000,              \
	  .unit = "microseconds", CLI_AT(T, min_block_ns), .arg = "US",                            \
	  .help = "offcpu/wall: leave out waits shorter than US microseconds (counted; default "   \
		  "0: every wait)" },                                                              \
	{ .name = "switch-rate", .kind = CLI_U64, .hi = SWITCHBPF_MAX_RATE,                        \
	  .unit = "stacks a second", CLI_AT(T, switch_rate), .arg = "HZ",                          \
	  .help = "offcpu/wall: about HZ stacks a second in all, each switch-out taken by a "      \
		  "chance its weight undoes (default 25; 0: every switch-out, exact)",             \
	  .doc = "Each switch-out is taken by a chance in proportion to its predicted wait and weighed " \
		  "by 1 / chance. Carriers of virtual threads found pinned get " SESSION_STR(SESSION_CARRIER_RATE_FACTOR) " times HZ more, "   \
		  "over their own waits: "                                                         \
		  "[offcpu-wall.md](offcpu-wall.md#which-waits-get-a-stack)." },                   \
	{ .name = "switch-period", .kind = CLI_U64, .lo = 1, .hi = 1000000,                        \
	  CLI_AT(T, switch_period), .arg = "N",                                                    \
	  .help = "offcpu/wall: instead, each switch-out by chance 1/N, weighed N times (per "     \
		  "thread without BPF: every Nth); not with --switch-rate" }
/* clang-format on */

/* The names --event takes, in enum fg_event's order. */
extern const struct cli_name session_cli_event_names[];

/* The events --event takes, for lists: bit (1 << FG_EVENT_x) each. */
#define SESSION_CLI_EVENTS_ALL ((1u << FG_NEVENTS) - 1)

/*
 * A comma-separated --event list ("cpu,offcpu"): the set of events as bits (1 << event), each
 * at most once. 0, or -1 (printed, naming cmd: empty, unknown or repeated event).
 */
int session_cli_event_list(const char *cmd, const char *arg, unsigned *mask);

/*
 * --alloc-budget PCT (a CLI_FN row over a uint32_t): PCT (0 to 100, decimals allowed) percent
 * of the JVM's CPU in ppm into the row's field; 0 stores SESSION_ALLOC_BUDGET_OFF. 1 or -1
 * (printed, naming cmd).
 */
int session_cli_budget_opt(const char *cmd, const struct cli_opt *r, const char *arg, void *opts);

/* The name --event takes for ev ("cpu", "offcpu", "wall"). */
const char *session_cli_event_name(enum fg_event ev);

/*
 * cli_parse() of c (whose groups hold the three row tables above on *so, inside opts), then the
 * checks across options: no positional arguments, exactly one target; --switch-rate and
 * --switch-period not both. A stack_copy left at SESSION_STACK_COPY_AUTO becomes the event's
 * default (session.h); a switch_rate left at SESSION_SWITCH_RATE_AUTO becomes 0 when
 * --switch-period was given, else SESSION_DEFAULT_SWITCH_RATE. 0 when all were taken, -1 after
 * --help (printed), or FG_EXIT_USAGE (the error printed, and the usage where it helps).
 */
int session_cli_parse(const struct cli_cmd *c, int argc, char **argv, void *opts,
		      struct session_opts *so);

/*
 * From now on SIGINT and SIGTERM only set the flag returned (0 until then), which a recording
 * polls to end itself. Meant to be called once per process, before the recording starts.
 */
const volatile sig_atomic_t *session_cli_catch_stop(void);

/*
 * A recording command's start: the stop signals caught (session_cli_catch_stop, into *stop),
 * a warning when perf sampling lacks privileges (not for the agents' events), then
 * session_open(so) into *s. FG_EXIT_OK, or FG_EXIT_FAIL with the reason printed, naming cmd.
 */
int session_cli_start(const char *cmd, const struct session_opts *so, struct session **s,
		      const volatile sig_atomic_t **stop);

#endif
