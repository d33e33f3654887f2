// SPDX-License-Identifier: MIT
/*
 * fuzz_collapse.c - libFuzzer target: `perf script` text collapsed to folded stacks (the
 * `collapse` command; perf's text carries names any profiled process chose), with the options
 * from the first byte, fed in chunks whose sizes come from the second, then walked.
 */
#include "collapse.h"
#include "fuzz_input.h"

static int sink(void *arg, const char *stack, size_t len, uint64_t count)
{
	volatile size_t *acc = arg;

	for (size_t i = 0; i < len; i++)
		*acc += (unsigned char)stack[i];
	*acc += count;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size, 0 };
	uint8_t o = fz_u8(&f), chunk = fz_u8(&f);
	struct collapse_opts opts = {
		.pid = o & 1,
		.tid = o & 2,
		.kernel = o & 4,
		.jit = o & 8,
		.addrs = o & 16,
		.srcline = o & 32,
		.event_filter = o & 64 ? "cycles" : NULL,
		.max_line = 4096,
		.max_stack = 1u << 16,
		.max_memory = 1u << 22,
	};
	struct collapse *c = collapse_new(&opts);
	struct collapse_stats st;
	volatile size_t acc = 0;
	const uint8_t *text;
	size_t len, off = 0;
	int rv = 0;

	if (!c)
		return 0;
	text = fz_rest(&f, &len);
	while (off < len && rv == 0) {
		size_t n = chunk ? chunk : len;

		if (n > len - off)
			n = len - off;
		rv = collapse_feed(c, (const char *)text + off, n);
		off += n;
	}
	if (rv == 0 && collapse_end_input(c) == 0)
		(void)collapse_foreach(c, sink, (void *)&acc);
	collapse_stats(c, &st);
	collapse_free(c);
	return 0;
}
