/* SPDX-License-Identifier: MIT */
/*
 * sandbox.h - confine the calling process (the agent socket's child): a chroot into the socket's
 * directory, an empty capability bounding set, rlimits, another uid/gid with no capability,
 * no new privileges, not dumpable, and a seccomp-BPF allowlist on every thread (TSYNC) that
 * kills the process at the first other system call.
 *
 * Order: sandbox_chroot and sandbox_bound before the listener's threads exist (the bounding set
 * is per thread), the listen, then sandbox_enter (setresuid reaches every thread through
 * glibc, no_new_privs and the filter through TSYNC).
 */
#ifndef FG_SANDBOX_H
#define FG_SANDBOX_H

#include <linux/filter.h>
#include <stddef.h>
#include <sys/types.h>

#include "receive.h"

#define SANDBOX_UID 65534 /* default uid and gid */

struct sandbox_opts {
	uid_t uid;		  /* 0 = SANDBOX_UID; only when we are root (else ours are kept) */
	gid_t gid;		  /* 0 = SANDBOX_UID */
	unsigned long nofile;	  /* RLIMIT_NOFILE */
	unsigned long data_bytes; /* RLIMIT_DATA */
};

/* What a confinement could not do for want of a capability (receive.h). */
#define SANDBOX_NO_CHROOT RECEIVE_SANDBOX_NO_CHROOT
#define SANDBOX_NO_IDS RECEIVE_SANDBOX_NO_IDS

/* chdir(dir) and, when root, chroot(".") there. 0, SANDBOX_NO_CHROOT, or a negative errno. */
int sandbox_chroot(const char *dir);

/* Drop every capability from the bounding set (when we hold CAP_SETPCAP). 0 or -errno. */
int sandbox_bound(void);

/* The rest: rlimits, ids, no_new_privs, dumpable 0, the filter. 0, SANDBOX_NO_IDS, or a
 * negative errno. */
int sandbox_enter(const struct sandbox_opts *o);

/* The filter for a process whose PID is self (tgkill only to itself): its length, or 0. */
size_t sandbox_filter(struct sock_filter *f, size_t cap, pid_t self);

#endif
