// SPDX-License-Identifier: MIT
/* test_perfmap.c - map format, order, symlink safety, ENOSPC, inode-checked removal, appends
 * and compaction, the sweep of a killed writer's temporary files. */
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
#include <stdbool.h>
#include <time.h>
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

/* Create dir/name (a regular file, or a symlink to target), last written age_s ago. */
static void plant(const char *dir, const char *name, const char *target, int age_s)
{
	struct timespec ts[2];
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (target) {
		assert_int_equal(symlink(target, path), 0);
	} else {
		FILE *o = fopen(path, "w");

		assert_non_null(o);
		fputs("1000 10 Half::written\n", o);
		fclose(o);
	}
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= age_s;
	ts[1] = ts[0];
	assert_int_equal(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW), 0);
}

static bool exists(const char *dir, const char *name)
{
	char path[160];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return lstat(path, &st) == 0;
}

static void test_sweep_removes_only_a_dead_writers_temporary_files(void **state)
{
	struct fx *f = *state;
	char victim[96];

	snprintf(victim, sizeof(victim), "%s/victim", f->dir);
	plant(f->dir, "victim", NULL, 0);
	plant(f->dir, ".perf-12.map.0123456789abcdef", NULL, 60);   /* a killed writer's */
	plant(f->dir, ".perf-13.map.0123456789abcdef", NULL, 0);    /* a live writer's */
	plant(f->dir, ".perf-14.map.0123456789abcdeg", NULL, 60);   /* not our name */
	plant(f->dir, ".perf-15.map.0123456789abcdef0", NULL, 60);  /* not our name */
	plant(f->dir, ".perf-.map.0123456789abcdef", NULL, 60);	    /* not our name */
	plant(f->dir, "perf-17.map", NULL, 60);			    /* a map */
	plant(f->dir, ".perf-16.map.0123456789abcdef", victim, 60); /* a symlink */
	plant(f->dir, ".perf-18.map.fedcba9876543210", NULL, 3600); /* a killed writer's */
	assert_int_equal(perfmap_sweep(f->d, 10), 2);
	assert_false(exists(f->dir, ".perf-12.map.0123456789abcdef"));
	assert_false(exists(f->dir, ".perf-18.map.fedcba9876543210"));
	assert_true(exists(f->dir, ".perf-13.map.0123456789abcdef"));
	assert_true(exists(f->dir, ".perf-14.map.0123456789abcdeg"));
	assert_true(exists(f->dir, ".perf-15.map.0123456789abcdef0"));
	assert_true(exists(f->dir, ".perf-.map.0123456789abcdef"));
	assert_true(exists(f->dir, "perf-17.map"));
	assert_true(exists(f->dir, ".perf-16.map.0123456789abcdef"));
	assert_string_equal(slurp(victim), "1000 10 Half::written\n");
	/* Nothing left to remove. */
	assert_int_equal(perfmap_sweep(f->d, 10), 0);
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

/* ---- the incremental writer ---------------------------------------------------------- */

static char *slurp_all(const char *path)
{
	static char buf[1 << 20];
	int fd = open(path, O_RDONLY);
	size_t n = 0;
	ssize_t r;

	if (fd < 0)
		return NULL;
	while (n < sizeof(buf) - 1 && (r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = '\0';
	return buf;
}

static ino_t ino_of(const char *path)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	return st.st_ino;
}

static void add_noted(struct fx *f, struct perfmap_writer *w, uint64_t addr, uint32_t size,
		      uint64_t ts, const char *name)
{
	assert_int_equal(codetab_add(f->t, CODEBLOB_COMPILED, addr, size, ts, name), 1);
	perfmap_writer_note(w, addr);
}

static void test_writer_appends_new_code_to_the_same_file(void **state)
{
	struct fx *f = *state;
	struct perfmap_writer *w = perfmap_writer_new(f->d, 31);
	struct perfmap_writer_stats st;
	char path[128];
	ino_t ino;

	snprintf(path, sizeof(path), "%s/perf-31.map", f->dir);
	add_noted(f, w, 0x3000, 0x40, 1, "C::c");
	assert_int_equal(perfmap_writer_update(w, f->t, false), 1); /* no file yet: compaction */
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(perfmap_writer_update(w, f->t, true), 0);
	assert_string_equal(slurp_all(path), "3000 40 C::c\n");
	ino = ino_of(path);
	add_noted(f, w, 0x1000, 0x1a0, 2, "Hot::loop");
	add_noted(f, w, 0x5000, 0x10, 3, "E::e");
	assert_int_equal(perfmap_writer_update(w, f->t, false), 0);
	assert_string_equal(slurp_all(path), "3000 40 C::c\n1000 1a0 Hot::loop\n5000 10 E::e\n");
	assert_int_equal(ino_of(path), ino); /* appended, not replaced */
	/* An unload leaves a dead line: no code is there any more, nothing to write. */
	assert_int_equal(codetab_unload(f->t, 0x3000, 4), 1);
	assert_int_equal(perfmap_writer_update(w, f->t, false), 0);
	assert_string_equal(slurp_all(path), "3000 40 C::c\n1000 1a0 Hot::loop\n5000 10 E::e\n");
	perfmap_writer_stats(w, &st);
	assert_int_equal(st.compactions, 1);
	assert_int_equal(st.appends, 1);
	assert_int_equal(st.lines_appended, 2);
	/* Identity follows the appends (ctime changes), so removal still finds our file. */
	assert_int_equal(perfmap_remove(f->d, 31, perfmap_writer_file(w)), 1);
	perfmap_writer_free(w);
	assert_int_equal(count_entries(f->dir), 0);
}

static void test_writer_compacts_when_an_address_is_reused(void **state)
{
	struct fx *f = *state;
	struct perfmap_writer *w = perfmap_writer_new(f->d, 32);
	char path[128];
	ino_t ino;

	snprintf(path, sizeof(path), "%s/perf-32.map", f->dir);
	add_noted(f, w, 0x1000, 0x100, 1, "Old::a");
	add_noted(f, w, 0x2000, 0x100, 2, "Keep::b");
	assert_int_equal(perfmap_writer_update(w, f->t, true), 0);
	ino = ino_of(path);
	/* The code cache reuses part of Old::a's range. */
	assert_int_equal(codetab_unload(f->t, 0x1000, 3), 1);
	add_noted(f, w, 0x1080, 0x100, 4, "New::c");
	add_noted(f, w, 0x3000, 0x10, 5, "Free::d");
	/* Not allowed to compact: what fits is appended, the overlapping blob waits. */
	assert_int_equal(perfmap_writer_update(w, f->t, false), 1);
	assert_string_equal(slurp_all(path),
			    "1000 100 Old::a\n2000 100 Keep::b\n3000 10 Free::d\n");
	assert_int_equal(ino_of(path), ino);
	assert_int_equal(perfmap_writer_update(w, f->t, true), 0);
	assert_string_equal(slurp_all(path),
			    "1080 100 New::c\n2000 100 Keep::b\n3000 10 Free::d\n");
	/* The very same range for another method (equal addr and size) is a reuse too. */
	assert_int_equal(codetab_unload(f->t, 0x2000, 6), 1);
	add_noted(f, w, 0x2000, 0x100, 7, "Other::e");
	assert_int_equal(perfmap_writer_update(w, f->t, false), 1);
	assert_int_equal(perfmap_writer_update(w, f->t, true), 0);
	assert_string_equal(slurp_all(path),
			    "1080 100 New::c\n2000 100 Other::e\n3000 10 Free::d\n");
	assert_int_equal(count_entries(f->dir), 1);
	perfmap_writer_free(w);
}

static void test_writer_compacts_when_dead_lines_fill_half_the_file(void **state)
{
	struct fx *f = *state;
	struct perfmap_writer *w = perfmap_writer_new(f->d, 33);
	struct perfmap_writer_stats st;
	char path[128];
	unsigned n = 2 * PERFMAP_COMPACT_MIN_DEAD + 10;

	snprintf(path, sizeof(path), "%s/perf-33.map", f->dir);
	for (unsigned i = 0; i < n; i++)
		add_noted(f, w, 0x10000 + 0x100 * (uint64_t)i, 0x80, i + 1, "M::m");
	assert_int_equal(perfmap_writer_update(w, f->t, true), 0);
	/* Half of them die: not yet too many. */
	for (unsigned i = 0; i < n / 2; i++)
		codetab_unload(f->t, 0x10000 + 0x100 * (uint64_t)i, n + 1);
	assert_int_equal(perfmap_writer_update(w, f->t, true), 0);
	perfmap_writer_stats(w, &st);
	assert_int_equal(st.compactions, 1);
	/* A few more: over half of the file is dead, it is rewritten as the live set. */
	for (unsigned i = n / 2; i < n / 2 + 10; i++)
		codetab_unload(f->t, 0x10000 + 0x100 * (uint64_t)i, n + 2);
	assert_int_equal(perfmap_writer_update(w, f->t, false), 0); /* not allowed: still valid */
	assert_int_equal(perfmap_writer_update(w, f->t, true), 0);
	perfmap_writer_stats(w, &st);
	assert_int_equal(st.compactions, 2);
	char *m = slurp_all(path);
	unsigned lines = 0;

	for (char *p = m; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, n - n / 2 - 10);
	perfmap_writer_free(w);
}

static void test_writer_never_appends_to_a_file_that_is_not_ours(void **state)
{
	struct fx *f = *state;
	struct perfmap_writer *w = perfmap_writer_new(f->d, 34);
	char path[128];
	FILE *o;

	snprintf(path, sizeof(path), "%s/perf-34.map", f->dir);
	add_noted(f, w, 0x1000, 0x10, 1, "A::a");
	assert_int_equal(perfmap_writer_update(w, f->t, true), 0);
	/* Someone replaced the map (jcmd Compiler.perfmap, a user): our descriptor is stale. */
	unlink(path);
	o = fopen(path, "w");
	fputs("theirs\n", o);
	fclose(o);
	add_noted(f, w, 0x2000, 0x10, 2, "B::b");
	assert_int_equal(perfmap_writer_update(w, f->t, false), 1);
	assert_string_equal(slurp_all(path), "theirs\n");
	/* A compaction puts the live set back by rename, as every full write does. */
	assert_int_equal(perfmap_writer_update(w, f->t, true), 0);
	assert_string_equal(slurp_all(path), "1000 10 A::a\n2000 10 B::b\n");
	perfmap_writer_free(w);
}

static void test_writer_failed_append_is_repaired_by_a_compaction(void **state)
{
	struct fx *f = *state;
	struct perfmap_writer *w = perfmap_writer_new(f->d, 35);
	char path[128];

	snprintf(path, sizeof(path), "%s/perf-35.map", f->dir);
	add_noted(f, w, 0x1000, 0x10, 1, "A::a");
	assert_int_equal(perfmap_writer_update(w, f->t, true), 0);
	add_noted(f, w, 0x2000, 0x10, 2, "B::b");
	perfmap_dir_set_write(f->d, full_disk);
	assert_int_equal(perfmap_writer_update(w, f->t, false), -ENOSPC);
	perfmap_dir_set_write(f->d, NULL);
	assert_int_equal(perfmap_writer_update(w, f->t, false), 1);
	assert_int_equal(perfmap_writer_update(w, f->t, true), 0);
	assert_string_equal(slurp_all(path), "1000 10 A::a\n2000 10 B::b\n");
	assert_int_equal(count_entries(f->dir), 1);
	perfmap_writer_free(w);
}

struct pline {
	uint64_t addr, size;
	char name[32];
};

static int pline_cmp(const void *a, const void *b)
{
	const struct pline *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Parse a map file into lines sorted by address; returns their count. */
static size_t parse_map(const char *path, struct pline *out, size_t cap)
{
	char *m = slurp_all(path), *save = NULL;
	size_t n = 0;

	assert_non_null(m);
	for (char *l = strtok_r(m, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long long a, z;
		char name[32];

		assert_int_equal(sscanf(l, "%llx %llx %31s", &a, &z, name), 3);
		assert_true(n < cap);
		out[n] = (struct pline){ a, z, "" };
		strcpy(out[n].name, name);
		n++;
	}
	qsort(out, n, sizeof(*out), pline_cmp);
	return n;
}

/*
 * Random loads (overlapping, reusing addresses) and unloads, with updates that may or may not
 * compact: after every update the file's lines never overlap, every live blob is in it unless
 * the update asked for a compaction, and a final compaction leaves exactly the live set.
 */
static void test_writer_random_churn_never_shows_perf_an_overlap(void **state)
{
	struct fx *f = *state;
	struct perfmap_writer *w = perfmap_writer_new(f->d, 36);
	static struct pline lines[4096];
	char path[128], name[32];
	unsigned seed = 12345;
	uint64_t ts = 1;
	int compactions_seen = 0, appends_seen = 0;

	snprintf(path, sizeof(path), "%s/perf-36.map", f->dir);
	for (int step = 0; step < 3000; step++) {
		unsigned r = rand_r(&seed);

		if (r % 3) {
			uint64_t addr = 0x100000 + 0x40 * (uint64_t)(rand_r(&seed) % 200);
			uint32_t size = 0x40 * (1 + rand_r(&seed) % 3) - 8 * (rand_r(&seed) % 2);

			snprintf(name, sizeof(name), "M%d::m", step);
			if (codetab_add(f->t, CODEBLOB_COMPILED, addr, size, ts++, name) == 1)
				perfmap_writer_note(w, addr);
		} else if (codetab_live_count(f->t)) {
			const struct codeblob *b =
				codetab_live_at(f->t, rand_r(&seed) % codetab_live_count(f->t));

			codetab_unload(f->t, b->addr, ts++);
		}
		if (rand_r(&seed) % 4)
			continue;
		bool may = rand_r(&seed) % 5 == 0;
		int rv = perfmap_writer_update(w, f->t, may);

		assert_true(rv == 0 || rv == 1);
		assert_true(!may || rv == 0);
		if (access(path, F_OK) != 0)
			continue;
		size_t n = parse_map(path, lines, 4096);

		for (size_t i = 1; i < n; i++)
			assert_true(lines[i - 1].addr + lines[i - 1].size <= lines[i].addr);
		if (rv != 0)
			continue;
		for (size_t i = 0; i < codetab_live_count(f->t); i++) {
			const struct codeblob *b = codetab_live_at(f->t, i);
			struct pline key = { .addr = b->addr };
			struct pline *l = bsearch(&key, lines, n, sizeof(*l), pline_cmp);

			assert_non_null(l);
			assert_int_equal(l->size, b->size);
			assert_string_equal(l->name, b->name);
		}
	}
	assert_int_equal(perfmap_writer_update(w, f->t, true), 0);
	assert_int_equal(perfmap_writer_update(w, f->t, true), 0);
	struct perfmap_writer_stats st;

	perfmap_writer_stats(w, &st);
	compactions_seen = (int)st.compactions;
	appends_seen = (int)st.appends;
	assert_true(compactions_seen > 1 && appends_seen > 10); /* both paths were exercised */
	/* Force a compaction to compare with the exact live set. */
	perfmap_writer_release(w);
	assert_int_equal(perfmap_writer_update(w, f->t, true), 0);
	size_t n = parse_map(path, lines, 4096);

	assert_int_equal(n, codetab_live_count(f->t));
	for (size_t i = 0; i < n; i++)
		assert_int_equal(lines[i].addr, codetab_live_at(f->t, i)->addr);
	perfmap_writer_free(w);
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
		cmocka_unit_test_setup_teardown(test_writer_appends_new_code_to_the_same_file,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_writer_compacts_when_an_address_is_reused,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_writer_compacts_when_dead_lines_fill_half_the_file, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_writer_never_appends_to_a_file_that_is_not_ours, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_writer_failed_append_is_repaired_by_a_compaction, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_writer_random_churn_never_shows_perf_an_overlap, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_sweep_removes_only_a_dead_writers_temporary_files, setup, teardown),
		cmocka_unit_test(test_unsafe_directory_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
