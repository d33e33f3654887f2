// SPDX-License-Identifier: MIT
/*
 * test_elfsym.c - symbol loading and offset -> vaddr translation on the ELF fixtures.
 * Expected addresses come from the fixtures themselves, read by symtest.h's own libelf code.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "elfsym.h"
#include "procmaps.h"
#include "symtest.h"

#include <errno.h>
#include <sys/auxv.h>

static struct elfsym *load(const char *path, const struct elfsym_limits *lim)
{
	struct elfsym *es = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(elfsym_load_fd(fd, lim, &es), 0);
	close(fd);
	return es;
}

/*
 * Resolve name's address as a process would see it: map the file with bias `base` (kernel
 * layout from its program headers), then translate the process address back.
 */
static const char *resolve_via_fake_maps(const char *path, struct elfsym *es, uint64_t base,
					 uint64_t vaddr, uint64_t *off)
{
	static char text[4096];
	struct procmaps *pm = procmaps_new();
	struct procmap *m;
	uint64_t addr = base + vaddr, foff, v;
	const char *name = NULL;

	text[0] = '\0';
	assert_int_equal(fx_maps_for(path, base, text, sizeof(text)), 0);
	assert_int_equal(procmaps_parse(pm, text, strlen(text)), 0);
	m = procmaps_find(pm, addr);
	assert_non_null(m);
	foff = addr - m->start + m->pgoff;
	assert_int_equal(elfsym_offset_to_vaddr(es, foff, m->prot & PROCMAP_X, &v), 0);
	assert_int_equal(v, vaddr);
	if (elfsym_lookup(es, v, ELFSYM_DEMANGLE, &name, off) != 0)
		name = NULL;
	procmaps_free(pm);
	return name;
}

static void test_full_library_resolves_every_function_from_symtab(void **state)
{
	static const char *fns[] = { "fx_alpha", "fx_beta", "fx_hidden", "fx_hidden_addr" };
	struct elfsym *es = load(FX_FULL, NULL);
	uint64_t off;

	(void)state;
	assert_true(elfsym_has_symtab(es));
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		uint64_t v = fx_sym_value(FX_FULL, fns[i]);

		assert_true(v != 0);
		assert_string_equal(resolve_via_fake_maps(FX_FULL, es, 0x7f0000000000, v + 3, &off),
				    fns[i]);
		assert_int_equal(off, 3);
	}
	elfsym_free(es);
}

static void test_stripped_library_uses_dynsym_and_leaves_static_unknown(void **state)
{
	struct elfsym *es = load(FX_STRIPPED, NULL);
	uint64_t hidden = fx_sym_value(FX_FULL, "fx_hidden"), off;
	const char *name;

	(void)state;
	assert_false(elfsym_has_symtab(es));
	assert_true(elfsym_count(es) >= 4);
	assert_string_equal(resolve_via_fake_maps(FX_STRIPPED, es, 0x7f1000000000,
						  fx_sym_value(FX_FULL, "fx_beta") + 1, &off),
			    "fx_beta");
	/* fx_hidden has no symbol left: it must not be pinned on a sized neighbour. */
	assert_true(hidden != 0);
	name = resolve_via_fake_maps(FX_STRIPPED, es, 0x7f1000000000, hidden + 1, &off);
	assert_null(name);
	elfsym_free(es);
}

static void test_zero_sized_symbol_extends_to_next_symbol(void **state)
{
	struct elfsym *es = load(FX_FULL, NULL);
	uint64_t v = fx_sym_value(FX_FULL, "fx_nosize"), off;
	const char *name;

	(void)state;
	assert_true(v != 0);
	assert_int_equal(elfsym_lookup(es, v + 6, 0, &name, &off), 0);
	assert_string_equal(name, "fx_nosize");
	assert_int_equal(off, 6);
	elfsym_free(es);
}

static void test_text_segment_with_vaddr_not_equal_offset(void **state)
{
	struct elfsym *es = load(FX_VADDR, NULL);
	uint64_t v = fx_sym_value(FX_VADDR, "fx_alpha"), off;
	int ne = 0;

	(void)state;
	/* Pin the fixture's edge case itself, so the test cannot silently become ordinary. */
	assert_int_equal(fx_elf_type(FX_VADDR, &ne), ET_DYN);
	assert_true(ne);
	assert_true(v >= 0x200000);
	assert_string_equal(resolve_via_fake_maps(FX_VADDR, es, 0x7f2000000000, v + 2, &off),
			    "fx_alpha");
	assert_int_equal(off, 2);
	assert_string_equal(resolve_via_fake_maps(FX_VADDR, es, 0x7f2000000000,
						  fx_sym_value(FX_VADDR, "fx_beta"), &off),
			    "fx_beta");
	assert_int_equal(off, 0);
	elfsym_free(es);
}

static void test_pie_and_non_pie_executables(void **state)
{
	struct elfsym *pie = load(FX_PIE, NULL), *nopie = load(FX_NOPIE, NULL);
	uint64_t off;
	int ne;

	(void)state;
	assert_int_equal(fx_elf_type(FX_PIE, &ne), ET_DYN);
	assert_int_equal(fx_elf_type(FX_NOPIE, &ne), ET_EXEC);
	assert_string_equal(resolve_via_fake_maps(FX_PIE, pie, 0x555555554000,
						  fx_sym_value(FX_PIE, "fx_leaf") + 1, &off),
			    "fx_leaf");
	/* ET_EXEC is mapped at its link addresses: bias 0. */
	assert_string_equal(resolve_via_fake_maps(FX_NOPIE, nopie, 0,
						  fx_sym_value(FX_NOPIE, "fx_main_work") + 4, &off),
			    "fx_main_work");
	assert_int_equal(off, 4);
	elfsym_free(pie);
	elfsym_free(nopie);
}

static void test_cxx_names_are_demangled_on_request(void **state)
{
	struct elfsym *es = load(FX_CXX, NULL);
	uint64_t v = fx_sym_value(FX_CXX, "_ZN2fx6Worker3runEi"), off;
	const char *name;

	(void)state;
	assert_true(v != 0);
	assert_int_equal(elfsym_lookup(es, v, 0, &name, &off), 0);
	assert_string_equal(name, "_ZN2fx6Worker3runEi");
	assert_int_equal(elfsym_lookup(es, v, ELFSYM_DEMANGLE, &name, &off), 0);
	assert_string_equal(name, "fx::Worker::run(int)");
	v = fx_sym_value(FX_CXX, "_ZN2fx6Worker4tickEPKcd");
	assert_int_equal(elfsym_lookup(es, v + 1, ELFSYM_DEMANGLE, &name, &off), 0);
	assert_string_equal(name, "fx::Worker::tick(char const*, double)");
	elfsym_free(es);
}

/* The build id as `.note.gnu.build-id` stores it: the last 20 bytes of that section. */
static size_t raw_build_id(const char *path, uint8_t *out)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, n = 0;
	int fd = open(path, O_RDONLY);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);

	elf_getshdrstrndx(e, &shstrndx);
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;

		gelf_getshdr(scn, &sh);
		if (strcmp(elf_strptr(e, shstrndx, sh.sh_name), ".note.gnu.build-id") != 0)
			continue;
		d = elf_rawdata(scn, NULL);
		n = d->d_size - 16;
		memcpy(out, (char *)d->d_buf + 16, n);
	}
	elf_end(e);
	close(fd);
	return n;
}

static void test_build_id_matches_the_note(void **state)
{
	struct elfsym *es = load(FX_FULL, NULL);
	uint8_t want[64], got[64];
	const uint8_t *bid;
	size_t n, len;
	int fd;

	(void)state;
	n = raw_build_id(FX_FULL, want);
	assert_int_equal(n, 20);
	bid = elfsym_build_id(es, &len);
	assert_int_equal(len, n);
	assert_memory_equal(bid, want, n);
	fd = open(FX_STRIPPED, O_RDONLY);
	assert_int_equal(elfsym_read_build_id(fd, 0, got, sizeof(got), &len), 0);
	close(fd);
	assert_int_equal(len, n);
	assert_memory_equal(got, want, n); /* strip keeps the note: same build id */
	elfsym_free(es);
}

static void test_limits_and_non_elf_are_refused(void **state)
{
	struct elfsym_limits lim = { .max_symbols = 2 };
	struct elfsym *es = NULL;
	int fd = open(FX_FULL, O_RDONLY);

	(void)state;
	assert_int_equal(elfsym_load_fd(fd, &lim, &es), -E2BIG);
	lim = (struct elfsym_limits){ .max_file_size = 100 };
	assert_int_equal(elfsym_load_fd(fd, &lim, &es), -EFBIG);
	lim = (struct elfsym_limits){ .max_name_bytes = 8 };
	assert_int_equal(elfsym_load_fd(fd, &lim, &es), -E2BIG);
	close(fd);
	assert_null(es);
	fd = open("/proc/self/status", O_RDONLY);
	assert_int_equal(elfsym_load_fd(fd, NULL, &es), -ENOEXEC);
	close(fd);
	fd = open(__FILE__, O_RDONLY);
	assert_int_equal(elfsym_load_fd(fd, NULL, &es), -ENOEXEC);
	close(fd);
	assert_int_equal(elfsym_load_mem("\177ELF garbage", 12, NULL, &es), -ENOEXEC);
}

static void test_offset_outside_every_segment_is_not_translated(void **state)
{
	struct elfsym *es = load(FX_FULL, NULL);
	uint64_t v;

	(void)state;
	assert_int_equal(elfsym_offset_to_vaddr(es, 1ull << 40, true, &v), -ENOENT);
	elfsym_free(es);
}

static void test_vdso_image_has_clock_gettime(void **state)
{
	const unsigned char *vdso = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	struct procmaps *pm = procmaps_new();
	struct procmap *m;
	struct elfsym *es;
	uint64_t a, s;
	bool found = false;

	(void)state;
	assert_non_null(vdso);
	assert_int_equal(procmaps_read(pm, getpid()), 0);
	m = procmaps_find(pm, (uint64_t)(uintptr_t)vdso);
	assert_non_null(m);
	assert_int_equal(m->kind, PROCMAP_VDSO);
	assert_int_equal(elfsym_load_mem(vdso, m->end - m->start, NULL, &es), 0);
	procmaps_free(pm);
	for (size_t i = 0; i < elfsym_count(es); i++) {
		const char *n = elfsym_at(es, i, &a, &s);

		if (strstr(n, "clock_gettime"))
			found = true;
	}
	assert_true(found);
	elfsym_free(es);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_library_resolves_every_function_from_symtab),
		cmocka_unit_test(test_stripped_library_uses_dynsym_and_leaves_static_unknown),
		cmocka_unit_test(test_zero_sized_symbol_extends_to_next_symbol),
		cmocka_unit_test(test_text_segment_with_vaddr_not_equal_offset),
		cmocka_unit_test(test_pie_and_non_pie_executables),
		cmocka_unit_test(test_cxx_names_are_demangled_on_request),
		cmocka_unit_test(test_build_id_matches_the_note),
		cmocka_unit_test(test_limits_and_non_elf_are_refused),
		cmocka_unit_test(test_offset_outside_every_segment_is_not_translated),
		cmocka_unit_test(test_vdso_image_has_clock_gettime),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
