// SPDX-License-Identifier: MIT
/*
 * test_fgproto_events.c - the wire format of alloc, live and lock events (STACK_EVENT,
 * OBJECT_FREE, EVENTS): round trips, refusal of every invalid form by the encoder and the
 * decoder (the reader staying in step), the caps, and safe decoding of every truncation and of
 * random mutations.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "allocring.h"
#include "fgle.h"
#include "fgproto.h"

#define S(lit) ((struct fgp_str){ (lit), (uint16_t)(sizeof(lit) - 1) })
#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct fgp_frame_in good_frames[] = { { 7, 42 }, { 9, 0 }, { 11, 1234 } };

static const struct fgp_stack_event_in good_alloc = {
	.ts = 1000,
	.tid = 4242,
	.kind = FGP_EV_ALLOC,
	.flags = FGP_REC_STACK_TRUNCATED,
	.value = 24,
	.interval = 512 << 10,
	.tag = 0x1122334455667788ull,
	.cls = { "java.util.HashMap$Node[]", 24 },
	.depth = 3,
	.frames = good_frames,
};

static const struct fgp_stack_event_in good_lock = {
	.ts = 2000,
	.tid = 7,
	.kind = FGP_EV_LOCK,
	.value = 5000000,
	.interval = 1000,
	.cls = { "java.lang.Object", 16 },
	.depth = 1,
	.frames = good_frames,
};

static const uint64_t good_tags[] = { 1, 0xffffffffffffffffull, 3 };

static const struct fgp_events good_events = {
	.ts = 3000,
	.on = FGP_EVM_ALLOC | FGP_EVM_LIVE | FGP_EVM_LOCK,
	.alloc_interval = 512 << 10,
	.lock_threshold_ns = 1000,
	.dropped_queue = 5,
	.dropped_other = 6,
	.lock_short = 7,
	.lock_short_ns = 8000,
};

/* A virtual thread's wait: encoded only with a length and a chance of at most 1, and decoded
 * as it was sent. */
static void test_vwait_events_are_checked(void **state)
{
	struct fgp_stack_event_in e = {
		.ts = 4000,
		.tid = 9,
		.kind = FGP_EV_VWAIT,
		.value = 8000000,
		.interval = 4 * FGP_VWAIT_ONE,
		.tag = 1234 | 8ull << 40,
		.cls = { "java.lang.VirtualThread", 23 },
		.depth = 3,
		.frames = good_frames,
	};
	uint8_t buf[512];
	struct fgp_reader r;
	struct fgp_record rec;
	size_t off;

	(void)state;
	off = (size_t)fgp_encode_msg_header(buf, sizeof(buf));
	off += (size_t)fgp_encode_stack_event(buf + off, sizeof(buf) - off, &e);
	assert_int_equal(fgp_reader_init(&r, buf, off), 0);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.type, FGP_STACK_EVENT);
	assert_int_equal(rec.u.ev.kind, FGP_EV_VWAIT);
	assert_int_equal(rec.u.ev.value, 8000000);
	assert_int_equal(rec.u.ev.interval, 4 * FGP_VWAIT_ONE);
	assert_int_equal(rec.u.ev.tag, 1234 | 8ull << 40);
	e.interval = FGP_VWAIT_ONE - 1; /* a chance over 1 */
	assert_int_equal(fgp_encode_stack_event(buf, sizeof(buf), &e), -EINVAL);
	e.interval = FGP_VWAIT_ONE;
	e.value = 0; /* a wait of no length */
	assert_int_equal(fgp_encode_stack_event(buf, sizeof(buf), &e), -EINVAL);
}

/* An allocation's gap weight: carried after the frames, encoded and decoded only within
 * allocring_gap_ok() and only on an allocation; a record without the flag decodes weight 0. */
static void test_alloc_gap_weights_are_checked(void **state)
{
	struct fgp_stack_event_in e = good_alloc;
	uint8_t buf[512];
	struct fgp_reader r;
	struct fgp_record rec;
	size_t off;
	int n;

	(void)state;
	e.flags |= FGP_REC_ALLOC_GAP;
	e.weight = 3 * e.interval;
	off = (size_t)fgp_encode_msg_header(buf, sizeof(buf));
	n = fgp_encode_stack_event(buf + off, sizeof(buf) - off, &e);
	assert_true(n > 0);
	assert_int_equal((size_t)n, fgp_stack_event_size(&e));
	off += (size_t)n;
	assert_int_equal(fgp_reader_init(&r, buf, off), 0);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_true(rec.u.ev.weight == 3 * e.interval);
	assert_int_equal(rec.u.ev.depth, 3);
	/* a weight out of bounds in the bytes: refused */
	fgle_put64(buf + off - 8, e.value - 1);
	assert_int_equal(fgp_reader_init(&r, buf, off), 0);
	assert_int_equal(fgp_next(&r, &rec), -EBADMSG);
	fgle_put64(buf + off - 8, e.value + ALLOCRING_GAP_INTERVALS * e.interval + 1);
	assert_int_equal(fgp_reader_init(&r, buf, off), 0);
	assert_int_equal(fgp_next(&r, &rec), -EBADMSG);
	fgle_put64(buf + off - 8, e.value + ALLOCRING_GAP_INTERVALS * e.interval);
	assert_int_equal(fgp_reader_init(&r, buf, off), 0);
	assert_int_equal(fgp_next(&r, &rec), 1);
	/* nor encoded out of bounds, or on a lock */
	e.weight = e.value - 1;
	assert_int_equal(fgp_encode_stack_event(buf, sizeof(buf), &e), -EINVAL);
	e.weight = e.value + ALLOCRING_GAP_INTERVALS * e.interval + 1;
	assert_int_equal(fgp_encode_stack_event(buf, sizeof(buf), &e), -EINVAL);
	e = good_lock;
	e.flags = FGP_REC_ALLOC_GAP;
	e.weight = e.value;
	assert_int_equal(fgp_encode_stack_event(buf, sizeof(buf), &e), -EINVAL);
	/* no flag: weight 0, whatever the caller's field held */
	e = good_alloc;
	e.weight = 12345;
	off = (size_t)fgp_encode_msg_header(buf, sizeof(buf));
	off += (size_t)fgp_encode_stack_event(buf + off, sizeof(buf) - off, &e);
	assert_int_equal(fgp_reader_init(&r, buf, off), 0);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_true(rec.u.ev.weight == 0);
}

/* A virtual thread's mount: encoded only with a length, no chance and no stack, and decoded as
 * it was sent. */
static void test_vmount_events_are_checked(void **state)
{
	struct fgp_stack_event_in e = {
		.ts = 9000,
		.tid = 7,
		.kind = FGP_EV_VMOUNT,
		.value = 2000000,
		.interval = 1500000,
		.tag = 42,
		.cls = { "vt-worker-3", 11 },
	};
	uint8_t buf[512];
	struct fgp_reader r;
	struct fgp_record rec;
	size_t off;

	(void)state;
	off = (size_t)fgp_encode_msg_header(buf, sizeof(buf));
	off += (size_t)fgp_encode_stack_event(buf + off, sizeof(buf) - off, &e);
	assert_int_equal(fgp_reader_init(&r, buf, off), 0);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.u.ev.kind, FGP_EV_VMOUNT);
	assert_int_equal(rec.u.ev.value, 2000000);
	assert_int_equal(rec.u.ev.interval, 1500000);
	assert_int_equal(rec.u.ev.tid, 7);
	assert_int_equal(rec.u.ev.tag, 42);
	assert_int_equal(rec.u.ev.cls.len, 11);
	e.value = 0; /* a mount of no length */
	assert_int_equal(fgp_encode_stack_event(buf, sizeof(buf), &e), -EINVAL);
	e.value = 1000;
	e.interval = 1001; /* off the CPU longer than it was mounted */
	assert_int_equal(fgp_encode_stack_event(buf, sizeof(buf), &e), -EINVAL);
	e.interval = 1000;
	assert_int_equal(fgp_encode_stack_event(buf, sizeof(buf), &e) > 0, 1);
	e.depth = 3; /* a stack: none is sent with a mount */
	e.frames = good_frames;
	assert_int_equal(fgp_encode_stack_event(buf, sizeof(buf), &e), -EINVAL);
}

static size_t add(size_t off, int n)
{
	if (n <= 0)
		fail_msg("encode failed: %d", n);
	return off + (size_t)n;
}

/* UNLOAD(addr 1), STACK_EVENT alloc, STACK_EVENT lock, OBJECT_FREE, EVENTS, UNLOAD(addr 3). */
static size_t build_events_msg(uint8_t *buf, size_t cap)
{
	size_t off = (size_t)fgp_encode_msg_header(buf, cap);

	off = add(off,
		  fgp_encode_code_unload(buf + off, cap - off, &(struct fgp_code_unload){ 1, 2 }));
	off = add(off, fgp_encode_stack_event(buf + off, cap - off, &good_alloc));
	off = add(off, fgp_encode_stack_event(buf + off, cap - off, &good_lock));
	off = add(off, fgp_encode_object_free(buf + off, cap - off, good_tags, 3));
	off = add(off, fgp_encode_events(buf + off, cap - off, &good_events));
	off = add(off,
		  fgp_encode_code_unload(buf + off, cap - off, &(struct fgp_code_unload){ 3, 4 }));
	return off;
}

/* Decode a whole message, checking every accepted event record is readable inside buf. */
static int drain(const uint8_t *buf, size_t len)
{
	struct fgp_reader r;
	struct fgp_record rec;
	int rv, good = 0, guard = 0;

	if (fgp_reader_init(&r, buf, len) != 0)
		return -1;
	while ((rv = fgp_next(&r, &rec)) != 0) {
		assert_true(++guard < 10000);
		if (rv < 0)
			continue;
		good++;
		if (rec.type == FGP_STACK_EVENT) {
			const struct fgp_stack_event *e = &rec.u.ev;

			assert_true(e->kind == FGP_EV_ALLOC || e->kind == FGP_EV_LOCK ||
				    e->kind == FGP_EV_VWAIT);
			assert_true(e->depth <= FGP_MAX_EVENT_DEPTH && e->cls.len > 0);
			assert_true((const uint8_t *)e->cls.ptr + e->cls.len <= buf + len);
			assert_true(e->frames_raw + 8 * (size_t)e->depth <= buf + len);
			for (uint16_t i = 0; i < e->depth; i++) {
				uint32_t id;
				int32_t line;

				fgp_event_frame(e, i, &id, &line);
				assert_true(id != 0 && line >= 0);
			}
		} else if (rec.type == FGP_OBJECT_FREE) {
			assert_true(rec.u.freed.n >= 1 && rec.u.freed.n <= FGP_MAX_FREE_TAGS);
			assert_true(rec.u.freed.tags_raw + 8 * (size_t)rec.u.freed.n <= buf + len);
			for (uint32_t i = 0; i < rec.u.freed.n; i++)
				(void)fgp_free_tag(&rec.u.freed, i);
		}
	}
	return good;
}

static int str_eq(struct fgp_str s, const char *want)
{
	return s.len == strlen(want) && memcmp(s.ptr, want, s.len) == 0;
}

static void check_event(const struct fgp_record *rec, const struct fgp_stack_event_in *in)
{
	const struct fgp_stack_event *e = &rec->u.ev;

	assert_int_equal(rec->type, FGP_STACK_EVENT);
	assert_int_equal(rec->flags, in->flags);
	assert_int_equal(rec->size, fgp_stack_event_size(in));
	assert_int_equal(e->ts, in->ts);
	assert_int_equal(e->tid, in->tid);
	assert_int_equal(e->kind, in->kind);
	assert_int_equal(e->value, in->value);
	assert_int_equal(e->interval, in->interval);
	assert_int_equal(e->tag, in->tag);
	assert_int_equal(e->cls.len, in->cls.len);
	assert_memory_equal(e->cls.ptr, in->cls.ptr, in->cls.len);
	assert_int_equal(e->depth, in->depth);
	for (uint16_t i = 0; i < in->depth; i++) {
		uint32_t id;
		int32_t line;

		fgp_event_frame(e, i, &id, &line);
		assert_int_equal(id, in->frames[i].method_id);
		assert_int_equal(line, in->frames[i].line);
	}
}

static void test_event_records_round_trip(void **state)
{
	uint8_t buf[1024];
	size_t len = build_events_msg(buf, sizeof(buf));
	struct fgp_reader r;
	struct fgp_record rec;

	(void)state;
	assert_int_equal(fgp_stack_event_size(&good_alloc), FGP_REC_HEADER_SIZE + 40 + 2 + 24 + 24);
	assert_int_equal(fgp_object_free_size(3), FGP_REC_HEADER_SIZE + 8 + 24);
	assert_int_equal(fgp_reader_init(&r, buf, len), 0);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(fgp_next(&r, &rec), 1);
	check_event(&rec, &good_alloc);
	assert_int_equal(fgp_next(&r, &rec), 1);
	check_event(&rec, &good_lock);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.type, FGP_OBJECT_FREE);
	assert_int_equal(rec.size, fgp_object_free_size(3));
	assert_int_equal(rec.u.freed.n, 3);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(fgp_free_tag(&rec.u.freed, i), good_tags[i]);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.type, FGP_EVENTS);
	assert_int_equal(rec.size, FGP_EVENTS_SIZE);
	assert_int_equal(rec.flags, 0);
	assert_memory_equal(&rec.u.events, &good_events, sizeof(good_events));
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.u.unload.addr, 3);
	assert_int_equal(fgp_next(&r, &rec), 0);
	assert_string_equal(fgp_type_name(FGP_STACK_EVENT), "stack-event");
	assert_string_equal(fgp_type_name(FGP_OBJECT_FREE), "object-free");
	assert_string_equal(fgp_type_name(FGP_EVENTS), "events");
}

/* Accepted edges: no frames, every event off, a lock wait equal to its threshold (0 too). */
static void test_event_edges_are_accepted(void **state)
{
	struct fgp_stack_event_in e = good_lock;
	struct fgp_events ev = { .ts = 1 };
	uint8_t buf[256];
	struct fgp_record rec;
	int n;

	(void)state;
	e.depth = 0;
	e.frames = NULL;
	e.value = e.interval;
	n = fgp_encode_stack_event(buf, sizeof(buf), &e);
	assert_int_equal(n, FGP_REC_HEADER_SIZE + 42 + 16);
	assert_int_equal(fgp_decode_record(buf, (size_t)n, &rec), 1);
	check_event(&rec, &e);
	e.value = e.interval = 0;
	n = fgp_encode_stack_event(buf, sizeof(buf), &e);
	assert_int_equal(fgp_decode_record(buf, (size_t)n, &rec), 1);
	n = fgp_encode_events(buf, sizeof(buf), &ev);
	assert_int_equal(n, FGP_EVENTS_SIZE);
	assert_int_equal(fgp_decode_record(buf, (size_t)n, &rec), 1);
	assert_int_equal(rec.u.events.on, 0);
	ev.on = FGP_EVM_LOCK; /* lock alone needs no alloc interval */
	n = fgp_encode_events(buf, sizeof(buf), &ev);
	assert_int_equal(fgp_decode_record(buf, (size_t)n, &rec), 1);
}

/* ALLOC_COST: its counts round trip; a header flag or a byte more or less is refused. */
static void test_alloc_cost_round_trips(void **state)
{
	const struct fgp_alloc_cost in = {
		.ts = 7, .samples = 1000, .cost_ns = 8000000, .cpu_ns = UINT64_MAX
	};
	uint8_t buf[FGP_ALLOC_COST_SIZE + 8];
	struct fgp_record rec;
	int n;

	(void)state;
	assert_int_equal(FGP_ALLOC_COST_SIZE, 8 + 32);
	assert_string_equal(fgp_type_name(FGP_ALLOC_COST), "alloc-cost");
	assert_int_equal(fgp_encode_alloc_cost(buf, FGP_ALLOC_COST_SIZE - 1, &in), -ENOSPC);
	n = fgp_encode_alloc_cost(buf, sizeof(buf), &in);
	assert_int_equal(n, FGP_ALLOC_COST_SIZE);
	assert_int_equal(fgp_decode_record(buf, (size_t)n, &rec), 1);
	assert_int_equal(rec.type, FGP_ALLOC_COST);
	assert_int_equal(rec.u.cost.ts, 7);
	assert_int_equal(rec.u.cost.samples, 1000);
	assert_int_equal(rec.u.cost.cost_ns, 8000000);
	assert_true(rec.u.cost.cpu_ns == UINT64_MAX);
	buf[2] = 1; /* a flag */
	assert_int_equal(fgp_decode_record(buf, (size_t)n, &rec), -EBADMSG);
	buf[2] = 0;
	buf[4] = (uint8_t)(n - 1); /* a byte short */
	assert_int_equal(fgp_decode_record(buf, (size_t)n - 1, &rec), -EBADMSG);
	buf[4] = (uint8_t)(n + 1); /* a byte more */
	buf[n] = 0;
	assert_int_equal(fgp_decode_record(buf, (size_t)n + 1, &rec), -EBADMSG);
}

/* The caps: the deepest stack with the longest class, the most tags; one more is refused. */
static void test_event_caps_hold_both_ways(void **state)
{
	static struct fgp_frame_in frames[FGP_MAX_EVENT_DEPTH + 1];
	static uint64_t tags[FGP_MAX_FREE_TAGS + 1];
	static char cls[FGP_MAX_STR + 10];
	static uint8_t buf[64 << 10];
	struct fgp_stack_event_in e = good_alloc;
	struct fgp_record rec;
	int n;

	(void)state;
	for (unsigned i = 0; i <= FGP_MAX_EVENT_DEPTH; i++)
		frames[i] = (struct fgp_frame_in){ i + 1, (int32_t)i };
	for (unsigned i = 0; i <= FGP_MAX_FREE_TAGS; i++)
		tags[i] = i + 1;
	memset(cls, 'C', sizeof(cls));
	e.frames = frames;
	e.depth = FGP_MAX_EVENT_DEPTH;
	e.cls = (struct fgp_str){ cls, (uint16_t)sizeof(cls) }; /* truncated to FGP_MAX_STR */
	n = fgp_encode_stack_event(buf, sizeof(buf), &e);
	assert_int_equal(n, FGP_REC_HEADER_SIZE + 42 + FGP_MAX_STR + 8 * FGP_MAX_EVENT_DEPTH);
	assert_int_equal((size_t)n, fgp_stack_event_size(&e));
	assert_int_equal(fgp_decode_record(buf, (size_t)n, &rec), 1);
	assert_int_equal(rec.u.ev.depth, FGP_MAX_EVENT_DEPTH);
	assert_int_equal(rec.u.ev.cls.len, FGP_MAX_STR);
	/* one frame more: the encoder refuses, and so does the decoder of such bytes */
	e.depth = FGP_MAX_EVENT_DEPTH + 1;
	assert_int_equal(fgp_encode_stack_event(buf, sizeof(buf), &e), -EINVAL);
	e.depth = FGP_MAX_EVENT_DEPTH;
	n = fgp_encode_stack_event(buf, sizeof(buf), &e);
	fgle_put64(buf + n, 0x0000000100000001ull);
	fgle_put32(buf + 4, (uint32_t)n + 8);
	fgle_put16(buf + FGP_REC_HEADER_SIZE + 14, FGP_MAX_EVENT_DEPTH + 1);
	assert_int_equal(fgp_decode_record(buf, (size_t)n + 8, &rec), -EBADMSG);
	fgle_put16(buf + FGP_REC_HEADER_SIZE + 14, FGP_MAX_EVENT_DEPTH);
	assert_int_equal(fgp_decode_record(buf, (size_t)n + 8, &rec), -EBADMSG); /* trailing */

	n = fgp_encode_object_free(buf, sizeof(buf), tags, FGP_MAX_FREE_TAGS);
	assert_int_equal((size_t)n, fgp_object_free_size(FGP_MAX_FREE_TAGS));
	assert_int_equal(fgp_decode_record(buf, (size_t)n, &rec), 1);
	assert_int_equal(rec.u.freed.n, FGP_MAX_FREE_TAGS);
	assert_int_equal(fgp_free_tag(&rec.u.freed, FGP_MAX_FREE_TAGS - 1), FGP_MAX_FREE_TAGS);
	assert_int_equal(fgp_encode_object_free(buf, sizeof(buf), tags, FGP_MAX_FREE_TAGS + 1),
			 -EINVAL);
	fgle_put64(buf + n, 99);
	fgle_put32(buf + 4, (uint32_t)n + 8);
	fgle_put32(buf + FGP_REC_HEADER_SIZE, FGP_MAX_FREE_TAGS + 1);
	assert_int_equal(fgp_decode_record(buf, (size_t)n + 8, &rec), -EBADMSG);
}

static void test_class_names_are_sanitised(void **state)
{
	struct fgp_stack_event_in e = good_lock;
	uint8_t buf[256];
	struct fgp_record rec;
	int n;

	(void)state;
	e.cls = S("a\nb\x7f");
	n = fgp_encode_stack_event(buf, sizeof(buf), &e);
	assert_int_equal(fgp_decode_record(buf, (size_t)n, &rec), 1);
	assert_true(str_eq(rec.u.ev.cls, "a?b?"));
}

static void test_invalid_events_are_not_encoded(void **state)
{
	struct fgp_frame_in frames[3];
	uint8_t buf[512];

	(void)state;
	for (int m = 0; m < 14; m++) {
		struct fgp_stack_event_in e = m < 7 ? good_alloc : good_lock;

		memcpy(frames, good_frames, sizeof(frames));
		e.frames = frames;
		switch (m) {
		case 0:
			e.kind = 0;
			break;
		case 1:
			e.kind = FGP_EV_VMOUNT + 1;
			break;
		case 2:
			e.value = 0; /* an object of no size */
			break;
		case 3:
			e.interval = 0;
			break;
		case 4:
			e.cls = S("");
			break;
		case 5:
			e.cls = (struct fgp_str){ NULL, 5 };
			break;
		case 6:
			e.flags = FGP_REC_REPLAY;
			break;
		case 7:
			e.value = e.interval - 1; /* a wait below the threshold */
			break;
		case 8:
			e.tag = 1; /* a lock tracks no object */
			break;
		case 9:
			frames[0].method_id = 0;
			break;
		case 10:
			frames[0].line = -1;
			break;
		case 11:
			e.frames = NULL;
			break;
		case 12:
			e.flags = FGP_REC_STACK_TRUNCATED | FGP_REC_AGAIN;
			break;
		default:
			e.depth = FGP_MAX_EVENT_DEPTH + 1;
			break;
		}
		if (fgp_encode_stack_event(buf, sizeof(buf), &e) != -EINVAL)
			fail_msg("stack event mutation %d encoded", m);
	}
	assert_int_equal(fgp_encode_object_free(buf, sizeof(buf), good_tags, 0), -EINVAL);
	assert_int_equal(fgp_encode_object_free(buf, sizeof(buf), NULL, 1), -EINVAL);
	for (int m = 0; m < 4; m++) {
		static const uint32_t on[] = { 1u << 30, FGP_EVM_ALLOC | FGP_EVM_LOCK, FGP_EVM_LIVE,
					       FGP_EVM_ALLOC };
		struct fgp_events ev = good_events;

		ev.on = on[m];
		if (m > 0)
			ev.alloc_interval = 0;
		if (fgp_encode_events(buf, sizeof(buf), &ev) != -EINVAL)
			fail_msg("events mutation %d encoded", m);
	}
}

/*
 * Offsets in build_events_msg's buffer: after the header and the first UNLOAD, the record of
 * index i (0 alloc, 1 lock, 2 free, 3 events).
 */
static size_t rec_at(const uint8_t *buf, int i)
{
	size_t off = FGP_MSG_HEADER_SIZE + FGP_CODE_UNLOAD_SIZE;

	while (i-- > 0)
		off += fgp_rec_size(buf + off);
	return off;
}

/* Write v (width bytes) at offset off of record i's header+body: that record alone is
 * refused, the others decode and the reader stays in step to the last UNLOAD. */
static void check_bad(int i, size_t off, int width, uint64_t v)
{
	uint8_t buf[1024];
	size_t len = build_events_msg(buf, sizeof(buf)), at = rec_at(buf, i);
	struct fgp_reader r;
	struct fgp_record rec;
	int rv, bad = 0, good = 0;

	for (int b = 0; b < width; b++)
		buf[at + off + (size_t)b] = (uint8_t)(v >> (8 * b));
	assert_int_equal(fgp_reader_init(&r, buf, len), 0);
	while ((rv = fgp_next(&r, &rec)) != 0) {
		if (rv < 0) {
			bad++;
			continue;
		}
		good++;
	}
	if (bad != 1 || good != 5 || rec.type != FGP_CODE_UNLOAD || rec.u.unload.addr != 3)
		fail_msg("record %d, offset %zu = %llx: %d bad, %d good", i, off,
			 (unsigned long long)v, bad, good);
}

#define B (FGP_REC_HEADER_SIZE) /* body offset */

static void test_invalid_event_bytes_are_refused_in_step(void **state)
{
	static const struct {
		int rec;
		size_t off;
		int width;
		uint64_t v;
	} muts[] = {
		{ 0, 2, 2, FGP_REC_REPLAY },		    /* alloc: a flag events never have */
		{ 0, 2, 2, FGP_REC_STACK_TRUNCATED | 32 },  /* unknown flag */
		{ 0, B + 12, 2, 0 },			    /* kind 0 */
		{ 0, B + 12, 2, 3 },			    /* unknown kind */
		{ 0, B + 16, 8, 0 },			    /* alloc of 0 bytes */
		{ 0, B + 24, 8, 0 },			    /* interval 0 */
		{ 0, B + 14, 2, 4 },			    /* more frames than bytes */
		{ 0, B + 14, 2, 2 },			    /* fewer: trailing bytes */
		{ 0, B + 14, 2, FGP_MAX_EVENT_DEPTH + 1 },  /* over the cap */
		{ 0, B + 14, 2, 0xffff },		    /* far over */
		{ 0, B + 40, 2, 0 },			    /* empty class (and trailing bytes) */
		{ 0, B + 40, 2, 0xffff },		    /* class longer than the record */
		{ 0, B + 42 + 3, 1, '\n' },		    /* control byte in the class */
		{ 0, B + 42 + 24, 4, 0 },		    /* frame 0's method id 0 */
		{ 0, B + 42 + 24 + 16 + 4, 4, 0x80000000 }, /* frame 2's line negative */
		{ 1, B + 12, 2, FGP_EV_ALLOC + 7 },	    /* lock: unknown kind */
		{ 1, B + 32, 8, 1 },			    /* lock with a tag */
		{ 1, B + 16, 8, 999 },			    /* waited less than the threshold */
		{ 1, 2, 2, FGP_REC_REPLAY },
		{ 2, 2, 2, FGP_REC_REPLAY }, /* free: no flags */
		{ 2, B, 4, 0 },		     /* no tags */
		{ 2, B, 4, 4 },		     /* more tags than bytes */
		{ 2, B, 4, 2 },		     /* fewer: trailing bytes */
		{ 2, B, 4, FGP_MAX_FREE_TAGS + 1 },
		{ 2, B, 4, 0xffffffff },
		{ 3, 2, 2, FGP_REC_REPLAY }, /* events: no flags */
		{ 3, B + 8, 4, 1u << 30 },   /* an unknown event */
		{ 3, B + 8, 4, 0x80000000 }, /* another */
		{ 3, B + 16, 8, 0 },	     /* alloc on with interval 0 */
	};

	(void)state;
	for (size_t i = 0; i < N(muts); i++)
		check_bad(muts[i].rec, muts[i].off, muts[i].width, muts[i].v);
}

/* Sizes that do not match the body: shorter or longer EVENTS and OBJECT_FREE are refused. */
static void test_event_records_of_the_wrong_size_are_refused(void **state)
{
	uint8_t buf[256];
	struct fgp_record rec;
	int n;

	(void)state;
	n = fgp_encode_events(buf, sizeof(buf), &good_events);
	for (int d = -8; d <= 8; d++) {
		uint32_t size = (uint32_t)(n + d);

		if (d == 0)
			continue;
		fgle_put32(buf + 4, size);
		assert_int_equal(fgp_decode_record(buf, size, &rec), -EBADMSG);
	}
	n = fgp_encode_object_free(buf, sizeof(buf), good_tags, 3);
	for (int d = -8; d <= 8; d++) {
		uint32_t size = (uint32_t)(n + d);

		if (d == 0)
			continue;
		fgle_put32(buf + 4, size);
		assert_int_equal(fgp_decode_record(buf, size, &rec), -EBADMSG);
	}
}

static void test_event_truncations_and_mutations_are_decoded_safely(void **state)
{
	uint8_t all[1024];
	size_t len = build_events_msg(all, sizeof(all));
	unsigned seed = 777;
	int full = drain(all, len);

	(void)state;
	assert_int_equal(full, 6);
	for (size_t cut = 0; cut < len; cut++) {
		uint8_t *p = malloc(cut ? cut : 1);

		assert_non_null(p);
		memcpy(p, all, cut);
		assert_true(drain(p, cut) < full);
		free(p);
	}
	for (int iter = 0; iter < 100000; iter++) {
		uint8_t *p = malloc(len);
		int flips = 1 + (int)(rand_r(&seed) % 3);

		assert_non_null(p);
		memcpy(p, all, len);
		for (int f = 0; f < flips; f++) {
			size_t at = (size_t)rand_r(&seed) % len;

			if (rand_r(&seed) & 1)
				p[at] ^= (uint8_t)(1u << (rand_r(&seed) % 8));
			else
				p[at] = (uint8_t)rand_r(&seed);
		}
		drain(p, len);
		free(p);
	}
}

static int enc_alloc(uint8_t *dst, size_t cap)
{
	return fgp_encode_stack_event(dst, cap, &good_alloc);
}

static int enc_lock(uint8_t *dst, size_t cap)
{
	return fgp_encode_stack_event(dst, cap, &good_lock);
}

static int enc_free(uint8_t *dst, size_t cap)
{
	return fgp_encode_object_free(dst, cap, good_tags, 3);
}

static int enc_events(uint8_t *dst, size_t cap)
{
	return fgp_encode_events(dst, cap, &good_events);
}

static void test_event_encoders_refuse_a_buffer_one_byte_short(void **state)
{
	static int (*const encoders[])(uint8_t *, size_t) = { enc_alloc, enc_lock, enc_free,
							      enc_events };
	uint8_t want[512], buf[512], untouched[512];

	(void)state;
	memset(untouched, 0xa5, sizeof(untouched));
	for (size_t i = 0; i < N(encoders); i++) {
		int n = encoders[i](want, sizeof(want));

		assert_true(n > 0 && (size_t)n < sizeof(buf));
		for (size_t cap = 0; cap < (size_t)n; cap++) {
			memset(buf, 0xa5, sizeof(buf));
			assert_int_equal(encoders[i](buf, cap), -ENOSPC);
			assert_memory_equal(buf + cap, untouched, sizeof(buf) - cap);
		}
		memset(buf, 0xa5, sizeof(buf));
		assert_int_equal(encoders[i](buf, (size_t)n), n);
		assert_memory_equal(buf, want, (size_t)n);
		assert_memory_equal(buf + n, untouched, sizeof(buf) - (size_t)n);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_records_round_trip),
		cmocka_unit_test(test_event_edges_are_accepted),
		cmocka_unit_test(test_event_caps_hold_both_ways),
		cmocka_unit_test(test_class_names_are_sanitised),
		cmocka_unit_test(test_invalid_events_are_not_encoded),
		cmocka_unit_test(test_invalid_event_bytes_are_refused_in_step),
		cmocka_unit_test(test_event_records_of_the_wrong_size_are_refused),
		cmocka_unit_test(test_event_truncations_and_mutations_are_decoded_safely),
		cmocka_unit_test(test_vwait_events_are_checked),
		cmocka_unit_test(test_alloc_gap_weights_are_checked),
		cmocka_unit_test(test_vmount_events_are_checked),
		cmocka_unit_test(test_event_encoders_refuse_a_buffer_one_byte_short),
		cmocka_unit_test(test_alloc_cost_round_trips),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
