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

static const char usage_text[] =
	"Usage: fgcollect watch [--socket PATH] [--keep-exited DURATION] [--max-jvms N]\n"
	"                       [--ctl PATH] [--profile-every DURATION (--out DIR | --push URL)]\n"
	"Serve every JVM started with -agentpath:libfgagent.so on this host and keep its\n"
	"/tmp/perf-<hostpid>.map current for stock perf, bcc and bpftrace.\n\n"
	"  -s, --socket PATH         agent socket (default " FG_DEFAULT_SOCKET ")\n"
	"  -k, --keep-exited DURATION keep the map of an exited JVM this long, then remove it\n"
	"                            (30s, 10m, 1h; default 1h)\n"
	"  -n, --max-jvms N          connections served at once (default 1024)\n"
	"  -c, --ctl PATH            root-only control socket for `fgcollect record`\n"
	"                            (default " CTL_DEFAULT_PATH ")\n"
	"      --map-dir DIR         write maps in DIR instead of /tmp (testing)\n"
	"      --watchdog-ms MS      listener self-check period (default 1000, 0 = off)\n"
	"      --sandbox-uid U[:G]   ids of the socket's confined process (65534)\n"
	"      --no-sandbox          serve the socket here, unconfined\n"
	"  -q, --quiet               no per-JVM log lines\n"
	"\nRolling profiles (a sampling thread of its own; map upkeep never waits for it):\n"
	"  -P, --profile-every DURATION  cut one profile per connected JVM and event every\n"
	"                            DURATION (10s, 1m, ...); needs --out and/or --push\n"
	"  -e, --event LIST          what the profiles measure: cpu, offcpu, wall, alloc, live,\n"
	"                            lock, or several comma-separated (cpu,alloc: one profile\n"
	"                            of each per JVM and interval); default cpu. offcpu, wall\n"
	"                            and lock count microseconds, alloc and live bytes (see\n"
	"                            record --help)\n"
	"      --alloc-interval BYTES alloc/live: mean bytes between samples (default 524288)\n"
	"      --alloc-depth N       alloc/live/lock: frames taken of a stack (default 128)\n"
	"      --lock-threshold US   lock: leave out waits shorter than US microseconds\n"
	"      --min-block US        offcpu/wall: leave out waits shorter than US microseconds\n"
	"      --switch-rate HZ      offcpu/wall: about HZ stacks a second in all, each by a\n"
	"                            chance its weight undoes (default 25; 0: every switch)\n"
	"      --switch-period N     offcpu/wall: instead, each switch by chance 1/N, weighed\n"
	"                            N times (per thread without BPF: every Nth)\n"
	"      --per-thread          each thread's stacks under its name (the default)\n"
	"      --no-per-thread       no thread-name root frame: the threads' stacks merge\n"
	"  -o, --out DIR             write STEM.folded and STEM.svg per JVM, interval and event,\n"
	"                            and DIR/index.html (DIR is created 0755; it must be ours\n"
	"                            and writable by nobody else). STEM = UTC start _ service _\n"
	"                            container (12) _ host PID _ host name, then .offcpu,\n"
	"                            .wall, .alloc, .live or .lock (nothing for cpu)\n"
	"      --pprof               also write STEM.pb.gz\n"
	"      --keep-profiles N     keep at most N profiles in DIR, oldest removed (default 1000)\n"
	"      --max-bytes SIZE      keep at most SIZE bytes in DIR (k, m, g; default 1g)\n"
	"      --push URL            POST each profile to Pyroscope's ingest API at URL\n"
	"                            (URL/ingest?name=APP{labels}&format=pprof...)\n"
	"      --push-app NAME       application name in Pyroscope (default: the JVM's service)\n"
	"      --push-queue N        profiles waiting for the server at most (default 64)\n"
	"  -F, --freq HZ             sampling frequency of rolling profiles (default 99)\n"
	"      --host-name NAME      host label of profiles (default: this host's name)\n"
	"  -h, --help                this text\n\n"
	"Examples:\n"
	"  fgcollect watch\n"
	"  fgcollect --watch --keep-exited 10m\n"
	"  fgcollect watch --profile-every 1m --out /var/lib/fgcollect/profiles\n"
	"  fgcollect watch --profile-every 15s --push http://pyroscope:4040\n"
	"  fgcollect watch --profile-every 1m --event cpu,offcpu --out /var/lib/fgcollect/p\n"
	"  fgcollect watch --profile-every 15s --event cpu,alloc,lock --push http://pyroscope:4040\n";

/* "30s", "10m", "1h", "2d" or plain seconds -> ns. 0 or -EINVAL. */
static int parse_duration(const char *s, uint64_t *ns)
{
	char *end;
	unsigned long long v;
	uint64_t mul = NSEC;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
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

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
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

/* One of the daemon's options: 1 when c is one, 0 when it is not, -1 for a bad value (printed). */
/* --sandbox-uid UID[:GID]: neither 0 (GID defaults to UID). 1, or -1 (said). */
static int sandbox_ids(const char *arg, struct daemon_opts *o)
{
	char uid[16];
	const char *colon = strchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : strlen(arg);

	if (n >= sizeof(uid)) {
		fg_err("watch", "--sandbox-uid '%s': expected UID or UID:GID", arg);
		return -1;
	}
	memcpy(uid, arg, n);
	uid[n] = '\0';
	if (cli_u64("watch", "sandbox-uid", uid, 1, 4294967294u, NULL, &o->sandbox_uid) < 0)
		return -1;
	o->sandbox_gid = o->sandbox_uid;
	if (colon &&
	    cli_u64("watch", "sandbox-uid", colon + 1, 1, 4294967294u, NULL, &o->sandbox_gid) < 0)
		return -1;
	return 1;
}

static int daemon_opt(int c, const char *arg, struct daemon_opts *o)
{
	switch (c) {
	case 's':
		o->socket = arg;
		return 1;
	case 'k':
		if (parse_duration(arg, &o->keep_exited_ns) != 0) {
			fg_err("watch",
			       "--keep-exited '%s': expected a duration like 30s, 10m or 1h", arg);
			return -1;
		}
		return 1;
	case 'n':
		return cli_u64("watch", "max-jvms", arg, 1, 65536, NULL, &o->max_jvms);
	case 'c':
		o->ctl = arg;
		return 1;
	case 'M':
		o->map_dir = arg;
		return 1;
	case 'W':
		return cli_u64("watch", "watchdog-ms", arg, 0, 3600000, "ms", &o->watchdog_ms);
	case 'q':
		o->quiet = true;
		return 1;
	case 'u':
		return sandbox_ids(arg, o);
	case 'N':
		o->no_sandbox = true;
		return 1;
	default:
		return 0;
	}
}

/* One of the rolling-profile options: as daemon_opt. */
static int profile_opt(int c, const char *arg, struct daemon_opts *o)
{
	switch (c) {
	case 'P':
		if (parse_duration(arg, &o->profile_ns) != 0) {
			fg_err("watch",
			       "--profile-every '%s': expected a duration like 10s, 1m or 1h", arg);
			return -1;
		}
		return 1;
	case 'o':
		o->out_dir = arg;
		return 1;
	case 'B':
		o->pprof = true;
		return 1;
	case 'K':
		return cli_u64("watch", "keep-profiles", arg, 1, 1000000, NULL, &o->keep_profiles);
	case 'X':
		if (parse_size(arg, &o->max_bytes) != 0) {
			fg_err("watch",
			       "--max-bytes '%s': expected a size like 500m or 2g (at least 64k)",
			       arg);
			return -1;
		}
		return 1;
	case 'U':
		o->push_url = arg;
		return 1;
	case 'A':
		o->push_app = arg;
		return 1;
	case 'Q':
		return cli_u64("watch", "push-queue", arg, 1, 100000, "profiles", &o->push_queue);
	case 'F':
		return cli_u64("watch", "freq", arg, 1, 10000, "Hz", &o->freq);
	case 'H':
		o->host_name = arg;
		return 1;
	case 'e':
		return session_cli_event_list("watch", arg, &o->events) == 0 ? 1 : -1;
	case 'm': {
		uint64_t us;
		int rv = cli_u64("watch", "min-block", arg, 0, 3600ull * 1000000, "microseconds",
				 &us);

		if (rv == 1)
			o->min_block_ns = us * 1000;
		return rv;
	}
	case 'S':
		if (o->switch_rate != SESSION_SWITCH_RATE_AUTO) {
			fg_err("watch", "give --switch-rate or --switch-period, not both");
			return -1;
		}
		return cli_u64("watch", "switch-period", arg, 1, 1000000, NULL, &o->switch_period);
	case 'R':
		if (o->switch_period) {
			fg_err("watch", "give --switch-rate or --switch-period, not both");
			return -1;
		}
		return cli_u64("watch", "switch-rate", arg, 0, SWITCHBPF_MAX_RATE,
			       "stacks a second", &o->switch_rate);
	case 'I':
		return cli_u64("watch", "alloc-interval", arg, 1, 1ull << 30, "bytes",
			       &o->alloc_interval);
	case 'D':
		return cli_u64("watch", "alloc-depth", arg, 1, FGP_MAX_EVENT_DEPTH, "frames",
			       &o->alloc_depth);
	case 'L':
		return cli_u64("watch", "lock-threshold", arg, 0, 3600ull * 1000000, "microseconds",
			       &o->lock_threshold_us);
	case 'T':
		o->merge_threads = false;
		return 1;
	case 'G':
		o->merge_threads = true;
		return 1;
	default:
		return 0;
	}
}

/* The rolling-profile options that only make sense together. 0, or -1 (printed). */
static int check_profile_opts(const struct daemon_opts *o)
{
	if (!o->profile_ns && (o->out_dir || o->push_url || o->pprof)) {
		fg_err("watch", "--out, --push and --pprof need --profile-every DURATION");
		return -1;
	}
	if (o->profile_ns && !o->out_dir && !o->push_url) {
		fg_err("watch",
		       "--profile-every needs somewhere to send profiles: --out DIR and/or "
		       "--push URL");
		return -1;
	}
	if (o->pprof && !o->out_dir) {
		fg_err("watch", "--pprof writes .pb.gz files next to the others: give --out DIR");
		return -1;
	}
	if (o->push_url && strncmp(o->push_url, "http://", 7) != 0 &&
	    strncmp(o->push_url, "https://", 8) != 0) {
		fg_err("watch",
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
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "keep-exited", required_argument, NULL, 'k' },
		{ "max-jvms", required_argument, NULL, 'n' },
		{ "ctl", required_argument, NULL, 'c' },
		{ "map-dir", required_argument, NULL, 'M' },
		{ "watchdog-ms", required_argument, NULL, 'W' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "sandbox-uid", required_argument, NULL, 'u' },
		{ "no-sandbox", no_argument, NULL, 'N' },
		{ "profile-every", required_argument, NULL, 'P' },
		{ "out", required_argument, NULL, 'o' },
		{ "pprof", no_argument, NULL, 'B' },
		{ "keep-profiles", required_argument, NULL, 'K' },
		{ "max-bytes", required_argument, NULL, 'X' },
		{ "push", required_argument, NULL, 'U' },
		{ "push-app", required_argument, NULL, 'A' },
		{ "push-queue", required_argument, NULL, 'Q' },
		{ "freq", required_argument, NULL, 'F' },
		{ "host-name", required_argument, NULL, 'H' },
		{ "event", required_argument, NULL, 'e' },
		{ "min-block", required_argument, NULL, 'm' },
		{ "switch-period", required_argument, NULL, 'S' },
		{ "switch-rate", required_argument, NULL, 'R' },
		{ "per-thread", no_argument, NULL, 'T' },
		{ "no-per-thread", no_argument, NULL, 'G' },
		{ "alloc-interval", required_argument, NULL, 'I' },
		{ "alloc-depth", required_argument, NULL, 'D' },
		{ "lock-threshold", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c, rv;

	optind = 1;
	while ((c = getopt_long(argc, argv, "s:k:n:c:qP:o:F:e:h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			return -1;
		}
		if ((rv = daemon_opt(c, optarg, o)) == 0)
			rv = profile_opt(c, optarg, o);
		if (rv < 0)
			return FG_EXIT_USAGE;
		if (rv == 0) {
			fputs(usage_text, stderr);
			return FG_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fg_err("watch", "unexpected argument '%s'", argv[optind]);
		fputs(usage_text, stderr);
		return FG_EXIT_USAGE;
	}
	return check_profile_opts(o) == 0 ? 0 : FG_EXIT_USAGE;
}

static void log_line(void *arg, const char *line)
{
	(void)arg;
	fg_err("watch", "%s", line);
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
