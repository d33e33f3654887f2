/* SPDX-License-Identifier: MIT */
/*
 * symtest.h - helpers for the symbol stage's tests, independent of the code under test:
 * they read ELF fixtures with libelf directly to derive expected addresses, write maps text
 * the way the kernel would map a file, and run fixture executables as child processes.
 */
#ifndef FG_SYMTEST_H
#define FG_SYMTEST_H

#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#define FX_PAGE 0x1000ull

/* st_value (and st_size) of the named symbol in .symtab (else .dynsym) of path; 0 if absent. */
static inline uint64_t fx_sym(const char *path, const char *name, uint64_t *size)
{
	uint64_t val = 0;
	Elf_Scn *scn = NULL;
	int fd = open(path, O_RDONLY);
	Elf *e;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	for (int pass = 0; e && pass < 2 && !val; pass++) {
		while (!val && (scn = elf_nextscn(e, scn)) != NULL) {
			GElf_Shdr sh;
			Elf_Data *d;

			gelf_getshdr(scn, &sh);
			if (sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB))
				continue;
			d = elf_getdata(scn, NULL);
			for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym s;
				const char *n;

				gelf_getsym(d, (int)i, &s);
				n = elf_strptr(e, sh.sh_link, s.st_name);
				if (n && strcmp(n, name) == 0 && s.st_shndx != SHN_UNDEF) {
					val = s.st_value;
					if (size)
						*size = s.st_size;
					break;
				}
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return val;
}

/* ELF type (ET_EXEC, ET_DYN) of path, and whether its executable PT_LOAD has vaddr != off. */
static inline int fx_elf_type(const char *path, int *text_vaddr_ne_off)
{
	GElf_Ehdr eh;
	size_t n;
	int fd = open(path, O_RDONLY), type = -1;
	Elf *e;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && gelf_getehdr(e, &eh)) {
		type = eh.e_type;
		*text_vaddr_ne_off = 0;
		elf_getphdrnum(e, &n);
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			gelf_getphdr(e, (int)i, &ph);
			if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
			    ph.p_vaddr != ph.p_offset)
				*text_vaddr_ne_off = 1;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return type;
}

/*
 * Append to buf the maps lines the kernel would show for path loaded with bias base (0 for
 * ET_EXEC): one line per PT_LOAD, page-aligned, with the file's real dev and inode.
 */
static inline int fx_maps_for(const char *path, uint64_t base, char *buf, size_t cap)
{
	size_t len = strlen(buf), n;
	struct stat st;
	int fd = open(path, O_RDONLY);
	Elf *e;

	if (fd < 0 || fstat(fd, &st) != 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_getphdrnum(e, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		uint64_t start, end;

		gelf_getphdr(e, (int)i, &ph);
		if (ph.p_type != PT_LOAD)
			continue;
		start = (uint64_t)(base + (ph.p_vaddr & ~(FX_PAGE - 1)));
		end = (uint64_t)((base + ph.p_vaddr + ph.p_memsz + FX_PAGE - 1) & ~(FX_PAGE - 1));
		len += (size_t)snprintf(
			buf + len, cap - len,
			"%" PRIx64 "-%" PRIx64 " %c%c%cp %08" PRIx64 " %02x:%02x %lu %s\n", start,
			end, (ph.p_flags & PF_R) ? 'r' : '-', (ph.p_flags & PF_W) ? 'w' : '-',
			(ph.p_flags & PF_X) ? 'x' : '-', (uint64_t)(ph.p_offset & ~(FX_PAGE - 1)),
			major(st.st_dev), minor(st.st_dev), (unsigned long)st.st_ino, path);
	}
	elf_end(e);
	close(fd);
	return len < cap ? 0 : -1;
}

static inline uint64_t fx_sym_value(const char *path, const char *name)
{
	return fx_sym(path, name, NULL);
}

struct fx_child {
	pid_t pid;
	int to_child; /* closing it ends the child */
	uint64_t leaf;
	uint64_t main_work;
};

/* Enter root as a container does: own mount namespace, pivot_root, old root detached. */
static inline int fx_enter_root(const char *root)
{
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount(root, root, NULL, MS_BIND | MS_REC, NULL) != 0 || chdir(root) != 0 ||
	    syscall(SYS_pivot_root, ".", ".") != 0 || umount2(".", MNT_DETACH) != 0 ||
	    chdir("/") != 0)
		return -1;
	return 0;
}

enum fx_jail { FX_NO_JAIL, FX_CHROOT, FX_PIVOT_ROOT };

/*
 * Run fixture executable exe (optionally jailed into root, where it is at path exe) and
 * read the function addresses it prints. 0 or -1.
 */
static inline int fx_spawn_in(const char *exe, const char *root, enum fx_jail jail,
			      struct fx_child *c)
{
	int in[2], out[2];
	char line[128];
	FILE *f;

	if (pipe(in) || pipe(out))
		return -1;
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		if (jail == FX_CHROOT && (chroot(root) != 0 || chdir("/") != 0))
			_exit(126);
		if (jail == FX_PIVOT_ROOT && fx_enter_root(root) != 0)
			_exit(126);
		execl(exe, exe, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->to_child = in[1];
	f = fdopen(out[0], "r");
	c->leaf = c->main_work = 0;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if (sscanf(line, "fx_leaf %llx", &v) == 1)
			c->leaf = v;
		else if (sscanf(line, "fx_main_work %llx", &v) == 1)
			c->main_work = v;
		else if (strncmp(line, "ready", 5) == 0)
			break;
	}
	if (f)
		fclose(f);
	return c->leaf && c->main_work ? 0 : -1;
}

static inline int fx_spawn(const char *exe, struct fx_child *c)
{
	return fx_spawn_in(exe, NULL, FX_NO_JAIL, c);
}

static inline void fx_reap(struct fx_child *c)
{
	int status;

	close(c->to_child);
	if (waitpid(c->pid, &status, 0) < 0)
		kill(c->pid, SIGKILL);
}

/* A fresh temporary directory under /tmp (absolute path in buf). */
static inline int fx_tmpdir(char *buf, size_t len, const char *tag)
{
	snprintf(buf, len, "/tmp/fgsym-%s-XXXXXX", tag);
	return mkdtemp(buf) ? 0 : -1;
}

static inline void fx_rm_rf(const char *dir)
{
	char cmd[512];

	if (strncmp(dir, "/tmp/fgsym-", 11) != 0)
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

static inline int fx_copy(const char *from, const char *to)
{
	char buf[65536];
	ssize_t r;
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);

	if (in < 0 || out < 0)
		return -1;
	while ((r = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)r) != r)
			return -1;
	close(in);
	close(out);
	return r < 0 ? -1 : 0;
}

#endif
