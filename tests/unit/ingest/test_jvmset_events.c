// SPDX-License-Identifier: MIT
/*
 * test_jvmset_events.c - the agents' allocation, live and lock events through the JVM set,
 * over a fake /proc (jvmset_fakes.h): names resolved with the connection's interned ids,
 * threads mapped to the host's through the JVM's own tasks, the want file's events lines, and
 * hostile input (unknown ids, absurd depth, events nobody asked for, floods of tags) dropped
 * and counted without losing the other records.
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

#include "ingest/jvmset_fakes.h"

/* What the observer saw, and what it wants. */
struct seen {
	struct jvm_evwant want;
	unsigned stacks, frees, states;
	uint32_t last_tid;
	char frames[4][64]; /* the last stack's frames, innermost first */
	uint16_t depth;
	char cls[64];
	uint64_t tags;
	struct jvm_evwant_tok lines[8];
	size_t nlines, calls;
};

static void on_evwant(void *arg, const struct jvm *j, struct jvm_evwant *out)
{
	(void)j;
	*out = ((struct seen *)arg)->want;
}

static void on_ev(void *arg, const struct jvm *j, const struct jvm_event *ev)
{
	struct seen *s = arg;

	(void)j;
	if (ev->type == JVM_EV_STATE) {
		s->states++;
		return;
	}
	if (ev->type == JVM_EV_FREE) {
		s->frees++;
		s->tags += ev->ntags;
		return;
	}
	s->stacks++;
	s->last_tid = ev->host_tid;
	s->depth = ev->depth;
	snprintf(s->cls, sizeof(s->cls), "%.*s", ev->cls.len, ev->cls.ptr);
	for (uint16_t i = 0; i < ev->depth && i < 4; i++)
		snprintf(s->frames[i], sizeof(s->frames[i]), "%.*s:%d", ev->frames[i].len,
			 ev->frames[i].name, (int)ev->frames[i].line);
}

static void on_want(void *arg, const uint64_t *tokens, size_t n, const struct jvm_evwant_tok *ev,
		    size_t nev)
{
	struct seen *s = arg;

	(void)tokens;
	(void)n;
	assert_true(nev <= 8);
	memcpy(s->lines, ev, nev * sizeof(*ev));
	s->nlines = nev;
	s->calls++;
}

/* A task of pid in the fake /proc: host tid, namespace tid ns. */
static void task(struct fx *fx, uint32_t pid, uint32_t tid, uint32_t ns)
{
	char dir[96], text[160];

	snprintf(dir, sizeof(dir), "%s/%u/task", fx->root, pid);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/%u/task/%u", fx->root, pid, tid);
	mkdir(dir, 0755);
	snprintf(text, sizeof(text), "Name:\tworker\nNSpid:\t%u\t%u\n", tid, ns);
	put(dir, "status", text);
}

struct buf {
	uint8_t b[1 << 17];
	size_t n;
};

static void b_start(struct buf *m)
{
	m->n = (size_t)fgp_encode_msg_header(m->b, sizeof(m->b));
}

static void b_add(struct buf *m, int rv)
{
	assert_true(rv > 0);
	m->n += (size_t)rv;
}

static void b_hello(struct buf *m, uint32_t pid, uint32_t flags, uint64_t token)
{
	struct fgp_hello h = { .proto_version = FGP_VERSION,
			       .pid = pid,
			       .flags = flags,
			       .ts = 1,
			       .jvm_version = { "17.0.9", 6 },
			       .agent_version = { "test", 4 },
			       .token = token };

	b_add(m, fgp_encode_hello(m->b + m->n, sizeof(m->b) - m->n, &h));
}

static void b_name(struct buf *m, uint32_t id, const char *name)
{
	b_add(m, fgp_encode_name(m->b + m->n, sizeof(m->b) - m->n, id,
				 (struct fgp_str){ name, (uint16_t)strlen(name) }));
}

/* An allocation of size bytes on ns thread tid in frames ids[0..n) (innermost first). */
static size_t b_alloc(struct buf *m, uint32_t tid, const uint32_t *ids, uint16_t n, uint64_t tag)
{
	struct fgp_frame_in fr[8];
	struct fgp_stack_event_in e = { .ts = 5,
					.tid = tid,
					.kind = FGP_EV_ALLOC,
					.value = 4096,
					.interval = 524288,
					.tag = tag,
					.cls = { "byte[]", 6 },
					.depth = n,
					.frames = fr };
	size_t at = m->n;

	for (uint16_t i = 0; i < n; i++)
		fr[i] = (struct fgp_frame_in){ ids[i], (int32_t)(10 + i) };
	b_add(m, fgp_encode_stack_event(m->b + m->n, sizeof(m->b) - m->n, &e));
	return at;
}

static int send_buf(struct jvmset *s, uint32_t pipe, uint32_t pid, struct buf *m)
{
	return jvmset_msg(s, pipe, pid, m->b, m->n, fg_now_ns());
}

static struct jvmset *events_set(struct fx *fx, struct seen *seen)
{
	struct jvmset_opts o = { .proc_root = fx->root, .want = on_want, .want_arg = seen };
	struct jvmset_observer ob = {
		.event = on_event, .evwant = on_evwant, .ev = on_ev, .arg = seen
	};
	struct jvmset *s;

	assert_int_equal(jvmset_new(&o, &s), 0);
	assert_int_equal(jvmset_observe(s, &ob), 0);
	return s;
}

/* A JVM (host PID 4000, PID 1 in its namespace) whose agent sends events, with two threads. */
static void connect_jvm(struct fx *fx, struct jvmset *s)
{
	struct buf *m = malloc(sizeof(*m));

	proc_add(fx, 4000, 1, 100);
	task(fx, 4000, 4000, 1);
	task(fx, 4000, 4012, 13);
	b_start(m);
	b_hello(m, 1, FGP_HELLO_EVENTS, 0xfeed);
	b_name(m, 1, "com.example.Main::main");
	b_name(m, 2, "com.example.Alloc::fill");
	assert_int_equal(send_buf(s, 1, 4000, m), 0);
	jvmset_tick(s, fg_now_ns()); /* who wants what: asked at each pump and tick */
	free(m);
}

static struct jvm_info info_of(struct jvmset *s)
{
	struct jvm_info ji;

	jvm_info(jvmset_find(s, 4000), &ji);
	return ji;
}

static void test_events_are_handed_on_with_names_and_host_tids(void **state)
{
	struct fx *fx = *state;
	struct seen seen = { .want = { .on = FGP_EVM_ALLOC | FGP_EVM_LIVE,
				       .alloc_interval = 524288,
				       .depth = 64 } };
	struct jvmset *s = events_set(fx, &seen);
	struct buf *m = malloc(sizeof(*m));
	const uint32_t ids[] = { 2, 1 }, bad[] = { 2, 77 };
	const uint64_t tags[] = { 1, 2, 3 };
	struct fgp_events st = { .ts = 6, .on = FGP_EVM_ALLOC, .alloc_interval = 524288 };
	struct jvm_info ji;

	connect_jvm(fx, s);
	/* The want file's events line for the agent's token. */
	assert_int_equal(seen.nlines, 1);
	assert_int_equal(seen.lines[0].token, 0xfeed);
	assert_int_equal(seen.lines[0].w.on, FGP_EVM_ALLOC | FGP_EVM_LIVE);
	b_start(m);
	b_alloc(m, 13, ids, 2, 7);
	b_alloc(m, 13, bad, 2, 8); /* an id never defined on this connection */
	b_alloc(m, 55, ids, 2, 9); /* a tid no task of the JVM has */
	b_add(m, fgp_encode_object_free(m->b + m->n, sizeof(m->b) - m->n, tags, 3));
	b_add(m, fgp_encode_events(m->b + m->n, sizeof(m->b) - m->n, &st));
	assert_int_equal(send_buf(s, 1, 4000, m), 0);
	assert_int_equal(seen.stacks, 2);
	assert_int_equal(seen.last_tid, 0); /* the third: handed on, thread unknown */
	assert_int_equal(seen.depth, 2);
	assert_string_equal(seen.frames[0], "com.example.Alloc::fill:10");
	assert_string_equal(seen.frames[1], "com.example.Main::main:11");
	assert_string_equal(seen.cls, "byte[]");
	assert_int_equal(seen.frees, 1);
	assert_int_equal(seen.tags, 3);
	assert_int_equal(seen.states, 1);
	ji = info_of(s);
	assert_int_equal(ji.ev_drops.unknown_id, 1);
	assert_int_equal(ji.ev_drops.unknown_tid, 1);
	assert_int_equal(ji.ev_stacks, 2);
	assert_true(ji.events_known);
	assert_int_equal(ji.events.on, FGP_EVM_ALLOC);
	assert_int_equal(ji.bad_msgs, 0); /* dropped events are no malformed messages */
	/* The first one's thread: the host tid of namespace tid 13. */
	b_start(m);
	b_alloc(m, 13, ids, 2, 10);
	assert_int_equal(send_buf(s, 1, 4000, m), 0);
	assert_int_equal(seen.last_tid, 4012);
	free(m);
	jvmset_free(s);
}

static void test_events_nobody_asked_for_are_dropped_and_the_line_removed(void **state)
{
	struct fx *fx = *state;
	struct seen seen = { .want = { .on = FGP_EVM_LOCK, .lock_us = 10 } };
	struct jvmset *s = events_set(fx, &seen);
	struct buf *m = malloc(sizeof(*m));
	const uint32_t ids[] = { 2, 1 };

	connect_jvm(fx, s);
	assert_int_equal(seen.nlines, 1);
	assert_int_equal(seen.lines[0].w.lock_us, 10);
	/* Allocation events of an agent asked for locks only. */
	b_start(m);
	b_alloc(m, 13, ids, 2, 1);
	assert_int_equal(send_buf(s, 1, 4000, m), 0);
	assert_int_equal(seen.stacks, 0);
	assert_int_equal(info_of(s).ev_drops.unwanted, 1);
	/* Nobody wants anything: the events line goes, and what still comes is dropped. */
	seen.want.on = 0;
	jvmset_tick(s, fg_now_ns());
	assert_int_equal(seen.nlines, 0);
	assert_int_equal(send_buf(s, 1, 4000, m), 0);
	assert_int_equal(info_of(s).ev_drops.unwanted, 2);
	free(m);
	jvmset_free(s);
}

static void test_an_agent_without_events_gets_no_line(void **state)
{
	struct fx *fx = *state;
	struct seen seen = { .want = { .on = FGP_EVM_ALLOC, .alloc_interval = 1000 } };
	struct jvmset *s = events_set(fx, &seen);
	struct buf *m = malloc(sizeof(*m));

	proc_add(fx, 4000, 1, 100);
	b_start(m);
	b_hello(m, 1, 0, 0xbeef); /* an agent of before events */
	assert_int_equal(send_buf(s, 1, 4000, m), 0);
	jvmset_tick(s, fg_now_ns());
	assert_int_equal(seen.nlines, 0);
	free(m);
	jvmset_free(s);
}

static void test_hostile_event_records_are_dropped_and_counted(void **state)
{
	struct fx *fx = *state;
	struct seen seen = { .want = { .on = FGP_EVM_ALLOC | FGP_EVM_LIVE,
				       .alloc_interval = 524288 } };
	struct jvmset *s = events_set(fx, &seen);
	struct buf *m = malloc(sizeof(*m));
	const uint32_t ids[] = { 2, 1 };
	uint64_t *tags = calloc(FGP_MAX_FREE_TAGS, sizeof(*tags));
	struct jvm_info ji;
	size_t at;

	connect_jvm(fx, s);
	/* An absurd depth: the decoder refuses the record, the rest of the message holds. */
	b_start(m);
	at = b_alloc(m, 13, ids, 2, 1);
	m->b[at + FGP_REC_HEADER_SIZE + 14] = 0xff;
	m->b[at + FGP_REC_HEADER_SIZE + 15] = 0xff;
	b_alloc(m, 13, ids, 2, 2);
	assert_int_equal(send_buf(s, 1, 4000, m), 0);
	assert_int_equal(seen.stacks, 1);
	ji = info_of(s);
	assert_int_equal(ji.bad_records, 1);
	/* A flood of frees: handed on in bounded pieces, nothing kept here. */
	for (uint32_t i = 0; i < FGP_MAX_FREE_TAGS; i++)
		tags[i] = i + 1;
	for (int k = 0; k < 50; k++) {
		b_start(m);
		for (int r = 0; r < 3; r++)
			b_add(m, fgp_encode_object_free(m->b + m->n, sizeof(m->b) - m->n, tags,
							FGP_MAX_FREE_TAGS));
		assert_int_equal(send_buf(s, 1, 4000, m), 0);
	}
	assert_int_equal(seen.frees, 150);
	assert_int_equal(seen.tags, 150ull * FGP_MAX_FREE_TAGS);
	/* Stacks of unknown ids only: every one dropped, counted, the connection kept. */
	for (int k = 0; k < 100; k++) {
		const uint32_t junk[] = { 1000 + (uint32_t)k, 5 };

		b_start(m);
		b_alloc(m, 13, junk, 2, 3);
		assert_int_equal(send_buf(s, 1, 4000, m), 0);
	}
	ji = info_of(s);
	assert_int_equal(ji.ev_drops.unknown_id, 100);
	assert_true(ji.connected);
	free(tags);
	free(m);
	jvmset_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_events_are_handed_on_with_names_and_host_tids,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_events_nobody_asked_for_are_dropped_and_the_line_removed, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_an_agent_without_events_gets_no_line, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_hostile_event_records_are_dropped_and_counted,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
