// SPDX-License-Identifier: MIT
/*
 * test_profdir.c - the profile directory: files land whole under their stem, retention holds by
 * count and by bytes (oldest first, also across a restart), an unsafe directory is refused, a
 * planted symlink is replaced and never followed, and index.html lists containers and profiles
 * newest first, and the time view page of a JVM's sets follows them: rewritten only when that
 * JVM's sets changed, removed when retention removed them all.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "profdir.h"
#include "profview.h"

#define T0 1795335000 /* 2026-11-22 08:10:00 UTC */
#define CID_A "aaaaaaaaaaaa0000000000000000000000000000000000000000000000000001"
#define CID_B "bbbbbbbbbbbb0000000000000000000000000000000000000000000000000002"

static char base[64];

static int setup(void **state)
{
	(void)state;
	snprintf(base, sizeof(base), "/tmp/fgprofdir.XXXXXX");
	assert_non_null(mkdtemp(base));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void path(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", base, name);
}

/* A profile of service svc in container cid, started at T0 + t, with n bytes per file. */
static int add(struct profdir *d, const char *svc, const char *cid, uint32_t pid, int64_t t,
	       size_t n, int pb)
{
	static char blob[8192];
	struct profdir_prof p = { .start_unix = T0 + t,
				  .end_unix = T0 + t + 10,
				  .samples = 100 + (uint64_t)t,
				  .freq_hz = 99 };

	memset(blob, 'x', sizeof(blob));
	assert_true(n <= sizeof(blob));
	prof_labels_set(&p.labels, svc, cid, pid, "node1");
	p.folded = blob;
	p.folded_len = n;
	p.svg = blob;
	p.svg_len = n;
	if (pb) {
		p.pb = blob;
		p.pb_len = n;
	}
	return profdir_add(d, &p);
}

static int exists(const char *name)
{
	char p[256];
	struct stat st;

	path(p, sizeof(p), name);
	return lstat(p, &st) == 0;
}

static char *slurp(const char *name)
{
	char p[256], *buf = NULL;
	size_t len = 0;
	FILE *f;

	path(p, sizeof(p), name);
	f = fopen(p, "r");
	assert_non_null(f);
	buf = calloc(1, 1 << 20);
	len = fread(buf, 1, (1 << 20) - 1, f);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

static void test_sets_land_whole_with_an_index(void **state)
{
	char dir[128];
	struct profdir *d;
	struct profdir_opts o = { .path = dir };
	struct profdir_stats st;
	struct stat sb;
	char *idx;

	(void)state;
	path(dir, sizeof(dir), "out");
	assert_int_equal(profdir_open(&o, &d), 0);
	assert_int_equal(stat(dir, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0755);
	assert_int_equal(add(d, "web", CID_A, 10, 0, 100, 1), 0);
	assert_int_equal(add(d, "db", NULL, 11, 0, 50, 0), 0);
	assert_true(exists("out/20261122T081000Z_web_aaaaaaaaaaaa_10_node1.folded"));
	assert_true(exists("out/20261122T081000Z_web_aaaaaaaaaaaa_10_node1.svg"));
	assert_true(exists("out/20261122T081000Z_web_aaaaaaaaaaaa_10_node1.pb.gz"));
	assert_true(exists("out/20261122T081000Z_db_host_11_node1.svg"));
	assert_false(exists("out/20261122T081000Z_db_host_11_node1.pb.gz"));
	assert_int_equal(add(d, "web", CID_A, 10, 0, 100, 1), -EEXIST);
	profdir_stats(d, &st);
	assert_int_equal(st.sets, 2);
	assert_int_equal(st.bytes, 300 + 100);
	idx = slurp("out/index.html");
	assert_non_null(strstr(idx, CID_A)); /* the full id in the group heading */
	assert_non_null(strstr(idx, "Host processes (no container)"));
	assert_non_null(strstr(idx, "href=\"20261122T081000Z_web_aaaaaaaaaaaa_10_node1.svg\""));
	free(idx);
	profdir_close(d);
}

/* Stems of the rows of index.html, in document order, joined by ' '. */
static void rows(const char *idx, char *out, size_t len)
{
	const char *p = idx;

	out[0] = '\0';
	while ((p = strstr(p, "data-stem=\""))) {
		const char *q;

		p += strlen("data-stem=\"");
		q = strchr(p, '"');
		snprintf(out + strlen(out), len - strlen(out), "%.*s ", (int)(q - p), p);
		p = q;
	}
}

static void test_index_groups_containers_newest_first(void **state)
{
	char dir[128], got[4096];
	struct profdir_opts o = { .path = dir };
	struct profdir *d;
	char *idx;

	(void)state;
	path(dir, sizeof(dir), "idx");
	assert_int_equal(profdir_open(&o, &d), 0);
	assert_int_equal(add(d, "a", CID_A, 1, 0, 10, 0), 0);
	assert_int_equal(add(d, "b", CID_B, 2, 10, 10, 0), 0);
	assert_int_equal(add(d, "a", CID_A, 1, 20, 10, 0), 0);
	assert_int_equal(add(d, "b", CID_B, 2, 30, 10, 0), 0);
	idx = slurp("idx/index.html");
	rows(idx, got, sizeof(got));
	/* container B has the newest profile: its group first; inside, newest first */
	assert_string_equal(got, "20261122T081030Z_b_bbbbbbbbbbbb_2_node1 "
				 "20261122T081010Z_b_bbbbbbbbbbbb_2_node1 "
				 "20261122T081020Z_a_aaaaaaaaaaaa_1_node1 "
				 "20261122T081000Z_a_aaaaaaaaaaaa_1_node1 ");
	free(idx);
	profdir_close(d);
}

static void test_retention_holds_by_count_and_bytes_oldest_first(void **state)
{
	char dir[128];
	struct profdir_opts o = { .path = dir, .keep = 3, .max_bytes = 1000 };
	struct profdir_stats st;
	struct profdir *d;

	(void)state;
	path(dir, sizeof(dir), "ret");
	assert_int_equal(profdir_open(&o, &d), 0);
	for (int i = 0; i < 6; i++) {
		assert_int_equal(add(d, "a", CID_A, 1, i, 100, 0), 0);
		profdir_stats(d, &st);
		assert_true(st.sets <= 3);
	}
	assert_false(exists("ret/20261122T081002Z_a_aaaaaaaaaaaa_1_node1.svg"));
	assert_true(exists("ret/20261122T081003Z_a_aaaaaaaaaaaa_1_node1.svg"));
	/* 3 x 200 bytes fit; one of 300 x 2 more pushes the bytes bound: oldest sets go */
	assert_int_equal(add(d, "a", CID_A, 1, 10, 300, 0), 0);
	profdir_stats(d, &st);
	assert_true(st.bytes <= 1000);
	assert_int_equal(st.sets, 3); /* 600 + 200 + 200 */
	assert_false(exists("ret/20261122T081003Z_a_aaaaaaaaaaaa_1_node1.svg"));
	assert_true(exists("ret/20261122T081004Z_a_aaaaaaaaaaaa_1_node1.svg"));
	assert_int_equal(add(d, "a", CID_A, 1, 11, 600, 0), -EFBIG); /* alone over the bound */
	assert_false(exists("ret/20261122T081011Z_a_aaaaaaaaaaaa_1_node1.svg"));
	assert_int_equal(st.removed, 4);
	profdir_close(d);

	/* A restart with a smaller bound takes over the sets and applies it at once. */
	o.keep = 1;
	assert_int_equal(profdir_open(&o, &d), 0);
	profdir_stats(d, &st);
	assert_int_equal(st.found_at_open, 3);
	assert_int_equal(st.sets, 1);
	assert_true(exists("ret/20261122T081010Z_a_aaaaaaaaaaaa_1_node1.svg"));
	assert_false(exists("ret/20261122T081005Z_a_aaaaaaaaaaaa_1_node1.svg"));
	profdir_close(d);
}

static void test_unsafe_directories_are_refused(void **state)
{
	char dir[128], link[128];
	struct profdir_opts o = { .path = dir };
	struct profdir *d;

	(void)state;
	path(dir, sizeof(dir), "open");
	assert_int_equal(mkdir(dir, 0777), 0);
	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(profdir_open(&o, &d), -EPERM); /* others may write: refused */
	assert_int_equal(chmod(dir, 0755), 0);
	path(link, sizeof(link), "link");
	assert_int_equal(symlink(dir, link), 0);
	o.path = link;
	assert_int_equal(profdir_open(&o, &d), -EPERM); /* a symlink: refused */
	o.path = dir;
	assert_int_equal(profdir_open(&o, &d), 0);
	profdir_close(d);
}

static void test_planted_symlink_is_replaced_not_followed(void **state)
{
	char dir[128], victim[128], planted[256];
	struct profdir_opts o = { .path = dir };
	struct profdir *d;
	struct stat st;
	int fd;

	(void)state;
	path(dir, sizeof(dir), "sym");
	path(victim, sizeof(victim), "victim");
	fd = open(victim, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "keep", 4), 4);
	close(fd);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(planted, sizeof(planted), "%s/20261122T081000Z_a_host_5_node1.svg", dir);
	assert_int_equal(symlink(victim, planted), 0);
	/* and a leftover temporary file of a crashed run */
	snprintf(planted, sizeof(planted), "%s/.tmp.x.svg.1", dir);
	fd = open(planted, O_CREAT | O_WRONLY, 0600);
	close(fd);
	assert_int_equal(profdir_open(&o, &d), 0);
	assert_false(exists("sym/.tmp.x.svg.1"));
	assert_int_equal(add(d, "a", NULL, 5, 0, 10, 0), 0);
	assert_int_equal(lstat(planted, &st), -1);
	snprintf(planted, sizeof(planted), "%s/20261122T081000Z_a_host_5_node1.svg", dir);
	assert_int_equal(lstat(planted, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(stat(victim, &st), 0);
	assert_int_equal(st.st_size, 4); /* untouched */
	profdir_close(d);
}

/* A profile of JVM pid of service "shop" at T0 + t whose folded stacks are real. */
static int add_folded(struct profdir *d, uint32_t pid, int64_t t, const char *folded)
{
	struct profdir_prof p = { .start_unix = T0 + t,
				  .end_unix = T0 + t + 10,
				  .samples = 3,
				  .freq_hz = 99,
				  .folded = folded,
				  .folded_len = strlen(folded),
				  .svg = "<svg/>",
				  .svg_len = 6 };

	prof_labels_set(&p.labels, "shop", NULL, pid, "node1");
	return profdir_add(d, &p);
}

#define VIEW_PAGE "out/view_shop_host_7_node1.html"

static void test_view_pages_follow_the_sets(void **state)
{
	char dir[128], leftover[200];
	struct profdir *d;
	struct profdir_opts o = {
		.path = dir, .keep = 3, .view_pages = true, .view_same_priority = true
	};
	struct profdir_stats st;
	char *page;
	int fd;

	(void)state;
	path(dir, sizeof(dir), "out");
	assert_int_equal(mkdir(dir, 0755), 0);
	/* a page's temporary file left by a crashed run goes at open */
	snprintf(leftover, sizeof(leftover), "%s/view_shop_host_7_node1.html.tmp.99", dir);
	fd = open(leftover, O_CREAT | O_WRONLY, 0600);
	close(fd);
	assert_int_equal(profdir_open(&o, &d), 0);
	assert_false(exists("out/view_shop_host_7_node1.html.tmp.99"));
	assert_int_equal(add_folded(d, 7, 0, "main;Hot.a_[j] 2\nmain;Cold.b_[j] 1\n"), 0);
	/* written while the directory is open, soon after the set (and counted once in place) */
	for (int i = 0; i < 200; i++) {
		profdir_stats(d, &st);
		if (exists(VIEW_PAGE) && st.view_pages >= 1)
			break;
		usleep(50000);
	}
	assert_true(exists(VIEW_PAGE));
	assert_int_equal(add_folded(d, 7, 10, "main;Hot.c_[j] 4\n"), 0);
	assert_int_equal(add_folded(d, 7, 20, "main;Hot.d_[j] 5\n"), 0);
	assert_int_equal(add_folded(d, 7, 30, "main;Hot.e_[j] 6\n"), 0);
	profdir_stats(d, &st);
	profdir_close(d); /* the last sets' page before it returns */
	assert_true(st.view_pages >= 1);
	assert_int_equal(st.view_errors, 0);
	page = slurp(VIEW_PAGE);
	/* the sets kept (3: the first went), a column each */
	assert_non_null(strstr(page, "3 rolling profiles of 10 s"));
	assert_non_null(strstr(page, "\"columns\":[1795335010,1795335020,1795335030]"));
	free(page);
}

static ino_t inode(const char *name)
{
	char p[256];
	struct stat st;

	path(p, sizeof(p), name);
	assert_int_equal(lstat(p, &st), 0);
	return st.st_ino;
}

#define PAGE_7 "upd/view_shop_host_7_node1.html"
#define PAGE_8 "upd/view_shop_host_8_node1.html"

static void update(const char *dir, struct profview_memo *m, size_t want_written,
		   size_t want_removed)
{
	size_t written, removed;

	assert_int_equal(profview_update(dir, m, NULL, NULL, &written, &removed), 0);
	assert_int_equal(written, want_written);
	assert_int_equal(removed, want_removed);
}

static void test_view_pages_rewritten_only_when_their_sets_change(void **state)
{
	char dir[128], p7[256], foreign[256];
	struct profdir_opts o = { .path = dir, .keep = 3 };
	struct profview_memo *m = profview_memo_new();
	struct profdir *d;
	ino_t i7, i8;
	int fd;

	(void)state;
	assert_non_null(m);
	path(dir, sizeof(dir), "upd");
	assert_int_equal(profdir_open(&o, &d), 0);
	assert_int_equal(add_folded(d, 7, 0, "main;Hot.a_[j] 2\n"), 0);
	assert_int_equal(add_folded(d, 8, 0, "main;Hot.b_[j] 3\n"), 0);
	/* a file that is no page of ours stays, whatever its name */
	path(foreign, sizeof(foreign), "upd/view_notes.html");
	fd = open(foreign, O_CREAT | O_WRONLY, 0644);
	close(fd);
	update(dir, m, 2, 0);
	i7 = inode(PAGE_7);
	i8 = inode(PAGE_8);
	update(dir, m, 0, 0); /* nothing changed: nothing written */
	assert_true(inode(PAGE_7) == i7 && inode(PAGE_8) == i8);
	assert_int_equal(add_folded(d, 8, 10, "main;Hot.c_[j] 4\n"), 0);
	update(dir, m, 1, 0); /* JVM 8's page alone */
	assert_true(inode(PAGE_7) == i7);
	assert_true(inode(PAGE_8) != i8);
	path(p7, sizeof(p7), PAGE_7);
	assert_int_equal(unlink(p7), 0);
	update(dir, m, 1, 0); /* a page gone is written again */
	assert_true(exists(PAGE_7));
	/* retention (3 sets) removes JVM 7's only set: its page goes, JVM 8's stays */
	assert_int_equal(add_folded(d, 8, 20, "main;Hot.d_[j] 5\n"), 0);
	assert_false(exists("upd/20261122T081000Z_shop_host_7_node1.folded"));
	update(dir, m, 1, 1);
	assert_false(exists(PAGE_7));
	assert_true(exists(PAGE_8));
	assert_true(exists("upd/view_notes.html"));
	profdir_close(d);
	profview_memo_free(m);
}

/* watch --out's thread: a JVM whose sets retention removed loses its page. */
static void test_view_page_goes_with_its_last_set(void **state)
{
	char dir[128];
	struct profdir *d;
	struct profdir_opts o = {
		.path = dir, .keep = 2, .view_pages = true, .view_same_priority = true
	};
	struct profdir_stats st;

	(void)state;
	path(dir, sizeof(dir), "gone");
	assert_int_equal(profdir_open(&o, &d), 0);
	assert_int_equal(add_folded(d, 7, 0, "main;Hot.a_[j] 2\n"), 0);
	for (int i = 0; i < 200 && !exists("gone/view_shop_host_7_node1.html"); i++)
		usleep(50000);
	assert_true(exists("gone/view_shop_host_7_node1.html"));
	assert_int_equal(add_folded(d, 8, 10, "main;Hot.b_[j] 3\n"), 0);
	assert_int_equal(add_folded(d, 8, 20, "main;Hot.c_[j] 4\n"), 0);
	assert_false(exists("gone/20261122T081000Z_shop_host_7_node1.folded"));
	for (int i = 0; i < 200; i++) {
		profdir_stats(d, &st);
		if (!exists("gone/view_shop_host_7_node1.html") && st.view_removed >= 1)
			break;
		usleep(50000);
	}
	assert_false(exists("gone/view_shop_host_7_node1.html"));
	assert_int_equal(st.view_removed, 1);
	assert_int_equal(st.view_errors, 0);
	profdir_close(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sets_land_whole_with_an_index, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_index_groups_containers_newest_first, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_retention_holds_by_count_and_bytes_oldest_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unsafe_directories_are_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_planted_symlink_is_replaced_not_followed,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_pages_follow_the_sets, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_view_pages_rewritten_only_when_their_sets_change, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_page_goes_with_its_last_set, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
