/* SPDX-License-Identifier: MIT */
/*
 * nstid.h - a JVM's thread ids as its agent sees them (gettid() inside its PID namespace)
 * mapped to the host's, by reading the NSpid line of /proc/<host pid>/task/<tid>/status of the
 * kernel-verified process: the agent's number is only ever looked up among that process's own
 * tasks, never used as a host tid.
 *
 * A miss rescans the task directory, at most once per NSTID_RESCAN_NS (a flood of unknown tids
 * costs one scan a period, the rest are refused and counted); a hit older than NSTID_CHECK_NS
 * is checked again against its task's status (a namespace tid reused by a new thread). At most
 * NSTID_MAX threads are kept and NSTID_MAX tasks read per scan.
 *
 * Invariant: bounded memory and bounded /proc reads per period, whatever tids a peer sends.
 * Single-threaded.
 */
#ifndef FG_NSTID_H
#define FG_NSTID_H

#include <stdint.h>

#include "htab.h"

#define NSTID_MAX 65536u
#define NSTID_RESCAN_NS 100000000ull /* 100 ms */
#define NSTID_CHECK_NS 1000000000ull /* 1 s */

struct nstid_stats {
	uint64_t hits, misses, scans, refused, stale;
};

struct nstid {
	const char *proc_root; /* borrowed */
	uint32_t host_pid;
	struct htab map;    /* ns tid -> host tid | (checked_at >> 24) << 32 */
	uint64_t last_scan; /* ns; 0 = never */
	struct nstid_stats st;
};

/* proc_root NULL = "/proc"; it must outlive m. No allocation. */
void nstid_init(struct nstid *m, const char *proc_root, uint32_t host_pid);
void nstid_fini(struct nstid *m);

/*
 * The host tid of the thread the agent calls ns_tid, now being the clock (ns, monotonic): 0 with
 * *host_tid, or -ENOENT (no task of the process has it, or a rescan is not due yet).
 */
int nstid_lookup(struct nstid *m, uint32_t ns_tid, uint64_t now, uint32_t *host_tid);

#endif
