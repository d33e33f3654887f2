/* SPDX-License-Identifier: MIT */
/*
 * elfcfi.h - one step of a native frame by the call-frame information of its ELF file's
 * .eh_frame (elfutils libdw: dwarf_getcfi_elf, dwarf_cfi_addrframe, dwarf_frame_cfa,
 * dwarf_frame_register), x86-64.
 *
 * libdw finds the rules for a pc and writes them as small DWARF expressions; this module
 * evaluates them over three known registers (rsp, rbp, rip) and the caller's memory reader
 * (a sample's stack copy), so no hand-written CFI parser is involved.
 *
 * Invariant: memory is read only through the reader; an expression using another register or
 * an operation not listed in elfcfi.c fails the step (-ENOTSUP), it is never guessed.
 * Not thread-safe (libdw's per-CFI caches). libdw is used in elfcfi.c only.
 */
#ifndef FG_ELFCFI_H
#define FG_ELFCFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elfcfi;

/*
 * The CFI of the ELF file open at fd (fd is duplicated and kept: libdw reads the file lazily
 * through its mapping). 0 with *out; -ENOEXEC not ELF, -ENOENT no .eh_frame, -ENOMEM.
 */
int elfcfi_load_fd(int fd, struct elfcfi **out);

/* Same for an in-memory image (copied), e.g. the vDSO. */
int elfcfi_load_mem(const void *image, size_t size, struct elfcfi **out);

void elfcfi_free(struct elfcfi *c);

/* Reads the 8-byte word at addr: true, or false when it is not available. */
typedef bool (*elfcfi_read_fn)(void *arg, uint64_t addr, uint64_t *out);

/* The registers of a frame (x86-64). */
struct elfcfi_regs {
	uint64_t pc, sp, fp;
};

/*
 * Step out of the frame that runs at ELF virtual address vaddr with registers *in (in->pc is
 * the process address; vaddr its ELF address): 0 with the caller's registers in *out (pc the
 * return address, sp the CFA, fp the caller's rbp). -ENODATA the return address is undefined
 * (the outermost frame: _start, clone3); -ENOENT no CFI covers vaddr; -EFAULT a word the rules
 * need could not be read; -ENOTSUP a rule this evaluator does not handle.
 */
int elfcfi_step(struct elfcfi *c, uint64_t vaddr, const struct elfcfi_regs *in, elfcfi_read_fn read,
		void *arg, struct elfcfi_regs *out);

#endif
