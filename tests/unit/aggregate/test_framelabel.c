// SPDX-License-Identifier: MIT
/*
 * test_framelabel.c - one label per frame for every output: the FlameGraph suffix, ';' and
 * control bytes never reach a label, and the labels `record` and rolling profiles print
 * (stackagg_labels_get) are the frames of the folded text, field for field.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "framelabel.h"
#include "stackagg.h"

#define JIT 0x7f0000001000ull
#define LIB 0x400000ull

static int fake_native(void *ctx, uint32_t pid, uint64_t addr, bool ret, struct stackagg_nsym *out)
{
	(void)ctx;
	(void)pid;
	(void)ret;
	if (addr >= JIT) {
		out->jit_candidate = true;
		return 0;
	}
	out->module = "libx.so";
	out->name = "native;with\tbytes";
	return 0;
}

static int fake_jit(void *ctx, uint32_t pid, uint64_t addr, uint64_t ts, bool ret, bool no_inline,
		    const char **names, size_t max, enum stackagg_jit_kind *kind, uint16_t *lines)
{
	(void)ctx;
	(void)pid;
	(void)addr;
	(void)ts;
	(void)ret;
	(void)no_inline;
	(void)max;
	(void)lines;
	names[0] = "Lcom/x/A;::run";
	*kind = STACKAGG_JIT_COMPILED;
	return 1;
}

static void test_format_replaces_separator_and_control_bytes(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(framelabel_format("a;b\nc\x7f", "_[j]", out, sizeof(out)), 10);
	assert_string_equal(out, "a:b?c?_[j]");
	assert_int_equal(framelabel_format("plain", "", out, sizeof(out)), 5);
	assert_string_equal(out, "plain");
	/* Cut like snprintf: the uncut length is returned. */
	assert_int_equal(framelabel_format("abcdef", "_[k]", out, 4), 10);
	assert_string_equal(out, "abc");
}

/* Every label of a's frames appears in a's folded text, and the text has no other frames. */
static void test_labels_are_the_folded_frames(void **state)
{
	struct stackagg_resolver r = { .native = fake_native, .jit = fake_jit };
	struct stackagg_opts o = { .retry_misses = false };
	struct stackagg *a = stackagg_new(&o, &r);
	uint64_t user[] = { JIT + 0x10, LIB + 0x20 };
	struct stackagg_sample s = {
		.pid = 100, .tid = 101, .ts = 5, .user = user, .nr_user = 2, .thread = "th;r"
	};
	struct stackagg_labels *fl;
	char *buf = NULL, *line, want[256] = "";
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_non_null(a);
	assert_int_equal(stackagg_sample(a, &s), 0);
	stackagg_settle(a, UINT64_MAX);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(stackagg_write_folded(a, f), 0);
	fclose(f);

	fl = stackagg_labels_new(a);
	assert_non_null(fl);
	assert_int_equal(stackagg_frame_count(a), 3);
	/* root first: thread, native caller, JIT leaf */
	for (uint32_t id = 0; id < 3; id++) {
		const char *lab = stackagg_labels_get(fl, id);

		assert_non_null(lab);
		assert_null(strpbrk(lab, ";\t\n"));
	}
	line = strtok(buf, "\n");
	assert_non_null(line);
	snprintf(want, sizeof(want), "%s;%s;%s 1", "th:r", "native:with?bytes",
		 "Lcom/x/A:::run_[j]");
	assert_string_equal(line, want);
	/* the same text from the labels */
	for (uint32_t id = 0; id < 3; id++)
		assert_non_null(strstr(line, stackagg_labels_get(fl, id)));
	assert_null(stackagg_labels_get(fl, 3));
	stackagg_labels_free(fl);
	stackagg_labels_free(NULL);
	free(buf);
	stackagg_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_replaces_separator_and_control_bytes),
		cmocka_unit_test(test_labels_are_the_folded_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
