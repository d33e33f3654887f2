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

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* One function to look up: its name, and where its address goes. */
struct fg_dynsym {
	const char *name;
	void **slot;
};

/*
 * A file lists the functions it takes from a library once, as an X-macro list of
 * X(return type, name, (parameters)); FG_DYNSYM_FIELD makes an entry the member of its struct
 * of pointers: `ret (*name)(parameters);`. The file's own X for its fg_dynsym table names the
 * symbol (the library's prefix and name) and the slot (&obj.name).
 */
#define FG_DYNSYM_FIELD(ret, name, params) ret(*name) params;

/*
 * Open soname (RTLD_NOW | RTLD_LOCAL) and fill every slot of syms[0..n). 0, or -ELIBACC with
 * why in err (the loader's own words: which file or which symbol), every slot then NULL and
 * the library closed. Not thread-safe by itself: callers open once (pthread_once).
 */
int fg_dynlib_open(const char *soname, const struct fg_dynsym *syms, size_t n, char *err,
		   size_t errlen);

/*
 * A library a feature opens once, on its first use, for the program's life: what to open, and
 * what came of it. Defined with FG_DYNLIB (a static of the file that uses it).
 */
struct fg_dynlib {
	const char *soname;
	const struct fg_dynsym *syms;
	size_t nsyms;
	/* Run once after the functions are found: 0, or -errno with why in why[0..len). */
	int (*init)(char *why, size_t len);
	pthread_mutex_t mu;
	atomic_bool tried; /* rv and why are set */
	int rv;
	char why[256];
};

#define FG_DYNLIB(soname, syms, init)                                                              \
	{                                                                                          \
		(soname), (syms), sizeof(syms) / sizeof((syms)[0]), (init),                        \
			PTHREAD_MUTEX_INITIALIZER, false, 0, ""                                    \
	}

/* Open l on the first call (thread-safe); 0, or what that first call got (-ELIBACC, -errno). */
int fg_dynlib_use(struct fg_dynlib *l);

/* Why l could not be opened, or NULL (opened, or never asked for). */
const char *fg_dynlib_why(struct fg_dynlib *l);

#endif
