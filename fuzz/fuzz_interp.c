// SPDX-License-Identifier: MIT
/*
 * fuzz_interp.c - libFuzzer target: the interpreted-frame namer (collector/symbolize/interp*.c)
 * against a hostile JVM (fuzz_vm.h): the layout's offsets, every Method* -> ConstMethod ->
 * ConstantPool -> Klass -> Symbol chain, the line tables, the GC clock and the unloaded-class
 * count are the fuzzer's. A sample's frames are named, memory changes (a byte of the image),
 * they are named again from the cache (batch revalidation, GC-clock and epoch trust), then one
 * by one with lines; every name returned must be a believable one.
 *
 * Input after the layout: mode byte, request count, per request (Method*, two bcps, nbcp),
 * the byte to change and its new value.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_vm.h"
#include "interp.h"

#define MAX_REQ 8

static void check(const struct interp_req *r, size_t n)
{
	static int verbose = -1;

	if (verbose < 0)
		verbose = getenv("FG_FUZZ_VERBOSE") != NULL;
	for (size_t i = 0; i < n; i++) {
		if (verbose)
			fprintf(stderr, "req %zu: %d %s:%d\n", i, r[i].rv, r[i].rv ? "" : r[i].name,
				r[i].rv ? 0 : r[i].line);
		if (r[i].rv != 0)
			continue;
		if (!r[i].name ||
		    strlen(r[i].name) > INTERP_MAX_CLASS_NAME + INTERP_MAX_METHOD_NAME + 2 ||
		    r[i].line < -1)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *mem = malloc(size ? size : 1);
	struct fvm m = { mem, size };
	struct vmmem_ops ops = { fvm_readv, &m };
	struct fz f = { data, size, 0 };
	struct fgp_vm_layout lay;
	struct interp_layout l;
	struct interp_req reqs[MAX_REQ];
	struct interp_namer *n;
	struct interp_stats st;
	const char *why, *name;
	uint64_t start, end, addr = 0, epoch = 0;
	uint8_t mode;
	size_t nreq, pos;
	int line;

	if (!mem)
		return 0;
	memcpy(mem, data, size);
	fvm_layout(&f, &lay);
	mode = fz_u8(&f);
	nreq = fz_u8(&f) % MAX_REQ + 1;
	memset(reqs, 0, sizeof(reqs));
	for (size_t i = 0; i < nreq; i++) {
		reqs[i].method = fvm_addr(&f);
		reqs[i].bcps[0] = fvm_addr(&f);
		reqs[i].bcps[1] = fvm_addr(&f);
		reqs[i].nbcp = fz_u8(&f) % 3;
	}
	pos = fz_u16(&f);
	if (interp_layout_init(&lay, &l, &why) != 0 || !(n = interp_namer_new(&ops))) {
		free(mem);
		return 0;
	}
	interp_begin_sample(n);
	interp_name_many(n, FV_PID, &l, reqs, nreq, mode & 1, UINT64_MAX, 1000);
	check(reqs, nreq);
	/* The target runs on: a byte of its memory changes (reuse, a moved pointer). */
	if (size)
		mem[pos % size] ^= fz_u8(&f) | 1;
	interp_begin_sample(n);
	interp_name_many(n, FV_PID, &l, reqs, nreq, mode & 2, mode & 4 ? 0 : UINT64_MAX, 2000);
	check(reqs, nreq);
	if (interp_unload_count(n, FV_PID, &l, &addr, &epoch) == 0) {
		interp_begin_sample(n);
		interp_name_many_epoch(n, FV_PID, &l, reqs, nreq, mode & 8, epoch, 3000);
		check(reqs, nreq);
		(void)interp_epoch_settle(n, FV_PID, reqs, nreq, mode & 16);
		check(reqs, nreq);
	}
	(void)interp_gc_clock(n, FV_PID, &l, &start, &end);
	interp_begin_sample(n);
	for (size_t i = 0; i < nreq; i++)
		if (interp_name(n, FV_PID, &l, reqs[i].method, reqs[i].bcps, reqs[i].nbcp, true,
				&name, &line) == 0 &&
		    (!name || line < -1))
			abort();
	/* Another process's memory is never read. */
	if (interp_name(n, FV_PID + 1, &l, reqs[0].method, reqs[0].bcps, 2, true, &name, &line) ==
	    0)
		abort();
	if (size > pos % (size + 1))
		(void)interp_line_of(mem + pos % (size + 1), size - pos % (size + 1),
				     l.lines_excluded, (uint32_t)reqs[0].bcps[0] & 0xffff, &line);
	interp_stats(n, &st);
	interp_forget(n, FV_PID);
	interp_namer_free(n);
	free(mem);
	return 0;
}
