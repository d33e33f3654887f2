// SPDX-License-Identifier: MIT
/*
 * test_leftovers.c - the maps a stopping watch leaves and the next one expires (leftovers.c over
 * handoff.c), beside a JVM set over fake /proc trees (its proc_root seam), without real
 * processes.
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
#include <unistd.h>

#include <cmocka.h>

#include "fgclock.h"
#include "handoff.h"
#include "ingest/jvmset_fakes.h"
#include "jvmset.h"
#include "leftovers.h"
#include "perfmap.h"

/* The daemon's pair: a set and the maps an earlier collector left, watching it. */
static struct leftovers *left_new(struct fx *fx, struct perfmap_dir *maps, struct jvmset *s,
				  uint64_t keep_ns)
{
	struct leftovers_opts o = { .maps = maps,
				    .proc_root = fx->root,
				    .keep_exited_ns = keep_ns };
	struct leftovers *l;

	assert_int_equal(leftovers_new(&o, &l), 0);
	assert_int_equal(leftovers_observe(l, s), 0);
	return l;
}

/* One turn of the daemon's loop: the set's tick, then the leftovers'. */
static void tick(struct jvmset *s, struct leftovers *l, uint64_t now)
{
	leftovers_tick(l, now, jvmset_tick(s, now));
}

/*
 * A collector that stops leaves its maps: an exited JVM's (kept for keep_exited) and a live
 * one's. The next collector adopts the list: the exited JVM's map goes when its keep_exited
 * runs out (the time before the stop counts), the live JVM's once it has been gone that long,
 * and a map no longer the file written is left alone.
 */
static void test_maps_left_at_a_stop_are_expired_by_the_next_collector(void **state)
{
	struct fx *fx = *state;
	struct handoff_entry e[8], *back;
	struct perfmap_dir *maps;
	struct jvmset *s;
	struct leftovers *l;
	char map1[160], map2[160], map3[160];
	uint64_t now = fg_now_ns();
	size_t n, nback;

	assert_int_equal(perfmap_dir_open(fx->maps, &maps), 0);
	snprintf(map1, sizeof(map1), "%s/perf-4410.map", fx->maps);
	snprintf(map2, sizeof(map2), "%s/perf-4411.map", fx->maps);
	snprintf(map3, sizeof(map3), "%s/perf-4412.map", fx->maps);
	s = set_new(fx, maps, 10 * SEC, 0);
	l = left_new(fx, maps, s, 10 * SEC);
	proc_add(fx, 4410, 4410, 500);
	proc_add(fx, 4411, 4411, 600);
	proc_add(fx, 4412, 4412, 700);
	assert_int_equal(connect_as(s, 1, 4410, 4410, 2, now), 0);
	assert_int_equal(connect_as(s, 2, 4411, 4411, 2, now), 0);
	assert_int_equal(connect_as(s, 3, 4412, 4412, 2, now), 0);
	tick(s, l, now);
	/* 4410 exits before the stop; 4411 and 4412 live on. */
	proc_remove(fx, 4410);
	jvmset_gone(s, 1, now);
	tick(s, l, now + SEC);
	n = leftovers_list(l, s, e, 8);
	assert_int_equal(n, 3);
	assert_int_equal(handoff_save(fx->maps, e, n), 0);
	jvmset_free(s);
	leftovers_free(l);

	/* The next collector: the list is read once. */
	assert_int_equal(handoff_load(fx->maps, &back, &nback), 0);
	assert_int_equal(nback, 3);
	free(back);
	assert_int_equal(handoff_load(fx->maps, &back, &n), 0);
	assert_int_equal(n, 0);
	assert_null(back);
	assert_int_equal(handoff_save(fx->maps, e, 3), 0);
	assert_int_equal(handoff_load(fx->maps, &back, &nback), 0);
	s = set_new(fx, maps, 10 * SEC, 0);
	l = left_new(fx, maps, s, 10 * SEC);
	now += 20 * SEC; /* the new collector starts 20 s after 4410's exit */
	assert_int_equal(leftovers_adopt(l, s, back, nback, now), 0);
	free(back);
	/* 4412's map is replaced by someone else's file: not ours to remove. */
	assert_int_equal(unlink(map3), 0);
	put(fx->maps, "perf-4412.map", "1000 10 other\n");
	/* 4410 exited 20 s ago: past its 10 s, removed at the first tick. */
	tick(s, l, now);
	assert_int_equal(access(map1, F_OK), -1);
	assert_int_equal(access(map2, F_OK), 0);
	/* 4411 and 4412 still live; then they exit: removed 10 s after that is seen. */
	tick(s, l, now + SEC);
	assert_int_equal(access(map2, F_OK), 0);
	proc_remove(fx, 4411);
	proc_remove(fx, 4412);
	tick(s, l, now + 2 * SEC);
	tick(s, l, now + 12 * SEC - 1);
	assert_int_equal(access(map2, F_OK), 0);
	tick(s, l, now + 12 * SEC);
	assert_int_equal(access(map2, F_OK), -1);
	assert_int_equal(access(map3, F_OK), 0);
	assert_int_equal(leftovers_list(l, s, e, 8), 0);
	jvmset_free(s);
	leftovers_free(l);
	perfmap_dir_close(maps);
}

/* A list whose JVM came back (same PID and start time) is the new connection's map again. */
static void test_a_reconnecting_jvm_takes_its_map_back(void **state)
{
	struct fx *fx = *state;
	struct handoff_entry e[2];
	struct perfmap_dir *maps;
	struct jvmset *s;
	struct leftovers *l;
	uint64_t now = fg_now_ns();
	size_t n;

	assert_int_equal(perfmap_dir_open(fx->maps, &maps), 0);
	s = set_new(fx, maps, 10 * SEC, 0);
	l = left_new(fx, maps, s, 10 * SEC);
	proc_add(fx, 4420, 4420, 500);
	assert_int_equal(connect_as(s, 1, 4420, 4420, 2, now), 0);
	tick(s, l, now);
	n = leftovers_list(l, s, e, 2);
	assert_int_equal(n, 1);
	assert_false(e[0].exited);
	jvmset_free(s);
	leftovers_free(l);
	s = set_new(fx, maps, 10 * SEC, 0);
	l = left_new(fx, maps, s, 10 * SEC);
	assert_int_equal(leftovers_adopt(l, s, e, n, now), 0);
	assert_int_equal(connect_as(s, 1, 4420, 4420, 3, now), 0);
	tick(s, l, now);
	/* One entry: the JVM's own (its map is written anew), the adopted one is gone. */
	assert_int_equal(leftovers_list(l, s, e, 2), 1);
	jvmset_free(s);
	leftovers_free(l);
	/* The same when the JVM connects before the list is adopted. */
	s = set_new(fx, maps, 10 * SEC, 0);
	l = left_new(fx, maps, s, 10 * SEC);
	assert_int_equal(connect_as(s, 1, 4420, 4420, 4, now), 0);
	assert_int_equal(leftovers_adopt(l, s, e, n, now), 0);
	tick(s, l, now);
	assert_int_equal(leftovers_list(l, s, e, 2), 1);
	jvmset_free(s);
	leftovers_free(l);
	perfmap_dir_close(maps);
}

static void test_handoff_text_is_parsed_strictly(void **state)
{
	struct handoff_entry e[2];
	size_t n;
	static const char *bad[] = {
		"",
		"fgcollect-maps-left 2\n",
		"fgcollect-maps-left 1\n0 1 2 3 4 5 a 0\n",
		"fgcollect-maps-left 1\n4294967296 1 2 3 4 5 a 0\n",
		"fgcollect-maps-left 1\n1 1 2 3 4 1000000000 a 0\n",
		"fgcollect-maps-left 1\n1 1 2 3 4 5 z 0\n",
		"fgcollect-maps-left 1\n1 1 2 3 4 5 a 0",
		"fgcollect-maps-left 1\n1 1 2 3 4 -5 a 0\n",
		"fgcollect-maps-left 1\n1 18446744073709551616 2 3 4 5 a 0\n",
	};
	const char *good = "fgcollect-maps-left 1\n7 1 2 3 4 5 x 99\n8 1 2 3 4 5 a 0\n";

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(handoff_parse(bad[i], strlen(bad[i]), e, 2, &n), -EBADMSG);
	assert_int_equal(handoff_parse(good, strlen(good), e, 2, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(e[0].pid, 7);
	assert_true(e[0].exited);
	assert_int_equal(e[0].exit_ts, 99);
	assert_false(e[1].exited);
	/* At most cap entries. */
	assert_int_equal(handoff_parse(good, strlen(good), e, 1, &n), 0);
	assert_int_equal(n, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_maps_left_at_a_stop_are_expired_by_the_next_collector, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_a_reconnecting_jvm_takes_its_map_back, setup,
						teardown),
		cmocka_unit_test(test_handoff_text_is_parsed_strictly),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
