/* SPDX-License-Identifier: MIT */
/*
 * vmmem.h - reading a JVM's memory from outside, for naming its frames: the one seam through
 * which the collector touches another process's address space.
 *
 * The real reader is process_vm_readv(2) of the PID the kernel verified for that JVM (the
 * sampled process's own PID, whose agent sent the layout): no ptrace, the process never stops,
 * a bad address only fails the read. Tests put fake memory (byte arrays at fake addresses)
 * behind the same ops.
 *
 * Invariant: a read never blocks on the target and never writes to it; a failed or partial
 * read is reported, never guessed around.
 */
#ifndef FG_VMMEM_H
#define FG_VMMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

struct vmmem_ops {
	/*
	 * process_vm_readv semantics: read remote[0..nr) of pid into local[0..nl) in order, stop
	 * at the first byte that cannot be read. Returns the bytes read (a partial count when a
	 * remote range runs into unreadable memory) or a negative errno (-ESRCH, -EFAULT,
	 * -EPERM).
	 */
	ssize_t (*readv)(void *ctx, pid_t pid, const struct iovec *local, unsigned long nl,
			 const struct iovec *remote, unsigned long nr);
	void *ctx;
};

/* process_vm_readv(2) itself. */
extern const struct vmmem_ops vmmem_process;

#endif
