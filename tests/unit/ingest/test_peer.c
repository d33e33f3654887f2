// SPDX-License-Identifier: MIT
/* test_peer.c - /proc parsers on captured text, and peer_read on a fake /proc. */
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

#include "peer.h"

#define ID "3f4e5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7081"

static void test_nspid_takes_the_innermost_value(void **state)
{
	uint32_t ns, depth;

	(void)state;
	assert_int_equal(
		peer_parse_nspid("Name:\tjava\nPid:\t4321\nNSpid:\t4321\t1\n", &ns, &depth), 0);
	assert_int_equal(ns, 1);
	assert_int_equal(depth, 2);
	assert_int_equal(peer_parse_nspid("NSpid:\t900\t55\t7\n", &ns, &depth), 0);
	assert_int_equal(ns, 7);
	assert_int_equal(depth, 3);
	assert_int_equal(peer_parse_nspid("NSpid:\t12\n", &ns, &depth), 0);
	assert_int_equal(depth, 1);
	assert_int_equal(peer_parse_nspid("Pid:\t12\n", &ns, &depth), -EINVAL);
	assert_int_equal(peer_parse_nspid("NSpid:\t12\tx\n", &ns, &depth), -EINVAL);
	assert_int_equal(peer_parse_nspid("NSpid:\t\n", &ns, &depth), -EINVAL);
}

static void test_start_time_survives_spaces_and_parens_in_comm(void **state)
{
	uint64_t st;

	(void)state;
	assert_int_equal(peer_parse_start_time("4321 (java) S 1 4321 4321 0 -1 4194560 100 0 0 0 "
					       "5 3 0 0 20 0 30 0 987654 123 45\n",
					       &st),
			 0);
	assert_int_equal(st, 987654);
	assert_int_equal(peer_parse_start_time("7 (a) b) (c) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 "
					       "1 0 42 1 1\n",
					       &st),
			 0);
	assert_int_equal(st, 42);
	assert_int_equal(peer_parse_start_time("7 (x) R 1 2 3\n", &st), -EINVAL);
	assert_int_equal(peer_parse_start_time("no parens at all", &st), -EINVAL);
}

static void test_container_id_from_every_runtime_layout(void **state)
{
	static const char *const cases[][2] = {
		{ "0::/system.slice/docker-" ID ".scope\n", ID },
		{ "12:memory:/docker/" ID "\n11:cpu:/docker/" ID "\n", ID },
		{ "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234.slice/"
		  "cri-containerd-" ID ".scope\n",
		  ID },
		{ "0::/kubepods.slice/kubepods-pod1.slice/crio-" ID ".scope\n", ID },
		{ "5:cpuset:/kubepods/burstable/pod0a1b2c3d-0000-1111-2222-333344445555/" ID "\n",
		  ID },
		{ "0::/machine.slice/libpod-" ID ".scope/container\n", ID },
		{ "0::/user.slice/user-0.slice/session-3.scope\n", "" },
		{ "0::/docker/"
		  "3F4E5A6B7C8D9E0F1A2B3C4D5E6F708192A3B4C5D6E7F8091A2B3C4D5E6F7081\n",
		  "" },
		{ "0::/docker/abc\n", "" },
	};
	char out[PEER_CONTAINER_ID_MAX + 1];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rv = peer_parse_container_id(cases[i][0], out, sizeof(out));

		assert_int_equal(rv, cases[i][1][0] ? 0 : -ENOENT);
		assert_string_equal(out, cases[i][1]);
	}
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_peer_read_on_a_captured_proc(void **state)
{
	char root[] = "/tmp/fgproc.XXXXXX", pdir[64], cmd[96];
	struct peer_info pi;
	uint64_t start = 0;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(pdir, sizeof(pdir), "%s/4321", root);
	mkdir(pdir, 0755);
	put(pdir, "status", "Name:\tjava\nNSpid:\t4321\t1\n");
	put(pdir, "stat",
	    "4321 (java) S 1 4321 4321 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 30 0 "
	    "987654 123 45\n");
	put(pdir, "cgroup", "0::/system.slice/docker-" ID ".scope\n");
	assert_int_equal(peer_read(root, 4321, &pi), 0);
	assert_int_equal(pi.host_pid, 4321);
	assert_int_equal(pi.ns_pid, 1);
	assert_int_equal(pi.start_time, 987654);
	assert_string_equal(pi.container_id, ID);
	assert_int_equal(peer_read(root, 999, &pi), -ESRCH);
	assert_int_equal(peer_start_time(root, 4321, &start), 0);
	assert_int_equal(start, 987654);
	assert_int_equal(peer_start_time(root, 999, &start), -ESRCH);
	put(pdir, "stat", "4321 (java) S 1\n");
	assert_int_equal(peer_start_time(root, 4321, &start), -EINVAL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

static void test_peer_read_of_ourselves(void **state)
{
	struct peer_info pi;
	uint64_t start = 0;

	(void)state;
	assert_int_equal(peer_read("/proc", (uint32_t)getpid(), &pi), 0);
	assert_int_equal(pi.host_pid, (uint32_t)getpid());
	assert_true(pi.start_time > 0);
	assert_int_equal(peer_start_time("/proc", (uint32_t)getpid(), &start), 0);
	assert_int_equal(start, pi.start_time);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nspid_takes_the_innermost_value),
		cmocka_unit_test(test_start_time_survives_spaces_and_parens_in_comm),
		cmocka_unit_test(test_container_id_from_every_runtime_layout),
		cmocka_unit_test(test_peer_read_on_a_captured_proc),
		cmocka_unit_test(test_peer_read_of_ourselves),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
