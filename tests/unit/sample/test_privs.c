// SPDX-License-Identifier: MIT
/* test_privs.c - the capabilities sampling needs, read from a made-up /proc. */
#include <errno.h>
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

#include "privs.h"

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void rm(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	unlink(path);
}

static int setup(void **state)
{
	char d[256];

	(void)state;
	snprintf(root, sizeof(root), "/tmp/fgprivs.XXXXXX");
	if (!mkdtemp(root))
		return -1;
	snprintf(d, sizeof(d), "%s/self", root);
	mkdir(d, 0700);
	snprintf(d, sizeof(d), "%s/sys", root);
	mkdir(d, 0700);
	snprintf(d, sizeof(d), "%s/sys/kernel", root);
	mkdir(d, 0700);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* A status file with CapEff = caps, and the three sysctls. */
static void proc(uint64_t caps, int last_cap, int paranoid, int kptr)
{
	char buf[256];

	snprintf(buf, sizeof(buf),
		 "Name:\tfgcollect\nCapInh:\t0000000000000000\nCapEff:\t%016llx\n",
		 (unsigned long long)caps);
	put("self/status", buf);
	snprintf(buf, sizeof(buf), "%d\n", last_cap);
	put("sys/kernel/cap_last_cap", buf);
	snprintf(buf, sizeof(buf), "%d\n", paranoid);
	put("sys/kernel/perf_event_paranoid", buf);
	snprintf(buf, sizeof(buf), "%d\n", kptr);
	put("sys/kernel/kptr_restrict", buf);
}

#define CAP(c) (1ull << (c))
#define THREE                                                                                      \
	(CAP(PRIVS_CAP_PERFMON) | CAP(PRIVS_CAP_SYS_PTRACE) | CAP(PRIVS_CAP_SYSLOG) |              \
	 CAP(PRIVS_CAP_BPF))

static void test_the_documented_set_meets_every_need(void **state)
{
	struct privs p;

	(void)state;
	proc(THREE, 40, 2, 0);
	assert_int_equal(privs_read(root, &p), 0);
	assert_int_equal(p.cap_last_cap, 40);
	assert_int_equal(p.perf_event_paranoid, 2);
	for (int n = 0; n < PRIVS_NNEEDS; n++)
		assert_true(privs_has(&p, (enum privs_need)n));
}

static void test_sys_admin_stands_in_for_perfmon(void **state)
{
	struct privs p;

	(void)state;
	proc(CAP(PRIVS_CAP_SYS_ADMIN) | CAP(PRIVS_CAP_SYS_PTRACE) | CAP(PRIVS_CAP_SYSLOG), 40, 2,
	     0);
	assert_int_equal(privs_read(root, &p), 0);
	assert_true(privs_has(&p, PRIVS_PERF));
}

static void test_without_perfmon_the_line_names_it_and_docker_before_23(void **state)
{
	struct privs p;
	char buf[512];

	(void)state;
	proc(CAP(PRIVS_CAP_SYS_PTRACE) | CAP(PRIVS_CAP_SYSLOG), 40, 2, 0);
	assert_int_equal(privs_read(root, &p), 0);
	assert_false(privs_has(&p, PRIVS_PERF));
	assert_true(privs_has(&p, PRIVS_PTRACE));
	assert_true(privs_has(&p, PRIVS_SYSLOG));
	privs_explain(&p, PRIVS_PERF, buf, sizeof(buf));
	assert_non_null(strstr(buf, "no CAP_PERFMON"));
	assert_non_null(strstr(buf, "--cap-add PERFMON"));
	assert_non_null(strstr(buf, "Docker Engine before 23.0"));
	assert_non_null(strstr(buf, "--cap-add SYS_ADMIN"));
	assert_non_null(strstr(buf, "perf_event_paranoid 2"));
	/* a permissive host needs none */
	proc(0, 40, 1, 0);
	assert_int_equal(privs_read(root, &p), 0);
	assert_true(privs_has(&p, PRIVS_PERF));
	assert_true(privs_has(&p, PRIVS_SYSLOG));
	assert_false(privs_has(&p, PRIVS_PTRACE));
}

static void test_a_kernel_without_perfmon_asks_for_sys_admin(void **state)
{
	struct privs p;
	char buf[512];

	(void)state;
	proc(CAP(PRIVS_CAP_PERFMON), 37, 3, 0); /* a bit the kernel does not know */
	assert_int_equal(privs_read(root, &p), 0);
	assert_true(privs_has(&p, PRIVS_PERF)); /* the bit is there; the kernel decides */
	privs_explain(&p, PRIVS_PERF, buf, sizeof(buf));
	assert_non_null(strstr(buf, "no CAP_SYS_ADMIN"));
	assert_non_null(strstr(buf, "has no CAP_PERFMON"));
	assert_null(strstr(buf, "--cap-add PERFMON"));
}

/* CAP_BPF, or SYS_ADMIN for it; the line names Docker before 23 and kernels before 5.8. */
static void test_bpf_is_named_with_its_stand_in(void **state)
{
	struct privs p;
	char buf[512];

	(void)state;
	proc(CAP(PRIVS_CAP_PERFMON), 40, 2, 0);
	assert_int_equal(privs_read(root, &p), 0);
	assert_false(privs_has(&p, PRIVS_BPF));
	privs_explain(&p, PRIVS_BPF, buf, sizeof(buf));
	assert_non_null(strstr(buf, "no CAP_BPF"));
	assert_non_null(strstr(buf, "--cap-add BPF"));
	assert_non_null(strstr(buf, "Docker Engine before 23.0"));
	assert_non_null(strstr(buf, "--cap-add SYS_ADMIN"));
	proc(CAP(PRIVS_CAP_SYS_ADMIN), 40, 2, 0);
	assert_int_equal(privs_read(root, &p), 0);
	assert_true(privs_has(&p, PRIVS_BPF));
	proc(0, 37, 2, 0);
	assert_int_equal(privs_read(root, &p), 0);
	privs_explain(&p, PRIVS_BPF, buf, sizeof(buf));
	assert_non_null(strstr(buf, "has no CAP_BPF"));
	assert_null(strstr(buf, "--cap-add BPF"));
}

static void test_syslog_depends_on_kptr_restrict(void **state)
{
	struct privs p;
	char buf[512];

	(void)state;
	proc(CAP(PRIVS_CAP_PERFMON), 40, 2, 1);
	assert_int_equal(privs_read(root, &p), 0);
	assert_false(privs_has(&p, PRIVS_SYSLOG));
	privs_explain(&p, PRIVS_SYSLOG, buf, sizeof(buf));
	assert_non_null(strstr(buf, "--cap-add SYSLOG"));
	proc(CAP(PRIVS_CAP_SYSLOG), 40, -1, 1);
	assert_int_equal(privs_read(root, &p), 0);
	assert_true(privs_has(&p, PRIVS_SYSLOG));
	/* 2: no capability helps, and the line says to change the host */
	proc(THREE, 40, 2, 2);
	assert_int_equal(privs_read(root, &p), 0);
	assert_false(privs_has(&p, PRIVS_SYSLOG));
	privs_explain(&p, PRIVS_SYSLOG, buf, sizeof(buf));
	assert_non_null(strstr(buf, "kptr_restrict is 2"));
}

static void test_unreadable_sysctls_count_as_the_defaults(void **state)
{
	struct privs p;

	(void)state;
	proc(0, 40, 2, 0);
	rm("sys/kernel/perf_event_paranoid");
	rm("sys/kernel/kptr_restrict");
	rm("sys/kernel/cap_last_cap");
	assert_int_equal(privs_read(root, &p), 0);
	assert_int_equal(p.perf_event_paranoid, PRIVS_UNKNOWN);
	assert_false(privs_has(&p, PRIVS_PERF));
	assert_false(privs_has(&p, PRIVS_SYSLOG));
	/* no status at all, or no CapEff line: an error, nothing guessed */
	put("self/status", "Name:\tx\n");
	assert_int_equal(privs_read(root, &p), -EIO);
	rm("self/status");
	assert_int_equal(privs_read(root, &p), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_the_documented_set_meets_every_need, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_sys_admin_stands_in_for_perfmon, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_without_perfmon_the_line_names_it_and_docker_before_23, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_a_kernel_without_perfmon_asks_for_sys_admin,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_bpf_is_named_with_its_stand_in, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_syslog_depends_on_kptr_restrict, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_unreadable_sysctls_count_as_the_defaults,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
