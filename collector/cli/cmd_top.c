// SPDX-License-Identifier: MIT
/*
 * cmd_top.c - `fgcollect top`: a live view of the hottest symbols of a JVM, a container or
 * every JVM, with Java names.
 *
 *   fgcollect top (--pid HOSTPID | --container ID | --all) [--freq HZ] [--interval S]
 *                 [--count N] [--rows N] [--no-kernel] [--no-inline] [--stack-copy BYTES]
 *                 [--lines] [--socket PATH] [--ctl PATH]
 *                 [--event cpu|offcpu|wall|alloc|live|lock]
 *                 [--min-block US] [--switch-rate HZ] [--threads REGEX]
 *                 [--per-thread | --no-per-thread]
 *
 * The targets are found as `record` finds them (session_cli.h, targets.h); the symbols of every
 * target process are counted together.
 *
 * On a terminal the screen is redrawn every interval; otherwise one snapshot per interval is
 * appended (for pipes and logs). Each snapshot covers the samples of its own interval (JIT
 * frames are resolved once their code table is final, a fraction of a second later).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli_opt.h"
#include "cmds.h"
#include "session.h"
#include "session_cli.h"
#include "stackagg.h"
#include "topview.h"
#include "util.h"

#define CMD "top"

#define ENV struct env

/* What the command line asks for. */
struct env {
	struct session_opts so;
	uint64_t interval_s, count, rows;
};

static void env_init(void *opts)
{
	*(struct env *)opts = (struct env){ .so = { .target = SESSION_TARGET_PID,
						    .src = SESSION_SRC_AUTO,
						    .live_view = true,
						    .stack_copy = SESSION_STACK_COPY_AUTO,
						    .switch_rate = SESSION_SWITCH_RATE_AUTO },
					    .interval_s = 1 };
}

/* clang-format off */
static const struct cli_opt top_opts[] = {
	{ .name = "interval", .key = 'i', .kind = CLI_U64, .lo = 1, .hi = 3600, .unit = "seconds",
	  CLI_AT(ENV, interval_s), .arg = "S",
	  .help = "seconds between refreshes (default 1)" },
	{ .name = "count", .key = 'n', .kind = CLI_U64, .lo = 1, .hi = UINT32_MAX,
	  CLI_AT(ENV, count), .arg = "N",
	  .help = "stop after N refreshes (default: until Ctrl-C or the targets exit)" },
	{ .name = "rows", .key = 'r', .kind = CLI_U64, .lo = 1, .hi = 10000, CLI_AT(ENV, rows),
	  .arg = "N",
	  .help = "symbols shown (default: the terminal's height, or 20)" },
	{ 0 },
};
/* clang-format on */

static const struct cli_group top_groups[] = { SESSION_CLI_GROUPS(ENV, top_opts) };

const struct cli_cmd cmd_top_cli = {
	.name = CMD,
	.usage = "Usage: fgcollect top (--pid HOSTPID | --container ID | --all) [OPTION...]\n"
		 "\n"
		 "Live view of the hottest symbols of a process, a container or every JVM (self\n"
		 "and total share of their samples, or of their time off the CPU with --event\n"
		 "offcpu|wall), with Java method names from the fgcollect agent.\n",
	.examples = "  fgcollect top --pid 4242\n"
		    "  fgcollect top --container 3f2a --interval 5 --count 3 | tee top.log\n"
		    "  fgcollect top --all\n"
		    "  fgcollect top --pid 4242 --event offcpu --min-block 1000\n",
	CLI_CMD_OPTS(top_groups, ENV, env_init),
};

/* What the view shows: "PID 4242", "container 3f2a9c0d1e2b (2 processes)", "every JVM (3
 * processes)". */
static void what(struct session *s, const struct session_opts *so, char *buf, size_t len)
{
	size_t n = session_target_count(s);

	if (so->target == SESSION_TARGET_PID)
		snprintf(buf, len, "PID %u", so->pid);
	else if (so->target == SESSION_TARGET_CONTAINER)
		snprintf(buf, len, "container %.12s (%zu process%s)", so->container, n,
			 n == 1 ? "" : "es");
	else
		snprintf(buf, len, "every JVM (%zu process%s)", n, n == 1 ? "" : "es");
}

static void show(struct session *s, const struct session_opts *so, bool tty, size_t rows,
		 unsigned int width, uint64_t interval_no)
{
	char whom[64];
	struct stackagg *a = session_agg(s);
	struct stackagg_stats st;
	struct topview tv;
	char when[32], amount[64];
	time_t now = time(NULL);
	struct tm tm;

	session_close_window(s);
	stackagg_stats(a, &st);
	if (topview_build(a, &tv) != 0) {
		fg_err(CMD, "out of memory building the view");
		return;
	}
	tv.bytes = !strcmp(evkind_of(so->event)->unit, "bytes");
	tv.time_us = !strcmp(evkind_of(so->event)->unit, "us");
	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	if (tty)
		fputs("\033[H\033[2J", stdout);
	what(s, so, whom, sizeof(whom));
	if (so->event == FG_EVENT_CPU)
		snprintf(amount, sizeof(amount), "%llu samples", (unsigned long long)tv.samples);
	else if (tv.bytes)
		snprintf(amount, sizeof(amount), "%.1f MiB %s", (double)tv.samples / 1048576.0,
			 evkind_of(so->event)->what);
	else
		snprintf(amount, sizeof(amount), "%.1f ms %s", (double)tv.samples / 1000.0,
			 evkind_of(so->event)->what);
	printf("fgcollect top - %s - %s - event %s (%s) - interval %llu: %s, java unresolved "
	       "%llu/%llu\n",
	       whom, when, session_cli_event_name(so->event),
	       so->event == FG_EVENT_CPU ? "samples"
	       : tv.bytes		 ? "bytes, KiB"
					 : "time, ms",
	       (unsigned long long)interval_no, amount,
	       (unsigned long long)st.unresolved[STACKAGG_CLASS_JAVA],
	       (unsigned long long)st.frames[STACKAGG_CLASS_JAVA]);
	topview_print(stdout, a, &tv, rows, width);
	if (!tty)
		putchar('\n');
	fflush(stdout);
	topview_fini(&tv);
	stackagg_reset(a);
}

/*
 * Sample and show a table every interval until a signal, --count tables, or the target exits.
 * Samples are final SESSION_SETTLE_NS after they were taken: the first table waits that much
 * longer than an interval, so that each one holds an interval of them.
 */
static void run(struct session *s, const struct env *env, bool tty, unsigned int width,
		const volatile sig_atomic_t *stop)
{
	uint64_t shown = 0,
		 next = fg_now_ns() + env->interval_s * 1000000000ull + SESSION_SETTLE_NS;
	char note[SESSION_NOTE_MAX];
	int rv;

	while (!*stop && !session_done(s)) {
		uint64_t now = fg_now_ns();
		int wait_ms = now >= next ? 0 : (int)((next - now) / 1000000ull);

		rv = session_step(s, wait_ms < 1000 ? wait_ms : 1000); /* see cmd_record.c */
		while (!tty && session_next_note(s, note, sizeof(note)))
			fg_err(CMD, "%s", note);
		if (rv != 0 && rv != -EINTR) {
			fg_err(CMD, "sampling failed: %s", strerror(-rv));
			break;
		}
		if (fg_now_ns() >= next) {
			show(s, &env->so, tty, env->rows, width, ++shown);
			next += env->interval_s * 1000000000ull;
			if (env->count && shown >= env->count)
				break;
		}
	}
	if (session_done(s) && env->so.target == SESSION_TARGET_PID)
		fg_err(CMD, "PID %u exited", env->so.pid);
	else if (session_done(s))
		fg_err(CMD, "every process of container %.12s exited", env->so.container);
}

int cmd_top(int argc, char **argv)
{
	struct env env;
	const volatile sig_atomic_t *stop;
	struct session *s = NULL;
	unsigned int width = 100;
	bool tty = isatty(STDOUT_FILENO);
	int rv;

	env_init(&env);
	rv = session_cli_parse(&cmd_top_cli, argc, argv, &env, &env.so);
	if (rv)
		return rv < 0 ? FG_EXIT_OK : rv;
	if (tty) {
		struct winsize ws;

		if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 4) {
			width = ws.ws_col;
			if (!env.rows)
				env.rows = ws.ws_row - 3u;
		}
	}
	if (!env.rows)
		env.rows = 20;
	if (session_cli_start(CMD, &env.so, &s, &stop) != FG_EXIT_OK)
		return FG_EXIT_FAIL;
	run(s, &env, tty, width, stop);
	session_close(s);
	return FG_EXIT_OK;
}
