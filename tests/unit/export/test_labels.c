// SPDX-License-Identifier: MIT
/*
 * test_labels.c - profile labels: stems parse back to what made them, hostile service and host
 * names cannot add a field or a path separator, and label values stay in their alphabet.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "labels.h"

#define T0 1795335000 /* 2026-11-22 08:10:00 UTC */

static void test_stem_round_trips(void **state)
{
	struct prof_labels l;
	struct prof_stem p;
	char stem[LABELS_STEM_MAX];

	(void)state;
	prof_labels_set(&l, "checkout", "3f2a1b4c5d6e7f8091a2b3c4d5e6f708", 4242, "node-7.eu");
	prof_labels_stem(&l, T0, stem);
	assert_string_equal(stem, "20261122T081000Z_checkout_3f2a1b4c5d6e_4242_node-7.eu");
	assert_int_equal(prof_stem_parse(stem, strlen(stem), &p), 0);
	assert_int_equal(p.start_unix, T0);
	assert_string_equal(p.service, "checkout");
	assert_string_equal(p.cid12, "3f2a1b4c5d6e");
	assert_int_equal(p.host_pid, 4242);
	assert_string_equal(p.hostname, "node-7.eu");
}

/* Every event but cpu carries its name before the extension; cpu names stay as they were. */
static void test_event_suffix_round_trips(void **state)
{
	static const char *const sfx[] = { "", ".offcpu", ".wall", ".alloc", ".live", ".lock" };
	struct prof_labels l;
	struct prof_stem p;
	char stem[LABELS_STEM_MAX], want[LABELS_STEM_MAX], title[256];

	(void)state;
	for (int e = 0; e < FG_NEVENTS; e++) {
		prof_labels_set(&l, "checkout", "", 4242, "node-7.eu");
		l.event = (enum fg_event)e;
		prof_labels_stem(&l, T0, stem);
		snprintf(want, sizeof(want), "20261122T081000Z_checkout_host_4242_node-7.eu%s",
			 sfx[e]);
		assert_string_equal(stem, want);
		assert_string_equal(prof_event_suffix(l.event), sfx[e]);
		assert_int_equal(prof_stem_parse(stem, strlen(stem), &p), 0);
		assert_int_equal(p.event, e);
		assert_string_equal(p.hostname, "node-7.eu");
		assert_int_equal(p.host_pid, 4242);
	}
	assert_string_equal(prof_event_name(FG_EVENT_CPU), "cpu");
	assert_string_equal(prof_event_name(FG_EVENT_OFFCPU), "offcpu");
	assert_string_equal(prof_event_name(FG_EVENT_WALL), "wall");
	assert_string_equal(prof_event_name(FG_EVENT_ALLOC), "alloc");
	assert_string_equal(prof_event_name(FG_EVENT_LIVE), "live");
	assert_string_equal(prof_event_name(FG_EVENT_LOCK), "lock");
	l.event = FG_EVENT_ALLOC;
	prof_labels_title(&l, title, sizeof(title));
	assert_non_null(strstr(title, "Allocated bytes: checkout"));
	l.event = FG_EVENT_LOCK;
	prof_labels_title(&l, title, sizeof(title));
	assert_non_null(strstr(title, "Lock wait time (us): checkout"));
	/* The title says the unit. */
	l.event = FG_EVENT_OFFCPU;
	prof_labels_title(&l, title, sizeof(title));
	assert_string_equal(
		title, "Off-CPU time (us): checkout | container none | PID 4242 | host node-7.eu");
	l.event = FG_EVENT_WALL;
	prof_labels_title(&l, title, sizeof(title));
	assert_non_null(strstr(title, "Wall-clock time (us): checkout"));
	/* Only a whole suffix is one: ".offcpuX" is part of a host name that does not parse. */
	assert_int_equal(prof_stem_parse("20261122T081000Z_c_host_1_h.offcpux", 35, &p), 0);
	assert_int_equal(p.event, FG_EVENT_CPU);
	assert_string_equal(p.hostname, "h.offcpux");
}

static void test_hostile_names_cannot_add_fields_or_paths(void **state)
{
	static const struct {
		const char *service, *host, *want;
	} cases[] = {
		{ "a_b", "h", "20261122T081000Z_a-b_host_7_h" },
		{ "../../etc/passwd", "h", "20261122T081000Z_..-..-etc-passwd_host_7_h" },
		{ "com.shop:web/1", "my_host", "20261122T081000Z_com.shop-web-1_host_7_my-host" },
		{ "", "", "20261122T081000Z_pid-7_host_7_unknown" },
		{ "x\ny", "h h", "20261122T081000Z_x-y_host_7_h-h" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct prof_labels l;
		struct prof_stem p;
		char stem[LABELS_STEM_MAX];

		prof_labels_set(&l, cases[i].service, NULL, 7, cases[i].host);
		prof_labels_stem(&l, T0, stem);
		assert_string_equal(stem, cases[i].want);
		assert_null(strchr(stem, '/'));
		assert_int_equal(prof_stem_parse(stem, strlen(stem), &p), 0);
		assert_int_equal(p.host_pid, 7);
	}
}

static void test_foreign_names_are_not_stems(void **state)
{
	static const char *bad[] = {
		"index",
		"20261122T081000Z_a_host_7",		 /* four fields */
		"20261122T081000Z_a_host_7_h_x",	 /* six */
		"20261122T081000Z__host_7_h",		 /* empty service */
		"20261122T081000Z_a_3f2a_7_h",		 /* short container */
		"20261122T081000Z_a_3F2A1B4C5D6E_7_h",	 /* not lower hex */
		"20261122T081000Z_a_host_07_h",		 /* leading zero */
		"20261122T081000Z_a_host_0_h",		 /* pid 0 */
		"20261122T081000Z_a_host_99999999999_h", /* > u32 */
		"2026-11-22T0810Z_a_host_7_h",
		"20261122T081000Z_a_host_7_h_",
		"20261122T081000Z_a!_host_7_h",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct prof_stem p;

		if (prof_stem_parse(bad[i], strlen(bad[i]), &p) != -EINVAL)
			fail_msg("'%s' parsed as a stem", bad[i]);
	}
}

static void test_label_values_keep_their_alphabet(void **state)
{
	char out[64];

	(void)state;
	prof_label_value("shop-web_1.eu", out, sizeof(out));
	assert_string_equal(out, "shop-web_1.eu");
	prof_label_value("a{b=c,d}\"e:f/g", out, sizeof(out));
	assert_string_equal(out, "a_b_c_d__e_f_g");
	prof_label_value("", out, sizeof(out));
	assert_string_equal(out, "unknown");
	prof_label_value("abcdefgh", out, 4);
	assert_string_equal(out, "abc");
}

/* `record --pid` and rolling profiles print the same title for the same JVM. */
static void test_title_names_service_container_pid_and_host(void **state)
{
	struct prof_labels l;
	char out[256];

	(void)state;
	prof_labels_set(&l, "shop", "0123456789abcdef0123", 42, "node1");
	prof_labels_title(&l, out, sizeof(out));
	assert_string_equal(out, "CPU: shop | container 0123456789ab | PID 42 | host node1");
	prof_labels_set(&l, NULL, NULL, 7, "node1");
	prof_labels_title(&l, out, sizeof(out));
	assert_string_equal(out, "CPU: pid-7 | container none | PID 7 | host node1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stem_round_trips),
		cmocka_unit_test(test_event_suffix_round_trips),
		cmocka_unit_test(test_hostile_names_cannot_add_fields_or_paths),
		cmocka_unit_test(test_foreign_names_are_not_stems),
		cmocka_unit_test(test_label_values_keep_their_alphabet),
		cmocka_unit_test(test_title_names_service_container_pid_and_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
