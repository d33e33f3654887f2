// SPDX-License-Identifier: MIT
/*
 * dbgfetch.c - libdebuginfod behind a time and count budget.
 *
 * Invariant: libdebuginfod is only entered with a deadline set; its progress callback (called
 * at least once a second while a transfer runs) cancels the transfer past the deadline.
 * libdebuginfod's error space (negative errnos, but -EINTR/-ECANCELED for a cancel) stops here.
 * The library is opened by the first dbgfetch_new that has servers to ask (dynlib.h).
 */
#include "dbgfetch.h"

#include <elfutils/debuginfod.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynlib.h"
#include "util.h"

#define DEFAULT_TIMEOUT_MS 5000u
#define DEFAULT_BUDGET_MS 20000u
#define DEFAULT_MAX_LOOKUPS 64u

/*
 * libdebuginfod's functions this file calls, X(return type, name after "debuginfod_",
 * (parameters)), filled by the first dbgfetch_new with servers.
 */
#define DEBUGINFOD_FUNCS(X)                                                                        \
	X(debuginfod_client *, begin, (void))                                                      \
	X(void, end, (debuginfod_client *))                                                        \
	X(int, find_debuginfo,                                                                     \
	  (debuginfod_client *, const unsigned char *bid, int len, char **path))                   \
	X(void *, get_user_data, (debuginfod_client *))                                            \
	X(void, set_user_data, (debuginfod_client *, void *data))                                  \
	X(void, set_progressfn, (debuginfod_client *, debuginfod_progressfn_t fn))

static struct {
	DEBUGINFOD_FUNCS(FG_DYNSYM_FIELD)
} dd;

#define DD_SYM(ret, name, params) { "debuginfod_" #name, (void **)&dd.name },
static const struct fg_dynsym dd_syms[] = { DEBUGINFOD_FUNCS(DD_SYM) };

static struct fg_dynlib dd_lib = FG_DYNLIB(DEBUGINFOD_SONAME, dd_syms, NULL);

const char *dbgfetch_unavailable(void)
{
	return fg_dynlib_why(&dd_lib);
}

struct dbgfetch {
	struct dbgfetch_opts o;
	debuginfod_client *client;
	uint64_t deadline_ns; /* of the lookup in progress */
	bool cancelled;	      /* the progress callback cut it off */
	struct dbgfetch_stats st;
};

static int on_progress(debuginfod_client *c, long done, long total)
{
	struct dbgfetch *df = dd.get_user_data(c);

	(void)done;
	(void)total;
	if (fg_now_ns() < df->deadline_ns)
		return 0;
	df->cancelled = true;
	return 1;
}

int dbgfetch_new(const struct dbgfetch_opts *o, struct dbgfetch **out)
{
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);
	struct dbgfetch *df;
	int rv;

	if (!urls || !urls[strspn(urls, " \t")])
		return -ENOENT;
	rv = fg_dynlib_use(&dd_lib);
	if (rv)
		return rv;
	df = FG_NEW_CONF(struct dbgfetch, o, o);
	if (!df)
		return -ENOMEM;
	FG_DEFAULT(df->o.timeout_ms, DEFAULT_TIMEOUT_MS);
	FG_DEFAULT(df->o.budget_ms, DEFAULT_BUDGET_MS);
	FG_DEFAULT(df->o.max_lookups, DEFAULT_MAX_LOOKUPS);
	df->client = dd.begin();
	if (!df->client) {
		free(df);
		return -ENOMEM;
	}
	dd.set_user_data(df->client, df);
	/* Also replaces the default callback that DEBUGINFOD_PROGRESS would print with. */
	dd.set_progressfn(df->client, on_progress);
	*out = df;
	return 0;
}

void dbgfetch_free(struct dbgfetch *df)
{
	if (!df)
		return;
	dd.end(df->client);
	free(df);
}

int dbgfetch_find(struct dbgfetch *df, const uint8_t *bid, size_t len)
{
	uint64_t t0, spent_ms, left_ms;
	char *path = NULL;
	int fd;

	if (!len)
		return -EINVAL; /* libdebuginfod would read bid as a hex string */
	spent_ms = df->st.ns / 1000000u;
	/* Servers that have only ever timed out hang: each lookup would cost timeout_ms more. */
	if (df->st.lookups >= df->o.max_lookups || spent_ms >= df->o.budget_ms ||
	    (df->st.timeouts && !df->st.found && !df->st.not_found)) {
		df->st.refused++;
		return -EDQUOT;
	}
	left_ms = df->o.budget_ms - spent_ms;
	t0 = fg_now_ns();
	df->deadline_ns =
		t0 + (left_ms < df->o.timeout_ms ? left_ms : df->o.timeout_ms) * 1000000ull;
	df->cancelled = false;
	df->st.lookups++;
	fd = dd.find_debuginfo(df->client, bid, (int)len, &path);
	free(path);
	df->st.ns += fg_now_ns() - t0;
	if (fd >= 0) {
		df->st.found++;
		return fd;
	}
	if (df->cancelled || fd == -ETIME || fd == -ETIMEDOUT) {
		df->st.timeouts++;
		return -ETIMEDOUT;
	}
	if (fd == -ENOENT) {
		df->st.not_found++;
		return -ENOENT;
	}
	df->st.errors++;
	return fd < 0 ? fd : -EIO;
}

void dbgfetch_stats(const struct dbgfetch *df, struct dbgfetch_stats *out)
{
	*out = df->st;
}
