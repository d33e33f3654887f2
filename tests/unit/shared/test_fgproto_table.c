// SPDX-License-Identifier: MIT
/*
 * test_fgproto_table.c - the records' field tables (FGP_<TYPE>_FIELDS) against the wire: one
 * example of every record type in FGP_TYPES is encoded, its bytes compared with the bytes the
 * format has always had (written out below), walked field by field from its table, decoded,
 * and every field of the table compared with what was encoded.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fgproto.h"

#define S(lit) ((struct fgp_str){ (lit), (uint16_t)(sizeof(lit) - 1) })

/* ---- the examples ------------------------------------------------------------------------ */

static const struct fgp_hello hello = {
	.proto_version = FGP_VERSION,
	.pid = 4242,
	.flags = FGP_HELLO_PRESERVE_FRAME_POINTER | FGP_HELLO_EVENTS,
	.ts = 0x1122334455667788ull,
	.jvm_version = S("17.0.9+9"),
	.agent_version = S("0.1.0"),
	.service = S("orders"),
	.token = 0xfeedfacecafebeefull,
};

static const uint16_t chain_a[] = { 0, 1 };
static const uint16_t chain_b[] = { 1 };
static const struct fgp_str methods[] = { S("Hot::leaf"), S("Hot::loop") };
static const struct fgp_pc_in pcs[] = { { 0x10, 2, chain_a }, { 0x40, 1, chain_b } };

static const struct fgp_code_load_in load = {
	.addr = 0x7f0000001000ull,
	.size = 0x240,
	.ts = 0x0102030405060708ull,
	.flags = FGP_REC_REPLAY,
	.name = S("Hot::loop"),
	.n_methods = 2,
	.methods = methods,
	.n_pcs = 2,
	.pcs = pcs,
};

static const uint32_t method_ids[] = { 5, 9 };
static const struct fgp_code_load_ids_in load_ids = {
	.addr = 0x7f0000003000ull,
	.size = 0x80,
	.ts = 0x0a0b0c0d0e0f1011ull,
	.flags = FGP_REC_AGAIN,
	.name_id = 9,
	.n_methods = 2,
	.method_ids = method_ids,
	.n_pcs = 2,
	.pcs = pcs,
};

static const struct fgp_code_unload unload = { .addr = 0x7f0000001000ull, .ts = 0x99887766ull };

static const struct fgp_dynamic_code dyn = {
	.addr = 0x7f0000002000ull,
	.size = 0x40,
	.ts = 0x5555aaaa5555aaaaull,
	.name = S("Interpreter"),
};

static const struct fgp_snapshot snap_begin = { .ts = 555, .count = 0x01020304 };
static const struct fgp_snapshot snap_end = { .ts = 556, .count = 2 };
static const struct fgp_tables tables = { .ts = 0x700000007ull, .on = 1 };
static const struct fgp_dropped dropped = { .ts = 666, .queue_full = 7, .table_full = 1ull << 40 };

static const struct fgp_name name = { .id = 7, .name = S("java.lang.String.length()I") };

static const struct fgp_code_frame frame = {
	.addr = 0x7f0000002010ull,
	.kind = FGP_CF_NMETHOD,
	.flags = 0,
	.frame_size = 48,
	.code_begin = 0x7f0000002000ull,
	.code_size = 0x200,
	.frame_complete = 0x18,
	.deopt = 0x7f00000021f0ull,
	.deopt_mh = 0,
	.orig_pc_offset = 40,
};

static const uint16_t lines_a[] = { 12 };
static const uint16_t lines_b[] = { 30, 7 };
static const struct fgp_pc_in line_pcs[] = { { 0x8, 1, lines_a }, { 0x20, 2, lines_b } };
static const struct fgp_code_lines_in lines = {
	.addr = 0x7f0000001000ull,
	.size = 0x100,
	.ts = 0x0102030405060708ull,
	.flags = FGP_REC_AGAIN,
	.n_pcs = 2,
	.pcs = line_pcs,
};

static const struct fgp_frame_in ev_frames[] = { { 5, 12 }, { 9, 0 } };
static const struct fgp_stack_event_in ev = {
	.ts = 0x123456789ull,
	.tid = 77,
	.kind = FGP_EV_ALLOC,
	.flags = FGP_REC_STACK_TRUNCATED,
	.value = 4096,
	.interval = 524288,
	.tag = 3,
	.cls = S("byte[]"),
	.depth = 2,
	.frames = ev_frames,
};

static const uint64_t free_tags[] = { 3, 4, 0xffffffffffull };
/* OBJECT_FREE's fields as its table names them (the encoder takes the tags and their count). */
struct free_fields {
	uint32_t n;
};
static const struct free_fields freed = { 3 };

static const struct fgp_events events = {
	.ts = 0x4444ull,
	.on = FGP_EVM_ALLOC | FGP_EVM_LIVE | FGP_EVM_LOCK,
	.alloc_interval = 524288,
	.lock_threshold_ns = 10000,
	.dropped_queue = 1,
	.dropped_other = 2,
	.lock_short = 3,
	.lock_short_ns = 4,
};

static const struct fgp_alloc_cost cost = {
	.ts = 0x5555ull,
	.samples = 1000,
	.cost_ns = 8000000,
	.cpu_ns = 800000000,
};

static struct fgp_vm_layout layout_example(void)
{
	struct fgp_vm_layout l = { .caps = FGP_VML_CAP_NAMES | FGP_VML_CAP_INTERP_FRAME };

	fgp_vml_set(&l, FGP_VML_JDK_MAJOR, 17);
	fgp_vml_set(&l, FGP_VML_INTERP_METHOD_SLOT, (uint32_t)-3);
	return l;
}

/* ---- walking the bytes by the tables ----------------------------------------------------- */

/* The fields of one table, read from the encoded bytes at *p and compared with in's. */
#define WALK_U16(m)                                                                                \
	assert_int_equal(fgle_get16(p), in->m);                                                    \
	p += 2;
#define WALK_U32(m)                                                                                \
	assert_int_equal(fgle_get32(p), in->m);                                                    \
	p += 4;
#define WALK_U64(m)                                                                                \
	assert_true(fgle_get64(p) == in->m);                                                       \
	p += 8;
#define WALK_I32(m)                                                                                \
	assert_int_equal((int32_t)fgle_get32(p), in->m);                                           \
	p += 4;
#define WALK_PAD32(m)                                                                              \
	assert_int_equal(fgle_get32(p), 0);                                                        \
	p += 4;
#define WALK_ZERO32(m) WALK_PAD32(m)
#define WALK_STR(m)                                                                                \
	assert_int_equal(fgle_get16(p), in->m.len);                                                \
	assert_memory_equal(p + 2, in->m.ptr, in->m.len);                                          \
	p += 2 + in->m.len;
#define WALK(kind, m) WALK_##kind(m)

/* The same fields of the decoded record out. */
#define SAME_U16(m) assert_int_equal(out->m, in->m);
#define SAME_U32(m) assert_int_equal(out->m, in->m);
#define SAME_U64(m) assert_true(out->m == in->m);
#define SAME_I32(m) assert_int_equal(out->m, in->m);
#define SAME_PAD32(m)
#define SAME_ZERO32(m)
#define SAME_STR(m)                                                                                \
	assert_int_equal(out->m.len, in->m.len);                                                   \
	assert_memory_equal(out->m.ptr, in->m.ptr, in->m.len);
#define SAME(kind, m) SAME_##kind(m)

/*
 * The bytes of rec after its header start with the fields of FIELDS as the example `in` holds
 * them, and the decoded record `out` has each of them; walked = where those fields end.
 */
#define CHECK_TABLE(FIELDS, rec)                                                                   \
	do {                                                                                       \
		const uint8_t *p = (rec) + FGP_REC_HEADER_SIZE;                                    \
                                                                                                   \
		FIELDS(WALK)                                                                       \
		FIELDS(SAME)                                                                       \
		walked = (size_t)(p - (rec));                                                      \
	} while (0)

/* ---- one example per type ---------------------------------------------------------------- */

struct example {
	uint16_t type;
	const char *bytes; /* the record as hex, as the format has always written it */
};

static const struct example examples[] = {
	{ FGP_HELLO, "0100000041000000010000009210000011000000000000008877665544332211"
		     "080031372e302e392b390500302e312e3006006f7264657273efbefecacefaed"
		     "fe" },
	{ FGP_CODE_LOAD, "020001005900000000100000007f000040020000000000000807060504030201"
			 "0900486f743a3a6c6f6f7002000900486f743a3a6c6561660900486f743a3a6c"
			 "6f6f7002000000100000000200000001004000000001000100" },
	{ FGP_CODE_UNLOAD, "030000001800000000100000007f00006677889900000000" },
	{ FGP_DYNAMIC_CODE, "040000002d00000000200000007f00004000000000000000aaaa5555aaaa5555"
			    "0b00496e746572707265746572" },
	{ FGP_SNAPSHOT_BEGIN, "05000000180000002b020000000000000403020100000000" },
	{ FGP_SNAPSHOT_END, "06000000180000002c020000000000000200000000000000" },
	{ FGP_TABLES, "0c0000001800000007000000070000000100000000000000" },
	{ FGP_DROPPED, "07000000200000009a0200000000000007000000000000000000000000010000" },
	{ FGP_VM_LAYOUT, "09000000200000000300000002000000010000001100000012000000fdffffff" },
	{ FGP_CODE_FRAME, "0f0000004000000010200000007f0000010000003000000000200000007f0000"
			  "0002000018000000f0210000007f000000000000000000002800000000000000" },
	{ FGP_CODE_LINES, "0a0004003200000000100000007f000000010000020000000807060504030201"
			  "0800000001000c002000000002001e000700" },
	{ FGP_NAME, "080000002c00000007000000000000001a006a6176612e6c616e672e53747269"
		    "6e672e6c656e677468282949" },
	{ FGP_CODE_LOAD_IDS, "0b0004004000000000300000007f0000800000000900000011100f0e0d0c0b0a"
			     "0200050000000900000002000000100000000200000001004000000001000100" },
	{ FGP_STACK_EVENT, "100008004800000089674523010000004d000000010002000010000000000000"
			   "000008000000000003000000000000000600627974655b5d050000000c000000"
			   "0900000000000000" },
	{ FGP_OBJECT_FREE, "1100000028000000030000000000000003000000000000000400000000000000"
			   "ffffffffff000000" },
	{ FGP_EVENTS, "1200000048000000444400000000000007000000000000000000080000000000"
		      "1027000000000000010000000000000002000000000000000300000000000000"
		      "0400000000000000" },
	{ FGP_ALLOC_COST, "13000000280000005555000000000000e80300000000000000127a0000000000"
			  "0008af2f00000000" },
};

/* Encode the example of type into buf: its length (and its size function's, where it has one). */
static int encode_example(uint16_t type, uint8_t *buf, size_t cap)
{
	struct fgp_vm_layout l = layout_example();

	switch (type) {
	case FGP_HELLO:
		assert_int_equal(fgp_hello_size(&hello), fgp_encode_hello(buf, cap, &hello));
		return fgp_encode_hello(buf, cap, &hello);
	case FGP_CODE_LOAD:
		assert_int_equal(fgp_code_load_size(&load), fgp_encode_code_load(buf, cap, &load));
		return fgp_encode_code_load(buf, cap, &load);
	case FGP_CODE_UNLOAD:
		return fgp_encode_code_unload(buf, cap, &unload);
	case FGP_DYNAMIC_CODE:
		assert_int_equal(fgp_dynamic_code_size(&dyn),
				 fgp_encode_dynamic_code(buf, cap, &dyn));
		return fgp_encode_dynamic_code(buf, cap, &dyn);
	case FGP_SNAPSHOT_BEGIN:
		return fgp_encode_snapshot(buf, cap, FGP_SNAPSHOT_BEGIN, &snap_begin);
	case FGP_SNAPSHOT_END:
		return fgp_encode_snapshot(buf, cap, FGP_SNAPSHOT_END, &snap_end);
	case FGP_TABLES:
		return fgp_encode_tables(buf, cap, &tables);
	case FGP_DROPPED:
		return fgp_encode_dropped(buf, cap, &dropped);
	case FGP_VM_LAYOUT:
		assert_int_equal(fgp_vm_layout_size(&l), fgp_encode_vm_layout(buf, cap, &l));
		return fgp_encode_vm_layout(buf, cap, &l);
	case FGP_CODE_FRAME:
		return fgp_encode_code_frame(buf, cap, &frame);
	case FGP_CODE_LINES:
		assert_int_equal(fgp_code_lines_size(&lines),
				 fgp_encode_code_lines(buf, cap, &lines));
		return fgp_encode_code_lines(buf, cap, &lines);
	case FGP_NAME:
		assert_int_equal(fgp_name_size(name.name), fgp_encode_name(buf, cap, 7, name.name));
		return fgp_encode_name(buf, cap, name.id, name.name);
	case FGP_CODE_LOAD_IDS:
		assert_int_equal(fgp_code_load_ids_size(&load_ids),
				 fgp_encode_code_load_ids(buf, cap, &load_ids));
		return fgp_encode_code_load_ids(buf, cap, &load_ids);
	case FGP_STACK_EVENT:
		assert_int_equal(fgp_stack_event_size(&ev), fgp_encode_stack_event(buf, cap, &ev));
		return fgp_encode_stack_event(buf, cap, &ev);
	case FGP_OBJECT_FREE:
		assert_int_equal(fgp_object_free_size(3),
				 fgp_encode_object_free(buf, cap, free_tags, 3));
		return fgp_encode_object_free(buf, cap, free_tags, freed.n);
	case FGP_EVENTS:
		return fgp_encode_events(buf, cap, &events);
	case FGP_ALLOC_COST:
		return fgp_encode_alloc_cost(buf, cap, &cost);
	default:
		fail_msg("no example of record type %u", type);
		return -1;
	}
}

/*
 * Check rec (len bytes, decoded as *r) against its example through its type's table: the
 * fields' bytes, then the decoded fields. Returns how many bytes the table's fields take.
 */
static size_t check_example(uint16_t type, const uint8_t *rec, const struct fgp_record *r)
{
	struct fgp_vm_layout l = layout_example();
	size_t walked = 0;

	switch (type) {
	case FGP_HELLO: {
		const struct fgp_hello *in = &hello, *out = &r->u.hello;

		CHECK_TABLE(FGP_HELLO_FIELDS, rec);
		{
			const uint8_t *p = rec + walked;

			FGP_HELLO_OPTIONAL(WALK)
			FGP_HELLO_OPTIONAL(SAME)
			walked = (size_t)(p - rec);
		}
		break;
	}
	case FGP_CODE_LOAD: {
		const struct fgp_code_load_in *in = &load;
		const struct fgp_code_load *out = &r->u.load;

		CHECK_TABLE(FGP_CODE_LOAD_FIELDS, rec);
		assert_int_equal(out->n_methods, in->n_methods);
		assert_int_equal(out->n_pcs, in->n_pcs);
		assert_int_equal(out->name_id, 0);
		break;
	}
	case FGP_CODE_LOAD_IDS: {
		const struct fgp_code_load_ids_in *in = &load_ids;
		const struct fgp_code_load *out = &r->u.load;

		CHECK_TABLE(FGP_CODE_LOAD_IDS_FIELDS, rec);
		assert_int_equal(out->n_methods, in->n_methods);
		assert_int_equal(fgp_load_method_id(out, 1), 9);
		break;
	}
	case FGP_CODE_UNLOAD: {
		const struct fgp_code_unload *in = &unload, *out = &r->u.unload;

		CHECK_TABLE(FGP_CODE_UNLOAD_FIELDS, rec);
		break;
	}
	case FGP_DYNAMIC_CODE: {
		const struct fgp_dynamic_code *in = &dyn, *out = &r->u.dyn;

		CHECK_TABLE(FGP_DYNAMIC_CODE_FIELDS, rec);
		break;
	}
	case FGP_SNAPSHOT_BEGIN:
	case FGP_SNAPSHOT_END: {
		const struct fgp_snapshot *in =
			type == FGP_SNAPSHOT_BEGIN ? &snap_begin : &snap_end;
		const struct fgp_snapshot *out = &r->u.snap;

		CHECK_TABLE(FGP_SNAPSHOT_FIELDS, rec);
		break;
	}
	case FGP_TABLES: {
		const struct fgp_tables *in = &tables, *out = &r->u.tables;

		CHECK_TABLE(FGP_TABLES_FIELDS, rec);
		break;
	}
	case FGP_DROPPED: {
		const struct fgp_dropped *in = &dropped, *out = &r->u.dropped;

		CHECK_TABLE(FGP_DROPPED_FIELDS, rec);
		break;
	}
	case FGP_VM_LAYOUT: {
		const struct fgp_vm_layout *in = &l, *out = &r->u.layout;

		CHECK_TABLE(FGP_VM_LAYOUT_FIELDS, rec);
		assert_true(out->present == in->present);
		assert_int_equal(fgp_vml_get(out, FGP_VML_INTERP_METHOD_SLOT), (uint32_t)-3);
		break;
	}
	case FGP_CODE_FRAME: {
		const struct fgp_code_frame *in = &frame, *out = &r->u.frame;

		CHECK_TABLE(FGP_CODE_FRAME_FIELDS, rec);
		break;
	}
	case FGP_CODE_LINES: {
		const struct fgp_code_lines_in *in = &lines;
		const struct fgp_code_lines *out = &r->u.lines;

		CHECK_TABLE(FGP_CODE_LINES_FIELDS, rec);
		break;
	}
	case FGP_NAME: {
		const struct fgp_name *in = &name, *out = &r->u.name;

		CHECK_TABLE(FGP_NAME_FIELDS, rec);
		break;
	}
	case FGP_STACK_EVENT: {
		const struct fgp_stack_event_in *in = &ev;
		const struct fgp_stack_event *out = &r->u.ev;

		CHECK_TABLE(FGP_STACK_EVENT_FIELDS, rec);
		break;
	}
	case FGP_OBJECT_FREE: {
		const struct free_fields *in = &freed;
		const struct fgp_object_free *out = &r->u.freed;

		CHECK_TABLE(FGP_OBJECT_FREE_FIELDS, rec);
		assert_true(fgp_free_tag(out, 2) == free_tags[2]);
		break;
	}
	case FGP_EVENTS: {
		const struct fgp_events *in = &events, *out = &r->u.events;

		CHECK_TABLE(FGP_EVENTS_FIELDS, rec);
		break;
	}
	case FGP_ALLOC_COST: {
		const struct fgp_alloc_cost *in = &cost, *out = &r->u.cost;

		CHECK_TABLE(FGP_ALLOC_COST_FIELDS, rec);
		break;
	}
	default:
		fail_msg("no check of record type %u", type);
	}
	return walked;
}

/* The bytes of hex (two digits a byte) into out: how many. */
static size_t unhex(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = 0;

	for (; hex[0] && hex[1] && n < cap; hex += 2) {
		unsigned v;

		assert_int_equal(sscanf(hex, "%2x", &v), 1);
		out[n++] = (uint8_t)v;
	}
	return n;
}

static const struct example *example_of(uint16_t type)
{
	for (size_t i = 0; i < sizeof(examples) / sizeof(examples[0]); i++)
		if (examples[i].type == type)
			return &examples[i];
	return NULL;
}

/* ---- the tests --------------------------------------------------------------------------- */

static void test_every_type_has_an_example(void **state)
{
	size_t n = 0;

	(void)state;
#define HAS_EXAMPLE(type, label)                                                                   \
	assert_non_null(example_of(type));                                                         \
	assert_string_equal(fgp_type_name(type), label);                                           \
	n++;
	FGP_TYPES(HAS_EXAMPLE)
#undef HAS_EXAMPLE
	assert_int_equal(n, sizeof(examples) / sizeof(examples[0]));
	assert_string_equal(fgp_type_name(999), "unknown");
}

static void test_every_type_keeps_its_bytes_and_round_trips_by_its_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(examples) / sizeof(examples[0]); i++) {
		uint8_t buf[1024], want[1024];
		struct fgp_record r;
		uint16_t type = examples[i].type;
		int n = encode_example(type, buf, sizeof(buf));
		size_t walked;

		print_message("%s\n", fgp_type_name(type));
		assert_true(n > 0);
		assert_int_equal(unhex(examples[i].bytes, want, sizeof(want)), (size_t)n);
		assert_memory_equal(buf, want, (size_t)n);
		assert_int_equal(fgp_decode_record(buf, (size_t)n, &r), 1);
		assert_int_equal(r.type, type);
		assert_int_equal(r.size, (uint32_t)n);
		assert_int_equal(r.flags, fgp_rec_flags(buf));
		walked = check_example(type, buf, &r);
		assert_true(walked > FGP_REC_HEADER_SIZE && walked <= (size_t)n);
		/* A fixed-size record is its fields and nothing more. */
		if (type == FGP_CODE_UNLOAD || type == FGP_SNAPSHOT_BEGIN || type == FGP_TABLES ||
		    type == FGP_DROPPED || type == FGP_CODE_FRAME || type == FGP_EVENTS ||
		    type == FGP_ALLOC_COST)
			assert_int_equal(walked, (size_t)n);
	}
}

static void test_fixed_sizes_are_their_tables_bytes(void **state)
{
	(void)state;
	assert_int_equal(FGP_CODE_UNLOAD_SIZE, 8 + 16);
	assert_int_equal(FGP_SNAPSHOT_SIZE, 8 + 16);
	assert_int_equal(FGP_TABLES_SIZE, 8 + 16);
	assert_int_equal(FGP_DROPPED_SIZE, 8 + 24);
	assert_int_equal(FGP_EVENTS_SIZE, 8 + 64);
	assert_int_equal(FGP_ALLOC_COST_SIZE, 8 + 32);
	assert_int_equal(FGP_CODE_FRAME_SIZE, 8 + 56);
}

static void test_a_decoded_load_reencodes_to_the_same_bytes(void **state)
{
	uint8_t buf[1024], again[1024];
	struct fgp_record r;
	int n = fgp_encode_code_load(buf, sizeof(buf), &load);

	(void)state;
	assert_true(n > 0);
	assert_int_equal(fgp_decode_record(buf, (size_t)n, &r), 1);
	assert_int_equal(fgp_encode_code_load_resolved(again, sizeof(again), &r.u.load, load.flags),
			 n);
	assert_memory_equal(again, buf, (size_t)n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_type_has_an_example),
		cmocka_unit_test(test_every_type_keeps_its_bytes_and_round_trips_by_its_table),
		cmocka_unit_test(test_fixed_sizes_are_their_tables_bytes),
		cmocka_unit_test(test_a_decoded_load_reencodes_to_the_same_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
