// SPDX-License-Identifier: MIT
/*
 * test_perfring.c - ring walking and record decoding, on a ring captured from a real run
 * (tests/fixtures/ring/cpuclock-wrap.ring, see capture.c there) and on hand-built records.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "perfring.h"

#define KERNEL_MIN 0xffff800000000000ull
#define USER_MAX 0x0000800000000000ull

struct fixture_hdr {
	char magic[8];
	uint64_t sample_type, sample_id_all, data_size, tail, head, pid, reserved;
};

struct fixture {
	struct fixture_hdr h;
	struct perfring_format fmt;
	uint8_t *data;
};

static uint64_t bounce[PERFRING_MAX_RECORD / 8];

static void load(struct fixture *f, const char *name)
{
	const char *src = getenv("FG_SOURCE_DIR");
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/tests/fixtures/ring/%s", src ? src : ".", name);
	fp = fopen(path, "rb");
	if (!fp)
		fail_msg("cannot open %s (FG_SOURCE_DIR set?)", path);
	assert_int_equal(fread(&f->h, sizeof(f->h), 1, fp), 1);
	assert_memory_equal(f->h.magic, "FGRING01", 8);
	assert_true(f->h.data_size >= 4096 && f->h.data_size <= (1u << 20));
	f->data = aligned_alloc(8, f->h.data_size);
	assert_non_null(f->data);
	assert_int_equal(fread(f->data, f->h.data_size, 1, fp), 1);
	fclose(fp);
	f->fmt.sample_type = f->h.sample_type;
	f->fmt.sample_id_all = f->h.sample_id_all != 0;
}

/* Copies of every record of a walk, in order. */
struct walk {
	uint8_t *rec[4096];
	size_t len[4096];
	size_t n;
	uint64_t bounced;
};

static void walk(const struct fixture *f, const uint8_t *data, uint64_t tail, uint64_t head,
		 struct walk *w)
{
	struct perfring_reader r;
	const void *p;
	size_t len;
	int rv;

	w->n = 0;
	assert_int_equal(
		perfring_reader_init(&r, data, f->h.data_size, tail, head, bounce, sizeof(bounce)),
		0);
	while ((rv = perfring_reader_next(&r, &p, &len)) == 1) {
		assert_true(w->n < 4096);
		w->rec[w->n] = malloc(len);
		assert_non_null(w->rec[w->n]);
		memcpy(w->rec[w->n], p, len);
		w->len[w->n++] = len;
	}
	assert_int_equal(rv, 0);
	assert_true(r.pos == head);
	w->bounced = r.bounced;
}

static void walk_free(struct walk *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->rec[i]);
	w->n = 0;
}

static void test_captured_ring_decodes_every_record(void **state)
{
	static struct walk w;
	struct fixture f;
	unsigned int lost = 0, mmap2 = 0, fork = 0, exits = 0, ksamples = 0, samples = 0;
	bool comm_main = false, comm_worker = false;
	uint32_t forked_tid = 0, exited_tid = 0;
	uint64_t last_time = 0;

	(void)state;
	load(&f, "cpuclock-wrap.ring");
	walk(&f, f.data, f.h.tail, f.h.head, &w);
	assert_true(w.n > 10);
	assert_true(w.bounced >= 1); /* the capture kept a record straddling the end */
	for (size_t i = 0; i < w.n; i++) {
		struct perfring_rec r;

		assert_int_equal(perfring_decode(&f.fmt, w.rec[i], w.len[i], &r), 0);
		assert_int_equal(r.size, w.len[i]);
		/* sample_id_all: every kernel record has tid, time, cpu and id. */
		assert_true(r.has_tid && r.has_time && r.has_cpu && r.has_id);
		assert_int_equal(r.cpu, 0); /* the capture pinned the child to CPU 0 */
		assert_true(r.time >= last_time);
		last_time = r.time;
		switch (r.type) {
		case PERF_RECORD_SAMPLE:
			samples++;
			assert_int_equal(r.pid, f.h.pid);
			assert_true(r.u.sample.period > 0);
			/* markers: one per non-empty context */
			assert_int_equal(r.u.sample.nr, r.u.sample.nr_kernel + r.u.sample.nr_user +
								(r.u.sample.nr_kernel > 0) + 1);
			assert_true(r.u.sample.nr_user > 0);
			for (uint32_t k = 0; k < r.u.sample.nr_kernel; k++)
				assert_true(r.u.sample.kernel[k] >= KERNEL_MIN);
			for (uint32_t k = 0; k < r.u.sample.nr_user; k++)
				assert_true(r.u.sample.user[k] < USER_MAX);
			if (r.u.sample.nr_kernel) {
				ksamples++;
				assert_int_equal(r.u.sample.ip, r.u.sample.kernel[0]);
			} else {
				assert_int_equal(r.u.sample.ip, r.u.sample.user[0]);
			}
			break;
		case PERF_RECORD_LOST:
			lost++;
			assert_true(r.u.lost.lost > 0);
			assert_true(r.u.lost.id == r.id);
			break;
		case PERF_RECORD_MMAP2:
			mmap2++;
			assert_int_equal(r.u.mmap2.pid, f.h.pid);
			assert_int_equal(r.u.mmap2.len, 4096);
			assert_true(r.u.mmap2.prot & PROT_EXEC);
			assert_true(r.u.mmap2.filename[0] == '/');
			assert_true(r.u.mmap2.ino != 0);
			break;
		case PERF_RECORD_COMM:
			assert_int_equal(r.u.comm.pid, f.h.pid);
			assert_false(r.u.comm.exec);
			comm_main |= strcmp(r.u.comm.comm, "fgring-main") == 0;
			comm_worker |= strcmp(r.u.comm.comm, "fgring-worker") == 0;
			break;
		case PERF_RECORD_FORK:
			fork++;
			assert_int_equal(r.u.task.pid, f.h.pid);
			assert_int_equal(r.u.task.ppid, f.h.pid);
			assert_int_not_equal(r.u.task.tid, f.h.pid);
			/* written by the parent thread: the trailer names it */
			assert_int_equal(r.tid, r.u.task.ptid);
			forked_tid = r.u.task.tid;
			break;
		case PERF_RECORD_EXIT:
			exits++;
			assert_int_equal(r.tid, r.u.task.tid);
			if (r.u.task.tid != f.h.pid)
				exited_tid = r.u.task.tid;
			break;
		}
	}
	assert_true(samples > 10);
	assert_true(ksamples > 0);
	assert_true(lost > 0 && mmap2 > 0 && fork > 0 && exits > 0);
	assert_true(comm_main && comm_worker);
	assert_int_equal(forked_tid, exited_tid);
	walk_free(&w);
	free(f.data);
}

/* The same byte stream laid out at every 8-byte offset of the ring must give the same records. */
static void test_records_are_the_same_at_every_ring_offset(void **state)
{
	static struct walk ref, w;
	struct fixture f;
	uint64_t size, used, straddled = 0;
	uint8_t *rot;

	(void)state;
	load(&f, "cpuclock-wrap.ring");
	size = f.h.data_size;
	used = f.h.head - f.h.tail;
	walk(&f, f.data, f.h.tail, f.h.head, &ref);
	rot = aligned_alloc(8, size);
	assert_non_null(rot);
	for (uint64_t k = 0; k < size; k += 8) {
		memset(rot, 0xa5, size);
		for (uint64_t i = 0; i < used; i++)
			rot[(k + i) & (size - 1)] = f.data[(f.h.tail + i) & (size - 1)];
		walk(&f, rot, k + 3 * size, k + 3 * size + used, &w);
		assert_int_equal(w.n, ref.n);
		for (size_t i = 0; i < w.n; i++) {
			assert_int_equal(w.len[i], ref.len[i]);
			assert_memory_equal(w.rec[i], ref.rec[i], w.len[i]);
		}
		straddled += w.bounced;
		walk_free(&w);
	}
	/* Most offsets make some record straddle: the copy path was exercised many times. */
	assert_true(straddled > size / 8 / 2);
	walk_free(&ref);
	free(rot);
	free(f.data);
}

/* Every shortened copy of every captured record is refused or decoded within its bytes. */
static void test_truncated_records_are_refused(void **state)
{
	static struct walk w;
	struct fixture f;

	(void)state;
	load(&f, "cpuclock-wrap.ring");
	walk(&f, f.data, f.h.tail, f.h.head, &w);
	for (size_t i = 0; i < w.n; i++) {
		struct perf_event_header h;

		memcpy(&h, w.rec[i], sizeof(h));
		for (size_t len = 8; len < w.len[i]; len += 8) {
			/* an exact-size heap copy, so ASan sees any read past it */
			uint8_t *b = aligned_alloc(8, len);
			struct perf_event_header t = h;
			struct perfring_rec r;
			int rv;

			assert_non_null(b);
			memcpy(b, w.rec[i], len);
			t.size = (uint16_t)len;
			memcpy(b, &t, sizeof(t));
			rv = perfring_decode(&f.fmt, b, len, &r);
			if (h.type == PERF_RECORD_SAMPLE)
				assert_int_equal(rv, -EBADMSG);
			else
				assert_true(rv == 0 || rv == -EBADMSG);
			free(b);
		}
	}
	walk_free(&w);
	free(f.data);
}

static void test_length_must_match_header(void **state)
{
	struct perfring_format fmt = { .sample_type = PERF_SAMPLE_TID, .sample_id_all = true };
	uint64_t rec[4] = { 0 };
	struct perf_event_header h = { PERF_RECORD_EXIT, 0, 24 };
	struct perfring_rec r;

	(void)state;
	memcpy(rec, &h, sizeof(h));
	assert_int_equal(perfring_decode(&fmt, rec, 32, &r), -EINVAL);
	assert_int_equal(perfring_decode(&fmt, (uint8_t *)rec + 4, 24, &r), -EINVAL);
	assert_int_equal(perfring_decode(&fmt, rec, 4, &r), -EINVAL);
}

/* A hand-built sample: IDENTIFIER|IP|TID|TIME|CALLCHAIN with the given raw chain. */
static size_t build_sample(uint64_t *buf, const uint64_t *ips, uint64_t nr)
{
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 0 };
	size_t n = 1;

	buf[n++] = 77;			    /* identifier */
	buf[n++] = 0x401000;		    /* ip */
	buf[n++] = (uint64_t)12 << 32 | 11; /* pid 11, tid 12 */
	buf[n++] = 123456789;		    /* time */
	buf[n++] = nr;			    /* callchain */
	memcpy(&buf[n], ips, nr * 8);
	n += nr;
	h.size = (uint16_t)(n * 8);
	memcpy(buf, &h, sizeof(h));
	return n * 8;
}

static const struct perfring_format sample_fmt = { .sample_type = PERF_SAMPLE_IDENTIFIER |
								  PERF_SAMPLE_IP | PERF_SAMPLE_TID |
								  PERF_SAMPLE_TIME |
								  PERF_SAMPLE_CALLCHAIN,
						   .sample_id_all = true };

static void test_callchain_is_split_at_context_markers(void **state)
{
	static const struct {
		uint64_t ips[8];
		uint64_t nr;
		uint32_t nk, nu, no;
		uint64_t first_k, first_u;
	} cases[] = {
		{ { PERF_CONTEXT_KERNEL, KERNEL_MIN + 1, KERNEL_MIN + 2, PERF_CONTEXT_USER, 0x10,
		    0x20, 0x30 },
		  7,
		  2,
		  3,
		  0,
		  KERNEL_MIN + 1,
		  0x10 },
		{ { PERF_CONTEXT_USER, 0x10 }, 2, 0, 1, 0, 0, 0x10 },
		{ { PERF_CONTEXT_KERNEL, KERNEL_MIN + 5 }, 2, 1, 0, 0, KERNEL_MIN + 5, 0 },
		{ { PERF_CONTEXT_GUEST_KERNEL, KERNEL_MIN, PERF_CONTEXT_USER, 0x40 },
		  4,
		  0,
		  1,
		  1,
		  0,
		  0x40 },
		{ { 0x1, 0x2, PERF_CONTEXT_USER, 0x50 }, 4, 0, 1, 2, 0, 0x50 },
		{ { PERF_CONTEXT_USER }, 1, 0, 0, 0, 0, 0 },
		{ { 0 }, 0, 0, 0, 0, 0, 0 },
	};
	uint64_t buf[32];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct perfring_rec r;
		size_t len = build_sample(buf, cases[i].ips, cases[i].nr);

		assert_int_equal(perfring_decode(&sample_fmt, buf, len, &r), 0);
		assert_int_equal(r.pid, 11);
		assert_int_equal(r.tid, 12);
		assert_int_equal(r.time, 123456789);
		assert_int_equal(r.id, 77);
		assert_int_equal(r.u.sample.ip, 0x401000);
		assert_int_equal(r.u.sample.nr, cases[i].nr);
		assert_int_equal(r.u.sample.nr_kernel, cases[i].nk);
		assert_int_equal(r.u.sample.nr_user, cases[i].nu);
		assert_int_equal(r.u.sample.nr_other, cases[i].no);
		if (cases[i].nk)
			assert_int_equal(r.u.sample.kernel[0], cases[i].first_k);
		else
			assert_null(r.u.sample.kernel);
		if (cases[i].nu)
			assert_int_equal(r.u.sample.user[0], cases[i].first_u);
		else
			assert_null(r.u.sample.user);
	}
}

static void test_callchain_longer_than_record_is_refused(void **state)
{
	uint64_t ips[2] = { PERF_CONTEXT_USER, 0x10 }, buf[16];
	struct perfring_rec r;
	size_t len = build_sample(buf, ips, 2);

	(void)state;
	buf[5] = 3; /* nr says 3, the record holds 2 */
	assert_int_equal(perfring_decode(&sample_fmt, buf, len, &r), -EBADMSG);
	buf[5] = UINT64_MAX;
	assert_int_equal(perfring_decode(&sample_fmt, buf, len, &r), -EBADMSG);
}

static void test_unknown_sample_type_is_refused(void **state)
{
	struct perfring_format fmt = { .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_BRANCH_STACK,
				       .sample_id_all = true };
	uint64_t rec[2] = { 0 };
	struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, 16 };
	struct perfring_rec r;

	(void)state;
	memcpy(rec, &h, sizeof(h));
	assert_int_equal(perfring_decode(&fmt, rec, 16, &r), -ENOTSUP);
}

/* A tracepoint's raw record between the call chain and the user registers, padded to 8. */
static void test_raw_record(void **state)
{
	struct perfring_format fmt = { .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN |
						      PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER,
				       .sample_regs_user = 1ull << 8 };
	uint64_t rec[16] = { 0 };
	struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, 0 };
	struct perfring_rec r;
	uint32_t raw_size = 12;
	uint8_t *p;
	uint64_t ip;

	(void)state;
	rec[1] = 7ull << 32 | 7;	/* pid, tid */
	rec[2] = 1;			/* callchain nr */
	rec[3] = 0xffffffff81000000ull; /* no marker: "other" */
	p = (uint8_t *)&rec[4];
	memcpy(p, &raw_size, 4);
	memcpy(p + 4, "abcdefghijkl", 12); /* 4 + 12 = 16: two words, no padding */
	rec[6] = PERF_SAMPLE_REGS_ABI_64;
	rec[7] = 0x401000;
	h.size = 8 * 8;
	memcpy(rec, &h, sizeof(h));
	assert_int_equal(perfring_decode(&fmt, rec, h.size, &r), 0);
	assert_int_equal(r.u.sample.raw_len, 12);
	assert_memory_equal(r.u.sample.raw, "abcdefghijkl", 12);
	assert_true(perfring_user_reg(&r, 8, &ip));
	assert_int_equal(ip, 0x401000);
	/* A raw size that runs past the record is refused. */
	raw_size = 100;
	memcpy(p, &raw_size, 4);
	assert_int_equal(perfring_decode(&fmt, rec, h.size, &r), -EBADMSG);
}

/* The trailer of a non-sample record, in the kernel's order: TID, TIME, CPU, IDENTIFIER. */
static void test_sample_id_trailer_of_lost_record(void **state)
{
	struct perfring_format fmt = { .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
						      PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
						      PERF_SAMPLE_CALLCHAIN,
				       .sample_id_all = true };
	uint64_t rec[7];
	struct perf_event_header h = { PERF_RECORD_LOST, 0, sizeof(rec) };
	struct perfring_rec r;

	(void)state;
	memcpy(&rec[0], &h, sizeof(h));
	rec[1] = 42;			/* id */
	rec[2] = 9;			/* lost */
	rec[3] = (uint64_t)6 << 32 | 5; /* pid 5 tid 6 */
	rec[4] = 1000;			/* time */
	rec[5] = 1;			/* cpu 1 */
	rec[6] = 42;			/* identifier */
	assert_int_equal(perfring_sample_id_size(&fmt), 32);
	assert_int_equal(perfring_decode(&fmt, rec, sizeof(rec), &r), 0);
	assert_int_equal(r.u.lost.id, 42);
	assert_int_equal(r.u.lost.lost, 9);
	assert_int_equal(r.pid, 5);
	assert_int_equal(r.tid, 6);
	assert_int_equal(r.time, 1000);
	assert_int_equal(r.cpu, 1);
	assert_int_equal(r.id, 42);
	/* a record too short for its trailer */
	h.size = 24;
	memcpy(&rec[0], &h, sizeof(h));
	assert_int_equal(perfring_decode(&fmt, rec, 24, &r), -EBADMSG);
}

static void test_mmap2_with_build_id_decodes(void **state)
{
	struct perfring_format fmt = { .sample_type = PERF_SAMPLE_TID, .sample_id_all = false };
	uint64_t rec[16] = { 0 };
	struct perf_event_header h = { PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID, 0 };
	uint8_t *p = (uint8_t *)rec;
	struct perfring_rec r;
	size_t len;

	(void)state;
	rec[1] = (uint64_t)8 << 32 | 7;
	rec[2] = 0x7f0000000000; /* addr */
	rec[3] = 0x2000;	 /* len */
	rec[4] = 0x1000;	 /* pgoff */
	p[40] = 20;		 /* build id size, then 3 reserved, then 20 bytes */
	for (int i = 0; i < 20; i++)
		p[44 + i] = (uint8_t)(0xb0 + i);
	rec[8] = (uint64_t)2 << 32 | 5; /* prot 5, flags 2 */
	memcpy(&rec[9], "/lib/x.so", 10);
	len = 11 * 8;
	h.size = (uint16_t)len;
	memcpy(rec, &h, sizeof(h));
	assert_int_equal(perfring_decode(&fmt, rec, len, &r), 0);
	assert_int_equal(r.u.mmap2.pid, 7);
	assert_int_equal(r.u.mmap2.tid, 8);
	assert_int_equal(r.u.mmap2.addr, 0x7f0000000000);
	assert_int_equal(r.u.mmap2.pgoff, 0x1000);
	assert_int_equal(r.u.mmap2.build_id_size, 20);
	assert_int_equal(r.u.mmap2.build_id[19], 0xb0 + 19);
	assert_int_equal(r.u.mmap2.prot, 5);
	assert_string_equal(r.u.mmap2.filename, "/lib/x.so");
	/* unterminated file name */
	memset(&rec[9], 'x', 16);
	assert_int_equal(perfring_decode(&fmt, rec, len, &r), -EBADMSG);
	/* build id size over 20 */
	memcpy(&rec[9], "/lib/x.so", 10);
	p[40] = 21;
	assert_int_equal(perfring_decode(&fmt, rec, len, &r), -EBADMSG);
}

/* Walk a 64-byte ring whose 24-byte record starts 16 bytes before the end. */
static void test_straddling_record_is_copied_whole(void **state)
{
	uint64_t ring[8], expect[3], b[3];
	struct perf_event_header h = { PERF_RECORD_EXIT, 0, 24 };
	struct perfring_reader r;
	const void *p;
	size_t len;

	(void)state;
	memcpy(&expect[0], &h, sizeof(h));
	expect[1] = 0x1111111111111111ull;
	expect[2] = 0x2222222222222222ull;
	memset(ring, 0, sizeof(ring));
	memcpy(&ring[6], &expect[0], 16);
	memcpy(&ring[0], &expect[2], 8);
	assert_int_equal(perfring_reader_init(&r, ring, sizeof(ring), 48, 72, b, sizeof(b)), 0);
	assert_int_equal(perfring_reader_next(&r, &p, &len), 1);
	assert_int_equal(len, 24);
	assert_ptr_equal(p, b);
	assert_memory_equal(p, expect, 24);
	assert_int_equal(r.bounced, 1);
	assert_int_equal(r.pos, 72);
	assert_int_equal(perfring_reader_next(&r, &p, &len), 0);

	/* the same with a bounce buffer too small: refused, position kept */
	assert_int_equal(perfring_reader_init(&r, ring, sizeof(ring), 48, 72, b, 16), 0);
	assert_int_equal(perfring_reader_next(&r, &p, &len), -ENOBUFS);
	assert_int_equal(r.pos, 48);
}

static void test_corrupt_headers_are_refused(void **state)
{
	static const uint16_t sizes[] = { 0, 4, 12, 40 };
	uint64_t ring[8] = { 0 };
	struct perfring_reader r;
	const void *p;
	size_t len;

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct perf_event_header h = { PERF_RECORD_EXIT, 0, sizes[i] };

		memcpy(&ring[0], &h, sizeof(h));
		/* 32 bytes available: 40 claims more than the head allows */
		assert_int_equal(
			perfring_reader_init(&r, ring, sizeof(ring), 0, 32, bounce, sizeof(bounce)),
			0);
		assert_int_equal(perfring_reader_next(&r, &p, &len), -EBADMSG);
		assert_int_equal(r.pos, 0);
	}
	/* fewer bytes than a header before the head */
	assert_int_equal(perfring_reader_init(&r, ring, sizeof(ring), 0, 4, bounce, 8), 0);
	assert_int_equal(perfring_reader_next(&r, &p, &len), -EBADMSG);
}

static void test_bad_ring_geometry_is_refused(void **state)
{
	uint64_t ring[8] = { 0 };
	struct perfring_reader r;

	(void)state;
	assert_int_equal(perfring_reader_init(&r, ring, 48, 0, 0, NULL, 0), -EINVAL);
	assert_int_equal(perfring_reader_init(&r, ring, 64, 0, 72, NULL, 0), -EINVAL);
	assert_int_equal(perfring_reader_init(&r, ring, 4, 0, 0, NULL, 0), -EINVAL);
	assert_int_equal(perfring_reader_init(&r, (uint8_t *)ring + 1, 32, 0, 0, NULL, 0), -EINVAL);
	/* free-running counters wrap: head below tail numerically is fine when head-tail <= size */
	assert_int_equal(perfring_reader_init(&r, ring, 64, UINT64_MAX - 7, 8, NULL, 0), 0);
}

/* A sample with IP|TID|CALLCHAIN|REGS_USER|STACK_USER; abi 0 leaves the registers out. */
static size_t build_stack_sample(uint64_t *buf, uint64_t abi, uint64_t stack_size, uint64_t dyn)
{
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 0 };
	size_t n = 1;

	buf[n++] = 0x401000;		    /* ip */
	buf[n++] = (uint64_t)12 << 32 | 11; /* pid, tid */
	buf[n++] = 2;			    /* callchain */
	buf[n++] = (uint64_t)PERF_CONTEXT_USER;
	buf[n++] = 0x401000;
	buf[n++] = abi;
	if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
		/* mask bits 1, 6, 7, 8, 21 in order: bx, bp, sp, ip, r13 */
		buf[n++] = 0xb0b0;
		buf[n++] = 0x7ffd0100;
		buf[n++] = 0x7ffd0000;
		buf[n++] = 0x401000;
		buf[n++] = 0x1313;
	}
	buf[n++] = stack_size;
	for (uint64_t i = 0; i < stack_size / 8; i++)
		buf[n++] = 0x5000 + i;
	if (stack_size)
		buf[n++] = dyn;
	h.size = (uint16_t)(n * 8);
	memcpy(buf, &h, sizeof(h));
	return n * 8;
}

static const struct perfring_format stack_fmt = {
	.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN |
		       PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
	.sample_id_all = true,
	.sample_regs_user = (1ull << 1) | (1ull << 6) | (1ull << 7) | (1ull << 8) | (1ull << 21),
};

static void test_user_registers_and_stack_copy_decode(void **state)
{
	uint64_t buf[64];
	size_t len = build_stack_sample(buf, PERF_SAMPLE_REGS_ABI_64, 32, 24);
	struct perfring_rec r;
	uint64_t v;

	(void)state;
	assert_int_equal(perfring_decode(&stack_fmt, buf, len, &r), 0);
	assert_int_equal(r.u.sample.nr_user, 1);
	assert_true(perfring_user_reg(&r, 1, &v));
	assert_int_equal(v, 0xb0b0);
	assert_true(perfring_user_reg(&r, 6, &v));
	assert_int_equal(v, 0x7ffd0100);
	assert_true(perfring_user_reg(&r, 7, &v));
	assert_int_equal(v, 0x7ffd0000);
	assert_true(perfring_user_reg(&r, 8, &v));
	assert_int_equal(v, 0x401000);
	assert_true(perfring_user_reg(&r, 21, &v));
	assert_int_equal(v, 0x1313);
	assert_false(perfring_user_reg(&r, 0, &v)); /* ax was not asked for */
	assert_false(perfring_user_reg(&r, 64, &v));
	assert_int_equal(r.u.sample.stack_len, 32);
	assert_int_equal(r.u.sample.stack_dyn, 24);
	memcpy(&v, r.u.sample.stack + 8, 8);
	assert_int_equal(v, 0x5001);

	/* A kernel thread: no user registers, no stack; a dyn_size past the copy is clamped. */
	len = build_stack_sample(buf, PERF_SAMPLE_REGS_ABI_NONE, 0, 0);
	assert_int_equal(perfring_decode(&stack_fmt, buf, len, &r), 0);
	assert_null(r.u.sample.regs);
	assert_null(r.u.sample.stack);
	assert_false(perfring_user_reg(&r, 7, &v));
	len = build_stack_sample(buf, PERF_SAMPLE_REGS_ABI_64, 16, 1000);
	assert_int_equal(perfring_decode(&stack_fmt, buf, len, &r), 0);
	assert_int_equal(r.u.sample.stack_dyn, 16);
}

static void test_a_sample_copy_outlives_the_ring(void **state)
{
	uint64_t buf[64];
	size_t len = build_stack_sample(buf, PERF_SAMPLE_REGS_ABI_64, 32, 24);
	struct perfring_rec r, c;
	uint64_t v;
	void *own;

	(void)state;
	assert_int_equal(perfring_decode(&stack_fmt, buf, len, &r), 0);
	own = perfring_sample_copy(&r, &c);
	assert_non_null(own);
	memset(buf, 0xee, sizeof(buf)); /* the ring moves on */
	assert_int_equal(c.u.sample.nr_user, 1);
	assert_true(perfring_user_reg(&c, 7, &v));
	assert_int_equal(v, 0x7ffd0000);
	assert_int_equal(c.u.sample.stack_len, 24); /* what the kernel filled, no more */
	memcpy(&v, c.u.sample.stack + 8, 8);
	assert_int_equal(v, 0x5001);
	free(own);

	/* A thread switched out while it exits: kernel frames only, no registers, no stack. */
	{
		static const uint64_t kchain[] = { 0xffffffff81000000ull, 0xffffffff81000100ull };
		struct perfring_rec k = { .type = PERF_RECORD_SAMPLE };

		k.u.sample.kernel = kchain;
		k.u.sample.nr_kernel = 2;
		own = perfring_sample_copy(&k, &c);
		assert_non_null(own);
		assert_int_equal(c.u.sample.nr_kernel, 2);
		assert_int_equal(c.u.sample.kernel[1], kchain[1]);
		assert_true(c.u.sample.kernel != kchain);
		assert_null(c.u.sample.user);
		assert_null(c.u.sample.regs);
		assert_null(c.u.sample.stack);
		assert_int_equal(c.u.sample.stack_len, 0);
		free(own);
	}
}

static void test_short_registers_or_stack_are_refused(void **state)
{
	uint64_t buf[64];
	size_t len = build_stack_sample(buf, PERF_SAMPLE_REGS_ABI_64, 32, 24);
	struct perfring_rec r;

	(void)state;
	/* Every shorter record (header size adjusted) is refused, never read past. */
	for (size_t cut = 8; cut < len; cut += 8) {
		uint64_t *p = malloc(cut);
		struct perf_event_header h;

		assert_non_null(p);
		memcpy(p, buf, cut);
		memcpy(&h, p, sizeof(h));
		h.size = (uint16_t)cut;
		memcpy(p, &h, sizeof(h));
		assert_int_equal(perfring_decode(&stack_fmt, p, cut, &r), -EBADMSG);
		free(p);
	}
	/* A stack size that is not a multiple of 8. */
	len = build_stack_sample(buf, PERF_SAMPLE_REGS_ABI_64, 32, 24);
	buf[12] = 31;
	assert_int_equal(perfring_decode(&stack_fmt, buf, len, &r), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_captured_ring_decodes_every_record),
		cmocka_unit_test(test_records_are_the_same_at_every_ring_offset),
		cmocka_unit_test(test_truncated_records_are_refused),
		cmocka_unit_test(test_length_must_match_header),
		cmocka_unit_test(test_callchain_is_split_at_context_markers),
		cmocka_unit_test(test_callchain_longer_than_record_is_refused),
		cmocka_unit_test(test_unknown_sample_type_is_refused),
		cmocka_unit_test(test_raw_record),
		cmocka_unit_test(test_sample_id_trailer_of_lost_record),
		cmocka_unit_test(test_mmap2_with_build_id_decodes),
		cmocka_unit_test(test_straddling_record_is_copied_whole),
		cmocka_unit_test(test_corrupt_headers_are_refused),
		cmocka_unit_test(test_bad_ring_geometry_is_refused),
		cmocka_unit_test(test_user_registers_and_stack_copy_decode),
		cmocka_unit_test(test_a_sample_copy_outlives_the_ring),
		cmocka_unit_test(test_short_registers_or_stack_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
