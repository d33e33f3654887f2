/* SPDX-License-Identifier: MIT */
/*
 * perfsysctl.h - the kernel.perf_event_* sysctls the sampler depends on: read them, and fit a
 * call-chain depth under kernel.perf_event_max_stack (raising it when we may), because the
 * kernel refuses a sample_max_stack above it (EOVERFLOW).
 *
 * The path is a parameter so tests can use a plain file; PERFSYSCTL_MAX_STACK is the real one.
 */
#ifndef FG_PERFSYSCTL_H
#define FG_PERFSYSCTL_H

#include <stdbool.h>

#define PERFSYSCTL_MAX_STACK "/proc/sys/kernel/perf_event_max_stack"

/* Read an unsigned decimal sysctl. 0 with *out set, -EIO (not a number), or -errno. */
int perfsysctl_read(const char *path, unsigned int *out);
/* Write v ("%u\n"). 0, -EIO (short write), or -errno (-EACCES not root, -EBUSY in use). */
int perfsysctl_write(const char *path, unsigned int v);

struct perfsysctl_stack {
	unsigned int sysctl; /* the value before we touched it */
	unsigned int depth;  /* what to ask of the kernel: want, or the sysctl when lower */
	bool raised;	     /* we wrote want into the sysctl */
	int raise_err;	     /* why it stayed lower: -EPERM when !may_raise, else write's errno */
};

/*
 * Fit a call-chain depth of want under the sysctl at path: when it is lower, raise it to want if
 * may_raise and the write succeeds, else clamp to it. 0 with *out set, or the read's -errno.
 */
int perfsysctl_fit_stack(const char *path, unsigned int want, bool may_raise,
			 struct perfsysctl_stack *out);

#endif
