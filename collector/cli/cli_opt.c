// SPDX-License-Identifier: MIT
/*
 * cli_opt.c - options from tables: getopt_long built from a command's rows, each value stored
 * by its row, help and Markdown printed from the same rows (see cli_opt.h); the start-up
 * privilege check.
 */
#include "cli_opt.h"

#include <assert.h>
#include <getopt.h>
#include <stdbool.h>
#include <string.h>

#include "privs.h"
#include "util.h"

#define HELP_COL 29   /* help lines start here */
#define HELP_WIDTH 80 /* and end before this column */
#define CODE_ROW0 256 /* getopt code of a row without a letter: CODE_ROW0 + its index */

/* The row of index i and the offset of its group; NULL past the last row. */
static const struct cli_opt *row_at(const struct cli_cmd *c, int i, size_t *group_off)
{
	for (size_t g = 0; g < c->ngroups; g++) {
		for (const struct cli_opt *r = c->groups[g].rows; r->name; r++) {
			if (i-- == 0) {
				*group_off = c->groups[g].off;
				return r;
			}
		}
	}
	return NULL;
}

static int code_of(const struct cli_opt *r, int i)
{
	return r->key ? (unsigned char)r->key : CODE_ROW0 + i;
}

int cli_u64(const char *cmd, const char *opt, const char *arg, uint64_t lo, uint64_t hi,
	    const char *unit, uint64_t *out)
{
	if (fg_parse_u64(arg, lo, hi, out) == 0)
		return 1;
	fg_err(cmd, "--%s '%s' must be %llu..%llu%s%s", opt, arg, (unsigned long long)lo,
	       (unsigned long long)hi, unit ? " " : "", unit ? unit : "");
	return -1;
}

static void put_bool(void *field, size_t size, bool v)
{
	(void)size; /* for the assert */
	assert(size == sizeof(bool));
	memcpy(field, &v, sizeof(v));
}

static void put_uint(void *field, size_t size, uint64_t v)
{
	uint32_t v32 = (uint32_t)v;

	assert(size == sizeof(v32) || size == sizeof(v));
	if (size == sizeof(v32))
		memcpy(field, &v32, sizeof(v32));
	else
		memcpy(field, &v, sizeof(v));
}

static int apply_enum(const char *cmd, const struct cli_opt *r, const char *arg, void *field)
{
	const struct cli_name *n;
	char list[256] = "";
	size_t len = 0;

	assert(r->size == sizeof(int));
	for (n = r->names; n->name; n++) {
		if (!strcmp(arg, n->name)) {
			memcpy(field, &n->value, sizeof(n->value));
			return 1;
		}
	}
	for (n = r->names; n->name && len < sizeof(list); n++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
					n == r->names ? ""
					: n[1].name   ? ", "
						      : " or ",
					n->name);
	fg_err(cmd, "--%s '%s': use %s", r->name, arg, list);
	return -1;
}

int cli_apply(const struct cli_cmd *c, const struct cli_opt *r, size_t group_off, const char *arg,
	      void *opts)
{
	char *base = (char *)opts + group_off;
	void *field = base + r->off;
	uint64_t v;
	unsigned bits;
	int k;

	switch (r->kind) {
	case CLI_SET:
		put_bool(field, r->size, true);
		if (r->also_size)
			put_bool(base + r->also_off, r->also_size, true);
		return 1;
	case CLI_CLEAR:
		put_bool(field, r->size, false);
		return 1;
	case CLI_CONST:
		assert(r->size == sizeof(k));
		k = (int)r->lo;
		memcpy(field, &k, sizeof(k));
		return 1;
	case CLI_BITS:
		assert(r->size == sizeof(bits));
		memcpy(&bits, field, sizeof(bits));
		bits |= (unsigned)r->lo;
		memcpy(field, &bits, sizeof(bits));
		return 1;
	case CLI_NOOP:
		return 1;
	case CLI_U64:
		if (cli_u64(c->name, r->name, arg, r->lo, r->hi, r->unit, &v) < 0)
			return -1;
		put_uint(field, r->size, v * (r->mul ? r->mul : 1));
		return 1;
	case CLI_STR:
		assert(r->size == sizeof(arg));
		memcpy(field, &arg, sizeof(arg));
		return 1;
	case CLI_ENUM:
		return apply_enum(c->name, r, arg, field);
	case CLI_FN:
		return r->fn(c->name, r, arg, base);
	}
	return -1;
}

int cli_parse(const struct cli_cmd *c, int argc, char **argv, void *opts, struct cli_seen *seen)
{
	struct option lo[2 * CLI_MAX_ROWS + 3];
	char optstr[2 * CLI_MAX_ROWS + 4];
	size_t nlo = 0, ns = 0, off;
	const struct cli_opt *r;
	int ch, i;

	optstr[ns++] = ':'; /* ':' for a missing value, '?' for the rest: we say which */
	for (i = 0; (r = row_at(c, i, &off)) != NULL; i++) {
		int has = r->arg ? required_argument : no_argument;

		if (i >= CLI_MAX_ROWS) { /* a table too long for the arrays: a bug, said */
			fg_err(c->name, "more than %d options: raise CLI_MAX_ROWS", CLI_MAX_ROWS);
			return FG_EXIT_FAIL;
		}
		lo[nlo++] = (struct option){ r->name, has, NULL, code_of(r, i) };
		if (r->alias)
			lo[nlo++] = (struct option){ r->alias, has, NULL, code_of(r, i) };
		if (r->key) {
			optstr[ns++] = r->key;
			if (r->arg)
				optstr[ns++] = ':';
		}
	}
	lo[nlo++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[nlo] = (struct option){ 0 };
	optstr[ns++] = 'h';
	optstr[ns] = '\0';
	memset(seen, 0, sizeof(*seen));
	/* Alone and spelt out, so that no abbreviation of another option becomes ambiguous. */
	if (argc == 2 && !strcmp(argv[1], "--help-markdown")) {
		cli_markdown(c, stdout);
		return -1;
	}
	optind = 0; /* a full restart: a command may be parsed more than once in a process */
	opterr = 0;
	while ((ch = c->long_only ? getopt_long_only(argc, argv, optstr, lo, NULL)
				  : getopt_long(argc, argv, optstr, lo, NULL)) != -1) {
		if (ch == 'h') {
			cli_usage(c, stdout);
			return -1;
		}
		for (i = 0; (r = row_at(c, i, &off)) != NULL && code_of(r, i) != ch; i++)
			;
		if (!r) {
			if (ch == ':')
				fg_err(c->name, "option '%s' needs a value", argv[optind - 1]);
			else
				fg_err(c->name, "unknown option '%s'", argv[optind - 1]);
			cli_usage(c, stderr);
			return FG_EXIT_USAGE;
		}
		if (cli_apply(c, r, off, optarg, opts) < 0)
			return FG_EXIT_USAGE;
		seen->n[i] += seen->n[i] < UINT8_MAX;
	}
	return 0;
}

unsigned cli_given(const struct cli_cmd *c, const struct cli_seen *seen, const char *name)
{
	const struct cli_opt *r;
	size_t off;

	for (int i = 0; (r = row_at(c, i, &off)) != NULL; i++)
		if (!strcmp(r->name, name))
			return seen->n[i];
	return 0;
}

/* text from column col (where the cursor is) to HELP_WIDTH, words wrapped, later lines at
 * HELP_COL; then a newline. */
static void put_wrapped(FILE *f, const char *text, int col)
{
	while (*text) {
		size_t n = strcspn(text, " ");

		if (col > HELP_COL && col + 1 + (int)n >= HELP_WIDTH) {
			fprintf(f, "\n%*s", HELP_COL, "");
			col = HELP_COL;
		} else if (col > HELP_COL) {
			fputc(' ', f);
			col++;
		}
		fwrite(text, 1, n, f);
		col += (int)n;
		text += n;
		text += strspn(text, " ");
	}
	fputc('\n', f);
}

static void usage_row(FILE *f, char key, const char *name, const char *arg, const char *help,
		      const char *alias)
{
	char also[64] = "";
	int n;

	if (key)
		n = fprintf(f, "  -%c, --%s", key, name);
	else
		n = fprintf(f, "      --%s", name);
	if (arg)
		n += fprintf(f, " %s", arg);
	if (n >= HELP_COL - 1) {
		fprintf(f, "\n%*s", HELP_COL, "");
		n = HELP_COL;
	} else {
		fprintf(f, "%*s", HELP_COL - n, "");
		n = HELP_COL;
	}
	put_wrapped(f, help, n);
	if (alias) {
		snprintf(also, sizeof(also), "(also --%s)", alias);
		fprintf(f, "%*s", HELP_COL, "");
		put_wrapped(f, also, HELP_COL);
	}
}

void cli_usage(const struct cli_cmd *c, FILE *f)
{
	bool help_said = false;

	fputs(c->usage, f);
	fputc('\n', f);
	for (size_t g = 0; g < c->ngroups; g++) {
		if (c->groups[g].title && !help_said) {
			usage_row(f, 'h', "help", NULL, "this text", NULL);
			help_said = true;
		}
		if (c->groups[g].title)
			fprintf(f, "\n%s\n", c->groups[g].title);
		for (const struct cli_opt *r = c->groups[g].rows; r->name; r++)
			usage_row(f, r->key, r->name, r->arg, r->help, r->alias);
	}
	if (!help_said)
		usage_row(f, 'h', "help", NULL, "this text", NULL);
	if (c->examples)
		fprintf(f, "\nExamples:\n%s", c->examples);
}

/* Plain text s in a Markdown table cell: '|' escaped, '<' not taken for HTML. */
static void md_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<') {
			fputs("&lt;", f);
			continue;
		}
		if (*s == '|')
			fputc('\\', f);
		fputc(*s, f);
	}
}

static void md_row(FILE *f, char key, const char *name, const char *arg, const char *help,
		   const char *alias, const char *doc)
{
	fputs("| ", f);
	if (key)
		fprintf(f, "`-%c`, ", key);
	fprintf(f, "`--%s%s", name, arg ? " " : "");
	md_text(f, arg ? arg : "");
	fputc('`', f);
	if (alias)
		fprintf(f, " (also `--%s`)", alias);
	fputs(" | ", f);
	md_text(f, help);
	if (doc) /* sentences after the help line */
		fprintf(f, "%s %s", help[strlen(help) - 1] == '.' ? "" : ".", doc);
	fputs(" |\n", f);
}

void cli_markdown(const struct cli_cmd *c, FILE *f)
{
	static const char head[] = "| option | meaning |\n|---|---|\n";
	bool help_said = false;

	fputs(head, f);
	for (size_t g = 0; g < c->ngroups; g++) {
		if (c->groups[g].title && !help_said) {
			md_row(f, 'h', "help", NULL, "this help", NULL, NULL);
			help_said = true;
		}
		if (c->groups[g].title)
			fprintf(f, "\n%s\n\n%s", c->groups[g].title, head);
		for (const struct cli_opt *r = c->groups[g].rows; r->name; r++)
			md_row(f, r->key, r->name, r->arg, r->help, r->alias, r->doc);
	}
	if (!help_said)
		md_row(f, 'h', "help", NULL, "this help", NULL, NULL);
}

int cli_warn_privs(const char *cmd, bool offcpu)
{
	struct privs p;
	char line[512];
	int n = 0;

	if (privs_read("/proc", &p) != 0)
		return 0; /* no /proc: the sampler's own errors will say more */
	for (int need = 0; need < PRIVS_NNEEDS; need++) {
		if (privs_has(&p, (enum privs_need)need) || (need == PRIVS_BPF && !offcpu))
			continue;
		privs_explain(&p, (enum privs_need)need, line, sizeof(line));
		fg_err(cmd, "warning: %s", line);
		n++;
	}
	return n;
}
