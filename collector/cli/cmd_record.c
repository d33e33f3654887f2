// SPDX-License-Identifier: MIT
/*
 * cmd_record.c - `fgcollect record`: sample a JVM, a container or every JVM, write a profile.
 *
 *   fgcollect record (--pid HOSTPID | --container ID | --all) [--freq HZ] [--duration S]
 *                    [-o FILE.folded|.svg|.pb.gz] [--no-kernel] [--no-inline] [--stack-copy BYTES]
 * [--lines]
 *                    [--socket PATH] [--ctl PATH]
 *                    [--event cpu|offcpu|wall|alloc|live|lock] [--min-block US]
 *                    [--switch-rate HZ] [--alloc-interval BYTES] [--alloc-depth N]
 *                    [--lock-threshold US]
 *                    [--threads REGEX] [--per-thread | --no-per-thread]
 *
 * Only routing and printing: the recording is session.c, its summary session_report.h, the
 * profile file profout.h (folded, SVG, pprof). Ctrl-C ends the recording early; the output is still
 * written.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_opt.h"
#include "cmds.h"
#include "labels.h"
#include "profout.h"
#include "session.h"
#include "session_cli.h"
#include "session_report.h"
#include "stackagg.h"
#include "util.h"

#define CMD "record"
#define MAX_DURATION_S (7ull * 24 * 3600)

#define ENV struct env

/* What the command line asks for. */
struct env {
	struct session_opts so;
	enum profout_fmt fmt;
	const char *out, *code_log;
	uint64_t duration_s;
};

static void env_init(void *opts)
{
	*(struct env *)opts = (struct env){ .so = { .src = SESSION_SRC_AUTO,
						    .stack_copy = SESSION_STACK_COPY_AUTO,
						    .switch_rate = SESSION_SWITCH_RATE_AUTO,
						    .min_block_ns = SESSION_DEFAULT_MIN_BLOCK_NS },
					    .fmt = PROFOUT_FOLDED };
}

static int output_opt(const char *cmd, const struct cli_opt *r, const char *arg, void *opts)
{
	struct env *env = opts;

	if (profout_format(arg, &env->fmt) != 0) {
		fg_err(cmd,
		       "-%c '%s': unknown extension; use .folded, .svg, .pb.gz, .html or "
		       ".speedscope.json",
		       r->key, arg);
		return -1;
	}
	env->out = arg;
	return 1;
}

/* clang-format off */
static const struct cli_opt record_opts[] = {
	{ .name = "duration", .key = 'd', .kind = CLI_U64, .lo = 1, .hi = MAX_DURATION_S,
	  .unit = "whole seconds", CLI_AT(ENV, duration_s), .arg = "S",
	  .help = "seconds to record (default: until Ctrl-C or the targets exit; Ctrl-C still "
		  "writes the output)" },
	{ .name = "output", .key = 'o', .kind = CLI_FN, .fn = output_opt, CLI_AT(ENV, out),
	  CLI_ALSO(ENV, fmt), .arg = "FILE",
	  .help = ".folded, .svg, .pb.gz, .html (time view) or .speedscope.json by its extension "
		  "(default: folded stacks on standard output)",
	  .doc = "The time view: [timeview.md](timeview.md). Another extension is a usage "
		 "error." },
	{ .name = "code-log", .kind = CLI_STR, CLI_AT(ENV, code_log), .arg = "FILE",
	  .help = "also write the JVMs' code load/unload history (text, one event per line: PID "
		  "TIME_NS load|unload ADDR SIZE compiled|dynamic NAME)",
	  .doc = "In time order." },
	{ 0 },
};
/* clang-format on */

static const struct cli_group record_groups[] = { SESSION_CLI_GROUPS(ENV, record_opts) };

const struct cli_cmd cmd_record_cli = {
	.name = CMD,
	.usage =
		"Usage: fgcollect record (--pid HOSTPID | --container ID | --all) [OPTION...]\n"
		"\n"
		"Sample JVMs (every thread, user and kernel stacks) and write a profile whose Java\n"
		"frames are named as they were when each sample was taken.\n",
	.examples =
		"  fgcollect record --pid 4242 --duration 30 -o app.svg\n"
		"  fgcollect record --container 3f2a --freq 999 -d 10 -o app.pb.gz\n"
		"  fgcollect record --all -o all.folded      # until Ctrl-C\n"
		"  fgcollect record --pid 4242 --event wall --threads 'http-.*' -d 10 -o wall.svg\n"
		"  fgcollect record --pid 4242 --event alloc -d 30 -o alloc.svg\n"
		"  fgcollect record --pid 4242 --event lock --lock-threshold 1000 -o lock.pb.gz\n",
	CLI_CMD_OPTS(record_groups, ENV, env_init),
};

/*
 * An agent-event recording that got nothing because no target's agent could or did send
 * events: said in one line per cause. True when that is so (record then fails).
 */
static bool events_missing(const struct session_summary *sm)
{
	bool any = false, old = false;

	for (size_t i = 0; i < sm->njvms; i++)
		any = any || sm->jvms[i].ev.state_known || sm->jvms[i].ev.stacks;
	if (any || sm->ev.events)
		return false;
	for (size_t i = 0; i < sm->njvms; i++) {
		const struct session_jvm_summary *v = &sm->jvms[i];

		if (!v->connected_ever && v->jvm)
			fg_err(CMD,
			       "PID %u: no agent connected: no allocation, live or lock events",
			       v->pid);
		else if (v->connected_ever && v->ev.hello_events)
			fg_err(CMD,
			       "PID %u: its agent never answered the request for events (is the "
			       "want file beside the agent socket writable?): nothing recorded",
			       v->pid);
		else if (v->connected_ever)
			old = true; /* said when it connected */
		any = any || v->jvm || v->connected_ever;
	}
	if (!any && !old)
		fg_err(CMD, "no agent of a target connected: no allocation, live or lock events "
			    "recorded");
	return true;
}

static void report_line(void *arg, const char *text)
{
	(void)arg;
	fg_err(CMD, "%s", text);
}

static void print_notes(struct session *s)
{
	char buf[SESSION_NOTE_MAX];

	while (session_next_note(s, buf, sizeof(buf)))
		fg_err(CMD, "%s", buf);
}

/* Sample until the duration ends, a signal arrives or every target has exited. */
static void run(struct session *s, uint64_t duration_s, const volatile sig_atomic_t *stop)
{
	uint64_t deadline = duration_s ? fg_now_ns() + duration_s * 1000000000ull : UINT64_MAX;
	int rv;

	while (!*stop && !session_done(s)) {
		uint64_t now = fg_now_ns();

		if (now >= deadline)
			break;
		/* Until the deadline: the recording wakes for its own work (session.h); the
		 * second's cap only bounds a wake-up the kernel might not give. */
		rv = session_step(s, deadline - now > 1000000000ull
					     ? 1000
					     : (int)((deadline - now + 999999ull) / 1000000ull));
		print_notes(s);
		if (rv != 0 && rv != -EINTR) {
			fg_err(CMD, "sampling failed: %s; writing what was recorded",
			       strerror(-rv));
			break;
		}
	}
	if (*stop)
		fg_err(CMD, "interrupted; writing what was recorded");
	else if (session_done(s))
		fg_err(CMD, "every target exited; recording ended early");
	session_finish(s, 500);
	print_notes(s);
}

static void write_code_log(struct session *s, const char *path)
{
	FILE *cf = fopen(path, "we");
	int rv = cf ? session_write_code_log(s, cf) : -errno;

	if (cf && fclose(cf) != 0 && rv == 0)
		rv = -EIO;
	if (rv != 0)
		fg_err(CMD, "cannot write the code log %s: %s", path, strerror(-rv));
}

/* Write the profile, the summary and the code log; the exit status. */
static int report(struct session *s, const struct env *env)
{
	const struct session_opts *so = &env->so;
	struct session_summary sm;
	char title[512], subtitle[256], host[65] = "";
	int rv;

	session_summary(s, &sm);
	if (gethostname(host, sizeof(host) - 1) != 0)
		snprintf(host, sizeof(host), "unknown");
	/* The labels of rolling profiles: service, container, host PID, host. */
	if (so->target == SESSION_TARGET_PID) {
		struct session_target_info ti = { .service = "", .container_id = "" };
		struct prof_labels pl;

		if (session_target_count(s) > 0)
			session_target_at(s, 0, &ti);
		prof_labels_set(&pl, ti.service, ti.container_id, so->pid, host);
		pl.event = so->event;
		prof_labels_title(&pl, title, sizeof(title));
	} else if (so->target == SESSION_TARGET_CONTAINER) {
		snprintf(title, sizeof(title), "%s: container %.12s | host %s",
			 evkind_of(so->event)->title, so->container, host);
	} else {
		snprintf(title, sizeof(title), "%s: every JVM | host %s",
			 evkind_of(so->event)->title, host);
	}
	session_report_subtitle(&sm, subtitle, sizeof(subtitle));
	if (env->out) {
		struct profout po = { .fmt = env->fmt,
				      .multi = so->target != SESSION_TARGET_PID,
				      .merged = so->merge_threads,
				      .freq = sm.freq_hz,
				      .duration_ns = sm.duration_ns,
				      .title = title,
				      .subtitle = subtitle,
				      .time_type = evkind_of(so->event)->time_type,
				      .types = evkind_of(so->event)->types };

		rv = profout_write_file(env->out, session_agg(s), &po);
	} else {
		struct profout po = { .fmt = PROFOUT_FOLDED };

		rv = profout_write(session_agg(s), &po, STDOUT_FILENO);
	}
	session_report(&sm, report_line, NULL);
	if (env->code_log)
		write_code_log(s, env->code_log);
	if (rv != 0) {
		fg_err(CMD, "cannot write %s: %s", env->out ? env->out : "stdout", strerror(-rv));
		return FG_EXIT_FAIL;
	}
	if (env->out)
		fg_err(CMD, "wrote %s (%zu distinct stacks)", env->out, sm.agg.stacks);
	if (evkind_of(so->event)->from_agent && events_missing(&sm))
		return FG_EXIT_FAIL;
	return FG_EXIT_OK;
}

int cmd_record(int argc, char **argv)
{
	struct env env;
	const volatile sig_atomic_t *stop;
	struct session *s = NULL;
	int rv;

	env_init(&env);
	rv = session_cli_parse(&cmd_record_cli, argc, argv, &env, &env.so);
	if (rv)
		return rv < 0 ? FG_EXIT_OK : rv;
	env.so.timeline = profout_timed(env.fmt); /* the time view keeps each sample's time */
	if (session_cli_start(CMD, &env.so, &s, &stop) != FG_EXIT_OK)
		return FG_EXIT_FAIL;
	run(s, env.duration_s, stop);
	rv = report(s, &env);
	session_close(s);
	return rv;
}
