// SPDX-License-Identifier: MIT
/*
 * cmd_watch.c - `fgcollect watch`: serve every JVM on this host and keep its
 * /tmp/perf-<hostpid>.map current. Wires receive -> jvmset (code tables, maps) -> ctl; prints.
 *
 * Exit (SIGINT/SIGTERM): dirty maps are written one last time and every map stays in place: the
 * map of a running JVM stays valid for stock perf (its code changes from then on are not
 * tracked) until a restarted collector, replayed by the agents, replaces it; maps of exited JVMs
 * are no longer expired by anyone. A summary of counters goes to stderr.
 *
 * Invariant: the one thread that runs the loop below is the only one touching jvmset and ctl.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_opt.h"
#include "cmds.h"
#include "ctl_server.h"
#include "fgproto.h"
#include "fgsocket.h"
#include "handoff.h"
#include "jvmset.h"
#include "perfmap.h"
#include "profdir.h"
#include "push.h"
#include "receive.h"
#include "roller.h"
#include "session_cli.h"
#include "switchbpf.h"
#include "util.h"

#define NSEC 1000000000ull

struct env {
	const char *socket;
	const char *ctl;
	const char *map_dir;
	uint64_t keep_exited_ns;
	uint64_t max_jvms;
	uint64_t watchdog_ms;
	bool quiet;
	/* rolling profiles */
	uint64_t profile_ns;
	const char *out_dir;
	bool pprof;
	const char *push_url;
	const char *push_app;
	uint64_t push_queue;
	uint64_t keep_profiles;
	uint64_t max_bytes;
	uint64_t freq;
	const char *host_name;
	char host_buf[65];
	unsigned events; /* 1 << PROF_EVENT_x each: one roller per event */
	uint64_t min_block_ns;
	uint64_t switch_period; /* 0: not given */
	uint64_t switch_rate;	/* SESSION_SWITCH_RATE_AUTO: not given */
	bool merge_threads;
};

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
	"  -q, --quiet               no per-JVM log lines\n"
	"\nRolling profiles (a sampling thread of its own; map upkeep never waits for it):\n"
	"  -P, --profile-every DURATION  cut one profile per connected JVM and event every\n"
	"                            DURATION (10s, 1m, ...); needs --out and/or --push\n"
	"  -e, --event LIST          what the profiles measure: cpu, offcpu, wall, or several\n"
	"                            comma-separated (cpu,offcpu: one profile of each per JVM\n"
	"                            and interval); default cpu. offcpu and wall count\n"
	"                            microseconds (see record --help)\n"
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
	"                            container (12) _ host PID _ host name, then .offcpu or\n"
	"                            .wall for those events (nothing for cpu)\n"
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
	"  fgcollect watch --profile-every 1m --event cpu,offcpu --out /var/lib/fgcollect/p\n";

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

static void short_id(const char *id, char *out)
{
	if (!id[0]) {
		strcpy(out, "-");
		return;
	}
	memcpy(out, id, 12); /* docker's short form */
	out[12] = '\0';
}

static void log_event(void *arg, enum jvmset_event ev, const struct jvm_info *ji, int err,
		      const char *why)
{
	const struct env *env = arg;
	char cid[16];

	short_id(ji->container_id, cid);
	switch (ev) {
	case JVMSET_CONNECT:
		if (env->quiet)
			break;
		fg_err("watch",
		       "connect: pid %u (container pid %u, container %s) service %s, JVM %s, "
		       "agent %s, PreserveFramePointer %s, DebugNonSafepoints %s",
		       ji->host_pid, ji->ns_pid, cid, ji->service[0] ? ji->service : "-",
		       ji->jvm_version, ji->agent_version,
		       ji->hello_flags & FGP_HELLO_PRESERVE_FRAME_POINTER ? "on" : "off",
		       ji->hello_flags & FGP_HELLO_DEBUG_NON_SAFEPOINTS ? "on" : "off");
		if (!(ji->hello_flags & FGP_HELLO_PRESERVE_FRAME_POINTER))
			fg_err("watch",
			       "warning: pid %u runs without -XX:+PreserveFramePointer: stacks "
			       "through JIT code will be truncated; add the flag to its command line",
			       ji->host_pid);
		break;
	case JVMSET_DISCONNECT:
		if (env->quiet)
			break;
		fg_err("watch",
		       "disconnect: pid %u (container pid %u, container %s): %s; %llu records, "
		       "%llu malformed, %zu live methods",
		       ji->host_pid, ji->ns_pid, cid,
		       ji->exited ? "process exited, map kept until expiry"
				  : "agent closed its connection, process alive, map kept",
		       (unsigned long long)ji->records, (unsigned long long)ji->bad_records,
		       ji->tab.live);
		break;
	case JVMSET_EXIT:
		if (!env->quiet)
			fg_err("watch", "exit: pid %u (container pid %u, container %s)",
			       ji->host_pid, ji->ns_pid, cid);
		break;
	case JVMSET_EXPIRE:
		if (!env->quiet)
			fg_err("watch", "expire: pid %u: map removed", ji->host_pid);
		break;
	case JVMSET_REJECT:
		fg_err("watch", "rejected connection from pid %u: %s", ji->host_pid,
		       why ? why : "?");
		break;
	case JVMSET_MAP_ERROR:
		fg_err("watch", "cannot write the perf map of pid %u: %s (old map kept, retrying)",
		       ji->host_pid, strerror(-err));
		break;
	case JVMSET_MAP_OK:
		fg_err("watch", "perf map of pid %u written again (%llu writes failed: %s)",
		       ji->host_pid, (unsigned long long)ji->map_errors, strerror(-err));
		break;
	case JVMSET_BAD_PEER:
		fg_err("watch", "dropped pid %u: %s", ji->host_pid, why ? why : "malformed input");
		break;
	}
}

/* One of the daemon's options: 1 when c is one, 0 when it is not, -1 for a bad value (printed). */
static int daemon_opt(int c, const char *arg, struct env *env)
{
	switch (c) {
	case 's':
		env->socket = arg;
		return 1;
	case 'k':
		if (parse_duration(arg, &env->keep_exited_ns) != 0) {
			fg_err("watch",
			       "--keep-exited '%s': expected a duration like 30s, 10m or 1h", arg);
			return -1;
		}
		return 1;
	case 'n':
		return cli_u64("watch", "max-jvms", arg, 1, 65536, NULL, &env->max_jvms);
	case 'c':
		env->ctl = arg;
		return 1;
	case 'M':
		env->map_dir = arg;
		return 1;
	case 'W':
		return cli_u64("watch", "watchdog-ms", arg, 0, 3600000, "ms", &env->watchdog_ms);
	case 'q':
		env->quiet = true;
		return 1;
	default:
		return 0;
	}
}

/* One of the rolling-profile options: as daemon_opt. */
static int profile_opt(int c, const char *arg, struct env *env)
{
	switch (c) {
	case 'P':
		if (parse_duration(arg, &env->profile_ns) != 0) {
			fg_err("watch",
			       "--profile-every '%s': expected a duration like 10s, 1m or 1h", arg);
			return -1;
		}
		return 1;
	case 'o':
		env->out_dir = arg;
		return 1;
	case 'B':
		env->pprof = true;
		return 1;
	case 'K':
		return cli_u64("watch", "keep-profiles", arg, 1, 1000000, NULL,
			       &env->keep_profiles);
	case 'X':
		if (parse_size(arg, &env->max_bytes) != 0) {
			fg_err("watch",
			       "--max-bytes '%s': expected a size like 500m or 2g (at least 64k)",
			       arg);
			return -1;
		}
		return 1;
	case 'U':
		env->push_url = arg;
		return 1;
	case 'A':
		env->push_app = arg;
		return 1;
	case 'Q':
		return cli_u64("watch", "push-queue", arg, 1, 100000, "profiles", &env->push_queue);
	case 'F':
		return cli_u64("watch", "freq", arg, 1, 10000, "Hz", &env->freq);
	case 'H':
		env->host_name = arg;
		return 1;
	case 'e':
		return session_cli_event_list("watch", arg, &env->events) == 0 ? 1 : -1;
	case 'm': {
		uint64_t us;
		int rv = cli_u64("watch", "min-block", arg, 0, 3600ull * 1000000, "microseconds",
				 &us);

		if (rv == 1)
			env->min_block_ns = us * 1000;
		return rv;
	}
	case 'S':
		if (env->switch_rate != SESSION_SWITCH_RATE_AUTO) {
			fg_err("watch", "give --switch-rate or --switch-period, not both");
			return -1;
		}
		return cli_u64("watch", "switch-period", arg, 1, 1000000, NULL,
			       &env->switch_period);
	case 'R':
		if (env->switch_period) {
			fg_err("watch", "give --switch-rate or --switch-period, not both");
			return -1;
		}
		return cli_u64("watch", "switch-rate", arg, 0, SWITCHBPF_MAX_RATE,
			       "stacks a second", &env->switch_rate);
	case 'T':
		env->merge_threads = false;
		return 1;
	case 'N':
		env->merge_threads = true;
		return 1;
	default:
		return 0;
	}
}

/* The rolling-profile options that only make sense together. 0, or -1 (printed). */
static int check_profile_opts(const struct env *env)
{
	if (!env->profile_ns && (env->out_dir || env->push_url || env->pprof)) {
		fg_err("watch", "--out, --push and --pprof need --profile-every DURATION");
		return -1;
	}
	if (env->profile_ns && !env->out_dir && !env->push_url) {
		fg_err("watch",
		       "--profile-every needs somewhere to send profiles: --out DIR and/or "
		       "--push URL");
		return -1;
	}
	if (env->pprof && !env->out_dir) {
		fg_err("watch", "--pprof writes .pb.gz files next to the others: give --out DIR");
		return -1;
	}
	if (env->push_url && strncmp(env->push_url, "http://", 7) != 0 &&
	    strncmp(env->push_url, "https://", 8) != 0) {
		fg_err("watch",
		       "--push '%s': expected an http:// or https:// URL of a Pyroscope "
		       "server (or Alloy's pyroscope.receive_http)",
		       env->push_url);
		return -1;
	}
	return 0;
}

/* 0 to go on, -1 when --help was printed, or an exit status (the error printed). */
static int parse_args(int argc, char **argv, struct env *env)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "keep-exited", required_argument, NULL, 'k' },
		{ "max-jvms", required_argument, NULL, 'n' },
		{ "ctl", required_argument, NULL, 'c' },
		{ "map-dir", required_argument, NULL, 'M' },
		{ "watchdog-ms", required_argument, NULL, 'W' },
		{ "quiet", no_argument, NULL, 'q' },
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
		{ "no-per-thread", no_argument, NULL, 'N' },
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
		if ((rv = daemon_opt(c, optarg, env)) == 0)
			rv = profile_opt(c, optarg, env);
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
	return check_profile_opts(env) == 0 ? 0 : FG_EXIT_USAGE;
}

static void roller_log(void *arg, const char *line)
{
	(void)arg;
	fg_err("watch", "%s", line);
}

/* Start the rolling profiles: directory, pusher, then the sampling thread. */
static int start_profiles(struct env *env, struct profdir **dir, struct push **push,
			  struct roller **roller)
{
	char evs[32] = "";
	int rv;

	if (!env->host_name) {
		if (gethostname(env->host_buf, sizeof(env->host_buf) - 1) != 0)
			snprintf(env->host_buf, sizeof(env->host_buf), "unknown");
		env->host_name = env->host_buf;
	}
	if (env->out_dir) {
		struct profdir_opts po = { .path = env->out_dir,
					   .keep = (size_t)env->keep_profiles,
					   .max_bytes = env->max_bytes };

		if ((rv = profdir_open(&po, dir)) != 0) {
			fg_err("watch", "cannot use %s for profiles: %s%s", env->out_dir,
			       strerror(-rv),
			       rv == -EPERM
				       ? " (it must be a directory owned by us that nobody else "
					 "can write, not a symlink)"
				       : "");
			return rv;
		}
	}
	if (env->push_url) {
		struct push_opts pu = { .url = env->push_url,
					.app = env->push_app,
					.max_queue = (size_t)env->push_queue };

		if ((rv = push_open(&pu, push)) != 0) {
			fg_err("watch", "cannot push to %s: %s", env->push_url, strerror(-rv));
			return rv;
		}
	}
	for (unsigned ev = 0, first = 1; ev < PROF_NEVENTS; ev++) {
		struct roller_opts ro = { .ctl_path = env->ctl,
					  .interval_ns = env->profile_ns,
					  .freq_hz = (unsigned)env->freq,
					  .pprof_files = env->pprof,
					  .dir = *dir,
					  .push = *push,
					  .hostname = env->host_name,
					  .dir_name = env->out_dir,
					  .push_url = env->push_url,
					  .log = roller_log,
					  /* connects and exits said once, by the first */
					  .verbose = !env->quiet && first,
					  .event = ev,
					  .min_block_ns = env->min_block_ns,
					  .switch_period = (unsigned)env->switch_period,
					  .switch_rate = (unsigned)env->switch_rate,
					  .merge_threads = env->merge_threads };

		if (!(env->events & (1u << ev)))
			continue;
		/* One sampling session (a control-channel client) per event. */
		if ((rv = roller_start(&ro, &roller[ev])) != 0) {
			fg_err("watch", "cannot start the profiling thread of %s: %s",
			       prof_event_name((enum prof_event)ev), strerror(-rv));
			return rv;
		}
		snprintf(evs + strlen(evs), sizeof(evs) - strlen(evs), "%s%s", first ? "" : ",",
			 prof_event_name((enum prof_event)ev));
		first = 0;
	}
	if (!env->quiet)
		fg_err("watch", "rolling profiles every %.0f s (%s)%s%s%s%s (host %s)",
		       (double)env->profile_ns / 1e9, evs, env->out_dir ? " to " : "",
		       env->out_dir ? env->out_dir : "", env->push_url ? ", pushed to " : "",
		       env->push_url ? env->push_url : "", env->host_name);
	return 0;
}

static void stop_profiles(struct roller **roller, struct profdir *dir, struct push *push)
{
	struct roller_stats rs = { 0 };
	struct profdir_stats ds = { 0 };
	struct push_stats ps = { 0 };
	bool any = false;
	char times[160] = "";

	for (unsigned ev = 0; ev < PROF_NEVENTS; ev++) {
		struct roller_stats one;

		if (!roller[ev])
			continue;
		roller_stop(roller[ev], &one); /* cuts the last interval */
		roller[ev] = NULL;
		if (!any)
			rs.intervals = one.intervals; /* the rollers cut the same intervals */
		any = true;
		rs.profiles += one.profiles;
		if (ev == PROF_EVENT_CPU) {
			rs.samples += one.samples;
			rs.other_samples += one.other_samples;
		} else {
			/* Time profiles count microseconds, not samples. */
			snprintf(times + strlen(times), sizeof(times) - strlen(times),
				 ", %s %.3f s in %llu profiles",
				 prof_event_name((enum prof_event)ev), (double)one.samples / 1e6,
				 (unsigned long long)one.profiles);
		}
		rs.write_errors += one.write_errors;
	}
	if (!any) {
		push_close(push, 0, NULL);
		profdir_close(dir);
		return;
	}
	if (push) {
		push_close(push, 2000, &ps);
		fg_err("watch",
		       "push: %llu profiles sent, %llu failed attempts (retried), %llu dropped with "
		       "the queue full, %llu rejected by the server, %llu unsent at exit%s%s",
		       (unsigned long long)ps.sent, (unsigned long long)ps.attempts_failed,
		       (unsigned long long)ps.dropped_full, (unsigned long long)ps.dropped_rejected,
		       (unsigned long long)ps.dropped_exit,
		       ps.last_error[0] ? "; last error: " : "", ps.last_error);
	}
	if (dir)
		profdir_stats(dir, &ds);

	fg_err("watch",
	       "profiles: %llu intervals, %llu profiles, %llu samples (%llu outside known JVMs)%s, "
	       "%llu not written; directory %zu profiles, %.1f MiB (%llu removed by retention, "
	       "%llu errors)",
	       (unsigned long long)rs.intervals, (unsigned long long)rs.profiles,
	       (unsigned long long)rs.samples, (unsigned long long)rs.other_samples, times,
	       (unsigned long long)rs.write_errors, ds.sets, (double)ds.bytes / 1048576.0,
	       (unsigned long long)ds.removed, (unsigned long long)ds.errors);
	profdir_close(dir);
}

/* Create the socket's directory (0755, so containers can reach the socket) if missing. */
static int socket_dir(const char *path)
{
	char dir[4096];
	char *slash;

	if (strlen(path) >= sizeof(dir))
		return -ENAMETOOLONG;
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static void summary(struct jvmset *set, struct receive *rx, struct ctl_server *ctl)
{
	struct jvmset_counters c;
	struct receive_stats r;
	struct ctl_server_stats cs = { 0 };

	jvmset_counters(set, &c);
	receive_stats(rx, &r);
	if (ctl)
		ctl_server_stats(ctl, &cs);
	fg_err("watch",
	       "summary: %llu connections (%llu refused at the cap, %llu rejected, %llu dropped "
	       "for malformed input), %llu messages, %llu records (%llu malformed in %llu "
	       "messages), %llu map writes (%llu compactions, %llu failed, %llu out of space, %.1f "
	       "ms writing), "
	       "%llu JVMs exited, %llu expired, watchdog %llu probes / %llu failed / %llu "
	       "re-listens, control %llu clients (%llu refused uid, %llu overflowed)",
	       (unsigned long long)r.accepted, (unsigned long long)r.refused_cap,
	       (unsigned long long)c.rejected, (unsigned long long)c.bad_peers,
	       (unsigned long long)c.msgs, (unsigned long long)c.records,
	       (unsigned long long)c.bad_records, (unsigned long long)c.bad_msgs,
	       (unsigned long long)c.map_writes, (unsigned long long)c.map_compactions,
	       (unsigned long long)c.map_errors, (unsigned long long)c.map_enospc,
	       c.map_write_ns / 1e6, (unsigned long long)c.exits, (unsigned long long)c.expired,
	       (unsigned long long)r.probes, (unsigned long long)r.probe_fail,
	       (unsigned long long)r.relistens, (unsigned long long)cs.accepted,
	       (unsigned long long)cs.refused_uid, (unsigned long long)cs.overflowed);
}

/* What a running daemon holds. */
struct daemon {
	int sfd; /* SIGINT/SIGTERM */
	struct perfmap_dir *maps;
	struct jvmset *set;
	struct receive *rx;
	struct ctl_server *ctl;
	struct profdir *pdir; /* rolling profiles, when asked for */
	struct push *push;
	struct roller *roller[PROF_NEVENTS]; /* one per event asked for */
	bool want_failed;		     /* the last want file could not be written */
	struct receive_stats seen;	     /* the listener's, at the last check */
	bool told_relisten_err, told_nofd;
};

/*
 * Tables on demand: whose tables the ctl clients want now, for the agents (fgsocket.h). A file
 * that cannot be written is said once (and again after it could be written).
 */
static void tell_want(void *arg, const uint64_t *tokens, size_t n)
{
	struct daemon *d = arg;
	int rv;

	if (!d->rx)
		return;
	rv = receive_want(d->rx, tokens, n);
	if (rv != 0 && !d->want_failed)
		fg_err("watch",
		       "cannot write the want file beside the agent socket: %s; the agents of "
		       "recorded JVMs keep sending names only (no inline, frame or line tables)",
		       strerror(-rv));
	d->want_failed = rv != 0;
}

/* Open the map directory, the JVM set, the agent socket and the control socket (errors printed). */

/* The control socket's directory (ctl_server_open made sure it is ours, mode 0700). */
static int ctl_dir(const struct env *env, char *buf, size_t cap)
{
	const char *slash = strrchr(env->ctl, '/');
	size_t len = slash ? (size_t)(slash - env->ctl) : 0;

	if (!slash || len == 0 || len >= cap)
		return -EINVAL;
	memcpy(buf, env->ctl, len);
	buf[len] = '\0';
	return 0;
}

/* The maps an earlier watch left (handoff.h): expired here as if they were ours. */
static void adopt_leftovers(struct jvmset *set, const struct env *env)
{
	struct handoff_entry *e;
	char dir[4096];
	size_t n;
	int rv;

	if (ctl_dir(env, dir, sizeof(dir)) != 0)
		return;
	if ((rv = handoff_load(dir, &e, &n)) != 0)
		fg_err("watch", "ignoring %s/%s: %s", dir, HANDOFF_NAME,
		       rv == -EBADMSG ? "not a list this collector wrote" : strerror(-rv));
	else if (n && (rv = jvmset_adopt(set, e, n, fg_now_ns())) != 0)
		fg_err("watch", "cannot adopt the maps an earlier collector left: %s",
		       strerror(-rv));
	else if (n && !env->quiet)
		fg_err("watch",
		       "adopted %zu maps an earlier collector left (removed once their JVMs "
		       "have been gone for --keep-exited)",
		       n);
	free(e);
}

/* At a stop: tell the next watch which maps stay behind, so that it expires them. */
static void save_leftovers(const struct jvmset *set, const struct env *env)
{
	struct handoff_entry *e = calloc(HANDOFF_MAX, sizeof(*e));
	char dir[4096];
	size_t n;
	int rv;

	if (!e || ctl_dir(env, dir, sizeof(dir)) != 0) {
		free(e);
		return;
	}
	n = jvmset_leftovers(set, e, HANDOFF_MAX);
	if ((rv = handoff_save(dir, e, n)) != 0)
		fg_err("watch",
		       "cannot leave the list of %zu maps for the next collector in %s: %s "
		       "(their JVMs' maps stay until removed by hand)",
		       n, dir, strerror(-rv));
	free(e);
}

static int start(struct daemon *d, struct env *env, struct jvmset_observer *log)
{
	struct jvmset_opts jo = { .keep_exited_ns = env->keep_exited_ns,
				  .want = tell_want,
				  .want_arg = d };
	struct receive_opts ro = { .path = env->socket,
				   .max_peers = (unsigned)env->max_jvms,
				   .watchdog_ms = (unsigned)env->watchdog_ms };
	int rv;

	if ((rv = perfmap_dir_open(env->map_dir, &d->maps)) != 0) {
		fg_err("watch", "cannot use %s for perf maps: %s%s", env->map_dir, strerror(-rv),
		       rv == -EPERM ? " (it must be owned by root and sticky if world-writable)"
				    : "");
		return rv;
	}
	jo.maps = d->maps;
	if ((rv = jvmset_new(&jo, &d->set)) != 0 || (rv = jvmset_observe(d->set, log)) != 0) {
		fg_err("watch", "cannot start: %s", strerror(-rv));
		return rv;
	}
	if ((rv = socket_dir(env->socket)) != 0) {
		fg_err("watch", "cannot create the directory of %s: %s", env->socket,
		       strerror(-rv));
		return rv;
	}
	if ((rv = receive_open(&ro, &d->rx)) != 0) {
		fg_err("watch", "cannot listen on %s: %s%s", env->socket, strerror(-rv),
		       rv == -EADDRINUSE ? " (another fgcollect watch or record serves it)" : "");
		return rv;
	}
	if ((rv = ctl_server_open(env->ctl, d->set, &d->ctl)) != 0) {
		fg_err("watch", "cannot open the control socket %s: %s%s", env->ctl, strerror(-rv),
		       rv == -EPERM ? " (its directory must be ours and mode 0700)" : "");
		return rv;
	}
	adopt_leftovers(d->set, env);
	if (!env->quiet)
		fg_err("watch", "listening on %s (control %s), maps in %s", env->socket, env->ctl,
		       env->map_dir);
	/* Serving agents needs none of them; rolling profiles and record/top here do. */
	cli_warn_privs("watch", env->profile_ns && (env->events & ~(1u << PROF_EVENT_CPU)));
	if (env->profile_ns && start_profiles(env, &d->pdir, &d->push, d->roller) != 0)
		return -1;
	return 0;
}

/*
 * The listener's health, once a second: a re-listen (the socket file was removed, or the
 * listener stopped accepting) is told and the files beside the socket are written again; a
 * failing re-listen and running out of descriptors are told once per episode.
 */
static void check_listener(struct daemon *d, const char *socket)
{
	struct receive_stats r;

	receive_stats(d->rx, &r);
	if (r.relistens > d->seen.relistens) {
		fg_err("watch",
		       "listening again on %s (the socket file was gone or the listener stopped "
		       "accepting); agents reconnect and replay",
		       socket);
		if (receive_refresh(d->rx) != 0)
			fg_err("watch", "cannot write the files beside %s again", socket);
		d->told_relisten_err = false;
	}
	if (r.relisten_err > d->seen.relisten_err && !d->told_relisten_err) {
		fg_err("watch", "cannot listen on %s again: %s; retrying every second", socket,
		       strerror(-r.last_err));
		d->told_relisten_err = true;
	}
	if (r.probe_nofd > d->seen.probe_nofd && !d->told_nofd) {
		struct rlimit rl = { 0 };

		getrlimit(RLIMIT_NOFILE, &rl);
		fg_err("watch",
		       "out of file descriptors (%s, limit %llu): new agents cannot connect and maps "
		       "cannot be written until some are free (raise `ulimit -n`)",
		       strerror(-r.last_err), (unsigned long long)rl.rlim_cur);
		d->told_nofd = true;
	} else if (r.probe_nofd == d->seen.probe_nofd && r.probes > d->seen.probes &&
		   d->told_nofd) {
		fg_err("watch", "file descriptors available again");
		d->told_nofd = false;
	}
	d->seen = r;
}

/* A killed collector's temporary map files: older than this, no live writer's. */
#define TEMP_MIN_AGE_S 10
#define SWEEP_NS (60 * NSEC)

static void sweep_temps(struct daemon *d, const char *map_dir)
{
	int n = perfmap_sweep(d->maps, TEMP_MIN_AGE_S);

	if (n > 0)
		fg_err("watch", "removed %d temporary map file%s a killed collector left in %s", n,
		       n == 1 ? "" : "s", map_dir);
}

/* Serve agents and control clients until SIGINT/SIGTERM. 0, or -errno of poll (printed). */
static int serve(struct daemon *d, const struct env *env)
{
	struct pollfd fds[3 + CTL_MAX_CLIENTS + 1];
	uint64_t next_check = 0, next_sweep = 0;

	for (;;) {
		uint64_t now = fg_now_ns(), next = jvmset_tick(d->set, now);

		if (now >= next_check) {
			check_listener(d, env->socket);
			next_check = now + NSEC;
		}
		if (now >= next_sweep) {
			sweep_temps(d, env->map_dir);
			next_sweep = now + SWEEP_NS;
		}
		if (next > next_check)
			next = next_check;
		int timeout = next > now ? (int)((next - now + 999999) / 1000000) : 0;
		size_t n = 0, ctl0;

		n += (size_t)receive_pollfds(d->rx, fds);
		fds[n++] = (struct pollfd){ .fd = d->sfd, .events = POLLIN };
		ctl0 = n;
		n += ctl_server_pollfds(d->ctl, fds + n, FG_ARRAY_SIZE(fds) - n);
		if (poll(fds, n, timeout) < 0 && errno != EINTR) {
			fg_err("watch", "poll: %s", strerror(errno));
			return -errno;
		}
		if (fds[2].revents & POLLIN)
			break;
		if (jvmset_pump(d->set, d->rx, fg_now_ns()))
			ctl_server_flush(d->ctl);
		ctl_server_handle(d->ctl, fds + ctl0, n - ctl0);
	}
	jvmset_flush(d->set, fg_now_ns());
	return 0;
}

/*
 * nng 1.5.2's nng_close() can wait forever for a pipe its poll loop lost track of: seen after the
 * daemon was frozen (SIGSTOP) while agents re-dialled (gdb: the main thread in nng_close, every
 * nng thread idle). By then every map is written and the summary printed, so the sockets get
 * CLOSE_GUARD_MS to close and the process exits without them after that.
 */
#define CLOSE_GUARD_MS 2000

static int guard_status;

static void *close_guard(void *arg)
{
	struct timespec ts = { CLOSE_GUARD_MS / 1000, (CLOSE_GUARD_MS % 1000) * 1000000L };

	(void)arg;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	fg_err("watch",
	       "nng did not close its sockets within %d ms (nng 1.5.2); exiting without them",
	       CLOSE_GUARD_MS);
	fflush(stdout);
	_exit(guard_status);
}

static void start_close_guard(int status)
{
	pthread_attr_t a;
	pthread_t t;

	guard_status = status;
	if (pthread_attr_init(&a) != 0)
		return;
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, close_guard, NULL) != 0)
		fg_err("watch", "cannot start the close guard: exit may wait for nng");
	pthread_attr_destroy(&a);
}

int cmd_watch(int argc, char **argv)
{
	struct env env = { .socket = FG_DEFAULT_SOCKET,
			   .ctl = CTL_DEFAULT_PATH,
			   .map_dir = "/tmp",
			   .keep_exited_ns = 3600 * NSEC,
			   .max_jvms = 1024,
			   .watchdog_ms = 1000,
			   .push_queue = 64,
			   .freq = 99,
			   .switch_rate = SESSION_SWITCH_RATE_AUTO,
			   .events = 1u << PROF_EVENT_CPU };
	struct jvmset_observer log = { .event = log_event, .arg = &env };
	struct daemon d = { .sfd = -1 };
	sigset_t sigs;
	int rv, status = FG_EXIT_FAIL;

	rv = parse_args(argc, argv, &env);
	if (rv)
		return rv < 0 ? FG_EXIT_OK : rv;
	/* Before any thread exists (nng's, the watchdog), so that all of them inherit the mask
	 * and SIGINT/SIGTERM reach only the signalfd. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	d.sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d.sfd < 0) {
		fg_err("watch", "signalfd: %s", strerror(errno));
		return FG_EXIT_FAIL;
	}
	if (start(&d, &env, &log) == 0 && serve(&d, &env) == 0)
		status = FG_EXIT_OK;
	/* The roller is a client of ctl: stopped first (its last cut reads from ctl's tables). */
	stop_profiles(d.roller, d.pdir, d.push);
	if (d.rx && d.set)
		summary(d.set, d.rx, d.ctl);
	if (d.set && d.ctl)
		save_leftovers(d.set, &env);
	ctl_server_close(d.ctl);
	start_close_guard(status);
	if (receive_close(d.rx) == -ETIMEDOUT)
		fg_err("watch", "%s", RECEIVE_CLOSE_LATE);
	jvmset_free(d.set);
	perfmap_dir_close(d.maps);
	close(d.sfd);
	return status;
}
