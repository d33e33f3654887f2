/* SPDX-License-Identifier: MIT */
/*
 * selfmem.h - reading our own process's memory at an address that may be wrong (a VMStructs
 * offset of an unknown JDK), without ever faulting in the JVM.
 *
 * The copy goes through a pipe: write() from the address, read() back. The kernel copies from
 * user memory with a fault handler, so an unmapped or unreadable address is EFAULT, never a
 * SIGSEGV. It costs two short syscalls and pins nothing, where process_vm_readv() of our own pid
 * pins the pages under the JVM's mmap lock. One pipe serves the process, taken with trylock: a
 * caller that finds it busy, a process without one (no descriptors left), and a range the pipe
 * refused (a fault: how much of it was readable is process_vm_readv()'s to say) use
 * process_vm_readv() instead. Nothing ever waits.
 */
#ifndef FG_SELFMEM_H
#define FG_SELFMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Copy up to n bytes at src into dst. Returns the bytes copied, fewer than n when the range
 * runs into memory that cannot be read, or -EFAULT when none could be (src 0 included).
 */
ssize_t selfmem_read(void *dst, uint64_t src, size_t n);

/*
 * Two ranges in one pipe round trip (one writev, one readv): 0 when both were copied whole,
 * -EAGAIN otherwise (together over 4 KiB, the pipe busy or gone, or either range not wholly
 * readable): then read each with selfmem_read(), which says how much of it can be read.
 */
int selfmem_read2(void *d0, uint64_t s0, size_t n0, void *d1, uint64_t s1, size_t n1);

/* The same through process_vm_readv() only: the fallback, for a range the pipe refuses. */
ssize_t selfmem_read_vm(void *dst, uint64_t src, size_t n);

/* Reads that went through the pipe and through process_vm_readv(), since the start. */
void selfmem_counts(uint64_t *piped, uint64_t *vm);

#endif
