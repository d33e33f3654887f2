/* SPDX-License-Identifier: MIT */
/*
 * dbgfetch.h - separate debug files by GNU build id from debuginfod servers.
 *
 * The servers are the ones elfutils' libdebuginfod reads from DEBUGINFOD_URLS (space-separated
 * URLs); its cache (DEBUGINFOD_CACHE_PATH, else $XDG_CACHE_HOME or ~/.cache/debuginfod_client)
 * keeps what was fetched, and misses, across runs. Used for stripped system libraries whose
 * debug files are not installed, e.g. glibc in a slim container image.
 *
 * Invariant: a lookup never blocks its caller longer than timeout_ms, the lookups of one
 * dbgfetch never take longer than budget_ms in all, and at most max_lookups reach the network;
 * past a limit lookups fail at once with -EDQUOT, and so do all lookups after one timed out when
 * no server has answered any (a hanging server costs one timeout_ms, not one per library).
 *
 * Not thread-safe: one owner (the symbol cache). Library code: never prints.
 */
#ifndef FG_DBGFETCH_H
#define FG_DBGFETCH_H

#include <stddef.h>
#include <stdint.h>

struct dbgfetch_opts {
	uint32_t timeout_ms;  /* one lookup; default 5000 */
	uint32_t budget_ms;   /* all lookups together; default 20000 */
	uint32_t max_lookups; /* lookups that may reach a server; default 64 */
};

struct dbgfetch_stats {
	uint64_t lookups;   /* asked of a server (or of libdebuginfod's cache) */
	uint64_t found;	    /* a debug file came back */
	uint64_t not_found; /* no server has it (-ENOENT) */
	uint64_t timeouts;  /* cut off by timeout_ms or budget_ms */
	uint64_t errors;    /* other failures (connection refused, bad URL, ...) */
	uint64_t refused;   /* not attempted: max_lookups or budget_ms used up */
	uint64_t ns;	    /* time spent in lookups */
};

struct dbgfetch;

/*
 * A fetcher for the servers in DEBUGINFOD_URLS. o may be NULL (defaults). 0 with *out, -ENOENT
 * when DEBUGINFOD_URLS is unset or empty (nothing to ask), -ELIBACC when libdebuginfod could
 * not be opened (dbgfetch_unavailable() says why), -ENOMEM.
 */
int dbgfetch_new(const struct dbgfetch_opts *o, struct dbgfetch **out);

/* Why libdebuginfod could not be opened (the loader's words), or NULL: opened, or not tried. */
const char *dbgfetch_unavailable(void);
void dbgfetch_free(struct dbgfetch *df);

/*
 * The debug file of build id bid[0..len): an open read-only fd the caller closes, or -ENOENT
 * (no server has it), -ETIMEDOUT (timeout_ms or budget_ms passed), -EDQUOT (a limit was
 * reached before this lookup), -EINVAL (len 0), or another negative errno of the client.
 */
int dbgfetch_find(struct dbgfetch *df, const uint8_t *bid, size_t len);

void dbgfetch_stats(const struct dbgfetch *df, struct dbgfetch_stats *out);

#endif
