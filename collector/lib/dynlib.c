// SPDX-License-Identifier: MIT
/* dynlib.c - open a shared library on first use and look up its functions (see dynlib.h). */
#include "dynlib.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

int fg_dynlib_open(const char *soname, const struct fg_dynsym *syms, size_t n, char *err,
		   size_t errlen)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	const char *why;

	if (!h) {
		why = dlerror();
		snprintf(err, errlen, "%s", why ? why : soname);
		return -ELIBACC;
	}
	for (size_t i = 0; i < n; i++) {
		*syms[i].slot = dlsym(h, syms[i].name);
		if (*syms[i].slot)
			continue;
		snprintf(err, errlen, "%s has no %s", soname, syms[i].name);
		for (size_t j = 0; j < n; j++)
			*syms[j].slot = NULL;
		dlclose(h);
		return -ELIBACC;
	}
	return 0;
}

int fg_dynlib_use(struct fg_dynlib *l)
{
	if (atomic_load(&l->tried))
		return l->rv;
	pthread_mutex_lock(&l->mu);
	if (!atomic_load(&l->tried)) {
		l->rv = fg_dynlib_open(l->soname, l->syms, l->nsyms, l->why, sizeof(l->why));
		if (l->rv == 0 && l->init)
			l->rv = l->init(l->why, sizeof(l->why));
		atomic_store(&l->tried, true);
	}
	pthread_mutex_unlock(&l->mu);
	return l->rv;
}

const char *fg_dynlib_why(struct fg_dynlib *l)
{
	return atomic_load(&l->tried) && l->rv ? l->why : NULL;
}
