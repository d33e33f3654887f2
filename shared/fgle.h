/* SPDX-License-Identifier: MIT */
/*
 * fgle.h - little-endian loads and stores for byte-array formats (the wire format, the control
 * channel). Byte by byte, so alignment and host order never matter; the compiler turns each into
 * one move on x86-64.
 */
#ifndef FG_LE_H
#define FG_LE_H

#include <stdint.h>

static inline void fgle_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/* Byte by byte, unrolled: a compiler merges the stores into one on a little-endian CPU (a loop
 * it may leave as a loop of byte stores). */
static inline void fgle_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline void fgle_put64(uint8_t *p, uint64_t v)
{
	fgle_put32(p, (uint32_t)v);
	fgle_put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t fgle_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t fgle_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t fgle_get64(const uint8_t *p)
{
	return (uint64_t)fgle_get32(p) | (uint64_t)fgle_get32(p + 4) << 32;
}

#endif
