// SPDX-License-Identifier: MIT
/*
 * fuzz_perfring.c - libFuzzer target: the perf ring buffer (written by the kernel, but records of
 * any shape must never make the reader stray): a ring of any bytes with a head and tail from the
 * input walked record by record, each record decoded with a sample format from the input, and
 * every pointer the decoder returns checked to lie inside its record; a sample's raw data is
 * also decoded as the off-CPU BPF program's record (switchrec), its pointers checked the same.
 */
#include <linux/perf_event.h>
#include <stdlib.h>

#include "fuzz_input.h"
#include "perfring.h"
#include "switchbpf.h"

static uint8_t bounce[PERFRING_MAX_RECORD];
static uint64_t raw_copy[PERFRING_MAX_RECORD / 8];

static void inside(const void *p, size_t n, const void *rec, size_t len)
{
	const uint8_t *a = p, *r = rec;

	if (n && (a < r || a + n > r + len))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size, 0 };
	struct perfring_format fmt;
	struct perfring_reader rd;
	struct perfring_rec rec;
	uint64_t tail, head, ring;
	const uint8_t *bytes;
	uint8_t *copy;
	size_t len;

	fmt.sample_type = fz_u32(&f) & PERFRING_SAMPLE_TYPES;
	fmt.sample_id_all = fz_u8(&f) & 1;
	fmt.sample_regs_user = fz_u32(&f);
	tail = fz_u16(&f);
	head = tail + fz_u16(&f);
	bytes = fz_rest(&f, &len);
	/* The ring's size: the largest power of two the rest fills (at least 8). */
	for (ring = 8; ring * 2 <= len; ring *= 2)
		;
	if (!(copy = aligned_alloc(8, ring)))
		return 0;
	memset(copy, 0, ring);
	memcpy(copy, bytes, len < ring ? len : ring);
	if (perfring_reader_init(&rd, copy, ring, tail, head, bounce, sizeof(bounce)) == 0) {
		const void *r;
		size_t n;

		for (unsigned k = 0; k < 4096 && perfring_reader_next(&rd, &r, &n) == 1; k++) {
			uint64_t v;

			if (perfring_decode(&fmt, r, n, &rec) != 0)
				continue;
			if (rec.type == PERF_RECORD_SAMPLE) {
				inside(rec.u.sample.kernel, rec.u.sample.nr_kernel * 8ul, r, n);
				inside(rec.u.sample.user, rec.u.sample.nr_user * 8ul, r, n);
				inside(rec.u.sample.stack, rec.u.sample.stack_len, r, n);
				if (rec.u.sample.stack_dyn > rec.u.sample.stack_len)
					abort();
				inside(rec.u.sample.raw, rec.u.sample.raw_len, r, n);
				if (rec.u.sample.raw && rec.u.sample.raw_len <= sizeof(raw_copy)) {
					struct switchrec_view sv;
					size_t rl = rec.u.sample.raw_len;

					memcpy(raw_copy, rec.u.sample.raw, rl);
					if (switchrec_decode(raw_copy, rl, &sv) == 0) {
						inside(sv.kernel, sv.h.nr_kernel * 8ul, raw_copy,
						       rl);
						inside(sv.user, sv.h.nr_user * 8ul, raw_copy, rl);
						inside(sv.stack, sv.h.stack_len, raw_copy, rl);
						if (switchrec_kernel_skip(sv.kernel, sv.h.nr_kernel,
									  0xffffffff81000000ull,
									  0xffffffff82000000ull) >
						    sv.h.nr_kernel)
							abort();
						(void)switchrec_state(sv.h.prev_state, sv.h.flags);
					}
				}
				for (unsigned reg = 0; reg < 24; reg++)
					(void)perfring_user_reg(&rec, reg, &v);
			} else if (rec.type == PERF_RECORD_MMAP2) {
				inside(rec.u.mmap2.filename, strlen(rec.u.mmap2.filename) + 1, r,
				       n);
				inside(rec.u.mmap2.build_id, rec.u.mmap2.build_id_size, r, n);
			} else if (rec.type == PERF_RECORD_COMM) {
				inside(rec.u.comm.comm, strlen(rec.u.comm.comm) + 1, r, n);
			}
		}
	}
	free(copy);
	return 0;
}
