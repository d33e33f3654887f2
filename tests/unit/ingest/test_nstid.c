// SPDX-License-Identifier: MIT
/*
 * test_nstid.c - an agent's thread ids mapped to the host's through a fake /proc tree
 * (<root>/<pid>/task/<tid>/status with NSpid lines): found among the JVM's own tasks only,
 * rescans rate-limited against floods of unknown tids, a reused namespace tid noticed.
 */
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

#include "nstid.h"

#define MS 1000000ull
#define SEC 1000000000ull

struct fx {
	char root[64];
};

/* Task tid of pid, its namespace tid ns (0: a status without NSpid). */
static void task(struct fx *fx, uint32_t pid, uint32_t tid, uint32_t ns)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u", fx->root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/task", fx->root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/task/%u", fx->root, pid, tid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/task/%u/status", fx->root, pid, tid);
	f = fopen(path, "w");
	assert_non_null(f);
	if (ns)
		fprintf(f, "Name:\tworker\nTgid:\t%u\nPid:\t%u\nNSpid:\t%u\t%u\n", pid, tid, tid,
			ns);
	else
		fprintf(f, "Name:\tworker\nPid:\t%u\n", tid);
	assert_int_equal(fclose(f), 0);
}

static void task_gone(struct fx *fx, uint32_t pid, uint32_t tid)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s/%u/task/%u'", fx->root, pid, tid);
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	strcpy(fx->root, "/dev/shm/fg_nstid_XXXXXX");
	assert_non_null(mkdtemp(fx->root));
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->root);
	assert_int_equal(system(cmd), 0);
	free(fx);
	return 0;
}

static void test_tids_are_found_among_the_jvms_tasks(void **state)
{
	struct fx *fx = *state;
	struct nstid m;
	uint32_t tid = 0;

	task(fx, 4000, 4000, 1);
	task(fx, 4000, 4012, 13);
	task(fx, 4000, 4013, 14);
	task(fx, 4000, 4099, 0);  /* unreadable NSpid: never matched */
	task(fx, 5000, 5013, 99); /* another process's thread */
	nstid_init(&m, fx->root, 4000);
	assert_int_equal(nstid_lookup(&m, 13, 10 * SEC, &tid), 0);
	assert_int_equal(tid, 4012);
	assert_int_equal(nstid_lookup(&m, 1, 10 * SEC, &tid), 0);
	assert_int_equal(tid, 4000);
	assert_int_equal(m.st.scans, 1);
	assert_int_equal(m.st.hits, 1);
	/* Another process's namespace tid is not this JVM's. */
	assert_int_equal(nstid_lookup(&m, 99, 11 * SEC, &tid), -ENOENT);
	/* Nor is a host tid given as if it were the agent's. */
	assert_int_equal(nstid_lookup(&m, 4013, 12 * SEC, &tid), -ENOENT);
	assert_int_equal(nstid_lookup(&m, 0, 13 * SEC, &tid), -ENOENT);
	nstid_fini(&m);
}

static void test_a_flood_of_unknown_tids_costs_one_scan_a_period(void **state)
{
	struct fx *fx = *state;
	struct nstid m;
	uint32_t tid;

	task(fx, 4000, 4012, 13);
	nstid_init(&m, fx->root, 4000);
	for (uint32_t i = 0; i < 10000; i++)
		assert_int_equal(nstid_lookup(&m, 100000 + i, SEC + i * 1000, &tid), -ENOENT);
	assert_int_equal(m.st.scans, 1);
	assert_int_equal(m.st.refused, 9999);
	/* A thread started meanwhile is found at the next scan that is due. */
	task(fx, 4000, 4020, 21);
	assert_int_equal(nstid_lookup(&m, 21, SEC + 50 * MS, &tid), -ENOENT);
	assert_int_equal(nstid_lookup(&m, 21, SEC + NSTID_RESCAN_NS + 1, &tid), 0);
	assert_int_equal(tid, 4020);
	assert_int_equal(m.st.scans, 2);
	/* Known threads are hits, no scan. */
	for (int i = 0; i < 100; i++)
		assert_int_equal(nstid_lookup(&m, 13, SEC + NSTID_RESCAN_NS + 2, &tid), 0);
	assert_int_equal(m.st.scans, 2);
	nstid_fini(&m);
}

static void test_a_reused_namespace_tid_is_noticed(void **state)
{
	struct fx *fx = *state;
	struct nstid m;
	uint32_t tid;

	task(fx, 4000, 4012, 13);
	nstid_init(&m, fx->root, 4000);
	assert_int_equal(nstid_lookup(&m, 13, 10 * SEC, &tid), 0);
	assert_int_equal(tid, 4012);
	/* The thread ends; a new one gets namespace tid 13 and another host tid. */
	task_gone(fx, 4000, 4012);
	task(fx, 4000, 4050, 13);
	/* Within the check period the cached answer stands ... */
	assert_int_equal(nstid_lookup(&m, 13, 10 * SEC + 10 * MS, &tid), 0);
	assert_int_equal(tid, 4012);
	/* ... after it, the task is checked again and the new thread found. */
	assert_int_equal(nstid_lookup(&m, 13, 10 * SEC + NSTID_CHECK_NS + 1, &tid), 0);
	assert_int_equal(tid, 4050);
	assert_int_equal(m.st.stale, 1);
	nstid_fini(&m);
}

static void test_a_process_without_tasks_maps_nothing(void **state)
{
	struct fx *fx = *state;
	struct nstid m;
	uint32_t tid;

	nstid_init(&m, fx->root, 7777);
	assert_int_equal(nstid_lookup(&m, 1, SEC, &tid), -ENOENT);
	assert_int_equal(m.st.scans, 1);
	nstid_fini(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tids_are_found_among_the_jvms_tasks, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_a_flood_of_unknown_tids_costs_one_scan_a_period, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_reused_namespace_tid_is_noticed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_process_without_tasks_maps_nothing, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
