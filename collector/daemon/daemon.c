// SPDX-License-Identifier: MIT
/*
 * daemon.c - `fgcollect watch`'s conductor (see daemon.h): start, the serve loop, the stop and
 * its summary.
 *
 * Invariant: the one thread that runs the loop below is the only one touching jvmset and ctl.
 */
#include "daemon.h"

#include <errno.h>
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

#include "ctl.h"
#include "ctl_server.h"
#include "daemon_int.h"
#include "fgproto.h"
#include "fgsocket.h"
#include "handoff.h"
#include "jvmset.h"
#include "leftovers.h"
#include "perfmap.h"
#include "privs.h"
#include "receive.h"
#include "session.h"
#include "util.h"

#define NSEC 1000000000ull

void daemon_opts_init(struct daemon_opts *o)
{
	*o = (struct daemon_opts){ .socket = FG_DEFAULT_SOCKET,
				   .ctl = CTL_DEFAULT_PATH,
				   .map_dir = "/tmp",
				   .keep_exited_ns = 3600 * NSEC,
				   .max_jvms = 1024,
				   .watchdog_ms = 1000,
				   .push_queue = 64,
				   .freq = 99,
				   .switch_rate = SESSION_SWITCH_RATE_AUTO,
				   .events = 1u << FG_EVENT_CPU };
}

/* What the agent socket's process could not shed, and the capability that would let it. */
static void warn_sandbox(const struct daemon_opts *o, struct receive *rx)
{
	struct receive_stats r;

	if (o->no_sandbox) {
		daemon_say(o, "warning: --no-sandbox: the agent socket is served by this process, "
			      "unconfined and with its privileges");
		return;
	}
	receive_stats(rx, &r);
	if (r.sandbox_partial & RECEIVE_SANDBOX_NO_IDS)
		daemon_say(
			o,
			"warning: the agent socket's process runs as uid 0 (with no capability): "
			"switching to --sandbox-uid needs CAP_SETUID and CAP_SETGID "
			"(--cap-add SETUID --cap-add SETGID)");
	if (r.sandbox_partial & RECEIVE_SANDBOX_NO_CHROOT)
		daemon_say(
			o,
			"warning: the agent socket's process keeps the file system in sight (it "
			"may open nothing): a chroot needs CAP_SYS_CHROOT (--cap-add SYS_CHROOT)");
}

/*
 * Say at start what this process lacks for sampling other processes (privs.h), as record and
 * top do: one line per missing capability; CAP_BPF only for off-CPU or wall profiles.
 */
static void warn_privs(const struct daemon_opts *o, bool offcpu)
{
	struct privs p;
	char line[512];

	if (privs_read("/proc", &p) != 0)
		return; /* no /proc: the sampler's own errors will say more */
	for (int need = 0; need < PRIVS_NNEEDS; need++) {
		if (privs_has(&p, (enum privs_need)need) || (need == PRIVS_BPF && !offcpu))
			continue;
		privs_explain(&p, (enum privs_need)need, line, sizeof(line));
		daemon_say(o, "warning: %s", line);
	}
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
	const struct daemon_opts *o = arg;
	char cid[16];

	short_id(ji->container_id, cid);
	switch (ev) {
	case JVMSET_CONNECT:
		if (o->quiet)
			break;
		daemon_say(o,
			   "connect: pid %u (container pid %u, container %s) service %s, JVM %s, "
			   "agent %s, PreserveFramePointer %s, DebugNonSafepoints %s",
			   ji->host_pid, ji->ns_pid, cid, ji->service[0] ? ji->service : "-",
			   ji->jvm_version, ji->agent_version,
			   ji->hello_flags & FGP_HELLO_PRESERVE_FRAME_POINTER ? "on" : "off",
			   ji->hello_flags & FGP_HELLO_DEBUG_NON_SAFEPOINTS ? "on" : "off");
		if (!(ji->hello_flags & FGP_HELLO_PRESERVE_FRAME_POINTER))
			daemon_say(
				o,
				"note: pid %u runs without -XX:+PreserveFramePointer: fgcollect "
				"record and top lose nothing (they unwind from stack copies), but "
				"rolling CPU profiles and stock perf's Java stacks stop at the "
				"first JIT frame; add the flag for those, bcc and bpftrace",
				ji->host_pid);
		break;
	case JVMSET_DISCONNECT:
		if (o->quiet)
			break;
		daemon_say(o,
			   "disconnect: pid %u (container pid %u, container %s): %s; %llu records, "
			   "%llu malformed, %zu live methods",
			   ji->host_pid, ji->ns_pid, cid,
			   ji->exited ? "process exited, map kept until expiry"
				      : "agent closed its connection, process alive, map kept",
			   (unsigned long long)ji->records, (unsigned long long)ji->bad_records,
			   ji->tab.live);
		break;
	case JVMSET_EXIT:
		if (!o->quiet)
			daemon_say(o, "exit: pid %u (container pid %u, container %s)", ji->host_pid,
				   ji->ns_pid, cid);
		break;
	case JVMSET_EXPIRE:
		if (!o->quiet)
			daemon_say(o, "expire: pid %u: map removed", ji->host_pid);
		break;
	case JVMSET_REJECT:
		daemon_say(o, "rejected connection from pid %u: %s", ji->host_pid, why ? why : "?");
		break;
	case JVMSET_MAP_ERROR:
		daemon_say(o, "cannot write the perf map of pid %u: %s (old map kept, retrying)",
			   ji->host_pid, strerror(-err));
		break;
	case JVMSET_MAP_OK:
		daemon_say(o, "perf map of pid %u written again (%llu writes failed: %s)",
			   ji->host_pid, (unsigned long long)ji->map_errors, strerror(-err));
		break;
	case JVMSET_BAD_PEER:
		daemon_say(o, "dropped pid %u: %s", ji->host_pid, why ? why : "malformed input");
		break;
	}
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

/* What a running daemon holds. */
struct daemon {
	const struct daemon_opts *o;
	int sfd; /* SIGINT/SIGTERM */
	struct perfmap_dir *maps;
	struct jvmset *set;
	struct leftovers *left; /* the maps an earlier watch left */
	struct receive *rx;
	struct ctl_server *ctl;
	struct daemon_profiles prof; /* rolling profiles, when asked for */
	bool want_failed;	     /* the last want file could not be written */
	struct receive_stats seen;   /* the listener's, at the last check */
	bool told_relisten_err, told_nofd, told_denied;
};

static void summary(struct daemon *d)
{
	const struct daemon_opts *o = d->o;
	struct jvmset_counters c;
	struct leftovers_counters lc = { 0 };
	struct receive_stats r;
	struct ctl_server_stats cs = { 0 };

	jvmset_counters(d->set, &c);
	if (d->left)
		leftovers_counters(d->left, &lc);
	/* Adopted maps count as the JVMs' own. */
	c.exits += lc.exits;
	c.expired += lc.expired;
	receive_stats_sync(d->rx, 200);
	receive_stats(d->rx, &r);
	if (d->ctl)
		ctl_server_stats(d->ctl, &cs);
	daemon_say(
		o,
		"summary: %llu connections (%llu refused at the cap, %llu rejected, %llu dropped "
		"for malformed input), %llu messages, %llu records (%llu malformed in %llu "
		"messages), %llu map writes (%llu compactions, %llu failed, %llu out of space, %.1f "
		"ms writing), "
		"%llu JVMs exited, %llu expired, watchdog %llu probes / %llu failed / %llu "
		"re-listens, control %llu clients (%llu refused uid, %llu overflowed), sandbox %llu "
		"restarts (%llu crashed, %llu forbidden system calls, %llu hung, %llu wedged, %llu "
		"other), %llu messages refused",
		(unsigned long long)r.accepted, (unsigned long long)r.refused_cap,
		(unsigned long long)c.rejected, (unsigned long long)c.bad_peers,
		(unsigned long long)c.msgs, (unsigned long long)c.records,
		(unsigned long long)c.bad_records, (unsigned long long)c.bad_msgs,
		(unsigned long long)c.map_writes, (unsigned long long)c.map_compactions,
		(unsigned long long)c.map_errors, (unsigned long long)c.map_enospc,
		c.map_write_ns / 1e6, (unsigned long long)c.exits, (unsigned long long)c.expired,
		(unsigned long long)r.probes, (unsigned long long)r.probe_fail,
		(unsigned long long)r.relistens, (unsigned long long)cs.accepted,
		(unsigned long long)cs.refused_uid, (unsigned long long)cs.overflowed,
		(unsigned long long)r.restarts, (unsigned long long)r.died_crash,
		(unsigned long long)r.died_syscall, (unsigned long long)r.died_hung,
		(unsigned long long)r.died_wedge, (unsigned long long)r.died_other,
		(unsigned long long)r.refused_msgs);
	if (c.ev_stacks || c.ev_states || c.ev_drops.unknown_id || c.ev_drops.unwanted)
		daemon_say(o,
			   "events: %llu stacks and %llu frees handed on, %llu agent reports; "
			   "dropped %llu with an unknown method id, %llu nobody asked for; %llu "
			   "with a thread not found among the JVM's tasks",
			   (unsigned long long)c.ev_stacks, (unsigned long long)c.ev_frees,
			   (unsigned long long)c.ev_states,
			   (unsigned long long)c.ev_drops.unknown_id,
			   (unsigned long long)c.ev_drops.unwanted,
			   (unsigned long long)c.ev_drops.unknown_tid);
}

/*
 * Tables on demand: whose tables the ctl clients want now, for the agents (fgsocket.h). A file
 * that cannot be written is said once (and again after it could be written).
 */
static void tell_want(void *arg, const uint64_t *tokens, size_t n, const struct jvm_evwant_tok *ev,
		      size_t nev)
{
	struct daemon *d = arg;
	const struct daemon_opts *o = d->o;
	int rv;

	if (!d->rx)
		return;
	rv = receive_want(d->rx, tokens, n, ev, nev);
	if (rv != 0 && !d->want_failed)
		daemon_say(
			o,
			"cannot write the want file beside the agent socket: %s; the agents of "
			"recorded JVMs keep sending names only (no inline, frame or line tables, "
			"no allocation or lock events)",
			strerror(-rv));
	d->want_failed = rv != 0;
}

/* The control socket's directory (ctl_server_open made sure it is ours, mode 0700). */
static int ctl_dir(const struct daemon_opts *o, char *buf, size_t cap)
{
	const char *slash = strrchr(o->ctl, '/');
	size_t len = slash ? (size_t)(slash - o->ctl) : 0;

	if (!slash || len == 0 || len >= cap)
		return -EINVAL;
	memcpy(buf, o->ctl, len);
	buf[len] = '\0';
	return 0;
}

/* The maps an earlier watch left (handoff.h): expired here as if they were ours. */
static void adopt_leftovers(struct daemon *d)
{
	const struct daemon_opts *o = d->o;
	struct handoff_entry *e;
	char dir[4096];
	size_t n;
	int rv;

	if (ctl_dir(o, dir, sizeof(dir)) != 0)
		return;
	if ((rv = handoff_load(dir, &e, &n)) != 0)
		daemon_say(o, "ignoring %s/%s: %s", dir, HANDOFF_NAME,
			   rv == -EBADMSG ? "not a list this collector wrote" : strerror(-rv));
	else if (n && (rv = leftovers_adopt(d->left, d->set, e, n, fg_now_ns())) != 0)
		daemon_say(o, "cannot adopt the maps an earlier collector left: %s", strerror(-rv));
	else if (n && !o->quiet)
		daemon_say(o,
			   "adopted %zu maps an earlier collector left (removed once their JVMs "
			   "have been gone for --keep-exited)",
			   n);
	free(e);
}

/* At a stop: tell the next watch which maps stay behind, so that it expires them. */
static void save_leftovers(const struct daemon *d)
{
	const struct daemon_opts *o = d->o;
	struct handoff_entry *e = calloc(HANDOFF_MAX, sizeof(*e));
	char dir[4096];
	size_t n;
	int rv;

	if (!e || ctl_dir(o, dir, sizeof(dir)) != 0) {
		free(e);
		return;
	}
	n = leftovers_list(d->left, d->set, e, HANDOFF_MAX);
	if ((rv = handoff_save(dir, e, n)) != 0)
		daemon_say(o,
			   "cannot leave the list of %zu maps for the next collector in %s: %s "
			   "(their JVMs' maps stay until removed by hand)",
			   n, dir, strerror(-rv));
	free(e);
}

/* Open the map directory, the JVM set, the agent socket and the control socket (errors logged). */
static int start(struct daemon *d)
{
	const struct daemon_opts *o = d->o;
	struct jvmset_observer log = { .event = log_event, .arg = (void *)o };
	struct jvmset_opts jo = { .keep_exited_ns = o->keep_exited_ns,
				  .want = tell_want,
				  .want_arg = d };
	struct leftovers_opts lo = { .keep_exited_ns = o->keep_exited_ns };
	struct receive_opts ro = { .path = o->socket,
				   .max_peers = (unsigned)o->max_jvms,
				   .watchdog_ms = (unsigned)o->watchdog_ms,
				   .in_process = o->no_sandbox,
				   .sandbox_uid = (unsigned)o->sandbox_uid,
				   .sandbox_gid = (unsigned)o->sandbox_gid };
	int rv;

	if ((rv = perfmap_dir_open(o->map_dir, &d->maps)) != 0) {
		daemon_say(o, "cannot use %s for perf maps: %s%s", o->map_dir, strerror(-rv),
			   rv == -EPERM ? " (it must be owned by root and sticky if world-writable)"
					: "");
		return rv;
	}
	jo.maps = d->maps;
	lo.maps = d->maps;
	if ((rv = jvmset_new(&jo, &d->set)) != 0 || (rv = jvmset_observe(d->set, &log)) != 0 ||
	    (rv = leftovers_new(&lo, &d->left)) != 0 ||
	    (rv = leftovers_observe(d->left, d->set)) != 0) {
		daemon_say(o, "cannot start: %s", strerror(-rv));
		return rv;
	}
	if ((rv = socket_dir(o->socket)) != 0) {
		daemon_say(o, "cannot create the directory of %s: %s", o->socket, strerror(-rv));
		return rv;
	}
	if ((rv = receive_open(&ro, &d->rx)) != 0) {
		daemon_say(o, "cannot listen on %s: %s%s", o->socket, strerror(-rv),
			   rv == -EADDRINUSE ? " (another fgcollect watch or record serves it)"
					     : "");
		return rv;
	}
	if ((rv = ctl_server_open(o->ctl, d->set, &d->ctl)) != 0) {
		daemon_say(o, "cannot open the control socket %s: %s%s", o->ctl, strerror(-rv),
			   rv == -EPERM ? " (its directory must be ours and mode 0700)" : "");
		return rv;
	}
	adopt_leftovers(d);
	if (!o->quiet)
		daemon_say(o, "listening on %s (control %s), maps in %s", o->socket, o->ctl,
			   o->map_dir);
	warn_sandbox(o, d->rx);
	/* Serving agents needs none of them; rolling profiles and record/top here do. */
	warn_privs(o, o->profile_ns && (o->events & ~(1u << FG_EVENT_CPU)));
	if (o->profile_ns && daemon_profiles_start(o, &d->prof) != 0)
		return -1;
	return 0;
}

/* The agent socket's confined process was started again: why (said once per restart). */
static void say_restart(struct daemon *d, const struct receive_stats *r)
{
	const struct receive_stats *s = &d->seen;
	const char *why = r->died_syscall > s->died_syscall ? "killed for a forbidden system call"
			  : r->died_crash > s->died_crash   ? "killed by a signal"
			  : r->died_hung > s->died_hung	    ? "hung: no answer to a ping"
			  : r->died_wedge > s->died_wedge   ? "its listener stopped accepting"
							    : "it exited";
	/* Which verdict of the self-probes: the nng #1518 wedge, or probes left unanswered. */
	const char *how =
		r->died_wedge <= s->died_wedge ? ""
		: r->wedge_answered > s->wedge_answered
			? ": it answered a self-probe without taking the connection, as after "
			  "a peer that hangs up as it connects"
			: ": self-probes in a row got no answer";

	daemon_say(
		d->o,
		"the agent socket's sandboxed process ended (%s%s); started again (%llu restarts "
		"so far), agents reconnect and replay",
		why, how, (unsigned long long)r->restarts);
}

/*
 * The listener's health, once a second: a re-listen (the socket file was removed, or the
 * listener stopped accepting) is told and the files beside the socket are written again; a
 * failing re-listen and running out of descriptors are told once per episode.
 */
static void check_listener(struct daemon *d, const char *socket)
{
	const struct daemon_opts *o = d->o;
	struct receive_stats r;

	receive_stats(d->rx, &r);
	if (r.restarts > d->seen.restarts)
		say_restart(d, &r);
	if (r.relistens > d->seen.relistens) {
		daemon_say(o, "listening again on %s (%s); agents reconnect and replay", socket,
			   r.restarts
				   ? "a new sandboxed process"
				   : "the socket file was gone or the listener stopped accepting");
		if (receive_refresh(d->rx) != 0)
			daemon_say(o, "cannot write the files beside %s again", socket);
		d->told_relisten_err = false;
	}
	if (r.relisten_err > d->seen.relisten_err && !d->told_relisten_err) {
		daemon_say(o, "cannot listen on %s again: %s; retrying every second", socket,
			   strerror(-r.last_err));
		d->told_relisten_err = true;
	}
	if (r.probe_nofd > d->seen.probe_nofd && !d->told_nofd) {
		struct rlimit rl = { 0 };

		getrlimit(RLIMIT_NOFILE, &rl);
		daemon_say(
			o,
			"out of file descriptors (%s, limit %llu): new agents cannot connect and maps "
			"cannot be written until some are free (raise `ulimit -n`)",
			strerror(-r.last_err), (unsigned long long)rl.rlim_cur);
		d->told_nofd = true;
	} else if (r.probe_nofd == d->seen.probe_nofd && r.probes > d->seen.probes &&
		   d->told_nofd) {
		daemon_say(o, "file descriptors available again");
		d->told_nofd = false;
	}
	if (r.probe_denied > d->seen.probe_denied && !d->told_denied) {
		daemon_say(
			o,
			"the agent socket's sandboxed process (--sandbox-uid) cannot reach %s: %s on "
			"its directory, so it cannot check that it still accepts, and agents running "
			"as other users cannot connect either; make the directory searchable by all "
			"(chmod 0755 or 0711)",
			socket, strerror(-r.last_err));
		d->told_denied = true;
	}
	d->seen = r;
}

/* A killed collector's temporary map files: older than this, no live writer's. */
#define TEMP_MIN_AGE_S 10
#define SWEEP_NS (60 * NSEC)

static void sweep_temps(struct daemon *d, const char *map_dir)
{
	const struct daemon_opts *o = d->o;
	int n = perfmap_sweep(d->maps, TEMP_MIN_AGE_S);

	if (n > 0)
		daemon_say(o, "removed %d temporary map file%s a killed collector left in %s", n,
			   n == 1 ? "" : "s", map_dir);
}

/* Serve agents and control clients until SIGINT/SIGTERM. 0, or -errno of poll (printed). */
static int serve(struct daemon *d)
{
	const struct daemon_opts *o = d->o;
	struct pollfd fds[3 + CTL_MAX_CLIENTS + 1];
	uint64_t next_check = 0, next_sweep = 0;

	for (;;) {
		uint64_t now = fg_now_ns(), next = jvmset_tick(d->set, now);

		next = leftovers_tick(d->left, now, next);
		if (now >= next_check) {
			check_listener(d, o->socket);
			next_check = fg_whole_second_ns(now + 1);
		}
		if (now >= next_sweep) {
			sweep_temps(d, o->map_dir);
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
			daemon_say(o, "poll: %s", strerror(errno));
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
/* Set once the close is over: the guard then neither speaks (o is the caller's) nor exits. */
static pthread_mutex_t guard_mu = PTHREAD_MUTEX_INITIALIZER;
static bool guard_off;

static void *close_guard(void *arg)
{
	const struct daemon_opts *o = arg;
	struct timespec ts = { CLOSE_GUARD_MS / 1000, (CLOSE_GUARD_MS % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	pthread_mutex_lock(&guard_mu);
	if (!guard_off) {
		daemon_say(o,
			   "nng did not close its sockets within %d ms (nng 1.5.2); exiting "
			   "without them",
			   CLOSE_GUARD_MS);
		fflush(stdout);
		_exit(guard_status);
	}
	pthread_mutex_unlock(&guard_mu);
	return NULL;
}

/* The close is over: the guard stands down for good. */
static void stop_close_guard(void)
{
	pthread_mutex_lock(&guard_mu);
	guard_off = true;
	pthread_mutex_unlock(&guard_mu);
}

static void start_close_guard(const struct daemon_opts *o, int status)
{
	pthread_attr_t a;
	pthread_t t;

	guard_status = status;
	if (pthread_attr_init(&a) != 0)
		return;
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, close_guard, (void *)o) != 0)
		daemon_say(o, "cannot start the close guard: exit may wait for nng");
	pthread_attr_destroy(&a);
}

int daemon_run(const struct daemon_opts *o)
{
	struct daemon d = { .o = o, .sfd = -1 };
	sigset_t sigs;
	int status = FG_EXIT_FAIL;

	/* Before any thread exists (nng's, the watchdog), so that all of them inherit the mask
	 * and SIGINT/SIGTERM reach only the signalfd. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	d.sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d.sfd < 0) {
		daemon_say(o, "signalfd: %s", strerror(errno));
		return FG_EXIT_FAIL;
	}
	if (start(&d) == 0 && serve(&d) == 0)
		status = FG_EXIT_OK;
	/* The roller is a client of ctl: stopped first (its last cut reads from ctl's tables). */
	daemon_profiles_stop(o, &d.prof);
	if (d.rx && d.set)
		summary(&d);
	if (d.set && d.ctl)
		save_leftovers(&d);
	ctl_server_close(d.ctl);
	start_close_guard(o, status);
	if (receive_close(d.rx) == -ETIMEDOUT)
		daemon_say(o, "%s", RECEIVE_CLOSE_LATE);
	jvmset_free(d.set);
	leftovers_free(d.left);
	perfmap_dir_close(d.maps);
	close(d.sfd);
	stop_close_guard();
	return status;
}
