// SPDX-License-Identifier: MIT
/*
 * test_rootfs.c - opening files inside a process root never escapes it.
 *
 * A temp directory stands in for a container root: openat2 RESOLVE_IN_ROOT on its dirfd is
 * exactly what the kernel does for a dirfd of /proc/<pid>/root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "procmaps.h"
#include "rootfs.h"
#include "symtest.h"

#include <errno.h>
#include <sys/mman.h>

struct fake {
	char top[256];	  /* holds the host-only file and the root */
	char root[300];	  /* the fake container root */
	char secret[300]; /* a host file outside the root */
	int rootfd;
};

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static int setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	char p[700];

	if (!f || fx_tmpdir(f->top, sizeof(f->top), "rootfs") != 0)
		return -1;
	snprintf(f->root, sizeof(f->root), "%s/root", f->top);
	snprintf(f->secret, sizeof(f->secret), "%s/secret", f->top);
	mkdir(f->root, 0755);
	put(f->secret, "HOST");
	snprintf(p, sizeof(p), "%s/etc", f->root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/etc/passwd", f->root);
	put(p, "CONTAINER");
	/* The same absolute path as the host secret, but inside the root. */
	snprintf(p, sizeof(p), "%s%s", f->root, f->top);
	{
		char cmd[800];

		snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", p);
		assert_int_equal(system(cmd), 0);
	}
	snprintf(p, sizeof(p), "%s%s/inside", f->root, f->top);
	put(p, "INSIDE");
	/* Planted links: absolute to the host secret, relative climbing out, magic link. */
	snprintf(p, sizeof(p), "%s/abs", f->root);
	assert_int_equal(symlink(f->secret, p), 0);
	snprintf(p, sizeof(p), "%s/rel", f->root);
	assert_int_equal(symlink("../../../../../../secret", p), 0);
	snprintf(p, sizeof(p), "%s/magic", f->root);
	assert_int_equal(symlink("/proc/self/root/etc/hostname", p), 0);
	snprintf(p, sizeof(p), "%s/passwdlink", f->root);
	assert_int_equal(symlink("/etc/passwd", p), 0);
	f->rootfd = open(f->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(f->rootfd >= 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake *f = *state;

	close(f->rootfd);
	fx_rm_rf(f->top);
	free(f);
	return 0;
}

static void expect_content(int fd, const char *want)
{
	char buf[64] = { 0 };

	assert_true(fd >= 0);
	assert_true(read(fd, buf, sizeof(buf) - 1) >= 0);
	assert_string_equal(buf, want);
	close(fd);
}

static void test_absolute_symlink_resolves_inside_root(void **state)
{
	struct fake *f = *state;

	/* /etc/passwd through an absolute link: the container's, not the host's. */
	expect_content(rootfs_openat(f->rootfd, "/passwdlink"), "CONTAINER");
	expect_content(rootfs_openat(f->rootfd, "/etc/passwd"), "CONTAINER");
	expect_content(rootfs_openat(f->rootfd, "etc/passwd"), "CONTAINER");
}

static void test_symlink_to_host_file_does_not_escape(void **state)
{
	struct fake *f = *state;

	/* "/abs" -> <top>/secret: inside the root there is no <top>/secret. */
	assert_int_equal(rootfs_openat(f->rootfd, "/abs"), -ENOENT);
	/* A real file at that path inside the root is what we get. */
	{
		char p[400];

		snprintf(p, sizeof(p), "%s/inside", f->top);
		expect_content(rootfs_openat(f->rootfd, p), "INSIDE");
	}
}

static void test_dotdot_is_clamped_at_root(void **state)
{
	struct fake *f = *state;

	assert_int_equal(rootfs_openat(f->rootfd, "/rel"), -ENOENT);
	assert_int_equal(rootfs_openat(f->rootfd, "../secret"), -ENOENT);
	expect_content(rootfs_openat(f->rootfd, "/../../etc/passwd"), "CONTAINER");
}

static void test_magic_links_are_not_followed(void **state)
{
	struct fake *f = *state;
	int fd;

	/* Inside the root /proc does not exist; with it, NO_MAGICLINKS refuses (ELOOP). */
	fd = rootfs_openat(f->rootfd, "/magic");
	assert_true(fd == -ENOENT || fd == -ELOOP);
	/* Against the real root: /proc/self/root is a magic link and must be refused. */
	fd = open("/", O_PATH | O_DIRECTORY);
	assert_int_equal(rootfs_openat(fd, "/proc/self/root/etc/hostname"), -ELOOP);
	close(fd);
}

static struct procmap fake_mapping(const char *path, const struct stat *st)
{
	return (struct procmap){ .start = 0x1000,
				 .end = 0x2000,
				 .ino = st->st_ino,
				 .maj = major(st->st_dev),
				 .min = minor(st->st_dev),
				 .prot = PROCMAP_R | PROCMAP_X,
				 .kind = PROCMAP_FILE,
				 .path = (char *)path };
}

static void test_mapping_identity_is_verified(void **state)
{
	struct fake *f = *state;
	enum rootfs_via via;
	struct procmap m;
	struct stat st;
	char p[400];
	int fd;

	(void)f;
	snprintf(p, sizeof(p), "%s/etc/passwd", f->root);
	assert_int_equal(stat(p, &st), 0);
	m = fake_mapping("/etc/passwd", &st);
	fd = rootfs_open_mapping(f->rootfd, 0x3fffffff, &m, ROOTFS_NO_MAP_FILES, &via);
	assert_int_equal(via, ROOTFS_VIA_PATH);
	expect_content(fd, "CONTAINER");
	/* Same path, another inode: a mismatch, never the wrong file. */
	m.ino++;
	assert_int_equal(rootfs_open_mapping(f->rootfd, 0x3fffffff, &m, ROOTFS_NO_MAP_FILES, &via),
			 -ESTALE);
	/* ... and map_files of a process that does not exist cannot rescue it. */
	assert_int_equal(rootfs_open_mapping(f->rootfd, 0x3fffffff, &m, 0, &via), -ESTALE);
	m.ino--;
	m.min++;
	assert_int_equal(rootfs_open_mapping(f->rootfd, 0x3fffffff, &m, ROOTFS_NO_MAP_FILES, &via),
			 -ESTALE);
	m = fake_mapping("", &st);
	m.kind = PROCMAP_ANON;
	assert_int_equal(rootfs_open_mapping(f->rootfd, 0x3fffffff, &m, 0, &via), -EINVAL);
}

/* A file mapped by this process, then replaced on disk: map_files still reaches the original. */
static void test_replaced_file_is_reached_through_map_files(void **state)
{
	struct fake *f = *state;
	struct procmaps *pm = procmaps_new();
	struct stat orig, st;
	enum rootfs_via via;
	struct procmap *m;
	char p[400], tmp[420];
	void *addr;
	int fd, hostroot;

	snprintf(p, sizeof(p), "%s/mapped", f->top);
	put(p, "ORIGINAL");
	fd = open(p, O_RDONLY);
	assert_int_equal(fstat(fd, &orig), 0);
	addr = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(addr != MAP_FAILED);
	close(fd);
	snprintf(tmp, sizeof(tmp), "%s.new", p);
	put(tmp, "REPLACEMENT");
	assert_int_equal(rename(tmp, p), 0);

	assert_int_equal(procmaps_read(pm, getpid()), 0);
	m = procmaps_find(pm, (uint64_t)(uintptr_t)addr);
	assert_non_null(m);
	assert_int_equal(m->ino, orig.st_ino);
	hostroot = rootfs_open_root(getpid());
	assert_true(hostroot >= 0);
	/* The maps still says the old path (now "(deleted)": the inode was unlinked). */
	assert_int_equal(m->kind, PROCMAP_DELETED);
	m->kind = PROCMAP_FILE; /* pretend the kernel had not noticed: the path is tried */
	assert_int_equal(rootfs_open_mapping(hostroot, getpid(), m, ROOTFS_NO_MAP_FILES, &via),
			 -ESTALE);
	fd = rootfs_open_mapping(hostroot, getpid(), m, 0, &via);
	assert_int_equal(via, ROOTFS_VIA_MAP_FILES);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_ino, orig.st_ino);
	expect_content(fd, "ORIGINAL");
	close(hostroot);
	munmap(addr, 4096);
	procmaps_free(pm);
}

static void test_root_of_missing_process_is_an_error(void **state)
{
	(void)state;
	assert_int_equal(rootfs_open_root(0x3fffffff), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_absolute_symlink_resolves_inside_root),
		cmocka_unit_test(test_symlink_to_host_file_does_not_escape),
		cmocka_unit_test(test_dotdot_is_clamped_at_root),
		cmocka_unit_test(test_magic_links_are_not_followed),
		cmocka_unit_test(test_mapping_identity_is_verified),
		cmocka_unit_test(test_replaced_file_is_reached_through_map_files),
		cmocka_unit_test(test_root_of_missing_process_is_an_error),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
