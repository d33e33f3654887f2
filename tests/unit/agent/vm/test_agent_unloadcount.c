// SPDX-License-Identifier: MIT
/*
 * test_agent_unloadcount.c - the unloaded-class count found in a PerfData memory image built
 * like HotSpot's (prologue, entries with their names and data), by name wherever it lies, and
 * refused when any bound does not hold.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "unloadcount.h"

static uint8_t mem[4096];
static int32_t at, nentries;

static void put32(uint32_t off, int32_t v)
{
	memcpy(mem + off, &v, 4);
}

static void image(void)
{
	static const uint8_t magic[4] = { 0xca, 0xfe, 0xc0, 0xc0 };

	memset(mem, 0, sizeof(mem));
	memcpy(mem, magic, 4);
	mem[4] = 1; /* little endian */
	mem[5] = 2; /* version 2.0 */
	mem[7] = 1; /* accessible */
	at = 32;
	nentries = 0;
	put32(24, 32);
}

/* An entry named name, data type t, vector length vlen, with 8 bytes of data; returns the data's
 * offset. */
static int32_t entry(const char *name, char t, int32_t vlen)
{
	int32_t nlen = (int32_t)strlen(name) + 1, name_off = 20;
	int32_t data = (name_off + nlen + 7) & ~7, len = data + 8;

	put32((uint32_t)at, len);
	put32((uint32_t)at + 4, name_off);
	put32((uint32_t)at + 8, vlen);
	mem[at + 12] = (uint8_t)t;
	put32((uint32_t)at + 16, data);
	memcpy(mem + at + name_off, name, (size_t)nlen);
	data += at;
	at += len;
	put32(8, at); /* used */
	put32(28, ++nentries);
	return data;
}

static void test_the_count_is_found_by_name(void **state)
{
	uint64_t off = 0;
	int32_t want;

	(void)state;
	image();
	entry("sun.os.hrt.frequency", 'J', 0);
	entry("java.cls.loadedClasses", 'J', 0);
	want = entry(UNLOADCOUNT_NAME, 'J', 0);
	entry("java.property.java.vm.name", 'B', 64);
	assert_int_equal(unloadcount_scan(mem, sizeof(mem), &off), 0);
	assert_int_equal(off, want);
	/* Not a scalar jlong: refused. */
	image();
	entry(UNLOADCOUNT_NAME, 'B', 8);
	assert_int_equal(unloadcount_scan(mem, sizeof(mem), &off), -ENOENT);
	image();
	entry("java.cls.sharedLoadedClasses", 'J', 0);
	assert_int_equal(unloadcount_scan(mem, sizeof(mem), &off), -ENOENT);
}

static void test_bounds_are_checked(void **state)
{
	uint64_t off;
	int32_t first;

	(void)state;
	image();
	first = at;
	entry("java.cls.loadedClasses", 'J', 0);
	entry(UNLOADCOUNT_NAME, 'J', 0);
	/* The copy ends inside the entry. */
	assert_int_equal(unloadcount_scan(mem, (size_t)at - 4, &off), -EBADMSG);
	/* "used" ends inside it. */
	put32(8, at - 4);
	assert_int_equal(unloadcount_scan(mem, sizeof(mem), &off), -EBADMSG);
	put32(8, at);
	/* A zero or huge entry length. */
	put32((uint32_t)first, 0);
	assert_int_equal(unloadcount_scan(mem, sizeof(mem), &off), -EBADMSG);
	put32((uint32_t)first, 1 << 30);
	assert_int_equal(unloadcount_scan(mem, sizeof(mem), &off), -EBADMSG);
	/* More entries than there are. */
	image();
	entry("java.cls.loadedClasses", 'J', 0);
	put32(28, 5);
	assert_int_equal(unloadcount_scan(mem, sizeof(mem), &off), -EBADMSG);
	/* Data past its entry. */
	image();
	first = at;
	entry(UNLOADCOUNT_NAME, 'J', 0);
	put32((uint32_t)first + 16, 64); /* aligned, past the entry */
	assert_int_equal(unloadcount_scan(mem, sizeof(mem), &off), -ENOENT);
	/* Not PerfData: magic, byte order. */
	image();
	entry(UNLOADCOUNT_NAME, 'J', 0);
	mem[0] = 0;
	assert_int_equal(unloadcount_scan(mem, sizeof(mem), &off), -EBADMSG);
	mem[0] = 0xca;
	mem[4] = 0;
	assert_int_equal(unloadcount_scan(mem, sizeof(mem), &off), -EBADMSG);
	assert_int_equal(unloadcount_scan(mem, 16, &off), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_count_is_found_by_name),
		cmocka_unit_test(test_bounds_are_checked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
