/* SPDX-License-Identifier: MIT */
/*
 * wantfile.h - the agent's side of the collector's want file (fgsocket.h), in one place: where
 * it is (beside the socket), when it is asked (at the sync of a connection whose collector reads
 * FG_FEATURE_TABLES, then every WANTFILE_POLL_NS for WANTFILE_FAST_FOR_NS and every
 * WANTFILE_POLL_SLOW_NS after that while it lasts: wantfile_due), how it is read (a stat, and a
 * read only when the file changed) and how it is parsed (one token per line).
 *
 * Why two paces: a collector of its own (`record --pid`) writes the file before the agent
 * connects, so the first asks find it; a daemon that the agent has served for hours writes it
 * when a recording starts, and a slower pace there costs that recording's tables up to
 * WANTFILE_POLL_SLOW_NS, while each ask is a wake-up of the sender thread in every JVM on the
 * host, all day.
 *
 * The same file may hold an events line per agent (fgsocket.h: "<token> events [alloc=BYTES]
 * [live] [lock=US] [depth=N] [budget=PPM]"): wantfile_events parses it, wantfile_read keeps its
 * answer.
 *
 * Invariant: a file that cannot be found, read or parsed says "not wanted" (no tables, no
 * events).
 */
#ifndef FG_WANTFILE_H
#define FG_WANTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#define WANTFILE_POLL_NS 100000000ull	   /* at the start of a connection ... */
#define WANTFILE_FAST_FOR_NS 2000000000ull /* ... for its first 2 s, */
#define WANTFILE_POLL_SLOW_NS 500000000ull /* then every 500 ms */

/* What an events line asks of one agent; on == 0: nothing. */
struct want_events {
	uint32_t on;		 /* FGP_EVM_*; LIVE only with ALLOC */
	uint64_t alloc_interval; /* bytes (1..WANT_ALLOC_MAX) when ALLOC is on */
	uint64_t lock_ns;	 /* the lock threshold when LOCK is on */
	uint32_t depth;		 /* 1..FGP_MAX_EVENT_DEPTH, 0: the agent's own */
	uint32_t budget_ppm;	 /* alloc's cost budget (evbudget.h), 0: none */
};

#define WANT_ALLOC_MAX (1ull << 30)    /* bytes */
#define WANT_LOCK_MAX_US 3600000000ull /* an hour */
#define WANT_BUDGET_MAX_PPM 1000000u   /* all of the JVM's CPU */

struct wantfile {
	char path[128];
	char *buf;		   /* FG_WANT_MAX bytes, allocated at the first read */
	struct stat st;		   /* the file as last read (st_ino 0: never) */
	int answer;		   /* what it said then */
	struct want_events events; /* ... and its events line */
};

/* The want file of the collector listening on socket_path. 0 or -ENAMETOOLONG. */
int wantfile_init(struct wantfile *w, const char *socket_path);

/* Free what w holds. */
void wantfile_fini(struct wantfile *w);

/* When to ask next, last asked at last_ns on a connection synced at since_ns. */
static inline uint64_t wantfile_next(uint64_t since_ns, uint64_t last_ns)
{
	return last_ns + (last_ns - since_ns < WANTFILE_FAST_FOR_NS ? WANTFILE_POLL_NS
								    : WANTFILE_POLL_SLOW_NS);
}

/* Is it time to ask again, last asked at last_ns on a connection synced at since_ns? */
static inline bool wantfile_due(uint64_t since_ns, uint64_t last_ns, uint64_t now_ns)
{
	return now_ns >= wantfile_next(since_ns, last_ns);
}

/*
 * Does the file list token? 1 yes, 0 no (no file, not a regular file, a symlink, unreadable).
 * Costs a stat when the file is unchanged since the last read (inode, size, mtime).
 */
int wantfile_read(struct wantfile *w, uint64_t token);

/*
 * What the file asks of token's events (its events line; no file, no line: all off), at the
 * cost of wantfile_read (which it calls).
 */
void wantfile_read_events(struct wantfile *w, uint64_t token, struct want_events *out);

/*
 * The events line of token (never 0) in buf[0..len), in *out: the first line that starts with
 * token's 16 hex digits, then " events", then words each after one space. Words it does not
 * know, bad values and live without alloc= are ignored; a cut-off last line, or none, asks for
 * nothing.
 */
void wantfile_events(const char *buf, size_t len, uint64_t token, struct want_events *out);

/*
 * Does the text buf[0..len) (one token per line, 16 lower-case hex digits) list token (never
 * 0)? A cut-off last line lists nothing.
 */
bool wantfile_listed(const char *buf, size_t len, uint64_t token);

#endif
