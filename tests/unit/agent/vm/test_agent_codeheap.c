// SPDX-License-Identifier: MIT
/*
 * test_agent_codeheap.c - CODE_FRAME facts from a fake code cache in memory, laid out as JDK 8
 * (one CodeCache::_heap, offsets from the blob, nmethod::_deoptimize_offset), JDK 11
 * (GenericGrowableArray), JDK 17 (absolute code pointers, CompiledMethod deopt pointers, no
 * kind), JDK 25 (offsets from the blob, int16 frame-complete, CodeBlobKind) and JDK 26 (one
 * deopt handler entry) describe it: the
 * blob is found through the segment map from any address inside it, free segments and wild pointers
 * are refused, never read.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <string.h>

#include <cmocka.h>

#include "codeheap.h"
#include "fake_vmstructs.h"
#include "selfmem.h"
#include "vmstructs.h"

#define SEG_LOG2 6 /* 64-byte segments */
#define NSEG 64

/* The fake JVM: one heap of NSEG segments holding a blob in segments 4..11. */
static struct {
	struct fake_vm vm;
	/* CodeCache::_heaps -> GrowableArray { int len, int max, CodeHeap **data } */
	void *heaps;
	void *one_heap; /* JDK 8's CodeCache::_heap -> the CodeHeap */
	struct {
		int32_t len, max;
		void **data;
	} ga;
	void *heap_ptrs[1];
	/* CodeHeap: _memory VirtualSpace at 0 (low at +16, high at +24), _segmap at 64 (low at
	 * +16), _log2_segment_size at 128 */
	uint8_t heap[160];
	uint8_t segmap[NSEG];
	_Alignas(64) uint8_t mem[NSEG << SEG_LOG2];
} J;

static void add_f(const char *type, const char *field, const char *ts, uint64_t off)
{
	fake_vm_field(&J.vm, type, field, ts, off);
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

#define BLOB_SEG 4
#define BLOB_SEGS 8
#define HB_SIZE 16

static uint8_t *blob(void)
{
	return J.mem + (BLOB_SEG << SEG_LOG2) + HB_SIZE;
}

/* How the JVM lists its code heaps. */
enum heaps_style {
	HEAPS_ARRAY,	     /* JDK 16+: CodeCache::_heaps, GrowableArrayBase */
	HEAPS_GENERIC_ARRAY, /* JDK 9 to 15: CodeCache::_heaps, GenericGrowableArray */
	HEAP_ONE,	     /* JDK 8: CodeCache::_heap */
};

/* The heap, segment map and one used block; the blob's fields are set per JDK below. */
static void fake_heap_as(enum heaps_style style)
{
	memset(&J, 0, sizeof(J));
	J.one_heap = J.heap;
	J.heap_ptrs[0] = J.heap;
	J.ga.len = 1;
	J.ga.max = 1;
	J.ga.data = J.heap_ptrs;
	J.heaps = &J.ga;
	put64(J.heap + 16, (uint64_t)(uintptr_t)J.mem);
	put64(J.heap + 24, (uint64_t)(uintptr_t)(J.mem + sizeof(J.mem)));
	put64(J.heap + 64 + 16, (uint64_t)(uintptr_t)J.segmap);
	put32(J.heap + 128, SEG_LOG2);
	memset(J.segmap, 0xff, sizeof(J.segmap));
	for (int i = 0; i < BLOB_SEGS; i++)
		J.segmap[BLOB_SEG + i] = (uint8_t)(i < 3 ? i : 1 + i % 2); /* hops of 1 and 2 */
	J.mem[(BLOB_SEG << SEG_LOG2) + 8] = 1; /* HeapBlock::Header::_used */

	if (style == HEAP_ONE) {
		fake_vm_static(&J.vm, "CodeCache", "_heap", "CodeHeap*", &J.one_heap);
	} else {
		fake_vm_static(&J.vm, "CodeCache", "_heaps", "GrowableArray<CodeHeap*>*", &J.heaps);
		add_f(style == HEAPS_ARRAY ? "GrowableArrayBase" : "GenericGrowableArray", "_len",
		      "int", 0);
		add_f("GrowableArray<int>", "_data", "int*", 8);
	}
	add_f("CodeHeap", "_memory", "VirtualSpace", 0);
	add_f("CodeHeap", "_segmap", "VirtualSpace", 64);
	add_f("CodeHeap", "_log2_segment_size", "int", 128);
	add_f("VirtualSpace", "_low", "char*", 16);
	add_f("VirtualSpace", "_high", "char*", 24);
	add_f("HeapBlock::Header", "_used", "bool", 8);
	fake_vm_type(&J.vm, "HeapBlock", HB_SIZE);
}

static void fake_heap(void)
{
	fake_heap_as(HEAPS_ARRAY);
}

static uint64_t code_at(unsigned off)
{
	return (uint64_t)(uintptr_t)(blob() + 128 + off);
}

/* JDK 17: CodeBlob 104 bytes, code [blob + 128, + 256), deopt handler at code + 200. */
static void fake_jdk17(void)
{
	fake_heap();
	add_f("CodeBlob", "_name", "const char*", 96);
	add_f("CodeBlob", "_frame_complete_offset", "int", 20);
	add_f("CodeBlob", "_frame_size", "int", 28);
	add_f("CodeBlob", "_code_begin", "address", 32);
	add_f("CodeBlob", "_code_end", "address", 40);
	add_f("CompiledMethod", "_deopt_handler_begin", "address", 128 - 16);
	add_f("CompiledMethod", "_deopt_mh_handler_begin", "address", 128 - 8);
	add_f("nmethod", "_orig_pc_offset", "int", 48);
	put32(blob() + 20, 40);
	put32(blob() + 28, 6); /* words */
	put64(blob() + 32, code_at(0));
	put64(blob() + 40, code_at(256));
	put64(blob() + 112, code_at(200));
	put64(blob() + 120, 0);
	put32(blob() + 48, 16);
	put64(blob() + 96, (uint64_t)(uintptr_t) "DeoptimizationBlob");
}

/* JDK 8: one heap; code and deopt handlers at offsets from the blob, under JDK 8's names. */
static void fake_jdk8(void)
{
	fake_heap_as(HEAP_ONE);
	add_f("CodeBlob", "_name", "const char*", 8);
	add_f("CodeBlob", "_code_offset", "int", 32);
	add_f("CodeBlob", "_frame_complete_offset", "int", 36);
	add_f("CodeBlob", "_data_offset", "int", 40);
	add_f("CodeBlob", "_frame_size", "int", 44);
	add_f("nmethod", "_deoptimize_offset", "int", 88);
	add_f("nmethod", "_deoptimize_mh_offset", "int", 92);
	add_f("nmethod", "_orig_pc_offset", "int", 96);
	put32(blob() + 32, 128);
	put32(blob() + 40, 128 + 256);
	put32(blob() + 36, 14);
	put32(blob() + 44, 2);
	put32(blob() + 88, 128 + 200);
	put32(blob() + 92, 128 + 210);
	put32(blob() + 96, 8);
	put64(blob() + 8, (uint64_t)(uintptr_t) "UncommonTrapBlob");
}

/* JDK 25: offsets from the blob, int16 frame complete, a kind byte. */
static void fake_jdk25(void)
{
	fake_heap();
	add_f("CodeBlob", "_name", "const char*", 8);
	add_f("CodeBlob", "_code_offset", "int", 36);
	add_f("CodeBlob", "_data_offset", "int", 40);
	add_f("CodeBlob", "_frame_size", "int", 44);
	add_f("CodeBlob", "_frame_complete_offset", "int16_t", 54);
	add_f("CodeBlob", "_kind", "CodeBlobKind", 56);
	add_f("nmethod", "_deopt_handler_offset", "int", 64);
	add_f("nmethod", "_deopt_mh_handler_offset", "int", 68);
	add_f("nmethod", "_orig_pc_offset", "int", 72);
	fake_vm_int(&J.vm, "CodeBlobKind::Nmethod", 1);
	fake_vm_int(&J.vm, "CodeBlobKind::RuntimeStub", 6);
	put32(blob() + 36, 128);
	put32(blob() + 40, 128 + 256);
	put32(blob() + 44, 4);
	int16_t fc = 27;
	memcpy(blob() + 54, &fc, 2);
	blob()[56] = 1;
	put32(blob() + 64, 128 + 220);
	put32(blob() + 68, 128 + 230);
	put32(blob() + 72, 8);
}

/* JDK 26: JDK 25's layout with one deopt handler entry and no method-handle handler. */
static void fake_jdk26(void)
{
	fake_heap();
	add_f("CodeBlob", "_name", "const char*", 8);
	add_f("CodeBlob", "_code_offset", "int", 36);
	add_f("CodeBlob", "_data_offset", "int", 40);
	add_f("CodeBlob", "_frame_size", "int", 44);
	add_f("CodeBlob", "_frame_complete_offset", "int16_t", 54);
	add_f("CodeBlob", "_kind", "CodeBlobKind", 56);
	add_f("nmethod", "_deopt_handler_entry_offset", "int", 64);
	add_f("nmethod", "_orig_pc_offset", "int", 72);
	fake_vm_int(&J.vm, "CodeBlobKind::Nmethod", 1);
	put32(blob() + 36, 128);
	put32(blob() + 40, 128 + 256);
	put32(blob() + 44, 4);
	int16_t fc = 27;
	memcpy(blob() + 54, &fc, 2);
	blob()[56] = 1;
	put32(blob() + 64, 128 + 220);
	put32(blob() + 68, 128 + 230); /* not a field on 26: never read */
	put32(blob() + 72, 8);
}

static void vs_of(struct vmstructs *vs)
{
	fake_vm_tables(&J.vm, vs);
}

static void test_jdk17_nmethod_facts_come_from_its_blob(void **state)
{
	struct vmstructs vs;
	struct codeheap h;
	struct fgp_code_frame f;

	(void)state;
	fake_jdk17();
	vs_of(&vs);
	codeheap_build(&vs, &h);
	assert_true(h.ok);
	assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), 0);
	assert_int_equal(f.kind, FGP_CF_NMETHOD);
	assert_int_equal(f.frame_size, 48);
	assert_int_equal(f.code_begin, code_at(0));
	assert_int_equal(f.code_size, 256);
	assert_int_equal(f.frame_complete, 40);
	assert_int_equal(f.deopt, code_at(200));
	assert_int_equal(f.deopt_mh, 0);
	assert_int_equal(f.orig_pc_offset, 16);
	/* a compiled method must start where JVMTI said */
	assert_int_equal(codeheap_frame(&h, code_at(8), true, &f), -EBADMSG);
	/* a stub inside the same blob is found from any address, named by the blob's name */
	assert_int_equal(codeheap_frame(&h, code_at(250), false, &f), 0);
	assert_int_equal(f.kind, FGP_CF_DEOPTIMIZATION);
	assert_int_equal(f.deopt, 0);
	assert_int_equal(f.addr, code_at(250));
}

static void test_jdk25_offsets_and_kinds(void **state)
{
	struct vmstructs vs;
	struct codeheap h;
	struct fgp_code_frame f;

	(void)state;
	fake_jdk25();
	vs_of(&vs);
	codeheap_build(&vs, &h);
	assert_true(h.ok);
	assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), 0);
	assert_int_equal(f.kind, FGP_CF_NMETHOD);
	assert_int_equal(f.frame_size, 32);
	assert_int_equal(f.code_size, 256);
	assert_int_equal(f.frame_complete, 27);
	assert_int_equal(f.deopt, code_at(220));
	assert_int_equal(f.deopt_mh, code_at(230));
	assert_int_equal(f.orig_pc_offset, 8);
	blob()[56] = 6;
	assert_int_equal(codeheap_frame(&h, code_at(100), false, &f), 0);
	assert_int_equal(f.kind, FGP_CF_RUNTIME_STUB);
	/* an orig pc slot outside the frame: unwound without deopt rules, not refused */
	put32(blob() + 72, 64);
	assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), 0);
	assert_int_equal(f.deopt, 0);
	assert_int_equal(f.deopt_mh, 0);
}

static void test_jdk8_one_heap_and_its_deopt_offsets(void **state)
{
	struct vmstructs vs;
	struct codeheap h;
	struct fgp_code_frame f;

	(void)state;
	fake_jdk8();
	vs_of(&vs);
	codeheap_build(&vs, &h);
	assert_true(h.ok);
	assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), 0);
	assert_int_equal(f.kind, FGP_CF_NMETHOD);
	assert_int_equal(f.frame_size, 16);
	assert_int_equal(f.code_begin, code_at(0));
	assert_int_equal(f.code_size, 256);
	assert_int_equal(f.frame_complete, 14);
	assert_int_equal(f.deopt, code_at(200));
	assert_int_equal(f.deopt_mh, code_at(210));
	assert_int_equal(f.orig_pc_offset, 8);
	/* a stub in the same heap, known by its blob's name */
	assert_int_equal(codeheap_frame(&h, code_at(100), false, &f), 0);
	assert_int_equal(f.kind, FGP_CF_UNCOMMON_TRAP);
	/* the heap pointer is read from the JVM, not assumed */
	J.one_heap = NULL;
	codeheap_build(&vs, &h);
	assert_true(h.ok);
	assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), -EFAULT);
}

static void test_jdk11_generic_growable_array(void **state)
{
	struct vmstructs vs;
	struct codeheap h;
	struct fgp_code_frame f;

	(void)state;
	fake_jdk17();
	J.vm.s[1].type = "GenericGrowableArray"; /* its name up to JDK 15 */
	vs_of(&vs);
	codeheap_build(&vs, &h);
	assert_true(h.ok);
	assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), 0);
	assert_int_equal(f.frame_size, 48);
	assert_int_equal(f.deopt, code_at(200));
	/* neither name: not usable */
	J.vm.s[1].type = "GrowableArrayBaseRenamed";
	vs_of(&vs);
	codeheap_build(&vs, &h);
	assert_false(h.ok);
}

static void test_jdk26_deopt_handler_entry_without_mh_handler(void **state)
{
	struct vmstructs vs;
	struct codeheap h;
	struct fgp_code_frame f;

	(void)state;
	fake_jdk26();
	vs_of(&vs);
	codeheap_build(&vs, &h);
	assert_true(h.ok);
	assert_true(h.has_deopt);
	assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), 0);
	assert_int_equal(f.deopt, code_at(220));
	assert_int_equal(f.deopt_mh, 0);
	assert_int_equal(f.orig_pc_offset, 8);
}

static void test_free_segments_and_wild_pointers_are_refused(void **state)
{
	struct vmstructs vs;
	struct codeheap h;
	struct fgp_code_frame f;

	(void)state;
	fake_jdk25();
	vs_of(&vs);
	codeheap_build(&vs, &h);
	/* outside the heap, in a free segment, in an unused block */
	assert_int_equal(codeheap_frame(&h, (uint64_t)(uintptr_t)J.mem - 64, false, &f), -ENOENT);
	assert_int_equal(codeheap_frame(&h, (uint64_t)(uintptr_t)J.mem + 40 * 64, false, &f),
			 -ENOENT);
	J.segmap[BLOB_SEG + 2] = 9; /* a hop past the heap's start */
	assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), -ENOENT);
	J.segmap[BLOB_SEG + 2] = 2;
	J.mem[(BLOB_SEG << SEG_LOG2) + 8] = 0;
	assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), -ENOENT);
	J.mem[(BLOB_SEG << SEG_LOG2) + 8] = 1;
	assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), 0);
	/* a segment map pointer into nowhere (read by a fresh agent): -EFAULT, no crash */
	put64(J.heap + 64 + 16, 0x10);
	codeheap_build(&vs, &h);
	assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), -EFAULT);
	/* a heap list pointer into nowhere */
	put64(J.heap + 64 + 16, (uint64_t)(uintptr_t)J.segmap);
	J.ga.data = (void **)0x10;
	codeheap_build(&vs, &h);
	assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), -EFAULT);
	J.ga.data = J.heap_ptrs;
	/* a code range that runs backwards */
	put32(blob() + 40, 64);
	assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), -EBADMSG);
}

static void test_heaps_are_read_once_until_an_address_lies_past_them(void **state)
{
	struct vmstructs vs;
	struct codeheap h;
	struct fgp_code_frame f;

	(void)state;
	fake_jdk25();
	/* the heap committed up to the blob's end only: _high grows later */
	put64(J.heap + 24, (uint64_t)(uintptr_t)(J.mem + ((BLOB_SEG + BLOB_SEGS) << SEG_LOG2)));
	vs_of(&vs);
	codeheap_build(&vs, &h);
	for (int i = 0; i < 10; i++)
		assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), 0);
	assert_int_equal(h.heap_reads, 1);
	/* a second blob in newly committed segments 20..23 */
	J.segmap[20] = 0;
	J.segmap[21] = 1;
	J.segmap[22] = 2;
	J.segmap[23] = 1;
	memcpy(J.mem + (20 << SEG_LOG2), J.mem + (BLOB_SEG << SEG_LOG2), 128 + HB_SIZE);
	put32(J.mem + (20 << SEG_LOG2) + HB_SIZE + 40, 200);
	put64(J.heap + 24, (uint64_t)(uintptr_t)(J.mem + sizeof(J.mem)));
	/* an address in segment 22, inside the new blob's code */
	assert_int_equal(
		codeheap_frame(&h, (uint64_t)(uintptr_t)J.mem + (22 << SEG_LOG2) + 40, false, &f),
		0);
	assert_int_equal(f.code_begin,
			 (uint64_t)(uintptr_t)J.mem + (20 << SEG_LOG2) + HB_SIZE + 128);
	assert_int_equal(f.code_size, 72);
	assert_int_equal(h.heap_reads, 2);
	assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), 0);
	assert_int_equal(h.heap_reads, 2);
	/* A JVM that exports the reserved end: the heaps are read once, however far the
	 * committed end grows. */
	add_f("VirtualSpace", "_high_boundary", "char*", 32);
	put64(J.heap + 32, (uint64_t)(uintptr_t)(J.mem + sizeof(J.mem)));
	put64(J.heap + 24, (uint64_t)(uintptr_t)(J.mem + ((BLOB_SEG + BLOB_SEGS) << SEG_LOG2)));
	vs_of(&vs);
	codeheap_build(&vs, &h);
	assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), 0);
	put64(J.heap + 24, (uint64_t)(uintptr_t)(J.mem + sizeof(J.mem)));
	assert_int_equal(
		codeheap_frame(&h, (uint64_t)(uintptr_t)J.mem + (22 << SEG_LOG2) + 40, false, &f),
		0);
	assert_int_equal(f.code_size, 72);
	assert_int_equal(h.heap_reads, 1);
	/* and an address in the reserved part not yet in use is refused, not read wildly */
	assert_int_equal(
		codeheap_frame(&h, (uint64_t)(uintptr_t)J.mem + (40 << SEG_LOG2), false, &f),
		-ENOENT);
}

static uint64_t piped_reads(void)
{
	uint64_t p, v;

	selfmem_counts(&p, &v);
	return p + v;
}

static void test_a_compiled_method_costs_one_read_a_deep_stub_address_two(void **state)
{
	struct vmstructs vs;
	struct codeheap h;
	struct fgp_code_frame f;
	uint64_t n0, deep;

	(void)state;
	fake_jdk17();
	vs_of(&vs);
	codeheap_build(&vs, &h);
	assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), 0); /* reads the heaps */
	atomic_store(&h.trusted, false); /* the reads before the layout has proven itself */
	n0 = piped_reads();
	assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), 0);
	assert_int_equal(piped_reads() - n0, 1);
	assert_int_equal(f.frame_size, 48);
	assert_int_equal(f.deopt, code_at(200));
	/* A blob in segments 24..63 whose code runs from its header to the heap's end: an address
	 * CODEHEAP_BEHIND + 200 bytes past the block's start needs its own header read. */
	memset(J.segmap + 24, 1, NSEG - 24);
	J.segmap[24] = 0;
	memcpy(J.mem + (24 << SEG_LOG2), J.mem + (BLOB_SEG << SEG_LOG2), 128 + HB_SIZE);
	put64(J.mem + (24 << SEG_LOG2) + HB_SIZE + 32,
	      (uint64_t)(uintptr_t)J.mem + (24 << SEG_LOG2) + HB_SIZE + 128);
	put64(J.mem + (24 << SEG_LOG2) + HB_SIZE + 40, (uint64_t)(uintptr_t)J.mem + sizeof(J.mem));
	deep = (uint64_t)(uintptr_t)J.mem + (24 << SEG_LOG2) + CODEHEAP_BEHIND + 200;
	atomic_store(&h.trusted, false);
	n0 = piped_reads();
	assert_int_equal(codeheap_frame(&h, deep, false, &f), 0);
	assert_true(piped_reads() - n0 >= 2);
	assert_int_equal(f.code_begin,
			 (uint64_t)(uintptr_t)J.mem + (24 << SEG_LOG2) + HB_SIZE + 128);
	assert_int_equal(f.kind, FGP_CF_DEOPTIMIZATION);
	/* the same blob's start, a compiled method's way: one read again */
	atomic_store(&h.trusted, false);
	n0 = piped_reads();
	assert_int_equal(codeheap_frame(&h, f.code_begin, true, &f), 0);
	assert_int_equal(piped_reads() - n0, 1);
}

/*
 * Trust is earned by a compiled method found where JVMTI announced it through reads that cannot
 * fault: from then on a frame read copies the heap below the announced address and the segment
 * map up to its segment, and reads nothing else without selfmem.
 */
static void test_a_proven_layout_reads_below_the_address_without_a_round_trip(void **state)
{
	struct vmstructs vs;
	struct codeheap h;
	struct fgp_code_frame f;
	uint64_t n0, deep;

	(void)state;
	fake_jdk17();
	vs_of(&vs);
	codeheap_build(&vs, &h);
	assert_false(atomic_load(&h.trusted));
	/* a stub found proves nothing about the layout */
	assert_int_equal(codeheap_frame(&h, code_at(250), false, &f), 0);
	assert_false(atomic_load(&h.trusted));
	/* nor does a compiled method that is not where JVMTI said */
	assert_int_equal(codeheap_frame(&h, code_at(8), true, &f), -EBADMSG);
	assert_false(atomic_load(&h.trusted));
	n0 = piped_reads();
	assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), 0);
	assert_int_equal(piped_reads() - n0, 1);
	assert_true(atomic_load(&h.trusted));
	/* proven: the same facts, no round trip */
	n0 = piped_reads();
	for (int i = 0; i < 5; i++) {
		memset(&f, 0, sizeof(f));
		assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), 0);
		assert_int_equal(f.frame_size, 48);
		assert_int_equal(f.deopt, code_at(200));
		assert_int_equal(f.code_begin, code_at(0));
	}
	assert_int_equal(piped_reads() - n0, 0);
	/* a stub: its blob copied, only its name (in libjvm, not in the heap) read through selfmem
	 */
	n0 = piped_reads();
	assert_int_equal(codeheap_frame(&h, code_at(250), false, &f), 0);
	assert_int_equal(f.code_begin, code_at(0));
	assert_int_equal(f.kind, FGP_CF_DEOPTIMIZATION);
	assert_int_equal(piped_reads() - n0, 1);
	/* a stub announced deep inside its blob: its segment map hops and its header, copied */
	memset(J.segmap + 24, 1, NSEG - 24);
	J.segmap[24] = 0;
	memcpy(J.mem + (24 << SEG_LOG2), J.mem + (BLOB_SEG << SEG_LOG2), 128 + HB_SIZE);
	put64(J.mem + (24 << SEG_LOG2) + HB_SIZE + 32,
	      (uint64_t)(uintptr_t)J.mem + (24 << SEG_LOG2) + HB_SIZE + 128);
	put64(J.mem + (24 << SEG_LOG2) + HB_SIZE + 40, (uint64_t)(uintptr_t)J.mem + sizeof(J.mem));
	deep = (uint64_t)(uintptr_t)J.mem + (24 << SEG_LOG2) + CODEHEAP_BEHIND + 200;
	n0 = piped_reads();
	assert_int_equal(codeheap_frame(&h, deep, false, &f), 0);
	assert_int_equal(f.code_begin,
			 (uint64_t)(uintptr_t)J.mem + (24 << SEG_LOG2) + HB_SIZE + 128);
	assert_int_equal(piped_reads() - n0, 1); /* its name */
	/* a fresh layout earns it again */
	codeheap_build(&vs, &h);
	assert_false(atomic_load(&h.trusted));
}

static void test_a_field_past_the_first_read_is_read_alone(void **state)
{
	struct vmstructs vs;
	struct codeheap h;
	struct fgp_code_frame f;
	uint64_t n0;

	(void)state;
	fake_jdk25();
	/* _orig_pc_offset 700 bytes into the blob, past the 512 read at once */
	J.vm.s[J.vm.ns - 1].offset = 700;
	put32(blob() + 700, 24);
	vs_of(&vs);
	codeheap_build(&vs, &h);
	assert_true(h.hdr_len > 700);
	assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), 0);
	assert_int_equal(f.orig_pc_offset, 24);
	assert_int_equal(f.deopt, code_at(220));
	/* with the layout proven, a field past the announced address is still read, alone */
	assert_true(atomic_load(&h.trusted));
	n0 = piped_reads();
	memset(&f, 0, sizeof(f));
	assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), 0);
	assert_int_equal(f.orig_pc_offset, 24);
	assert_int_equal(piped_reads() - n0, 1);
}

static void test_a_layout_without_the_heap_fields_is_not_usable(void **state)
{
	struct vmstructs vs;
	struct codeheap h;
	struct fgp_code_frame f;

	(void)state;
	fake_jdk25();
	J.vm.s[0].field = "_heaps_renamed";
	vs_of(&vs);
	codeheap_build(&vs, &h);
	assert_false(h.ok);
	assert_int_equal(codeheap_frame(&h, code_at(0), true, &f), -ENOTSUP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jdk17_nmethod_facts_come_from_its_blob),
		cmocka_unit_test(test_jdk25_offsets_and_kinds),
		cmocka_unit_test(test_jdk8_one_heap_and_its_deopt_offsets),
		cmocka_unit_test(test_jdk11_generic_growable_array),
		cmocka_unit_test(test_a_proven_layout_reads_below_the_address_without_a_round_trip),
		cmocka_unit_test(test_jdk26_deopt_handler_entry_without_mh_handler),
		cmocka_unit_test(test_free_segments_and_wild_pointers_are_refused),
		cmocka_unit_test(test_a_layout_without_the_heap_fields_is_not_usable),
		cmocka_unit_test(test_heaps_are_read_once_until_an_address_lies_past_them),
		cmocka_unit_test(test_a_field_past_the_first_read_is_read_alone),
		cmocka_unit_test(test_a_compiled_method_costs_one_read_a_deep_stub_address_two),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
