// SPDX-License-Identifier: MIT
/*
 * fuzz_folded.c - libFuzzer target: folded stack lines (`collapse`, `flamegraph` and `diff`
 * inputs) parsed by input's reader line by line, in both diff columns, merged into a flame
 * graph as the CLI does, then written back out.
 */
#include <stdio.h>

#include "flame_fold.h"
#include "folded.h"
#include "fuzz_input.h"

/* data[0]: bit 0 reverse, bit 1 flame chart, bit 2 strip hex; the rest % 3 the diff column. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stack_sink sink;
	struct folded *rd;
	struct flame *f;
	FILE *out;
	size_t i = 0;

	if (size == 0)
		return 0;
	if (!(f = flame_new_flags(data[0] & (FLAME_REVERSE | FLAME_CHART))))
		return 0;
	sink = flame_sink(f);
	rd = folded_new((data[0] & 1u ? FOLDED_REVERSE : 0) | (data[0] & 4u ? FOLDED_STRIP_HEX : 0),
			&sink);
	for (i = 1; rd && i < size;) {
		const uint8_t *nl = memchr(data + i, '\n', size - i);
		size_t end = nl ? (size_t)(nl - data) : size;

		(void)folded_add_line(rd, (const char *)data + i, end - i,
				      (enum folded_in)((data[0] >> 3) % 3));
		i = end + 1;
	}
	if ((out = fopen("/dev/null", "w"))) {
		(void)flame_write_folded(f, out);
		fclose(out);
	}
	folded_free(rd);
	flame_free(f);
	return 0;
}
