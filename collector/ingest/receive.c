// SPDX-License-Identifier: MIT
/*
 * receive.c - the agents' socket behind receive.h, run by a sandboxed child (privilege
 * separation). The child listens (as root, so nng makes the socket file, 0666), confines
 * itself (sandbox.h), runs the nng listener (rxnng.c), and forwards over a SOCK_SEQPACKET
 * socketpair (rxchan.h) only the messages that decode whole, each with its pipe and the kernel's
 * peer PID. This side, which keeps its privileges, decodes every frame strictly, gives pipes ids
 * of its own (unique for the life of the process, across children), writes the files beside the
 * socket, and restarts a child that died, hung or exited on a wedged listener, reporting every
 * pipe of the old child gone. Hung: quiet for PING_MS, it is looked at on the next whole second
 * (the daemon's own once-a-second check, fg_whole_second_ns, so an idle parent wakes once for
 * both); asleep in its poll it is well and left alone, else it is asked for a heartbeat (PING)
 * and none came within PONG_MS. An idle child never wakes for us. receive_opts.in_process runs
 * the listener in this process instead (tests, --no-sandbox).
 *
 * Invariant: a pipe is in the table from its first MSG to its GONE or the child's end, and
 * exactly one RECEIVE_GONE is queued for every pipe that was in the table.
 */
#include "receive.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "fgclock.h"
#include "fgproto.h"
#include "fgsearch.h"
#include "fgsocket.h"
#include "rxchan.h"
#include "rxnng.h"
#include "sandbox.h"
#include "util.h"
#include "fgfree.h"

#define MS 1000000ull
#define SEC 1000000000ull
#define BEAT_MS 1000		/* a busy child's counters, at most this often (unasked) */
#define PING_MS 500		/* no frame for this long: a heartbeat asked on the next second */
#define PONG_MS 500		/* ... and no frame this long after: it is killed and restarted */
#define START_MS 10000		/* ... before its READY: exec, nng and listen on a loaded host */
#define TICK_MS 250		/* our timer's first expiry; then it is set to the next deadline */
#define RESPAWN_BACKOFF_MS 1000 /* after a child that never got ready */
#define CHAN_BUF (8u << 20)	/* socket buffer: a few whole messages in flight */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CHILD_DATA 0 /* the sanitizers map terabytes of shadow: no RLIMIT_DATA under them */
#else
#define CHILD_DATA (1ull << 30) /* the child's RLIMIT_DATA */
#endif
#define CHILD_EXIT_WEDGE 3	    /* the listener stopped accepting: probes got no answer */
#define CHILD_EXIT_WEDGE_ANSWERED 6 /* ... it answered a probe and took no pipe (nng #1518) */
#define CHILD_EXIT_SETUP 4	    /* could not listen or confine itself */
#define CHILD_EXIT_PROTO 5	    /* the parent sent what it must not */
#define CHILD_ARGS 11
#define FORWARD_BATCH 256
#define CHILD_ARENAS 4
#define RECEIVE_CHILD_FD 3

struct rxpipe {
	uint32_t cid; /* the child's nng pipe id */
	uint32_t id;  /* ours, handed to the consumer */
	uint32_t pid; /* the kernel's peer PID the child read */
};

struct receive {
	struct receive_opts o;
	struct rxnng *n; /* in_process: the listener here */
	pid_t self;
	char features[128 + 16]; /* what we read, for agents (fgsocket.h); "" when not written */
	char want[128 + 16];	 /* whose tables we want (fgsocket.h); "" when not written */
	char *want_text;	 /* the want file's last text, for receive_refresh */
	size_t want_len;

	/* the child */
	pid_t child;	     /* 0: none (respawn at respawn_at) */
	int sp;		     /* our end of the socketpair, -1 with no child */
	int tfd;	     /* timer at the next deadline: a look at a quiet child, a respawn */
	uint64_t armed_at;   /* when it fires next (0: not set) */
	bool armed_periodic; /* and every second after that */
	bool ready, paused;
	uint64_t last_frame, respawn_at;
	uint64_t ping_at;     /* when we sent our last PING (0: none since the child started) */
	uint64_t asleep_at;   /* when we last saw it asleep in its poll (then it needs no PING) */
	int proc_fd;	      /* its /proc/PID/syscall, open from the first look; -1 */
	uint64_t beats;	      /* BEATs read */
	uint8_t *buf;	      /* the frame being read: RXCHAN_HDR + max_msg */
	struct rxpipe *pipes; /* sorted by cid */
	unsigned n_pipes;
	uint32_t next_id;
	uint32_t *gone; /* queued RECEIVE_GONE ids */
	size_t n_gone, cap_gone;
	struct rxchan_beat beat, base; /* the child's last counters; the dead children's sum */
	struct receive_stats st;       /* ours: restarts, causes, relisten_err, last_err */
};

/* ---- the child ------------------------------------------------------------------------ */

static void wedged_exit(void *arg, int why)
{
	(void)arg;
	_exit(why == -ENOTCONN ? CHILD_EXIT_WEDGE_ANSWERED : CHILD_EXIT_WEDGE);
}

static void child_send(int sp, enum rxchan_type t, uint32_t pipe, uint32_t arg, const void *data,
		       size_t len)
{
	uint8_t hdr[RXCHAN_HDR];
	struct iovec iov[2] = { { hdr, sizeof(hdr) }, { (void *)data, len } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };

	rxchan_header(hdr, t, pipe, arg, (uint32_t)len);
	while (sendmsg(sp, &mh, MSG_NOSIGNAL) < 0)
		if (errno != EINTR)
			_exit(0); /* the parent is gone */
}

#ifdef FG_TEST_HOOKS
/* Tests: after SIGUSR1 the loop makes a system call the filter forbids (FG_TEST_SANDBOX_TRIP=1). */
static volatile sig_atomic_t tripped;

static void trip(int sig)
{
	(void)sig;
	tripped = 1;
}

static void trip_now(void)
{
	if (tripped)
		(void)syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
}
#else
static void trip_now(void)
{
}
#endif

/* Signals: the parent stops us (EXIT, or its end closing), never a terminal's. */
static void child_signals(void)
{
	sigset_t all;

	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGCHLD, SIG_DFL);
#ifdef FG_TEST_HOOKS
	if (getenv("FG_TEST_SANDBOX_TRIP"))
		signal(SIGUSR1, trip);
#endif
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
}

static void child_beat(int sp, struct rxnng *n, uint64_t refused)
{
	struct receive_stats s;
	struct rxchan_beat b;
	uint8_t p[RXCHAN_BEAT_SIZE];

	rxnng_stats(n, &s);
	b = (struct rxchan_beat){ .accepted = s.accepted,
				  .refused_cap = s.refused_cap,
				  .gone = s.gone,
				  .probes = s.probes,
				  .probe_fail = s.probe_fail,
				  .probe_nofd = s.probe_nofd,
				  .probe_denied = s.probe_denied,
				  .connected = s.connected,
				  .refused_msgs = refused,
				  .last_err = s.last_err };
	rxchan_beat_encode(p, &b);
	child_send(sp, RXC_BEAT, 0, 0, p, sizeof(p));
}

/* The parent's commands, without blocking. */
static void child_commands(int sp, struct rxnng *n, bool *ping)
{
	uint8_t b[RXCHAN_HDR + 1];
	struct rxchan_frame f;
	ssize_t k;

	while ((k = recv(sp, b, sizeof(b), MSG_DONTWAIT)) != 0) {
		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return;
			_exit(0);
		}
		if (rxchan_decode(b, (size_t)k, false, 0, &f) != 0)
			_exit(CHILD_EXIT_PROTO);
		if (f.type == RXC_EXIT)
			_exit(0);
		if (f.type == RXC_PING)
			*ping = true;
		if (f.type == RXC_DROP)
			rxnng_drop_pipe(n, f.pipe);
		else if (f.type == RXC_PAUSE)
			rxnng_watchdog_pause(n, f.arg != 0);
	}
	_exit(0); /* the parent's end closed */
}

/*
 * Forward what the listener has: whole valid messages with their peer's PID, and ends. At most
 * FORWARD_BATCH events a call, so that a flood of refused messages (nothing sent) cannot hold
 * back the heartbeat.
 */
static void child_forward(int sp, struct rxnng *n, uint64_t *refused)
{
	struct receive_ev ev;
	uint32_t pid;

	for (unsigned k = 0; k < FORWARD_BATCH && rxnng_next(n, &ev) == 1; k++) {
		if (ev.type == RECEIVE_GONE) {
			child_send(sp, RXC_GONE, ev.pipe, 0, NULL, 0);
			continue;
		}
		if (!ev.pipe || !rxchan_msg_ok(ev.data, ev.len) ||
		    rxnng_peer_pid(n, ev.pipe, &pid) != 0 || !pid || pid > RXCHAN_MAX_PID) {
			(*refused)++;
			continue;
		}
		child_send(sp, RXC_MSG, ev.pipe, pid, ev.data, ev.len);
	}
}

/*
 * No timer of its own: the child wakes for the listener (and its watchdog's failed probes) and
 * for the parent. It beats when asked (PING), and once a second while it is awake anyway, so
 * that a busy child's counters reach the parent, which then never needs to ask.
 */
static _Noreturn void child_loop(int sp, struct rxnng *n)
{
	uint64_t refused = 0, next_beat = 0;

	for (;;) {
		struct pollfd p[3];
		bool ping = false;
		uint64_t now;

		rxnng_pollfds(n, p);
		p[2] = (struct pollfd){ .fd = sp, .events = POLLIN };
		if (poll(p, 3, -1) < 0 && errno != EINTR)
			_exit(CHILD_EXIT_SETUP);
		if (p[2].revents)
			child_commands(sp, n, &ping);
		child_forward(sp, n, &refused);
		trip_now();
		now = fg_now_ns();
		if (ping || now >= next_beat) {
			child_beat(sp, n, refused);
			next_beat = now + BEAT_MS * MS;
		}
	}
}

/*
 * The socket's directory and its file name in it. After a restart the directory is made again
 * (0755) when it is missing, as the listener's re-listen did; at the start it must exist.
 */
static int split_path(const char *path, char *dir, size_t dcap, const char **base, bool make)
{
	const char *slash = strrchr(path, '/');

	if (!slash) {
		snprintf(dir, dcap, ".");
		*base = path;
	} else {
		if ((size_t)(slash - path) >= dcap)
			return -ENAMETOOLONG;
		snprintf(dir, dcap, "%.*s", slash == path ? 1 : (int)(slash - path), path);
		*base = slash + 1;
	}
	if (make && mkdir(dir, 0755) == 0)
		(void)chmod(dir, 0755); /* whatever our umask */
	return **base ? 0 : -EINVAL;
}

static _Noreturn void child_main(int sp, pid_t parent, const struct receive_opts *o,
				 bool mkdir_again)
{
	struct sandbox_opts so = { .uid = o->sandbox_uid,
				   .gid = o->sandbox_gid,
				   .nofile = o->max_peers + 64,
				   .data_bytes = CHILD_DATA };
	struct receive_opts lo = *o;
	struct rxnng *n;
	char dir[128];
	int rv, partial = 0;

	child_signals();
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != parent)
		_exit(0);
	(void)prctl(PR_SET_NAME, "fg-sandbox", 0, 0, 0);
	/* Nothing of the parent's: its maps, profiles, control socket stay out of reach. */
	if (sp > 3)
		(void)syscall(SYS_close_range, 3, sp - 1, 0);
	(void)syscall(SYS_close_range, sp + 1, ~0u, 0);
	/*
	 * glibc loads libgcc_s (dlopen: openat) the first time a thread unwinds or exits through
	 * cancellation; outside the chroot and before the filter, so that it is loaded already.
	 */
	(void)dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NODELETE);
	if ((rv = split_path(o->path, dir, sizeof(dir), &lo.path, mkdir_again)) != 0 ||
	    (rv = partial = sandbox_chroot(dir)) < 0 || (rv = sandbox_bound()) != 0 ||
	    (rv = rxnng_open(&lo, &n)) != 0) {
		child_send(sp, RXC_READY, 0, (uint32_t)rv, NULL, 0);
		_exit(CHILD_EXIT_SETUP);
	}
	rxnng_on_wedge(n, wedged_exit, NULL);
	/*
	 * glibc's malloc reads /sys/devices/system/cpu/online (openat) the first time a thread
	 * needs a new arena unless the arenas are capped: a flood of connections would have nng's
	 * threads do that under the filter.
	 */
	(void)mallopt(M_ARENA_MAX, CHILD_ARENAS);
	/* glibc's fatal messages (heap corruption) to stderr, not by opening /dev/tty. */
	(void)setenv("LIBC_FATAL_STDERR_", "1", 1);
	if ((rv = sandbox_enter(&so)) < 0) {
		fprintf(stderr, "fgcollect: cannot confine the agent socket's process: %s\n",
			strerror(-rv));
		child_send(sp, RXC_READY, 0, (uint32_t)rv, NULL, 0);
		_exit(CHILD_EXIT_SETUP);
	}
	/* READY with what the confinement could not do (SANDBOX_NO_*), 0 when nothing. */
	child_send(sp, RXC_READY, 0, (uint32_t)(partial | rv), NULL, 0);
	child_loop(sp, n);
}

/* ---- the parent: the child's life ---------------------------------------------------- */

/* argv of the child: the program, RECEIVE_CHILD_ARG, the options in numbers, the path. */
static void child_argv(const struct receive *rx, char args[CHILD_ARGS][24], char **argv)
{
	const unsigned long v[CHILD_ARGS] = {
		(unsigned long)rx->self,
		rx->o.max_peers,
		rx->o.max_msg,
		rx->o.watchdog_ms,
		rx->o.probe_timeout_ms,
		rx->o.probe_failures,
		(unsigned long)rx->o.socket_mode,
		(unsigned long)rx->o.allow_self_peer,
		rx->o.sandbox_uid,
		rx->o.sandbox_gid,
		rx->st.restarts != 0, /* a restart makes the directory again */
	};

	argv[0] = "fgcollect-sandbox";
	argv[1] = RECEIVE_CHILD_ARG;
	for (unsigned i = 0; i < CHILD_ARGS; i++) {
		snprintf(args[i], sizeof(args[i]), "%lu", v[i]);
		argv[2 + i] = args[i];
	}
	argv[2 + CHILD_ARGS] = (char *)rx->o.path;
	argv[3 + CHILD_ARGS] = NULL;
}

/* A number of the child's argv: 0, or -EINVAL. */
static int arg_num(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || end == s || *end || *s == '-' || *out > max ? -EINVAL : 0;
}

int receive_child_main(int argc, char **argv)
{
	bool mkdir_again;
	unsigned long v[CHILD_ARGS];
	struct receive_opts o = { 0 };

	if (argc != 3 + CHILD_ARGS || strcmp(argv[1], RECEIVE_CHILD_ARG) != 0 ||
	    !fg_socket_path_fits(argv[2 + CHILD_ARGS]))
		return CHILD_EXIT_SETUP;
	for (unsigned i = 0; i < CHILD_ARGS; i++)
		if (arg_num(argv[2 + i], UINT32_MAX, &v[i]) != 0)
			return CHILD_EXIT_SETUP;
	o.max_peers = (unsigned)v[1];
	o.max_msg = v[2];
	o.watchdog_ms = (unsigned)v[3];
	o.probe_timeout_ms = (unsigned)v[4];
	o.probe_failures = (unsigned)v[5];
	o.socket_mode = (int)v[6];
	o.allow_self_peer = (int)v[7];
	o.sandbox_uid = (unsigned)v[8];
	o.sandbox_gid = (unsigned)v[9];
	o.path = argv[2 + CHILD_ARGS];
	mkdir_again = v[10] != 0;
	child_main(RECEIVE_CHILD_FD, (pid_t)v[0], &o, mkdir_again);
}

enum end_cause { END_DIED, END_HUNG, END_PROTO };

static void set_buf(int fd, int opt_force, int opt, int bytes)
{
	if (setsockopt(fd, SOL_SOCKET, opt_force, &bytes, sizeof(bytes)) != 0)
		(void)setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof(bytes));
}

/* Start a child. 0, or a negative errno (nothing started). */
static int spawn(struct receive *rx)
{
	char args[CHILD_ARGS][24], *argv[CHILD_ARGS + 4];
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return -errno;
	set_buf(sv[1], SO_SNDBUFFORCE, SO_SNDBUF, CHAN_BUF);
	set_buf(sv[0], SO_RCVBUFFORCE, SO_RCVBUF, CHAN_BUF);
	child_argv(rx, args, argv);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int e = -errno;

		close(sv[0]);
		close(sv[1]);
		return e;
	}
	if (pid == 0) {
		/* Async-signal-safe only until execve: the parent has threads. */
		if (sv[1] == RECEIVE_CHILD_FD ? fcntl(sv[1], F_SETFD, 0) == 0
					      : dup2(sv[1], RECEIVE_CHILD_FD) == RECEIVE_CHILD_FD)
			execve("/proc/self/exe", argv, environ);
		_exit(CHILD_EXIT_SETUP);
	}
	close(sv[1]);
	(void)fcntl(sv[0], F_SETFL, O_NONBLOCK);
	rx->sp = sv[0];
	rx->child = pid;
	rx->ready = false;
	rx->last_frame = fg_now_ns();
	rx->ping_at = 0;
	rx->asleep_at = 0;
	rx->beat = (struct rxchan_beat){ 0 };
	if (rx->paused) {
		uint8_t h[RXCHAN_HDR];

		rxchan_header(h, RXC_PAUSE, 0, 1, 0);
		(void)send(rx->sp, h, sizeof(h), MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	return 0;
}

static void add_beat(struct rxchan_beat *to, const struct rxchan_beat *b)
{
	to->accepted += b->accepted;
	to->refused_cap += b->refused_cap;
	to->gone += b->gone;
	to->probes += b->probes;
	to->probe_fail += b->probe_fail;
	to->probe_nofd += b->probe_nofd;
	to->probe_denied += b->probe_denied;
	to->refused_msgs += b->refused_msgs;
}

/* Count how the child ended (status from waitpid). */
static void count_end(struct receive *rx, enum end_cause cause, int status)
{
	bool died = cause == END_DIED;

	if (cause == END_HUNG)
		rx->st.died_hung++;
	else if (died && WIFSIGNALED(status))
		(*(WTERMSIG(status) == SIGSYS ? &rx->st.died_syscall : &rx->st.died_crash))++;
	else if (died && WIFEXITED(status) && WEXITSTATUS(status) == CHILD_EXIT_WEDGE)
		rx->st.died_wedge++;
	else if (died && WIFEXITED(status) && WEXITSTATUS(status) == CHILD_EXIT_WEDGE_ANSWERED) {
		rx->st.died_wedge++;
		rx->st.wedge_answered++;
	} else
		rx->st.died_other++;
}

static void close_proc_fd(struct receive *rx)
{
	if (rx->proc_fd >= 0)
		close(rx->proc_fd);
	rx->proc_fd = -1;
}

/*
 * The child is gone or must go: kill it if it still runs, reap it, queue a GONE for each of
 * its pipes, and start the next one now (after RESPAWN_BACKOFF_MS when it never got ready).
 */
static void end_child(struct receive *rx, enum end_cause cause)
{
	int status = 0;

	if (!rx->child)
		return;
	if (cause != END_DIED)
		kill(rx->child, SIGKILL);
	while (waitpid(rx->child, &status, 0) < 0 && errno == EINTR)
		;
	count_end(rx, cause, status);
	add_beat(&rx->base, &rx->beat);
	rx->beat = (struct rxchan_beat){ 0 };
	close(rx->sp);
	rx->sp = -1;
	rx->child = 0;
	close_proc_fd(rx);
	rx->st.restarts++;
	if (ARRAY_GROW(rx->gone, rx->cap_gone, rx->n_gone + rx->n_pipes) == 0)
		for (unsigned i = 0; i < rx->n_pipes; i++)
			rx->gone[rx->n_gone++] = rx->pipes[i].id;
	rx->n_pipes = 0;
	rx->respawn_at = fg_now_ns() + (rx->ready ? 0 : RESPAWN_BACKOFF_MS * MS);
}

static void respawn(struct receive *rx, uint64_t now)
{
	int rv;

	if (rx->child || now < rx->respawn_at)
		return;
	if ((rv = spawn(rx)) != 0) {
		rx->st.relisten_err++;
		rx->st.last_err = rv;
		rx->respawn_at = now + RESPAWN_BACKOFF_MS * MS;
	}
}

/* Tell the child cmd; a child that cannot take it is ended. */
static void command(struct receive *rx, enum rxchan_type t, uint32_t pipe, uint32_t arg)
{
	uint8_t h[RXCHAN_HDR];

	if (!rx->child)
		return;
	rxchan_header(h, t, pipe, arg, 0);
	if (send(rx->sp, h, sizeof(h), MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno != EAGAIN)
		end_child(rx, END_DIED);
}

/* ---- the parent: pipes ------------------------------------------------------------------ */

static bool pipe_before(const struct rxpipe *p, uint32_t cid)
{
	return p->cid < cid;
}
FG_LOWER_BOUND(pipe_lower_bound, struct rxpipe, uint32_t, pipe_before)

/* Index of the first pipe whose cid >= cid. */
static unsigned pipe_find(const struct receive *rx, uint32_t cid)
{
	return (unsigned)pipe_lower_bound(rx->pipes, rx->n_pipes, cid);
}

/* Our pipe for the child's cid with peer pid, admitted now if new; NULL at the cap. */
static const struct rxpipe *pipe_get(struct receive *rx, uint32_t cid, uint32_t pid)
{
	unsigned i = pipe_find(rx, cid);

	if (i < rx->n_pipes && rx->pipes[i].cid == cid)
		return &rx->pipes[i];
	if (rx->n_pipes >= rx->o.max_peers)
		return NULL;
	memmove(&rx->pipes[i + 1], &rx->pipes[i], (rx->n_pipes - i) * sizeof(*rx->pipes));
	rx->pipes[i] = (struct rxpipe){ .cid = cid, .id = ++rx->next_id, .pid = pid };
	if (!rx->next_id) /* 2^32 pipes: 0 is no pipe */
		rx->pipes[i].id = ++rx->next_id;
	rx->n_pipes++;
	return &rx->pipes[i];
}

static const struct rxpipe *pipe_by_id(const struct receive *rx, uint32_t id)
{
	for (unsigned i = 0; i < rx->n_pipes; i++)
		if (rx->pipes[i].id == id)
			return &rx->pipes[i];
	return NULL;
}

/* The child's GONE for cid: our id in *id and 1, or 0 when we never handed it on. */
static int pipe_gone(struct receive *rx, uint32_t cid, uint32_t *id)
{
	unsigned i = pipe_find(rx, cid);

	if (i >= rx->n_pipes || rx->pipes[i].cid != cid)
		return 0;
	*id = rx->pipes[i].id;
	memmove(&rx->pipes[i], &rx->pipes[i + 1], (rx->n_pipes - i - 1) * sizeof(*rx->pipes));
	rx->n_pipes--;
	return 1;
}

/* ---- the parent: frames ----------------------------------------------------------------- */

/* One frame read and acted on: 1 with *ev to hand on, 0 read (nothing to hand on), -1 none. */
static int read_frame(struct receive *rx, struct receive_ev *ev)
{
	struct rxchan_frame f;
	const struct rxpipe *p;
	ssize_t k = recv(rx->sp, rx->buf, RXCHAN_HDR + rx->o.max_msg, MSG_DONTWAIT | MSG_TRUNC);

	if (k < 0 && (errno == EAGAIN || errno == EINTR))
		return -1;
	if (k <= 0) {
		end_child(rx, END_DIED);
		return 0;
	}
	rx->last_frame = fg_now_ns();
	if ((size_t)k > RXCHAN_HDR + rx->o.max_msg ||
	    rxchan_decode(rx->buf, (size_t)k, true, rx->o.max_msg, &f) != 0) {
		rx->st.refused_frames++;
		end_child(rx, END_PROTO);
		return 0;
	}
	switch (f.type) {
	case RXC_READY:
		if ((int32_t)f.arg < 0) {
			rx->st.relisten_err++;
			rx->st.last_err = (int32_t)f.arg;
		} else if (!rx->ready) {
			rx->ready = true;
			rx->st.sandbox_partial = f.arg;
			if (rx->st.restarts)
				rx->st.relistens++;
		}
		return 0;
	case RXC_BEAT:
		rx->beat = f.beat;
		rx->beats++;
		return 0;
	case RXC_GONE:
		if (!pipe_gone(rx, f.pipe, &ev->pipe))
			return 0;
		*ev = (struct receive_ev){ .type = RECEIVE_GONE, .pipe = ev->pipe };
		return 1;
	case RXC_MSG:
		if (!(p = pipe_get(rx, f.pipe, f.arg))) {
			command(rx, RXC_DROP, f.pipe, 0);
			return 0;
		}
		*ev = (struct receive_ev){
			.type = RECEIVE_MSG, .pipe = p->id, .data = f.data, .len = f.len
		};
		return 1;
	default:
		return 0;
	}
}

/*
 * Is the child's main thread asleep in its poll, its only wait: in poll or ppoll
 * (/proc/PID/syscall, kept open for the child's life: a look is one pread) and not stopped
 * (waitid WSTOPPED, left for a later wait)? Then it is not hung, and it needs no PING: the kernel
 * wakes it for whatever it must serve. Neither wakes it; the PID is our own child's, not reaped
 * yet. Unreadable (no ptrace right over it, no descriptor), or anywhere else (running, in a
 * futex): false, and a PING decides.
 */
static bool child_asleep_in_poll(struct receive *rx)
{
	char path[64], text[256];
	siginfo_t si = { 0 };
	ssize_t k;
	long nr;

	if (rx->proc_fd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/syscall", (int)rx->child);
		if ((rx->proc_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			return false;
	}
	if ((k = pread(rx->proc_fd, text, sizeof(text) - 1, 0)) <= 0)
		return false;
	text[k] = '\0';
	nr = strtol(text, NULL, 10);
	if (nr != SYS_poll && nr != SYS_ppoll)
		return false;
	return waitid(P_PID, (id_t)rx->child, &si, WSTOPPED | WNOHANG | WNOWAIT) == 0 && !si.si_pid;
}

/* Is a PING out that no frame answered yet? (Frames are read before a PING is sent.) */
static bool ping_out(const struct receive *rx)
{
	return rx->ping_at && rx->ping_at >= rx->last_frame;
}

/*
 * When the child is due to be asked (no PING out: on a whole second of the monotonic clock, as
 * the daemon's check) or ended (one out, or before its READY).
 */
static uint64_t due_at(const struct receive *rx)
{
	if (!rx->ready)
		return rx->last_frame + START_MS * MS;
	if (ping_out(rx))
		return rx->ping_at + PONG_MS * MS;
	return fg_whole_second_ns(
		(rx->asleep_at > rx->last_frame ? rx->asleep_at : rx->last_frame) + PING_MS * MS);
}

/*
 * Set the timer to the next moment something is due without a frame: a look at a quiet child,
 * a ping's answer, a respawn. A deadline on a whole second sets a timer that goes on firing
 * every second, where the daemon's own check falls too, so that an idle parent sets it once and
 * not at every wake; a timer set to fire no later than the deadline is left alone (firing
 * early, it finds nothing due and is set again). Called after every look at the frames.
 */
static void arm(struct receive *rx)
{
	uint64_t now = fg_now_ns(), due = rx->child ? due_at(rx) : rx->respawn_at;
	struct itimerspec it = { 0 };

	if (due < now + MS)
		due = now + MS;
	if (rx->armed_at && rx->armed_at <= due)
		return;
	rx->armed_at = due;
	rx->armed_periodic = due % SEC == 0;
	it.it_value.tv_sec = (time_t)(due / SEC);
	it.it_value.tv_nsec = (long)(due % SEC);
	it.it_interval.tv_sec = rx->armed_periodic;
	(void)timerfd_settime(rx->tfd, TFD_TIMER_ABSTIME, &it, NULL);
}

/*
 * One event from the child's frames: 1 with *ev, or 0 when none is left, after what is due
 * without a frame (a look at a quiet child, a ping, the end of a hung one).
 */
static int next_frame(struct receive *rx, struct receive_ev *ev)
{
	uint64_t now = fg_now_ns();
	int rv;

	for (;;) {
		if (rx->n_gone) {
			*ev = (struct receive_ev){ .type = RECEIVE_GONE, .pipe = rx->gone[0] };
			memmove(&rx->gone[0], &rx->gone[1], (rx->n_gone - 1) * sizeof(*rx->gone));
			rx->n_gone--;
			return 1;
		}
		respawn(rx, now);
		if (!rx->child)
			return 0; /* next_sep arms the timer at the respawn */
		rv = read_frame(rx, ev);
		if (rv == 1)
			return 1;
		if (rv < 0)
			break;
	}
	now = fg_now_ns();
	if (now >= due_at(rx)) {
		if (!rx->ready || ping_out(rx)) {
			end_child(rx, END_HUNG);
			return next_frame(rx, ev);
		}
		if (child_asleep_in_poll(rx)) {
			rx->asleep_at = now;
		} else {
			rx->ping_at = now;
			command(rx, RXC_PING, 0, 0);
			if (!rx->child) /* it could not take the ping */
				return next_frame(rx, ev);
		}
	}
	return 0;
}

/* The next event of the sandboxed child, the timer read when it fired and set again. */
static int next_sep(struct receive *rx, struct receive_ev *ev)
{
	uint64_t n;
	int rv;

	/*
	 * Fired n times (else EAGAIN): periodic, it fires next n seconds on; once, never. A timer
	 * set for later (armed_at; 0: as open_sep left it, unknown) has not fired: no read then
	 * (the daemon asks for events one at a time, and a read that found nothing was a system
	 * call per event).
	 */
	if ((!rx->armed_at || fg_now_ns() >= rx->armed_at) &&
	    read(rx->tfd, &n, sizeof(n)) == (ssize_t)sizeof(n))
		rx->armed_at = rx->armed_periodic ? rx->armed_at + n * SEC : 0;
	rv = next_frame(rx, ev);
	arm(rx);
	return rv;
}

/* ---- the files beside the socket (this side writes them, whichever runs the listener) -- */

/*
 * Write text[0..len) to PATH + suffix beside the socket (path[cap] gets its name, "" on failure),
 * created under a temporary name with O_CREAT|O_EXCL|O_NOFOLLOW and renamed into place (the
 * directory is shared with containers), readable by the agents' users whatever our umask.
 */
static int write_beside(struct receive *rx, const char *suffix, char *path, size_t cap,
			const char *text, size_t len)
{
	char tmp[sizeof(rx->features) + 24];
	int fd, rv = 0;

	if ((size_t)snprintf(path, cap, "%s%s", rx->o.path, suffix) >= cap ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)rx->self) >= sizeof(tmp)) {
		path[0] = '\0';
		return -ENAMETOOLONG;
	}
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		path[0] = '\0';
		return -errno;
	}
	fchmod(fd, 0644);
	if (write(fd, text, len) != (ssize_t)len || rename(tmp, path) != 0) {
		rv = errno ? -errno : -EIO;
		unlink(tmp);
		path[0] = '\0';
	}
	close(fd);
	return rv;
}

static const char features_text[] =
	FG_FEATURE_INTERN "\n" FG_FEATURE_TABLES "\n" FG_FEATURE_EVENTS "\n";

/*
 * Tell agents what we read: PATH.features. Failing to write it only means agents send what
 * every collector reads. An empty PATH.want first: a want file a killed collector left behind
 * names no agent to us.
 */
static void write_features(struct receive *rx)
{
	(void)write_beside(rx, FG_WANT_SUFFIX, rx->want, sizeof(rx->want), "", 0);
	(void)write_beside(rx, FG_FEATURES_SUFFIX, rx->features, sizeof(rx->features),
			   features_text, sizeof(features_text) - 1);
}

/* An older collector started here next must not be sent what it cannot read. */
static void unlink_beside(struct receive *rx)
{
	if (rx->features[0])
		unlink(rx->features);
	if (rx->want[0])
		unlink(rx->want);
}

int receive_want(struct receive *rx, const uint64_t *tokens, size_t n,
		 const struct jvm_evwant_tok *ev, size_t nev)
{
	char *text, line[160];
	size_t len = 0;
	int rv;

	text = malloc(FG_WANT_MAX + 1);
	if (!text)
		return -ENOMEM;
	/* Events lines first, then the tables' tokens, within what an agent reads. */
	for (size_t i = 0; i < nev; i++) {
		size_t k = jvm_evwant_line(&ev[i].w, ev[i].token, line, sizeof(line));

		if (k && len + k + 1 <= FG_WANT_MAX) {
			memcpy(text + len, line, k);
			len += k;
			text[len++] = '\n';
		}
	}
	for (size_t i = 0; i < n && len + 17 <= FG_WANT_MAX; i++)
		len += (size_t)snprintf(text + len, 18, "%016llx\n", (unsigned long long)tokens[i]);
	rv = write_beside(rx, FG_WANT_SUFFIX, rx->want, sizeof(rx->want), text, len);
	free(rx->want_text);
	rx->want_text = text;
	rx->want_len = len;
	return rv;
}

int receive_refresh(struct receive *rx)
{
	int rv;

	rv = write_beside(rx, FG_WANT_SUFFIX, rx->want, sizeof(rx->want),
			  rx->want_text ? rx->want_text : "", rx->want_text ? rx->want_len : 0);
	if (rv == 0)
		rv = write_beside(rx, FG_FEATURES_SUFFIX, rx->features, sizeof(rx->features),
				  features_text, sizeof(features_text) - 1);
	return rv;
}

/* ---- receive.h ------------------------------------------------------------------------ */

static void rx_free(struct receive *rx)
{
	if (rx->tfd >= 0)
		close(rx->tfd);
	FG_FREE_ALL(rx->buf, rx->pipes, rx->gone, rx->want_text, rx);
}

/* The first child's READY: 0, or why it could not listen or confine itself. */
static int await_ready(struct receive *rx)
{
	uint64_t end = fg_now_ns() + (uint64_t)rx->o.close_timeout_ms * MS * 2;
	struct receive_ev ev;

	while (!rx->ready) {
		struct pollfd p = { .fd = rx->sp, .events = POLLIN };
		uint64_t now = fg_now_ns();

		if (now >= end)
			return -ETIMEDOUT;
		(void)poll(&p, 1, (int)((end - now) / MS) + 1);
		if (read_frame(rx, &ev) == 0 && !rx->child)
			return rx->st.last_err ? rx->st.last_err : -ECHILD;
	}
	return 0;
}

static int open_sep(struct receive *rx)
{
	struct itimerspec it = { .it_value = { 0, TICK_MS * 1000000L } };
	int rv;

	rx->buf = malloc(RXCHAN_HDR + rx->o.max_msg);
	rx->pipes = calloc(rx->o.max_peers + 1, sizeof(*rx->pipes));
	rx->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (!rx->buf || !rx->pipes || rx->tfd < 0)
		return rx->tfd < 0 ? -errno : -ENOMEM;
	if (timerfd_settime(rx->tfd, 0, &it, NULL) != 0)
		return -errno;
	if ((rv = spawn(rx)) != 0)
		return rv;
	if ((rv = await_ready(rx)) != 0) {
		if (rx->child)
			end_child(rx, END_PROTO);
		return rv;
	}
	return 0;
}

/* Fill in o's defaults where it left 0 (receive.h: receive_opts). */
static void opts_defaults(struct receive_opts *o)
{
	FG_DEFAULT(o->max_peers, 1024);
	FG_DEFAULT(o->max_msg, FGP_MAX_MSG);
	FG_DEFAULT(o->probe_timeout_ms, 500);
	FG_DEFAULT(o->probe_failures, 3);
	FG_DEFAULT(o->socket_mode, 0666);
	FG_DEFAULT(o->close_timeout_ms, 2000);
}

int receive_open(const struct receive_opts *o, struct receive **out)
{
	struct receive *rx;
	int rv;

	if (!fg_socket_path_fits(o->path))
		return -ENAMETOOLONG;
	rx = FG_NEW_CONF(struct receive, o, o);
	if (!rx)
		return -ENOMEM;
	rx->sp = rx->tfd = rx->proc_fd = -1;
	rx->self = getpid();
	opts_defaults(&rx->o);
	/* Before the socket exists: an agent that connects at once reads what we read. */
	write_features(rx);
	rv = o->in_process ? rxnng_open(&rx->o, &rx->n) : open_sep(rx);
	if (rv != 0) {
		unlink_beside(rx);
		rx_free(rx);
		return rv;
	}
	*out = rx;
	return 0;
}

/* Ask the child to exit; SIGKILL after half a second. */
static void stop_child(struct receive *rx)
{
	/* The child holds nothing that needs a clean close: half a second, then SIGKILL (well
	 * within the 2 s a command gives the whole close). */
	unsigned ms = rx->o.close_timeout_ms < 500 ? rx->o.close_timeout_ms : 500;
	uint64_t end = fg_now_ns() + (uint64_t)ms * MS;
	struct stat st;
	int status;

	command(rx, RXC_EXIT, 0, 0);
	/* Our end closed also ends a child blocked sending to us. */
	if (rx->sp >= 0)
		close(rx->sp);
	rx->sp = -1;
	while (rx->child && waitpid(rx->child, &status, WNOHANG) == 0) {
		if (fg_now_ns() >= end) {
			kill(rx->child, SIGKILL);
			(void)waitpid(rx->child, &status, 0);
			break;
		}
		(void)poll(NULL, 0, 5);
	}
	rx->child = 0;
	close_proc_fd(rx);
	/* nng unlinked the file when it closed the listener; the child never closes it. */
	if (lstat(rx->o.path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(rx->o.path);
}

int receive_close(struct receive *rx)
{
	int rv = 0;

	if (!rx)
		return 0;
	unlink_beside(rx);
	if (rx->n) {
		rv = rxnng_close(rx->n);
		rx->n = NULL;
		if (rv == -ETIMEDOUT) {
			free(rx->want_text);
			free(rx); /* rxnng keeps what nng's threads may still use */
			return rv;
		}
	} else {
		stop_child(rx);
	}
	rx_free(rx);
	return rv;
}

int receive_pollfds(struct receive *rx, struct pollfd *fds)
{
	if (rx->n)
		return rxnng_pollfds(rx->n, fds);
	fds[0] = (struct pollfd){ .fd = rx->sp, .events = POLLIN };
	fds[1] = (struct pollfd){ .fd = rx->tfd, .events = POLLIN };
	return 2;
}

int receive_next(struct receive *rx, struct receive_ev *ev)
{
	return rx->n ? rxnng_next(rx->n, ev) : next_sep(rx, ev);
}

int receive_peer_pid(struct receive *rx, uint32_t pipe, uint32_t *pid)
{
	const struct rxpipe *p;

	if (rx->n)
		return rxnng_peer_pid(rx->n, pipe, pid);
	if (!(p = pipe_by_id(rx, pipe)))
		return -ENOTCONN;
	*pid = p->pid;
	return 0;
}

void receive_drop_pipe(struct receive *rx, uint32_t pipe)
{
	const struct rxpipe *p;

	if (rx->n)
		rxnng_drop_pipe(rx->n, pipe);
	else if ((p = pipe_by_id(rx, pipe)))
		command(rx, RXC_DROP, p->cid, 0);
}

void receive_watchdog_pause(struct receive *rx, bool paused)
{
	if (rx->n) {
		rxnng_watchdog_pause(rx->n, paused);
		return;
	}
	rx->paused = paused;
	command(rx, RXC_PAUSE, 0, paused);
}

void receive_stats_sync(struct receive *rx, unsigned timeout_ms)
{
	uint64_t end = fg_now_ns() + (uint64_t)timeout_ms * MS, b0 = rx->beats, now;
	struct receive_ev ev;

	if (rx->n || !rx->child || !rx->ready)
		return;
	command(rx, RXC_PING, 0, 0);
	while (rx->child && rx->beats == b0 && (now = fg_now_ns()) < end) {
		struct pollfd p = { .fd = rx->sp, .events = POLLIN };

		if (read_frame(rx, &ev) < 0)
			(void)poll(&p, 1, (int)((end - now) / MS) + 1);
	}
}

void receive_stats(struct receive *rx, struct receive_stats *out)
{
	struct rxchan_beat t = rx->base;

	if (rx->n) {
		rxnng_stats(rx->n, out);
		return;
	}
	add_beat(&t, &rx->beat);
	*out = rx->st;
	out->accepted = t.accepted;
	out->refused_cap = t.refused_cap;
	out->gone = t.gone;
	out->probes = t.probes;
	out->probe_fail = t.probe_fail;
	out->probe_nofd = t.probe_nofd;
	out->probe_denied = t.probe_denied;
	out->refused_msgs = t.refused_msgs;
	out->connected = (unsigned)rx->beat.connected;
	if (rx->beat.last_err)
		out->last_err = rx->beat.last_err;
	out->child = rx->child;
}
