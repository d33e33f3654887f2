// SPDX-License-Identifier: MIT
/* test_perfmap.c - map format, order, symlink safety, ENOSPC, inode-checked removal. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "codetab.h"
#include "perfmap.h"

struct fx {
	char dir[64];
	struct perfmap_dir *d;
	struct codetab *t;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	strcpy(f->dir, "/tmp/fgpm.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	chmod(f->dir, 01777); /* like /tmp */
	assert_int_equal(perfmap_dir_open(f->dir, &f->d), 0);
	f->t = codetab_new(NULL);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[96];

	perfmap_dir_close(f->d);
	codetab_free(f->t);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static char *slurp(const char *path)
{
	static char buf[4096];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while ((e = readdir(d)))
		if (e->d_name[0] != '.' || (e->d_name[1] && e->d_name[1] != '.'))
			n++;
	closedir(d);
	return n;
}

static void test_map_is_sorted_live_set_in_perf_format(void **state)
{
	struct fx *f = *state;
	char path[128];

	codetab_add(f->t, CODEBLOB_COMPILED, 0x7f12a0003000, 0x40, 3, "C::c");
	codetab_add(f->t, CODEBLOB_COMPILED, 0x7f12a0001000, 0x1a0, 1, "Hot::loop");
	codetab_add(f->t, CODEBLOB_DYNAMIC, 0x7f12a0000000, 0x800, 0, "Interpreter");
	codetab_add(f->t, CODEBLOB_COMPILED, 0x7f12a0002000, 0x10, 2, "Gone::x");
	codetab_unload(f->t, 0x7f12a0002000, 5);
	codetab_add(f->t, CODEBLOB_COMPILED, 0x7f12a0001100, 0x100, 9,
		    "Over::laps"); /* ends Hot::loop */
	assert_int_equal(perfmap_write(f->d, 4242, f->t, NULL, NULL), 0);
	snprintf(path, sizeof(path), "%s/perf-4242.map", f->dir);
	assert_string_equal(slurp(path), "7f12a0000000 800 Interpreter\n"
					 "7f12a0001100 100 Over::laps\n"
					 "7f12a0003000 40 C::c\n");
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(count_entries(f->dir), 1); /* no temporary file left */
}

static void test_planted_symlinks_leave_the_victim_intact(void **state)
{
	struct fx *f = *state;
	char victim[128], link[128], path[160];

	snprintf(victim, sizeof(victim), "%s/victim", f->dir);
	assert_int_equal(system("true"), 0);
	FILE *v = fopen(victim, "w");

	fputs("precious\n", v);
	fclose(v);
	snprintf(link, sizeof(link), "%s/perf-77.map", f->dir);
	assert_int_equal(symlink(victim, link), 0);
	/* And at the names a predictable writer would use for its temp file. */
	snprintf(path, sizeof(path), "%s/.perf-77.map.tmp", f->dir);
	assert_int_equal(symlink(victim, path), 0);
	snprintf(path, sizeof(path), "%s/perf-77.map.tmp", f->dir);
	assert_int_equal(symlink(victim, path), 0);
	codetab_add(f->t, CODEBLOB_COMPILED, 0x1000, 0x10, 1, "A::a");
	assert_int_equal(perfmap_write(f->d, 77, f->t, NULL, NULL), 0);
	assert_string_equal(slurp(victim), "precious\n");
	struct stat st;

	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISREG(st.st_mode)); /* the symlink was replaced, not followed */
	assert_string_equal(slurp(link), "1000 10 A::a\n");
}

static ssize_t full_disk(int fd, const void *b, size_t n)
{
	(void)fd;
	(void)b;
	(void)n;
	errno = ENOSPC;
	return -1;
}

static void test_full_disk_keeps_the_old_map_and_no_temp_file(void **state)
{
	struct fx *f = *state;
	char path[128];

	codetab_add(f->t, CODEBLOB_COMPILED, 0x1000, 0x10, 1, "Old::map");
	assert_int_equal(perfmap_write(f->d, 5, f->t, NULL, NULL), 0);
	codetab_add(f->t, CODEBLOB_COMPILED, 0x2000, 0x10, 2, "New::entry");
	perfmap_dir_set_write(f->d, full_disk);
	assert_int_equal(perfmap_write(f->d, 5, f->t, NULL, NULL), -ENOSPC);
	snprintf(path, sizeof(path), "%s/perf-5.map", f->dir);
	assert_string_equal(slurp(path), "1000 10 Old::map\n");
	assert_int_equal(count_entries(f->dir), 1);
	perfmap_dir_set_write(f->d, NULL);
	assert_int_equal(perfmap_write(f->d, 5, f->t, NULL, NULL), 0);
	assert_string_equal(slurp(path), "1000 10 Old::map\n2000 10 New::entry\n");
}

static void test_removal_only_removes_our_inode(void **state)
{
	struct fx *f = *state;
	struct perfmap_file ours;
	char path[128];

	codetab_add(f->t, CODEBLOB_COMPILED, 0x1000, 0x10, 1, "A::a");
	assert_int_equal(perfmap_write(f->d, 9, f->t, &ours, NULL), 0);
	snprintf(path, sizeof(path), "%s/perf-9.map", f->dir);
	/* Someone (e.g. jcmd Compiler.perfmap) replaced it: leave theirs alone. */
	unlink(path);
	FILE *o = fopen(path, "w");

	fputs("theirs\n", o);
	fclose(o);
	assert_int_equal(perfmap_remove(f->d, 9, &ours), 0);
	assert_string_equal(slurp(path), "theirs\n");
	/* Ours is removed. */
	assert_int_equal(perfmap_write(f->d, 9, f->t, &ours, NULL), 0);
	assert_int_equal(perfmap_remove(f->d, 9, &ours), 1);
	assert_int_equal(access(path, F_OK), -1);
}

static void test_unsafe_directory_is_refused(void **state)
{
	char dir[] = "/tmp/fgpu.XXXXXX";
	struct perfmap_dir *d;

	(void)state;
	assert_non_null(mkdtemp(dir));
	chmod(dir, 0777); /* world-writable without the sticky bit */
	assert_int_equal(perfmap_dir_open(dir, &d), -EPERM);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_map_is_sorted_live_set_in_perf_format, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_planted_symlinks_leave_the_victim_intact,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_disk_keeps_the_old_map_and_no_temp_file,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_removal_only_removes_our_inode, setup,
						teardown),
		cmocka_unit_test(test_unsafe_directory_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
