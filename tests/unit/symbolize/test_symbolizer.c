// SPDX-License-Identifier: MIT
/*
 * test_symbolizer.c - the per-frame API end to end: fake maps, this process, child processes
 * (PIE, non-PIE), a process in a chroot whose binary exists only inside its root, deleted
 * libraries, kernel frames and the unresolved forms.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "symbolizer.h"
#include "symtest.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>

/* A function of this test binary, looked up by its own address. */
__attribute__((noinline, used)) int symtest_local_function(int x);
__attribute__((noinline, used)) int symtest_local_function(int x)
{
	return x * 11 + 3;
}

static struct symbolizer *new_sz(void)
{
	struct symbolizer *sz = symbolizer_new(NULL);

	assert_non_null(sz);
	return sz;
}

static struct sym_result look(struct symbolizer *sz, pid_t pid, uint64_t addr, bool ret)
{
	struct sym_result r;

	assert_int_equal(symbolizer_lookup(sz, pid, addr, ret, &r), 0);
	return r;
}

static void test_own_process_function_and_libc(void **state)
{
	struct symbolizer *sz = new_sz();
	struct sym_result r;

	(void)state;
	assert_int_equal(symbolizer_add_process(sz, getpid()), 0);
	r = look(sz, getpid(), (uint64_t)(uintptr_t)&symtest_local_function + 2, false);
	assert_int_equal(r.status, SYM_RESOLVED);
	assert_string_equal(r.name, "symtest_local_function");
	assert_string_equal(r.module, "test_symbolizer");
	assert_int_equal(r.offset, 2);
	assert_false(r.kernel);
	r = look(sz, getpid(), (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "getpid"), false);
	assert_int_equal(r.status, SYM_RESOLVED);
	assert_string_equal(r.module, "libc.so.6");
	/* getpid or one of its aliases (__getpid), as perf picks: the same address in libc. */
	{
		Dl_info di;

		assert_true(dladdr(dlsym(RTLD_DEFAULT, "getpid"), &di) != 0);
		assert_int_equal(fx_sym_value(di.dli_fname, r.name),
				 fx_sym_value(di.dli_fname, "getpid"));
		assert_true(fx_sym_value(di.dli_fname, "getpid") != 0);
	}
	symbolizer_free(sz);
}

static void test_return_address_at_function_end_names_the_caller(void **state)
{
	struct symbolizer *sz = new_sz();
	uint64_t start, size = 0, base;
	struct sym_result r;
	void *h = dlopen(FX_FULL, RTLD_NOW);
	char maps[4096] = "";
	int rootfd = open("/", O_PATH | O_DIRECTORY);

	(void)state;
	assert_non_null(h);
	/* fx_alpha's end = the next function's start: as a return address it is fx_alpha's. */
	start = (uint64_t)(uintptr_t)dlsym(h, "fx_alpha");
	base = start - fx_sym_value(FX_FULL, "fx_alpha");
	assert_int_equal(fx_maps_for(FX_FULL, base, maps, sizeof(maps)), 0);
	assert_int_equal(symbolizer_add_process_maps(sz, 0x3fffff42, rootfd, maps, strlen(maps)),
			 0);
	close(rootfd);
	r = look(sz, 0x3fffff42, start, false);
	assert_string_equal(r.name, "fx_alpha");
	fx_sym(FX_FULL, "fx_alpha", &size);
	assert_true(size > 0);
	r = look(sz, 0x3fffff42, start + size, false);
	assert_int_not_equal(strcmp(r.name ? r.name : "", "fx_alpha"), 0);
	r = look(sz, 0x3fffff42, start + size, true);
	assert_int_equal(r.status, SYM_RESOLVED);
	assert_string_equal(r.name, "fx_alpha");
	assert_int_equal(r.offset, size);
	symbolizer_free(sz);
	dlclose(h);
}

static void test_demangled_cxx_from_dlopened_library(void **state)
{
	struct symbolizer *sz = new_sz();
	void *h = dlopen(FX_CXX, RTLD_NOW);
	struct sym_result r;

	(void)state;
	assert_non_null(h);
	r = look(sz, getpid(), (uint64_t)(uintptr_t)dlsym(h, "_ZN2fx6Worker3runEi") + 1, false);
	assert_int_equal(r.status, SYM_RESOLVED);
	assert_string_equal(r.name, "fx::Worker::run(int)");
	assert_string_equal(r.module, "libfx_cxx.so");
	symbolizer_free(sz);
	dlclose(h);
}

static void test_stripped_static_function_is_unknown_with_module(void **state)
{
	struct symbolizer *sz = new_sz();
	uint64_t base = 0x7f5500000000, hidden = fx_sym_value(FX_FULL, "fx_hidden");
	struct symbolizer_stats st;
	struct sym_result r;
	char maps[4096] = "", buf[128], want[128];
	int rootfd = open("/", O_PATH | O_DIRECTORY);

	(void)state;
	assert_int_equal(fx_maps_for(FX_STRIPPED, base, maps, sizeof(maps)), 0);
	strcat(maps, "7f6600000000-7f6600100000 rwxp 00000000 00:00 0 \n");
	assert_int_equal(symbolizer_add_process_maps(sz, 0x3fffff43, rootfd, maps, strlen(maps)),
			 0);
	close(rootfd);
	r = look(sz, 0x3fffff43, base + fx_sym_value(FX_FULL, "fx_beta") + 1, false);
	assert_int_equal(r.status, SYM_RESOLVED);
	assert_string_equal(r.name, "fx_beta");
	r = look(sz, 0x3fffff43, base + hidden + 1, false);
	assert_int_equal(r.status, SYM_UNKNOWN_IN_MODULE);
	assert_int_equal(r.error, 0);
	assert_string_equal(r.module, "libfx_stripped.so");
	assert_int_equal(r.offset, hidden + 1);
	/* Unnamed: module+offset, the ELF address addr2line takes. */
	snprintf(want, sizeof(want), "libfx_stripped.so+0x%" PRIx64, hidden + 1);
	assert_int_equal(symbolizer_format(&r, SYMBOLIZER_STYLE_PERF, buf, sizeof(buf)),
			 (int)strlen(want));
	assert_string_equal(buf, want);
	snprintf(want, sizeof(want), "[libfx_stripped.so+0x%" PRIx64 "]", hidden + 1);
	symbolizer_format(&r, SYMBOLIZER_STYLE_FLAMEGRAPH, buf, sizeof(buf));
	assert_string_equal(buf, want);
	/* A return address: the call instruction before it, as the lookup itself uses. */
	r = look(sz, 0x3fffff43, base + hidden + 2, true);
	assert_int_equal(r.status, SYM_UNKNOWN_IN_MODULE);
	assert_int_equal(r.offset, hidden + 1);
	/* JIT candidates and nothing at all. */
	r = look(sz, 0x3fffff43, 0x7f6600000040, true);
	assert_int_equal(r.status, SYM_ANON_EXEC);
	assert_string_equal(r.module, "[anon]");
	/* No file: an offset would mean nothing to addr2line. */
	r.status = SYM_UNKNOWN_IN_MODULE;
	symbolizer_format(&r, SYMBOLIZER_STYLE_PERF, buf, sizeof(buf));
	assert_string_equal(buf, "[unknown] ([anon])");
	symbolizer_format(&r, SYMBOLIZER_STYLE_FLAMEGRAPH, buf, sizeof(buf));
	assert_string_equal(buf, "[anon]");
	r = look(sz, 0x3fffff43, 0x1000, false);
	assert_int_equal(r.status, SYM_NO_MAPPING);
	symbolizer_format(&r, SYMBOLIZER_STYLE_PERF, buf, sizeof(buf));
	assert_string_equal(buf, "[unknown]");
	symbolizer_stats(sz, &st);
	assert_int_equal(st.frames[0][SYM_RESOLVED], 1);
	assert_int_equal(st.frames[0][SYM_UNKNOWN_IN_MODULE], 2);
	assert_int_equal(st.frames[0][SYM_ANON_EXEC], 1);
	assert_int_equal(st.frames[0][SYM_NO_MAPPING], 1);
	assert_int_equal(st.files_via_path, 1);
	symbolizer_free(sz);
}

static void test_mismatched_file_is_reported_not_misread(void **state)
{
	struct symbolizer *sz = new_sz();
	struct symbolizer_stats st;
	struct sym_result r;
	char maps[256];
	int rootfd = open("/", O_PATH | O_DIRECTORY);
	struct stat s;

	(void)state;
	assert_int_equal(stat(FX_FULL, &s), 0);
	/* Right path, wrong inode (as after an in-place upgrade). */
	snprintf(maps, sizeof(maps), "7f0000000000-7f0000100000 r-xp 00000000 %02x:%02x %lu %s\n",
		 major(s.st_dev), minor(s.st_dev), (unsigned long)s.st_ino + 1, FX_FULL);
	assert_int_equal(symbolizer_add_process_maps(sz, 0x3ffffff0, rootfd, maps, strlen(maps)),
			 0);
	close(rootfd);
	r = look(sz, 0x3ffffff0, 0x7f0000001000, false);
	assert_int_equal(r.status, SYM_UNKNOWN_IN_MODULE);
	assert_int_equal(r.error, -ESTALE);
	r = look(sz, 0x3ffffff0, 0x7f0000001000, false); /* remembered: no second attempt */
	assert_int_equal(r.error, -ESTALE);
	symbolizer_stats(sz, &st);
	assert_int_equal(st.files_mismatch, 1);
	symbolizer_free(sz);
}

static void test_child_pie_and_non_pie(void **state)
{
	const char *exes[] = { FX_PIE, FX_NOPIE };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct symbolizer *sz = new_sz();
		struct fx_child c = { 0 };
		struct sym_result r;
		const char *base = strrchr(exes[i], '/') + 1;

		assert_int_equal(fx_spawn(exes[i], &c), 0);
		assert_int_equal(symbolizer_add_process(sz, c.pid), 0);
		r = look(sz, c.pid, c.leaf, false);
		assert_int_equal(r.status, SYM_RESOLVED);
		assert_string_equal(r.name, "fx_leaf");
		assert_string_equal(r.module, base);
		r = look(sz, c.pid, c.main_work + 1, true);
		assert_string_equal(r.name, "fx_main_work");
		assert_int_equal(r.offset, 1);
		fx_reap(&c);
		symbolizer_free(sz);
	}
}

/*
 * A container: a process in its own mount namespace, pivot_root'ed into a temp root where its
 * binary lives at a path the host does not have. Its maps show the container path; only
 * resolution under /proc/<pid>/root finds the file. With chroot (same mount namespace) maps
 * shows the host path instead, which does not resolve in the root: map_files serves.
 */
static void run_jailed(enum fx_jail jail)
{
	struct symbolizer_opts o = { .preload = true };
	struct symbolizer *sz;
	struct symbolizer_stats st;
	char top[128], p[300];
	struct fx_child c = { 0 };
	struct sym_result r;

	assert_int_equal(fx_tmpdir(top, sizeof(top), "ctr"), 0);
	snprintf(p, sizeof(p), "mkdir -p %s/opt/fxapp/bin", top);
	assert_int_equal(system(p), 0);
	snprintf(p, sizeof(p), "%s/opt/fxapp/bin/fx_app", top);
	assert_int_equal(fx_copy(FX_STATIC, p), 0);
	assert_int_not_equal(access("/opt/fxapp/bin/fx_app", F_OK), 0);
	assert_int_equal(fx_spawn_in("/opt/fxapp/bin/fx_app", top, jail, &c), 0);
	sz = symbolizer_new(&o);
	assert_int_equal(symbolizer_add_process(sz, c.pid), 0);
	r = look(sz, c.pid, c.main_work + 3, false);
	assert_int_equal(r.status, SYM_RESOLVED);
	assert_string_equal(r.name, "fx_main_work");
	assert_string_equal(r.module, "fx_app");
	symbolizer_stats(sz, &st);
	if (jail == FX_PIVOT_ROOT) {
		assert_int_equal(st.files_via_path, 1);
		assert_int_equal(st.files_via_map_files, 0);
	} else {
		assert_int_equal(st.files_via_map_files, 1);
	}
	fx_reap(&c);
	/* Preloaded while alive: still resolves after the process is gone. */
	r = look(sz, c.pid, c.leaf, false);
	assert_string_equal(r.name, "fx_leaf");
	symbolizer_free(sz);
	fx_rm_rf(top);
}

/* Root only (mount namespaces, pivot_root, chroot): run by `test_symbolizer --root`. */
static void test_binary_only_inside_container_root(void **state)
{
	(void)state;
	run_jailed(FX_PIVOT_ROOT);
}

static void test_binary_in_chroot_reached_through_map_files(void **state)
{
	(void)state;
	run_jailed(FX_CHROOT);
}

static void test_deleted_library_resolves_through_map_files(void **state)
{
	struct symbolizer *sz = new_sz();
	struct symbolizer_stats st;
	char dir[128], lib[200];
	struct sym_result r;
	void *h;

	(void)state;
	assert_int_equal(fx_tmpdir(dir, sizeof(dir), "del"), 0);
	snprintf(lib, sizeof(lib), "%s/libgone.so", dir);
	assert_int_equal(fx_copy(FX_FULL, lib), 0);
	h = dlopen(lib, RTLD_NOW);
	assert_non_null(h);
	fx_rm_rf(dir);
	r = look(sz, getpid(), (uint64_t)(uintptr_t)dlsym(h, "fx_beta"), false);
	assert_int_equal(r.status, SYM_RESOLVED);
	assert_string_equal(r.name, "fx_beta");
	assert_string_equal(r.module, "libgone.so");
	symbolizer_stats(sz, &st);
	assert_int_equal(st.files_via_map_files, 1);
	dlclose(h);
	symbolizer_free(sz);
}

static void test_mmap2_event_adds_a_library(void **state)
{
	struct symbolizer *sz = new_sz();
	uint64_t base = 0x7f7700000000, v = fx_sym_value(FX_CXX, "_ZN2fx6Worker4tickEPKcd");
	char maps[4096] = "", *line, *save = NULL;
	struct sym_result r;
	int rootfd = open("/", O_PATH | O_DIRECTORY);

	(void)state;
	assert_int_equal(
		symbolizer_add_process_maps(sz, 0x3fffff44, rootfd,
					    "7f7700000000-7f7700200000 rwxp 0 00:00 0 \n",
					    strlen("7f7700000000-7f7700200000 rwxp 0 00:00 0 \n")),
		0);
	close(rootfd);
	assert_int_equal(look(sz, 0x3fffff44, base + v, false).status, SYM_ANON_EXEC);
	/* The library then arrives as MMAP2 records, one per PT_LOAD. */
	assert_int_equal(fx_maps_for(FX_CXX, base, maps, sizeof(maps)), 0);
	for (line = strtok_r(maps, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long s, e, off, ino;
		unsigned int maj, min;
		char perms[5], path[512];
		struct procmap_update u;

		assert_int_equal(sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %511s", &s, &e, perms,
					&off, &maj, &min, &ino, path),
				 8);
		u = (struct procmap_update){ .start = s,
					     .len = e - s,
					     .pgoff = off,
					     .maj = maj,
					     .min = min,
					     .ino = ino,
					     .prot = perms[2] == 'x' ? 5 : 1,
					     .filename = path };
		assert_int_equal(symbolizer_mmap2(sz, 0x3fffff44, &u), 0);
	}
	r = look(sz, 0x3fffff44, base + v + 1, false);
	assert_int_equal(r.status, SYM_RESOLVED);
	assert_string_equal(r.name, "fx::Worker::tick(char const*, double)");
	symbolizer_remove_process(sz, 0x3fffff44);
	symbolizer_remove_process(sz, 0x3fffff44);
	r = look(sz, 0x3fffff44, base + v + 1, false); /* forgotten; no such process */
	assert_int_equal(r.status, SYM_NO_MAPPING);
	symbolizer_free(sz);
}

static void test_kernel_frames_and_restricted_kallsyms(void **state)
{
	struct symbolizer *sz = new_sz();
	struct symbolizer_stats st;
	struct symbolizer_opts o = { 0 };
	char dir[128], path[200], line[512];
	unsigned long long addr = 0;
	struct sym_result r;
	FILE *f;

	(void)state;
	f = fopen("/proc/kallsyms", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char type, sym[256];

		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 &&
		    strcmp(sym, "do_sys_openat2") == 0)
			break;
		addr = 0;
	}
	fclose(f);
	if (addr) {
		r = look(sz, getpid(), addr + 0x10, true);
		assert_int_equal(r.status, SYM_RESOLVED);
		assert_true(r.kernel);
		assert_string_equal(r.name, "do_sys_openat2");
		assert_string_equal(r.module, "[kernel.kallsyms]");
		assert_int_equal(r.offset, 0x10);
	} else {
		assert_int_equal(symbolizer_kernel_status(sz), -EACCES);
	}
	symbolizer_free(sz);

	/* kptr_restrict as a non-privileged reader sees it: every address is 0. */
	assert_int_equal(fx_tmpdir(dir, sizeof(dir), "ksym"), 0);
	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	f = fopen(path, "w");
	fputs("0000000000000000 T _stext\n0000000000000000 T schedule\n", f);
	fclose(f);
	o.kallsyms_path = path;
	sz = symbolizer_new(&o);
	r = look(sz, getpid(), 0xffffffff81001234, false);
	assert_int_equal(r.status, SYM_UNKNOWN_IN_MODULE);
	assert_true(r.kernel);
	assert_int_equal(r.error, -EACCES);
	assert_int_equal(symbolizer_kernel_status(sz), -EACCES);
	symbolizer_stats(sz, &st);
	assert_int_equal(st.kernel_error, -EACCES);
	assert_int_equal(st.frames[1][SYM_UNKNOWN_IN_MODULE], 1);
	symbolizer_free(sz);
	fx_rm_rf(dir);
}

static void test_vdso_frames_resolve(void **state)
{
	struct symbolizer *sz = new_sz();
	void *h = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *fn;
	struct sym_result r;

	(void)state;
	assert_non_null(h);
	fn = dlsym(h, "__vdso_clock_gettime");
	assert_non_null(fn);
	r = look(sz, getpid(), (uint64_t)(uintptr_t)fn + 1, false);
	assert_int_equal(r.status, SYM_RESOLVED);
	assert_string_equal(r.module, "[vdso]");
	assert_non_null(strstr(r.name, "clock_gettime"));
	symbolizer_free(sz);
}

static void test_unknown_process_is_no_mapping_and_process_cap(void **state)
{
	struct symbolizer_opts o = { .max_processes = 1 };
	struct symbolizer *sz = symbolizer_new(&o);
	struct symbolizer_stats st;
	struct sym_result r;

	(void)state;
	r = look(sz, 0x3ffffff1, 0x400000, false);
	assert_int_equal(r.status, SYM_NO_MAPPING);
	assert_int_equal(symbolizer_add_process(sz, getpid()), -E2BIG);
	r = look(sz, getpid(), (uint64_t)(uintptr_t)&symtest_local_function, false);
	assert_int_equal(r.status, SYM_NO_MAPPING);
	assert_int_equal(r.error, -E2BIG);
	symbolizer_stats(sz, &st);
	assert_int_equal(st.processes, 1);
	assert_true(st.processes_dropped >= 1);
	symbolizer_free(sz);
}

/*
 * test_symbolizer: everything that runs as any user. test_symbolizer --root: what needs
 * root (a container's root, a chroot); exits 77 (ctest: skipped) when not root, so a run
 * without root shows as skipped, never as passed.
 */
int main(int argc, char **argv)
{
	const struct CMUnitTest root_tests[] = {
		cmocka_unit_test(test_binary_only_inside_container_root),
		cmocka_unit_test(test_binary_in_chroot_reached_through_map_files),
	};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_process_function_and_libc),
		cmocka_unit_test(test_return_address_at_function_end_names_the_caller),
		cmocka_unit_test(test_demangled_cxx_from_dlopened_library),
		cmocka_unit_test(test_stripped_static_function_is_unknown_with_module),
		cmocka_unit_test(test_mismatched_file_is_reported_not_misread),
		cmocka_unit_test(test_child_pie_and_non_pie),
		cmocka_unit_test(test_deleted_library_resolves_through_map_files),
		cmocka_unit_test(test_mmap2_event_adds_a_library),
		cmocka_unit_test(test_kernel_frames_and_restricted_kallsyms),
		cmocka_unit_test(test_vdso_frames_resolve),
		cmocka_unit_test(test_unknown_process_is_no_mapping_and_process_cap),
	};

	if (argc > 1 && !strcmp(argv[1], "--root")) {
		if (geteuid() != 0) {
			fprintf(stderr, "test_symbolizer --root: needs root (mount namespaces, "
					"pivot_root, chroot): skipped\n");
			return 77;
		}
		return cmocka_run_group_tests_name("symbolizer as root", root_tests, NULL, NULL);
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
