/* SPDX-License-Identifier: MIT */
/*
 * symbolizer.h - native and kernel frames -> (function, module) for the record command.
 *
 * Per process: its mappings (/proc/<pid>/maps, kept current with PERF_RECORD_MMAP2), and its
 * root directory, through which mapped files are opened without escaping it (rootfs.h).
 * Shared: ELF symbol tables (symcache.h, one load per build id for all processes) and
 * /proc/kallsyms (loaded on the first kernel address).
 *
 * JIT code is not resolved here: an address in an executable anonymous mapping comes back as
 * SYM_ANON_EXEC and the caller asks its per-JVM code table (which it may also ask first).
 *
 * Unresolved frames keep their module; symbolizer_format() renders a frame of a file (or the
 * vDSO) as "libfoo.so+0x1a2b", the module-relative address addr2line and perf take, or
 * FlameGraph's "[libfoo.so+0x1a2b]" with SYMBOLIZER_STYLE_FLAMEGRAPH; other modules (anonymous
 * memory, the kernel) as "[unknown] (module)" (perf script's display) or "[module]";
 * "[unknown]" when there is no module.
 *
 * Invariant: the per-frame path does no I/O once a mapping's file has been tried: the outcome
 * (a table, or the error) is remembered in the mapping until the process's maps change.
 *
 * Not thread-safe: one owner (the record loop). Library code: never prints.
 */
#ifndef FG_SYMBOLIZER_H
#define FG_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch_x86_64.h"
#include "dbgfetch.h"
#include "elfcfi.h"
#include "procmaps.h"
#include "symcache.h"

/* Addresses at or above this are kernel addresses (arch_x86_64.h), except [vsyscall]. */
#define SYMBOLIZER_KERNEL_START ARCH_KERNEL_START

enum sym_status {
	SYM_RESOLVED,	       /* name is the function */
	SYM_UNKNOWN_IN_MODULE, /* mapping (module) known, no symbol: see error */
	SYM_NO_MAPPING,	       /* address in no mapping of the process (or process unknown) */
	SYM_ANON_EXEC,	       /* executable anonymous memory: a JIT candidate for the caller */
};
#define SYM_STATUS_COUNT 4

struct sym_result {
	/* Demangled function name when SYM_RESOLVED, else NULL. */
	const char *name;
	/*
	 * Basename of the mapped file ("libjvm.so"), "[vdso]", "[heap]", "[anon]" (or the
	 * "[anon:name]" of a named anonymous mapping), "[kernel.kallsyms]", "[ext4]" for a
	 * kernel module; NULL with SYM_NO_MAPPING.
	 */
	const char *module;
	/*
	 * SYM_RESOLVED: addr - function start. SYM_UNKNOWN_IN_MODULE: the module-relative
	 * address of the instruction looked up (addr - 1 for a return address: the call), the
	 * ELF virtual address if the file was read, else the file offset, for addr2line; for
	 * kernel frames, addr. SYM_ANON_EXEC and SYM_NO_MAPPING: addr unchanged (the caller's
	 * code table applies the same addr - 1 for return addresses).
	 */
	uint64_t offset;
	enum sym_status status;
	bool kernel; /* a kernel frame (for the caller's "_[k]") */
	/*
	 * Why a module has no symbols, 0 if it has them (the address is in a gap): -ESTALE the
	 * file at the path is not the mapped one (mismatch), -ENOENT file gone, -EACCES kernel
	 * symbols hidden (kptr_restrict), -ENOEXEC not ELF, -E2BIG/-EFBIG over a cap, ...
	 */
	int error;
};

struct symbolizer_opts {
	const char *kallsyms_path; /* NULL: /proc/kallsyms */
	uint32_t max_processes;	   /* default 4096 */
	/*
	 * Open and load the files of executable mappings when a process is added or an
	 * executable mmap arrives, while the process is alive (needed to reach deleted files
	 * and overlayfs files through map_files after the process exits).
	 */
	bool preload;
	/*
	 * Fetch the debug files of stripped libraries from the debuginfod servers in
	 * DEBUGINFOD_URLS (dbgfetch.h) when no local debug file has them; no effect when the
	 * variable is unset. Replaces cache.fetch_debug.
	 */
	bool debuginfod;
	struct dbgfetch_opts debuginfod_opts; /* zeroes: dbgfetch defaults */
	struct symcache_limits cache;	      /* zeroes: symcache defaults */
};

struct symbolizer_stats {
	uint64_t frames[2][SYM_STATUS_COUNT]; /* [0 user, 1 kernel][enum sym_status] */
	uint64_t files_via_path;	      /* mapped files opened under the process root */
	uint64_t files_via_map_files;	      /* ... through /proc/<pid>/map_files */
	uint64_t files_mismatch;	      /* path led to another file, map_files unusable */
	uint64_t files_open_errors;	      /* other open failures (gone, permission) */
	uint64_t files_load_errors;	      /* opened but not loadable (not ELF, caps) */
	uint32_t processes;		      /* processes held now */
	uint64_t processes_dropped;	      /* refused: max_processes reached */
	int kernel_error;		      /* 0, or why kallsyms is unavailable (-EACCES...) */
	uint64_t cfi_files;		      /* files whose .eh_frame was loaded */
	uint64_t cfi_errors;		      /* files without usable CFI */
	struct symcache_stats cache;
	bool debuginfod;		     /* a debuginfod fetcher is in use */
	struct dbgfetch_stats debuginfod_st; /* its lookups (zeroes without one) */
};

/* Style of symbolizer_format() for unresolved frames. */
enum symbolizer_style {
	SYMBOLIZER_STYLE_PERF,	     /* "libfoo.so+0x1a2b", "[unknown] ([anon])" */
	SYMBOLIZER_STYLE_FLAMEGRAPH, /* "[libfoo.so+0x1a2b]", "[anon]" (stackcollapse-perf.pl) */
};

struct symbolizer;

/* opts may be NULL (defaults). NULL without memory. */
struct symbolizer *symbolizer_new(const struct symbolizer_opts *opts);
void symbolizer_free(struct symbolizer *sz);

/*
 * Read (or re-read, replacing) the mappings of host PID pid and open its root directory.
 * 0, -ESRCH/-ENOENT process gone, -E2BIG max_processes reached, -errno, -ENOMEM.
 * Lookups for a PID never added add it implicitly (once: a failure is remembered).
 */
int symbolizer_add_process(struct symbolizer *sz, pid_t pid);

/*
 * Test seam: add pid with the given maps text and root directory fd (dup'ed; -1: none), no
 * /proc access other than map_files. Errors as procmaps_parse(), -E2BIG, -ENOMEM.
 */
int symbolizer_add_process_maps(struct symbolizer *sz, pid_t pid, int rootfd, const char *maps,
				size_t len);

/*
 * Apply one PERF_RECORD_MMAP2 of process pid (adds the process first if unknown).
 * 0 or an error of procmaps_add()/symbolizer_add_process().
 */
int symbolizer_mmap2(struct symbolizer *sz, pid_t pid, const struct procmap_update *u);

/*
 * Forget pid (PERF_RECORD_EXIT, once its samples are symbolized). Unknown pid: no-op.
 * Cached symbol tables stay for other processes.
 */
void symbolizer_remove_process(struct symbolizer *sz, pid_t pid);

/*
 * Symbolize one frame of process pid (the thread group id, not the thread id). Pass
 * is_return_addr for every callchain entry except the sampled IP: the lookup then uses
 * addr - 1, the call instruction, so a call that ends a function is not attributed to the
 * next one. PERF_CONTEXT_* markers must be dropped by the caller.
 * Always fills *out and returns 0. Borrowed strings in *out are valid until the next
 * symbolizer_* call on sz: copy (intern) them if kept.
 */
int symbolizer_lookup(struct symbolizer *sz, pid_t pid, uint64_t addr, bool is_return_addr,
		      struct sym_result *out);

/* The function of kernel address addr (a return address: is_return_addr), NULL if not known
 * or not a kernel address; not counted in the stats (a look at a frame, not a frame shown).
 * Borrowed: valid until kallsyms is freed with sz. */
const char *symbolizer_kernel_name(struct symbolizer *sz, uint64_t addr, bool is_return_addr);

/*
 * Load kallsyms now if not yet tried; 0 or the error kernel frames will report (-EACCES:
 * all addresses are 0, kptr_restrict; -ENOENT, ...). For an up-front warning.
 */
int symbolizer_kernel_status(struct symbolizer *sz);

/*
 * Render r as one frame name into buf[0..len): the function, or the unresolved form of
 * style. Returns the length it needed (as snprintf; >= len means truncated).
 */
int symbolizer_format(const struct sym_result *r, enum symbolizer_style style, char *buf,
		      size_t len);

void symbolizer_stats(const struct symbolizer *sz, struct symbolizer_stats *out);

/* ---- native unwinding (.eh_frame, elfcfi.h) -------------------------------------------- */

enum symbolizer_exec {
	SYMBOLIZER_NOT_EXEC = 0,  /* no mapping, or not executable */
	SYMBOLIZER_EXEC_FILE = 1, /* executable code of a mapped file or the vDSO */
	SYMBOLIZER_EXEC_ANON = 2, /* executable anonymous memory (JIT) */
};

/* What kind of memory addr is in process pid. No I/O once the process is known. */
enum symbolizer_exec symbolizer_exec_at(struct symbolizer *sz, pid_t pid, uint64_t addr);

/*
 * One CFI step out of the native frame of process pid at in->pc (is_return_addr: in->pc is a
 * return address, the call is at in->pc - 1), reading the stack with read(arg, ...): as
 * elfcfi_step(), plus -ENOENT when pc is in no file mapping or its file has no CFI. The CFI of
 * a file is loaded once and kept per file (the symbol cache's identity) until
 * symbolizer_free; a file that failed is not tried again for that mapping.
 */
/*
 * The addresses in process pid of the data symbols names[0..n) (mangled) of its mapped file
 * whose base name is module (e.g. "libjvm.so"), from the file's .symtab: addrs[i] = 0 when
 * absent. Opened through the process's root (rootfs.h). Returns how many were found, or
 * -ENOENT (no such mapping), or the file's error. Does I/O: call once per process.
 */
int symbolizer_data_symbols(struct symbolizer *sz, pid_t pid, const char *module,
			    const char *const names[], size_t n, uint64_t *addrs);

int symbolizer_cfi_step(struct symbolizer *sz, pid_t pid, const struct elfcfi_regs *in,
			bool is_return_addr, elfcfi_read_fn read, void *arg,
			struct elfcfi_regs *out);

#endif
