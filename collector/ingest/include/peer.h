/* SPDX-License-Identifier: MIT */
/*
 * peer.h - who is on the other end of an agent connection, from the kernel's point of view.
 *
 * The host PID comes from the socket (NNG_OPT_IPC_PEER_PID, i.e. SO_PEERCRED); this module reads
 * what /proc says about that PID: its PID inside its own namespace (last NSpid value), its start
 * time (field 22 of /proc/<pid>/stat, clock ticks since boot: (pid, start time) names one process
 * for the life of the host, so PID reuse is detected), and its container id from
 * /proc/<pid>/cgroup. Parsers take captured text so tests need no real processes.
 *
 * Invariant: nothing here trusts a message; every value comes from /proc, and every parser
 * rejects input it does not fully understand instead of guessing.
 */
#ifndef FG_PEER_H
#define FG_PEER_H

#include <stddef.h>
#include <stdint.h>

#define PEER_CONTAINER_ID_MAX 64 /* a full docker/containerd/cri-o id is 64 hex digits */

struct peer_info {
	uint32_t host_pid;
	uint32_t ns_pid;     /* PID as the process sees itself (last NSpid value) */
	uint32_t ns_depth;   /* number of NSpid values: 1 = host PID namespace */
	uint64_t start_time; /* clock ticks since boot */
	char container_id[PEER_CONTAINER_ID_MAX + 1]; /* "" when not in a recognised container */
};

/*
 * Parse the text of /proc/<pid>/status: the NSpid line. *ns_pid is its last value (the PID in
 * the innermost namespace), *depth the number of values. 0, or -EINVAL when the line is missing
 * or malformed.
 */
int peer_parse_nspid(const char *status, uint32_t *ns_pid, uint32_t *depth);

/*
 * Parse the text of /proc/<pid>/stat: field 22 (starttime). comm (field 2) may contain spaces and
 * parentheses: the fields after it are found from the LAST ')'. 0, or -EINVAL.
 */
int peer_parse_start_time(const char *stat, uint64_t *start_time);

/*
 * Parse the text of /proc/<pid>/cgroup (v1 or v2) for a container id: a path component that is
 * 64 hex digits, bare (/docker/<id>, kubepods cgroupfs paths) or wrapped as docker-<id>.scope,
 * cri-containerd-<id>.scope, crio-<id>[.scope], libpod-<id>.scope. The deepest match wins.
 * Writes the id (NUL-terminated) to out (cap >= PEER_CONTAINER_ID_MAX + 1) and returns 0, or
 * writes "" and returns -ENOENT when there is none.
 */
int peer_parse_container_id(const char *cgroup, char *out, size_t cap);

/*
 * Read /proc/<pid>/{status,stat,cgroup} under proc_root ("/proc"; tests pass a directory of
 * captured files) and fill *out. A missing cgroup file or id is not an error. 0, -ESRCH when the
 * process is gone, -EINVAL for unparsable files, or another negative errno.
 */
int peer_read(const char *proc_root, uint32_t pid, struct peer_info *out);

/*
 * Only the start time of pid (its /proc/<pid>/stat): what tells whether the process that
 * connected is still the one behind its PID. 0, -ESRCH when it is gone, or as peer_read.
 */
int peer_start_time(const char *proc_root, uint32_t pid, uint64_t *start_time);

#endif
