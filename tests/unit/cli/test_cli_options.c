// SPDX-License-Identifier: MIT
/*
 * test_cli_options.c - every option of every command, through the real parser (getopt_long
 * built from the command's table), by its long name and by its letter: it sets the field its
 * row names and no other byte of the command's options; no two rows of a command share a name,
 * a letter or a field (but a --x/--no-x pair, flags of distinct bits, or a flag that also sets
 * another); every row is complete enough for --help and docs/commands.md.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cmds.h"
#include "util.h"

static const struct cli_cmd *const cmds[] = {
	&cmd_watch_cli, &cmd_record_cli,   &cmd_top_cli,  &cmd_flamegraph_cli,
	&cmd_diff_cli,	&cmd_collapse_cli, &cmd_view_cli,
};

/* A valid value of each option whose kind says none; "" for one that takes none. */
static const struct {
	const char *cmd, *name, *value;
} samples[] = {
	{ NULL, "pid", "42" },
	{ NULL, "container", "3f2a" },
	{ NULL, "stack-copy", "4096" },
	{ NULL, "alloc-budget", "0.5" },
	{ "record", "output", "x.svg" },
	{ "watch", "keep-exited", "10m" },
	{ "watch", "profile-every", "1m" },
	{ "watch", "sandbox-uid", "1000:1001" },
	{ "watch", "event", "cpu,offcpu" },
	{ "watch", "max-bytes", "2g" },
	{ NULL, "minwidth", "0.5%" },
	{ NULL, "fontsize", "10" },
	{ NULL, "fontwidth", "0.5" },
	{ NULL, "colors", "java" },
	{ NULL, "bgcolors", "blue" },
	{ "collapse", "inline", "" },
};

/* Every row of c, its group's offset, its index. */
#define FOR_ROWS(c, r, at, i)                                                                      \
	for (size_t g_##r = 0, i = 0; g_##r < (c)->ngroups; g_##r++)                               \
		for (const struct cli_opt *r = (c)->groups[g_##r].rows; r->name; r++, i++)         \
			for (size_t at = (c)->groups[g_##r].off, once_##r = 1; once_##r;           \
			     once_##r = 0)

static const char *sample_of(const struct cli_cmd *c, const struct cli_opt *r)
{
	static char num[32];

	switch (r->kind) {
	case CLI_U64:
		snprintf(num, sizeof(num), "%llu", (unsigned long long)r->lo);
		return num;
	case CLI_STR:
		return "x";
	case CLI_ENUM:
		return r->names[0].name;
	case CLI_FN:
		for (size_t i = 0; i < FG_ARRAY_SIZE(samples); i++)
			if ((!samples[i].cmd || !strcmp(samples[i].cmd, c->name)) &&
			    !strcmp(samples[i].name, r->name))
				return samples[i].value;
		fail_msg("%s --%s: no valid sample value in this test", c->name, r->name);
		return NULL;
	default:
		return NULL;
	}
}

static bool inside(size_t at, size_t off, size_t size)
{
	return at >= off && at < off + size;
}

/*
 * Parse {cmd, opt[, value]} over defaults whose own field is filled with fill. False when the
 * parse failed; else every byte outside the row's fields is as the defaults have it, and
 * *changed says whether the own field (or the second one) changed.
 */
static bool run_one(const struct cli_cmd *c, const struct cli_opt *r, size_t off, const char *opt,
		    const char *value, int fill, bool *changed)
{
	unsigned char *want = malloc(c->size), *got = malloc(c->size);
	char *argv[4] = { (char *)c->name, (char *)opt, (char *)value, NULL };
	struct cli_seen seen;
	int rv;

	assert_non_null(want);
	assert_non_null(got);
	c->init(want);
	memset(want + off + r->off, fill, r->size);
	memcpy(got, want, c->size);
	rv = cli_parse(c, value ? 3 : 2, argv, got, &seen);
	*changed = false;
	for (size_t at = 0; rv == 0 && at < c->size; at++) {
		bool own = inside(at, off + r->off, r->size) ||
			   (r->also_size && inside(at, off + r->also_off, r->also_size));

		if (own && got[at] != want[at])
			*changed = true;
		else if (!own && got[at] != want[at])
			fail_msg("%s %s %s: changed byte %zu of the options, outside its field "
				 "(%zu..%zu)",
				 c->name, opt, value ? value : "", at, off + r->off,
				 off + r->off + r->size);
	}
	if (rv == 0 && r->kind == CLI_BITS) { /* its own bits only */
		unsigned w, g;

		memcpy(&w, want + off + r->off, sizeof(w));
		memcpy(&g, got + off + r->off, sizeof(g));
		if (g != (w | (unsigned)r->lo))
			fail_msg("%s %s: flags %#x became %#x", c->name, opt, w, g);
	}
	free(want);
	free(got);
	return rv == 0;
}

static void check_option(const struct cli_cmd *c, const struct cli_opt *r, size_t off,
			 const char *opt)
{
	const char *value = sample_of(c, r);
	bool changed0, changed1, ok;

	if (value && !*value) { /* an option that exists only to be refused */
		assert_false(run_one(c, r, off, opt, NULL, 0, &changed0));
		return;
	}
	ok = run_one(c, r, off, opt, value, 0x00, &changed0) &&
	     run_one(c, r, off, opt, value, 0xff, &changed1);
	if (!ok)
		fail_msg("%s %s %s: refused", c->name, opt, value ? value : "");
	if (r->kind == CLI_NOOP) {
		assert_false(changed0 || changed1);
		return;
	}
	if (!changed0 && !changed1)
		fail_msg("%s %s %s: its field (at %zu) did not change", c->name, opt,
			 value ? value : "", off + r->off);
}

static void test_every_option_sets_its_own_field_and_no_other(void **state)
{
	size_t n = 0;

	(void)state;
	for (size_t k = 0; k < FG_ARRAY_SIZE(cmds); k++) {
		const struct cli_cmd *c = cmds[k];

		FOR_ROWS(c, r, off, i)
		{
			char opt[64];

			snprintf(opt, sizeof(opt), "--%s", r->name);
			check_option(c, r, off, opt);
			if (r->alias) {
				snprintf(opt, sizeof(opt), "--%s", r->alias);
				check_option(c, r, off, opt);
			}
			if (r->key) {
				snprintf(opt, sizeof(opt), "-%c", r->key);
				check_option(c, r, off, opt);
			}
			n++;
		}
	}
	assert_true(n > 100); /* every command's table was walked */
}

/* Names and letters unique per command (--help and -h included); fields unique but for a
 * --x / --no-x pair on one bool, flags of distinct bits in one word, and a flag that sets two
 * (collapse --all: --kernel and --jit). */
static void test_no_two_options_share_a_name_a_letter_or_a_field(void **state)
{
	(void)state;
	for (size_t k = 0; k < FG_ARRAY_SIZE(cmds); k++) {
		const struct cli_cmd *c = cmds[k];

		FOR_ROWS(c, r, off, i)
		{
			assert_true(i < CLI_MAX_ROWS);
			if (!strcmp(r->name, "help") || !strncmp(r->name, "help-", 5) ||
			    r->key == 'h' || (r->alias && !strncmp(r->alias, "help", 4)))
				fail_msg("%s --%s: takes --help's name or letter", c->name,
					 r->name);
			FOR_ROWS(c, q, qoff, j)
			{
				bool pair = (r->kind == CLI_SET && q->kind == CLI_CLEAR) ||
					    (r->kind == CLI_CLEAR && q->kind == CLI_SET) ||
					    (r->kind == CLI_BITS && q->kind == CLI_BITS &&
					     !(r->lo & q->lo)) ||
					    (r->kind == CLI_SET && q->kind == CLI_SET &&
					     (r->also_size || q->also_size)) || /* collapse --all */
					    (r->kind == CLI_CONST && q->kind == CLI_CONST &&
					     r->lo != q->lo); /* choices: the last given wins */

				if (j <= i)
					continue;
				if (!strcmp(r->name, q->name) ||
				    (q->alias && !strcmp(r->name, q->alias)) ||
				    (r->alias && !strcmp(r->alias, q->name)))
					fail_msg("%s: two options named --%s", c->name, r->name);
				if (r->key && r->key == q->key)
					fail_msg("%s: --%s and --%s are both -%c", c->name, r->name,
						 q->name, r->key);
				if (r->size && q->size && off + r->off == qoff + q->off && !pair)
					fail_msg("%s: --%s and --%s set the same field", c->name,
						 r->name, q->name);
			}
		}
	}
}

/* What --help and the docs print: a help line each; a value's name exactly where one is
 * taken; bounds that make sense. */
static void test_every_row_is_complete(void **state)
{
	(void)state;
	for (size_t k = 0; k < FG_ARRAY_SIZE(cmds); k++) {
		const struct cli_cmd *c = cmds[k];

		assert_non_null(c->usage);
		FOR_ROWS(c, r, off, i)
		{
			bool takes = r->kind == CLI_U64 || r->kind == CLI_STR ||
				     r->kind == CLI_ENUM || (r->kind == CLI_FN && r->arg);

			(void)i;
			if (!r->help || !*r->help)
				fail_msg("%s --%s: no help line", c->name, r->name);
			if (takes != (r->arg != NULL))
				fail_msg("%s --%s: a value's name without a value", c->name,
					 r->name);
			if (r->kind == CLI_U64 && r->lo > r->hi)
				fail_msg("%s --%s: bounds %llu..%llu", c->name, r->name,
					 (unsigned long long)r->lo, (unsigned long long)r->hi);
			assert_true(off + r->off + r->size <= c->size);
		}
	}
}

/* --help names every option, in lines that fit 80 columns. */
static void test_help_names_every_option_in_80_columns(void **state)
{
	(void)state;
	for (size_t k = 0; k < FG_ARRAY_SIZE(cmds); k++) {
		const struct cli_cmd *c = cmds[k];
		char *text = NULL, *end, want[64];
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		assert_non_null(f);
		cli_usage(c, f);
		assert_int_equal(fclose(f), 0);
		FOR_ROWS(c, r, at, i)
		{
			(void)at;
			(void)i;
			snprintf(want, sizeof(want), "--%s%s", r->name, r->arg ? " " : "");
			if (!strstr(text, want))
				fail_msg("%s --help does not show %s", c->name, want);
		}
		if ((end = strstr(text, "\nExamples:\n")) != NULL)
			end[1] = '\0'; /* the option lines only: what the table prints */
		for (char *line = text + strlen(c->usage), *nl; *line; line = nl + 1) {
			nl = strchr(line, '\n');
			assert_non_null(nl);
			if (nl - line > 79)
				fail_msg("%s --help: a line of %d columns: %.*s", c->name,
					 (int)(nl - line), (int)(nl - line), line);
		}
		free(text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_option_sets_its_own_field_and_no_other),
		cmocka_unit_test(test_no_two_options_share_a_name_a_letter_or_a_field),
		cmocka_unit_test(test_every_row_is_complete),
		cmocka_unit_test(test_help_names_every_option_in_80_columns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
