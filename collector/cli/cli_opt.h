/* SPDX-License-Identifier: MIT */
/*
 * cli_opt.h - a command's options as one table: each row names an option (long and short
 * name), what its value is (kind, bounds, unit), the field of the command's options struct it
 * sets and its help line. getopt_long's table, `--help`, `--help-markdown` (the options table
 * of docs/commands.md) and the parsing itself all come from the rows. For cmd_*.c only: the
 * parser prints the errors it finds, with one wording for every command.
 *
 * Invariant: an option's getopt code is derived from its row (its short letter, else 256 + its
 * index), so two rows can never be handed each other's values; a test (test_cli_options) checks
 * that no two rows share a name or a letter and that each option sets its own field only.
 * Cross-option checks (exactly one target, --switch-rate against --switch-period) are the
 * command's, after cli_parse(), from the counts it returns.
 *
 * Also the start-up check every sampling command prints: the capabilities it lacks.
 */
#ifndef FG_CLI_OPT_H
#define FG_CLI_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What an option does with its value (kinds up to CLI_NOOP take none). */
enum cli_kind {
	CLI_SET,   /* the bool field (and the also-field, if any) becomes true */
	CLI_CLEAR, /* the bool field becomes false */
	CLI_CONST, /* the int field becomes lo */
	CLI_BITS,  /* the unsigned field gets the bits of lo */
	CLI_NOOP,  /* accepted, sets nothing (compatibility) */
	CLI_U64,   /* a whole number lo..hi [unit], times mul (0: 1), into 4 or 8 bytes */
	CLI_STR,   /* the value itself: a const char * borrowed from argv */
	CLI_ENUM,  /* one of names[], stored as an int */
	CLI_FN,	   /* fn parses it (takes a value when arg is set) */
};

struct cli_opt;

/*
 * A CLI_FN row's parser: store the value of arg (NULL for an option without one) in the row's
 * field(s) of opts (the row's group's struct). 1, or -1 with the error printed, naming cmd.
 */
typedef int (*cli_fn)(const char *cmd, const struct cli_opt *row, const char *arg, void *opts);

/* A name a CLI_ENUM option takes and the value it stores. */
struct cli_name {
	const char *name;
	int value;
};

/* One option. Rows of a group end with a row whose name is NULL. */
struct cli_opt {
	const char *name;  /* long name, without "--" */
	const char *alias; /* a second long name for the same row, or NULL */
	char key;	   /* short option letter, or 0 */
	enum cli_kind kind;
	size_t off, size;	    /* the field it sets in its group's struct */
	size_t also_off, also_size; /* a second field it sets (size 0: none) */
	uint64_t lo, hi, mul;
	const char *unit;	      /* CLI_U64: said with the bounds ("Hz"), or NULL */
	const struct cli_name *names; /* CLI_ENUM: ends with a NULL name */
	cli_fn fn;
	const char *arg;  /* the value's name in help ("HZ"); NULL: takes no value */
	const char *help; /* one line of plain text, wrapped by the help printer */
	const char *doc;  /* Markdown the docs add after help, or NULL */
};

/* The field a row sets: CLI_AT(struct session_opts, freq_hz). */
#define CLI_AT(type, member) .off = offsetof(type, member), .size = sizeof(((type *)0)->member)
/* The second field it sets. */
#define CLI_ALSO(type, member)                                                                     \
	.also_off = offsetof(type, member), .also_size = sizeof(((type *)0)->member)

/* Rows whose fields sit at off in the command's options struct; title heads them in help. */
struct cli_group {
	const char *title; /* NULL: no heading */
	const struct cli_opt *rows;
	size_t off;
};

/* A command: its option groups, its texts, and its options struct with its defaults. */
struct cli_cmd {
	const char *name;     /* "record" */
	const char *usage;    /* the usage line(s) and what the command does, before the options */
	const char *examples; /* after them, or NULL */
	const struct cli_group *groups;
	size_t ngroups;
	size_t size;		  /* of the options struct */
	void (*init)(void *opts); /* its defaults */
	bool long_only;		  /* -all works as --all (getopt_long_only, stackcollapse's) */
};

/*
 * A cli_cmd's option members: its group array g (a true array), its options struct T and the
 * function that sets T's defaults.
 */
#define CLI_CMD_OPTS(g, T, init_fn)                                                                \
	.groups = (g), .ngroups = FG_ARRAY_SIZE(g), .size = sizeof(T), .init = (init_fn)

/* Rows of a command at most (options and aliases); getopt codes 256.. index them. */
#define CLI_MAX_ROWS 80

/* How many times each row was given, by row index (cli_row_index). */
struct cli_seen {
	unsigned char n[CLI_MAX_ROWS];
};

/*
 * getopt over argv (argv[0] the command's name): each option's value stored by its row into
 * opts (initialised by the caller), counted in *seen. Stops at the first error. 0 with optind
 * at the first positional argument, -1 after --help, or --help-markdown as the only argument
 * (printed on stdout), or
 * FG_EXIT_USAGE with the error printed (and the usage, for an unknown option or a missing
 * value).
 */
int cli_parse(const struct cli_cmd *c, int argc, char **argv, void *opts, struct cli_seen *seen);

/* How many times the option named name (long name) was given; 0 for a name c does not have. */
unsigned cli_given(const struct cli_cmd *c, const struct cli_seen *seen, const char *name);

/* Apply row (of the group at group_off) with arg to opts: 1, or -1 with the error printed. */
int cli_apply(const struct cli_cmd *c, const struct cli_opt *row, size_t group_off, const char *arg,
	      void *opts);

/* `fgcollect CMD --help`: usage, every option with its help line wrapped, the examples. */
void cli_usage(const struct cli_cmd *c, FILE *f);

/* The options as docs/commands.md's Markdown table(s) (`--help-markdown`). */
void cli_markdown(const struct cli_cmd *c, FILE *f);

/*
 * Parse arg as a whole number in [lo, hi] into *out: 1 (taken), or -1 with the error printed
 * (unit, e.g. "Hz", may be NULL): "<cmd>: --<opt> '<arg>' must be <lo>..<hi> [unit]". *out is
 * left alone on error.
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
