// SPDX-License-Identifier: MIT
/*
 * selfmem.c - fault-free reads of our own memory (see selfmem.h).
 *
 * Invariant: the pipe is empty whenever its lock is free: every byte write() put in is read
 * back before the unlock, and a pipe that ever fails to give them back is retired for good.
 */
#include "selfmem.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define PIPED_MAX 4096 /* larger reads take process_vm_readv: they never block on a pipe */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int pfd[2] = { -1, -1 };
static pid_t self;
static atomic_uint_fast64_t n_piped, n_vm;

static void setup(void)
{
	self = getpid();
	if (pipe2(pfd, O_CLOEXEC | O_NONBLOCK) != 0)
		pfd[0] = pfd[1] = -1;
}

ssize_t selfmem_read_vm(void *dst, uint64_t src, size_t n)
{
	struct iovec l = { dst, n }, r = { (void *)(uintptr_t)src, n };
	ssize_t got;

	pthread_once(&once, setup);
	if (src == 0)
		return -EFAULT;
	atomic_fetch_add_explicit(&n_vm, 1, memory_order_relaxed);
	got = process_vm_readv(self, &l, 1, &r, 1, 0);
	return got > 0 ? got : -EFAULT;
}

/* Whatever a refused write() may have left: the next read must start on an empty pipe. */
static void drain(void)
{
	char junk[256];

	while (read(pfd[0], junk, sizeof(junk)) > 0)
		;
}

/*
 * Through the pipe, with the lock held: the n source ranges gathered, then read back into the n
 * destinations. The bytes copied, or -EAGAIN (use the other way). As long as they fit one pipe
 * page (PIPED_MAX), a fault anywhere in the ranges makes the write copy nothing (the page is
 * committed only whole), so a range that is partly readable is left to process_vm_readv, which
 * says how much was.
 */
static ssize_t piped(const struct iovec *src, const struct iovec *dst, int n)
{
	/* A raw writev(2): a sanitizer's wrapper would check src as C objects, which they are not.
	 */
	ssize_t w = syscall(SYS_writev, pfd[1], src, n), r;

	if (w <= 0) {
		drain();
		return -EAGAIN;
	}
	r = readv(pfd[0], dst, n);
	if (r != w) {
		/* Cannot happen with an empty pipe; never leave bytes behind for the next read. */
		close(pfd[0]);
		close(pfd[1]);
		pfd[0] = pfd[1] = -1;
		return -EAGAIN;
	}
	return w;
}

ssize_t selfmem_read(void *dst, uint64_t src, size_t n)
{
	ssize_t got = -EAGAIN;

	pthread_once(&once, setup);
	if (src == 0)
		return -EFAULT;
	if (n == 0)
		return 0;
	if (n <= PIPED_MAX && pthread_mutex_trylock(&lock) == 0) {
		struct iovec from = { (void *)(uintptr_t)src, n }, to = { dst, n };

		if (pfd[1] >= 0)
			got = piped(&from, &to, 1);
		pthread_mutex_unlock(&lock);
	}
	if (got > 0) {
		atomic_fetch_add_explicit(&n_piped, 1, memory_order_relaxed);
		return got;
	}
	return selfmem_read_vm(dst, src, n);
}

int selfmem_read2(void *d0, uint64_t s0, size_t n0, void *d1, uint64_t s1, size_t n1)
{
	struct iovec src[2] = { { (void *)(uintptr_t)s0, n0 }, { (void *)(uintptr_t)s1, n1 } };
	struct iovec dst[2] = { { d0, n0 }, { d1, n1 } };
	int rv = -EAGAIN;

	pthread_once(&once, setup);
	if (s0 == 0 || s1 == 0 || n0 == 0 || n1 == 0 || n0 + n1 > PIPED_MAX ||
	    pthread_mutex_trylock(&lock) != 0)
		return -EAGAIN;
	if (pfd[1] >= 0 && piped(src, dst, 2) == (ssize_t)(n0 + n1)) {
		atomic_fetch_add_explicit(&n_piped, 1, memory_order_relaxed);
		rv = 0;
	}
	pthread_mutex_unlock(&lock);
	return rv;
}

void selfmem_counts(uint64_t *p, uint64_t *vm)
{
	*p = atomic_load_explicit(&n_piped, memory_order_relaxed);
	*vm = atomic_load_explicit(&n_vm, memory_order_relaxed);
}
