// SPDX-License-Identifier: MIT
/*
 * cmd_watch.c - `fgcollect watch`: serve every JVM on this host and keep its
 * /tmp/perf-<hostpid>.map current. Only options and printing: the daemon itself (its serve loop,
 * exit and summary) is daemon.h, whose log lines go to stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_opt.h"
#include "cmds.h"
#include "ctl.h"
#include "daemon.h"
#include "fgsocket.h"
#include "labels.h"
#include "session_cli.h"
#include "switchbpf.h"
#include "util.h"

#define NSEC 1000000000ull

/* The decimal number s starts with (a digit first): 0 with *v and *end after it, or -EINVAL. */
static int lead_number(const char *s, unsigned long long *v, char **end)
{
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, end, 10);
	return errno ? -EINVAL : 0;
}

/* "30s", "10m", "1h", "2d" or plain seconds -> ns. 0 or -EINVAL. */
static int parse_duration(const char *s, uint64_t *ns)
{
	char *end;
	unsigned long long v;
	uint64_t mul = NSEC;

	if (lead_number(s, &v, &end) != 0)
		return -EINVAL;
	if (!strcmp(end, "") || !strcmp(end, "s"))
		mul = NSEC;
	else if (!strcmp(end, "m"))
		mul = 60 * NSEC;
	else if (!strcmp(end, "h"))
		mul = 3600 * NSEC;
	else if (!strcmp(end, "d"))
		mul = 86400 * NSEC;
	else
		return -EINVAL;
	if (v == 0 || v > UINT64_MAX / mul)
		return -EINVAL;
	*ns = v * mul;
	return 0;
}

/* "64k", "500m", "2g" or plain bytes, at least 64 KiB. 0 or -EINVAL. */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (lead_number(s, &v, &end) != 0)
		return -EINVAL;
	if (!strcmp(end, "k") || !strcmp(end, "K"))
		shift = 10;
	else if (!strcmp(end, "m") || !strcmp(end, "M"))
		shift = 20;
	else if (!strcmp(end, "g") || !strcmp(end, "G"))
		shift = 30;
	else if (*end)
		return -EINVAL;
	if (v > (UINT64_MAX >> 31) || (v << shift) < (64u << 10))
		return -EINVAL;
	*out = v << shift;
	return 0;
}

#define CMD "watch"
#define DO struct daemon_opts

static int duration_opt(const char *cmd, const struct cli_opt *r, const char *arg, void *opts)
{
	if (parse_duration(arg, (uint64_t *)((char *)opts + r->off)) == 0)
		return 1;
	fg_err(cmd, "--%s '%s': expected a duration like 30s, 10m or 1h", r->name, arg);
	return -1;
}

static int size_opt(const char *cmd, const struct cli_opt *r, const char *arg, void *opts)
{
	if (parse_size(arg, (uint64_t *)((char *)opts + r->off)) == 0)
		return 1;
	fg_err(cmd, "--%s '%s': expected a size like 500m or 2g (at least 64k)", r->name, arg);
	return -1;
}

/* --sandbox-uid UID[:GID]: neither 0 (GID defaults to UID). 1, or -1 (said). */
static int sandbox_ids(const char *cmd, const struct cli_opt *r, const char *arg, void *opts)
{
	DO *o = opts;
	char uid[16];
	const char *colon = strchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : strlen(arg);
	uint64_t u, g;

	if (n >= sizeof(uid)) {
		fg_err(cmd, "--%s '%s': expected UID or UID:GID", r->name, arg);
		return -1;
	}
	memcpy(uid, arg, n);
	uid[n] = '\0';
	if (cli_u64(cmd, r->name, uid, 1, 4294967294u, NULL, &u) < 0)
		return -1;
	g = u;
	if (colon && cli_u64(cmd, r->name, colon + 1, 1, 4294967294u, NULL, &g) < 0)
		return -1;
	o->sandbox_uid = u;
	o->sandbox_gid = g;
	return 1;
}

static int events_opt(const char *cmd, const struct cli_opt *r, const char *arg, void *opts)
{
	(void)r;
	return session_cli_event_list(cmd, arg, &((DO *)opts)->events) == 0 ? 1 : -1;
}

/* clang-format off */
static const struct cli_opt daemon_rows[] = {
	{ .name = "socket", .key = 's', .kind = CLI_STR, CLI_AT(DO, socket), .arg = "PATH",
	  .help = "agent socket (default " FG_DEFAULT_SOCKET ")" },
	{ .name = "keep-exited", .key = 'k', .kind = CLI_FN, .fn = duration_opt,
	  CLI_AT(DO, keep_exited_ns), .arg = "DURATION",
	  .help = "keep the map of an exited JVM this long (30s, 10m, 1h; default 1h), then "
		  "remove it" },
	{ .name = "max-jvms", .key = 'n', .kind = CLI_U64, .lo = 1, .hi = 65536,
	  CLI_AT(DO, max_jvms), .arg = "N",
	  .help = "connections served at once (default 1024)" },
	{ .name = "ctl", .key = 'c', .kind = CLI_STR, CLI_AT(DO, ctl), .arg = "PATH",
	  .help = "root-only control socket through which record and top use the daemon's "
		  "code tables (default " CTL_DEFAULT_PATH ", outside the shared directory)" },
	{ .name = "map-dir", .kind = CLI_STR, CLI_AT(DO, map_dir), .arg = "DIR",
	  .help = "write maps in DIR instead of /tmp (for tests)" },
	{ .name = "watchdog-ms", .kind = CLI_U64, .hi = 3600000, .unit = "ms",
	  CLI_AT(DO, watchdog_ms), .arg = "MS",
	  .help = "period of the listener's self-check (default 1000, 0 = off)" },
	{ .name = "sandbox-uid", .kind = CLI_FN, .fn = sandbox_ids, CLI_AT(DO, sandbox_uid),
	  CLI_ALSO(DO, sandbox_gid), .arg = "UID[:GID]",
	  .help = "uid and gid of the confined process that serves the agent socket (default "
		  "65534; GID defaults to UID; 0 is refused)" },
	{ .name = "no-sandbox", .kind = CLI_SET, CLI_AT(DO, no_sandbox),
	  .help = "serve the agent socket in this process, unconfined (for a kernel without "
		  "seccomp or a host that forbids fork)" },
	{ .name = "quiet", .key = 'q', .kind = CLI_SET, CLI_AT(DO, quiet),
	  .help = "no per-JVM log lines" },
	{ 0 },
};
/* clang-format on */

/* clang-format off */
static const struct cli_opt profile_rows[] = {
	{ .name = "profile-every", .key = 'P', .kind = CLI_FN, .fn = duration_opt,
	  CLI_AT(DO, profile_ns), .arg = "DURATION",
	  .help = "cut one profile per connected JVM and event every DURATION (10s, 1m, ...); "
		  "needs --out and/or --push" },
	{ .name = "event", .key = 'e', .kind = CLI_FN, .fn = events_opt, CLI_AT(DO, events),
	  .arg = "LIST",
	  .help = "what the profiles measure: cpu, offcpu, wall, alloc, live, lock, or several "
		  "comma-separated (cpu,alloc: one profile of each per JVM and interval); default "
		  "cpu. offcpu, wall and lock count microseconds, alloc and live bytes (see record "
		  "--help)" },
	SESSION_CLI_EVENT_KNOBS(DO),
	{ .name = "per-thread", .kind = CLI_CLEAR, CLI_AT(DO, merge_threads),
	  .help = "each thread's stacks under its name (the default)" },
	{ .name = "no-per-thread", .kind = CLI_SET, CLI_AT(DO, merge_threads),
	  .help = "no thread-name root frame: the threads' stacks merge" },
	{ .name = "out", .key = 'o', .kind = CLI_STR, CLI_AT(DO, out_dir), .arg = "DIR",
	  .help = "write STEM.folded and STEM.svg per JVM, interval and event, "
		  "DIR/index.html, and a time view page per JVM and event, "
		  "DIR/view_SERVICE_CID12_PID_HOST[.EVENT].html, rewritten when that JVM's profiles "
		  "change and removed with its last one (DIR is created 0755; it must be ours and "
		  "writable by nobody else). STEM = UTC start _ service _ container (12) _ host PID "
		  "_ host name, then .offcpu, .wall, .alloc, .live or .lock (nothing for cpu)",
	  .doc = "Retention and pages: [below](#rolling-profiles-and-labels)." },
	{ .name = "pprof", .kind = CLI_SET, CLI_AT(DO, pprof),
	  .help = "also write STEM.pb.gz (needs --out)" },
	{ .name = "keep-profiles", .kind = CLI_U64, .lo = 1, .hi = 1000000,
	  CLI_AT(DO, keep_profiles), .arg = "N",
	  .help = "keep at most N profiles in DIR, the oldest removed first (default 1000)" },
	{ .name = "max-bytes", .kind = CLI_FN, .fn = size_opt, CLI_AT(DO, max_bytes), .arg = "SIZE",
	  .help = "keep at most SIZE bytes in DIR (k, m, g; at least 64k; default 1g)" },
	{ .name = "push", .kind = CLI_STR, CLI_AT(DO, push_url), .arg = "URL",
	  .help = "POST each profile to Pyroscope's ingest API at URL (http:// or https://; "
		  "URL/ingest?name=APP{labels}&format=pprof...)",
	  .doc = "Setup: [below](#rolling-profiles-and-labels)." },
	{ .name = "push-app", .kind = CLI_STR, CLI_AT(DO, push_app), .arg = "NAME",
	  .help = "application name in Pyroscope (default: the JVM's service)" },
	{ .name = "push-queue", .kind = CLI_U64, .lo = 1, .hi = 100000, .unit = "profiles",
	  CLI_AT(DO, push_queue), .arg = "N",
	  .help = "profiles waiting for the server at most (default 64)" },
	{ .name = "freq", .key = 'F', .kind = CLI_U64, .lo = 1, .hi = 10000, .unit = "Hz",
	  CLI_AT(DO, freq), .arg = "HZ",
	  .help = "sampling frequency of rolling profiles (default 99)" },
	{ .name = "host-name", .kind = CLI_STR, CLI_AT(DO, host_name), .arg = "NAME",
	  .help = "host label of profiles (default: this host's name)" },
	{ 0 },
};
/* clang-format on */

static const struct cli_group watch_groups[] = {
	{ NULL, daemon_rows, 0 },
	{ "Rolling profiles (a sampling thread of its own; map upkeep never waits for it):",
	  profile_rows, 0 },
};

static void opts_init(void *opts)
{
	daemon_opts_init(opts);
}

const struct cli_cmd cmd_watch_cli = {
	.name = CMD,
	.usage = "Usage: fgcollect watch [--socket PATH] [--keep-exited DURATION] [--max-jvms N]\n"
		 "       [--ctl PATH] [--profile-every DURATION (--out DIR | --push URL)]\n"
		 "\n"
		 "Serve every JVM started with -agentpath:libfgagent.so on this host and keep its\n"
		 "/tmp/perf-<hostpid>.map current for stock perf, bcc and bpftrace.\n",
	.examples = "  fgcollect watch\n"
		    "  fgcollect --watch --keep-exited 10m\n"
		    "  fgcollect watch --profile-every 1m --out /var/lib/fgcollect/profiles\n"
		    "  fgcollect watch --profile-every 15s --push http://pyroscope:4040\n"
		    "  fgcollect watch --profile-every 1m --event cpu,offcpu --out "
		    "/var/lib/fgcollect/p\n"
		    "  fgcollect watch --profile-every 15s --event cpu,alloc,lock --push "
		    "http://pyroscope:4040\n",
	CLI_CMD_OPTS(watch_groups, DO, opts_init),
};

/* The options that only make sense together. 0, or -1 (printed). */
static int check_opts(const struct daemon_opts *o, const struct cli_seen *seen)
{
	if (cli_given(&cmd_watch_cli, seen, "switch-rate") &&
	    cli_given(&cmd_watch_cli, seen, "switch-period")) {
		fg_err(CMD, "give --switch-rate or --switch-period, not both");
		return -1;
	}
	if (!o->profile_ns && (o->out_dir || o->push_url || o->pprof)) {
		fg_err(CMD, "--out, --push and --pprof need --profile-every DURATION");
		return -1;
	}
	if (o->profile_ns && !o->out_dir && !o->push_url) {
		fg_err(CMD, "--profile-every needs somewhere to send profiles: --out DIR and/or "
			    "--push URL");
		return -1;
	}
	if (o->pprof && !o->out_dir) {
		fg_err(CMD, "--pprof writes .pb.gz files next to the others: give --out DIR");
		return -1;
	}
	if (o->push_url && strncmp(o->push_url, "http://", 7) != 0 &&
	    strncmp(o->push_url, "https://", 8) != 0) {
		fg_err(CMD,
		       "--push '%s': expected an http:// or https:// URL of a Pyroscope "
		       "server (or Alloy's pyroscope.receive_http)",
		       o->push_url);
		return -1;
	}
	return 0;
}

/* 0 to go on, -1 when --help was printed, or an exit status (the error printed). */
static int parse_args(int argc, char **argv, struct daemon_opts *o)
{
	struct cli_seen seen;
	int rv = cli_parse(&cmd_watch_cli, argc, argv, o, &seen);

	if (rv)
		return rv;
	if (optind != argc) {
		fg_err(CMD, "unexpected argument '%s'", argv[optind]);
		cli_usage(&cmd_watch_cli, stderr);
		return FG_EXIT_USAGE;
	}
	return check_opts(o, &seen) == 0 ? 0 : FG_EXIT_USAGE;
}

static void log_line(void *arg, const char *line)
{
	(void)arg;
	fg_err(CMD, "%s", line);
}

int cmd_watch(int argc, char **argv)
{
	struct daemon_opts o;
	int rv;

	daemon_opts_init(&o);
	o.log = log_line;
	rv = parse_args(argc, argv, &o);
	if (rv)
		return rv < 0 ? FG_EXIT_OK : rv;
	return daemon_run(&o);
}
