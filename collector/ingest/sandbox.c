// SPDX-License-Identifier: MIT
/*
 * sandbox.c - the agent socket's child confines itself (see sandbox.h). The seccomp filter is
 * written by hand (linux/filter.h, linux/seccomp.h): no library for it.
 */
#include "sandbox.h"

#include <errno.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch_x86_64.h"

#define SB_ARCH ARCH_SECCOMP_AUDIT

#define SB_ALLOW SECCOMP_RET_ALLOW
#define SB_KILL SECCOMP_RET_KILL_PROCESS
#define ARG_LO(i)                                                                                  \
	((unsigned)offsetof(struct seccomp_data, args) + 8u * (unsigned)(i)) /* low word (LE) */

/* What nng's threads, glibc (malloc, threads, time) and the receive loop call. */
static const int allowed[] = {
	SYS_read,
	SYS_write,
	SYS_readv,
	SYS_writev,
	SYS_close,
	SYS_ppoll,
	SYS_epoll_pwait,
	SYS_epoll_ctl,
	SYS_epoll_create1,
	SYS_eventfd2,
	SYS_pipe2,
	SYS_accept4,
	SYS_connect,
	SYS_recvfrom,
	SYS_recvmsg,
	SYS_sendto,
	SYS_sendmsg,
	SYS_getsockopt,
	SYS_setsockopt,
	SYS_getsockname,
	SYS_getpeername,
	SYS_shutdown,
	SYS_fcntl,
	SYS_futex,
	SYS_set_robust_list,
	SYS_clock_gettime,
	SYS_clock_getres,
	SYS_clock_nanosleep,
	SYS_nanosleep,
	SYS_gettimeofday,
	SYS_munmap,
	SYS_brk,
	SYS_mremap,
	SYS_madvise,
	SYS_rt_sigprocmask,
	SYS_rt_sigreturn,
	SYS_rt_sigaction,
	SYS_sigaltstack,
	SYS_exit,
	SYS_exit_group,
	SYS_getpid,
	SYS_gettid,
	SYS_getrandom,
	SYS_sched_yield,
	SYS_restart_syscall,
	SYS_sched_getaffinity,
#ifdef SYS_rseq
	SYS_rseq,
#endif
#ifdef SYS_poll
	SYS_poll,
#endif
#ifdef SYS_epoll_wait
	SYS_epoll_wait,
#endif
#ifdef SYS_epoll_pwait2
	SYS_epoll_pwait2,
#endif
#ifdef SYS_accept
	SYS_accept,
#endif
};

struct sb_prog {
	struct sock_filter *f;
	size_t n, cap;
};

static void put(struct sb_prog *p, struct sock_filter ins)
{
	if (p->n < p->cap)
		p->f[p->n] = ins;
	p->n++;
}

/* With A = nr: if nr == sys, A = low word of arg a, and ret_ok when (A op v), else kill. */
static void arg_rule(struct sb_prog *p, int sys, unsigned a, unsigned op, unsigned v, bool neg)
{
	put(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)sys, 0, 4));
	put(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(a)));
	put(p, (struct sock_filter)BPF_JUMP(BPF_JMP | op | BPF_K, v, neg ? 1 : 0, neg ? 0 : 1));
	put(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SB_ALLOW));
	put(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SB_KILL));
}

size_t sandbox_filter(struct sock_filter *f, size_t cap, pid_t self)
{
	struct sb_prog p = { f, 0, cap };

	put(&p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					     offsetof(struct seccomp_data, arch)));
	put(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SB_ARCH, 1, 0));
	put(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SB_KILL));
	put(&p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					     offsetof(struct seccomp_data, nr)));
	/* x32 system calls: another table of numbers. */
	put(&p,
	    (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, ARCH_X32_SYSCALL_BIT, 0, 1));
	put(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SB_KILL));
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		put(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						     (unsigned)allowed[i], 0, 1));
		put(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SB_ALLOW));
	}
	/*
	 * Opening a file fails (EACCES) rather than kills: glibc and nng open files on paths
	 * that can do without (a thread's name in /proc, the CPU count, /dev/tty for a fatal
	 * message), and in the chroot there is nothing to open anyway.
	 */
	put(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1));
	put(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES));
#ifdef SYS_open
	put(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_open, 0, 1));
	put(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES));
#endif
	/* glibc's pthread_create tries clone3 first: "not here" makes it use clone. */
	put(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1));
	put(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS));
	/* Threads only, never a process; AF_UNIX only; no executable memory. */
	arg_rule(&p, SYS_clone, 0, BPF_JSET, CLONE_THREAD, false);
	arg_rule(&p, SYS_socket, 0, BPF_JEQ, AF_UNIX, false);
	arg_rule(&p, SYS_mmap, 2, BPF_JSET, PROT_EXEC, true);
	arg_rule(&p, SYS_mprotect, 2, BPF_JSET, PROT_EXEC, true);
	arg_rule(&p, SYS_prctl, 0, BPF_JEQ, PR_SET_NAME, false);
	arg_rule(&p, SYS_tgkill, 0, BPF_JEQ, (unsigned)self, false);
	put(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SB_KILL));
	return p.n <= cap ? p.n : 0;
}

int sandbox_chroot(const char *dir)
{
	if (chdir(dir) != 0)
		return -errno;
	if (geteuid() == 0 && chroot(".") != 0)
		return errno == EPERM ? (int)SANDBOX_NO_CHROOT : -errno;
	return 0;
}

int sandbox_bound(void)
{
	if (prctl(PR_CAPBSET_READ, CAP_SETPCAP, 0, 0, 0) != 1)
		return 0; /* not ours to drop */
	for (unsigned long c = 0; c < 64; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0 && errno != EINVAL)
			return -errno;
	return 0;
}

static int limits(const struct sandbox_opts *o)
{
	struct rlimit nofile = { o->nofile, o->nofile };
	struct rlimit data = { o->data_bytes, o->data_bytes };
	struct rlimit zero = { 0, 0 }, now;

	/* Lower only: raising a hard limit needs CAP_SYS_RESOURCE (a container's nofile=1024). */
	if (getrlimit(RLIMIT_NOFILE, &now) == 0 && nofile.rlim_max > now.rlim_max)
		nofile.rlim_cur = nofile.rlim_max = now.rlim_max;
	if (getrlimit(RLIMIT_DATA, &now) == 0 && data.rlim_max > now.rlim_max)
		data.rlim_cur = data.rlim_max = now.rlim_max;

	if ((o->nofile && setrlimit(RLIMIT_NOFILE, &nofile) != 0) ||
	    (o->data_bytes && setrlimit(RLIMIT_DATA, &data) != 0) ||
	    setrlimit(RLIMIT_CORE, &zero) != 0 || setrlimit(RLIMIT_MEMLOCK, &zero) != 0)
		return -errno;
	return 0;
}

/* Another uid and gid, no supplementary group, and no capability left in any set. */
static int ids(const struct sandbox_opts *o)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { 0 };
	uid_t uid = o->uid ? o->uid : SANDBOX_UID;
	gid_t gid = o->gid ? o->gid : SANDBOX_UID;
	uid_t r, e, s;

	if (geteuid() != 0)
		return 0;
	(void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (setgroups(0, NULL) != 0) {
		/* No CAP_SETGID (nor, then, CAP_SETUID): uid 0, but with no capability left. */
		if (errno != EPERM || syscall(SYS_capset, &h, d) != 0)
			return -EPERM;
		return (int)SANDBOX_NO_IDS;
	}
	if (setresgid(gid, gid, gid) != 0 || setresuid(uid, uid, uid) != 0)
		return -errno;
	if (getresuid(&r, &e, &s) != 0 || r != uid || e != uid || s != uid)
		return -EPERM;
	if (syscall(SYS_capset, &h, d) != 0 || setuid(0) == 0)
		return -EPERM;
	return 0;
}

int sandbox_enter(const struct sandbox_opts *o)
{
	struct sock_filter f[160];
	struct sock_fprog prog = { 0 };
	int rv, partial = 0;

	if ((rv = limits(o)) != 0 || (partial = ids(o)) < 0)
		return rv ? rv : partial;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -errno;
	prog.len = (unsigned short)sandbox_filter(f, sizeof(f) / sizeof(f[0]), getpid());
	prog.filter = f;
	if (!prog.len)
		return -E2BIG;
	rv = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
	if (rv != 0)
		return rv < 0 ? -errno : -EAGAIN; /* > 0: a thread that could not be synced */
	return partial;
}
