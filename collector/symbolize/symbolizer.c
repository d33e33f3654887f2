// SPDX-License-Identifier: MIT
/*
 * symbolizer.c - per-process mappings + shared ELF tables + kallsyms -> frame names.
 *
 * Invariant: each mapping's cookie caches the outcome of opening its file: 0 not tried,
 * COOKIE_FAILED | errno after a failure (never retried for that mapping), else a symcache
 * handle (reloaded if the cache has evicted it meanwhile).
 */
#include "symbolizer.h"

#include "array.h"
#include "elfcfi.h"
#include "elfsym.h"
#include "fgsearch.h"
#include "htab.h"
#include "kallsyms.h"
#include "rootfs.h"
#include "util.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#define DEFAULT_MAX_PROCESSES 4096
#define COOKIE_FAILED (1ull << 63)
#define VSYSCALL_START ARCH_VSYSCALL_START
#define VSYSCALL_END ARCH_VSYSCALL_END
/* The vDSO is a few pages; refuse anything that claims to be larger. */
#define VDSO_MAX_SIZE (1u << 20)

struct sproc {
	pid_t pid;
	int rootfd;	       /* O_PATH fd of the process root, or -1 */
	struct procmaps *maps; /* empty when the process could not be read */
};

struct symbolizer {
	struct symbolizer_opts opts;
	struct symcache *cache;
	struct sproc *procs; /* sorted by pid */
	size_t nprocs;
	size_t capprocs;
	size_t last; /* index of the last process looked up */
	struct kallsyms *ks;
	struct dbgfetch *df; /* NULL: no debuginfod */
	bool ks_tried;
	int ks_error;
	struct symbolizer_stats st;
	/* CFI per file: symcache handle -> index into cfis (NULL: the file has none) */
	struct htab cfi_idx;
	struct elfcfi **cfis;
	size_t ncfis, capcfis;
};

static int fetch_debug(void *arg, const uint8_t *build_id, size_t len)
{
	return dbgfetch_find(arg, build_id, len);
}

struct symbolizer *symbolizer_new(const struct symbolizer_opts *opts)
{
	struct symbolizer *sz = FG_NEW_CONF(struct symbolizer, opts, opts);

	if (!sz)
		return NULL;
	FG_DEFAULT(sz->opts.max_processes, DEFAULT_MAX_PROCESSES);
	/* -ENOENT (no DEBUGINFOD_URLS) and -ENOMEM both leave local debug files only. */
	if (sz->opts.debuginfod && dbgfetch_new(&sz->opts.debuginfod_opts, &sz->df) == 0) {
		sz->opts.cache.fetch_debug = fetch_debug;
		sz->opts.cache.fetch_arg = sz->df;
	}
	sz->cache = symcache_new(&sz->opts.cache);
	if (!sz->cache) {
		dbgfetch_free(sz->df);
		free(sz);
		return NULL;
	}
	return sz;
}

static void sproc_fini(struct sproc *p)
{
	procmaps_free(p->maps);
	if (p->rootfd >= 0)
		close(p->rootfd);
}

void symbolizer_free(struct symbolizer *sz)
{
	if (!sz)
		return;
	for (size_t i = 0; i < sz->nprocs; i++)
		sproc_fini(&sz->procs[i]);
	free(sz->procs);
	symcache_free(sz->cache);
	dbgfetch_free(sz->df);
	kallsyms_free(sz->ks);
	for (size_t i = 0; i < sz->ncfis; i++)
		elfcfi_free(sz->cfis[i]);
	free(sz->cfis);
	htab_fini(&sz->cfi_idx);
	free(sz);
}

static bool proc_before(const struct sproc *p, pid_t pid)
{
	return p->pid < pid;
}
/* proc_lower_bound(v, n, pid): the index of the first process with pid >= pid. */
FG_LOWER_BOUND(proc_lower_bound, struct sproc, pid_t, proc_before)

static struct sproc *proc_find(struct symbolizer *sz, pid_t pid)
{
	size_t i;

	if (sz->last < sz->nprocs && sz->procs[sz->last].pid == pid)
		return &sz->procs[sz->last];
	i = proc_lower_bound(sz->procs, sz->nprocs, pid);
	if (i < sz->nprocs && sz->procs[i].pid == pid) {
		sz->last = i;
		return &sz->procs[i];
	}
	return NULL;
}

/* The entry for pid, created empty (no maps content, no root) if new. */
static int proc_get(struct symbolizer *sz, pid_t pid, struct sproc **out)
{
	size_t i = proc_lower_bound(sz->procs, sz->nprocs, pid);
	struct procmaps *maps;

	if (i < sz->nprocs && sz->procs[i].pid == pid) {
		*out = &sz->procs[i];
		return 0;
	}
	if (sz->nprocs >= sz->opts.max_processes) {
		sz->st.processes_dropped++;
		return -E2BIG;
	}
	if (ARRAY_GROW(sz->procs, sz->capprocs, sz->nprocs + 1) != 0)
		return -ENOMEM;
	maps = procmaps_new();
	if (!maps)
		return -ENOMEM;
	memmove(&sz->procs[i + 1], &sz->procs[i], (sz->nprocs - i) * sizeof(*sz->procs));
	sz->procs[i] = (struct sproc){ .pid = pid, .rootfd = -1, .maps = maps };
	sz->nprocs++;
	sz->last = i;
	*out = &sz->procs[i];
	return 0;
}

static void record_failure(struct symbolizer *sz, struct procmap *m, int err, bool opening)
{
	m->cookie = COOKIE_FAILED | (uint64_t)(unsigned int)-err;
	if (!opening)
		sz->st.files_load_errors++;
	else if (err == -ESTALE)
		sz->st.files_mismatch++;
	else
		sz->st.files_open_errors++;
}

/* The vDSO is the same image in every process on this kernel: parse our own copy. */
static int vdso_handle(struct symbolizer *sz, uint64_t *handle)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	uint64_t size;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -ENOENT;
	size = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
	for (unsigned int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)((const char *)eh + eh->e_phoff +
							    (size_t)i * eh->e_phentsize);

		if (ph->p_type == PT_LOAD && ph->p_offset + ph->p_filesz > size)
			size = ph->p_offset + ph->p_filesz;
	}
	if (size > VDSO_MAX_SIZE)
		return -EFBIG;
	return symcache_get_mem(sz->cache, "[vdso]", eh, size, handle);
}

/* The symbol table of mapping m of p: 0 with *es, or the (remembered) error. */
static int mapping_table(struct symbolizer *sz, struct sproc *p, struct procmap *m,
			 struct elfsym **es)
{
	enum rootfs_via via;
	uint64_t handle;
	int fd, rv;

	*es = NULL;
	if (m->cookie & COOKIE_FAILED)
		return (m->cookie & ~COOKIE_FAILED) ? -(int)(m->cookie & ~COOKIE_FAILED) : -EIO;
	if (m->cookie && (*es = symcache_resolve(sz->cache, m->cookie)) != NULL)
		return 0;
	if (m->kind == PROCMAP_VDSO) {
		rv = vdso_handle(sz, &handle);
		if (rv != 0) {
			record_failure(sz, m, rv, false);
			return rv;
		}
	} else {
		fd = rootfs_open_mapping(p->rootfd, p->pid, m, 0, &via);
		if (fd < 0) {
			record_failure(sz, m, fd, true);
			return fd;
		}
		if (via == ROOTFS_VIA_PATH)
			sz->st.files_via_path++;
		else
			sz->st.files_via_map_files++;
		rv = symcache_get_fd(sz->cache, fd, p->rootfd, &handle);
		close(fd);
		if (rv != 0) {
			record_failure(sz, m, rv, false);
			return rv;
		}
	}
	m->cookie = handle;
	*es = symcache_resolve(sz->cache, handle);
	return *es ? 0 : -ENOMEM;
}

static bool has_file(const struct procmap *m)
{
	return m->kind == PROCMAP_FILE || m->kind == PROCMAP_DELETED || m->kind == PROCMAP_MEMFD ||
	       m->kind == PROCMAP_VDSO;
}

static void preload(struct symbolizer *sz, struct sproc *p, struct procmap *only)
{
	struct elfsym *es;

	if (!sz->opts.preload)
		return;
	if (only) {
		if ((only->prot & PROCMAP_X) && has_file(only))
			mapping_table(sz, p, only, &es);
		return;
	}
	for (size_t i = 0; i < procmaps_count(p->maps); i++) {
		struct procmap *m = procmaps_at(p->maps, i);

		if ((m->prot & PROCMAP_X) && has_file(m))
			mapping_table(sz, p, m, &es);
	}
}

int symbolizer_add_process(struct symbolizer *sz, pid_t pid)
{
	struct sproc *p;
	int rv, rootfd;

	if ((rv = proc_get(sz, pid, &p)) != 0)
		return rv;
	rootfd = rootfs_open_root(pid);
	if ((rv = procmaps_read(p->maps, pid)) != 0) {
		if (rootfd >= 0)
			close(rootfd);
		return rv;
	}
	if (p->rootfd >= 0)
		close(p->rootfd);
	p->rootfd = rootfd < 0 ? -1 : rootfd;
	preload(sz, p, NULL);
	return 0;
}

int symbolizer_add_process_maps(struct symbolizer *sz, pid_t pid, int rootfd, const char *maps,
				size_t len)
{
	struct sproc *p;
	int rv, fd = -1;

	if ((rv = proc_get(sz, pid, &p)) != 0)
		return rv;
	if (rootfd >= 0 && (fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 0)) < 0)
		return -errno;
	if ((rv = procmaps_parse(p->maps, maps, len)) != 0) {
		if (fd >= 0)
			close(fd);
		return rv;
	}
	if (p->rootfd >= 0)
		close(p->rootfd);
	p->rootfd = fd;
	preload(sz, p, NULL);
	return 0;
}

int symbolizer_mmap2(struct symbolizer *sz, pid_t pid, const struct procmap_update *u)
{
	struct sproc *p = proc_find(sz, pid);
	int rv;

	if (!p) {
		/* A process we never saw: its maps now already include this mapping. */
		rv = symbolizer_add_process(sz, pid);
		if (rv != 0 && rv != -E2BIG && rv != -ENOMEM)
			rv = 0; /* gone: keep the empty entry and record the mmap into it */
		if (rv != 0)
			return rv;
		p = proc_find(sz, pid);
		if (!p)
			return -ENOMEM;
	}
	if ((rv = procmaps_add(p->maps, u)) != 0)
		return rv;
	preload(sz, p, procmaps_find(p->maps, u->start));
	return 0;
}

void symbolizer_remove_process(struct symbolizer *sz, pid_t pid)
{
	size_t i = proc_lower_bound(sz->procs, sz->nprocs, pid);

	if (i >= sz->nprocs || sz->procs[i].pid != pid)
		return;
	sproc_fini(&sz->procs[i]);
	memmove(&sz->procs[i], &sz->procs[i + 1], (sz->nprocs - i - 1) * sizeof(*sz->procs));
	sz->nprocs--;
	sz->last = 0;
}

int symbolizer_kernel_status(struct symbolizer *sz)
{
	if (!sz->ks_tried) {
		sz->ks_tried = true;
		sz->ks_error = kallsyms_load(sz->opts.kallsyms_path, &sz->ks);
	}
	return sz->ks_error;
}

static void lookup_kernel(struct symbolizer *sz, uint64_t a, uint64_t addr, struct sym_result *out)
{
	const char *name, *module;
	uint64_t off;
	int rv;

	out->kernel = true;
	out->module = KALLSYMS_KERNEL_MODULE;
	out->offset = addr;
	out->status = SYM_UNKNOWN_IN_MODULE;
	if ((rv = symbolizer_kernel_status(sz)) != 0) {
		out->error = rv;
		return;
	}
	if (kallsyms_lookup(sz->ks, a, &name, &module, &off) != 0)
		return;
	out->name = name;
	out->module = module;
	out->offset = off + (addr - a);
	out->status = SYM_RESOLVED;
}

static void lookup_user(struct symbolizer *sz, pid_t pid, uint64_t a, uint64_t addr,
			struct sym_result *out)
{
	struct sproc *p = proc_find(sz, pid);
	struct procmap *m;
	struct elfsym *es;
	uint64_t vaddr, soff;
	const char *name;
	int rv;

	out->status = SYM_NO_MAPPING;
	out->offset = addr;
	if (!p) {
		/* First frame of an unknown process: read it once; an empty entry if gone. */
		rv = symbolizer_add_process(sz, pid);
		p = proc_find(sz, pid);
		if (!p) {
			out->error = rv;
			return;
		}
	}
	m = procmaps_find(p->maps, a);
	if (!m)
		return;
	out->module = m->kind == PROCMAP_ANON && !m->path[0] ? "[anon]" : m->base;
	out->offset = a - m->start + m->pgoff;
	out->status = SYM_UNKNOWN_IN_MODULE;
	if (m->kind == PROCMAP_ANON && (m->prot & PROCMAP_X)) {
		out->status = SYM_ANON_EXEC;
		out->offset = addr;
		return;
	}
	if (!has_file(m))
		return;
	if ((rv = mapping_table(sz, p, m, &es)) != 0) {
		out->error = rv;
		return;
	}
	if (elfsym_offset_to_vaddr(es, out->offset, (m->prot & PROCMAP_X) != 0, &vaddr) != 0)
		return;
	/* Unnamed: the looked-up instruction (the call of a return address), for addr2line. */
	out->offset = vaddr;
	if (elfsym_lookup(es, vaddr, ELFSYM_DEMANGLE, &name, &soff) != 0)
		return;
	out->name = name;
	out->offset = soff + (addr - a);
	out->status = SYM_RESOLVED;
}

int symbolizer_lookup(struct symbolizer *sz, pid_t pid, uint64_t addr, bool is_return_addr,
		      struct sym_result *out)
{
	/* A return address points after the call: look up the call instruction itself. */
	uint64_t a = is_return_addr && addr ? addr - 1 : addr;

	memset(out, 0, sizeof(*out));
	if (a >= SYMBOLIZER_KERNEL_START && !(a >= VSYSCALL_START && a < VSYSCALL_END))
		lookup_kernel(sz, a, addr, out);
	else
		lookup_user(sz, pid, a, addr, out);
	sz->st.frames[out->kernel][out->status]++;
	return 0;
}

const char *symbolizer_kernel_name(struct symbolizer *sz, uint64_t addr, bool is_return_addr)
{
	uint64_t a = is_return_addr && addr ? addr - 1 : addr;
	struct sym_result r = { 0 };

	if (a < SYMBOLIZER_KERNEL_START || (a >= VSYSCALL_START && a < VSYSCALL_END))
		return NULL;
	lookup_kernel(sz, a, addr, &r);
	return r.status == SYM_RESOLVED ? r.name : NULL;
}

int symbolizer_format(const struct sym_result *r, enum symbolizer_style style, char *buf,
		      size_t len)
{
	bool fg = style == SYMBOLIZER_STYLE_FLAMEGRAPH;

	if (r->status == SYM_RESOLVED && r->name)
		return snprintf(buf, len, "%s", r->name);
	if (!r->module || !r->module[0])
		return snprintf(buf, len, "[unknown]");
	/* A file's (or the vDSO's) offset is what addr2line and perf take; anonymous memory's
	 * or the kernel's would mean nothing to them. */
	if (r->status == SYM_UNKNOWN_IN_MODULE && !r->kernel &&
	    (r->module[0] != '[' || strcmp(r->module, "[vdso]") == 0))
		return snprintf(buf, len, fg ? "[%s+0x%" PRIx64 "]" : "%s+0x%" PRIx64, r->module,
				r->offset);
	if (fg)
		return snprintf(buf, len, r->module[0] == '[' ? "%s" : "[%s]", r->module);
	return snprintf(buf, len, "[unknown] (%s)", r->module);
}

void symbolizer_stats(const struct symbolizer *sz, struct symbolizer_stats *out)
{
	*out = sz->st;
	out->processes = (uint32_t)sz->nprocs;
	out->kernel_error = sz->ks_tried ? sz->ks_error : 0;
	symcache_stats(sz->cache, &out->cache);
	out->debuginfod = sz->df != NULL;
	if (sz->df)
		dbgfetch_stats(sz->df, &out->debuginfod_st);
}

/* ---- native unwinding ------------------------------------------------------------------ */

#define MAX_CFI_FILES 4096

enum symbolizer_exec symbolizer_exec_at(struct symbolizer *sz, pid_t pid, uint64_t addr)
{
	struct sproc *p = proc_find(sz, pid);
	struct procmap *m;

	if (!p) {
		(void)symbolizer_add_process(sz, pid);
		if (!(p = proc_find(sz, pid)))
			return SYMBOLIZER_NOT_EXEC;
	}
	m = procmaps_find(p->maps, addr);
	if (!m || !(m->prot & PROCMAP_X))
		return SYMBOLIZER_NOT_EXEC;
	if (m->kind == PROCMAP_ANON)
		return SYMBOLIZER_EXEC_ANON;
	return has_file(m) ? SYMBOLIZER_EXEC_FILE : SYMBOLIZER_NOT_EXEC;
}

/* The vDSO's image (our own: the same on this kernel), for its CFI. */
static int vdso_cfi(struct elfcfi **out)
{
	const uint8_t *eh = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *h = (const Elf64_Ehdr *)eh;
	uint64_t size;

	if (!eh || memcmp(h->e_ident, ELFMAG, SELFMAG) != 0)
		return -ENOENT;
	size = h->e_shoff + (uint64_t)h->e_shnum * h->e_shentsize;
	if (size > VDSO_MAX_SIZE)
		return -EFBIG;
	return elfcfi_load_mem(eh, size, out);
}

/* The CFI of mapping m (its symbol table handle keys it): NULL when the file has none. */
static struct elfcfi *mapping_cfi(struct symbolizer *sz, struct sproc *p, struct procmap *m)
{
	struct elfcfi *c = NULL;
	enum rootfs_via via;
	uint64_t *v;
	int fd, rv;

	v = htab_get(&sz->cfi_idx, m->cookie & HTAB_KEY_MASK);
	if (v)
		return sz->cfis[*v];
	if (sz->ncfis >= MAX_CFI_FILES)
		return NULL;
	if (m->kind == PROCMAP_VDSO) {
		rv = vdso_cfi(&c);
	} else {
		fd = rootfs_open_mapping(p->rootfd, p->pid, m, 0, &via);
		rv = fd < 0 ? fd : elfcfi_load_fd(fd, &c);
		if (fd >= 0)
			close(fd);
	}
	if (rv != 0) {
		c = NULL;
		sz->st.cfi_errors++;
	} else {
		sz->st.cfi_files++;
	}
	if (ARRAY_GROW(sz->cfis, sz->capcfis, sz->ncfis + 1) != 0 ||
	    htab_put(&sz->cfi_idx, m->cookie & HTAB_KEY_MASK, sz->ncfis) != 0) {
		elfcfi_free(c);
		return NULL;
	}
	sz->cfis[sz->ncfis++] = c;
	return c;
}

int symbolizer_cfi_step(struct symbolizer *sz, pid_t pid, const struct elfcfi_regs *in,
			bool is_return_addr, elfcfi_read_fn read, void *arg,
			struct elfcfi_regs *out)
{
	uint64_t a = is_return_addr && in->pc ? in->pc - 1 : in->pc, vaddr;
	struct sproc *p = proc_find(sz, pid);
	struct procmap *m;
	struct elfsym *es;
	struct elfcfi *c;

	if (!p || !(m = procmaps_find(p->maps, a)) || !(m->prot & PROCMAP_X) || !has_file(m))
		return -ENOENT;
	if (mapping_table(sz, p, m, &es) != 0)
		return -ENOENT;
	if (elfsym_offset_to_vaddr(es, a - m->start + m->pgoff, true, &vaddr) != 0)
		return -ENOENT;
	if (!(c = mapping_cfi(sz, p, m)))
		return -ENOENT;
	return elfcfi_step(c, vaddr, in, read, arg, out);
}

int symbolizer_data_symbols(struct symbolizer *sz, pid_t pid, const char *module,
			    const char *const names[], size_t n, uint64_t *addrs)
{
	struct sproc *p;
	struct procmap *m = NULL;
	struct elfsym *es;
	enum rootfs_via via;
	uint64_t v0;
	int fd, rv, found;

	memset(addrs, 0, n * sizeof(*addrs));
	if (!(p = proc_find(sz, pid))) {
		rv = symbolizer_add_process(sz, pid);
		if (!(p = proc_find(sz, pid)))
			return rv ? rv : -ESRCH;
	}
	for (size_t i = 0; i < procmaps_count(p->maps); i++) {
		struct procmap *c = procmaps_at(p->maps, i);

		if ((c->prot & PROCMAP_X) && c->kind == PROCMAP_FILE &&
		    strcmp(c->base, module) == 0) {
			m = c;
			break;
		}
	}
	if (!m)
		return -ENOENT;
	/* The load bias: the mapping's start is the ELF address of its file offset. */
	if ((rv = mapping_table(sz, p, m, &es)) != 0)
		return rv;
	if (elfsym_offset_to_vaddr(es, m->pgoff, true, &v0) != 0)
		return -ENOEXEC;
	fd = rootfs_open_mapping(p->rootfd, p->pid, m, 0, &via);
	if (fd < 0)
		return fd;
	found = elfsym_find_objects(fd, 2ull << 30, names, n, addrs);
	close(fd);
	if (found < 0)
		return found;
	for (size_t i = 0; i < n; i++)
		if (addrs[i])
			addrs[i] = addrs[i] - v0 + m->start;
	return found;
}
