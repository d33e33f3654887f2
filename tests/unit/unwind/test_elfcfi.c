// SPDX-License-Identifier: MIT
/*
 * test_elfcfi.c - .eh_frame steps on a real stack: a library built without frame pointers
 * (fixtures/elf/fx_cfi.c) captures its registers and stack three calls deep; each step must
 * land on the next caller's return address, as __builtin_return_address saw it, and the last
 * on this test's own function.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

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
		cmocka_unit_test(test_symbolizer_steps_through_the_process_mappings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
