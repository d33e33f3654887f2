/* SPDX-License-Identifier: MIT */
/*
 * jvmset.h - the JVMs a collector serves: connections -> verified identity -> code table ->
 * perf map, and what happens when they leave.
 *
 * Identity: a JVM is (host PID, start time). The host PID is the kernel's (the socket's peer
 * PID); /proc/<pid>/status must agree with the PID the agent's HELLO states (last NSpid value),
 * else the connection is rejected. A reconnection of the same process (collector restart or
 * agent reconnect) finds its JVM again and the agent's replay merges into the table; a new
 * process that reuses a PID gets a new JVM.
 *
 * Perf maps: a JVM whose live set changed is dirty; jvmset_tick() brings its map up to date
 * (perfmap_writer: new code that overlaps nothing in the file is appended, at most every
 * min_write_ns; the file is compacted, i.e. rewritten as the live set, when an address is reused
 * or dead lines fill half of it, at most every interval, where interval = clamp(20 x the CPU time
 * of the last compaction, min_write_ns, max_write_ns)). So the first event after a quiet spell is
 * written at once and a JIT storm that keeps reusing addresses costs at most about 1/20 of a core
 * per JVM. While a replay runs (SNAPSHOT_BEGIN..END, at most 2 s) the map is appended to but not
 * compacted, so a restarted collector never shrinks a complete map to a partial one.
 *
 * Exit: when a connection ends, /proc says whether the process is gone (or its PID reused). An
 * exited JVM keeps its map and table for keep_exited_ns, then the map is removed (only if it is
 * still the file we wrote) and the JVM forgotten. A JVM whose agent disconnected but whose
 * process lives keeps its map, and is re-checked every second.
 *
 * Invariant: library code, never prints; everything worth a log line goes to the observers.
 * Single-threaded: call from one thread.
 */
#ifndef FG_JVMSET_H
#define FG_JVMSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codetab.h"
#include "jvmevent.h"
#include "peer.h"

struct perfmap_dir;
struct perfmap_file;
struct receive;
struct jvm;
struct jvmset;

#define JVM_VERSION_MAX 128
#define JVM_SERVICE_MAX 129 /* 128 bytes + NUL */

/* A snapshot of one JVM, for logs and `list`. */
struct jvm_info {
	uint32_t host_pid;
	uint32_t ns_pid;
	uint64_t start_time; /* clock ticks since boot (/proc/<pid>/stat field 22) */
	char container_id[PEER_CONTAINER_ID_MAX + 1]; /* "" when none */
	char jvm_version[JVM_VERSION_MAX];
	char agent_version[64];
	char service[JVM_SERVICE_MAX]; /* the HELLO's service label; "" when the agent sent none */
	uint32_t hello_flags;	       /* FGP_HELLO_* */
	uint64_t token;		       /* the HELLO's token (want file); 0 when none */
	/* The agent sends its compiled methods' tables now: always for one without
	 * FGP_HELLO_TABLES_ON_DEMAND, else from its TABLES on until TABLES off or its connection
	 * ends. */
	bool tables;
	bool connected;
	bool exited;
	uint64_t connect_ts, exit_ts;
	uint64_t records, bad_records, bad_msgs;
	uint64_t agent_queue_full, agent_table_full; /* last DROPPED record */
	uint64_t map_writes, map_errors, map_enospc;
	struct codetab_stats tab;
	/* Events (FGP_HELLO_EVENTS): the agent's last EVENTS record, if any, and what the
	 * collector dropped of this JVM's events. */
	bool events_known;
	struct fgp_events events;
	struct jvm_ev_drops ev_drops;
	uint64_t ev_stacks, ev_frees; /* events handed on */
};

enum jvmset_event {
	JVMSET_CONNECT,	   /* a verified HELLO; info filled */
	JVMSET_DISCONNECT, /* its connection ended; info.exited says whether the process is gone */
	JVMSET_EXIT,	   /* a disconnected JVM's process was found gone */
	JVMSET_EXPIRE,	   /* keep-exited elapsed: map removed, JVM forgotten */
	JVMSET_REJECT,	   /* a connection refused: why says so; info has what we knew */
	JVMSET_MAP_ERROR,  /* a map write failed: err */
	JVMSET_BAD_PEER,   /* a connection dropped after too many malformed messages */
	JVMSET_MAP_OK,	   /* a map written again after failed writes: err is the last failure */
};

struct jvmset_observer {
	/* Called for the events above. why is a short text or NULL; err a negative errno or 0. */
	void (*event)(void *arg, enum jvmset_event ev, const struct jvm_info *info, int err,
		      const char *why);
	/* A valid record applied to jvm's table (raw bytes of the record, header included). */
	void (*record)(void *arg, const struct jvm *j, const uint8_t *raw, size_t len);
	/*
	 * Optional: whether record wants j's records now (someone is subscribed to them). A
	 * record of a JVM nobody wants is neither passed on nor prepared (an interned load is
	 * spelled out only for observers that take it). NULL: every record.
	 */
	bool (*wants)(void *arg, const struct jvm *j);
	/*
	 * Optional: the events (jvmevent.h) it wants of j now; out is zeroed by the caller, on 0
	 * means none. Asked at every jvmset_pump and jvmset_tick; what all observers want goes
	 * to opts.want (the want file's events line) for agents with FGP_HELLO_EVENTS.
	 */
	void (*evwant)(void *arg, const struct jvm *j, struct jvm_evwant *out);
	/*
	 * Optional: one of j's events, given to an observer whose last evwant asked for its kind
	 * (FREE: live; STATE: any). ev and everything it points to are borrowed for the call,
	 * which must not block (the receive path waits for it).
	 */
	void (*ev)(void *arg, const struct jvm *j, const struct jvm_event *ev);
	void *arg;
};

struct jvmset_opts {
	struct perfmap_dir *maps; /* where to write perf maps; NULL = no maps */
	const char *proc_root;	  /* NULL = "/proc" */
	uint64_t keep_exited_ns;  /* 0 = 1 h */
	uint64_t history_ns;	  /* ended blobs older than this are pruned; 0 = 10 min */
	unsigned max_bad_msgs;	  /* malformed messages before a connection is dropped; 0 = 16 */
	uint64_t min_write_ns;	  /* 0 = 2 ms */
	uint64_t max_write_ns;	  /* 0 = 500 ms */
	struct codetab_limits limits;
	/*
	 * Tables on demand: told, sorted, the tokens of the connected agents that send tables
	 * only when asked (FGP_HELLO_TABLES_ON_DEMAND) and whose records an observer takes (a
	 * record callback whose wants says yes) now or did within the last 3 s, at the first
	 * jvmset_pump or jvmset_tick and whenever that set changes; with them ev[0..nev), the
	 * connected agents with FGP_HELLO_EVENTS and a token whose events an observer wants now
	 * (evwant), merged. The receiving socket writes them to the want file (receive_want).
	 * NULL: nobody is told.
	 */
	void (*want)(void *arg, const uint64_t *tokens, size_t n, const struct jvm_evwant_tok *ev,
		     size_t nev);
	void *want_arg;
};

struct jvmset_counters {
	uint64_t msgs, bytes, records, bad_msgs, bad_records;
	uint64_t stale_msgs; /* messages of a connection superseded by a newer one, ignored */
	uint64_t rejected;   /* connections refused (identity checks) */
	uint64_t bad_peers;  /* connections dropped for malformed input */
	uint64_t connects, disconnects, exits, expired;
	uint64_t map_writes, map_errors, map_enospc;
	uint64_t map_compactions;		 /* map writes that rewrote the whole file */
	uint64_t ev_stacks, ev_frees, ev_states; /* events handed on */
	struct jvm_ev_drops ev_drops;		 /* events dropped, by cause */
	uint64_t map_write_ns;			 /* total time spent writing maps */
	unsigned jvms, connected;
};

int jvmset_new(const struct jvmset_opts *o, struct jvmset **out);
/* Frees everything; maps stay in place (valid for stock perf until a collector replaces them). */
void jvmset_free(struct jvmset *s);

/* Add an observer (at most 4). */
int jvmset_observe(struct jvmset *s, const struct jvmset_observer *ob);

/*
 * One message from connection pipe whose kernel peer PID is peer_pid (0 when unknown: the
 * connection is then refused). data is borrowed for the call. Returns 0 to keep the
 * connection, or a negative errno when the caller must close the pipe (its jvmset_gone
 * follows); each refusal is also reported to the observers (JVMSET_REJECT or JVMSET_BAD_PEER):
 *   -ESRCH            the kernel gave no peer PID
 *   -ENOENT, ...      /proc/<peer_pid> could not be read (peer_read's errno)
 *   -EPROTONOSUPPORT  the HELLO speaks another protocol version
 *   -EPERM            the HELLO's PID is not the peer's PID in its namespace (NSpid)
 *   -EUSERS           MAX_JVMS JVMs are known and none has exited
 *   -ENOMEM
 *   -EBADMSG          max_bad_msgs malformed messages: the bad-peer policy drops it
 * A connection superseded by a newer one of the same JVM (whose snapshot is complete) has its
 * messages ignored (counted as stale_msgs, 0 returned) until it ends.
 * A malformed message below that limit is counted and the connection kept (0).
 */
int jvmset_msg(struct jvmset *s, uint32_t pipe, uint32_t peer_pid, const uint8_t *data, size_t len,
	       uint64_t now);

/* Connection pipe has ended. */
void jvmset_gone(struct jvmset *s, uint32_t pipe, uint64_t now);

/* True when pipe has state here (its peer PID is then not needed again). */
bool jvmset_has_pipe(const struct jvmset *s, uint32_t pipe);

/* Drain rx: every pending message and end of connection. Returns how many events were handled. */
size_t jvmset_pump(struct jvmset *s, struct receive *rx, uint64_t now);

/*
 * Write due maps, check disconnected JVMs for exit, expire, prune history. Returns the time
 * (CLOCK_MONOTONIC ns) it wants to be called again at the latest.
 */
uint64_t jvmset_tick(struct jvmset *s, uint64_t now);

/* Write every dirty map now (shutdown, tests). */
void jvmset_flush(struct jvmset *s, uint64_t now);

/* Lookups for the control channel and the record command. */
struct jvm *jvmset_find(const struct jvmset *s, uint32_t host_pid);
size_t jvmset_count(const struct jvmset *s);
struct jvm *jvmset_at(const struct jvmset *s, size_t i);
void jvm_info(const struct jvm *j, struct jvm_info *out);
const struct codetab *jvm_table(const struct jvm *j);
uint32_t jvm_host_pid(const struct jvm *j);
/* The identity of j's map as last written (perfmap.h), or NULL when the set writes no maps. */
const struct perfmap_file *jvm_map_file(const struct jvm *j);

void jvmset_counters(const struct jvmset *s, struct jvmset_counters *out);

#endif
