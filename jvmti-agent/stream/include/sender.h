/* SPDX-License-Identifier: MIT */
/*
 * sender.h - the sender: drains the event queue into the live code table and, while a
 * collector is connected, batches the records into messages for it.
 *
 * On every new connection it first sends HELLO (and the records given in after_hello), then
 * SNAPSHOT_BEGIN, every record of the table flagged FGP_REC_REPLAY, SNAPSHOT_END, a DROPPED
 * record if anything was dropped, and from then on the deltas, batched into messages of at most
 * SENDER_MSG_MAX bytes: the first event after a quiet spell leaves at once; while events keep
 * coming the gap between messages doubles from SENDER_FLUSH_GAP_NS up to
 * SENDER_FLUSH_GAP_MAX_NS, SENDER_FLUSH_GAP_EV_MAX_NS while allocation or lock events flow
 * (back to the shortest after a quiet spell of 4 gaps), and the thread
 * sleeps in between without being woken by each event. While no collector is connected only the
 * table is updated (every 50 ms, or sooner when the queue fills past half its budget). A connection
 * that refuses messages (the collector is behind or frozen) is retried without blocking and reset
 * when the batch is full or the refusal lasts a second; a connection replaced by a new one is reset
 * too, so no message meant for an old connection ever precedes a new connection's HELLO.
 *
 * What the collector wants (tables on demand, see sender_on_want) is followed on this thread too.
 * The transport sits behind struct link_ops, so the logic runs in tests without nng.
 * Invariant: on one connection, HELLO is the first record and the snapshot the complete table.
 */
#ifndef FG_SENDER_H
#define FG_SENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agentcount.h"
#include "fgproto.h"
#include "queue.h"
#include "wantfile.h"

/* Every record fits one message: our encoders cap a record at FGP_MAX_RECORD. */
#define SENDER_MSG_MAX (FGP_MAX_RECORD + FGP_MSG_HEADER_SIZE)
#define SENDER_FLUSH_GAP_NS 4000000ull /* shortest gap between messages while events flow */
/*
 * The longest gap, reached in a sustained storm: each message costs ~0.4 ms of CPU on the two
 * sides (mostly thread wake-ups: nng's, the collector's confined child and its parent, and a
 * map write), so fewer, larger messages are what a storm needs; it stays well inside the 1.3 s
 * a collector's profile waits for late code events (its settle window). While the collector
 * takes allocation and lock events (an EVENTS on is out), whose flow never pauses, the gap
 * stays at most SENDER_FLUSH_GAP_EV_MAX_NS, so that a recording's last events reach it as
 * soon as before.
 */
#define SENDER_FLUSH_GAP_MAX_NS 256000000ull
#define SENDER_FLUSH_GAP_EV_MAX_NS 128000000ull
#define SENDER_AFTER_HELLO_MAX 4096u /* longer after_hello blobs are not sent */

struct link_ops {
	/*
	 * Send buf[0..len) as one message without blocking. Returns 0, -EAGAIN if the transport
	 * cannot take it now, or another negative errno if the connection is unusable. The buffer
	 * stays the caller's.
	 */
	int (*send)(void *link, const uint8_t *buf, size_t len);
	/* Id of the current connection (distinct for every connection), or 0 if none is up. */
	uint64_t (*state)(void *link);
	/* Drop the current connection and anything queued for it, and start dialing again. */
	void (*reset)(void *link);
	/*
	 * Optional: does the collector behind the link read feature (FG_FEATURE_*)? Asked on the
	 * sender thread at every new connection. NULL: no feature.
	 */
	bool (*reads)(void *link, const char *feature);
	/*
	 * Optional: does the collector's want file (fgsocket.h) list token? 1 yes, 0 no (no file,
	 * unreadable: no). Asked on the sender thread, when wantfile_due (wantfile.h) while a
	 * connection to a collector that reads FG_FEATURE_TABLES is up. NULL: never.
	 */
	int (*wanted)(void *link, uint64_t token);
	/*
	 * Optional: the events the collector's want file asks of token (its events line; all
	 * zero: none, no file). Asked as wanted is, while a connection to a collector that reads
	 * FG_FEATURE_EVENTS (and interned names) is up. NULL: never.
	 */
	void (*wanted_events)(void *link, uint64_t token, struct want_events *out);
};

struct sender_hello {
	uint32_t pid;
	uint32_t flags; /* FGP_HELLO_* */
	const char *jvm_version;
	const char *agent_version;
	/* Encoded records sent right after HELLO on every connection (the VM_LAYOUT), or NULL;
	 * copied by sender_new. */
	const uint8_t *after_hello;
	size_t after_hello_len;
	const char *service; /* may be NULL or "" */
	uint64_t token;	     /* HELLO's token: this agent's name in the want file */
};

/* The sender's own counters (agentcount.h), in sender_stats after queue_dropped. */
#define SENDER_COUNTERS(X)                                                                         \
	X(table_full)	 /* blobs not kept for replay: table budget spent */                       \
	X(connections)	 /* connections synced with HELLO + snapshot */                            \
	X(resets)	 /* connections dropped because they stopped taking messages */            \
	X(records_sent)	 /* delta records sent (replays not included) */                           \
	X(replayed)	 /* records sent in snapshots */                                           \
	X(names_sent)	 /* NAME records (interned names, once per connection) */                  \
	X(events_unsent) /* STACK_EVENT, OBJECT_FREE for a connection that asked none */

struct sender_stats {
	uint64_t queue_dropped; /* events refused by the queue */
	SENDER_COUNTERS(AGENTCOUNT_FIELD)
};

struct sender;

/*
 * A sender reading q and keeping a table of at most table_budget bytes. hello's strings are
 * copied. ops/link are borrowed until sender_free. NULL on ENOMEM.
 */
struct sender *sender_new(struct queue *q, size_t table_budget, const struct sender_hello *hello,
			  const struct link_ops *ops, void *link);

/* Free s (not q, not the link). The thread must be stopped. NULL is fine. */
void sender_free(struct sender *s);

/*
 * One round on the calling thread: follow the connection state, drain the queue, sync a new
 * connection, flush. Waits at most send_wait_ms for a transport that answers -EAGAIN before
 * resetting that connection. Returns the number of queue entries consumed.
 */
size_t sender_poll(struct sender *s, int send_wait_ms);

/*
 * How long the thread may sleep when a round left nothing to do (sender_step returned 0): until
 * the want file is next due on a connection whose collector reads FG_FEATURE_TABLES, else up to
 * a second (events, and a connection that comes or goes, wake it before).
 */
uint64_t sender_idle_ns(const struct sender *s);

/*
 * One round of the thread, without ever waiting for the transport outside a snapshot: follow
 * the connection, drain the queue, and send the batch if the current gap passed since the last
 * message (or retry a refused one). Returns the CLOCK_MONOTONIC time at which to run again
 * even if no event comes (a batch waits, a refused message is retried, no collector), or 0 to
 * run at the next event.
 */
uint64_t sender_step(struct sender *s);

/* Start the thread: sender_step, then sleep, until sender_stop. 0 or -errno. */
int sender_start(struct sender *s);

/*
 * Ask the thread to flush what is queued and exit, and wait for it at most timeout_ms.
 * Returns 0 once it exited, or -ETIMEDOUT (the thread still runs: do not free s then).
 */
int sender_stop(struct sender *s, int timeout_ms);

/* Counters so far (read from any thread; values may be a moment old). */
void sender_get_stats(struct sender *s, struct sender_stats *out);

/*
 * The agent-wide interned names the queue's CODE_LOAD_IDS records refer to (borrowed; set before
 * sender_start). Connections whose collector reads interned records get a NAME for each id
 * before its first use; others get those records spelled out as CODE_LOAD.
 */
struct intern;
void sender_set_intern(struct sender *s, struct intern *st);

/*
 * The clock every decision of s reads (agentclock.h; borrowed, NULL: the real one). Set before
 * sender_start; tests drive sender_step and sender_poll on a fake one.
 */
struct agentclock;
void sender_set_clock(struct sender *s, const struct agentclock *clock);

/*
 * Tables on demand: fn(arg, want) on the sender thread whenever what this connection's
 * collector wants changes. A new connection starts with false; a collector that does not read
 * FG_FEATURE_TABLES wants them (true right after its snapshot); one that does wants them while
 * its want file lists our token. Losing the connection is false. Set before sender_start.
 */
void sender_on_want(struct sender *s, void (*fn)(void *arg, bool want), void *arg);

/*
 * Events on demand: fn(arg, w, conn) on the sender thread whenever what connection conn's
 * collector asks changes (its want file's events line, polled with the tables' line). A new
 * connection starts with nothing; losing it is nothing (conn 0). Only a collector that reads
 * FG_FEATURE_EVENTS and interned names is asked. STACK_EVENT and OBJECT_FREE records go out on
 * a connection only after an EVENTS record that turned events on, and before one that turned
 * them off; NAMEs of their frames' ids go first. Set before sender_start.
 */
void sender_on_events(struct sender *s,
		      void (*fn)(void *arg, const struct want_events *w, uint64_t conn), void *arg);

/* The table, for tests and benchmarks on the polling thread. */
struct livecode *sender_livecode(struct sender *s);

#endif
