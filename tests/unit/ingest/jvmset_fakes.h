/* SPDX-License-Identifier: MIT */
/*
 * jvmset_fakes.h - a JVM set over fake /proc trees (its proc_root seam): processes made and
 * removed in a temp dir, agents' HELLO and CODE_LOAD messages, and the cmocka fixture that
 * holds the fake /proc and a perf map directory. For the tests of the set (ingest) and of what
 * the daemon keeps beside it (daemon's leftovers). Include after <cmocka.h>.
 */
#ifndef FG_TEST_JVMSET_FAKES_H
#define FG_TEST_JVMSET_FAKES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fgproto.h"
#include "jvmset.h"

#define MS 1000000ull
#define SEC 1000000000ull

struct fx {
	char root[64]; /* the fake /proc */
	char maps[64]; /* perf map directory */
	unsigned events[JVMSET_MAP_OK + 1];
	uint32_t last_pid[JVMSET_MAP_OK + 1];
	int last_err;
};

static inline void on_event(void *arg, enum jvmset_event ev, const struct jvm_info *info, int err,
			    const char *why)
{
	struct fx *fx = arg;

	(void)why;
	fx->events[ev]++;
	fx->last_pid[ev] = info->host_pid;
	fx->last_err = err;
}

static inline void rm_rf(const char *dir)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static inline void put(const char *dir, const char *name, const char *text)
{
	char path[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* A process in the fake /proc: host PID pid, PID nspid in its namespace, started at start. */
static inline void proc_add(struct fx *fx, uint32_t pid, uint32_t nspid, uint64_t start)
{
	char dir[128], text[512];

	snprintf(dir, sizeof(dir), "%s/%u", fx->root, pid);
	mkdir(dir, 0755);
	if (nspid == pid)
		snprintf(text, sizeof(text), "Name:\tjava\nPid:\t%u\nNSpid:\t%u\n", pid, pid);
	else
		snprintf(text, sizeof(text), "Name:\tjava\nPid:\t%u\nNSpid:\t%u\t%u\n", pid, pid,
			 nspid);
	put(dir, "status", text);
	snprintf(text, sizeof(text),
		 "%u (java) S 1 %u %u 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 12 0 %llu 1000 "
		 "100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
		 pid, pid, pid, (unsigned long long)start);
	put(dir, "stat", text);
	put(dir, "cgroup", "0::/user.slice\n");
}

static inline void proc_remove(struct fx *fx, uint32_t pid)
{
	char dir[128];

	snprintf(dir, sizeof(dir), "%s/%u", fx->root, pid);
	rm_rf(dir);
}

/* A message: HELLO from pid (as the agent sees itself) and n CODE_LOADs from addr up. */
static inline size_t msg(uint8_t *buf, size_t cap, uint32_t hello_pid, uint64_t addr, unsigned n)
{
	size_t off = (size_t)fgp_encode_msg_header(buf, cap);
	int rv;

	if (hello_pid) {
		struct fgp_hello h = { .proto_version = FGP_VERSION,
				       .pid = hello_pid,
				       .ts = 1,
				       .jvm_version = { "17.0.9", 6 },
				       .agent_version = { "test", 4 } };

		rv = fgp_encode_hello(buf + off, cap - off, &h);
		assert_true(rv > 0);
		off += (size_t)rv;
	}
	for (unsigned i = 0; i < n; i++) {
		char name[48];
		struct fgp_code_load_in c = { .addr = addr + i * 0x100ull, .size = 0x80, .ts = 2 };

		c.name.ptr = name;
		c.name.len = (uint16_t)snprintf(name, sizeof(name), "Demo::m%u", i);
		rv = fgp_encode_code_load(buf + off, cap - off, &c);
		assert_true(rv > 0);
		off += (size_t)rv;
	}
	return off;
}

static inline struct jvmset *set_new(struct fx *fx, struct perfmap_dir *maps, uint64_t keep_ns,
				     uint64_t min_write_ns)
{
	struct jvmset_opts o = { .maps = maps,
				 .proc_root = fx->root,
				 .keep_exited_ns = keep_ns,
				 .min_write_ns = min_write_ns };
	struct jvmset_observer ob = { .event = on_event, .arg = fx };
	struct jvmset *s;

	assert_int_equal(jvmset_new(&o, &s), 0);
	assert_int_equal(jvmset_observe(s, &ob), 0);
	return s;
}

/* Connect pipe as pid (its HELLO says hello_pid) with n loads; jvmset_msg's result. */
static inline int connect_as(struct jvmset *s, uint32_t pipe, uint32_t pid, uint32_t hello_pid,
			     unsigned n, uint64_t now)
{
	uint8_t buf[8192];
	size_t len = msg(buf, sizeof(buf), hello_pid, 0x7f0000001000ull, n);

	return jvmset_msg(s, pipe, pid, buf, len, now);
}

static inline int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	strcpy(fx->root, "/dev/shm/fg_jvmset_proc_XXXXXX");
	strcpy(fx->maps, "/dev/shm/fg_jvmset_maps_XXXXXX");
	assert_non_null(mkdtemp(fx->root));
	assert_non_null(mkdtemp(fx->maps));
	*state = fx;
	return 0;
}

static inline int teardown(void **state)
{
	struct fx *fx = *state;

	rm_rf(fx->root);
	rm_rf(fx->maps);
	free(fx);
	return 0;
}

#endif
