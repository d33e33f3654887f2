// SPDX-License-Identifier: MIT
/* codelog.c - a code table's history as text lines (see codelog.h). */
#include "codelog.h"

#include <errno.h>
#include <stdbool.h>

#include "codetab.h"

struct codelog {
	FILE *f;
	uint32_t pid;
};

static int line(void *arg, const struct codeblob *b, bool is_unload)
{
	struct codelog *cl = arg;

	if (fprintf(cl->f, "%u %llu %s %llx %u %s %s\n", cl->pid,
		    (unsigned long long)(is_unload ? b->unload_ts : b->load_ts),
		    is_unload ? "unload" : "load", (unsigned long long)b->addr, b->size,
		    b->kind == CODEBLOB_DYNAMIC ? "dynamic" : "compiled", b->name) < 0)
		return -EIO;
	return 0;
}

int codelog_write(FILE *f, uint32_t pid, const struct codetab *tab)
{
	struct codelog cl = { .f = f, .pid = pid };

	return codetab_history(tab, line, &cl);
}
