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
