// SPDX-License-Identifier: MIT
/*
 * fuzz_ingest.c - libFuzzer target: the collector's ingest path for one agent connection, as the
 * receiving socket drives it (jvmset_msg per message, jvmset_gone at its end, jvmset_tick):
 * every record type (HELLO, CODE_LOAD with inline and line tables, CODE_LOAD_IDS and NAME,
 * CODE_UNLOAD, DYNAMIC_CODE, SNAPSHOT, DROPPED, VM_LAYOUT, CODE_FRAME, CODE_LINES, TABLES)
 * applied to the JVM's code table, and every record passed on to an observer decoded again.
 *
 * Input: messages, each a u16 length, a flags byte and that many bytes. Flags: bit 0 the
 * harness puts the message header in front (so mutations reach the records), bit 1 the
 * connection ends after it (a new one, a new pipe, follows), bit 2 a tick. The peer is PID 4242
 * in a fake /proc, and a valid HELLO from it opens every connection unless the first input
 * byte's bit 7 says the input brings its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codetab.h"
#include "fgproto.h"
#include "fuzz_input.h"
#include "jvmset.h"

#define PEER 4242u

static char root[64];

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The fake /proc goes when the fuzzer exits. */
static void cleanup(void)
{
	static const char *const files[] = { "status", "stat", "cgroup" };
	char path[128];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%u/%s", root, PEER, files[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/%u", root, PEER);
	rmdir(path);
	rmdir(root);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char path[128];

	(void)argc;
	(void)argv;
	snprintf(root, sizeof(root), "/tmp/fg-fuzz-proc.XXXXXX");
	if (!mkdtemp(root))
		abort();
	snprintf(path, sizeof(path), "%s/%u", root, PEER);
	if (mkdir(path, 0700) != 0)
		abort();
	snprintf(path, sizeof(path), "%s/%u/status", root, PEER);
	put(path, "Name:\tjava\nPid:\t4242\nNSpid:\t4242\n");
	snprintf(path, sizeof(path), "%s/%u/stat", root, PEER);
	put(path, "4242 (java) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 12 0 777 1000 "
		  "100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n");
	snprintf(path, sizeof(path), "%s/%u/cgroup", root, PEER);
	put(path, "0::/user.slice\n");
	atexit(cleanup);
	return 0;
}

static void on_record(void *arg, const struct jvm *j, const uint8_t *raw, size_t len)
{
	struct fgp_record rec;

	(void)arg;
	(void)j;
	/* What is passed on is one whole, valid record (a resolved CODE_LOAD_IDS included). */
	if (fgp_decode_record(raw, len, &rec) <= 0)
		abort();
}

static bool wants(void *arg, const struct jvm *j)
{
	(void)j;
	return *(const bool *)arg;
}

/* Events (alloc, live, lock) of every agent while records are wanted. */
static void evwant(void *arg, const struct jvm *j, struct jvm_evwant *out)
{
	(void)j;
	if (*(const bool *)arg)
		*out = (struct jvm_evwant){ .on = FGP_EVM_ALLOC | FGP_EVM_LIVE | FGP_EVM_LOCK,
					    .alloc_interval = 4096 };
}

/* An event handed on names only memory that is there: every byte of it is read. */
static void on_ev(void *arg, const struct jvm *j, const struct jvm_event *ev)
{
	volatile unsigned sum = 0;

	(void)arg;
	(void)j;
	if (ev->type == JVM_EV_STACK) {
		if (ev->depth > FGP_MAX_EVENT_DEPTH || !ev->cls.len)
			abort();
		for (size_t i = 0; i < ev->cls.len; i++)
			sum += (unsigned char)ev->cls.ptr[i];
		for (uint16_t i = 0; i < ev->depth; i++)
			for (uint16_t k = 0; k < ev->frames[i].len; k++)
				sum += (unsigned char)ev->frames[i].name[k];
	} else if (ev->type == JVM_EV_FREE) {
		if (!ev->ntags || ev->ntags > FGP_MAX_FREE_TAGS)
			abort();
		for (uint32_t i = 0; i < ev->ntags; i++)
			sum += (unsigned)ev->tags[i];
	}
	(void)sum;
}

static size_t hello(uint8_t *buf, size_t cap, uint32_t flags)
{
	struct fgp_hello h = { .proto_version = FGP_VERSION,
			       .pid = PEER,
			       .flags = flags,
			       .ts = 1,
			       .jvm_version = { "17.0.9", 6 },
			       .agent_version = { "fuzz", 4 },
			       .token = 0xfeed };
	size_t off = (size_t)fgp_encode_msg_header(buf, cap);

	return off + (size_t)fgp_encode_hello(buf + off, cap - off, &h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t msg[FGP_MAX_RECORD + 64];
	struct fz f = { data, size, 0 };
	uint8_t mode = fz_u8(&f);
	bool want = mode & 1;
	struct jvmset_opts o = { .proc_root = root, .max_bad_msgs = 4 };
	struct jvmset_observer ob = {
		.record = on_record, .wants = wants, .evwant = evwant, .ev = on_ev, .arg = &want
	};
	struct jvmset *s;
	uint32_t pipe = 1;
	uint64_t now = 1000;
	bool open = false;

	if (jvmset_new(&o, &s) != 0)
		return 0;
	jvmset_observe(s, &ob);
	while (f.off < f.len) {
		size_t len = fz_u16(&f), hdr = fgp_msg_header_size(), n = 0;
		uint8_t fl = fz_u8(&f);
		const uint8_t *body;
		size_t rest;

		if (!open && !(mode & 0x80)) {
			n = hello(msg, sizeof(msg),
				  ((mode >> 1) & 3) | (mode & 8 ? FGP_HELLO_EVENTS : 0));
			if (jvmset_msg(s, pipe, PEER, msg, n, now) != 0)
				abort(); /* a valid HELLO from the verified peer is admitted */
		}
		open = true;
		body = fz_rest(&f, &rest);
		if (len > rest)
			len = rest;
		n = 0;
		if (fl & 1)
			n = (size_t)fgp_encode_msg_header(msg, hdr);
		memcpy(msg + n, body, len);
		f.off += len;
		now += 1000000;
		if (jvmset_msg(s, pipe, PEER, msg, n + len, now) != 0 || (fl & 2)) {
			jvmset_gone(s, pipe, now);
			pipe++;
			open = false;
		}
		if (fl & 4)
			(void)jvmset_tick(s, now);
	}
	for (size_t i = 0; i < jvmset_count(s); i++) {
		struct jvm_info info;
		const struct codetab *t = jvm_table(jvmset_at(s, i));

		jvm_info(jvmset_at(s, i), &info);
		for (size_t k = 0, n = codetab_live_count(t); k < n; k++) {
			const struct codeblob *b = codetab_live_at(t, k);

			if (codetab_lookup_live(t, b->addr) != b || strlen(b->name) != b->name_len)
				abort();
		}
	}
	jvmset_gone(s, pipe, now);
	jvmset_free(s);
	return 0;
}
