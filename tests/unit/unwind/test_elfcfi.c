// SPDX-License-Identifier: MIT
/*
 * test_elfcfi.c - .eh_frame steps on a real stack: a library built without frame pointers
 * (fixtures/elf/fx_cfi.c) captures its registers and stack three calls deep; each step must
 * land on the next caller's return address, as __builtin_return_address saw it, and the last
 * on this test's own function. A hostile .eh_frame (a register number near 2^27 that would make
 * libdw clear gigabytes) is refused at load; real libraries (libc, libjvm) still load and step.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <elf.h>
#include <gelf.h>
#include <libelf.h>

#include "elfcfi.h"
#include "symbolizer.h"

struct fx_cfi_cap {
	uint64_t pc, sp, bp;
	uint8_t stack[2048];
};

static struct fx_cfi_cap cap;

static bool read_cap(void *arg, uint64_t addr, uint64_t *out)
{
	const struct fx_cfi_cap *c = arg;

	if (addr < c->sp || addr + 8 > c->sp + sizeof(c->stack))
		return false;
	memcpy(out, c->stack + (addr - c->sp), 8);
	return true;
}

static const char *sym_of(uint64_t pc)
{
	Dl_info di;

	if (dladdr((void *)(uintptr_t)(pc - 1), &di) == 0 || !di.dli_sname)
		return "?";
	return di.dli_sname;
}

static uint64_t vaddr_of(uint64_t pc, Dl_info *di)
{
	assert_true(dladdr((void *)(uintptr_t)pc, di) != 0);
	return pc - (uint64_t)(uintptr_t)di->dli_fbase;
}

__attribute__((noinline)) static void call_outer(void (*outer)(struct fx_cfi_cap *))
{
	outer(&cap);
	__asm__ volatile("" ::: "memory");
}

static void test_three_frames_without_frame_pointers_unwind_by_cfi(void **state)
{
	void *h = dlopen(FX_CFI, RTLD_NOW);
	void (*outer)(struct fx_cfi_cap *);
	struct elfcfi *lib, *self;
	struct elfcfi_regs r, next;
	Dl_info di;
	int fd;

	(void)state;
	assert_non_null(h);
	outer = (void (*)(struct fx_cfi_cap *))dlsym(h, "fx_cfi_outer");
	assert_non_null(outer);
	call_outer(outer);
	fd = open(FX_CFI, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(elfcfi_load_fd(fd, &lib), 0);
	close(fd); /* the CFI keeps its own descriptor */

	r = (struct elfcfi_regs){ cap.pc, cap.sp, cap.bp };
	assert_string_equal(sym_of(r.pc + 1), "fx_cfi_leaf");
	/* leaf -> mid -> outer -> call_outer (this executable); every step twice: the second
	 * comes from the rule cache and must give the same caller */
	for (int i = 0; i < 3; i++) {
		struct elfcfi_regs a, b, cur = r;

		for (int k = 0; k < i; k++) {
			assert_int_equal(elfcfi_step(lib, vaddr_of(cur.pc - (k ? 1 : 0), &di), &cur,
						     read_cap, &cap, &a),
					 0);
			cur = a;
		}
		assert_int_equal(elfcfi_step(lib, vaddr_of(cur.pc - (i ? 1 : 0), &di), &cur,
					     read_cap, &cap, &a),
				 0);
		assert_int_equal(elfcfi_step(lib, vaddr_of(cur.pc - (i ? 1 : 0), &di), &cur,
					     read_cap, &cap, &b),
				 0);
		assert_memory_equal(&a, &b, sizeof(a));
	}
	assert_int_equal(elfcfi_step(lib, vaddr_of(r.pc, &di), &r, read_cap, &cap, &next), 0);
	assert_string_equal(sym_of(next.pc), "fx_cfi_mid");
	assert_true(next.sp > r.sp);
	r = next;
	assert_int_equal(elfcfi_step(lib, vaddr_of(r.pc - 1, &di), &r, read_cap, &cap, &next), 0);
	assert_string_equal(sym_of(next.pc), "fx_cfi_outer");
	r = next;
	assert_int_equal(elfcfi_step(lib, vaddr_of(r.pc - 1, &di), &r, read_cap, &cap, &next), 0);
	assert_true(next.pc > (uint64_t)(uintptr_t)call_outer &&
		    next.pc < (uint64_t)(uintptr_t)call_outer + 256);
	/* rbp was never touched in the library: the caller's comes back unchanged */
	assert_int_equal(next.fp, cap.bp);

	/* this test binary's own CFI knows call_outer; a vaddr no FDE covers is -ENOENT */
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_int_equal(elfcfi_load_fd(fd, &self), 0);
	close(fd);
	assert_int_equal(elfcfi_step(self, 0x10, &r, read_cap, &cap, &next), -ENOENT);
	/* a stack copy that ends too early: -EFAULT */
	r = (struct elfcfi_regs){ cap.pc, cap.sp, cap.bp };
	{
		struct fx_cfi_cap *small = calloc(1, sizeof(*small));

		*small = cap;
		small->sp = cap.sp + sizeof(cap.stack); /* nothing readable at the real sp */
		assert_int_equal(elfcfi_step(lib, vaddr_of(r.pc, &di), &r, read_cap, small, &next),
				 -EFAULT);
		free(small);
	}
	elfcfi_free(self);
	elfcfi_free(lib);
	dlclose(h);
}

static void test_not_elf_is_refused(void **state)
{
	static const char junk[] = "not an elf file at all";
	struct elfcfi *c = NULL;

	(void)state;
	assert_int_equal(elfcfi_load_mem(junk, sizeof(junk), &c), -ENOEXEC);
	assert_null(c);
	elfcfi_free(NULL);
}

/* A file of the test fixtures, read whole into a buffer with room for `extra` more bytes. */
static uint8_t *read_fixture(const char *name, size_t extra, size_t *size)
{
	const char *src = getenv("FG_SOURCE_DIR");
	char path[4096];
	uint8_t *buf;
	ssize_t n;
	int fd;

	assert_non_null(src);
	snprintf(path, sizeof(path), "%s/tests/fixtures/cfi/%s", src, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	buf = calloc(1, 65536 + extra);
	assert_non_null(buf);
	n = read(fd, buf, 65536);
	close(fd);
	assert_true(n > 0 && n < 65536);
	*size = (size_t)n;
	return buf;
}

/*
 * A mutated shared object (a libFuzzer find): its .eh_frame (0x3f0..0x4fc, found by libdw
 * through PT_GNU_EH_FRAME, its section headers cut off) has an FDE whose
 * DW_CFA_GNU_negative_offset_extended names register 79691775; libdw grew its register table
 * to that and spent a minute and over 1 GB clearing it.
 */
#define HUGE_REG_FILE "eh-frame-huge-register.so"
#define HUGE_REG_EH_FRAME 0x3f0
#define HUGE_REG_EH_SIZE 0x10c

static void test_eh_frame_without_section_headers_is_refused(void **state)
{
	struct elfcfi *c = NULL;
	size_t size;
	uint8_t *img = read_fixture(HUGE_REG_FILE, 0, &size);

	(void)state;
	assert_int_equal(elfcfi_load_mem(img, size, &c), -ENOENT);
	assert_null(c);
	free(img);
}

/*
 * A mutated shared object (a libFuzzer find): its sections' .eh_frame passes the check, but its
 * PT_GNU_EH_FRAME segment, which libdw reads instead, leads to other bytes, where libdw spent
 * over a minute clearing a register table. What libdw would read must be what was checked.
 */
static void test_eh_frame_segment_elsewhere_than_the_sections_is_refused(void **state)
{
	struct elfcfi *c = NULL;
	size_t size;
	uint8_t *img = read_fixture("eh-frame-hdr-elsewhere.so", 0, &size);

	(void)state;
	assert_int_equal(elfcfi_load_mem(img, size, &c), -EBADMSG);
	assert_null(c);
	free(img);
}

/*
 * A mutated shared object (a libFuzzer find): its .eh_frame ends at a zero terminator after one
 * CIE, but its .eh_frame_hdr, of a type no linker writes (0x10000001), holds a search table
 * whose entries point past the terminator at an FDE naming register 245366783. libdw takes the
 * table of a section by that name whatever its type; so must the check.
 */
static void test_eh_frame_hdr_of_another_type_is_checked(void **state)
{
	struct elfcfi *c = NULL;
	size_t size;
	uint8_t *img = read_fixture("eh-frame-hdr-other-type.so", 0, &size);

	(void)state;
	assert_int_equal(elfcfi_load_mem(img, size, &c), -EBADMSG);
	assert_null(c);
	free(img);
}

/*
 * The same file with section headers (.eh_frame, .shstrtab, .eh_frame_hdr) appended: refused by
 * its register.
 */
static void test_huge_register_number_is_refused(void **state)
{
	static const char names[] = "\0.eh_frame\0.shstrtab\0.eh_frame_hdr";
	Elf64_Shdr sh[4] = { { 0 } };
	Elf64_Ehdr eh;
	struct elfcfi *c = NULL;
	size_t size, shoff, stroff;
	uint8_t *img = read_fixture(HUGE_REG_FILE, sizeof(names) + 8 + sizeof(sh), &size);

	(void)state;
	stroff = size;
	memcpy(img + stroff, names, sizeof(names));
	shoff = (stroff + sizeof(names) + 7) & ~(size_t)7;
	sh[1] = (Elf64_Shdr){ .sh_name = 1,
			      .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC,
			      .sh_addr = HUGE_REG_EH_FRAME,
			      .sh_offset = HUGE_REG_EH_FRAME,
			      .sh_size = HUGE_REG_EH_SIZE,
			      .sh_addralign = 8 };
	sh[2] = (Elf64_Shdr){ .sh_name = 11,
			      .sh_type = SHT_STRTAB,
			      .sh_offset = stroff,
			      .sh_size = sizeof(names),
			      .sh_addralign = 1 };
	/* .eh_frame_hdr: where its PT_GNU_EH_FRAME segment says (0x3c0, 0x2c bytes) */
	sh[3] = (Elf64_Shdr){ .sh_name = 21,
			      .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC,
			      .sh_addr = 0x3c0,
			      .sh_offset = 0x3c0,
			      .sh_size = 0x2c,
			      .sh_addralign = 4 };
	memcpy(img + shoff, sh, sizeof(sh));
	memcpy(&eh, img, sizeof(eh));
	eh.e_shoff = shoff;
	eh.e_shnum = 4;
	eh.e_shstrndx = 2;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	memcpy(img, &eh, sizeof(eh));
	assert_int_equal(elfcfi_load_mem(img, shoff + sizeof(sh), &c), -EBADMSG);
	assert_null(c);

	/* the register below the bound (0x2f 0xff 0xff 0xff 0x25 -> 0x2f 0x10 0x90 0x80 0x00: r16,
	 * offset 16 in the instruction's own length): the file loads */
	memcpy(img + 0x4d3, "\x2f\x10\x90\x80\x00", 5);
	assert_int_equal(elfcfi_load_mem(img, shoff + sizeof(sh), &c), 0);
	elfcfi_free(c);
	free(img);
}

static bool read_const(void *arg, uint64_t addr, uint64_t *out)
{
	(void)arg;
	*out = 0x1234000 + addr;
	return true;
}

/* A real library loads, and a step at a function's entry gives CFA = rsp + 8. */
static void load_and_step(const char *path, const char *func)
{
	struct elfcfi *c = NULL;
	struct elfcfi_regs in = { 0, 0x7000000, 0x7000100 }, out;
	uint64_t vaddr = 0;
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	while ((scn = elf_nextscn(elf, scn)) && !vaddr) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Sym sym;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++)
			if (gelf_getsym(d, (int)i, &sym) && sym.st_value &&
			    strcmp(elf_strptr(elf, sh.sh_link, sym.st_name), func) == 0)
				vaddr = sym.st_value;
	}
	elf_end(elf);
	assert_true(vaddr != 0);
	assert_int_equal(elfcfi_load_fd(fd, &c), 0);
	close(fd);
	in.pc = vaddr;
	assert_int_equal(elfcfi_step(c, vaddr, &in, read_const, NULL, &out), 0);
	assert_int_equal(out.sp, in.sp + 8);
	assert_int_equal(out.pc, 0x1234000 + in.sp);
	elfcfi_free(c);
}

static void test_real_libraries_load_and_step(void **state)
{
	(void)state;
	load_and_step("/lib/x86_64-linux-gnu/libc.so.6", "getpid");
	/* scripts/install-deps.sh installs openjdk-17-jdk-headless */
	load_and_step("/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so",
		      "JNI_CreateJavaVM");
}

/* The same walk through the symbolizer: mapping -> file -> ELF address -> cached CFI. */
static void test_symbolizer_steps_through_the_process_mappings(void **state)
{
	void *h = dlopen(FX_CFI, RTLD_NOW);
	void (*outer)(struct fx_cfi_cap *);
	struct symbolizer *sz = symbolizer_new(NULL);
	struct elfcfi_regs r, next;
	struct symbolizer_stats st;
	pid_t me = getpid();

	(void)state;
	assert_non_null(h);
	outer = (void (*)(struct fx_cfi_cap *))dlsym(h, "fx_cfi_outer");
	call_outer(outer);
	assert_int_equal(symbolizer_add_process(sz, me), 0);
	assert_int_equal(symbolizer_exec_at(sz, me, cap.pc), SYMBOLIZER_EXEC_FILE);
	assert_int_equal(symbolizer_exec_at(sz, me, (uint64_t)(uintptr_t)&cap),
			 SYMBOLIZER_NOT_EXEC);
	r = (struct elfcfi_regs){ cap.pc, cap.sp, cap.bp };
	assert_int_equal(symbolizer_cfi_step(sz, me, &r, false, read_cap, &cap, &next), 0);
	assert_string_equal(sym_of(next.pc), "fx_cfi_mid");
	r = next;
	assert_int_equal(symbolizer_cfi_step(sz, me, &r, true, read_cap, &cap, &next), 0);
	assert_string_equal(sym_of(next.pc), "fx_cfi_outer");
	r = next;
	assert_int_equal(symbolizer_cfi_step(sz, me, &r, true, read_cap, &cap, &next), 0);
	assert_true(next.pc > (uint64_t)(uintptr_t)call_outer &&
		    next.pc < (uint64_t)(uintptr_t)call_outer + 256);
	/* not code: no step */
	r.pc = (uint64_t)(uintptr_t)&cap;
	assert_int_equal(symbolizer_cfi_step(sz, me, &r, false, read_cap, &cap, &next), -ENOENT);
	symbolizer_stats(sz, &st);
	assert_int_equal(st.cfi_files, 1); /* all three steps out of the library: loaded once */
	symbolizer_free(sz);
	dlclose(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_three_frames_without_frame_pointers_unwind_by_cfi),
		cmocka_unit_test(test_not_elf_is_refused),
		cmocka_unit_test(test_eh_frame_without_section_headers_is_refused),
		cmocka_unit_test(test_huge_register_number_is_refused),
		cmocka_unit_test(test_eh_frame_segment_elsewhere_than_the_sections_is_refused),
		cmocka_unit_test(test_eh_frame_hdr_of_another_type_is_checked),
		cmocka_unit_test(test_real_libraries_load_and_step),
		cmocka_unit_test(test_symbolizer_steps_through_the_process_mappings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
