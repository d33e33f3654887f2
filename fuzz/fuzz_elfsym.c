// SPDX-License-Identifier: MIT
/*
 * fuzz_elfsym.c - libFuzzer target: the ELF symbol reader on a mutated ELF image (every library
 * in a container's root is read): loaded with small caps, its symbols iterated and looked up,
 * file offsets mapped to addresses, the build-id read.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "elfsym.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elfsym_limits lim = { .max_symbols = 4096, .max_name_bytes = 1u << 20 };
	struct elfsym *es;
	volatile size_t acc = 0;
	const char *name;
	uint64_t a, sz, off, va;
	size_t idlen;

	if (elfsym_load_mem(data, size, &lim, &es) != 0)
		return 0;
	for (size_t i = 0; i < elfsym_count(es) && (name = elfsym_at(es, i, &a, &sz)); i++) {
		acc += strlen(name);
		if (elfsym_lookup(es, a + sz / 2, i & 1 ? ELFSYM_DEMANGLE : 0, &name, &off) == 0)
			acc += strlen(name) + off;
	}
	for (off = 0; off < 0x4000; off += 0x3f1)
		if (elfsym_offset_to_vaddr(es, off, off & 1, &va) == 0)
			(void)elfsym_lookup(es, va, ELFSYM_DEMANGLE, &name, &a);
	if (elfsym_build_id(es, &idlen) && idlen > ELFSYM_MAX_BUILD_ID)
		abort();
	acc += elfsym_has_symtab(es) + elfsym_mem_size(es);
	(void)acc;
	elfsym_free(es);
	return 0;
}
