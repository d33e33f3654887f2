// SPDX-License-Identifier: MIT
/*
 * test_agent_vmflags.c - PreserveFramePointer and DebugNonSafepoints (and any bool flag by name)
 * read from a fake flag table found through fake VMStructs (JDK 11+'s JVMFlag and older
 * releases' Flag), DebugNonSafepoints counted as on when left at its default, and tables with a
 * missing field or insane sizes refused (-ENOENT, defaults kept) rather than read.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fake_vmstructs.h"
#include "fgproto.h"
#include "vmflags.h"

/* A flag as HotSpot lays it out here: name, value address, origin in the low 4 bits of flags. */
struct fflag {
	const char *name;
	void *addr;
	uint32_t flags;
	uint32_t pad;
};

#define NFLAGS 5

static struct {
	struct fake_vm vm;
	struct fflag flags[NFLAGS];
	struct fflag *table;
	size_t n;
	bool pfp, dns, other;
} J;

/* cls: "JVMFlag" or "Flag". pfp, dns: the values; dns_set: DebugNonSafepoints given explicitly. */
static void fake(const char *cls, bool pfp, bool dns, bool dns_set)
{
	memset(&J, 0, sizeof(J));
	J.pfp = pfp;
	J.dns = dns;
	J.flags[0] = (struct fflag){ "UseSerialGC", &J.other, 0, 0 };
	J.flags[1] = (struct fflag){ "PreserveFramePointer", &J.pfp, pfp ? 1 : 0, 0 };
	J.flags[2] = (struct fflag){ NULL, &J.other, 0, 0 }; /* skipped */
	J.flags[3] = (struct fflag){ "DebugNonSafepoints", &J.dns, dns_set ? 0x21 : 0x20, 0 };
	J.flags[4] = (struct fflag){ "Unset", NULL, 0, 0 }; /* skipped */
	J.table = J.flags;
	J.n = NFLAGS;
	fake_vm_static(&J.vm, cls, "flags", "JVMFlag*", &J.table);
	fake_vm_static(&J.vm, cls, "numFlags", "size_t", &J.n);
	fake_vm_field(&J.vm, cls, "_name", "const char*", offsetof(struct fflag, name));
	fake_vm_field(&J.vm, cls, "_addr", "void*", offsetof(struct fflag, addr));
	fake_vm_field(&J.vm, cls, "_flags", "JVMFlag::Flags", offsetof(struct fflag, flags));
	fake_vm_type(&J.vm, cls, sizeof(struct fflag));
}

static int read_flags(uint32_t *flags)
{
	struct vmstructs vs;

	fake_vm_tables(&J.vm, &vs);
	return vmflags_from(&vs, flags);
}

static void test_values_are_read_from_the_table(void **state)
{
	uint32_t f = 0;

	(void)state;
	fake("JVMFlag", true, false, true);
	assert_int_equal(read_flags(&f), 0);
	assert_int_equal(f, FGP_HELLO_PRESERVE_FRAME_POINTER);
	fake("JVMFlag", false, true, true);
	assert_int_equal(read_flags(&f), 0);
	assert_int_equal(f, FGP_HELLO_DEBUG_NON_SAFEPOINTS);
}

static void test_debug_non_safepoints_left_at_its_default_counts_as_on(void **state)
{
	uint32_t f = 0;

	(void)state;
	fake("JVMFlag", true, false, false); /* off, but HotSpot records it for our events */
	assert_int_equal(read_flags(&f), 0);
	assert_int_equal(f, FGP_HELLO_PRESERVE_FRAME_POINTER | FGP_HELLO_DEBUG_NON_SAFEPOINTS);
}

/* One bool flag by name (the allocation ring asks for the collector in use). */
static void test_a_bool_flag_is_found_by_name(void **state)
{
	struct vmstructs vs;
	bool v = false;

	(void)state;
	fake("JVMFlag", true, false, true);
	J.other = true;
	fake_vm_tables(&J.vm, &vs);
	assert_int_equal(vmflags_bool(&vs, "UseSerialGC", &v), 0);
	assert_true(v);
	assert_int_equal(vmflags_bool(&vs, "DebugNonSafepoints", &v), 0);
	assert_false(v);
	assert_int_equal(vmflags_bool(&vs, "UseZGC", &v), -ENOENT);
	assert_int_equal(vmflags_bool(&vs, "Unset", &v), -ENOENT); /* no value */
	J.n = 0;
	assert_int_equal(vmflags_bool(&vs, "UseSerialGC", &v), -ENOENT);
}

static void test_older_releases_call_the_class_flag(void **state)
{
	uint32_t f = 0;

	(void)state;
	fake("Flag", true, true, true);
	assert_int_equal(read_flags(&f), 0);
	assert_int_equal(f, FGP_HELLO_PRESERVE_FRAME_POINTER | FGP_HELLO_DEBUG_NON_SAFEPOINTS);
}

static void test_insane_tables_are_refused_and_defaults_kept(void **state)
{
	uint32_t f = 0;

	(void)state;
	fake("JVMFlag", true, false, true);
	J.vm.s[1].field = "numFlags_renamed"; /* no flag count */
	assert_int_equal(read_flags(&f), -ENOENT);
	assert_int_equal(f, FGP_HELLO_DEBUG_NON_SAFEPOINTS);

	fake("JVMFlag", true, false, true);
	J.n = 0;
	assert_int_equal(read_flags(&f), -ENOENT);
	J.n = 1000000;
	assert_int_equal(read_flags(&f), -ENOENT);

	fake("JVMFlag", true, false, true);
	J.table = NULL;
	assert_int_equal(read_flags(&f), -ENOENT);

	fake("JVMFlag", true, false, true);
	J.vm.t[0].size = 4096; /* an entry larger than any JVMFlag */
	assert_int_equal(read_flags(&f), -ENOENT);

	fake("JVMFlag", true, false, true);
	J.vm.s[3].offset = sizeof(struct fflag) - 4; /* _addr would run past the entry */
	assert_int_equal(read_flags(&f), -ENOENT);
	assert_int_equal(f, FGP_HELLO_DEBUG_NON_SAFEPOINTS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values_are_read_from_the_table),
		cmocka_unit_test(test_debug_non_safepoints_left_at_its_default_counts_as_on),
		cmocka_unit_test(test_a_bool_flag_is_found_by_name),
		cmocka_unit_test(test_older_releases_call_the_class_flag),
		cmocka_unit_test(test_insane_tables_are_refused_and_defaults_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
