/* SPDX-License-Identifier: MIT */
/*
 * cli_opt.h - a numeric option's argument, checked against its range with one wording for every
 * subcommand: "<cmd>: --<opt> '<arg>' must be <lo>..<hi> [unit]". For cmd_*.c only: it prints the
 * error it finds. Also the start-up check every sampling command prints: the capabilities it
 * lacks.
 */
#ifndef FG_CLI_OPT_H
#define FG_CLI_OPT_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Parse arg as a whole number in [lo, hi] into *out: 1 (getopt handlers' "taken"), or -1 with the
 * error printed (unit, e.g. "Hz", may be NULL). *out is left alone on error.
 */
int cli_u64(const char *cmd, const char *opt, const char *arg, uint64_t lo, uint64_t hi,
	    const char *unit, uint64_t *out);

/*
 * Say at start what this process lacks for sampling other processes (privs.h): one line per
 * missing capability, naming it and how to add it; CAP_BPF only when it records off-CPU or
 * wall profiles (offcpu), whose cost depends on it. The number of lines printed.
 */
int cli_warn_privs(const char *cmd, bool offcpu);

#endif
