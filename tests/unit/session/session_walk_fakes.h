/* SPDX-License-Identifier: MIT */
/*
 * session_walk_fakes.h - for the tests that walk stacks through a session (the JVM is the test
 * process): code the JVM runs before announcing it, a method's frame facts, and the folded
 * profile read back. Included after session_fakes.h.
 */
#ifndef FG_SESSION_WALK_FAKES_H
#define FG_SESSION_WALK_FAKES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "stackagg.h"

/* A page of executable anonymous memory: code a JVM runs before it announces it. */
static __attribute__((unused)) uint64_t late_code(void)
{
	static void *p;

	if (!p)
		p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	return (uint64_t)(uintptr_t)p;
}

/* The frame facts (CODE_FRAME) of the method at addr: its frame is frame_size bytes. */
static __attribute__((unused)) void add_facts(uint64_t addr, uint32_t frame_size)
{
	struct fgp_record rec = { .type = FGP_CODE_FRAME, .size = FGP_CODE_FRAME_SIZE };

	rec.u.frame = (struct fgp_code_frame){ .addr = addr,
					       .kind = FGP_CF_NMETHOD,
					       .frame_size = frame_size,
					       .code_begin = addr,
					       .code_size = 0x100,
					       .frame_complete = 0x8 };
	assert_int_equal(codetab_apply(src->tab, &rec), 0);
}

static __attribute__((unused)) char *folded(struct session *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(stackagg_write_folded(session_agg(s), f), 0);
	fclose(f);
	return buf;
}

/* The weight of every folded line of text that contains part. */
static __attribute__((unused)) uint64_t weight_with(const char *text, const char *part)
{
	uint64_t sum = 0;

	for (const char *l = text; l && *l;) {
		const char *e = strchr(l, '\n'), *sp;
		size_t len = e ? (size_t)(e - l) : strlen(l);
		char line[512];

		snprintf(line, sizeof(line), "%.*s", (int)len, l);
		sp = strrchr(line, ' ');
		if (sp && strstr(line, part))
			sum += strtoull(sp + 1, NULL, 10);
		l = e ? e + 1 : NULL;
	}
	return sum;
}

#endif
