// SPDX-License-Identifier: MIT
/* test_kallsyms.c - kallsyms parsing, lookup extents, restricted and real /proc/kallsyms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "kallsyms.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char sample[] = "ffffffff81000000 T _stext\n"
			     "ffffffff81000000 t startup_64\n"
			     "ffffffff81001000 T do_one_initcall\n"
			     "ffffffff81001400 t helper_local\n"
			     "ffffffff81002000 D some_data\n"
			     "ffffffff81003000 W weak_fn\n"
			     "ffffffff81004000 T schedule\n"
			     "ffffffffc0201000 t ext4_readpage\t[ext4]\n"
			     "ffffffffc0201800 T ext4_file_read_iter\t[ext4]\n"
			     "ffffffffc0400000 t xfs_foo\t[xfs]\n";

static struct kallsyms *parse(const char *text)
{
	struct kallsyms *ks = NULL;

	assert_int_equal(kallsyms_parse(text, strlen(text), &ks), 0);
	return ks;
}

static void test_text_symbols_resolve_with_offsets(void **state)
{
	struct kallsyms *ks = parse(sample);
	const char *name, *mod;
	uint64_t off;

	(void)state;
	/* _stext and startup_64 share an address: the global T symbol wins. */
	assert_int_equal(kallsyms_count(ks), 8);
	assert_int_equal(kallsyms_lookup(ks, 0xffffffff81000010, &name, &mod, &off), 0);
	assert_string_equal(name, "_stext");
	assert_string_equal(mod, "[kernel.kallsyms]");
	assert_int_equal(off, 0x10);
	assert_int_equal(kallsyms_lookup(ks, 0xffffffff810013ff, &name, &mod, &off), 0);
	assert_string_equal(name, "do_one_initcall");
	assert_int_equal(kallsyms_lookup(ks, 0xffffffff81001400, &name, &mod, &off), 0);
	assert_string_equal(name, "helper_local");
	/* Data symbols are skipped: the text symbol before them extends over. */
	assert_int_equal(kallsyms_lookup(ks, 0xffffffff81002010, &name, &mod, &off), 0);
	assert_string_equal(name, "helper_local");
	assert_int_equal(kallsyms_lookup(ks, 0xffffffff81003004, &name, &mod, &off), 0);
	assert_string_equal(name, "weak_fn");
	assert_int_equal(kallsyms_lookup(ks, 0xffffffffc0201900, &name, &mod, &off), 0);
	assert_string_equal(name, "ext4_file_read_iter");
	assert_string_equal(mod, "[ext4]");
	assert_int_equal(off, 0x100);
	assert_int_equal(kallsyms_lookup(ks, 0xffffffffc0400004, &name, &mod, &off), 0);
	assert_string_equal(mod, "[xfs]");
	assert_int_equal(kallsyms_lookup(ks, 0xffffffff80ffffff, &name, &mod, &off), -ENOENT);
	kallsyms_free(ks);
}

static void test_last_symbol_of_a_module_does_not_swallow_far_addresses(void **state)
{
	struct kallsyms *ks = parse(sample);
	const char *name, *mod;
	uint64_t off;

	(void)state;
	/* schedule is the last core-kernel symbol; the next is in [ext4], far away. */
	assert_int_equal(
		kallsyms_lookup(ks, 0xffffffff81004000 + KALLSYMS_MAX_TAIL - 1, &name, &mod, &off),
		0);
	assert_string_equal(name, "schedule");
	assert_int_equal(
		kallsyms_lookup(ks, 0xffffffff81004000 + KALLSYMS_MAX_TAIL, &name, &mod, &off),
		-ENOENT);
	assert_int_equal(
		kallsyms_lookup(ks, 0xffffffffc0400000 + KALLSYMS_MAX_TAIL, &name, &mod, &off),
		-ENOENT);
	/* PERF_CONTEXT_* markers are not kernel text. */
	assert_int_equal(kallsyms_lookup(ks, (uint64_t)-128, &name, &mod, &off), -ENOENT);
	kallsyms_free(ks);
}

static void test_all_zero_addresses_mean_restricted(void **state)
{
	static const char hidden[] = "0000000000000000 T _stext\n"
				     "0000000000000000 t startup_64\n"
				     "0000000000000000 T schedule\n";
	static const char no_text[] = "ffffffff81002000 D some_data\n";
	struct kallsyms *ks = NULL;

	(void)state;
	assert_int_equal(kallsyms_parse(hidden, strlen(hidden), &ks), -EACCES);
	assert_int_equal(kallsyms_parse(no_text, strlen(no_text), &ks), -ENOENT);
	assert_int_equal(kallsyms_parse("", 0, &ks), -ENOENT);
	assert_null(ks);
}

static void test_malformed_lines_are_refused(void **state)
{
	static const char *bad[] = {
		"ffffffff81000000T x\n",
		"ffffffff81000000 T \n",
		"xyz T name\n",
		"11111111111111111 T toolong\n",
		"ffffffff81000000 T name\t[unterminated\n",
	};
	struct kallsyms *ks = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(kallsyms_parse(bad[i], strlen(bad[i]), &ks), -EINVAL);
	assert_null(ks);
}

/*
 * The real table: a symbol's address, read here independently, resolves to that symbol.
 * Run by `test_kallsyms --real`, which exits 77 (skipped) when kptr_restrict hides the
 * addresses from this user.
 */
static void test_real_kallsyms_resolves_schedule(void **state)
{
	struct kallsyms *ks = NULL;
	unsigned long long want = 0;
	const char *name, *mod;
	char line[512];
	uint64_t off;
	FILE *f;

	(void)state;
	assert_int_equal(kallsyms_load(NULL, &ks), 0);
	f = fopen("/proc/kallsyms", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char type, sym[256];

		if (sscanf(line, "%llx %c %255s", &want, &type, sym) == 3 &&
		    strcmp(sym, "schedule") == 0 && (type == 'T' || type == 't'))
			break;
		want = 0;
	}
	fclose(f);
	assert_true(want != 0);
	assert_int_equal(kallsyms_lookup(ks, want + 1, &name, &mod, &off), 0);
	assert_string_equal(name, "schedule");
	assert_string_equal(mod, "[kernel.kallsyms]");
	assert_int_equal(off, 1);
	assert_true(kallsyms_count(ks) > 10000);
	kallsyms_free(ks);
	assert_int_equal(kallsyms_load("/nonexistent/kallsyms", &ks), -ENOENT);
}

/* Every prefix and single-byte mutation of the sample parses or is refused cleanly. */
static void test_truncations_and_mutations_never_crash(void **state)
{
	static const char muts[] = { '\0', ' ', '\t', '\n', '[', ']', 'T', '0', 'z' };
	char buf[sizeof(sample)];
	size_t n = strlen(sample);
	struct kallsyms *ks;

	(void)state;
	for (size_t len = 0; len <= n; len++) {
		int rv = kallsyms_parse(sample, len, &ks);

		assert_true(rv == 0 || rv == -EINVAL || rv == -ENOENT);
		if (rv == 0)
			kallsyms_free(ks);
	}
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < sizeof(muts); k++) {
			int rv;

			memcpy(buf, sample, n);
			buf[i] = muts[k];
			rv = kallsyms_parse(buf, n, &ks);
			assert_true(rv == 0 || rv == -EINVAL || rv == -ENOENT);
			if (rv == 0)
				kallsyms_free(ks);
		}
	}
}

/*
 * test_kallsyms: parsing and lookups on captured text. test_kallsyms --real: this host's
 * /proc/kallsyms; exits 77 (ctest: skipped) when the kernel hides its addresses from us.
 */
int main(int argc, char **argv)
{
	const struct CMUnitTest real_tests[] = {
		cmocka_unit_test(test_real_kallsyms_resolves_schedule),
	};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_symbols_resolve_with_offsets),
		cmocka_unit_test(test_last_symbol_of_a_module_does_not_swallow_far_addresses),
		cmocka_unit_test(test_all_zero_addresses_mean_restricted),
		cmocka_unit_test(test_malformed_lines_are_refused),
		cmocka_unit_test(test_truncations_and_mutations_never_crash),
	};

	if (argc > 1 && !strcmp(argv[1], "--real")) {
		struct kallsyms *ks = NULL;
		int rv = kallsyms_load(NULL, &ks);

		kallsyms_free(ks);
		if (rv == -EACCES) {
			/* kptr_restrict hides addresses from this user: the documented error. */
			fprintf(stderr, "test_kallsyms --real: /proc/kallsyms addresses are "
					"hidden from this user (kptr_restrict): skipped\n");
			return 77;
		}
		return cmocka_run_group_tests_name("real kallsyms", real_tests, NULL, NULL);
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
