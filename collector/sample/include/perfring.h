/* SPDX-License-Identifier: MIT */
/*
 * perfring.h - reading and decoding perf_event ring-buffer records, from bytes only.
 *
 * Two pieces, neither of which touches the kernel:
 *  - struct perfring_reader walks the records between a tail and a head position of a ring data
 *    area (the bytes after the control page), copying a record that straddles the end of the
 *    area into a caller-supplied bounce buffer so every record is handed out contiguous;
 *  - perfring_decode() turns one record into a struct perfring_rec.
 * The sampler feeds them the mmap'ed rings; tests feed captured bytes.
 *
 * Invariant: nothing is read outside [data, data + size) nor outside a record's own `size`
 * bytes; a record whose header or fields do not fit is refused with -EBADMSG, never guessed.
 */
#ifndef FG_PERFRING_H
#define FG_PERFRING_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The sample_type bits perfring_decode() understands; any other bit is refused (-ENOTSUP). */
#define PERFRING_SAMPLE_TYPES                                                                      \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |             \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER |    \
	 PERF_SAMPLE_STACK_USER)

/* Largest record the kernel can write (header.size is 16 bits): the bounce buffer size. */
#define PERFRING_MAX_RECORD 65536u

/* How the records were produced: the perf_event_attr fields that shape them. */
struct perfring_format {
	uint64_t sample_type;
	bool sample_id_all;
	uint64_t sample_regs_user; /* attr.sample_regs_user: which registers a sample carries */
};

/*
 * One decoded record. `type`, `misc` and `size` are the header's. pid/tid/time/cpu/id come from
 * the sample itself or from the sample_id trailer of other records (sample_id_all); `has_*`
 * say which were present. For PERF_RECORD_FORK/EXIT the trailer's pid/tid name the thread in
 * whose context the record was written (the parent for FORK), the body names the task.
 *
 * Every pointer points into the record bytes handed to perfring_decode() and is valid only as
 * long as those bytes are (for a reader: until the next perfring_reader_next() call).
 */
struct perfring_rec {
	uint32_t type; /* PERF_RECORD_* */
	uint16_t misc;
	uint16_t size;
	bool has_tid, has_time, has_cpu, has_id;
	uint32_t pid, tid;
	uint64_t time; /* in the event's clock: CLOCK_MONOTONIC ns for the sampler's events */
	uint32_t cpu;
	uint64_t id; /* PERF_SAMPLE_IDENTIFIER/ID: the id of the event opened, also for children */
	union {
		/* PERF_RECORD_SAMPLE. The callchain is split at its context markers: `kernel` are
		 * the frames after PERF_CONTEXT_KERNEL, `user` the frames after PERF_CONTEXT_USER,
		 * leaf first, markers excluded; frames in any other context (hypervisor, guest, or
		 * before any marker) are only counted in `nr_other`. */
		struct {
			uint64_t ip, addr, period;
			const uint64_t *kernel;
			const uint64_t *user;
			uint32_t nr_kernel, nr_user, nr_other;
			uint32_t nr; /* entries in the raw callchain, markers included */
			/* PERF_SAMPLE_REGS_USER: abi is PERF_SAMPLE_REGS_ABI_* (NONE: no user
			 * context, e.g. a kernel thread; regs is then NULL); regs holds one value
			 * per bit of fmt->sample_regs_user, lowest bit first (perfring_user_reg).
			 */
			uint64_t regs_abi;
			const uint64_t *regs;
			uint64_t regs_mask;
			/* PERF_SAMPLE_STACK_USER: stack_len bytes copied from the user stack
			 * pointer up, of which the first stack_dyn are valid (the kernel's
			 * dyn_size). User data: never write it anywhere. NULL/0 when nothing was
			 * copied. */
			const uint8_t *stack;
			uint64_t stack_len, stack_dyn;
			/* PERF_SAMPLE_RAW: the tracepoint's record (raw_len bytes; NULL/0 for an
			 * event that has none, e.g. a CPU clock sample in the same ring). */
			const uint8_t *raw;
			uint32_t raw_len;
			/* Not decoded; set by the sampler: which of its events took the sample
			 * (SAMPLER_KIND_*, sampler.h) and, for a switch, the prev_state read
			 * from raw, and the switch-outs it stands for; set by the recording: the
			 * time the sample stands for, in ns
			 * (0: one CPU sample of the sampling interval). */
			uint8_t kind;
			uint64_t state;
			int32_t sysnr; /* a switch by BPF: the system call it waits in (-1:
					* none; 0 without BPF: not known) */
			double scale;  /* a switch: the switch-outs it stands for (1 / the
					* chance it was taken), >= 1 */
			uint64_t weight_ns;
		} sample;
		/* PERF_RECORD_MMAP2; build_id is set (and maj/min/ino zero) when misc has
		 * PERF_RECORD_MISC_MMAP_BUILD_ID. filename is NUL-terminated inside the record. */
		struct {
			uint32_t pid, tid;
			uint64_t addr, len, pgoff;
			uint32_t maj, min;
			uint64_t ino, ino_generation;
			uint32_t prot, flags;
			const uint8_t *build_id;
			uint8_t build_id_size;
			const char *filename;
		} mmap2;
		/* PERF_RECORD_COMM; comm is NUL-terminated inside the record. */
		struct {
			uint32_t pid, tid;
			const char *comm;
			bool exec; /* PERF_RECORD_MISC_COMM_EXEC: the name changed by execve */
		} comm;
		/* PERF_RECORD_FORK and PERF_RECORD_EXIT. */
		struct {
			uint32_t pid, ppid, tid, ptid;
			uint64_t time;
		} task;
		/* PERF_RECORD_LOST: `lost` records of event `id` did not fit in the ring. */
		struct {
			uint64_t id, lost;
		} lost;
		/* PERF_RECORD_SWITCH: the thread of the trailer's tid was switched out (misc has
		 * PERF_RECORD_MISC_SWITCH_OUT) or in at the trailer's time; no body. */
		/* PERF_RECORD_LOST_SAMPLES: samples the PMU or the kernel dropped. */
		struct {
			uint64_t lost;
		} lost_samples;
	} u;
};

/*
 * Decode the record of `len` bytes at `buf` (8-byte aligned, len == header.size).
 * Records of other types (throttle, namespaces, ...) decode to their header and sample_id
 * fields only. Returns 0, -EINVAL (misaligned buf, len mismatch), -ENOTSUP (sample_type
 * bits outside PERFRING_SAMPLE_TYPES) or -EBADMSG (fields do not fit, string unterminated).
 */
int perfring_decode(const struct perfring_format *fmt, const void *buf, size_t len,
		    struct perfring_rec *out);

/*
 * User register regno (PERF_REG_X86_*) of a decoded sample: true with *out set when the sample
 * carries it.
 */
bool perfring_user_reg(const struct perfring_rec *r, unsigned int regno, uint64_t *out);

/*
 * A copy of decoded sample r that outlives the ring: *out is r with its chains, registers and
 * stack copy in one buffer, returned (free() it); the raw record is not kept. NULL when memory
 * is short.
 */
void *perfring_sample_copy(const struct perfring_rec *r, struct perfring_rec *out);

/* Size of the sample_id trailer that sample_id_all appends to non-sample records. */
size_t perfring_sample_id_size(const struct perfring_format *fmt);

/*
 * A walk over the records in [tail, head) of a ring data area of `size` bytes (a power of
 * two; positions are free-running counters as in struct perf_event_mmap_page, taken modulo
 * size). The reader borrows `data` and `bounce`; both must outlive it.
 */
struct perfring_reader {
	const uint8_t *data;
	uint64_t size, head, pos;
	uint8_t *bounce;
	size_t bounce_cap;
	uint64_t bounced; /* records that straddled the end and were copied */
};

/*
 * Start a walk. bounce must be 8-byte aligned; a record larger than bounce_cap that straddles
 * the end makes next() fail with -ENOBUFS, so give PERFRING_MAX_RECORD to never fail.
 * Returns 0 or -EINVAL (size not a power of two >= 8, head - tail > size, misaligned).
 */
int perfring_reader_init(struct perfring_reader *r, const void *data, uint64_t size, uint64_t tail,
			 uint64_t head, void *bounce, size_t bounce_cap);

/*
 * Hand out the next record: 1 with *rec and *len set (valid until the next call), 0 at the head,
 * -EBADMSG if the header is corrupt (size < 8, not a multiple of 8, or past the head), in
 * which case the reader stays where it is. r->pos is the new tail once the record is used.
 */
int perfring_reader_next(struct perfring_reader *r, const void **rec, size_t *len);

#endif
