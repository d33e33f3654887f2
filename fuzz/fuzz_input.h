/* SPDX-License-Identifier: MIT */
/*
 * fuzz_input.h - a cursor over a fuzzer's input for the libFuzzer targets: fixed-size fields
 * taken from the front (zero once the input is exhausted), the rest handed out as bytes.
 */
#ifndef FG_FUZZ_INPUT_H
#define FG_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fz {
	const uint8_t *p;
	size_t len, off;
};

static inline uint64_t fz_bytes(struct fz *f, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		if (f->off < f->len)
			v |= (uint64_t)f->p[f->off++] << (8 * i);
	return v;
}

static inline uint8_t fz_u8(struct fz *f)
{
	return (uint8_t)fz_bytes(f, 1);
}

static inline uint16_t fz_u16(struct fz *f)
{
	return (uint16_t)fz_bytes(f, 2);
}

static inline uint32_t fz_u32(struct fz *f)
{
	return (uint32_t)fz_bytes(f, 4);
}

static inline uint64_t fz_u64(struct fz *f)
{
	return fz_bytes(f, 8);
}

/* The rest of the input. */
static inline const uint8_t *fz_rest(struct fz *f, size_t *len)
{
	*len = f->len - f->off;
	return f->p + f->off;
}

#endif
