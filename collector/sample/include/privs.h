/* SPDX-License-Identifier: MIT */
/*
 * privs.h - whether this process holds what sampling other processes needs, from /proc: its
 * effective capabilities and the kernel settings that decide when they are needed. Read once at
 * start so a collector without them says, before it fails or quietly loses frames, which
 * capability it lacks and how to add it (a container runtime's --cap-add).
 *
 *   PRIVS_PERF    perf_event_open of other processes with kernel call chains: CAP_PERFMON or
 *                 CAP_SYS_ADMIN, unless kernel.perf_event_paranoid <= 1. Kernels before 5.8
 *                 know no CAP_PERFMON (kernel.cap_last_cap < 38), nor do Docker Engines before
 *                 23.0 (they refuse to start the container): SYS_ADMIN there.
 *   PRIVS_PTRACE  /proc/<pid>/maps and /proc/<pid>/root of other users' processes (the ELF
 *                 files behind their native frames): CAP_SYS_PTRACE.
 *   PRIVS_SYSLOG  real addresses in /proc/kallsyms (kernel frame names): CAP_SYSLOG when
 *                 kernel.kptr_restrict is 1, or 0 with perf_event_paranoid >= 2; at 2 nothing
 *                 helps.
 *   PRIVS_BPF     the BPF programs (off-CPU and wall stacks taken in the kernel, the kernel's
 *                 filter of CPU samples): CAP_BPF or CAP_SYS_ADMIN. Kernels before 5.8
 *                 (cap_last_cap < 39) and Docker Engines before 23.0 know no CAP_BPF:
 *                 SYS_ADMIN there. Without it off-CPU falls back to perf events per thread.
 */
#ifndef FG_PRIVS_H
#define FG_PRIVS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PRIVS_CAP_SYS_PTRACE 19
#define PRIVS_CAP_SYS_ADMIN 21
#define PRIVS_CAP_SYSLOG 34
#define PRIVS_CAP_PERFMON 38
#define PRIVS_CAP_BPF 39

#define PRIVS_UNKNOWN (-1000) /* a sysctl that could not be read */

struct privs {
	uint64_t cap_eff;	 /* CapEff of /proc/self/status */
	int cap_last_cap;	 /* kernel.cap_last_cap: the highest capability it knows */
	int perf_event_paranoid; /* or PRIVS_UNKNOWN */
	int kptr_restrict;	 /* or PRIVS_UNKNOWN */
};

enum privs_need { PRIVS_PERF, PRIVS_PTRACE, PRIVS_SYSLOG, PRIVS_BPF, PRIVS_NNEEDS };

/*
 * Read the privileges of this process from proc (normally "/proc": <proc>/self/status,
 * <proc>/sys/kernel/...). 0, or -errno when the capabilities cannot be read (the sysctls that
 * cannot be read are PRIVS_UNKNOWN: the kernel's defaults are assumed for them).
 */
int privs_read(const char *proc, struct privs *p);

/* Whether need is met (an unreadable sysctl counts as the kernel's default: 2 and 0). */
bool privs_has(const struct privs *p, enum privs_need need);

/*
 * One line saying what is lost without need and how to add it, naming the capability and the
 * runtimes' option, into buf (always terminated). The length snprintf returned.
 */
int privs_explain(const struct privs *p, enum privs_need need, char *buf, size_t len);

#endif
