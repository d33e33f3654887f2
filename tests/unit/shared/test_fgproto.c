// SPDX-License-Identifier: MIT
/*
 * test_fgproto.c - the wire format: round trips of every record type, refusal of every
 * malformed form, and a decoder that survives every truncation and random mutation.
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

#include "fgproto.h"

#define S(lit) ((struct fgp_str){ (lit), (uint16_t)(sizeof(lit) - 1) })

static const uint16_t chain0[] = { 1, 0 };
static const uint16_t chain1[] = { 2, 1, 0 };
static const uint16_t chain2[] = { 0 };

/* A message holding one record of every type, built with the public encoders. */
static size_t build_all(uint8_t *buf, size_t cap)
{
	struct fgp_str methods[] = { S("Hot::loop"), S("Hot::inner"), S("Hot::leaf") };
	struct fgp_pc_in pcs[] = {
		{ 0x10, 2, chain0 },
		{ 0x40, 3, chain1 },
		{ 0x80, 1, chain2 },
	};
	struct fgp_hello h = { FGP_VERSION,
			       1,
			       FGP_HELLO_PRESERVE_FRAME_POINTER,
			       111,
			       S("17.0.15+6"),
			       S("0.1.0"),
			       S("checkout"),
			       0x1234567890abcdefull };
	struct fgp_code_load_in l = { 0x7f0000001000, 0x100, 222, 0, S("Hot::loop"), 3,
				      methods,	      3,     pcs };
	struct fgp_code_unload u = { 0x7f0000001000, 333 };
	struct fgp_dynamic_code d = { 0x7f0000002000, 0x40, 444, S("Interpreter") };
	struct fgp_snapshot sb = { 555, 2 }, se = { 556, 2 };
	struct fgp_dropped dr = { 666, 7, 8 };
	size_t off = 0;
	int n;

	n = fgp_encode_msg_header(buf, cap);
	assert_int_equal(n, FGP_MSG_HEADER_SIZE);
	off += (size_t)n;
	n = fgp_encode_hello(buf + off, cap - off, &h);
	assert_int_equal(n, (int)fgp_hello_size(&h));
	off += (size_t)n;
	n = fgp_encode_snapshot(buf + off, cap - off, FGP_SNAPSHOT_BEGIN, &sb);
	assert_int_equal(n, FGP_SNAPSHOT_SIZE);
	off += (size_t)n;
	n = fgp_encode_code_load(buf + off, cap - off, &l);
	assert_int_equal(n, (int)fgp_code_load_size(&l));
	off += (size_t)n;
	n = fgp_encode_dynamic_code(buf + off, cap - off, &d);
	assert_int_equal(n, (int)fgp_dynamic_code_size(&d));
	off += (size_t)n;
	n = fgp_encode_snapshot(buf + off, cap - off, FGP_SNAPSHOT_END, &se);
	off += (size_t)n;
	n = fgp_encode_code_unload(buf + off, cap - off, &u);
	assert_int_equal(n, FGP_CODE_UNLOAD_SIZE);
	off += (size_t)n;
	n = fgp_encode_dropped(buf + off, cap - off, &dr);
	assert_int_equal(n, FGP_DROPPED_SIZE);
	off += (size_t)n;
	/* Interned: two NAMEs, then a load that refers to them (ids 7 and 9). */
	{
		static const uint32_t ids[] = { 7, 9 };
		static const uint16_t ch[] = { 1, 0 };
		struct fgp_pc_in ipcs[] = { { 0x20, 2, ch }, { 0x30, 1, chain2 } };
		struct fgp_code_load_ids_in li = {
			0x7f0000003000, 0x80, 777, 0, 7, 2, ids, 2, ipcs
		};

		n = fgp_encode_name(buf + off, cap - off, 7, S("Hot::caller"));
		assert_int_equal(n, (int)fgp_name_size(S("Hot::caller")));
		off += (size_t)n;
		n = fgp_encode_name(buf + off, cap - off, 9, S("Hot::callee"));
		off += (size_t)n;
		n = fgp_encode_code_load_ids(buf + off, cap - off, &li);
		assert_int_equal(n, (int)fgp_code_load_ids_size(&li));
		off += (size_t)n;
	}
	return off;
}

static int str_eq(struct fgp_str s, const char *want)
{
	return s.len == strlen(want) && memcmp(s.ptr, want, s.len) == 0;
}

static void test_every_record_type_round_trips(void **state)
{
	uint8_t buf[1024];
	size_t len = build_all(buf, sizeof(buf));
	struct fgp_reader r;
	struct fgp_record rec;
	struct fgp_inline_iter it;
	struct fgp_str s;
	struct fgp_pc pc;

	(void)state;
	assert_int_equal(fgp_reader_init(&r, buf, len), 0);

	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.type, FGP_HELLO);
	assert_int_equal(rec.u.hello.pid, 1);
	assert_int_equal(rec.u.hello.flags, FGP_HELLO_PRESERVE_FRAME_POINTER);
	assert_int_equal(rec.u.hello.ts, 111);
	assert_true(str_eq(rec.u.hello.jvm_version, "17.0.15+6"));
	assert_true(str_eq(rec.u.hello.agent_version, "0.1.0"));
	assert_true(str_eq(rec.u.hello.service, "checkout"));
	assert_int_equal(rec.u.hello.token, 0x1234567890abcdefull);

	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.type, FGP_SNAPSHOT_BEGIN);
	assert_int_equal(rec.u.snap.ts, 555);
	assert_int_equal(rec.u.snap.count, 2);

	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.type, FGP_CODE_LOAD);
	assert_int_equal(rec.u.load.addr, 0x7f0000001000);
	assert_int_equal(rec.u.load.size, 0x100);
	assert_int_equal(rec.u.load.ts, 222);
	assert_true(str_eq(rec.u.load.name, "Hot::loop"));
	assert_int_equal(rec.u.load.n_methods, 3);
	fgp_methods_begin(&rec.u.load, &it);
	assert_int_equal(fgp_methods_next(&it, &s), 1);
	assert_true(str_eq(s, "Hot::loop"));
	assert_int_equal(fgp_methods_next(&it, &s), 1);
	assert_true(str_eq(s, "Hot::inner"));
	assert_int_equal(fgp_methods_next(&it, &s), 1);
	assert_true(str_eq(s, "Hot::leaf"));
	assert_int_equal(fgp_methods_next(&it, &s), 0);
	fgp_pcs_begin(&rec.u.load, &it);
	assert_int_equal(fgp_pcs_next(&it, &pc), 1);
	assert_int_equal(pc.pc_off, 0x10);
	assert_int_equal(pc.depth, 2);
	assert_int_equal(fgp_pc_method(&pc, 0), 1);
	assert_int_equal(fgp_pc_method(&pc, 1), 0);
	assert_int_equal(fgp_pcs_next(&it, &pc), 1);
	assert_int_equal(pc.pc_off, 0x40);
	assert_int_equal(pc.depth, 3);
	assert_int_equal(fgp_pc_method(&pc, 0), 2);
	assert_int_equal(fgp_pcs_next(&it, &pc), 1);
	assert_int_equal(pc.depth, 1);
	assert_int_equal(fgp_pcs_next(&it, &pc), 0);

	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.type, FGP_DYNAMIC_CODE);
	assert_int_equal(rec.u.dyn.addr, 0x7f0000002000);
	assert_int_equal(rec.u.dyn.size, 0x40);
	assert_true(str_eq(rec.u.dyn.name, "Interpreter"));

	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.type, FGP_SNAPSHOT_END);

	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.type, FGP_CODE_UNLOAD);
	assert_int_equal(rec.u.unload.addr, 0x7f0000001000);
	assert_int_equal(rec.u.unload.ts, 333);

	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.type, FGP_DROPPED);
	assert_int_equal(rec.u.dropped.queue_full, 7);
	assert_int_equal(rec.u.dropped.table_full, 8);

	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.type, FGP_NAME);
	assert_int_equal(rec.u.name.id, 7);
	assert_true(str_eq(rec.u.name.name, "Hot::caller"));
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.u.name.id, 9);

	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.type, FGP_CODE_LOAD_IDS);
	assert_int_equal(rec.u.load.addr, 0x7f0000003000);
	assert_int_equal(rec.u.load.size, 0x80);
	assert_int_equal(rec.u.load.ts, 777);
	assert_int_equal(rec.u.load.name_id, 7);
	assert_null(rec.u.load.name.ptr);
	assert_int_equal(rec.u.load.n_methods, 2);
	assert_int_equal(fgp_load_method_id(&rec.u.load, 0), 7);
	assert_int_equal(fgp_load_method_id(&rec.u.load, 1), 9);
	assert_int_equal(rec.u.load.n_pcs, 2);
	fgp_pcs_begin(&rec.u.load, &it);
	assert_int_equal(fgp_pcs_next(&it, &pc), 1);
	assert_int_equal(pc.pc_off, 0x20);
	assert_int_equal(pc.depth, 2);
	assert_int_equal(fgp_pc_method(&pc, 0), 1);

	assert_int_equal(fgp_next(&r, &rec), 0);
	assert_int_equal(fgp_next(&r, &rec), 0);
}

static void test_bad_message_headers_are_refused(void **state)
{
	uint8_t buf[16];
	struct fgp_reader r;

	(void)state;
	assert_int_equal(fgp_encode_msg_header(buf, sizeof(buf)), FGP_MSG_HEADER_SIZE);
	assert_int_equal(fgp_reader_init(&r, buf, FGP_MSG_HEADER_SIZE - 1), -EPROTO);
	assert_int_equal(fgp_reader_init(&r, NULL, 0), -EPROTO);
	buf[0] = 'X';
	assert_int_equal(fgp_reader_init(&r, buf, FGP_MSG_HEADER_SIZE), -EPROTO);
	buf[0] = 'F';
	buf[4] = 2;
	assert_int_equal(fgp_reader_init(&r, buf, FGP_MSG_HEADER_SIZE), -EPROTONOSUPPORT);
	buf[4] = FGP_VERSION;
	buf[6] = 9;
	assert_int_equal(fgp_reader_init(&r, buf, FGP_MSG_HEADER_SIZE), -EPROTO);
	buf[6] = FGP_MSG_HEADER_SIZE;
	assert_int_equal(fgp_reader_init(&r, buf, FGP_MSG_HEADER_SIZE), 0);
	assert_int_equal(r.off, FGP_MSG_HEADER_SIZE);
}

static void test_encoder_reports_no_space_for_every_short_buffer(void **state)
{
	uint8_t all[1024], buf[1024];
	size_t len = build_all(all, sizeof(all));
	struct fgp_hello h = { FGP_VERSION, 42, 0, 1, S("17"), S("x"), S("svc"), 7 };
	size_t need = fgp_hello_size(&h);

	(void)state;
	assert_true(len > FGP_MSG_HEADER_SIZE);
	for (size_t cap = 0; cap < need; cap++)
		assert_int_equal(fgp_encode_hello(buf, cap, &h), -ENOSPC);
	assert_int_equal(fgp_encode_hello(buf, need, &h), (int)need);
	assert_int_equal(fgp_encode_code_unload(buf, FGP_CODE_UNLOAD_SIZE - 1,
						&(struct fgp_code_unload){ 1, 2 }),
			 -ENOSPC);
	assert_int_equal(fgp_encode_dropped(buf, FGP_DROPPED_SIZE - 1, &(struct fgp_dropped){ 0 }),
			 -ENOSPC);
	assert_int_equal(
		fgp_encode_snapshot(buf, sizeof(buf), FGP_HELLO, &(struct fgp_snapshot){ 0 }),
		-EINVAL);
}

static void test_invalid_inline_input_is_not_encoded(void **state)
{
	uint8_t buf[512];
	struct fgp_str m[] = { S("A::a"), S("B::b") };
	uint16_t bad_index[] = { 2 };
	uint16_t ok[] = { 0 };
	struct fgp_pc_in out_of_range[] = { { 0x10, 1, bad_index } };
	struct fgp_pc_in unsorted[] = { { 0x20, 1, ok }, { 0x10, 1, ok } };
	struct fgp_pc_in zero_depth[] = { { 0x10, 0, ok } };
	struct fgp_pc_in past_end[] = { { 0x101, 1, ok } };
	struct fgp_code_load_in l = { 0x1000, 0x100, 1, 0, S("A::a"), 2, m, 1, out_of_range };

	(void)state;
	assert_int_equal(fgp_encode_code_load(buf, sizeof(buf), &l), -EINVAL);
	l.pcs = unsorted;
	l.n_pcs = 2;
	assert_int_equal(fgp_encode_code_load(buf, sizeof(buf), &l), -EINVAL);
	l.pcs = zero_depth;
	l.n_pcs = 1;
	assert_int_equal(fgp_encode_code_load(buf, sizeof(buf), &l), -EINVAL);
	l.pcs = past_end;
	assert_int_equal(fgp_encode_code_load(buf, sizeof(buf), &l), -EINVAL);
}

static void test_control_bytes_in_names_are_replaced_and_long_names_truncated(void **state)
{
	static char longname[FGP_MAX_STR + 100];
	uint8_t *buf = malloc(2 * FGP_MAX_STR);
	struct fgp_dynamic_code d = { 0x1000, 0x10, 1, S("evil\nname\0x") };
	struct fgp_reader r;
	struct fgp_record rec;
	size_t off;
	int n;

	(void)state;
	assert_non_null(buf);
	off = (size_t)fgp_encode_msg_header(buf, 2 * FGP_MAX_STR);
	n = fgp_encode_dynamic_code(buf + off, 2 * FGP_MAX_STR - off, &d);
	assert_true(n > 0);
	assert_int_equal(fgp_reader_init(&r, buf, off + (size_t)n), 0);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.u.dyn.name.len, 11);
	assert_memory_equal(rec.u.dyn.name.ptr, "evil?name?x", 11);

	memset(longname, 'a', sizeof(longname));
	d.name.ptr = longname;
	d.name.len = sizeof(longname);
	n = fgp_encode_dynamic_code(buf + off, 2 * FGP_MAX_STR - off, &d);
	assert_true(n > 0);
	assert_int_equal(fgp_reader_init(&r, buf, off + (size_t)n), 0);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.u.dyn.name.len, FGP_MAX_STR);
	free(buf);
}

/* Append a raw record with the given header and body to buf at *off. */
static void put_raw(uint8_t *buf, size_t *off, uint16_t type, uint32_t size, const void *body,
		    size_t body_len)
{
	uint8_t *p = buf + *off;

	p[0] = (uint8_t)type;
	p[1] = (uint8_t)(type >> 8);
	p[2] = p[3] = 0;
	for (int i = 0; i < 4; i++)
		p[4 + i] = (uint8_t)(size >> (8 * i));
	memcpy(p + 8, body, body_len);
	*off += 8 + body_len;
}

static void test_unknown_record_types_are_skipped_by_size(void **state)
{
	uint8_t buf[256], body[12] = { 0 };
	size_t off = (size_t)fgp_encode_msg_header(buf, sizeof(buf));
	struct fgp_reader r;
	struct fgp_record rec;
	int n;

	(void)state;
	put_raw(buf, &off, 999, 8 + sizeof(body), body, sizeof(body));
	n = fgp_encode_code_unload(buf + off, sizeof(buf) - off, &(struct fgp_code_unload){ 5, 6 });
	off += (size_t)n;
	assert_int_equal(fgp_reader_init(&r, buf, off), 0);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.type, 999);
	assert_int_equal(rec.size, 20);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.type, FGP_CODE_UNLOAD);
	assert_int_equal(rec.u.unload.addr, 5);
	assert_int_equal(fgp_next(&r, &rec), 0);
}

static void test_bad_record_is_skipped_and_reader_stays_in_sync(void **state)
{
	uint8_t buf[256];
	/* a dynamic-code body with a name holding '\n' */
	uint8_t body[24 + 2 + 3] = { 0 };
	size_t off = (size_t)fgp_encode_msg_header(buf, sizeof(buf));
	struct fgp_reader r;
	struct fgp_record rec;

	(void)state;
	body[0] = 0x10;
	body[8] = 0x10;
	body[24] = 3;
	memcpy(body + 26, "a\nb", 3);
	put_raw(buf, &off, FGP_DYNAMIC_CODE, 8 + sizeof(body), body, sizeof(body));
	off += (size_t)fgp_encode_code_unload(buf + off, sizeof(buf) - off,
					      &(struct fgp_code_unload){ 5, 6 });
	assert_int_equal(fgp_reader_init(&r, buf, off), 0);
	assert_int_equal(fgp_next(&r, &rec), -EBADMSG);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.type, FGP_CODE_UNLOAD);
	assert_int_equal(fgp_next(&r, &rec), 0);
}

/* Every byte value at every place of names of 1 to 19 bytes: a control byte (under 0x20, or
 * 0x7f) refuses the record, any other (UTF-8's 0x80 and up included) passes. */
static void test_a_name_is_refused_for_a_control_byte_at_any_place(void **state)
{
	uint8_t buf[128], body[24 + 2 + 19];
	struct fgp_reader r;
	struct fgp_record rec;

	(void)state;
	for (unsigned len = 1; len <= 19; len++) {
		for (unsigned at = 0; at < len; at++) {
			for (unsigned b = 0; b < 256; b++) {
				size_t off = (size_t)fgp_encode_msg_header(buf, sizeof(buf));
				bool bad = b < 0x20 || b == 0x7f;

				memset(body, 0, sizeof(body));
				body[0] = 0x10;
				body[8] = 0x10;
				body[24] = (uint8_t)len;
				memset(body + 26, 0xe9, len);
				body[26 + at] = (uint8_t)b;
				put_raw(buf, &off, FGP_DYNAMIC_CODE, 8 + 26 + len, body, 26 + len);
				assert_int_equal(fgp_reader_init(&r, buf, off), 0);
				if (fgp_next(&r, &rec) != (bad ? -EBADMSG : 1))
					fail_msg("byte 0x%02x at %u of %u: %s", b, at, len,
						 bad ? "taken" : "refused");
			}
		}
	}
}

static void test_record_sizes_that_lie_end_the_message(void **state)
{
	static const uint32_t sizes[] = { 0, 7, 1000, FGP_MAX_RECORD + 1, 0xffffffffu };
	uint8_t buf[64], body[16] = { 0 };
	struct fgp_reader r;
	struct fgp_record rec;

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t off = (size_t)fgp_encode_msg_header(buf, sizeof(buf));

		put_raw(buf, &off, FGP_CODE_UNLOAD, sizes[i], body, sizeof(body));
		assert_int_equal(fgp_reader_init(&r, buf, off), 0);
		assert_int_equal(fgp_next(&r, &rec), -EBADMSG);
		assert_int_equal(fgp_next(&r, &rec), 0);
	}
}

static void test_known_records_with_trailing_bytes_are_refused(void **state)
{
	uint8_t buf[64], body[20] = { 0 };
	size_t off = (size_t)fgp_encode_msg_header(buf, sizeof(buf));
	struct fgp_reader r;
	struct fgp_record rec;

	(void)state;
	put_raw(buf, &off, FGP_CODE_UNLOAD, 8 + sizeof(body), body, sizeof(body));
	assert_int_equal(fgp_reader_init(&r, buf, off), 0);
	assert_int_equal(fgp_next(&r, &rec), -EBADMSG);
	assert_int_equal(fgp_next(&r, &rec), 0);
}

/* A HELLO body as an agent without the service field wrote it, plus `extra` trailing bytes. */
static size_t old_hello(uint8_t *buf, const uint8_t *extra, size_t nextra)
{
	uint8_t body[64] = { 0 };
	size_t off = (size_t)fgp_encode_msg_header(buf, 256), n = 24;

	body[0] = FGP_VERSION;
	body[4] = 7;  /* pid */
	body[16] = 9; /* ts */
	body[n] = 2;
	memcpy(body + n + 2, "17", 2);
	n += 4;
	body[n] = 1;
	body[n + 2] = 'a';
	n += 3;
	if (nextra)
		memcpy(body + n, extra, nextra);
	n += nextra;
	put_raw(buf, &off, FGP_HELLO, (uint32_t)(8 + n), body, n);
	return off;
}

static void test_hello_of_an_older_agent_decodes_with_no_service(void **state)
{
	uint8_t buf[256];
	size_t len = old_hello(buf, NULL, 0);
	struct fgp_reader r;
	struct fgp_record rec;

	(void)state;
	assert_int_equal(fgp_reader_init(&r, buf, len), 0);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.u.hello.pid, 7);
	assert_true(str_eq(rec.u.hello.agent_version, "a"));
	assert_int_equal(rec.u.hello.service.len, 0);
	assert_int_equal(rec.u.hello.token, 0);
	assert_int_equal(fgp_next(&r, &rec), 0);
}

static void test_tables_records_round_trip_and_bad_ones_are_refused(void **state)
{
	struct fgp_tables on = { 1000, 1 }, off = { 2000, 0 }, bad = { 3000, 2 };
	uint8_t buf[256], body[16] = { 0 };
	size_t off_len;
	struct fgp_reader r;
	struct fgp_record rec;
	int n;

	(void)state;
	off_len = (size_t)fgp_encode_msg_header(buf, sizeof(buf));
	n = fgp_encode_tables(buf + off_len, sizeof(buf) - off_len, &on);
	assert_int_equal(n, FGP_TABLES_SIZE);
	off_len += (size_t)n;
	off_len += (size_t)fgp_encode_tables(buf + off_len, sizeof(buf) - off_len, &off);
	assert_int_equal(fgp_encode_tables(buf + off_len, sizeof(buf) - off_len, &bad), -EINVAL);
	assert_int_equal(fgp_encode_tables(buf + off_len, FGP_TABLES_SIZE - 1, &on), -ENOSPC);
	body[8] = 2; /* on = 2: neither */
	put_raw(buf, &off_len, FGP_TABLES, FGP_TABLES_SIZE, body, sizeof(body));
	body[8] = 1;
	put_raw(buf, &off_len, FGP_TABLES, FGP_TABLES_SIZE - 4, body, 12); /* short */
	assert_int_equal(fgp_reader_init(&r, buf, off_len), 0);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.type, FGP_TABLES);
	assert_int_equal(rec.u.tables.ts, 1000);
	assert_int_equal(rec.u.tables.on, 1);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.u.tables.ts, 2000);
	assert_int_equal(rec.u.tables.on, 0);
	assert_int_equal(fgp_next(&r, &rec), -EBADMSG);
	assert_int_equal(fgp_next(&r, &rec), -EBADMSG);
	assert_int_equal(fgp_next(&r, &rec), 0);
	assert_string_equal(fgp_type_name(FGP_TABLES), "tables");
}

static void test_hello_fields_of_a_newer_agent_are_ignored(void **state)
{
	/* service "web", then 5 bytes of a field this decoder does not know */
	static const uint8_t extra[] = { 3, 0, 'w', 'e', 'b', 1, 2, 3, 4, 5 };
	uint8_t buf[256];
	size_t len = old_hello(buf, extra, sizeof(extra));
	struct fgp_reader r;
	struct fgp_record rec;

	(void)state;
	assert_int_equal(fgp_reader_init(&r, buf, len), 0);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_true(str_eq(rec.u.hello.service, "web"));
	assert_int_equal(fgp_next(&r, &rec), 0);
}

static void test_hello_with_a_broken_service_is_refused(void **state)
{
	static const uint8_t half_len[] = { 3 };
	static const uint8_t short_str[] = { 9, 0, 'w' };
	static const uint8_t ctl_byte[] = { 2, 0, 'w', '\n' };
	const uint8_t *cases[] = { half_len, short_str, ctl_byte };
	const size_t lens[] = { sizeof(half_len), sizeof(short_str), sizeof(ctl_byte) };

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		uint8_t buf[256];
		size_t len = old_hello(buf, cases[i], lens[i]);
		struct fgp_reader r;
		struct fgp_record rec;

		assert_int_equal(fgp_reader_init(&r, buf, len), 0);
		assert_int_equal(fgp_next(&r, &rec), -EBADMSG);
	}
}

static void test_zero_sized_or_wrapping_code_is_refused(void **state)
{
	uint8_t buf[128];
	struct fgp_dynamic_code d = { 0x1000, 0, 1, S("x") };
	struct fgp_code_load_in l = { UINT64_MAX - 4, 0x100, 1, 0, S("A::a"), 0, NULL, 0, NULL };
	struct fgp_reader r;
	struct fgp_record rec;
	size_t off = (size_t)fgp_encode_msg_header(buf, sizeof(buf));

	(void)state;
	off += (size_t)fgp_encode_dynamic_code(buf + off, sizeof(buf) - off, &d);
	off += (size_t)fgp_encode_code_load(buf + off, sizeof(buf) - off, &l);
	assert_int_equal(fgp_reader_init(&r, buf, off), 0);
	assert_int_equal(fgp_next(&r, &rec), -EBADMSG);
	assert_int_equal(fgp_next(&r, &rec), -EBADMSG);
	assert_int_equal(fgp_next(&r, &rec), 0);
}

/* Decode a whole message; checks the accepted inline tables are walkable. Returns records. */
static int drain(const uint8_t *buf, size_t len)
{
	struct fgp_reader r;
	struct fgp_record rec;
	struct fgp_inline_iter it;
	struct fgp_str s;
	struct fgp_pc pc;
	int rv, good = 0, guard = 0;
	size_t values;

	if (fgp_reader_init(&r, buf, len) != 0)
		return -1;
	while ((rv = fgp_next(&r, &rec)) != 0) {
		assert_true(++guard < 10000);
		if (rv < 0)
			continue;
		good++;
		assert_true(rec.size >= FGP_REC_HEADER_SIZE && rec.size <= len);
		if (rec.type == FGP_CODE_LOAD_IDS) {
			assert_true(rec.u.load.name_id != 0);
			for (unsigned i = 0; i < rec.u.load.n_methods; i++) {
				assert_true(rec.u.load.methods_raw + 4 * (i + 1) <= buf + len);
				assert_true(fgp_load_method_id(&rec.u.load, i) != 0);
			}
		}
		if (rec.type == FGP_NAME)
			assert_true(rec.u.name.id != 0);
		if (rec.type == FGP_CODE_LINES) {
			uint32_t prev = 0, n = 0;

			values = 0;

			assert_true(rec.u.lines.pcs_raw + rec.u.lines.pcs_len <= buf + len);
			fgp_lines_begin(&rec.u.lines, &it);
			while (fgp_pcs_next(&it, &pc)) {
				assert_true(pc.chain_raw + 2 * pc.depth <= buf + len);
				assert_true(pc.depth >= 1 && pc.depth <= FGP_MAX_INLINE_DEPTH);
				assert_true(pc.pc_off <= rec.u.lines.size);
				assert_true(n == 0 || pc.pc_off > prev);
				for (unsigned d = 0; d < pc.depth; d++)
					(void)fgp_pc_line(&pc, d);
				prev = pc.pc_off;
				n++;
				values += pc.depth;
			}
			assert_int_equal(n, rec.u.lines.n_pcs);
			assert_int_equal(values, fgp_pcs_values(rec.u.lines.pcs_len, n));
			continue;
		}
		if (rec.type != FGP_CODE_LOAD && rec.type != FGP_CODE_LOAD_IDS)
			continue;
		assert_true(rec.u.load.pcs_raw + rec.u.load.pcs_len <= buf + len);
		if (rec.type == FGP_CODE_LOAD)
			fgp_methods_begin(&rec.u.load, &it);
		else
			it.left = 0;
		while (fgp_methods_next(&it, &s)) {
			assert_true((const uint8_t *)s.ptr >= buf);
			assert_true((const uint8_t *)s.ptr + s.len <= buf + len);
		}
		fgp_pcs_begin(&rec.u.load, &it);
		values = 0;
		while (fgp_pcs_next(&it, &pc)) {
			assert_true(pc.chain_raw + 2 * pc.depth <= buf + len);
			for (unsigned d = 0; d < pc.depth; d++)
				assert_true(fgp_pc_method(&pc, d) < rec.u.load.n_methods);
			values += pc.depth;
		}
		assert_int_equal(values, fgp_pcs_values(rec.u.load.pcs_len, rec.u.load.n_pcs));
	}
	return good;
}

/*
 * Every truncation of all[0..len), each in a fresh heap copy of exactly that many bytes so ASan
 * sees any over-read, decodes safely and yields fewer than the full message's `full` records.
 */
static void check_truncations(const uint8_t *all, size_t len, int full)
{
	for (size_t cut = 0; cut < len; cut++) {
		uint8_t *p = malloc(cut ? cut : 1);

		assert_non_null(p);
		memcpy(p, all, cut);
		assert_true(drain(p, cut) < full);
		free(p);
	}
}

/* n copies of all[0..len) with a bit flipped (two in every other copy when both) decode safely. */
static void check_flips(const uint8_t *all, size_t len, unsigned seed, int n, bool both)
{
	for (int iter = 0; iter < n; iter++) {
		uint8_t *p = malloc(len);

		assert_non_null(p);
		memcpy(p, all, len);
		p[(size_t)rand_r(&seed) % len] ^= (uint8_t)(1u << (rand_r(&seed) % 8));
		if (both && (iter & 1)) /* a second flip: shapes one flip cannot reach */
			p[(size_t)rand_r(&seed) % len] ^= (uint8_t)(1u << (rand_r(&seed) % 8));
		drain(p, len);
		free(p);
	}
}

/*
 * buf[0..len) holds UNLOAD, a record X, UNLOAD(addr 3): write v (width bytes, little-endian) at
 * offset off of X's body; X must be refused alone and the reader stay in step.
 */
static void check_bad_middle(uint8_t *buf, size_t len, size_t off, int width, uint64_t v)
{
	uint8_t *body = buf + FGP_MSG_HEADER_SIZE + FGP_CODE_UNLOAD_SIZE + FGP_REC_HEADER_SIZE;
	struct fgp_reader r;
	struct fgp_record rec;

	for (int b = 0; b < width; b++)
		body[off + (size_t)b] = (uint8_t)(v >> (8 * b));
	assert_int_equal(fgp_reader_init(&r, buf, len), 0);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(fgp_next(&r, &rec), -EBADMSG);
	assert_int_equal(fgp_next(&r, &rec), 1); /* in sync after the bad record */
	assert_int_equal(rec.u.unload.addr, 3);
}

static void test_every_truncation_is_decoded_safely(void **state)
{
	uint8_t all[1024];
	size_t len = build_all(all, sizeof(all));
	int full = drain(all, len);

	(void)state;
	assert_int_equal(full, 10);
	check_truncations(all, len, full);
}

static void test_random_mutations_are_decoded_safely(void **state)
{
	uint8_t all[1024];
	size_t len = build_all(all, sizeof(all));
	unsigned seed = 12345;

	(void)state;
	for (int iter = 0; iter < 200000; iter++) {
		uint8_t *p = malloc(len);
		int flips = 1 + (int)(rand_r(&seed) % 4);

		assert_non_null(p);
		memcpy(p, all, len);
		for (int f = 0; f < flips; f++) {
			size_t at = (size_t)rand_r(&seed) % len;

			switch (rand_r(&seed) % 3) {
			case 0:
				p[at] ^= (uint8_t)(1u << (rand_r(&seed) % 8));
				break;
			case 1:
				p[at] = (uint8_t)rand_r(&seed);
				break;
			default:
				p[at] = (rand_r(&seed) & 1) ? 0xff : 0x00;
				break;
			}
		}
		drain(p, len);
		free(p);
	}
}

/* ---- interned names -------------------------------------------------------------------- */

static void test_interned_load_resolves_to_the_same_code_load(void **state)
{
	static const uint32_t ids[] = { 3, 5, 4 };
	struct fgp_str names[] = { S("Hot::loop"), S("Hot::inner"), S("Hot::leaf") };
	struct fgp_pc_in pcs[] = { { 0x10, 2, chain0 }, { 0x40, 3, chain1 }, { 0x80, 1, chain2 } };
	struct fgp_code_load_ids_in li = { 0x7f0000001000, 0x100, 222, 0, 3, 3, ids, 3, pcs };
	struct fgp_code_load_in l = { 0x7f0000001000, 0x100, 222, 0, S("Hot::loop"), 3,
				      names,	      3,     pcs };
	uint8_t a[512], b[512], c[512];
	struct fgp_record rec;
	int na, nb, nc;

	(void)state;
	na = fgp_encode_code_load_ids(a, sizeof(a), &li);
	assert_true(na > 0);
	assert_int_equal(fgp_decode_record(a, (size_t)na, &rec), 1);
	/* Unresolved, it cannot be spelled out. */
	assert_int_equal(fgp_encode_code_load_resolved(b, sizeof(b), &rec.u.load, 0), -EINVAL);
	/* A reader resolves ids 3, 5, 4 to the names. */
	rec.u.load.name = names[0];
	rec.u.load.methods = names;
	nb = fgp_encode_code_load_resolved(b, sizeof(b), &rec.u.load, FGP_REC_REPLAY);
	nc = fgp_encode_code_load(c, sizeof(c), &l);
	assert_int_equal(nb, nc);
	c[2] |= FGP_REC_REPLAY; /* record flags, low byte */
	assert_memory_equal(b, c, (size_t)nc);
	assert_int_equal(fgp_encode_code_load_resolved(b, (size_t)nc - 1, &rec.u.load, 0), -ENOSPC);
	/* And a plain CODE_LOAD passes through unchanged. */
	assert_int_equal(fgp_decode_record(c, (size_t)nc, &rec), 1);
	assert_int_equal(fgp_encode_code_load_resolved(b, sizeof(b), &rec.u.load, FGP_REC_REPLAY),
			 nc);
	assert_memory_equal(b, c, (size_t)nc);
	/* One record decoded alone must be exactly its size. */
	assert_int_equal(fgp_decode_record(c, (size_t)nc - 1, &rec), -EBADMSG);
}

static void test_zero_ids_are_neither_encoded_nor_decoded(void **state)
{
	static const uint32_t ids[] = { 3, 0 };
	struct fgp_pc_in pc = { 0x10, 2, chain0 };
	struct fgp_code_load_ids_in li = { 0x1000, 0x100, 1, 0, 3, 2, ids, 1, &pc };
	static const uint32_t good[] = { 3, 4 };
	static const uint16_t far[] = { 2, 0 };
	uint8_t buf[256];
	struct fgp_record rec;
	int n;

	(void)state;
	assert_int_equal(fgp_encode_code_load_ids(buf, sizeof(buf), &li), -EINVAL);
	li.method_ids = good;
	li.name_id = 0;
	assert_int_equal(fgp_encode_code_load_ids(buf, sizeof(buf), &li), -EINVAL);
	li.name_id = 3;
	pc.chain = far; /* index 2 of 2 methods */
	assert_int_equal(fgp_encode_code_load_ids(buf, sizeof(buf), &li), -EINVAL);
	pc.chain = chain0;
	n = fgp_encode_code_load_ids(buf, sizeof(buf), &li);
	assert_true(n > 0);
	assert_int_equal(fgp_decode_record(buf, (size_t)n, &rec), 1);
	/* Patch a method id, then the name id, to 0: refused. */
	memset(buf + FGP_REC_HEADER_SIZE + 24 + 2 + 4, 0, 4);
	assert_int_equal(fgp_decode_record(buf, (size_t)n, &rec), -EBADMSG);
	n = fgp_encode_code_load_ids(buf, sizeof(buf), &li);
	memset(buf + FGP_REC_HEADER_SIZE + 12, 0, 4);
	assert_int_equal(fgp_decode_record(buf, (size_t)n, &rec), -EBADMSG);
	assert_int_equal(fgp_encode_name(buf, sizeof(buf), 0, S("x")), -EINVAL);
	n = fgp_encode_name(buf, sizeof(buf), 1, S("x"));
	memset(buf + FGP_REC_HEADER_SIZE, 0, 4);
	assert_int_equal(fgp_decode_record(buf, (size_t)n, &rec), -EBADMSG);
}

/* ---- VM_LAYOUT ------------------------------------------------------------------------- */

static size_t build_layout(uint8_t *buf, size_t cap, const struct fgp_vm_layout *l)
{
	int n;

	assert_int_equal(fgp_encode_msg_header(buf, cap), FGP_MSG_HEADER_SIZE);
	n = fgp_encode_vm_layout(buf + FGP_MSG_HEADER_SIZE, cap - FGP_MSG_HEADER_SIZE, l);
	assert_int_equal(n, (int)fgp_vm_layout_size(l));
	return FGP_MSG_HEADER_SIZE + (size_t)n;
}

static void sample_layout(struct fgp_vm_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->caps = FGP_VML_CAP_NAMES | FGP_VML_CAP_INTERP_FRAME;
	fgp_vml_set(l, FGP_VML_JDK_MAJOR, 17);
	fgp_vml_set(l, FGP_VML_METHOD_CONSTMETHOD, 8);
	fgp_vml_set(l, FGP_VML_CONSTMETHOD_SIZE, 48);
	fgp_vml_set(l, FGP_VML_INTERP_METHOD_SLOT, (uint32_t)-3);
}

static void test_vm_layout_round_trips_and_absent_keys_stay_absent(void **state)
{
	struct fgp_vm_layout l;
	struct fgp_reader r;
	struct fgp_record rec;
	uint8_t buf[512];
	size_t len;

	(void)state;
	sample_layout(&l);
	len = build_layout(buf, sizeof(buf), &l);
	assert_int_equal(fgp_reader_init(&r, buf, len), 0);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.type, FGP_VM_LAYOUT);
	assert_int_equal(rec.u.layout.caps, l.caps);
	assert_int_equal(fgp_vml_get(&rec.u.layout, FGP_VML_JDK_MAJOR), 17);
	assert_int_equal(fgp_vml_get(&rec.u.layout, FGP_VML_CONSTMETHOD_SIZE), 48);
	assert_int_equal((int32_t)fgp_vml_get(&rec.u.layout, FGP_VML_INTERP_METHOD_SLOT), -3);
	assert_true(fgp_vml_has(&rec.u.layout, FGP_VML_METHOD_CONSTMETHOD));
	assert_false(fgp_vml_has(&rec.u.layout, FGP_VML_KLASS_NAME));
	assert_false(fgp_vml_has(&rec.u.layout, FGP_VML_NKEYS));
	assert_int_equal(fgp_next(&r, &rec), 0);
	assert_string_equal(fgp_type_name(FGP_VM_LAYOUT), "vm-layout");
}

/* Patch entry i (0-based) of the single layout record in buf. */
static void patch_entry(uint8_t *buf, unsigned i, uint16_t key, uint16_t zero)
{
	uint8_t *e = buf + FGP_MSG_HEADER_SIZE + FGP_REC_HEADER_SIZE + 8 + 8 * (size_t)i;

	e[0] = (uint8_t)key;
	e[1] = (uint8_t)(key >> 8);
	e[2] = (uint8_t)zero;
	e[3] = (uint8_t)(zero >> 8);
}

static int decode_one(const uint8_t *buf, size_t len, struct fgp_record *rec)
{
	struct fgp_reader r;

	assert_int_equal(fgp_reader_init(&r, buf, len), 0);
	return fgp_next(&r, rec);
}

static void test_vm_layout_unknown_keys_are_ignored_and_bad_entries_refused(void **state)
{
	struct fgp_vm_layout l;
	struct fgp_record rec;
	uint8_t buf[512], b2[512];
	size_t len;

	(void)state;
	sample_layout(&l);
	len = build_layout(buf, sizeof(buf), &l);

	/* A key from a newer agent: skipped, the rest kept. */
	memcpy(b2, buf, len);
	patch_entry(b2, 1, 999, 0);
	assert_int_equal(decode_one(b2, len, &rec), 1);
	assert_false(fgp_vml_has(&rec.u.layout, FGP_VML_METHOD_CONSTMETHOD));
	assert_int_equal(fgp_vml_get(&rec.u.layout, FGP_VML_CONSTMETHOD_SIZE), 48);

	/* The same key twice, key 0, or a nonzero reserved field: refused. */
	memcpy(b2, buf, len);
	patch_entry(b2, 1, FGP_VML_JDK_MAJOR, 0);
	assert_int_equal(decode_one(b2, len, &rec), -EBADMSG);
	memcpy(b2, buf, len);
	patch_entry(b2, 2, 0, 0);
	assert_int_equal(decode_one(b2, len, &rec), -EBADMSG);
	memcpy(b2, buf, len);
	patch_entry(b2, 0, FGP_VML_JDK_MAJOR, 1);
	assert_int_equal(decode_one(b2, len, &rec), -EBADMSG);

	/* A count that does not match the record's size: refused either way. */
	memcpy(b2, buf, len);
	b2[FGP_MSG_HEADER_SIZE + FGP_REC_HEADER_SIZE + 4] = 200;
	assert_int_equal(decode_one(b2, len, &rec), -EBADMSG);
	memcpy(b2, buf, len);
	b2[FGP_MSG_HEADER_SIZE + FGP_REC_HEADER_SIZE + 4] = 3;
	assert_int_equal(decode_one(b2, len, &rec), -EBADMSG);

	/* Every truncation of the message decodes safely and never yields the record. */
	check_truncations(buf, len, 1);
	assert_int_equal(fgp_encode_vm_layout(b2, fgp_vm_layout_size(&l) - 1, &l), -ENOSPC);
}

/* ---- CODE_FRAME ------------------------------------------------------------------------ */

static const struct fgp_code_frame good_frame = {
	.addr = 0x7f0000001040,
	.kind = FGP_CF_NMETHOD,
	.frame_size = 48,
	.code_begin = 0x7f0000001000,
	.code_size = 0x400,
	.frame_complete = 0x20,
	.deopt = 0x7f0000001380,
	.deopt_mh = 0x7f0000001390,
	.orig_pc_offset = 16,
};

/* A message with a CODE_FRAME between two CODE_UNLOADs. */
static size_t build_frame_msg(uint8_t *buf, size_t cap, const struct fgp_code_frame *f)
{
	size_t off = (size_t)fgp_encode_msg_header(buf, cap);
	int n;

	off += (size_t)fgp_encode_code_unload(buf + off, cap - off,
					      &(struct fgp_code_unload){ 1, 2 });
	n = fgp_encode_code_frame(buf + off, cap - off, f);
	assert_int_equal(n, FGP_CODE_FRAME_SIZE);
	off += (size_t)n;
	off += (size_t)fgp_encode_code_unload(buf + off, cap - off,
					      &(struct fgp_code_unload){ 3, 4 });
	return off;
}

static void test_code_frame_round_trips(void **state)
{
	uint8_t buf[256];
	size_t len = build_frame_msg(buf, sizeof(buf), &good_frame);
	struct fgp_reader r;
	struct fgp_record rec;

	(void)state;
	assert_int_equal(fgp_reader_init(&r, buf, len), 0);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.type, FGP_CODE_FRAME);
	assert_int_equal(rec.size, FGP_CODE_FRAME_SIZE);
	assert_memory_equal(&rec.u.frame, &good_frame, sizeof(good_frame));
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.u.unload.addr, 3);
	assert_int_equal(fgp_next(&r, &rec), 0);
	assert_string_equal(fgp_type_name(FGP_CODE_FRAME), "code-frame");
	/* a stub without a frame or deopt handlers, prologue unknown */
	struct fgp_code_frame stub = { .addr = 0x5000,
				       .kind = FGP_CF_BUFFER,
				       .code_begin = 0x4000,
				       .code_size = 0x2000,
				       .frame_complete = -1 };
	len = build_frame_msg(buf, sizeof(buf), &stub);
	assert_int_equal(fgp_reader_init(&r, buf, len), 0);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_memory_equal(&rec.u.frame, &stub, sizeof(stub));
	assert_int_equal(fgp_encode_code_frame(buf, FGP_CODE_FRAME_SIZE - 1, &stub), -ENOSPC);
}

/* Each mutation makes good_frame invalid: the encoder refuses it, and so does the decoder
 * when the same bytes arrive (written by patching a valid record). */
static void test_invalid_code_frames_are_refused_both_ways(void **state)
{
	static const struct {
		size_t off; /* body offset of the field */
		int width;
		uint64_t v;
	} muts[] = {
		{ 0, 8, 0x7f0000000fff }, /* addr before the code */
		{ 0, 8, 0x7f0000001400 }, /* addr at the code's end */
		{ 8, 2, FGP_CF_NKINDS },  /* unknown kind */
		{ 10, 2, 1 },		  /* undefined flags */
		{ 12, 4, 44 },		  /* frame size not a multiple of 8 */
		{ 12, 4, FGP_CF_MAX_FRAME + 8 },
		{ 12, 4, 16 },		       /* orig pc slot outside the frame */
		{ 16, 8, 0xfffffffffffffc00 }, /* code wraps around */
		{ 28, 4, 0x401 },	       /* frame complete past the code */
		{ 28, 4, (uint32_t)-2 },
		{ 32, 8, 0x7f0000001400 }, /* deopt handler outside the code */
		{ 40, 8, 0x7f0000000f00 },
		{ 48, 4, 12 }, /* orig pc offset misaligned */
		{ 48, 4, (uint32_t)-8 },
		{ 52, 4, 1 }, /* reserved not zero */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(muts) / sizeof(muts[0]); i++) {
		uint8_t buf[256];
		size_t len = build_frame_msg(buf, sizeof(buf), &good_frame);

		check_bad_middle(buf, len, muts[i].off, muts[i].width, muts[i].v);
		if (muts[i].off != 52) {
			/* the decoded struct (before validation) would not encode either */
			struct fgp_code_frame f = good_frame;

			switch (muts[i].off) {
			case 0:
				f.addr = muts[i].v;
				break;
			case 8:
				f.kind = (uint16_t)muts[i].v;
				break;
			case 10:
				f.flags = (uint16_t)muts[i].v;
				break;
			case 12:
				f.frame_size = (uint32_t)muts[i].v;
				break;
			case 16:
				f.code_begin = muts[i].v;
				break;
			case 28:
				f.frame_complete = (int32_t)muts[i].v;
				break;
			case 32:
				f.deopt = muts[i].v;
				break;
			case 40:
				f.deopt_mh = muts[i].v;
				break;
			default:
				f.orig_pc_offset = (int32_t)muts[i].v;
				break;
			}
			assert_int_equal(fgp_encode_code_frame(buf, sizeof(buf), &f), -EINVAL);
		}
	}
}

static void test_code_frame_truncations_and_mutations_are_decoded_safely(void **state)
{
	uint8_t all[256];
	size_t len = build_frame_msg(all, sizeof(all), &good_frame);

	(void)state;
	assert_int_equal(drain(all, len), 3);
	check_truncations(all, len, 3);
	check_flips(all, len, 777, 100000, false);
}

/* ---- CODE_LINES ------------------------------------------------------------------------ */

static const uint16_t lines_a[] = { 42 }, lines_b[] = { 17, 0, 9 }, lines_c[] = { 65535, 3 };
static const struct fgp_pc_in good_line_pcs[] = {
	{ 0x10, 1, lines_a },
	{ 0x48, 3, lines_b },
	{ 0x200, 2, lines_c },
};
static const struct fgp_code_lines_in good_lines = {
	.addr = 0x7f0000002000,
	.size = 0x200,
	.ts = 123456789,
	.flags = FGP_REC_INLINE_TRUNCATED,
	.n_pcs = 3,
	.pcs = good_line_pcs,
};

/* A message with a CODE_LINES between two CODE_UNLOADs; *rec_len gets the record's size. */
static size_t build_lines_msg(uint8_t *buf, size_t cap, const struct fgp_code_lines_in *l)
{
	size_t off = (size_t)fgp_encode_msg_header(buf, cap);
	int n;

	off += (size_t)fgp_encode_code_unload(buf + off, cap - off,
					      &(struct fgp_code_unload){ 1, 2 });
	n = fgp_encode_code_lines(buf + off, cap - off, l);
	assert_int_equal(n, (int)fgp_code_lines_size(l));
	off += (size_t)n;
	off += (size_t)fgp_encode_code_unload(buf + off, cap - off,
					      &(struct fgp_code_unload){ 3, 4 });
	return off;
}

static void test_code_lines_round_trip(void **state)
{
	uint8_t buf[512];
	size_t len = build_lines_msg(buf, sizeof(buf), &good_lines);
	struct fgp_reader r;
	struct fgp_record rec;
	struct fgp_inline_iter it;
	struct fgp_pc pc;
	unsigned i = 0;
	uint64_t ts = 0;

	(void)state;
	assert_int_equal(fgp_code_lines_size(&good_lines), FGP_REC_HEADER_SIZE + 24 + 8 + 12 + 10);
	assert_int_equal(fgp_reader_init(&r, buf, len), 0);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.type, FGP_CODE_LINES);
	assert_int_equal(rec.flags, FGP_REC_INLINE_TRUNCATED);
	assert_int_equal(rec.u.lines.addr, good_lines.addr);
	assert_int_equal(rec.u.lines.size, good_lines.size);
	assert_int_equal(rec.u.lines.ts, good_lines.ts);
	assert_int_equal(rec.u.lines.n_pcs, 3);
	fgp_lines_begin(&rec.u.lines, &it);
	while (fgp_pcs_next(&it, &pc) == 1) {
		assert_int_equal(pc.pc_off, good_line_pcs[i].pc_off);
		assert_int_equal(pc.depth, good_line_pcs[i].depth);
		for (unsigned d = 0; d < pc.depth; d++)
			assert_int_equal(fgp_pc_line(&pc, d), good_line_pcs[i].chain[d]);
		i++;
	}
	assert_int_equal(i, 3);
	assert_int_equal(
		fgp_rec_code_ts(buf + FGP_MSG_HEADER_SIZE + FGP_CODE_UNLOAD_SIZE, rec.size, &ts),
		1);
	assert_int_equal(ts, good_lines.ts);
	assert_int_equal(fgp_next(&r, &rec), 1);
	assert_int_equal(rec.u.unload.addr, 3);
	assert_int_equal(fgp_next(&r, &rec), 0);
	assert_string_equal(fgp_type_name(FGP_CODE_LINES), "code-lines");
	for (size_t cap = 0; cap < fgp_code_lines_size(&good_lines); cap++)
		assert_int_equal(fgp_encode_code_lines(buf, cap, &good_lines), -ENOSPC);
}

/* Input the encoder must refuse; the same shapes patched into bytes, the decoder refuses. */
static void test_invalid_code_lines_are_refused_both_ways(void **state)
{
	static const uint16_t deep[FGP_MAX_INLINE_DEPTH + 1];
	struct fgp_pc_in pcs[3];
	struct fgp_code_lines_in l;
	uint8_t buf[1024];

	(void)state;
	/* encoder */
	for (int m = 0; m < 8; m++) {
		memcpy(pcs, good_line_pcs, sizeof(pcs));
		l = good_lines;
		l.pcs = pcs;
		switch (m) {
		case 0:
			l.n_pcs = 0;
			break;
		case 1:
			pcs[1].pc_off = pcs[0].pc_off; /* not strictly increasing */
			break;
		case 2:
			pcs[2].pc_off = l.size + 1; /* past the code */
			break;
		case 3:
			pcs[0].depth = 0;
			break;
		case 4:
			pcs[0].depth = FGP_MAX_INLINE_DEPTH + 1;
			pcs[0].chain = deep;
			break;
		case 5:
			l.size = 0;
			break;
		case 6:
			l.addr = UINT64_MAX - 0x10; /* wraps */
			break;
		default:
			l.n_pcs = FGP_MAX_INLINE_PCS + 1;
			break;
		}
		assert_int_equal(fgp_encode_code_lines(buf, sizeof(buf), &l), -EINVAL);
	}
	/* decoder: patch a valid record */
	static const struct {
		size_t off; /* body offset */
		int width;
		uint64_t v;
	} muts[] = {
		{ 8, 4, 0 },				 /* size 0 */
		{ 8, 4, 0x47 },				 /* second pc past the size */
		{ 0, 8, UINT64_MAX - 0x100 },		 /* addr + size wraps */
		{ 12, 4, 0 },				 /* no pcs */
		{ 12, 4, FGP_MAX_INLINE_PCS + 1 },	 /* too many pcs */
		{ 12, 4, 4 },				 /* more pcs than bytes */
		{ 12, 4, 2 },				 /* fewer: trailing bytes */
		{ 24 + 4, 2, 0 },			 /* depth 0 */
		{ 24 + 4, 2, FGP_MAX_INLINE_DEPTH + 1 }, /* too deep */
		{ 24 + 4, 2, 40 },			 /* deeper than the record */
		{ 24 + 8, 4, 0x10 },			 /* second pc equal to the first */
		{ 24 + 8, 4, 0x08 },			 /* second pc before the first */
	};
	for (size_t i = 0; i < sizeof(muts) / sizeof(muts[0]); i++) {
		size_t len = build_lines_msg(buf, sizeof(buf), &good_lines);

		check_bad_middle(buf, len, muts[i].off, muts[i].width, muts[i].v);
	}
}

static void test_code_lines_truncations_and_mutations_are_decoded_safely(void **state)
{
	uint8_t all[512];
	size_t len = build_lines_msg(all, sizeof(all), &good_lines);

	(void)state;
	assert_int_equal(drain(all, len), 3);
	check_truncations(all, len, 3);
	check_flips(all, len, 4242, 100000, true);
}

/* ---- one byte short: every encoder refuses cleanly ----------------------------------- */

static const struct fgp_str short_methods[] = { S("Hot::loop"), S("Hot::inner"), S("Hot::leaf") };
static const struct fgp_pc_in short_pcs[] = {
	{ 0x10, 2, chain0 },
	{ 0x40, 3, chain1 },
	{ 0x80, 1, chain2 },
};

static int enc_msg_header(uint8_t *dst, size_t cap)
{
	return fgp_encode_msg_header(dst, cap);
}

static int enc_hello(uint8_t *dst, size_t cap)
{
	struct fgp_hello h = { FGP_VERSION, 42, 0, 1, S("17"), S("x"), S("svc"), 7 };

	return fgp_encode_hello(dst, cap, &h);
}

static int enc_code_load(uint8_t *dst, size_t cap)
{
	struct fgp_code_load_in l = { 0x7f0000001000, 0x100, 222,      0, S("Hot::loop"), 3,
				      short_methods,  3,     short_pcs };

	return fgp_encode_code_load(dst, cap, &l);
}

static int enc_code_unload(uint8_t *dst, size_t cap)
{
	return fgp_encode_code_unload(dst, cap, &(struct fgp_code_unload){ 1, 2 });
}

static int enc_dynamic_code(uint8_t *dst, size_t cap)
{
	struct fgp_dynamic_code d = { 0x7f0000002000, 0x40, 444, S("Interpreter") };

	return fgp_encode_dynamic_code(dst, cap, &d);
}

static int enc_snapshot_begin(uint8_t *dst, size_t cap)
{
	return fgp_encode_snapshot(dst, cap, FGP_SNAPSHOT_BEGIN, &(struct fgp_snapshot){ 5, 2 });
}

static int enc_snapshot_end(uint8_t *dst, size_t cap)
{
	return fgp_encode_snapshot(dst, cap, FGP_SNAPSHOT_END, &(struct fgp_snapshot){ 6, 2 });
}

static int enc_tables(uint8_t *dst, size_t cap)
{
	return fgp_encode_tables(dst, cap, &(struct fgp_tables){ 7, 1 });
}

static int enc_dropped(uint8_t *dst, size_t cap)
{
	return fgp_encode_dropped(dst, cap, &(struct fgp_dropped){ 8, 1, 2 });
}

static int enc_name(uint8_t *dst, size_t cap)
{
	return fgp_encode_name(dst, cap, 7, S("Hot::caller"));
}

static int enc_code_load_ids(uint8_t *dst, size_t cap)
{
	static const uint32_t ids[] = { 3, 5, 4 };
	struct fgp_code_load_ids_in li = { 0x7f0000001000, 0x100, 222, 0, 3, 3, ids, 3, short_pcs };

	return fgp_encode_code_load_ids(dst, cap, &li);
}

static int enc_code_load_resolved(uint8_t *dst, size_t cap)
{
	uint8_t rec_buf[512];
	struct fgp_record rec;
	int n = enc_code_load(rec_buf, sizeof(rec_buf));

	assert_true(n > 0);
	assert_int_equal(fgp_decode_record(rec_buf, (size_t)n, &rec), 1);
	return fgp_encode_code_load_resolved(dst, cap, &rec.u.load, FGP_REC_REPLAY);
}

static int enc_vm_layout(uint8_t *dst, size_t cap)
{
	struct fgp_vm_layout l;

	sample_layout(&l);
	return fgp_encode_vm_layout(dst, cap, &l);
}

static int enc_code_frame(uint8_t *dst, size_t cap)
{
	return fgp_encode_code_frame(dst, cap, &good_frame);
}

static int enc_code_lines(uint8_t *dst, size_t cap)
{
	return fgp_encode_code_lines(dst, cap, &good_lines);
}

static void test_every_encoder_refuses_a_buffer_one_byte_short(void **state)
{
	static const struct {
		const char *what;
		int (*encode)(uint8_t *dst, size_t cap);
	} encoders[] = {
		{ "msg-header", enc_msg_header },
		{ "hello", enc_hello },
		{ "code-load", enc_code_load },
		{ "code-unload", enc_code_unload },
		{ "dynamic-code", enc_dynamic_code },
		{ "snapshot-begin", enc_snapshot_begin },
		{ "snapshot-end", enc_snapshot_end },
		{ "tables", enc_tables },
		{ "dropped", enc_dropped },
		{ "name", enc_name },
		{ "code-load-ids", enc_code_load_ids },
		{ "code-load-resolved", enc_code_load_resolved },
		{ "vm-layout", enc_vm_layout },
		{ "code-frame", enc_code_frame },
		{ "code-lines", enc_code_lines },
	};
	uint8_t want[512], buf[512], untouched[512];

	(void)state;
	memset(untouched, 0xa5, sizeof(untouched));
	for (size_t i = 0; i < sizeof(encoders) / sizeof(encoders[0]); i++) {
		const char *what = encoders[i].what;
		int n = encoders[i].encode(want, sizeof(want));

		if (n <= 0 || (size_t)n >= sizeof(buf))
			fail_msg("%s: encoded %d bytes", what, n);
		/* One byte short: -ENOSPC and not a byte written past the buffer (the encoder
		 * writes in one pass, so the buffer's own bytes are unspecified). */
		memset(buf, 0xa5, sizeof(buf));
		if (encoders[i].encode(buf, (size_t)n - 1) != -ENOSPC)
			fail_msg("%s: %d bytes fit in %d", what, n, n - 1);
		if (memcmp(buf + n - 1, untouched, sizeof(buf) - (size_t)n + 1) != 0)
			fail_msg("%s: a refused encode wrote past its buffer", what);
		/* Exactly enough: the same bytes as with room to spare, and nothing past them. */
		if (encoders[i].encode(buf, (size_t)n) != n || memcmp(buf, want, (size_t)n) != 0 ||
		    memcmp(buf + n, untouched, sizeof(buf) - (size_t)n) != 0)
			fail_msg("%s: an exact-size encode differs", what);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_record_type_round_trips),
		cmocka_unit_test(test_bad_message_headers_are_refused),
		cmocka_unit_test(test_encoder_reports_no_space_for_every_short_buffer),
		cmocka_unit_test(test_invalid_inline_input_is_not_encoded),
		cmocka_unit_test(test_control_bytes_in_names_are_replaced_and_long_names_truncated),
		cmocka_unit_test(test_unknown_record_types_are_skipped_by_size),
		cmocka_unit_test(test_bad_record_is_skipped_and_reader_stays_in_sync),
		cmocka_unit_test(test_a_name_is_refused_for_a_control_byte_at_any_place),
		cmocka_unit_test(test_record_sizes_that_lie_end_the_message),
		cmocka_unit_test(test_known_records_with_trailing_bytes_are_refused),
		cmocka_unit_test(test_zero_sized_or_wrapping_code_is_refused),
		cmocka_unit_test(test_hello_of_an_older_agent_decodes_with_no_service),
		cmocka_unit_test(test_tables_records_round_trip_and_bad_ones_are_refused),
		cmocka_unit_test(test_hello_fields_of_a_newer_agent_are_ignored),
		cmocka_unit_test(test_hello_with_a_broken_service_is_refused),
		cmocka_unit_test(test_every_truncation_is_decoded_safely),
		cmocka_unit_test(test_random_mutations_are_decoded_safely),
		cmocka_unit_test(test_interned_load_resolves_to_the_same_code_load),
		cmocka_unit_test(test_zero_ids_are_neither_encoded_nor_decoded),
		cmocka_unit_test(test_vm_layout_round_trips_and_absent_keys_stay_absent),
		cmocka_unit_test(test_vm_layout_unknown_keys_are_ignored_and_bad_entries_refused),
		cmocka_unit_test(test_code_frame_round_trips),
		cmocka_unit_test(test_invalid_code_frames_are_refused_both_ways),
		cmocka_unit_test(test_code_frame_truncations_and_mutations_are_decoded_safely),
		cmocka_unit_test(test_code_lines_round_trip),
		cmocka_unit_test(test_invalid_code_lines_are_refused_both_ways),
		cmocka_unit_test(test_code_lines_truncations_and_mutations_are_decoded_safely),
		cmocka_unit_test(test_every_encoder_refuses_a_buffer_one_byte_short),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
