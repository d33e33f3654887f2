// SPDX-License-Identifier: MIT
/*
 * test_ctl_frame.c - the control channel's frame codec on byte arrays: every truncation and
 * every single-byte mutation of valid frames and JVM payloads, each fed from a heap buffer of
 * exactly its length (so ASan sees any read past it), plus a seeded random mutation run.
 * A decoder must answer (success, "need more" or -EPROTO), never read outside its input, and
 * never write its out-parameter unless it succeeds.
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

#include <cmocka.h>

#include "allocring.h"
#include "ctl_frame.h"

/* A copy of p[0..n) in a heap block of exactly n bytes (1 for n = 0, never read). */
static uint8_t *exact(const uint8_t *p, size_t n)
{
	uint8_t *b = malloc(n ? n : 1);

	assert_non_null(b);
	memcpy(b, p, n);
	return b;
}

static void sample_info(struct jvm_info *ji)
{
	memset(ji, 0, sizeof(*ji));
	ji->host_pid = 4242;
	ji->ns_pid = 1;
	ji->hello_flags = 3;
	ji->start_time = 123456789;
	ji->connect_ts = 1111;
	ji->exit_ts = 2222;
	ji->connected = true;
	strcpy(ji->container_id,
	       "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	strcpy(ji->jvm_version, "17.0.9+9-Debian-1deb12u1");
	strcpy(ji->agent_version, "0.1.0");
	strcpy(ji->service, "shop");
}

/* Offsets where each string's length field starts, for the sample payload. */
struct layout {
	size_t cid, jvm, agent, service, end;
};

static struct layout layout_of(const struct jvm_info *ji)
{
	struct layout l;

	l.cid = CTL_JVM_FIXED;
	l.jvm = l.cid + 2 + strlen(ji->container_id);
	l.agent = l.jvm + 2 + strlen(ji->jvm_version);
	l.service = l.agent + 2 + strlen(ji->agent_version);
	l.end = l.service + 2 + strlen(ji->service);
	return l;
}

static void test_jvm_payload_round_trips(void **state)
{
	struct jvm_info in, out;
	uint8_t buf[CTL_JVM_MAX];
	size_t n;

	(void)state;
	sample_info(&in);
	n = ctl_jvm_encode(buf, &in);
	assert_int_equal(n, layout_of(&in).end);
	assert_int_equal(ctl_jvm_decode(buf, n, 4242, &out), 0);
	assert_int_equal(out.host_pid, 4242);
	assert_int_equal(out.ns_pid, 1);
	assert_int_equal(out.hello_flags, 3);
	assert_int_equal(out.start_time, 123456789);
	assert_int_equal(out.connect_ts, 1111);
	assert_int_equal(out.exit_ts, 2222);
	assert_true(out.connected);
	assert_false(out.exited);
	assert_string_equal(out.container_id, in.container_id);
	assert_string_equal(out.jvm_version, in.jvm_version);
	assert_string_equal(out.agent_version, in.agent_version);
	assert_string_equal(out.service, in.service);
	assert_false(out.tables);
	/* Tables on demand: whether the agent sends its tables now; an older daemon (0 there)
	 * forwards every table it has, so they count as on. */
	in.tables = true;
	n = ctl_jvm_encode(buf, &in);
	assert_int_equal(ctl_jvm_decode(buf, n, 4242, &out), 0);
	assert_true(out.tables);
	buf[34] = 0;
	assert_int_equal(ctl_jvm_decode(buf, n, 4242, &out), 0);
	assert_true(out.tables);
}

/*
 * Every prefix of a payload: only the full one and the one that ends after agent_version (an
 * older daemon, no service) decode; any cut inside the fixed part or a string is -EPROTO and
 * leaves *out as it was.
 */
static void test_every_truncated_jvm_payload_is_refused(void **state)
{
	struct jvm_info in, out, sentinel;
	uint8_t buf[CTL_JVM_MAX];
	struct layout l;
	size_t n;

	(void)state;
	sample_info(&in);
	n = ctl_jvm_encode(buf, &in);
	l = layout_of(&in);
	memset(&sentinel, 0x5a, sizeof(sentinel));
	for (size_t len = 0; len <= n; len++) {
		uint8_t *b = exact(buf, len);
		int rv;

		out = sentinel;
		rv = ctl_jvm_decode(b, len, 4242, &out);
		if (len == l.service || len == n) {
			assert_int_equal(rv, 0);
			assert_string_equal(out.agent_version, "0.1.0");
			assert_string_equal(out.service, len == n ? "shop" : "");
		} else {
			if (rv != -EPROTO)
				fail_msg("payload cut to %zu of %zu bytes: %d, want -EPROTO", len,
					 n, rv);
			assert_memory_equal(&out, &sentinel, sizeof(out));
		}
		free(b);
	}
}

/* A decoded string always ends inside its field, whatever the bytes. */
static void assert_terminated(const struct jvm_info *ji)
{
	assert_true(memchr(ji->container_id, '\0', sizeof(ji->container_id)) != NULL);
	assert_true(memchr(ji->jvm_version, '\0', sizeof(ji->jvm_version)) != NULL);
	assert_true(memchr(ji->agent_version, '\0', sizeof(ji->agent_version)) != NULL);
	assert_true(memchr(ji->service, '\0', sizeof(ji->service)) != NULL);
}

/*
 * Every byte of the payload set to each of a few values: a length byte that now announces
 * more than is left is refused; anything else decodes to terminated strings.
 */
static void test_every_single_byte_mutation_of_a_jvm_payload(void **state)
{
	static const uint8_t vals[] = { 0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff };
	struct jvm_info in, out, sentinel;
	uint8_t buf[CTL_JVM_MAX];
	struct layout l;
	size_t n, refused = 0;

	(void)state;
	sample_info(&in);
	n = ctl_jvm_encode(buf, &in);
	l = layout_of(&in);
	memset(&sentinel, 0x5a, sizeof(sentinel));
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < sizeof(vals); k++) {
			uint8_t *b = exact(buf, n);
			int rv;

			b[i] = vals[k];
			out = sentinel;
			rv = ctl_jvm_decode(b, n, 9, &out);
			assert_true(rv == 0 || rv == -EPROTO);
			if (rv == 0) {
				assert_terminated(&out);
				assert_int_equal(out.host_pid, 9);
			} else {
				assert_memory_equal(&out, &sentinel, sizeof(out));
				refused++;
			}
			/* The container id's length claims past the end: must be refused. */
			if ((i == l.cid || i == l.cid + 1) && vals[k] >= 0x7f)
				assert_int_equal(rv, -EPROTO);
			free(b);
		}
	}
	assert_true(refused > 0);
}

/* Seeded random mutations (several bytes, random length) of a payload. */
static void test_random_mutations_of_jvm_payloads(void **state)
{
	struct jvm_info in, out;
	uint8_t buf[CTL_JVM_MAX];
	size_t n;
	unsigned seed = 20261122, ok = 0;

	(void)state;
	sample_info(&in);
	n = ctl_jvm_encode(buf, &in);
	for (int iter = 0; iter < 20000; iter++) {
		size_t len = (size_t)rand_r(&seed) % (n + 16);
		uint8_t tmp[CTL_JVM_MAX + 16];
		uint8_t *b;
		int rv;

		memcpy(tmp, buf, n);
		for (size_t i = n; i < sizeof(tmp); i++)
			tmp[i] = (uint8_t)rand_r(&seed);
		for (int m = rand_r(&seed) % 4; m >= 0; m--)
			tmp[(size_t)rand_r(&seed) % (n + 16)] = (uint8_t)rand_r(&seed);
		b = exact(tmp, len);
		rv = ctl_jvm_decode(b, len, 1, &out);
		assert_true(rv == 0 || rv == -EPROTO);
		if (rv == 0) {
			assert_terminated(&out);
			ok++;
		}
		free(b);
	}
	assert_true(ok > 0);
}

/* Strings longer than jvm_info's fields are cut, terminated, and the rest still parses. */
static void test_long_strings_are_cut_to_the_fields(void **state)
{
	uint8_t buf[CTL_JVM_FIXED + 4 * (2 + CTL_STR_MAX)];
	struct jvm_info out;
	size_t n = CTL_JVM_FIXED;
	size_t lens[4] = { 300, CTL_STR_MAX, 0, 70 };

	(void)state;
	memset(buf, 0, CTL_JVM_FIXED);
	for (int s = 0; s < 4; s++) {
		buf[n] = (uint8_t)(lens[s] & 0xff);
		buf[n + 1] = (uint8_t)(lens[s] >> 8);
		memset(buf + n + 2, 'a' + s, lens[s]);
		n += 2 + lens[s];
	}
	assert_int_equal(ctl_jvm_decode(buf, n, 1, &out), 0);
	assert_int_equal(strlen(out.container_id), sizeof(out.container_id) - 1);
	assert_int_equal(strlen(out.jvm_version), sizeof(out.jvm_version) - 1);
	assert_string_equal(out.agent_version, "");
	assert_int_equal(strlen(out.service),
			 sizeof(out.service) - 1 < 70 ? sizeof(out.service) - 1 : 70);
	assert_int_equal(out.service[0], 'd');
}

/* A stream: every prefix of a frame is "need more", the whole frame is one frame. */
static void test_every_prefix_of_a_frame_needs_more(void **state)
{
	uint8_t frame[CTL_HDR_SIZE + CTL_JVM_MAX];
	struct ctl_hdr h = { 0, CTL_JVM, 0, 4242 }, got, sentinel = { 1, 2, 3, 4 };
	struct jvm_info in;
	size_t n;

	(void)state;
	sample_info(&in);
	n = CTL_HDR_SIZE + ctl_jvm_encode(frame + CTL_HDR_SIZE, &in);
	h.size = (uint32_t)n;
	ctl_hdr_encode(frame, &h);
	for (size_t len = 0; len < n; len++) {
		uint8_t *b = exact(frame, len);

		got = sentinel;
		assert_int_equal(ctl_frame_peek(b, len, &got), 0);
		assert_memory_equal(&got, &sentinel, sizeof(got));
		free(b);
	}
	assert_int_equal(ctl_frame_peek(frame, n, &got), 1);
	assert_int_equal(got.size, n);
	assert_int_equal(got.kind, CTL_JVM);
	assert_int_equal(got.host_pid, 4242);
	assert_int_equal(
		ctl_jvm_decode(frame + CTL_HDR_SIZE, got.size - CTL_HDR_SIZE, got.host_pid, &in),
		0);
}

/* Header sizes outside [CTL_HDR_SIZE, CTL_MAX_FRAME] cannot be resynchronised: -EPROTO. */
static void test_frame_sizes_out_of_range_are_refused(void **state)
{
	static const uint32_t bad[] = { 0, 1, CTL_HDR_SIZE - 1, CTL_MAX_FRAME + 1, 0xffffffffu };
	static const uint32_t good[] = { CTL_HDR_SIZE, CTL_HDR_SIZE + 1, CTL_MAX_FRAME };
	uint8_t p[CTL_HDR_SIZE];
	struct ctl_hdr h = { 0, CTL_RECORDS, 0, 1 }, got, sentinel = { 1, 2, 3, 4 };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		h.size = bad[i];
		ctl_hdr_encode(p, &h);
		got = sentinel;
		assert_int_equal(ctl_frame_peek(p, sizeof(p), &got), -EPROTO);
		assert_memory_equal(&got, &sentinel, sizeof(got));
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		h.size = good[i];
		ctl_hdr_encode(p, &h);
		/* Only a bare header here: whole for CTL_HDR_SIZE, else more is needed. */
		assert_int_equal(ctl_frame_peek(p, sizeof(p), &got), good[i] == CTL_HDR_SIZE);
	}
}

/* Every single-byte mutation of a frame header: a verdict, never a read past the input. */
static void test_every_mutation_of_a_header(void **state)
{
	uint8_t p[CTL_HDR_SIZE];
	struct ctl_hdr h = { CTL_HDR_SIZE, CTL_LIST, 0, 77 }, got;

	(void)state;
	for (size_t i = 0; i < CTL_HDR_SIZE; i++) {
		for (unsigned v = 0; v < 256; v++) {
			uint8_t *b;
			int rv;

			ctl_hdr_encode(p, &h);
			p[i] = (uint8_t)v;
			b = exact(p, sizeof(p));
			rv = ctl_frame_peek(b, sizeof(p), &got);
			if (i < 4) { /* the size field */
				uint32_t size = (uint32_t)b[0] | (uint32_t)b[1] << 8 |
						(uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;

				assert_int_equal(rv, size < CTL_HDR_SIZE || size > CTL_MAX_FRAME
							     ? -EPROTO
							     : size == CTL_HDR_SIZE);
				assert_int_equal(ctl_request_decode(b, sizeof(p), &got),
						 size == CTL_HDR_SIZE ? 0 : -EPROTO);
			} else {
				assert_int_equal(rv, 1);
				assert_int_equal(ctl_request_decode(b, sizeof(p), &got), 0);
			}
			free(b);
		}
	}
}

/* A request is exactly one bare header: anything shorter or longer is -EPROTO. */
static void test_requests_of_the_wrong_length_are_refused(void **state)
{
	uint8_t p[CTL_HDR_SIZE + 4] = { 0 };
	struct ctl_hdr h = { CTL_HDR_SIZE, CTL_SUBSCRIBE, 0, 0 }, got, sentinel = { 1, 2, 3, 4 };

	(void)state;
	ctl_hdr_encode(p, &h);
	for (size_t len = 0; len <= sizeof(p); len++) {
		uint8_t *b = exact(p, len);

		got = sentinel;
		if (len == CTL_HDR_SIZE) {
			assert_int_equal(ctl_request_decode(b, len, &got), 0);
			assert_int_equal(got.kind, CTL_SUBSCRIBE);
		} else {
			assert_int_equal(ctl_request_decode(b, len, &got), -EPROTO);
			assert_memory_equal(&got, &sentinel, sizeof(got));
		}
		free(b);
	}
}

/* An events request: its payload round trips, clamped; one of another length is refused. */
static void test_events_request_round_trips_and_is_clamped(void **state)
{
	uint8_t p[CTL_REQ_MAX + 8];
	struct jvm_evwant w = { .on = FGP_EVM_ALLOC | FGP_EVM_LOCK | 0x80000000u,
				.alloc_interval = 1ull << 40,
				.lock_us = 250,
				.depth = 100000,
				.budget_ppm = 5000000 },
			  got;
	struct ctl_hdr h = { CTL_HDR_SIZE + CTL_EVWANT_SIZE, CTL_EVENTS_REQ, 0, 0 }, hd;

	(void)state;
	ctl_hdr_encode(p, &h);
	ctl_evwant_encode(p + CTL_HDR_SIZE, &w);
	assert_int_equal(ctl_request_decode(p, h.size, &hd), 0);
	assert_int_equal(hd.kind, CTL_EVENTS_REQ);
	assert_int_equal(ctl_evwant_decode(p + CTL_HDR_SIZE, CTL_EVWANT_SIZE, &got), 0);
	assert_int_equal(got.on, FGP_EVM_ALLOC | FGP_EVM_LOCK); /* unknown bits dropped */
	assert_int_equal(got.alloc_interval, 1u << 30);
	assert_int_equal(got.lock_us, 250);
	assert_int_equal(got.depth, FGP_MAX_EVENT_DEPTH);
	assert_int_equal(got.budget_ppm, JVM_EVWANT_MAX_BUDGET);
	w.budget_ppm = 10000;
	ctl_evwant_encode(p + CTL_HDR_SIZE, &w);
	assert_int_equal(ctl_evwant_decode(p + CTL_HDR_SIZE, CTL_EVWANT_SIZE, &got), 0);
	assert_int_equal(got.budget_ppm, 10000);
	for (size_t len = 0; len < CTL_EVWANT_SIZE + 4; len++)
		if (len != CTL_EVWANT_SIZE)
			assert_int_equal(ctl_evwant_decode(p + CTL_HDR_SIZE, len, &got), -EPROTO);
	/* A request longer than the longest there is: refused before it is read. */
	h.size = CTL_REQ_MAX + 1;
	ctl_hdr_encode(p, &h);
	assert_int_equal(ctl_request_decode(p, h.size, &hd), -EPROTO);
}

/* Budgets merged: the larger, none when either asks none; the want line says it with alloc. */
static void test_events_wants_merge_the_budget_and_write_it(void **state)
{
	struct jvm_evwant a = { FGP_EVM_ALLOC, 65536, 0, 0, 10000 };
	struct jvm_evwant b = { FGP_EVM_ALLOC, 524288, 0, 0, 50000 };
	struct jvm_evwant off = { FGP_EVM_ALLOC, 524288, 0, 0, 0 };
	struct jvm_evwant lock = { FGP_EVM_LOCK, 0, 10, 0, 0 };
	struct jvm_evwant m = { 0 };
	char line[256];

	(void)state;
	jvm_evwant_merge(&m, &a);
	jvm_evwant_merge(&m, &lock);
	assert_int_equal(m.budget_ppm, 10000);
	jvm_evwant_merge(&m, &b);
	assert_int_equal(m.budget_ppm, 50000);
	assert_int_equal(m.alloc_interval, 65536);
	assert_true(jvm_evwant_line(&m, 1, line, sizeof(line)) > 0);
	assert_non_null(strstr(line, " budget=50000"));
	jvm_evwant_merge(&m, &off);
	assert_int_equal(m.budget_ppm, 0);
	assert_true(jvm_evwant_line(&m, 1, line, sizeof(line)) > 0);
	assert_null(strstr(line, "budget="));
	assert_true(jvm_evwant_line(&lock, 1, line, sizeof(line)) > 0);
	assert_null(strstr(line, "budget="));
}

/* The mounts alone (FGP_EVM_VCPU) only when every want of virtual threads has them: a wall
 * want beside a CPU one gets the waits. The want line says vcpu with vmount only. */
static void test_events_wants_merge_the_mounts_alone(void **state)
{
	const uint32_t cpu = FGP_EVM_VTHREAD | FGP_EVM_VMOUNT | FGP_EVM_VCPU;
	struct jvm_evwant c = { .on = cpu, .depth = 1 };
	struct jvm_evwant wall = { .on = FGP_EVM_VTHREAD | FGP_EVM_VMOUNT, .depth = 64 };
	struct jvm_evwant lock = { .on = FGP_EVM_LOCK, .lock_us = 10 };
	struct jvm_evwant m = { 0 };
	char line[256];

	(void)state;
	jvm_evwant_merge(&m, &c);
	assert_int_equal(m.on, cpu);
	jvm_evwant_merge(&m, &lock); /* no virtual threads asked: the mounts stay alone */
	assert_int_equal(m.on, cpu | FGP_EVM_LOCK);
	assert_true(jvm_evwant_line(&m, 1, line, sizeof(line)) > 0);
	assert_non_null(strstr(line, " vthread vmount vcpu"));
	jvm_evwant_merge(&m, &wall);
	assert_int_equal(m.on, FGP_EVM_VTHREAD | FGP_EVM_VMOUNT | FGP_EVM_LOCK);
	jvm_evwant_merge(&m, &c); /* a CPU want after a wall one does not take the waits away */
	assert_int_equal(m.on, FGP_EVM_VTHREAD | FGP_EVM_VMOUNT | FGP_EVM_LOCK);
	assert_true(jvm_evwant_line(&m, 1, line, sizeof(line)) > 0);
	assert_null(strstr(line, "vcpu"));
	/* the other order */
	m = (struct jvm_evwant){ 0 };
	jvm_evwant_merge(&m, &wall);
	jvm_evwant_merge(&m, &c);
	assert_int_equal(m.on, FGP_EVM_VTHREAD | FGP_EVM_VMOUNT);
	/* two CPU wants; vcpu without vmount is not written */
	m = (struct jvm_evwant){ 0 };
	jvm_evwant_merge(&m, &c);
	jvm_evwant_merge(&m, &c);
	assert_int_equal(m.on, cpu);
	m.on = FGP_EVM_VTHREAD | FGP_EVM_VCPU;
	assert_true(jvm_evwant_line(&m, 1, line, sizeof(line)) > 0);
	assert_null(strstr(line, "vcpu"));
}

static const struct jvm_ev_frame ev_frames[] = { { "Alloc::fill", 11, 12 },
						 { "Main::main", 10, 0 } };
static const uint64_t ev_tags[] = { 1, 2, UINT64_MAX };

/* Three items (a stack, frees, a state) in buf; their length. */
static size_t three_events(uint8_t *buf, size_t cap)
{
	struct jvm_event st = { .type = JVM_EV_STACK,
				.host_tid = 4250,
				.ts = 5,
				.kind = FGP_EV_ALLOC,
				.truncated = true,
				.value = 4096,
				.interval = 524288,
				.weight = (1ull << 47) + 3, /* a gap weight: its 48 bits carried */
				.tag = 9,
				.cls = { "byte[]", 6 },
				.frames = ev_frames,
				.depth = 2 };
	struct jvm_event fr = { .type = JVM_EV_FREE, .tags = ev_tags, .ntags = 3 };
	struct jvm_event sv = { .type = JVM_EV_STATE,
				.state = { .ts = 4, .on = FGP_EVM_LOCK, .lock_short = 7 },
				.drops = { .unknown_id = 3, .unwanted = 2 } };
	struct jvm_event co = { .type = JVM_EV_COST,
				.cost = { .ts = 5, .samples = 11, .cost_ns = 22, .cpu_ns = 33 } };
	size_t n = 0;

	n += ctl_event_encode(buf + n, cap - n, &st);
	n += ctl_event_encode(buf + n, cap - n, &fr);
	n += ctl_event_encode(buf + n, cap - n, &sv);
	n += ctl_event_encode(buf + n, cap - n, &co);
	return n;
}

static void test_events_round_trip(void **state)
{
	static struct ctl_ev_buf b;
	uint8_t buf[1024];
	size_t n = three_events(buf, sizeof(buf));
	const uint8_t *p = buf;
	struct jvm_event ev;

	(void)state;
	assert_int_equal(ctl_event_decode(&p, buf + n, 42, &ev, &b), 1);
	assert_int_equal(ev.type, JVM_EV_STACK);
	assert_int_equal(ev.host_pid, 42);
	assert_int_equal(ev.host_tid, 4250);
	assert_true(ev.truncated);
	assert_int_equal(ev.tag, 9);
	assert_true(ev.weight == (1ull << 47) + 3);
	assert_int_equal(ev.depth, 2);
	assert_memory_equal(ev.frames[0].name, "Alloc::fill", 11);
	assert_int_equal(ev.frames[0].line, 12);
	assert_memory_equal(ev.cls.ptr, "byte[]", 6);
	assert_int_equal(ctl_event_decode(&p, buf + n, 42, &ev, &b), 1);
	assert_int_equal(ev.type, JVM_EV_FREE);
	assert_int_equal(ev.ntags, 3);
	assert_true(ev.tags[2] == UINT64_MAX);
	assert_int_equal(ctl_event_decode(&p, buf + n, 42, &ev, &b), 1);
	assert_int_equal(ev.type, JVM_EV_STATE);
	assert_int_equal(ev.state.lock_short, 7);
	assert_int_equal(ev.drops.unknown_id, 3);
	assert_int_equal(ctl_event_decode(&p, buf + n, 42, &ev, &b), 1);
	assert_int_equal(ev.type, JVM_EV_COST);
	assert_int_equal(ev.host_pid, 42);
	assert_int_equal(ev.cost.ts, 5);
	assert_int_equal(ev.cost.samples, 11);
	assert_int_equal(ev.cost.cost_ns, 22);
	assert_int_equal(ev.cost.cpu_ns, 33);
	assert_int_equal(ctl_event_decode(&p, buf + n, 42, &ev, &b), 0);
}

/* Virtual threads' waits go through a watch daemon: the want keeps its bit, and an event with
 * its stack and one with none round trip whole. */
static void test_vthread_wants_and_waits_round_trip(void **state)
{
	static struct ctl_ev_buf b;
	uint8_t buf[1024];
	struct jvm_evwant w = { .on = FGP_EVM_VTHREAD, .depth = 64 }, got;
	struct jvm_event vw = { .type = JVM_EV_STACK,
				.host_tid = 4251,
				.ts = 6,
				.kind = FGP_EV_VWAIT,
				.value = 8000000,
				.interval = 3 * FGP_VWAIT_ONE,
				.tag = 100 | 8ull << 40,
				.cls = { "java.lang.VirtualThread", 23 },
				.frames = ev_frames,
				.depth = 2 },
			 ev;
	const uint8_t *p = buf;
	size_t n;

	(void)state;
	ctl_evwant_encode(buf, &w);
	assert_int_equal(ctl_evwant_decode(buf, CTL_EVWANT_SIZE, &got), 0);
	assert_int_equal(got.on, FGP_EVM_VTHREAD);
	w.on = FGP_EVM_VTHREAD | FGP_EVM_VMOUNT;
	ctl_evwant_encode(buf, &w);
	assert_int_equal(ctl_evwant_decode(buf, CTL_EVWANT_SIZE, &got), 0);
	assert_int_equal(got.on, FGP_EVM_VTHREAD | FGP_EVM_VMOUNT);
	assert_true(jvm_evwant_line(&w, 1, (char *)buf, sizeof(buf)) > 0);
	assert_non_null(strstr((char *)buf, " vthread vmount"));
	assert_null(strstr((char *)buf, " vtid"));
	w.on |= FGP_EVM_VTID;
	ctl_evwant_encode(buf, &w);
	assert_int_equal(ctl_evwant_decode(buf, CTL_EVWANT_SIZE, &got), 0);
	assert_int_equal(got.on, FGP_EVM_VTHREAD | FGP_EVM_VMOUNT | FGP_EVM_VTID);
	assert_true(jvm_evwant_line(&w, 1, (char *)buf, sizeof(buf)) > 0);
	assert_non_null(strstr((char *)buf, " vthread vmount vtid"));
	/* ring: only with alloc, through the daemon too */
	assert_null(strstr((char *)buf, " " ALLOCRING_WANT_WORD));
	w.on = FGP_EVM_ALLOC | FGP_EVM_RING;
	ctl_evwant_encode(buf, &w);
	assert_int_equal(ctl_evwant_decode(buf, CTL_EVWANT_SIZE, &got), 0);
	assert_int_equal(got.on, FGP_EVM_ALLOC | FGP_EVM_RING);
	assert_true(jvm_evwant_line(&w, 1, (char *)buf, sizeof(buf)) > 0);
	assert_non_null(strstr((char *)buf, " " ALLOCRING_WANT_WORD));
	n = ctl_event_encode(buf, sizeof(buf), &vw);
	vw.depth = 0;
	n += ctl_event_encode(buf + n, sizeof(buf) - n, &vw);
	assert_int_equal(ctl_event_decode(&p, buf + n, 42, &ev, &b), 1);
	assert_int_equal(ev.kind, FGP_EV_VWAIT);
	assert_true(ev.interval == 3 * FGP_VWAIT_ONE);
	assert_true(ev.tag == (100 | 8ull << 40));
	assert_int_equal(ev.depth, 2);
	assert_memory_equal(ev.frames[1].name, "Main::main", 10);
	assert_int_equal(ctl_event_decode(&p, buf + n, 42, &ev, &b), 1);
	assert_int_equal(ev.kind, FGP_EV_VWAIT);
	assert_int_equal(ev.depth, 0);
	assert_int_equal(ev.value, 8000000);
	assert_int_equal(ctl_event_decode(&p, buf + n, 42, &ev, &b), 0);
}

/* Every truncation of the three items: what decodes is whole, the rest is refused. */
static void test_every_truncated_events_payload(void **state)
{
	static struct ctl_ev_buf b;
	uint8_t buf[1024];
	size_t n = three_events(buf, sizeof(buf));

	(void)state;
	for (size_t len = 0; len < n; len++) {
		uint8_t *c = exact(buf, len);
		const uint8_t *p = c;
		struct jvm_event ev;
		int rv, items = 0;

		while ((rv = ctl_event_decode(&p, c + len, 1, &ev, &b)) == 1)
			items++;
		assert_true(items < 4);
		/* Cut at an item's end: a clean end; anywhere else: refused. */
		assert_int_equal(rv, p == c + len ? 0 : -EPROTO);
		free(c);
	}
}

/* Every single-byte mutation: decoding stays inside the payload (ASan) and stops or goes on. */
static void test_every_single_byte_mutation_of_events(void **state)
{
	static struct ctl_ev_buf b;
	uint8_t buf[1024];
	size_t n = three_events(buf, sizeof(buf));

	(void)state;
	for (size_t i = 0; i < n; i++) {
		for (unsigned v = 0; v < 256; v += 17) {
			uint8_t *c = exact(buf, n);
			const uint8_t *p = c;
			struct jvm_event ev;

			c[i] = (uint8_t)v;
			while (ctl_event_decode(&p, c + n, 1, &ev, &b) == 1) {
				assert_true(p <= c + n);
				if (ev.type == JVM_EV_STACK)
					assert_true(ev.depth <= FGP_MAX_EVENT_DEPTH);
				if (ev.type == JVM_EV_FREE)
					assert_true(ev.ntags >= 1 && ev.ntags <= FGP_MAX_FREE_TAGS);
			}
			free(c);
		}
	}
}

/* A stack too deep for the room left loses its outermost frames, and says so. */
static void test_a_stack_that_does_not_fit_is_cut_at_its_outer_end(void **state)
{
	static struct ctl_ev_buf b;
	struct jvm_ev_frame fr[100];
	struct jvm_event st = { .type = JVM_EV_STACK,
				.kind = FGP_EV_LOCK,
				.value = 10,
				.cls = { "java.lang.Object", 16 },
				.frames = fr,
				.depth = 100 };
	uint8_t buf[400];
	const uint8_t *p = buf;
	struct jvm_event ev;
	size_t n;

	(void)state;
	for (int i = 0; i < 100; i++)
		fr[i] = (struct jvm_ev_frame){ "Deep::frame", 11, i };
	n = ctl_event_encode(buf, sizeof(buf), &st);
	assert_true(n > 0 && n <= sizeof(buf));
	assert_int_equal(ctl_event_decode(&p, buf + n, 1, &ev, &b), 1);
	assert_true(ev.depth > 0 && ev.depth < 100);
	assert_true(ev.truncated);
	assert_int_equal(ev.frames[0].line, 0); /* the innermost ones are kept */
	assert_int_equal(ctl_event_encode(buf, 20, &st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jvm_payload_round_trips),
		cmocka_unit_test(test_every_truncated_jvm_payload_is_refused),
		cmocka_unit_test(test_every_single_byte_mutation_of_a_jvm_payload),
		cmocka_unit_test(test_random_mutations_of_jvm_payloads),
		cmocka_unit_test(test_long_strings_are_cut_to_the_fields),
		cmocka_unit_test(test_every_prefix_of_a_frame_needs_more),
		cmocka_unit_test(test_frame_sizes_out_of_range_are_refused),
		cmocka_unit_test(test_every_mutation_of_a_header),
		cmocka_unit_test(test_requests_of_the_wrong_length_are_refused),
		cmocka_unit_test(test_events_request_round_trips_and_is_clamped),
		cmocka_unit_test(test_events_wants_merge_the_budget_and_write_it),
		cmocka_unit_test(test_events_wants_merge_the_mounts_alone),
		cmocka_unit_test(test_events_round_trip),
		cmocka_unit_test(test_vthread_wants_and_waits_round_trip),
		cmocka_unit_test(test_every_truncated_events_payload),
		cmocka_unit_test(test_every_single_byte_mutation_of_events),
		cmocka_unit_test(test_a_stack_that_does_not_fit_is_cut_at_its_outer_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
