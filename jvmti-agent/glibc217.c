// SPDX-License-Identifier: MIT
/*
 * glibc217.c - libfgagent.so asks glibc for no symbol version newer than GLIBC_2.17, so one
 * build loads into JVMs on every glibc from 2.17 (RHEL 7) to today's.
 *
 * Linked into the shared objects only (fg_agent_library in CMakeLists.txt). The build's glibc
 * (2.36) binds a plain reference to a symbol's newest version: pthread_create@GLIBC_2.34 (the
 * pthread and dl functions moved into libc in 2.34), pthread_sigmask@GLIBC_2.32, stat@2.33,
 * getrandom@2.25. This file defines each such name as a hidden symbol of the agent, so every
 * object linked into it (the agent's own, the static nng and mbedtls archives) calls this
 * definition instead, and the definition reaches glibc at the version it had in 2.17:
 *  - a symbol with an old version: a jump to that version (".symver NAME@GLIBC_2.2.5"), which
 *    is the same function in a new glibc (kept there for old binaries) and the function of
 *    libpthread.so.0 or libdl.so.2 in an old one (both DT_NEEDED, see CMakeLists.txt);
 *  - stat: 2.17 has no stat symbol (its headers inlined a call of __xstat); calls __xstat;
 *  - getrandom (2.25): the system call itself, as glibc makes it.
 * Invariant: behaviour is glibc's own on every version; nothing here is exported (version
 * script). tests/unit/agent/glibc_versions.sh fails the build's tests when a newer version
 * appears: a new libc call whose default version is newer than 2.17 gets a line here.
 */
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#ifndef __x86_64__
#error "the symbol versions below are x86-64's"
#endif

/* FG_OLD(NAME, "VERSION"): hidden NAME jumps to glibc's NAME@VERSION, arguments untouched. */
#define FG_OLD(name, version)                                                                      \
	__asm__(".text\n"                                                                          \
		".globl " #name "\n"                                                               \
		".hidden " #name "\n"                                                              \
		".type " #name ", @function\n"                                                     \
		".p2align 4\n" #name ":\n"                                                         \
		"\tjmp fg_old_" #name "@PLT\n"                                                     \
		".size " #name ", . - " #name "\n"                                                 \
		".symver fg_old_" #name ", " #name "@" version "\n")

/* libpthread.so.0 in glibc < 2.34 */
FG_OLD(pthread_attr_setstacksize, "GLIBC_2.2.5");
FG_OLD(pthread_create, "GLIBC_2.2.5");
FG_OLD(pthread_getspecific, "GLIBC_2.2.5");
FG_OLD(pthread_join, "GLIBC_2.2.5");
FG_OLD(pthread_key_create, "GLIBC_2.2.5");
FG_OLD(pthread_key_delete, "GLIBC_2.2.5");
FG_OLD(pthread_mutex_trylock, "GLIBC_2.2.5");
FG_OLD(pthread_mutexattr_destroy, "GLIBC_2.2.5");
FG_OLD(pthread_mutexattr_init, "GLIBC_2.2.5");
FG_OLD(pthread_mutexattr_settype, "GLIBC_2.2.5");
FG_OLD(pthread_once, "GLIBC_2.2.5");
FG_OLD(pthread_rwlock_destroy, "GLIBC_2.2.5");
FG_OLD(pthread_rwlock_init, "GLIBC_2.2.5");
FG_OLD(pthread_rwlock_rdlock, "GLIBC_2.2.5");
FG_OLD(pthread_rwlock_unlock, "GLIBC_2.2.5");
FG_OLD(pthread_rwlock_wrlock, "GLIBC_2.2.5");
FG_OLD(pthread_setname_np, "GLIBC_2.12");
FG_OLD(pthread_setspecific, "GLIBC_2.2.5");
FG_OLD(pthread_sigmask, "GLIBC_2.2.5");
FG_OLD(pthread_timedjoin_np, "GLIBC_2.3.3");

/* libdl.so.2 in glibc < 2.34 */
FG_OLD(dladdr, "GLIBC_2.2.5");
FG_OLD(dlclose, "GLIBC_2.2.5");
FG_OLD(dlopen, "GLIBC_2.2.5");
FG_OLD(dlsym, "GLIBC_2.2.5");

/* stat before 2.33: __xstat(_STAT_VER_LINUX, ...), _STAT_VER_LINUX being 1 on x86-64. */
int fg_old_xstat(int ver, const char *path, struct stat *buf);
__asm__(".symver fg_old_xstat, __xstat@GLIBC_2.2.5");

__attribute__((visibility("hidden"))) int stat(const char *restrict path, struct stat *restrict buf)
{
	return fg_old_xstat(1, path, buf);
}

/* getrandom before 2.25: the system call (Linux 3.17), -1 and errno as glibc returns. */
__attribute__((visibility("hidden"))) ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
	return syscall(SYS_getrandom, buf, len, flags);
}
