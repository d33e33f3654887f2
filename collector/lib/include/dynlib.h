/* SPDX-License-Identifier: MIT */
/*
 * dynlib.h - a shared library opened when a feature first needs it, not at program start.
 *
 * libcurl (push) and libdebuginfod (debug files from servers) pull in about 30 more libraries
 * (TLS, Kerberos, LDAP ...): linked, every fgcollect process would load and relocate them,
 * the sandboxed receiver too, which never uses them. Opened on first use, a process that
 * neither pushes nor asks a debuginfod server maps none of them.
 */
#ifndef FG_DYNLIB_H
#define FG_DYNLIB_H

#include <stddef.h>

/* One function to look up: its name, and where its address goes. */
struct fg_dynsym {
	const char *name;
	void **slot;
};

/*
 * Open soname (RTLD_NOW | RTLD_LOCAL) and fill every slot of syms[0..n). 0, or -ELIBACC with
 * why in err (the loader's own words: which file or which symbol), every slot then NULL and
 * the library closed. Not thread-safe by itself: callers open once (pthread_once).
 */
int fg_dynlib_open(const char *soname, const struct fg_dynsym *syms, size_t n, char *err,
		   size_t errlen);

#endif
