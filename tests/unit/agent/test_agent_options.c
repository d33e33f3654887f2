// SPDX-License-Identifier: MIT
/* test_agent_options.c - the agent's option string: exact key=value parsing. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "options.h"
#include "service.h"

static void test_service_is_picked_option_then_env_then_main_class_or_jar(void **state)
{
	static const struct {
		const char *opt, *env, *cmd, *want;
	} cases[] = {
		{ "checkout", "otel-name", "com.shop.Main x", "checkout" },
		{ NULL, "otel-name", "com.shop.Main x", "otel-name" },
		{ "", "  spaced name\t", "com.shop.Main", "spaced_name" },
		{ NULL, "", "com.shop.Main --port 80", "com.shop.Main" },
		{ NULL, "   ", "com.shop.Main", "com.shop.Main" },
		{ NULL, NULL, "/app/lib/shop-web.jar --port 80", "shop-web" },
		{ NULL, NULL, "shop.jar", "shop" },
		{ NULL, NULL, " HotLoop 40", "HotLoop" },
		{ NULL, NULL, ".jar", ".jar" },
		{ NULL, "a{b=\"c\"}", NULL, "a_b__c__" },
		{ NULL, NULL, "", "" },
		{ NULL, NULL, NULL, "" },
	};
	char out[SERVICE_MAX + 1], longname[300];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		service_pick(cases[i].opt, cases[i].env, cases[i].cmd, out, sizeof(out));
		if (strcmp(out, cases[i].want) != 0)
			fail_msg("case %zu: got '%s', want '%s'", i, out, cases[i].want);
	}
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	service_pick(NULL, longname, NULL, out, sizeof(out));
	assert_int_equal(strlen(out), SERVICE_MAX);
}

static void test_null_and_empty_give_defaults(void **state)
{
	struct options o;
	char err[256];

	(void)state;
	assert_int_equal(options_parse(NULL, &o, err, sizeof(err)), 0);
	assert_string_equal(o.socket, "/var/run/fgcollect/fgcollect.sock");
	assert_false(o.signatures);
	assert_int_equal(o.maxmem, 32ull << 20);
	assert_int_equal(o.log, OPTIONS_LOG_WARN);
	assert_true(o.events);
	assert_int_equal(o.depth, 128);
	assert_false(o.alloc_copy);
	assert_true(o.alloc_auto); /* the ring when the collector reads it */
	assert_int_equal(options_parse("", &o, err, sizeof(err)), 0);
	assert_string_equal(o.socket, FG_DEFAULT_SOCKET);
}

static void test_every_key_is_parsed(void **state)
{
	struct options o;
	char err[256];

	(void)state;
	assert_int_equal(options_parse("socket=/run/x.sock,signatures=true,maxmem=64m,log=info,"
				       "service=shop-web.eu/1:a_b,events=false,depth=2048,"
				       "allocstack=copy",
				       &o, err, sizeof(err)),
			 0);
	assert_false(o.events);
	assert_int_equal(o.depth, 2048);
	assert_true(o.alloc_copy);
	assert_string_equal(o.service, "shop-web.eu/1:a_b");
	assert_string_equal(o.socket, "/run/x.sock");
	assert_true(o.signatures);
	assert_int_equal(o.maxmem, 64ull << 20);
	assert_int_equal(o.log, OPTIONS_LOG_INFO);
	assert_int_equal(
		options_parse("depth=1,events=true,allocstack=jvmti", &o, err, sizeof(err)), 0);
	assert_true(o.events);
	assert_false(o.alloc_copy);
	assert_false(o.alloc_auto);
	assert_int_equal(o.depth, 1);
	/* auto: the ring when the collector reads it; copy: always */
	assert_int_equal(options_parse("allocstack=auto", &o, err, sizeof(err)), 0);
	assert_true(o.alloc_auto && !o.alloc_copy);
	assert_int_equal(options_parse("allocstack=copy", &o, err, sizeof(err)), 0);
	assert_true(!o.alloc_auto && o.alloc_copy);
}

static void test_maxmem_suffixes_and_bounds(void **state)
{
	static const struct {
		const char *s;
		unsigned long long want; /* 0: refused */
	} cases[] = {
		{ "maxmem=1m", 1ull << 20 },
		{ "maxmem=1M", 1ull << 20 },
		{ "maxmem=2048k", 2ull << 20 },
		{ "maxmem=1g", 1ull << 30 },
		{ "maxmem=1048576", 1ull << 20 },
		{ "maxmem=1048575", 0 },
		{ "maxmem=1023k", 0 },
		{ "maxmem=2g", 0 },
		{ "maxmem=0", 0 },
		{ "maxmem=", 0 },
		{ "maxmem=m", 0 },
		{ "maxmem=16mb", 0 },
		{ "maxmem=16 m", 0 },
		{ "maxmem=-16m", 0 },
		{ "maxmem=99999999999999999999999", 0 },
		{ "maxmem=16t", 0 },
	};
	struct options o;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rv = options_parse(cases[i].s, &o, err, sizeof(err));

		if (cases[i].want) {
			assert_int_equal(rv, 0);
			assert_int_equal(o.maxmem, cases[i].want);
		} else {
			assert_int_equal(rv, -EINVAL);
			assert_non_null(strstr(err, "maxmem="));
		}
	}
}

static void test_malformed_strings_are_refused_naming_the_item(void **state)
{
	static const struct {
		const char *s;
		const char *msg; /* must appear in the message */
	} cases[] = {
		{ "sockt=/x",
		  "unknown option 'sockt' in 'sockt=/x' (valid: socket, signatures, maxmem, log, service, "
		  "events, depth, allocstack)" },
		{ "allocstack=walk", "allocstack= takes auto, copy or jvmti" },
		{ "allocstack=", "allocstack= takes auto, copy or jvmti" },
		{ "events=yes", "events= takes true or false" },
		{ "events=", "events= takes true or false" },
		{ "depth=0", "depth= takes a whole number from 1 to 2048" },
		{ "depth=2049", "depth= takes a whole number from 1 to 2048" },
		{ "depth=", "depth= takes a whole number from 1 to 2048" },
		{ "depth=12k", "depth= takes a whole number from 1 to 2048" },
		{ "depth=-1", "depth= takes a whole number from 1 to 2048" },
		{ "depth=00128", "depth= takes a whole number from 1 to 2048" },
		{ "depth=1,depth=2", "option 'depth' given twice" },
		{ "service=", "service= takes 1 to 128 characters" },
		{ "service=my app", "service= takes 1 to 128 characters" },
		{ "service=a{b}", "service= takes 1 to 128 characters" },
		{ "service=a\"b", "service= takes 1 to 128 characters" },
		{ "service=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		  "service= takes 1 to 128 characters" },
		{ "service=a,service=b", "option 'service' given twice" },
		{ "socket", "option 'socket' has no '='" },
		{ "socket=/a,socket=/b", "option 'socket' given twice" },
		{ "socket=relative.sock", "absolute path" },
		{ "socket=", "absolute path" },
		{ "signatures=yes", "signatures= takes true or false" },
		{ "signatures=", "signatures= takes true or false" },
		{ "signatures=TRUE", "signatures= takes true or false" },
		{ "log=debug", "log= takes quiet, warn or info" },
		{ "socket=/x,", "empty option" },
		{ ",socket=/x", "empty option" },
		{ "socket=/x,,log=info", "empty option" },
		{ "=x", "unknown option ''" },
		{ "Socket=/x", "unknown option 'Socket'" },
		{ " socket=/x", "unknown option ' socket'" },
		{ "signatures=true,maxmem=1m,signatures=false", "option 'signatures' given twice" },
	};
	struct options o;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(err, 0, sizeof(err));
		assert_int_equal(options_parse(cases[i].s, &o, err, sizeof(err)), -EINVAL);
		if (strstr(err, cases[i].msg) == NULL)
			fail_msg("'%s': message '%s' lacks '%s'", cases[i].s, err, cases[i].msg);
		assert_null(strchr(err, '\n'));
	}
}

static void test_socket_path_length_limit(void **state)
{
	char s[200], err[256];
	struct options o;

	(void)state;
	strcpy(s, "socket=/");
	memset(s + 8, 'a', OPTIONS_SOCKET_MAX - 1);
	s[8 + OPTIONS_SOCKET_MAX - 1] = '\0';
	assert_int_equal(options_parse(s, &o, err, sizeof(err)), 0);
	assert_int_equal(strlen(o.socket), OPTIONS_SOCKET_MAX);
	strcat(s, "a");
	assert_int_equal(options_parse(s, &o, err, sizeof(err)), -EINVAL);
}

static void test_failed_parse_leaves_output_untouched(void **state)
{
	struct options o;
	char err[256];

	(void)state;
	memset(&o, 0x5a, sizeof(o));
	assert_int_equal(options_parse("socket=/ok,log=loud", &o, err, sizeof(err)), -EINVAL);
	assert_int_equal(((unsigned char *)&o)[0], 0x5a);
}

static void test_long_bad_item_is_shown_bounded(void **state)
{
	char s[2000], err[512];
	struct options o;

	(void)state;
	memset(s, 'x', sizeof(s) - 1);
	s[sizeof(s) - 1] = '\0';
	s[10] = '=';
	assert_int_equal(options_parse(s, &o, err, sizeof(err)), -EINVAL);
	assert_true(strlen(err) < 400);
}

/* maxmem= is split once: 1/4 queue, 1/8 names, 1/16 lines, the rest live code; all of it. */
static void test_maxmem_is_split_once_and_whole(void **state)
{
	static const char *const opts[] = { NULL, "maxmem=1m", "maxmem=1048583", "maxmem=1g" };
	struct options o;
	struct options_budget b;
	char err[256];

	(void)state;
	assert_int_equal(options_parse(NULL, &o, err, sizeof(err)), 0);
	options_budget(&o, &b);
	assert_int_equal(b.queue, 8u << 20);
	assert_int_equal(b.names, 4u << 20);
	assert_int_equal(b.lines, 2u << 20);
	assert_int_equal(b.livecode, 18u << 20);
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		assert_int_equal(options_parse(opts[i], &o, err, sizeof(err)), 0);
		options_budget(&o, &b);
		assert_int_equal(b.queue + b.names + b.lines + b.livecode, o.maxmem);
		assert_int_equal(b.queue, o.maxmem / 4);
		assert_int_equal(b.names, o.maxmem / 8);
		assert_int_equal(b.lines, o.maxmem / 16);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null_and_empty_give_defaults),
		cmocka_unit_test(test_service_is_picked_option_then_env_then_main_class_or_jar),
		cmocka_unit_test(test_every_key_is_parsed),
		cmocka_unit_test(test_maxmem_suffixes_and_bounds),
		cmocka_unit_test(test_malformed_strings_are_refused_naming_the_item),
		cmocka_unit_test(test_socket_path_length_limit),
		cmocka_unit_test(test_failed_parse_leaves_output_untouched),
		cmocka_unit_test(test_long_bad_item_is_shown_bounded),
		cmocka_unit_test(test_maxmem_is_split_once_and_whole),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
