// SPDX-License-Identifier: MIT
/*
 * fuzz_folded.c - libFuzzer target: folded stack lines (`collapse`, `flamegraph` and `diff`
 * inputs) added to a flame graph line by line, in both diff columns, then written back out.
 */
#include <stdio.h>

#include "flame_fold.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct flame *f;
	FILE *out;
	size_t i = 0;

	if (size == 0)
		return 0;
	if (!(f = flame_new_flags(data[0] & 7u)))
		return 0;
	for (i = 1; i < size;) {
		const uint8_t *nl = memchr(data + i, '\n', size - i);
		size_t end = nl ? (size_t)(nl - data) : size;

		(void)flame_add_line_in(f, (const char *)data + i, end - i,
					(enum flame_in)((data[0] >> 3) % 3));
		i = end + 1;
	}
	if ((out = fopen("/dev/null", "w"))) {
		(void)flame_write_folded(f, out);
		fclose(out);
	}
	flame_free(f);
	return 0;
}
