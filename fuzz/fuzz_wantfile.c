// SPDX-License-Identifier: MIT
/*
 * fuzz_wantfile.c - libFuzzer target: the agent's want file parser (a file in a directory other
 * processes can write): a token from the input's first 8 bytes looked up in the rest, which must
 * agree with a plain line-by-line reading.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_input.h"
#include "wantfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size, 0 };
	uint64_t token = fz_u64(&f);
	const uint8_t *buf;
	size_t len, i = 0;
	char want[17];
	bool listed = false;

	buf = fz_rest(&f, &len);
	snprintf(want, sizeof(want), "%016llx", (unsigned long long)token);
	while (token && i < len) {
		size_t end = i;

		while (end < len && buf[end] != '\n')
			end++;
		if (end - i == 16 && memcmp(buf + i, want, 16) == 0)
			listed = true;
		i = end + 1;
	}
	if (wantfile_listed((const char *)buf, len, token) != listed)
		abort();
	return 0;
}
