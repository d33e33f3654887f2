// SPDX-License-Identifier: MIT
/*
 * mkseeds.c - writes the structured seed inputs of the libFuzzer targets whose input is more
 * than one decoder's bytes (fuzz/corpus/ingest, ctl_frame, interp and vmstack), so that
 * mutation starts from a working JVM: valid records of every type, a daemon's control frames,
 * and a memory image with a real interpreted frame over a compiled frame and call_stub.
 * Also the event records' seeds (fuzz/corpus/fgevents, fuzz/corpus/fgproto/events.bin).
 * Run by scripts/fuzz.sh --seeds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_frame.h"
#include "fgproto.h"

static uint8_t buf[1 << 16];
static size_t len;

static void w8(uint8_t v)
{
	buf[len++] = v;
}

static void w16(uint16_t v)
{
	w8((uint8_t)v);
	w8((uint8_t)(v >> 8));
}

static void at64(size_t off, uint64_t v)
{
	memcpy(buf + off, &v, 8);
}

static void at16(size_t off, uint16_t v)
{
	memcpy(buf + off, &v, 2);
}

static void save(const char *dir, const char *name, const uint8_t *p, size_t n)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "wb")) || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

#define ENC(call)                                                                                  \
	do {                                                                                       \
		int rv_ = (call);                                                                  \
		if (rv_ < 0)                                                                       \
			abort();                                                                   \
		m += (size_t)rv_;                                                                  \
	} while (0)

/* One message of every record type after the HELLO (the harness sends the HELLO itself). */
static size_t records(uint8_t *out, size_t cap)
{
	static const struct fgp_str methods[] = { { "fz.A::run", 9 }, { "fz.A::inner", 11 } };
	static const uint16_t chain0[] = { 1, 0 }, chain1[] = { 0 };
	static const uint16_t lines0[] = { 12, 7 }, lines1[] = { 9 };
	static const uint32_t ids[] = { 7, 9 };
	const struct fgp_pc_in pcs[] = { { 0x10, 2, chain0 }, { 0x40, 1, chain1 } };
	const struct fgp_pc_in lpcs[] = { { 0x10, 2, lines0 }, { 0x40, 1, lines1 } };
	struct fgp_code_load_in load = { .addr = 0x7f0000001000,
					 .size = 0x80,
					 .ts = 2,
					 .name = { "fz.A::run", 9 },
					 .n_methods = 2,
					 .methods = methods,
					 .n_pcs = 2,
					 .pcs = pcs };
	struct fgp_code_load_ids_in lids = { .addr = 0x7f0000002000,
					     .size = 0x80,
					     .ts = 3,
					     .name_id = 7,
					     .n_methods = 2,
					     .method_ids = ids,
					     .n_pcs = 2,
					     .pcs = pcs };
	struct fgp_code_lines_in lines = {
		.addr = 0x7f0000001000, .size = 0x80, .ts = 2, .n_pcs = 2, .pcs = lpcs
	};
	struct fgp_dynamic_code dyn = { 0x7f0000100000, 0x1000, 1, { "Interpreter", 11 } };
	struct fgp_code_frame cf = { .addr = 0x7f0000001000,
				     .kind = FGP_CF_NMETHOD,
				     .frame_size = 0x30,
				     .code_begin = 0x7f0000001000,
				     .code_size = 0x80,
				     .frame_complete = 0x10,
				     .deopt = 0x7f0000001060,
				     .deopt_mh = 0x7f0000001070,
				     .orig_pc_offset = 0x20 };
	struct fgp_vm_layout lay = { .caps = FGP_VML_CAP_NAMES | FGP_VML_CAP_INTERP_FRAME };
	struct fgp_snapshot snap = { 4, 1 };
	struct fgp_dropped drop = { 5, 1, 2 };
	struct fgp_tables tab = { 6, 1 };
	struct fgp_code_unload un = { 0x7f0000001000, 9 };
	size_t m = 0;

	for (unsigned k = 0; k < 14; k++)
		fgp_vml_set(&lay, (enum fgp_vml_key)k, 8 + 2 * k);
	ENC(fgp_encode_msg_header(out, cap));
	ENC(fgp_encode_tables(out + m, cap - m, &tab));
	ENC(fgp_encode_dynamic_code(out + m, cap - m, &dyn));
	ENC(fgp_encode_vm_layout(out + m, cap - m, &lay));
	ENC(fgp_encode_snapshot(out + m, cap - m, FGP_SNAPSHOT_BEGIN, &snap));
	ENC(fgp_encode_code_load(out + m, cap - m, &load));
	ENC(fgp_encode_snapshot(out + m, cap - m, FGP_SNAPSHOT_END, &snap));
	ENC(fgp_encode_code_frame(out + m, cap - m, &cf));
	ENC(fgp_encode_code_lines(out + m, cap - m, &lines));
	ENC(fgp_encode_name(out + m, cap - m, 7, methods[0]));
	ENC(fgp_encode_name(out + m, cap - m, 9, methods[1]));
	ENC(fgp_encode_code_load_ids(out + m, cap - m, &lids));
	ENC(fgp_encode_dropped(out + m, cap - m, &drop));
	ENC(fgp_encode_code_unload(out + m, cap - m, &un));
	return m;
}

/* The event records: an alloc sample cut at the depth cap, a lock wait, freed tags, EVENTS. */
static size_t event_records(uint8_t *out, size_t cap)
{
	static const struct fgp_frame_in frames[] = { { 7, 12 }, { 9, 0 }, { 7, 40 } };
	static const uint64_t tags[] = { 1, 2, 0x8000000000000000ull };
	struct fgp_stack_event_in alloc = { .ts = 10,
					    .tid = 77,
					    .kind = FGP_EV_ALLOC,
					    .flags = FGP_REC_STACK_TRUNCATED,
					    .value = 4096,
					    .interval = 512 << 10,
					    .tag = 1,
					    .cls = { "byte[]", 6 },
					    .depth = 3,
					    .frames = frames };
	struct fgp_stack_event_in lock = { .ts = 11,
					   .tid = 78,
					   .kind = FGP_EV_LOCK,
					   .value = 250000,
					   .interval = 10000,
					   .cls = { "java.lang.Object", 16 },
					   .depth = 2,
					   .frames = frames };
	struct fgp_events ev = { .ts = 9,
				 .on = FGP_EVM_ALLOC | FGP_EVM_LIVE | FGP_EVM_LOCK,
				 .alloc_interval = 512 << 10,
				 .lock_threshold_ns = 10000,
				 .dropped_queue = 1,
				 .dropped_other = 2,
				 .lock_short = 3,
				 .lock_short_ns = 4000 };
	size_t m = 0;

	ENC(fgp_encode_events(out + m, cap - m, &ev));
	ENC(fgp_encode_stack_event(out + m, cap - m, &alloc));
	ENC(fgp_encode_stack_event(out + m, cap - m, &lock));
	ENC(fgp_encode_object_free(out + m, cap - m, tags, 3));
	return m;
}

/* fgevents: the event records alone (the target adds the header); fgproto: them in a message. */
static void events(const char *corpus)
{
	uint8_t msg[4096];
	char d[512];
	size_t hdr = fgp_msg_header_size(), n;

	if (fgp_encode_msg_header(msg, sizeof(msg)) < 0)
		abort();
	n = hdr + event_records(msg + hdr, sizeof(msg) - hdr);
	snprintf(d, sizeof(d), "%s/fgevents", corpus);
	save(d, "records", msg + hdr, n - hdr);
	snprintf(d, sizeof(d), "%s/fgproto", corpus);
	save(d, "events.bin", msg, n);
}

static void ingest(const char *dir)
{
	uint8_t msg[8192];
	size_t n = records(msg, sizeof(msg)), hdr = fgp_msg_header_size();

	/* As the agent sends it (observers want records, tables on demand). */
	len = 0;
	w8(0x03);
	w16((uint16_t)n);
	w8(0x04);
	memcpy(buf + len, msg, n);
	len += n;
	save(dir, "all", buf, len);
	/* Records only (the harness adds the header), then the connection ends and another
	 * sends them again: a replay. */
	len = 0;
	w8(0x01);
	for (int i = 0; i < 2; i++) {
		w16((uint16_t)(n - hdr));
		w8(i == 0 ? 0x03 : 0x05);
		memcpy(buf + len, msg + hdr, n - hdr);
		len += n - hdr;
	}
	save(dir, "reconnect", buf, len);
	/* An agent with events, asked for them: names, then its events, then more. */
	n += event_records(msg + n, sizeof(msg) - n);
	len = 0;
	w8(0x09);
	w16((uint16_t)n);
	w8(0x04);
	memcpy(buf + len, msg, n);
	len += n;
	save(dir, "events", buf, len);
}

/* The interpreted method both memory seeds share (fuzz_vm.h's JDK 17 layout). */
static void method(void)
{
	static const uint8_t lines[] = { 0xff, 0x00, 0x14, 0x21, 0x19, 0x00 };

	at64(0x108, 0x100000 + 0x200); /* Method::_constMethod */
	at64(0x208, 0x100000 + 0x300); /* ConstMethod::_constants */
	at16(0x200 + 28, 1);	       /* flags: has line numbers */
	at16(0x200 + 32, 16);	       /* code size */
	at16(0x200 + 34, 5);	       /* name index */
	at16(0x200 + 36, 6);
	at16(0x200 + 38, 1);
	memcpy(buf + 0x230 + 16, lines, sizeof(lines));
	at64(0x300 + 24, 0x100000 + 0x500);	    /* pool holder */
	at64(0x300 + 72 + 5 * 8, 0x100000 + 0x680); /* name Symbol */
	at64(0x500 + 24, 0x100000 + 0x600);	    /* Klass::_name */
	at16(0x600 + 4, 10);
	memcpy(buf + 0x606, "fz/Hostile", 10);
	at16(0x680 + 4, 3);
	memcpy(buf + 0x686, "run", 3);
	at64(0x410, 0x100000 + 0x420); /* unload slot -> the count */
	at64(0x420, 7);
}

static void interp(const char *dir)
{
	memset(buf, 0, sizeof(buf));
	len = 53; /* the layout as it is */
	w8(0x03); /* lines */
	w8(1);	  /* two requests */
	w16(0x100);
	w16(0x233);
	w16(0);
	w8(1);
	w16(0x100);
	w16(0x235);
	w16(0x234);
	w8(2);
	w16(0x686); /* then the method's name changes: "run" -> "bun" */
	w8(0x10);
	method();
	save(dir, "method", buf, 0x700);
}

/* An interpreted leaf over a compiled frame over call_stub over a thread's root. */
static void vmstack(const char *dir, const char *name, uint8_t sel, uint16_t ip)
{
	const uint64_t code = 0x40000000, native = 0x50000000, b = 0x100000;

	memset(buf, 0, sizeof(buf));
	len = 53;
	w8(0x00);
	for (int i = 0; i < 16; i++)
		w8(i == 2 ? 2 : (uint8_t)(i << 2)); /* page 2: the root */
	len += 40;				    /* CODE_FRAME facts as they are */
	w8(sel);
	w16(ip);
	w16(0x7c0); /* sp */
	w16(0x800); /* rbp */
	w16(0x100); /* rbx: Method* */
	w16(0x233); /* r13: bcp */
	w16(0x400); /* stack copy */
	w8(4);
	w8(0);
	w16(0x100);
	w8(4 + 5 * 4); /* compiled A */
	w16(0x100);
	w8(4 + 5 * 1); /* call_stub */
	w16(0x10);
	w8(1);
	w16(0x2010);
	method();
	at64(0x800 - 24, b + 0x100); /* method slot */
	at64(0x800 - 64, b + 0x233); /* bcp slot */
	at64(0x800 - 8, b + 0x810);  /* sender sp */
	at64(0x800, b + 0x900);
	at64(0x808, code + 0x4100); /* into compiled A */
	at64(0x830, b + 0x900);
	at64(0x838, code + 0x1010); /* into call_stub */
	at64(0x900, 0);
	at64(0x908, native + 0x2010); /* the root */
	at64(0x420, 0);		      /* no class unloaded yet: the count vouches for any time */
	save(dir, name, buf, 0xc00);
}

/* An events request, and a daemon's EVENTS frame: a stack, freed tags, an agent's state. */
static void ctl_events(const char *dir)
{
	static const struct jvm_ev_frame frames[] = { { "Alloc::fill", 11, 12 },
						       { "Main::main", 10, 0 } };
	static const uint64_t tags[] = { 1, 2, 3 };
	struct jvm_evwant w = { .on = FGP_EVM_ALLOC | FGP_EVM_LIVE, .alloc_interval = 524288,
				.depth = 128 };
	struct jvm_event st = { .type = JVM_EV_STACK, .host_tid = 4250, .ts = 5,
				.kind = FGP_EV_ALLOC, .value = 4096, .interval = 524288,
				.tag = 1, .cls = { "byte[]", 6 }, .frames = frames, .depth = 2 };
	struct jvm_event fr = { .type = JVM_EV_FREE, .tags = tags, .ntags = 3 };
	struct jvm_event sv = { .type = JVM_EV_STATE, .state = { .ts = 4, .on = FGP_EVM_ALLOC,
								  .alloc_interval = 524288 } };
	struct ctl_hdr h = { CTL_HDR_SIZE + CTL_EVWANT_SIZE, CTL_EVENTS_REQ, 0, 0 };

	ctl_hdr_encode(buf, &h);
	ctl_evwant_encode(buf + CTL_HDR_SIZE, &w);
	save(dir, "events_request", buf, h.size);
	len = CTL_HDR_SIZE;
	len += ctl_event_encode(buf + len, sizeof(buf) - len, &st);
	len += ctl_event_encode(buf + len, sizeof(buf) - len, &fr);
	len += ctl_event_encode(buf + len, sizeof(buf) - len, &sv);
	h = (struct ctl_hdr){ (uint32_t)len, CTL_EVENTS, 0, 4242 };
	ctl_hdr_encode(buf, &h);
	save(dir, "events", buf, len);
}

/* A daemon's answers: a JVM, a batch of records, the list's end, a JVM gone. */
static void ctl(const char *dir)
{
	struct jvm_info ji = { .host_pid = 4242,
			       .ns_pid = 7,
			       .hello_flags = 3,
			       .start_time = 99,
			       .connected = true,
			       .container_id = "0123abcd",
			       .jvm_version = "17.0.9",
			       .agent_version = "0.1.0",
			       .service = "checkout" };
	struct ctl_hdr h = { 0, CTL_JVM, 0, 4242 };
	uint8_t msg[8192];
	size_t n;

	len = 0;
	n = ctl_jvm_encode(buf + CTL_HDR_SIZE, &ji);
	h.size = (uint32_t)(CTL_HDR_SIZE + n);
	ctl_hdr_encode(buf, &h);
	len = h.size;
	n = records(msg, sizeof(msg));
	h = (struct ctl_hdr){ (uint32_t)(CTL_HDR_SIZE + n), CTL_RECORDS, 0, 4242 };
	ctl_hdr_encode(buf + len, &h);
	memcpy(buf + len + CTL_HDR_SIZE, msg, n);
	len += h.size;
	h = (struct ctl_hdr){ CTL_HDR_SIZE, CTL_LIST_END, 0, 0 };
	ctl_hdr_encode(buf + len, &h);
	len += CTL_HDR_SIZE;
	h = (struct ctl_hdr){ CTL_HDR_SIZE, CTL_GONE, CTL_GONE_EXITED, 4242 };
	ctl_hdr_encode(buf + len, &h);
	len += CTL_HDR_SIZE;
	save(dir, "answers", buf, len);
	h = (struct ctl_hdr){ CTL_HDR_SIZE, CTL_SUBSCRIBE, 0, 4242 };
	ctl_hdr_encode(buf, &h);
	save(dir, "request", buf, CTL_HDR_SIZE);
	ctl_events(dir);
}

int main(int argc, char **argv)
{
	char d[400];

	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	snprintf(d, sizeof(d), "%s/ingest", argv[1]);
	ingest(d);
	snprintf(d, sizeof(d), "%s/ctl_frame", argv[1]);
	ctl(d);
	snprintf(d, sizeof(d), "%s/interp", argv[1]);
	interp(d);
	snprintf(d, sizeof(d), "%s/vmstack", argv[1]);
	vmstack(d, "interpreted-leaf", 0, 0x100);
	vmstack(d, "compiled-leaf", 4 + 5 * 4, 0x20);
	events(argv[1]);
	return 0;
}
