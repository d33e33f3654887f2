/* SPDX-License-Identifier: MIT */
/*
 * kallsyms.h - kernel text symbols from /proc/kallsyms, for address -> name lookups.
 *
 * kallsyms has no sizes: a symbol extends to the next one, at most KALLSYMS_MAX_EXTENT bytes,
 * and at most KALLSYMS_MAX_TAIL bytes when the next symbol is in another module (or there is
 * none), so addresses past the end of a module's text are not pinned on its last function.
 *
 * Invariant: symbols sorted by address, one per address (T over t over W/w on ties).
 * Not thread-safe for mutation; lookups are read-only.
 */
#ifndef FG_KALLSYMS_H
#define FG_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

#define KALLSYMS_MAX_SYMBOLS (4u << 20)
#define KALLSYMS_MAX_FILE (256u << 20) /* bytes of kallsyms text we read */
#define KALLSYMS_MAX_EXTENT (1u << 20)
#define KALLSYMS_MAX_TAIL (64u << 10)

/* The module name reported for symbols of the kernel image itself (perf's name). */
#define KALLSYMS_KERNEL_MODULE "[kernel.kallsyms]"

struct kallsyms;

/*
 * Parse kallsyms text buf[0..len) (text symbols t/T/w/W only). On success *out owns the table.
 * Errors: -EACCES when symbols exist but every address reads 0 (kptr_restrict, or no
 * CAP_SYSLOG): the caller reports "kernel symbols unavailable (kptr_restrict)";
 * -ENOENT no text symbol at all; -EINVAL malformed line; -E2BIG over KALLSYMS_MAX_SYMBOLS;
 * -ENOMEM.
 */
int kallsyms_parse(const char *buf, size_t len, struct kallsyms **out);

/* kallsyms_parse() of the file at path (NULL: "/proc/kallsyms"); also -errno, -EFBIG. */
int kallsyms_load(const char *path, struct kallsyms **out);

void kallsyms_free(struct kallsyms *ks);

/*
 * The symbol containing addr: 0 with *name, *module ("[kernel.kallsyms]" or "[modname]";
 * both owned by ks) and *off, or -ENOENT.
 */
int kallsyms_lookup(const struct kallsyms *ks, uint64_t addr, const char **name,
		    const char **module, uint64_t *off);

size_t kallsyms_count(const struct kallsyms *ks);

#endif
