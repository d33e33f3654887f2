// SPDX-License-Identifier: MIT
/*
 * test_jvmset.c - the JVM set driven through its proc_root seam: fake /proc trees in a temp
 * dir stand for the peer processes, so identity checks, PID reuse, eviction at the cap,
 * keep-exited expiry and the map write back-off are tested without real processes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fgclock.h"
#include "fgproto.h"
#include "jvmset.h"
#include "perfmap.h"

#include "ingest/jvmset_fakes.h"

#define CAP 4096 /* jvmset's MAX_JVMS */

static size_t live_of(struct jvmset *s, uint32_t pid)
{
	struct jvm *j = jvmset_find(s, pid);
	struct jvm_info info;

	assert_non_null(j);
	jvm_info(j, &info);
	return info.tab.live;
}

static void test_hello_pid_must_be_the_peers_namespace_pid(void **state)
{
	struct fx *fx = *state;
	struct jvmset *s = set_new(fx, NULL, 0, 0);
	uint64_t now = fg_now_ns();

	proc_add(fx, 4000, 1, 100); /* a container's PID 1 */
	assert_int_equal(connect_as(s, 1, 4000, 4000, 1, now), -EPERM);
	assert_int_equal(fx->events[JVMSET_REJECT], 1);
	assert_null(jvmset_find(s, 4000));
	assert_int_equal(connect_as(s, 2, 4000, 1, 1, now), 0);
	assert_int_equal(fx->events[JVMSET_CONNECT], 1);
	assert_int_equal(live_of(s, 4000), 1);
	/* No /proc entry for the peer: refused. */
	assert_int_equal(connect_as(s, 3, 4001, 4001, 1, now), -ESRCH);
	assert_int_equal(connect_as(s, 4, 0, 1, 1, now), -ESRCH);
	assert_int_equal(fx->events[JVMSET_REJECT], 3);
	jvmset_free(s);
}

static void test_reconnect_of_the_same_process_keeps_its_jvm(void **state)
{
	struct fx *fx = *state;
	struct jvmset *s = set_new(fx, NULL, 0, 0);
	uint64_t now = fg_now_ns();
	struct jvmset_counters c;

	proc_add(fx, 4100, 4100, 500);
	assert_int_equal(connect_as(s, 1, 4100, 4100, 3, now), 0);
	jvmset_gone(s, 1, now);
	assert_int_equal(fx->events[JVMSET_DISCONNECT], 1);
	assert_int_equal(connect_as(s, 2, 4100, 4100, 1, now), 0);
	assert_int_equal(jvmset_count(s), 1);
	assert_int_equal(live_of(s, 4100), 3); /* its table survived the reconnection */
	assert_int_equal(fx->events[JVMSET_EXPIRE], 0);
	jvmset_counters(s, &c);
	assert_int_equal(c.connects, 2);
	assert_int_equal(c.connected, 1);
	jvmset_free(s);
}

static void test_pid_reuse_gets_a_new_jvm(void **state)
{
	struct fx *fx = *state;
	struct jvmset *s = set_new(fx, NULL, 0, 0);
	uint64_t now = fg_now_ns();
	struct jvm_info info;

	proc_add(fx, 4200, 4200, 500);
	assert_int_equal(connect_as(s, 1, 4200, 4200, 5, now), 0);
	jvmset_gone(s, 1, now);
	/* The process dies and a new one gets its PID (a later start time). */
	proc_add(fx, 4200, 4200, 900);
	assert_int_equal(connect_as(s, 2, 4200, 4200, 1, now + SEC), 0);
	assert_int_equal(fx->events[JVMSET_EXPIRE], 1); /* the old JVM and its map are gone */
	assert_int_equal(fx->last_pid[JVMSET_EXPIRE], 4200);
	assert_int_equal(jvmset_count(s), 1);
	jvm_info(jvmset_find(s, 4200), &info);
	assert_int_equal(info.start_time, 900);
	assert_int_equal(info.tab.live, 1); /* none of the old process's code */
	jvmset_free(s);
}

static void test_connected_pid_reused_behind_our_back_is_a_new_jvm(void **state)
{
	struct fx *fx = *state;
	struct jvmset *s = set_new(fx, NULL, 0, 0);
	uint64_t now = fg_now_ns();

	/* The collector missed the old connection's end (e.g. it was busy): a new pipe comes. */
	proc_add(fx, 4300, 4300, 500);
	assert_int_equal(connect_as(s, 1, 4300, 4300, 2, now), 0);
	proc_add(fx, 4300, 4300, 800);
	assert_int_equal(connect_as(s, 2, 4300, 4300, 1, now), 0);
	assert_int_equal(fx->events[JVMSET_EXPIRE], 1);
	assert_int_equal(live_of(s, 4300), 1);
	/* The old pipe's end now changes nothing for the new JVM. */
	jvmset_gone(s, 1, now);
	assert_int_equal(fx->events[JVMSET_DISCONNECT], 0);
	jvmset_free(s);
}

static void test_eviction_at_the_cap_takes_the_oldest_exited(void **state)
{
	struct fx *fx = *state;
	struct jvmset *s = set_new(fx, NULL, 0, 0);
	uint64_t now = fg_now_ns();
	struct jvmset_counters c;

	for (uint32_t i = 0; i < CAP; i++) {
		proc_add(fx, 10000 + i, 10000 + i, 7);
		assert_int_equal(connect_as(s, 1 + i, 10000 + i, 10000 + i, 0, now), 0);
	}
	assert_int_equal(jvmset_count(s), CAP);
	/* All alive: one more is refused, nothing is evicted. */
	proc_add(fx, 20000, 20000, 7);
	assert_int_equal(connect_as(s, 50000, 20000, 20000, 0, now), -EUSERS);
	assert_int_equal(fx->events[JVMSET_EXPIRE], 0);
	assert_int_equal(jvmset_count(s), CAP);
	/* Two exit, 10007 first: it is the one evicted for the newcomer. */
	proc_remove(fx, 10007);
	jvmset_gone(s, 1 + 7, now + 1 * SEC);
	proc_remove(fx, 10003);
	jvmset_gone(s, 1 + 3, now + 2 * SEC);
	assert_true(jvmset_find(s, 10007) != NULL);
	assert_int_equal(connect_as(s, 50001, 20000, 20000, 0, now + 3 * SEC), 0);
	assert_int_equal(fx->events[JVMSET_EXPIRE], 1);
	assert_int_equal(fx->last_pid[JVMSET_EXPIRE], 10007);
	assert_null(jvmset_find(s, 10007));
	assert_non_null(jvmset_find(s, 10003));
	assert_non_null(jvmset_find(s, 20000));
	assert_int_equal(jvmset_count(s), CAP);
	jvmset_counters(s, &c);
	assert_int_equal(c.expired, 1);
	jvmset_free(s);
}

static void test_exited_jvm_keeps_its_map_until_keep_exited(void **state)
{
	struct fx *fx = *state;
	struct perfmap_dir *maps;
	struct jvmset *s;
	char map[160];
	uint64_t now = fg_now_ns(), exit_at;

	assert_int_equal(perfmap_dir_open(fx->maps, &maps), 0);
	s = set_new(fx, maps, 10 * SEC, 0);
	snprintf(map, sizeof(map), "%s/perf-4400.map", fx->maps);
	proc_add(fx, 4400, 4400, 500);
	assert_int_equal(connect_as(s, 1, 4400, 4400, 2, now), 0);
	jvmset_tick(s, fg_now_ns());
	assert_int_equal(access(map, F_OK), 0);
	/* The agent disconnects but the process lives: not exited, checked every second. */
	jvmset_gone(s, 1, now);
	assert_int_equal(fx->events[JVMSET_EXIT], 0);
	proc_remove(fx, 4400);
	jvmset_tick(s, now + SEC / 2);
	assert_int_equal(fx->events[JVMSET_EXIT], 0); /* not re-checked yet */
	exit_at = now + SEC;
	jvmset_tick(s, exit_at);
	assert_int_equal(fx->events[JVMSET_EXIT], 1);
	/* Kept, map included, for keep_exited... */
	assert_true(jvmset_tick(s, exit_at + 10 * SEC - 1) <= exit_at + 10 * SEC);
	assert_non_null(jvmset_find(s, 4400));
	assert_int_equal(access(map, F_OK), 0);
	assert_int_equal(fx->events[JVMSET_EXPIRE], 0);
	/* ...then forgotten and its map removed. */
	jvmset_tick(s, exit_at + 10 * SEC);
	assert_int_equal(fx->events[JVMSET_EXPIRE], 1);
	assert_null(jvmset_find(s, 4400));
	assert_int_equal(access(map, F_OK), -1);
	jvmset_free(s);
	perfmap_dir_close(maps);
}

static void test_gone_process_is_exited_at_disconnect(void **state)
{
	struct fx *fx = *state;
	struct jvmset *s = set_new(fx, NULL, 5 * SEC, 0);
	uint64_t now = fg_now_ns();
	struct jvm_info info;

	proc_add(fx, 4500, 4500, 500);
	assert_int_equal(connect_as(s, 1, 4500, 4500, 1, now), 0);
	proc_remove(fx, 4500);
	jvmset_gone(s, 1, now);
	jvm_info(jvmset_find(s, 4500), &info);
	assert_true(info.exited);
	assert_int_equal(info.exit_ts, now);
	jvmset_tick(s, now + 5 * SEC - 1);
	assert_non_null(jvmset_find(s, 4500));
	jvmset_tick(s, now + 5 * SEC);
	assert_null(jvmset_find(s, 4500));
	jvmset_free(s);
}

static int enospc_calls;

static ssize_t write_enospc(int fd, const void *buf, size_t n)
{
	(void)fd;
	(void)buf;
	(void)n;
	enospc_calls++;
	errno = ENOSPC;
	return -1;
}

static void test_full_disk_backs_off_100ms_and_reports_once(void **state)
{
	struct fx *fx = *state;
	struct perfmap_dir *maps;
	struct jvmset *s;
	struct jvmset_counters c;
	uint64_t t0, t1;
	int calls;

	assert_int_equal(perfmap_dir_open(fx->maps, &maps), 0);
	perfmap_dir_set_write(maps, write_enospc);
	s = set_new(fx, maps, 0, 0);
	proc_add(fx, 4600, 4600, 500);
	assert_int_equal(connect_as(s, 1, 4600, 4600, 2, fg_now_ns()), 0);
	t0 = fg_now_ns();
	jvmset_tick(s, t0);
	t1 = fg_now_ns();
	assert_true(enospc_calls > 0);
	assert_int_equal(fx->events[JVMSET_MAP_ERROR], 1);
	assert_int_equal(fx->last_err, -ENOSPC);
	calls = enospc_calls;
	/* No retry within 100 ms of the failed write... */
	assert_true(jvmset_tick(s, t0 + 99 * MS) <= t1 + 100 * MS);
	assert_int_equal(enospc_calls, calls);
	/* ...a retry after it, and the same error is not reported again. */
	jvmset_tick(s, t1 + 100 * MS);
	assert_true(enospc_calls > calls);
	assert_int_equal(fx->events[JVMSET_MAP_ERROR], 1);
	jvmset_counters(s, &c);
	assert_int_equal(c.map_enospc, 2);
	assert_int_equal(c.map_writes, 0);
	/* Space again: the next due write succeeds. */
	perfmap_dir_set_write(maps, NULL);
	jvmset_tick(s, fg_now_ns() + 100 * MS);
	jvmset_counters(s, &c);
	assert_int_equal(c.map_writes, 1);
	/* ...and is told once, with the failure it ends. */
	assert_int_equal(fx->events[JVMSET_MAP_OK], 1);
	assert_int_equal(fx->last_err, -ENOSPC);
	jvmset_free(s);
	perfmap_dir_close(maps);
}

static void test_map_writes_are_spaced_by_min_write(void **state)
{
	struct fx *fx = *state;
	struct perfmap_dir *maps;
	struct jvmset *s;
	struct jvmset_counters c;
	uint8_t buf[4096];
	uint64_t t0, t1;
	size_t len;

	assert_int_equal(perfmap_dir_open(fx->maps, &maps), 0);
	s = set_new(fx, maps, 0, 50 * MS);
	proc_add(fx, 4700, 4700, 500);
	assert_int_equal(connect_as(s, 1, 4700, 4700, 1, fg_now_ns()), 0);
	t0 = fg_now_ns();
	jvmset_tick(s, t0); /* the first change after a quiet spell is written at once */
	t1 = fg_now_ns();
	jvmset_counters(s, &c);
	assert_int_equal(c.map_writes, 1);
	/* New code right after: waits for min_write_ns... */
	len = msg(buf, sizeof(buf), 0, 0x7f0000100000ull, 1);
	assert_int_equal(jvmset_msg(s, 1, 4700, buf, len, t1), 0);
	assert_true(jvmset_tick(s, t0 + 49 * MS) <= t1 + 50 * MS);
	jvmset_counters(s, &c);
	assert_int_equal(c.map_writes, 1);
	/* ...and is written once it has passed. */
	jvmset_tick(s, t1 + 50 * MS);
	jvmset_counters(s, &c);
	assert_int_equal(c.map_writes, 2);
	jvmset_free(s);
	perfmap_dir_close(maps);
}

/* What a record observer got: the last record's type and its decoded name and method 0. */
struct seen_rec {
	unsigned n;
	bool off; /* the observer wants no records now */
	uint16_t type;
	char name[64], method[64];
};

static void on_record(void *arg, const struct jvm *j, const uint8_t *raw, size_t len)
{
	struct seen_rec *r = arg;
	struct fgp_record rec;
	struct fgp_inline_iter it;
	struct fgp_str m = { "", 0 };

	(void)j;
	assert_int_equal(fgp_decode_record(raw, len, &rec), 1);
	r->n++;
	r->type = rec.type;
	if (rec.type != FGP_CODE_LOAD)
		return;
	snprintf(r->name, sizeof(r->name), "%.*s", rec.u.load.name.len, rec.u.load.name.ptr);
	fgp_methods_begin(&rec.u.load, &it);
	assert_int_equal(fgp_methods_next(&it, &m), 1);
	snprintf(r->method, sizeof(r->method), "%.*s", m.len, m.ptr);
}

static bool on_wants(void *arg, const struct jvm *j)
{
	const struct seen_rec *r = arg;

	(void)j;
	return !r->off;
}

/*
 * An interned load reaches a record observer as a plain CODE_LOAD with its names resolved, with
 * an observer of events only registered first (watch's log, which needs no records); an
 * observer that wants no records at the moment gets none.
 */
static void test_interned_load_reaches_record_observers_resolved(void **state)
{
	struct fx *fx = *state;
	struct jvmset *s = set_new(fx, NULL, 0, 0);
	struct seen_rec seen = { 0 };
	struct jvmset_observer ob = { .record = on_record, .wants = on_wants, .arg = &seen };
	static const uint16_t chain[2] = { 0, 1 };
	uint32_t ids[2] = { 7, 9 };
	struct fgp_pc_in pc = { 0x10, 2, chain };
	struct fgp_code_load_ids_in in = { .addr = 0x7f0000002000ull,
					   .size = 0x100,
					   .ts = 3,
					   .name_id = 9,
					   .n_methods = 2,
					   .method_ids = ids,
					   .n_pcs = 1,
					   .pcs = &pc };
	uint8_t buf[8192];
	size_t len;
	int rv;

	assert_int_equal(jvmset_observe(s, &ob), 0);
	proc_add(fx, 4100, 4100, 100);
	assert_int_equal(connect_as(s, 1, 4100, 4100, 0, fg_now_ns()), 0);
	len = (size_t)fgp_encode_msg_header(buf, sizeof(buf));
	rv = fgp_encode_name(buf + len, sizeof(buf) - len, 7, (struct fgp_str){ "a.B::inner", 10 });
	assert_true(rv > 0);
	len += (size_t)rv;
	rv = fgp_encode_name(buf + len, sizeof(buf) - len, 9, (struct fgp_str){ "a.B::outer", 10 });
	assert_true(rv > 0);
	len += (size_t)rv;
	rv = fgp_encode_code_load_ids(buf + len, sizeof(buf) - len, &in);
	assert_true(rv > 0);
	len += (size_t)rv;
	seen.n = 0;
	seen.off = true;
	assert_int_equal(jvmset_msg(s, 1, 4100, buf, len, fg_now_ns()), 0);
	assert_int_equal(seen.n, 0);
	assert_int_equal(live_of(s, 4100), 1);
	/* the same load again, now wanted (the NAMEs are sent again too: ids may be redefined) */
	seen.off = false;
	assert_int_equal(jvmset_msg(s, 1, 4100, buf, len, fg_now_ns()), 0);
	assert_true(seen.n >= 1);
	assert_int_equal(seen.type, FGP_CODE_LOAD);
	assert_string_equal(seen.name, "a.B::outer");
	assert_string_equal(seen.method, "a.B::inner");
	assert_int_equal(live_of(s, 4100), 1);
	jvmset_free(s);
}

/* An agent that connects at its JVM's start replays an empty table: no empty map for it. */
static void test_no_first_map_without_a_line(void **state)
{
	struct fx *fx = *state;
	struct perfmap_dir *maps;
	struct fgp_snapshot snap = { 1, 0 };
	struct jvmset *s;
	struct jvmset_counters c;
	char path[300];
	uint8_t buf[4096];
	size_t len;
	int rv;

	assert_int_equal(perfmap_dir_open(fx->maps, &maps), 0);
	s = set_new(fx, maps, 0, 0);
	proc_add(fx, 4800, 4800, 500);
	len = msg(buf, sizeof(buf), 4800, 0, 0);
	rv = fgp_encode_snapshot(buf + len, sizeof(buf) - len, FGP_SNAPSHOT_BEGIN, &snap);
	len += (size_t)rv;
	rv = fgp_encode_snapshot(buf + len, sizeof(buf) - len, FGP_SNAPSHOT_END, &snap);
	len += (size_t)rv;
	assert_int_equal(jvmset_msg(s, 1, 4800, buf, len, fg_now_ns()), 0);
	jvmset_tick(s, fg_now_ns());
	jvmset_flush(s, fg_now_ns());
	jvmset_counters(s, &c);
	assert_int_equal(c.map_writes, 0);
	snprintf(path, sizeof(path), "%s/perf-4800.map", fx->maps);
	assert_int_equal(access(path, F_OK), -1);
	/* Its first code is written at once. */
	len = msg(buf, sizeof(buf), 0, 0x7f0000100000ull, 1);
	assert_int_equal(jvmset_msg(s, 1, 4800, buf, len, fg_now_ns()), 0);
	jvmset_tick(s, fg_now_ns());
	jvmset_counters(s, &c);
	assert_int_equal(c.map_writes, 1);
	assert_int_equal(access(path, F_OK), 0);
	jvmset_free(s);
	perfmap_dir_close(maps);
}

/* What jvmset_opts.want was told last, and how often. */
struct told {
	uint64_t tokens[8];
	size_t n, calls;
};

static void on_want(void *arg, const uint64_t *tokens, size_t n, const struct jvm_evwant_tok *ev,
		    size_t nev)
{
	struct told *t = arg;

	(void)ev;
	(void)nev;
	assert_true(n <= 8);
	memcpy(t->tokens, tokens, n * sizeof(*tokens));
	t->n = n;
	t->calls++;
}

/* A message: HELLO from pid with flags and token, then a TABLES when tables >= 0. */
static size_t hello_msg(uint8_t *buf, size_t cap, uint32_t pid, uint32_t flags, uint64_t token,
			int tables)
{
	struct fgp_hello h = { .proto_version = FGP_VERSION,
			       .pid = pid,
			       .flags = flags,
			       .ts = 1,
			       .jvm_version = { "17.0.9", 6 },
			       .agent_version = { "test", 4 },
			       .token = token };
	size_t off = (size_t)fgp_encode_msg_header(buf, cap);
	int rv = fgp_encode_hello(buf + off, cap - off, &h);

	assert_true(rv > 0);
	off += (size_t)rv;
	if (tables >= 0) {
		struct fgp_tables t = { 5, (uint32_t)tables };

		rv = fgp_encode_tables(buf + off, cap - off, &t);
		assert_int_equal(rv, FGP_TABLES_SIZE);
		off += (size_t)rv;
	}
	return off;
}

static bool tables_of(struct jvmset *s, uint32_t pid)
{
	struct jvm_info info;

	jvm_info(jvmset_find(s, pid), &info);
	return info.tables;
}

static void test_want_names_the_wanted_agents_with_tables_on_demand(void **state)
{
	struct fx *fx = *state;
	struct told told = { 0 };
	struct seen_rec seen = { 0 };
	struct jvmset_opts o = { .proc_root = fx->root, .want = on_want, .want_arg = &told };
	struct jvmset_observer log = { .event = on_event, .arg = fx };
	struct jvmset_observer ob = { .record = on_record, .wants = on_wants, .arg = &seen };
	struct jvmset *s;
	uint8_t buf[1024];
	size_t len;

	assert_int_equal(jvmset_new(&o, &s), 0);
	assert_int_equal(jvmset_observe(s, &log), 0); /* no record callback: wants nothing */
	proc_add(fx, 4100, 4100, 100);
	proc_add(fx, 4200, 4200, 100);
	proc_add(fx, 4300, 4300, 100);
	len = hello_msg(buf, sizeof(buf), 4200, FGP_HELLO_TABLES_ON_DEMAND, 0xdef, -1);
	assert_int_equal(jvmset_msg(s, 2, 4200, buf, len, fg_now_ns()), 0);
	len = hello_msg(buf, sizeof(buf), 4100, FGP_HELLO_TABLES_ON_DEMAND, 0xabc, -1);
	assert_int_equal(jvmset_msg(s, 1, 4100, buf, len, fg_now_ns()), 0);
	len = hello_msg(buf, sizeof(buf), 4300, 0, 0x123, -1); /* an agent that always sends */
	assert_int_equal(jvmset_msg(s, 3, 4300, buf, len, fg_now_ns()), 0);
	/* Nobody takes records: told once, nobody. */
	jvmset_tick(s, fg_now_ns());
	jvmset_tick(s, fg_now_ns());
	assert_int_equal(told.calls, 1);
	assert_int_equal(told.n, 0);
	assert_false(tables_of(s, 4100));
	assert_true(tables_of(s, 4300));
	/* An observer that takes records: both agents with tables on demand, sorted. */
	assert_int_equal(jvmset_observe(s, &ob), 0);
	jvmset_tick(s, fg_now_ns());
	assert_int_equal(told.calls, 2);
	assert_int_equal(told.n, 2);
	assert_int_equal(told.tokens[0], 0xabc);
	assert_int_equal(told.tokens[1], 0xdef);
	/* It stops wanting them: still wanted for 3 s (a subscriber reconnecting does not turn
	 * tables off), then nobody. */
	seen.off = true;
	jvmset_tick(s, fg_now_ns());
	assert_int_equal(told.calls, 2);
	jvmset_tick(s, fg_now_ns() + 2000000000ull);
	assert_int_equal(told.calls, 2);
	jvmset_tick(s, fg_now_ns() + 3100000000ull);
	assert_int_equal(told.calls, 3);
	assert_int_equal(told.n, 0);
	seen.off = false;
	/* An agent's TABLES on / off shows in its info; its connection's end turns them off. */
	len = hello_msg(buf, sizeof(buf), 4100, FGP_HELLO_TABLES_ON_DEMAND, 0xabc, 1);
	assert_int_equal(jvmset_msg(s, 1, 4100, buf, len, fg_now_ns()), 0);
	assert_true(tables_of(s, 4100));
	assert_int_equal(seen.type, FGP_TABLES);	      /* observers see it */
	len = hello_msg(buf, sizeof(buf), 4300, 0, 0x123, 0); /* not on demand: ignored */
	assert_int_equal(jvmset_msg(s, 3, 4300, buf, len, fg_now_ns()), 0);
	assert_true(tables_of(s, 4300));
	jvmset_gone(s, 1, fg_now_ns());
	assert_false(tables_of(s, 4100));
	jvmset_tick(s, fg_now_ns() + 3200000000ull);
	assert_int_equal(told.n, 1); /* a connection's end needs no lingering */
	assert_int_equal(told.tokens[0], 0xdef);
	jvmset_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hello_pid_must_be_the_peers_namespace_pid,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_reconnect_of_the_same_process_keeps_its_jvm,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_pid_reuse_gets_a_new_jvm, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_connected_pid_reused_behind_our_back_is_a_new_jvm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_eviction_at_the_cap_takes_the_oldest_exited,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_exited_jvm_keeps_its_map_until_keep_exited,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_gone_process_is_exited_at_disconnect, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_full_disk_backs_off_100ms_and_reports_once,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_interned_load_reaches_record_observers_resolved, setup, teardown),
		cmocka_unit_test_setup_teardown(test_map_writes_are_spaced_by_min_write, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_want_names_the_wanted_agents_with_tables_on_demand, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_first_map_without_a_line, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
