// SPDX-License-Identifier: MIT
/* test_procmaps.c - maps parsing, classification, lookup and MMAP2 overlap handling. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "procmaps.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Captured from a containerized JDK 17 (trimmed), plus a few special lines. */
static const char jvm_maps[] =
	"55d0c4a00000-55d0c4a01000 r--p 00000000 00:2c 1052 /opt/jdk/bin/java\n"
	"55d0c4a01000-55d0c4a02000 r-xp 00001000 00:2c 1052 /opt/jdk/bin/java\n"
	"55d0c5e6f000-55d0c5e90000 rw-p 00000000 00:00 0                          [heap]\n"
	"7f3a10000000-7f3a10021000 rw-p 00000000 00:00 0 \n"
	"7f3a2c000000-7f3a2c270000 rwxp 00000000 00:00 0 \n"
	"7f3a40200000-7f3a40600000 r--p 00000000 00:2c 2211 /opt/jdk/lib/server/libjvm.so\n"
	"7f3a40600000-7f3a41400000 r-xp 00400000 00:2c 2211 /opt/jdk/lib/server/libjvm.so\n"
	"7f3a41500000-7f3a41501000 r-xp 00000000 00:05 77 /memfd:jit-cache (deleted)\n"
	"7f3a41600000-7f3a41601000 r-xp 00002000 fd:01 1234 /tmp/lib with space.so (deleted)\n"
	"7f3a41700000-7f3a41701000 rw-s 00000000 00:01 9 /dev/zero (deleted)\n"
	"7f3a41800000-7f3a41801000 r--p 00000000 00:00 0 [anon:java heap]\n"
	"7ffd1a2b0000-7ffd1a2d1000 rw-p 00000000 00:00 0                          [stack]\n"
	"7ffd1a3f4000-7ffd1a3f8000 r--p 00000000 00:00 0                          [vvar]\n"
	"7ffd1a3f8000-7ffd1a3fa000 r-xp 00000000 00:00 0                          [vdso]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";

static struct procmaps *parsed(const char *text)
{
	struct procmaps *pm = procmaps_new();

	assert_non_null(pm);
	assert_int_equal(procmaps_parse(pm, text, strlen(text)), 0);
	return pm;
}

static void test_jvm_maps_parse_fields_and_kinds(void **state)
{
	struct procmaps *pm = parsed(jvm_maps);
	struct procmap *m;

	(void)state;
	assert_int_equal(procmaps_count(pm), 15);
	m = procmaps_find(pm, 0x7f3a40600000 + 0x1234);
	assert_non_null(m);
	assert_int_equal(m->start, 0x7f3a40600000);
	assert_int_equal(m->end, 0x7f3a41400000);
	assert_int_equal(m->pgoff, 0x400000);
	assert_int_equal(m->maj, 0);
	assert_int_equal(m->min, 0x2c);
	assert_int_equal(m->ino, 2211);
	assert_int_equal(m->prot, PROCMAP_R | PROCMAP_X);
	assert_int_equal(m->kind, PROCMAP_FILE);
	assert_string_equal(m->path, "/opt/jdk/lib/server/libjvm.so");
	assert_string_equal(m->base, "libjvm.so");

	assert_int_equal(procmaps_find(pm, 0x55d0c5e70000)->kind, PROCMAP_HEAP);
	m = procmaps_find(pm, 0x7f3a2c000100);
	assert_int_equal(m->kind, PROCMAP_ANON);
	assert_int_equal(m->prot, PROCMAP_R | PROCMAP_W | PROCMAP_X);
	assert_string_equal(m->path, "");
	m = procmaps_find(pm, 0x7f3a41500000);
	assert_int_equal(m->kind, PROCMAP_MEMFD);
	assert_string_equal(m->path, "/memfd:jit-cache");
	m = procmaps_find(pm, 0x7f3a41600010);
	assert_int_equal(m->kind, PROCMAP_DELETED);
	assert_string_equal(m->path, "/tmp/lib with space.so");
	assert_string_equal(m->base, "lib with space.so");
	assert_int_equal(m->maj, 0xfd);
	assert_int_equal(procmaps_find(pm, 0x7f3a41700000)->kind, PROCMAP_ANON);
	m = procmaps_find(pm, 0x7f3a41800000);
	assert_int_equal(m->kind, PROCMAP_ANON);
	assert_string_equal(m->path, "[anon:java heap]");
	assert_int_equal(procmaps_find(pm, 0x7ffd1a2c0000)->kind, PROCMAP_STACK);
	assert_int_equal(procmaps_find(pm, 0x7ffd1a3f4000)->kind, PROCMAP_SPECIAL);
	assert_int_equal(procmaps_find(pm, 0x7ffd1a3f9fff)->kind, PROCMAP_VDSO);
	assert_int_equal(procmaps_find(pm, 0xffffffffff600400)->kind, PROCMAP_VSYSCALL);
	procmaps_free(pm);
}

static void test_lookup_boundaries_are_half_open(void **state)
{
	struct procmaps *pm = parsed(jvm_maps);

	(void)state;
	assert_null(procmaps_find(pm, 0x55d0c49fffff));
	assert_int_equal(procmaps_find(pm, 0x55d0c4a00000)->start, 0x55d0c4a00000);
	assert_int_equal(procmaps_find(pm, 0x55d0c4a00fff)->start, 0x55d0c4a00000);
	assert_int_equal(procmaps_find(pm, 0x55d0c4a01000)->start, 0x55d0c4a01000);
	assert_null(procmaps_find(pm, 0x55d0c4a02000)); /* gap before [heap] */
	assert_null(procmaps_find(pm, 0));
	assert_null(procmaps_find(pm, UINT64_MAX));
	procmaps_free(pm);
}

static void test_malformed_lines_are_refused_and_keep_contents(void **state)
{
	static const char *bad[] = {
		"zz-10 r-xp 0 00:00 0 /x\n",
		"1000-2000 r-xp 0 00:00\n",
		"2000-1000 r-xp 0 00:00 0 /x\n", /* end before start */
		"1000-2000 r-x 0 00:00 0 /x\n",
		"1000-2000 r-xp 0 00-00 0 /x\n",
		"11111111111111111-2000 r-xp 0 00:00 0 /x\n", /* 17 hex digits */
		"1000-2000 r-xp 0 00:00 99999999999999999999999 /x\n",
	};
	struct procmaps *pm = parsed(jvm_maps);

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(procmaps_parse(pm, bad[i], strlen(bad[i])), -EINVAL);
		assert_int_equal(procmaps_count(pm), 15);
	}
	procmaps_free(pm);
}

static void test_empty_text_and_missing_final_newline(void **state)
{
	static const char one[] = "1000-2000 r-xp 00000000 08:01 5 /bin/x";
	struct procmaps *pm = parsed("");

	(void)state;
	assert_int_equal(procmaps_count(pm), 0);
	assert_int_equal(procmaps_parse(pm, one, strlen(one)), 0);
	assert_int_equal(procmaps_count(pm), 1);
	assert_string_equal(procmaps_find(pm, 0x1800)->path, "/bin/x");
	procmaps_free(pm);
}

/*
 * A last line without a path, at the very end of the text: nothing past the text is read (the
 * text lies in a buffer of its exact size, so the ASan build sees any read beyond it).
 */
static void test_pathless_last_line_reads_nothing_past_the_text(void **state)
{
	static const char line[] = "1000-2000 rw-p 00000000 00:00 0";
	const size_t len = sizeof(line) - 1;
	struct procmaps *pm = parsed("");
	char *text = malloc(len);

	(void)state;
	assert_non_null(text);
	memcpy(text, line, len);
	assert_int_equal(procmaps_parse(pm, text, len), 0);
	assert_int_equal(procmaps_count(pm), 1);
	assert_int_equal(procmaps_find(pm, 0x1000)->kind, PROCMAP_ANON);
	assert_string_equal(procmaps_find(pm, 0x1000)->path, "");
	free(text);
	procmaps_free(pm);
}

static void test_unsorted_overlapping_input_is_normalised(void **state)
{
	static const char text[] = "5000-6000 r-xp 0 00:00 3 /c\n"
				   "1000-4000 r-xp 0 00:00 1 /a\n"
				   "2000-3000 r-xp 0 00:00 2 /b\n";
	struct procmaps *pm = parsed(text);

	(void)state;
	/* /b (later in sort order) overlaps /a: /a is split around it. */
	assert_int_equal(procmaps_count(pm), 4);
	assert_string_equal(procmaps_find(pm, 0x1000)->path, "/a");
	assert_string_equal(procmaps_find(pm, 0x2000)->path, "/b");
	assert_string_equal(procmaps_find(pm, 0x3000)->path, "/a");
	assert_int_equal(procmaps_find(pm, 0x3000)->pgoff, 0x2000);
	assert_string_equal(procmaps_find(pm, 0x5000)->path, "/c");
	procmaps_free(pm);
}

static struct procmap_update upd(uint64_t start, uint64_t len, uint64_t pgoff, const char *name)
{
	return (struct procmap_update){ .start = start,
					.len = len,
					.pgoff = pgoff,
					.maj = 8,
					.min = 1,
					.ino = 42,
					.prot = PROT_READ | PROT_EXEC,
					.filename = name };
}

static void test_mmap2_splits_middle_of_mapping(void **state)
{
	struct procmaps *pm = parsed("10000-20000 rwxp 00000000 00:00 0 \n");
	struct procmap_update u = upd(0x14000, 0x1000, 0x3000, "/usr/lib/libnew.so");
	struct procmap *m;

	(void)state;
	procmaps_find(pm, 0x10000)->cookie = 77;
	assert_int_equal(procmaps_add(pm, &u), 0);
	assert_int_equal(procmaps_count(pm), 3);
	m = procmaps_find(pm, 0x13fff);
	assert_int_equal(m->end, 0x14000);
	assert_int_equal(m->cookie, 77);
	m = procmaps_find(pm, 0x14000);
	assert_string_equal(m->base, "libnew.so");
	assert_int_equal(m->pgoff, 0x3000);
	assert_int_equal(m->ino, 42);
	assert_int_equal(m->prot, PROCMAP_R | PROCMAP_X);
	assert_int_equal(m->cookie, 0);
	m = procmaps_find(pm, 0x15000);
	assert_int_equal(m->start, 0x15000);
	assert_int_equal(m->end, 0x20000);
	assert_int_equal(m->pgoff, 0x5000);
	assert_int_equal(m->kind, PROCMAP_ANON);
	assert_int_equal(m->cookie, 77);
	procmaps_free(pm);
}

static void test_mmap2_replaces_covered_and_trims_partial(void **state)
{
	static const char text[] = "1000-3000 r-xp 00000000 00:00 1 /a\n"
				   "3000-4000 r-xp 00000000 00:00 2 /b\n"
				   "4000-5000 r-xp 00000000 00:00 3 /c\n"
				   "6000-8000 r-xp 00000000 00:00 4 /d\n";
	struct procmaps *pm = parsed(text);
	struct procmap_update u = upd(0x2000, 0x5000, 0, "//anon");

	(void)state;
	/* [0x2000, 0x7000): trims /a, drops /b and /c, trims /d from the left. */
	assert_int_equal(procmaps_add(pm, &u), 0);
	assert_int_equal(procmaps_count(pm), 3);
	assert_int_equal(procmaps_find(pm, 0x1000)->end, 0x2000);
	assert_int_equal(procmaps_find(pm, 0x3000)->kind, PROCMAP_ANON);
	assert_string_equal(procmaps_find(pm, 0x3000)->path, "");
	assert_int_equal(procmaps_find(pm, 0x7000)->start, 0x7000);
	assert_int_equal(procmaps_find(pm, 0x7000)->pgoff, 0x1000);
	assert_string_equal(procmaps_find(pm, 0x7000)->path, "/d");
	/* Exact replacement of one mapping. */
	u = upd(0x2000, 0x5000, 0, "[vdso]");
	assert_int_equal(procmaps_add(pm, &u), 0);
	assert_int_equal(procmaps_count(pm), 3);
	assert_int_equal(procmaps_find(pm, 0x2000)->kind, PROCMAP_VDSO);
	procmaps_free(pm);
}

static void test_mmap2_rejects_bad_updates(void **state)
{
	struct procmaps *pm = parsed(jvm_maps);
	struct procmap_update u = upd(0x1000, 0, 0, "/x");
	static char longname[PROCMAPS_MAX_PATH + 2];

	(void)state;
	assert_int_equal(procmaps_add(pm, &u), -EINVAL);
	u = upd(UINT64_MAX - 0xfff, 0x2000, 0, "/x");
	assert_int_equal(procmaps_add(pm, &u), -EINVAL);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[0] = '/';
	u = upd(0x1000, 0x1000, 0, longname);
	assert_int_equal(procmaps_add(pm, &u), -EINVAL);
	u = upd(0x1000, 0x1000, 0, NULL);
	assert_int_equal(procmaps_add(pm, &u), -EINVAL);
	assert_int_equal(procmaps_count(pm), 15);
	procmaps_free(pm);
}

static void test_own_process_maps_contain_this_function(void **state)
{
	struct procmaps *pm = procmaps_new();
	struct procmap *m;

	(void)state;
	assert_int_equal(procmaps_read(pm, getpid()), 0);
	m = procmaps_find(pm, (uint64_t)(uintptr_t)&test_own_process_maps_contain_this_function);
	assert_non_null(m);
	assert_true(m->prot & PROCMAP_X);
	assert_int_equal(m->kind, PROCMAP_FILE);
	assert_string_equal(m->base, "test_procmaps");
	assert_int_equal(procmaps_read(pm, 0x3fffffff), -ENOENT);
	procmaps_free(pm);
}

/* Every prefix and every single-byte mutation of valid text parses or is refused cleanly. */
static void test_truncations_and_mutations_never_crash(void **state)
{
	static const char muts[] = { '\0', ' ', '-', ':', '\n', 'x', '0', '(', '[', 'f' };
	struct procmaps *pm = procmaps_new();
	char buf[sizeof(jvm_maps)];
	size_t n = strlen(jvm_maps);

	(void)state;
	for (size_t len = 0; len <= n; len++) {
		int rv = procmaps_parse(pm, jvm_maps, len);

		assert_true(rv == 0 || rv == -EINVAL);
	}
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < sizeof(muts); k++) {
			int rv;

			memcpy(buf, jvm_maps, n);
			buf[i] = muts[k];
			rv = procmaps_parse(pm, buf, n);
			assert_true(rv == 0 || rv == -EINVAL);
			if (rv == 0) /* whatever parsed is sorted and non-overlapping */
				for (size_t j = 1; j < procmaps_count(pm); j++)
					assert_true(procmaps_at(pm, j - 1)->end <=
						    procmaps_at(pm, j)->start);
		}
	}
	procmaps_free(pm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jvm_maps_parse_fields_and_kinds),
		cmocka_unit_test(test_lookup_boundaries_are_half_open),
		cmocka_unit_test(test_malformed_lines_are_refused_and_keep_contents),
		cmocka_unit_test(test_empty_text_and_missing_final_newline),
		cmocka_unit_test(test_pathless_last_line_reads_nothing_past_the_text),
		cmocka_unit_test(test_unsorted_overlapping_input_is_normalised),
		cmocka_unit_test(test_mmap2_splits_middle_of_mapping),
		cmocka_unit_test(test_mmap2_replaces_covered_and_trims_partial),
		cmocka_unit_test(test_mmap2_rejects_bad_updates),
		cmocka_unit_test(test_own_process_maps_contain_this_function),
		cmocka_unit_test(test_truncations_and_mutations_never_crash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
