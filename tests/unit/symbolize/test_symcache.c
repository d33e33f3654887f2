// SPDX-License-Identifier: MIT
/* test_symcache.c - one load per file identity or build id; bounded, with stale handles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "symcache.h"
#include "symtest.h"

#include <errno.h>

static uint64_t get(struct symcache *sc, const char *path)
{
	uint64_t h = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(symcache_get_fd(sc, fd, -1, &h), 0);
	close(fd);
	assert_true(h != 0);
	return h;
}

static void test_same_file_is_loaded_once(void **state)
{
	struct symcache *sc = symcache_new(NULL);
	struct symcache_stats st;
	uint64_t a, b;

	(void)state;
	a = get(sc, FX_FULL);
	b = get(sc, FX_FULL);
	assert_int_equal(a, b);
	symcache_stats(sc, &st);
	assert_int_equal(st.loads, 1);
	assert_int_equal(st.hits_ident, 1);
	assert_int_equal(st.files, 1);
	assert_non_null(symcache_resolve(sc, a));
	assert_int_equal(st.symbols, elfsym_count(symcache_resolve(sc, a)));
	symcache_free(sc);
}

/* Another copy of the same build (another container's layer): found by build id. */
static void test_copy_with_same_build_id_shares_the_table(void **state)
{
	struct symcache *sc = symcache_new(NULL);
	struct symcache_stats st;
	char dir[128], copy[200];
	uint64_t a, b;

	(void)state;
	assert_int_equal(fx_tmpdir(dir, sizeof(dir), "cache"), 0);
	snprintf(copy, sizeof(copy), "%s/libjvm-copy.so", dir);
	assert_int_equal(fx_copy(FX_FULL, copy), 0);
	a = get(sc, FX_FULL);
	b = get(sc, copy);
	assert_int_equal(a, b);
	/* The stripped file has the same build id too, but fewer symbols: same table. */
	symcache_stats(sc, &st);
	assert_int_equal(st.loads, 1);
	assert_int_equal(st.hits_build_id, 1);
	fx_rm_rf(dir);
	symcache_free(sc);
}

static void test_lru_eviction_invalidates_old_handles(void **state)
{
	struct symcache_limits lim = { .max_files = 2 };
	struct symcache *sc = symcache_new(&lim);
	struct symcache_stats st;
	uint64_t full, vaddr, cxx, full2;

	(void)state;
	full = get(sc, FX_FULL);
	vaddr = get(sc, FX_VADDR);
	assert_non_null(symcache_resolve(sc, full)); /* full is now most recent */
	cxx = get(sc, FX_CXX);			     /* evicts vaddr */
	assert_null(symcache_resolve(sc, vaddr));
	assert_non_null(symcache_resolve(sc, full));
	assert_non_null(symcache_resolve(sc, cxx));
	symcache_stats(sc, &st);
	assert_int_equal(st.evictions, 1);
	assert_int_equal(st.files, 2);
	/*
	 * Reloading the evicted file evicts the least recent one, full (cxx was resolved after
	 * it), and takes full's slot with a new generation; full then comes back in cxx's slot.
	 * Its old handle names a slot that now holds vaddr: it misses.
	 */
	get(sc, FX_VADDR);
	full2 = get(sc, FX_FULL);
	assert_true(full2 != full);
	assert_null(symcache_resolve(sc, full));
	assert_non_null(symcache_resolve(sc, full2));
	symcache_stats(sc, &st);
	assert_int_equal(st.evictions, 3);
	assert_null(symcache_resolve(sc, 0));
	assert_null(symcache_resolve(sc, (uint64_t)99 << 32 | 1));
	symcache_free(sc);
}

static void test_symbol_cap_evicts_to_fit(void **state)
{
	struct symcache_limits lim = { .max_symbols = 1 };
	struct symcache *sc = symcache_new(&lim);
	struct symcache_stats st;
	uint64_t a;

	(void)state;
	a = get(sc, FX_FULL); /* alone it may exceed the cap */
	get(sc, FX_CXX);
	assert_null(symcache_resolve(sc, a));
	symcache_stats(sc, &st);
	assert_int_equal(st.files, 1);
	symcache_free(sc);
}

static void test_non_elf_is_an_error_and_counted(void **state)
{
	struct symcache *sc = symcache_new(NULL);
	struct symcache_stats st;
	uint64_t h;
	int fd = open(__FILE__, O_RDONLY);

	(void)state;
	assert_int_equal(symcache_get_fd(sc, fd, -1, &h), -ENOEXEC);
	close(fd);
	symcache_stats(sc, &st);
	assert_int_equal(st.load_errors, 1);
	assert_int_equal(st.files, 0);
	symcache_free(sc);
}

/* Place file as <dir>/.build-id/xx/yyyy.debug for the stripped fixture's build id. */
static void install_as_debug_file(const char *dir, const char *file)
{
	uint8_t bid[64];
	char path[512], cmd[700];
	size_t len, o;
	int fd = open(FX_STRIPPED, O_RDONLY);

	assert_int_equal(elfsym_read_build_id(fd, 0, bid, sizeof(bid), &len), 0);
	close(fd);
	assert_int_equal(len, 20);
	o = (size_t)snprintf(path, sizeof(path), "%s/.build-id/%02x", dir, bid[0]);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	assert_int_equal(system(cmd), 0);
	o += (size_t)snprintf(path + o, sizeof(path) - o, "/");
	for (size_t i = 1; i < len; i++)
		o += (size_t)snprintf(path + o, sizeof(path) - o, "%02x", bid[i]);
	snprintf(path + o, sizeof(path) - o, ".debug");
	assert_int_equal(fx_copy(file, path), 0);
}

static void install_debug_file(const char *dir)
{
	install_as_debug_file(dir, FX_DEBUG);
}

static const char *lookup_hidden(struct symcache *sc, uint64_t h)
{
	struct elfsym *es = symcache_resolve(sc, h);
	const char *name = NULL;
	uint64_t off;

	assert_non_null(es);
	if (elfsym_lookup(es, fx_sym_value(FX_FULL, "fx_hidden") + 1, 0, &name, &off) != 0)
		return NULL;
	return name;
}

static void test_stripped_file_takes_symbols_from_its_debug_file(void **state)
{
	char dir[128];
	struct symcache_limits lim = { 0 };
	struct symcache *sc;
	struct symcache_stats st;

	(void)state;
	assert_int_equal(fx_tmpdir(dir, sizeof(dir), "dbg"), 0);
	lim.debug_dir = dir;
	/* No debug file yet: .dynsym only, the static function is unknown. */
	sc = symcache_new(&lim);
	assert_null(lookup_hidden(sc, get(sc, FX_STRIPPED)));
	symcache_free(sc);
	install_debug_file(dir);
	sc = symcache_new(&lim);
	assert_string_equal(lookup_hidden(sc, get(sc, FX_STRIPPED)), "fx_hidden");
	symcache_stats(sc, &st);
	assert_int_equal(st.debug_files, 1);
	symcache_free(sc);
	fx_rm_rf(dir);
}

/* The container's own /usr/lib/debug is searched inside its root. */
static void test_debug_file_is_found_inside_the_process_root(void **state)
{
	char top[128], dbg[300];
	struct symcache_limits lim = { .debug_dir = "/usr/lib/debug" };
	struct symcache *sc;
	uint64_t h;
	int rootfd, fd;

	(void)state;
	assert_int_equal(fx_tmpdir(top, sizeof(top), "dbgroot"), 0);
	snprintf(dbg, sizeof(dbg), "%s/usr/lib/debug", top);
	install_debug_file(dbg);
	rootfd = open(top, O_PATH | O_DIRECTORY);
	sc = symcache_new(&lim);
	fd = open(FX_STRIPPED, O_RDONLY);
	assert_int_equal(symcache_get_fd(sc, fd, rootfd, &h), 0);
	close(fd);
	close(rootfd);
	assert_string_equal(lookup_hidden(sc, h), "fx_hidden");
	symcache_free(sc);
	fx_rm_rf(top);
}

static void test_debug_file_with_another_build_id_is_ignored(void **state)
{
	struct elfsym *es;
	int fd = open(FX_STRIPPED, O_RDONLY), dfd = open(FX_CXX, O_RDONLY);

	(void)state;
	assert_int_equal(elfsym_load_fd(fd, NULL, &es), 0);
	assert_int_equal(elfsym_use_debug_file(es, dfd, NULL), -ESTALE);
	assert_false(elfsym_has_symtab(es));
	close(dfd);
	dfd = open(FX_DEBUG, O_RDONLY);
	assert_int_equal(elfsym_use_debug_file(es, dfd, NULL), 0);
	assert_true(elfsym_has_symtab(es));
	close(dfd);
	close(fd);
	elfsym_free(es);
}

/* FX_DEBUG with fx_hidden renamed fx_hiddeX: the same build id, told apart by the name. */
static void write_renamed_debug_file(const char *path)
{
	static char img[1 << 20];
	int fd = open(FX_DEBUG, O_RDONLY);
	ssize_t n = read(fd, img, sizeof(img));
	size_t hits = 0;

	close(fd);
	assert_true(n > 0 && n < (ssize_t)sizeof(img));
	for (char *p = img; (p = memmem(p, (size_t)(img + n - p), "fx_hidden", 10)) != NULL; p++) {
		p[8] = 'X';
		hits++;
	}
	assert_true(hits > 0);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_int_equal(write(fd, img, (size_t)n), n);
	close(fd);
}

/* The collector's own debug directory (an absolute path in both roots) after the target's. */
static const char *lookup_in_roots(const char *top, const char *dbg, struct symcache_stats *st)
{
	struct symcache_limits lim = { .debug_dir = dbg };
	static char name[32];
	const char *found;
	struct symcache *sc = symcache_new(&lim);
	int rootfd = open(top, O_PATH | O_DIRECTORY), fd = open(FX_STRIPPED, O_RDONLY);
	uint64_t h;

	assert_int_equal(symcache_get_fd(sc, fd, rootfd, &h), 0);
	close(fd);
	close(rootfd);
	found = lookup_hidden(sc, h);
	snprintf(name, sizeof(name), "%s", found ? found : "");
	symcache_stats(sc, st);
	symcache_free(sc);
	return name;
}

/*
 * The target's root is searched first; a file at the build-id path whose build id is another
 * (a stale -dbg package) is refused there and the collector's copy is used.
 */
static void test_target_root_debug_file_first_and_checked(void **state)
{
	char top[128], host[128], dbg[300], in_root[600], renamed[700];
	struct symcache_stats st;

	(void)state;
	assert_int_equal(fx_tmpdir(top, sizeof(top), "dbgtop"), 0);
	assert_int_equal(fx_tmpdir(host, sizeof(host), "dbghost"), 0);
	snprintf(dbg, sizeof(dbg), "%s/usr/lib/debug", host);
	snprintf(in_root, sizeof(in_root), "%s%s", top, dbg);
	/* The collector's: renamed; the target's: the real one, which wins. */
	install_debug_file(dbg);
	snprintf(renamed, sizeof(renamed), "%s/renamed.debug", host);
	write_renamed_debug_file(renamed);
	install_as_debug_file(dbg, renamed);
	install_debug_file(in_root);
	assert_string_equal(lookup_in_roots(top, dbg, &st), "fx_hidden");
	assert_int_equal(st.debug_files, 1);
	/* The target's is another library's: refused, the collector's used. */
	install_as_debug_file(in_root, FX_CXX);
	assert_string_equal(lookup_in_roots(top, dbg, &st), "fx_hiddeX");
	assert_int_equal(st.debug_files, 1);
	/* Nothing else: no debug file, the static function stays unnamed. */
	install_as_debug_file(dbg, FX_CXX);
	assert_string_equal(lookup_in_roots(top, dbg, &st), "");
	assert_int_equal(st.debug_files, 0);
	fx_rm_rf(top);
	fx_rm_rf(host);
}

/* A fake debuginfod: counts calls, remembers the build id, answers with fetch_path or err. */
struct fake_fetch {
	const char *path; /* NULL: answer err */
	int err;
	int calls;
	uint8_t bid[64];
	size_t len;
};

static int fake_fetch(void *arg, const uint8_t *bid, size_t len)
{
	struct fake_fetch *f = arg;

	f->calls++;
	f->len = len < sizeof(f->bid) ? len : sizeof(f->bid);
	memcpy(f->bid, bid, f->len);
	return f->path ? open(f->path, O_RDONLY | O_CLOEXEC) : f->err;
}

static void stripped_build_id(uint8_t *bid, size_t cap, size_t *len)
{
	int fd = open(FX_STRIPPED, O_RDONLY);

	assert_int_equal(elfsym_read_build_id(fd, 0, bid, cap, len), 0);
	close(fd);
}

/* No local debug file: the fetcher's file names the static function, asked once per build. */
static void test_fetcher_supplies_a_missing_debug_file(void **state)
{
	struct fake_fetch f = { .path = FX_DEBUG };
	struct symcache_limits lim = { .debug_dir = "",
				       .fetch_debug = fake_fetch,
				       .fetch_arg = &f };
	struct symcache *sc = symcache_new(&lim);
	struct symcache_stats st;
	uint8_t bid[64];
	size_t len;
	uint64_t h;

	(void)state;
	h = get(sc, FX_STRIPPED);
	assert_string_equal(lookup_hidden(sc, h), "fx_hidden");
	assert_int_equal(f.calls, 1);
	stripped_build_id(bid, sizeof(bid), &len);
	assert_int_equal(f.len, len);
	assert_memory_equal(f.bid, bid, len);
	assert_int_equal(get(sc, FX_STRIPPED), h); /* cached: no second fetch */
	assert_int_equal(f.calls, 1);
	symcache_stats(sc, &st);
	assert_int_equal(st.debug_files, 1);
	assert_int_equal(st.debug_fetched, 1);
	assert_int_equal(st.fetch_failures, 0);
	symcache_free(sc);
}

/* A .symtab, or a local debug file, means the network is never asked. */
static void test_fetcher_is_not_asked_when_symbols_are_local(void **state)
{
	struct fake_fetch f = { .path = FX_DEBUG };
	struct symcache_limits lim = { .fetch_debug = fake_fetch, .fetch_arg = &f };
	struct symcache *sc;
	struct symcache_stats st;
	char dir[128];

	(void)state;
	assert_int_equal(fx_tmpdir(dir, sizeof(dir), "dbgl"), 0);
	install_debug_file(dir);
	lim.debug_dir = dir;
	sc = symcache_new(&lim);
	get(sc, FX_FULL);
	symcache_free(sc);
	/* A cache of its own: the stripped copy would share the full file's table. */
	sc = symcache_new(&lim);
	assert_string_equal(lookup_hidden(sc, get(sc, FX_STRIPPED)), "fx_hidden");
	assert_int_equal(f.calls, 0);
	symcache_stats(sc, &st);
	assert_int_equal(st.debug_files, 1);
	assert_int_equal(st.debug_fetched, 0);
	symcache_free(sc);
	fx_rm_rf(dir);
}

/* Not found, or a file of another build: .dynsym stays, the failure is counted. */
static void test_fetch_failure_keeps_the_dynamic_symbols(void **state)
{
	struct fake_fetch f[2] = { { .err = -ENOENT }, { .path = FX_CXX } };
	struct symcache_stats st;

	(void)state;
	for (int i = 0; i < 2; i++) {
		struct symcache_limits lim = { .debug_dir = "",
					       .fetch_debug = fake_fetch,
					       .fetch_arg = &f[i] };
		struct symcache *sc = symcache_new(&lim);
		uint64_t h = get(sc, FX_STRIPPED);

		assert_null(lookup_hidden(sc, h));
		assert_false(elfsym_has_symtab(symcache_resolve(sc, h)));
		assert_int_equal(f[i].calls, 1);
		symcache_stats(sc, &st);
		assert_int_equal(st.fetch_failures, 1);
		assert_int_equal(st.debug_files, 0);
		symcache_free(sc);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_file_is_loaded_once),
		cmocka_unit_test(test_copy_with_same_build_id_shares_the_table),
		cmocka_unit_test(test_lru_eviction_invalidates_old_handles),
		cmocka_unit_test(test_symbol_cap_evicts_to_fit),
		cmocka_unit_test(test_non_elf_is_an_error_and_counted),
		cmocka_unit_test(test_stripped_file_takes_symbols_from_its_debug_file),
		cmocka_unit_test(test_debug_file_is_found_inside_the_process_root),
		cmocka_unit_test(test_debug_file_with_another_build_id_is_ignored),
		cmocka_unit_test(test_target_root_debug_file_first_and_checked),
		cmocka_unit_test(test_fetcher_supplies_a_missing_debug_file),
		cmocka_unit_test(test_fetcher_is_not_asked_when_symbols_are_local),
		cmocka_unit_test(test_fetch_failure_keeps_the_dynamic_symbols),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
