/* SPDX-License-Identifier: MIT */
/*
 * codeheap.h - the frame facts of HotSpot code blobs (the CODE_FRAME record, shared/fgproto.h),
 * read in the agent's own process through VMStructs.
 *
 * A code address is mapped to its CodeBlob the way the JVM's CodeHeap::find_blob does: the
 * CodeHeap whose reserved memory holds it (CodeCache::_heaps, or JDK 8's one CodeCache::_heap),
 * its segment map (one byte per
 * segment: 0 at a block's first segment, else a hop back towards it, 0xff for free), the
 * HeapBlock header at that segment, and the CodeBlob right after it. JVMTI's compile info
 * gives no nmethod pointer, and a blob found this way is checked against the address JVMTI
 * gave (code_begin equal for a compiled method, containing it for a stub).
 *
 * Invariant: every read of JVM memory goes through selfmem_read() (a pipe, or process_vm_readv of
 * our own process), so a wrong offset from an unknown JDK yields -EFAULT or a refused record,
 * never a crash; a layout
 * without every field it needs is not usable (codeheap_ok false) and nothing is sent.
 * The one exception is earned (trusted below): once a compiled method has been found exactly
 * where JVMTI announced it, by such reads, the heaps' starts and segment maps are known right,
 * and a frame read copies what HotSpot keeps committed for the JVM's life below the address
 * JVMTI announced: the heap from its start up to that address and the segment map up to its
 * segment. A CodeHeap and its segment map are committed from their low ends up and never
 * uncommitted (CodeHeap has no shrinking), and JVMTI vouches for the announced address during
 * its event. Anything else (past the address, another heap, the heap list) is still read through
 * selfmem. A pipe round trip costs two system calls, several microseconds on a virtualized
 * host: most of a CompiledMethodLoad's cost where every load carries its CODE_FRAME.
 */
#ifndef FG_CODEHEAP_H
#define FG_CODEHEAP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "fgproto.h"
#include "vmstructs.h"

#define CODEHEAP_MAX_HEAPS 16
/*
 * Bytes read before an address together with its segment map window: enough for a compiled
 * method's header (HeapBlock + nmethod), so finding its blob costs one round trip. In a javac
 * storm that was 94% of all blobs on JDK 17 and 98% on JDK 25; the rest are stubs announced at
 * an address deep inside their blob.
 */
#define CODEHEAP_BEHIND 1024

/* One CodeHeap as read from the JVM: memory [lo, hi) (see heaps below), its segment map. */
struct codeheap_ref {
	uint64_t lo, hi, segmap;
	uint32_t log2;
};

struct codeheap {
	bool ok;
	/* address of CodeCache::_heaps (a GrowableArray<CodeHeap*>*), or with one_heap of
	 * CodeCache::_heap (the one CodeHeap* of JDK 8) */
	uint64_t heaps_slot;
	bool one_heap;
	uint32_t ga_len, ga_data;
	uint32_t heap_memory, heap_segmap, heap_log2; /* CodeHeap fields */
	uint32_t vs_low,
		vs_high; /* VirtualSpace::_low, _high_boundary where exported, else _high */
	uint32_t hb_size, hb_used;			     /* sizeof(HeapBlock), Header::_used */
	uint32_t cb_frame_size, cb_frame_complete, fc_width; /* fc_width: 2 or 4 bytes */
	bool code_abs; /* JDK < 23: _code_begin/_code_end pointers, else offsets */
	uint32_t cb_code_begin, cb_code_end;
	bool has_kind; /* JDK 23+: CodeBlob::_kind (u1), mapped with kinds[] */
	uint32_t cb_kind;
	uint8_t kinds[32];
	uint32_t cb_name;
	bool deopt_abs; /* JDK < 23: CompiledMethod::_deopt_handler_begin pointers */
	bool has_deopt;
	bool no_deopt_mh; /* JDK 26+: one handler entry (_deopt_handler_entry_offset), no MH one */
	uint32_t nm_deopt, nm_deopt_mh, nm_orig_pc;
	uint32_t hdr_len; /* bytes from a block's start that hold every field above */
	/*
	 * The heaps, cached: CodeCache::_heaps and each heap's reserved range never change in a
	 * running JVM. A heap's end is its reserved end (_high_boundary): a blob JVMTI announces
	 * lies in committed memory, and a read of memory not yet committed is -EFAULT, never a
	 * fault. A JVM that does not export _high_boundary gives the committed end (_high), which
	 * grows: an address past every cached range reads them again. Taken with trylock: a thread
	 * that finds it busy reads the heaps itself, and no event ever waits for another.
	 */
	pthread_mutex_t lock;
	uint32_t nheaps;
	struct codeheap_ref heaps[CODEHEAP_MAX_HEAPS];
	uint64_t heap_reads; /* times the heaps were read from the JVM (tests, benchmarks) */
	/* A compiled method was found where JVMTI announced it: see the invariant above. */
	atomic_bool trusted;
};

/* Build *out from vs. Never fails: out->ok says whether blobs can be found. */
void codeheap_build(const struct vmstructs *vs, struct codeheap *out);

/*
 * The frame facts of the blob holding addr: for a compiled method (nmethod true) its
 * code_begin must equal addr. 0 with *out (valid by fgp_code_frame_check), -ENOENT no blob
 * holds addr, -EFAULT unreadable memory, -EBADMSG facts that do not check out, -ENOTSUP the
 * layout is not usable.
 */
int codeheap_frame(struct codeheap *h, uint64_t addr, bool nmethod, struct fgp_code_frame *out);

/*
 * codeheap_build() for the JVM this agent runs in: jvm_addr is any address inside libjvm.so.
 * 0, or -ENOENT (no libjvm.so, no tables, or a layout that is not usable).
 */
int codeheap_read(const void *jvm_addr, struct codeheap *out);

#endif
