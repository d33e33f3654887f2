// SPDX-License-Identifier: MIT
/*
 * test_session_cli.c - the options record, top and watch share: --event (one, or watch's list),
 * --min-block, --switch-rate, --switch-period, --threads, --per-thread, --no-per-thread and
 * --scope, parsed the same way for every command.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "session_cli.h"
#include "util.h"

/* As record and top start. */
static void so_init(void *opts)
{
	struct session_opts *so = opts;

	memset(so, 0, sizeof(*so));
	so->switch_rate = SESSION_SWITCH_RATE_AUTO;
}

static const struct cli_group groups[] = {
	{ NULL, session_cli_targets, 0 },
	{ NULL, session_cli_sampling, 0 },
	{ NULL, session_cli_events, 0 },
};

static const struct cli_cmd top_like = {
	.name = "top",
	.usage = "Usage: top\n",
	.groups = groups,
	.ngroups = 3,
	.size = sizeof(struct session_opts),
	.init = so_init,
};

/* Parse args (after the command name) as top does. */
#define parse(so, ...) parse_args(so, (const char *[]){ __VA_ARGS__, NULL })

static int parse_args(struct session_opts *so, const char *const *args)
{
	char *argv[32] = { (char *)"top" };
	int argc = 1;

	while (argc < 31 && args[argc - 1]) {
		argv[argc] = (char *)args[argc - 1];
		argc++;
	}
	so_init(so);
	return session_cli_parse(&top_like, argc, argv, so, so);
}

static void test_event_and_its_options_parse_for_every_command(void **state)
{
	struct session_opts so;

	(void)state;
	assert_int_equal(parse(&so, "--pid", "42"), 0);
	assert_int_equal(so.event, FG_EVENT_CPU);
	assert_false(so.merge_threads);
	assert_int_equal(parse(&so, "--pid", "42", "--event", "offcpu", "--min-block", "250",
			       "--switch-period", "4", "--threads", "http-.*"),
			 0);
	assert_int_equal(so.event, FG_EVENT_OFFCPU);
	assert_int_equal(so.min_block_ns, 250000);
	assert_int_equal(so.switch_period, 4);
	assert_string_equal(so.threads_regex, "http-.*");
	assert_int_equal(parse(&so, "-a", "-e", "wall"), 0);
	assert_int_equal(so.event, FG_EVENT_WALL);
	assert_int_equal(parse(&so, "-a", "-e", "cpu"), 0);
	assert_int_equal(so.event, FG_EVENT_CPU);
	/* Bad values: usage errors, whatever the command. */
	assert_int_equal(parse(&so, "-a", "--event", "offcpu,cpu"), FG_EXIT_USAGE);
	assert_int_equal(parse(&so, "-a", "--event", "OFFCPU"), FG_EXIT_USAGE);
	assert_int_equal(parse(&so, "-a", "--event"), FG_EXIT_USAGE);
	assert_int_equal(parse(&so, "-a", "--min-block", "-1"), FG_EXIT_USAGE);
	assert_int_equal(parse(&so, "-a", "--switch-period", "0"), FG_EXIT_USAGE);
}

/* Which switch-outs get a stack: a rate by default, a fixed chance when a period is given, every
 * one at rate 0; the two options exclude each other. */
static void test_switch_rate_is_the_default_and_a_period_replaces_it(void **state)
{
	struct session_opts so;

	(void)state;
	assert_int_equal(parse(&so, "-a", "-e", "offcpu"), 0);
	assert_int_equal(so.switch_rate, SESSION_DEFAULT_SWITCH_RATE);
	assert_int_equal(so.switch_period, 1);
	assert_int_equal(parse(&so, "-a", "-e", "offcpu", "--switch-rate", "200"), 0);
	assert_int_equal(so.switch_rate, 200);
	assert_int_equal(parse(&so, "-a", "-e", "wall", "--switch-rate", "0"), 0);
	assert_int_equal(so.switch_rate, 0);
	assert_int_equal(so.switch_period, 1);
	assert_int_equal(parse(&so, "-a", "-e", "offcpu", "--switch-period", "8"), 0);
	assert_int_equal(so.switch_rate, 0);
	assert_int_equal(so.switch_period, 8);
	assert_int_equal(parse(&so, "-a", "--switch-rate", "10", "--switch-period", "8"),
			 FG_EXIT_USAGE);
	assert_int_equal(parse(&so, "-a", "--switch-period", "8", "--switch-rate", "10"),
			 FG_EXIT_USAGE);
	assert_int_equal(parse(&so, "-a", "--switch-rate", "-1"), FG_EXIT_USAGE);
	assert_int_equal(parse(&so, "-a", "--switch-rate", "100001"), FG_EXIT_USAGE);
}

static void test_per_thread_is_the_default_and_no_per_thread_merges(void **state)
{
	struct session_opts so;

	(void)state;
	assert_int_equal(parse(&so, "-a"), 0);
	assert_false(so.merge_threads);
	assert_false(so.per_thread); /* virtual threads by name pattern */
	assert_int_equal(parse(&so, "-a", "--no-per-thread"), 0);
	assert_true(so.merge_threads);
	assert_false(so.per_thread);
	assert_int_equal(parse(&so, "-a", "--per-thread"), 0);
	assert_false(so.merge_threads);
	assert_true(so.per_thread); /* each virtual thread too */
	/* The last one given wins. */
	assert_int_equal(parse(&so, "-a", "--per-thread", "--no-per-thread"), 0);
	assert_true(so.merge_threads);
	assert_false(so.per_thread);
	assert_int_equal(parse(&so, "-a", "--no-per-thread", "--per-thread"), 0);
	assert_false(so.merge_threads);
	assert_true(so.per_thread);
	assert_int_equal(parse(&so, "-a", "--per-thread=yes"), FG_EXIT_USAGE);
}

/* --scope: per CPU or per thread; the sampler's choice when not given. */
static void test_scope_parses_for_every_event(void **state)
{
	struct session_opts so;

	(void)state;
	assert_int_equal(parse(&so, "-a"), 0);
	assert_int_equal(so.scope, SESSION_SCOPE_AUTO);
	assert_int_equal(parse(&so, "-a", "--scope", "threads"), 0);
	assert_int_equal(so.scope, SESSION_SCOPE_THREADS);
	assert_int_equal(parse(&so, "-p", "42", "--scope", "cpus"), 0);
	assert_int_equal(so.scope, SESSION_SCOPE_CPUS);
	assert_int_equal(parse(&so, "-a", "--scope", "threads", "--event", "offcpu"), 0);
	/* Off-CPU and wall per CPU: the BPF program, with no fallback to per-thread events. */
	assert_int_equal(parse(&so, "-a", "--scope", "cpus", "--event", "offcpu"), 0);
	assert_int_equal(so.scope, SESSION_SCOPE_CPUS);
	assert_int_equal(parse(&so, "-a", "--event", "wall", "--scope", "cpus"), 0);
	assert_int_equal(parse(&so, "-a", "--scope", "cpu"), FG_EXIT_USAGE);
	assert_int_equal(parse(&so, "-a", "--scope"), FG_EXIT_USAGE);
}

static void test_event_lists_for_watch(void **state)
{
	unsigned m = 99;

	(void)state;
	assert_int_equal(session_cli_event_list("watch", "cpu", &m), 0);
	assert_int_equal(m, 1u << FG_EVENT_CPU);
	assert_int_equal(session_cli_event_list("watch", "cpu,offcpu", &m), 0);
	assert_int_equal(m, (1u << FG_EVENT_CPU) | (1u << FG_EVENT_OFFCPU));
	assert_int_equal(session_cli_event_list("watch", "wall,offcpu,cpu", &m), 0);
	assert_int_equal(m, 7u);
	assert_int_equal(session_cli_event_list("watch", "cpu,offcpu,wall,alloc,lock", &m), 0);
	assert_int_equal(m, 7u | (1u << FG_EVENT_ALLOC) | (1u << FG_EVENT_LOCK));
	assert_int_equal(session_cli_event_list("watch", "lock,live,alloc,wall,offcpu,cpu", &m), 0);
	assert_int_equal(m, SESSION_CLI_EVENTS_ALL);
	m = 99;
	assert_int_equal(session_cli_event_list("watch", "", &m), -1);
	assert_int_equal(session_cli_event_list("watch", "cpu,", &m), -1);
	assert_int_equal(session_cli_event_list("watch", ",cpu", &m), -1);
	assert_int_equal(session_cli_event_list("watch", "cpu,,offcpu", &m), -1);
	assert_int_equal(session_cli_event_list("watch", "cpu,cpu", &m), -1);
	assert_int_equal(session_cli_event_list("watch", "cpu,gpu", &m), -1);
	assert_int_equal(session_cli_event_list("watch", "offcpuoffcpuoffcpu", &m), -1);
	assert_int_equal(m, 99); /* left alone on error */
	assert_string_equal(session_cli_event_name(FG_EVENT_OFFCPU), "offcpu");
	assert_string_equal(session_cli_event_name(FG_EVENT_WALL), "wall");
	assert_string_equal(session_cli_event_name(FG_EVENT_CPU), "cpu");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_and_its_options_parse_for_every_command),
		cmocka_unit_test(test_per_thread_is_the_default_and_no_per_thread_merges),
		cmocka_unit_test(test_switch_rate_is_the_default_and_a_period_replaces_it),
		cmocka_unit_test(test_scope_parses_for_every_event),
		cmocka_unit_test(test_event_lists_for_watch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
