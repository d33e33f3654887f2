/* SPDX-License-Identifier: MIT */
/*
 * receive.h - the agents' socket: an nng pull0 listener on ipc://PATH, and nothing else of nng.
 *
 * Delivers messages tagged with the pipe (connection) they came from, and the end of each
 * pipe. The peer's PID is the kernel's (SO_PEERCRED via NNG_OPT_IPC_PEER_PID), never a message's.
 *
 * Hardening against nng 1.5.2: NNG_OPT_RECVMAXSZ caps every message (nng would otherwise
 * allocate whatever length a peer announces); the socket file is made 0666 so container users of
 * any uid can connect; a connection cap refuses pipes beyond max_peers; and a watchdog thread
 * defends against the listener wedge of nng issue #1518 (fixed in 1.6): a peer that disconnects
 * during the SP handshake makes the negotiation fail with NNG_ECLOSED, which the listener's accept
 * loop mistakes for its own closing and stops accepting for good. Every watchdog_ms the watchdog
 * connects to the listener from inside this process, does the SP handshake by hand (an nng
 * dialer's redials made nng's poll thread spin, see receive.c) and waits for a pipe (its own, or
 * any other) to reach the socket. A probe the listener answered (its SP header came back) while
 * no pipe came within probe_timeout_ms is the wedge itself (one peer that hangs up before its
 * connection is accepted is enough), and the listener is closed and listened again at once (its
 * existing pipes close too, and agents reconnect and replay); a probe that got no answer at all
 * counts only after probe_failures of them in a row: one slow probe is what a burst of
 * connections from a noisy or hostile container looks like, and must not cost every agent its
 * connection. For the first probes after a listen, when agents redial, the period is at most
 * 250 ms.
 *
 * Privilege separation: all of the above runs in a child process (receive.c) that listens
 * as root, then confines itself (sandbox.h: chroot into the socket's directory, another uid
 * and gid, no capabilities, no new privileges, seccomp allowlist, rlimits) and forwards over a
 * socketpair only messages that decode whole, with their pipe and the kernel's peer PID. This
 * side decodes every frame again, writes the files beside the socket, and restarts a child
 * that died, did not answer a ping (hung) or found its listener wedged (its re-listen):
 * every pipe of the old child is reported RECEIVE_GONE, and agents reconnect and replay.
 * Pipe ids are this side's, unique for the life of the process across children.
 *
 * Invariant: one consumer thread calls every function here; with in_process, the pipe
 * callbacks and the watchdog run on other threads and share only the locked pipe set and the
 * gone queue.
 */
#ifndef FG_RECEIVE_H
#define FG_RECEIVE_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jvmevent.h"

struct receive;

struct receive_opts {
	const char *path;	   /* socket file; its directory must exist (a re-listen makes it
				    * again, 0755, when it was removed) */
	unsigned max_peers;	   /* connections beyond this are closed at once; 0 = 1024 */
	size_t max_msg;		   /* NNG_OPT_RECVMAXSZ; 0 = FGP_MAX_MSG */
	unsigned watchdog_ms;	   /* self-probe period; 0 = no watchdog */
	unsigned probe_timeout_ms; /* 0 = 500 */
	unsigned probe_failures;   /* consecutive failed probes before re-listening; 0 = 3 */
	int socket_mode;	   /* 0 = 0666 */
	int allow_self_peer;	   /* tests: admit connections from this very process */
	unsigned close_timeout_ms; /* receive_close waits this long for nng; 0 = 2000 */
	int in_process;		   /* run the listener in this process: no sandboxed child */
	unsigned sandbox_uid;	   /* the child's uid and gid when we are root; 0 = 65534 */
	unsigned sandbox_gid;
};

/*
 * What the child's confinement could not do for want of a capability (a collector in a container
 * with only the capabilities it profiles with); the rest is done all the same.
 */
#define RECEIVE_SANDBOX_NO_CHROOT 0x1u /* no CAP_SYS_CHROOT: the file system stays in sight */
#define RECEIVE_SANDBOX_NO_IDS 0x2u    /* no CAP_SETUID/CAP_SETGID: uid 0, no capability */

enum receive_ev_type {
	RECEIVE_MSG = 1,  /* a message from pipe */
	RECEIVE_GONE = 2, /* pipe closed (peer left, or we dropped it); no more messages from it */
};

struct receive_ev {
	enum receive_ev_type type;
	uint32_t pipe;	     /* nng pipe id, unique for the life of the process */
	const uint8_t *data; /* RECEIVE_MSG: the message, valid until the next receive_next */
	size_t len;
};

struct receive_stats {
	uint64_t accepted;     /* pipes admitted */
	uint64_t refused_cap;  /* pipes closed because max_peers were connected */
	uint64_t gone;	       /* pipes ended */
	uint64_t probes;       /* watchdog self-probes */
	uint64_t probe_fail;   /* self-probes that did not reach the socket in time */
	uint64_t relistens;    /* listeners re-created after a failed probe */
	uint64_t relisten_err; /* ... that failed (retried next period) */
	uint64_t probe_nofd;   /* probes we could not make: no descriptor left (not a failure) */
	/* probes the socket's directory refused the listener (EACCES: the sandboxed listener's uid
	 * cannot search it; not a failure, so no restart) */
	uint64_t probe_denied;
	int last_err;	    /* the last failed re-listen's or probe's -errno, 0 none */
	unsigned connected; /* pipes now */
	/* the sandboxed child (0 with in_process): */
	unsigned sandbox_partial; /* what its confinement could not do: RECEIVE_SANDBOX_NO_* */
	uint64_t restarts;	  /* children ended and started again, for any of: */
	uint64_t died_crash;	  /* killed by a signal (SIGSEGV, SIGKILL, ...) */
	uint64_t died_syscall;	  /* killed by its seccomp filter (a forbidden system call) */
	uint64_t died_wedge;	  /* exited on its wedged listener */
	uint64_t wedge_answered;  /* ... that had answered a probe without taking a pipe */
	uint64_t died_hung;	  /* quiet, and no answer to a ping within 0.5 s: killed */
	uint64_t died_other;	  /* exited otherwise, or broke the channel's framing */
	uint64_t refused_msgs;	  /* agent messages that did not decode whole: not forwarded */
	uint64_t refused_frames;  /* channel frames this side refused (the child is ended) */
	int child;		  /* the child's PID now, 0 none */
};

/*
 * Listen on o->path (a stale socket file left by a killed process is replaced). On success
 * *out owns the socket and the watchdog thread. 0, or a negative errno (-EADDRINUSE when another
 * live process listens there).
 */
int receive_open(const struct receive_opts *o, struct receive **out);

/*
 * Stop the watchdog, close every pipe and the listener (which unlinks the socket file). 0, or
 * -ETIMEDOUT when nng (1.5.2) did not finish closing within close_timeout_ms: the close goes on
 * in the background with rx left allocated for it, and the caller should exit soon.
 */
int receive_close(struct receive *rx);

/* What a command says when receive_close() returned -ETIMEDOUT with the default time limit. */
#define RECEIVE_CLOSE_LATE                                                                         \
	"the agent socket did not close within 2 s (nng 1.5.2); exiting without it"

/* Fill fds[0..2) with descriptors to poll for POLLIN; returns 2. */
int receive_pollfds(struct receive *rx, struct pollfd *fds);

/* Non-blocking: 1 and *ev, or 0 when nothing is pending. Messages come before gone events. */
int receive_next(struct receive *rx, struct receive_ev *ev);

/*
 * The kernel's PID of the process at the other end of pipe, as it was when the pipe connected:
 * 0, or -ENOTCONN once the pipe's RECEIVE_GONE has been taken (a message queued before its
 * sender hung up still has its PID).
 */
int receive_peer_pid(struct receive *rx, uint32_t pipe, uint32_t *pid);

/* Close pipe (its RECEIVE_GONE follows). */
void receive_drop_pipe(struct receive *rx, uint32_t pipe);

void receive_stats(struct receive *rx, struct receive_stats *out);

/*
 * Bring the sandboxed child's counters up to date for a last summary: an idle child is never
 * asked for them (it sleeps in its poll), so ask it, and read its frames until it answers, at
 * most timeout_ms. The messages read meanwhile are not handed on: call it only before
 * receive_close. Nothing to do in process.
 */
void receive_stats_sync(struct receive *rx, unsigned timeout_ms);

/*
 * Pause (or resume) the watchdog's self-probes: for a user that needs no new connection while
 * paused (a recording whose every target's agent is connected). A probe costs ~0.5 ms of CPU,
 * mostly nng's threads waking: a quarter to a third of a 99 Hz recording's own CPU on a service
 * that uses a tenth of a core. Resuming starts the count of failed probes afresh.
 */
void receive_watchdog_pause(struct receive *rx, bool paused);

/*
 * Tables and events on demand: write the want file beside the socket (fgsocket.h): an events
 * line for each of ev[0..nev) that wants any event, then tokens[0..n) (whose tables are
 * wanted), at most what an agent reads (FG_WANT_MAX), atomically. 0 or a negative errno
 * (agents then keep the previous list).
 */
int receive_want(struct receive *rx, const uint64_t *tokens, size_t n,
		 const struct jvm_evwant_tok *ev, size_t nev);

/*
 * After a re-listen or a child's restart (receive_stats' relistens grew): write the features and
 * want files beside the socket again (its directory may be a new one). Called from the thread that
 * calls receive_want. 0 or a negative errno.
 */
int receive_refresh(struct receive *rx);

/*
 * The sandboxed child is this very program executed again (/proc/self/exe: a fresh address
 * space, nothing of the parent's memory) with argv[1] RECEIVE_CHILD_ARG: a program that opens a
 * receive without in_process calls receive_child_main first thing in main when it sees it.
 * It does not return but on bad arguments (an exit status).
 */
#define RECEIVE_CHILD_ARG "--fg-receive-child"
int receive_child_main(int argc, char **argv);

#endif
