/* SPDX-License-Identifier: MIT */
/*
 * fgsocket.h - where agents and the collector meet by default (contract): a host directory
 * mounted into containers. The agent's socket= option and the collector's --socket override it.
 */
#ifndef FG_SOCKET_H
#define FG_SOCKET_H

#include <stdbool.h>
#include <string.h>

#define FG_DEFAULT_SOCKET "/var/run/fgcollect/fgcollect.sock"

/* Does path fit an AF_UNIX address (108 bytes of sun_path, its NUL included)? */
static inline bool fg_socket_path_fits(const char *path)
{
	return path && strlen(path) < 108;
}

/*
 * What a collector reads, for agents that could send it in more than one way (the transport is
 * one-way: an agent cannot ask). A collector listening on PATH puts PATH FG_FEATURES_SUFFIX
 * beside it, one feature word per line, before the socket exists (an agent connects at once),
 * and removes it when it stops; an agent reads it at every (re)connection. No file: an older
 * collector, which gets only what every version reads.
 */
#define FG_FEATURES_SUFFIX ".features"
#define FG_FEATURE_INTERN "intern" /* NAME + CODE_LOAD_IDS records (fgproto.h) */
/*
 * Tables on demand (fgproto.h: FGP_HELLO_TABLES_ON_DEMAND, TABLES): the collector says which
 * agents should send their compiled methods' tables in PATH FG_WANT_SUFFIX beside the socket,
 * one HELLO token per line as 16 lower-case hex digits, replaced atomically (rename) whenever
 * the set changes; no file means none. An agent polls it while connected. A collector that does
 * not list this feature gets every table from every agent, all the time.
 */
#define FG_FEATURE_TABLES "tables"
#define FG_WANT_SUFFIX ".want"
#define FG_WANT_MAX (64u << 10) /* an agent reads at most this much of the want file */
/*
 * Events on demand (fgproto.h: FGP_HELLO_EVENTS, STACK_EVENT, EVENTS): the same want file holds,
 * for an agent asked for events, a line of its own (an agent of before events skips it: it
 * matches whole 16-digit lines only):
 *
 *   <16 hex digits of the token> events [alloc=BYTES] [live] [lock=US] [vthread] [vmount] [vcpu]
 *     [depth=N] [allocexact]
 *
 * words separated by one space, in any order: alloc= turns allocation sampling on with that
 * mean interval (1..2^30 bytes), live tracks the sampled objects (needs alloc=), lock= times
 * contended monitor entries of at least US microseconds (0: all), vthread times virtual
 * threads' waits from unmount to mount (JDK 21+, FGP_EV_VWAIT), vmount (with vthread) sends each
 * virtual thread's mount on its carrier (FGP_EV_VMOUNT), vcpu (with vmount) the mounts alone, for
 * a CPU profile (FGP_EVM_VCPU: no waits, no time off the CPU), depth= caps the stacks the
 * agent takes (1..FGP_MAX_EVENT_DEPTH, the agent's own default when absent), allocexact (with
 * alloc=) lets the agent weigh each allocation sample by its thread's bytes since its previous
 * sample (FGP_EVM_EXACT: STACK_EVENT's FGP_REC_ALLOC_GAP, ring slots' ALLOCRING_F_GAP). A word the
 * agent does not know, or a bad value, is ignored (the rest of the line holds). The line ends with
 * a newline (one without is taken as cut off, and asks nothing); of several lines for a token the
 * first holds. No line for a token: every event off. The tables line and the events line of one
 * token are independent. A collector lists this feature in its features file.
 */
#define FG_FEATURE_EVENTS "events"
#define FG_WANT_EVENTS_WORD "events"
#define FG_ALLOC_INTERVAL_DEFAULT (512u << 10) /* bytes, as Grafana Alloy's Java profiling */
#define FG_LOCK_THRESHOLD_DEFAULT_US 0u

#endif
