/* SPDX-License-Identifier: MIT */
/*
 * stackagg.h - from raw perf call chains to counted, symbolized stacks (folded-stack model).
 *
 * A sample (kernel and user call chains, leaf first, plus the thread/process names) becomes a
 * stack of interned frames, root first: [process;] thread; user frames outermost first; kernel
 * frames. Frames have a kind that the folded output shows with FlameGraph's suffixes:
 * `_[j]` compiled Java, `_[i]` inlined Java, `_[0]` interpreted Java (named by the caller, see
 * stackagg_sample.uframes), `_[k]` kernel; stubs/interpreter blobs (DYNAMIC_CODE)
 * and native frames carry no suffix. An unresolved frame is named `[unknown] (<module>)`, or
 * by the label its resolver gives (stackagg_nsym.unresolved).
 *
 * Symbolization is done through the caller's struct stackagg_resolver, so this module knows
 * nothing about ELF, kallsyms or code tables. Kernel and native frames are resolved when the
 * sample is added. A user address that is not file-backed (a JIT candidate) is resolved later,
 * by stackagg_settle(): JIT events can reach the collector after the code ran, so a sample is
 * looked up in the code table by (address, sample time) only once the caller says the table is
 * complete up to that time; stackagg_settle(a, UINT64_MAX) resolves everything with the whole
 * history (end of the recording), including a second lookup of the samples whose JIT address
 * had no blob at their first settle (opts.retry_misses).
 *
 * Invariant: every sample given to stackagg_sample() ends up counted exactly once: in a stack,
 * or in stats.dropped (memory caps), never silently lost.
 *
 * Not thread-safe: one owner thread. Memory is capped (STACKAGG_MAX_*); over a cap samples are
 * counted as dropped.
 */
#ifndef FG_STACKAGG_H
#define FG_STACKAGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define STACKAGG_MAX_FRAMES 4096u	   /* frames of one stack (after inline unfolding) */
#define STACKAGG_MAX_NAME 4096u		   /* bytes of one frame name (longer: truncated) */
#define STACKAGG_MAX_INTERNED (4u << 20)   /* distinct frames */
#define STACKAGG_MAX_STACK_IDS (64u << 20) /* frame ids stored over all distinct stacks */
#define STACKAGG_MAX_PENDING (64u << 20)   /* bytes of samples waiting for stackagg_settle */
#define STACKAGG_MAX_INLINE 64u		   /* names of one inline chain */
#define STACKAGG_MAX_TIMELINE (8u << 20)   /* countings kept with their time (opts.timeline) */

enum stackagg_kind {
	STACKAGG_ROOT = 0,    /* process or thread name */
	STACKAGG_JAVA = 1,    /* JIT-compiled Java method: `_[j]` */
	STACKAGG_INLINED = 2, /* a method inlined into a compiled one: `_[i]` */
	STACKAGG_STUB = 3,    /* interpreter, stubs, adapters (DYNAMIC_CODE blobs) */
	STACKAGG_NATIVE = 4,  /* code from a mapped file */
	STACKAGG_KERNEL = 5,  /* `_[k]` */
	STACKAGG_INTERP = 6,  /* interpreted Java method: `_[0]` (async-profiler's mark) */
};

/* Frame classes of the end-of-run summary. */
enum stackagg_class {
	STACKAGG_CLASS_JAVA = 0, /* JIT region: compiled, inlined, stubs, unresolved anon code */
	STACKAGG_CLASS_NATIVE = 1,
	STACKAGG_CLASS_KERNEL = 2,
	STACKAGG_NCLASS = 3,
};

/* What the native resolver says about a user address. */
struct stackagg_nsym {
	const char *name;   /* symbol (demangled), or NULL when unresolved */
	const char *module; /* basename of the mapped file; NULL for no/anon mapping */
	bool jit_candidate; /* not file-backed: look it up in the process's code table later */
	bool unresolved;    /* name is the unnamed frame's label ("libc.so.6+0x8a9b2") */
};

/* A JIT lookup result: names innermost first (names[n-1] the compiled method itself). */
enum stackagg_jit_kind {
	STACKAGG_JIT_COMPILED = 1,
	STACKAGG_JIT_DYNAMIC = 2,
};

/*
 * The caller's symbolizers. Every string they return is borrowed for the duration of the call
 * only (stackagg copies it). `ret` says the address is a return address (a caller frame), for
 * resolvers that want addr - 1; the leaf of each context is the sampled pc itself.
 */
struct stackagg_resolver {
	void *ctx;
	/* A kernel address: 0 with *name (and *module, "[kernel.kallsyms]" or a module name, may
	 * be NULL) set, or -ENOENT. May be NULL (every kernel frame unresolved). */
	int (*kernel)(void *ctx, uint64_t addr, const char **name, const char **module);
	/* A user address of process pid: fill *out (zeroed by the caller) and return 0, or a
	 * negative errno (treated as unresolved, no module). May be NULL. */
	int (*native)(void *ctx, uint32_t pid, uint64_t addr, bool ret, struct stackagg_nsym *out);
	/* A JIT candidate at time ts: the number of names written (> 0, at most max) and *kind,
	 * 0 when no blob covered addr at ts, -ENOENT when pid has no code table (not a JVM).
	 * May be NULL. no_inline is the stackagg option: return only the compiled method then.
	 * lines is NULL, or (opts.lines) max entries for the source line of each name written,
	 * 0 where none is known (never guessed). */
	int (*jit)(void *ctx, uint32_t pid, uint64_t addr, uint64_t ts, bool ret, bool no_inline,
		   const char **names, size_t max, enum stackagg_jit_kind *kind, uint16_t *lines);
	/* The root of the virtual thread mounted on thread tid of pid at ts (NUL-terminated,
	 * borrowed until the next call), or NULL: none was, the thread keeps its own root. Asked
	 * when a sample given with stackagg_sample.vroot settles. May be NULL (never asked). */
	const char *(*vroot)(void *vctx, uint32_t pid, uint32_t tid, uint64_t ts);
	/* Whether vroot answers for thread tid of pid at ts for good now: until it does, a sample
	 * given with stackagg_sample.vroot waits in stackagg_settle() (and the samples after it,
	 * which settle in arrival order), except at UINT64_MAX and past STACKAGG_MAX_PENDING.
	 * May be NULL (always). */
	bool (*vready)(void *vctx, uint32_t pid, uint32_t tid, uint64_t ts);
	/* A sample of stratum (stackagg_sample.stratum) and weight w was rooted under a virtual
	 * thread by vroot: the stratum it counts in from now on. May be NULL (it keeps its own). */
	uint32_t (*vstratum)(void *vctx, uint32_t stratum, uint64_t w);
	void *vctx;
};

/* The frame before an off-CPU leaf of a thread that waited with a virtual thread mounted. */
#define STACKAGG_PINNED "[pinned]"

struct stackagg_opts {
	bool no_inline; /* keep inlined methods folded into their compiled method */
	bool no_kernel; /* drop kernel frames */
	/*
	 * A sample whose JIT address had no blob when settled waits for the final settle
	 * (UINT64_MAX) and is looked up again with the whole history (a JIT event can arrive
	 * after the code ran, later than the settle delay). Off: it is counted [unknown] at once
	 * (live views).
	 */
	bool retry_misses;
	/* Compiled and inlined frames get ":LINE" from the jit resolver's lines (--lines). */
	bool lines;
	/* No thread root frame (sample.thread ignored): the stacks of all threads merge, as in
	 * async-profiler's default view. The process root frame stays. */
	bool no_thread;
	/* A user stack that stops before its thread's start (stats.rooted counts those that do not)
	 * gets a "[truncated]" frame right below the roots, so that a break shows and is never
	 * read as a thread's outermost method (stats.unrooted_marked). */
	bool mark_unrooted;
	/* Keep every counting with its time, thread and stack (stackagg_timeline): for outputs
	 * that show when each stack ran. Beyond STACKAGG_MAX_TIMELINE: stats.untimed. */
	bool timeline;
};

/*
 * A user frame named by the caller (an interpreted Java method, javaframes.h): name NULL = none,
 * resolve the address as usual. unresolved marks a placeholder such as "[unknown]
 * (interpreted)". Borrowed for the call.
 */
struct stackagg_uframe {
	const char *name;
	bool unresolved;
	/* Not a function but where an unwind stopped (e.g. "[truncated]": the stack goes on
	 * beyond the copy): shown as its own unresolved frame, counted in stats.markers. */
	bool marker;
};

/* One sample as the sampler delivers it; everything is borrowed for the call. */
struct stackagg_sample {
	uint32_t pid, tid;
	uint64_t ts;		/* CLOCK_MONOTONIC ns */
	const uint64_t *kernel; /* leaf first */
	uint32_t nr_kernel;
	const uint64_t *user; /* leaf first */
	uint32_t nr_user;
	const struct stackagg_uframe
		*uframes;    /* NULL, or nr_user entries: STACKAGG_INTERP frames */
	const char *process; /* root frame above the thread, or NULL for none */
	const char *thread;  /* thread name; NULL or "" gives "[tid N]" */
	/* What the sample adds to its stack's count: 0 = 1 (a CPU sample), else a time in the
	 * caller's unit (off-CPU and wall profiles: microseconds). */
	uint64_t weight;
	/* A frame after the kernel frames (kind STACKAGG_KERNEL): why an off-CPU sample's thread
	 * waited, "[off-cpu: sleeping]"; NULL for none. With leaf_stub, of kind STACKAGG_STUB (no
	 * suffix) as stackagg_named's leaf: the class an allocation sample allocated. */
	const char *leaf;
	bool leaf_stub;
	/* A second value counted beside weight (stackagg_foreach_aux), at most UINT32_MAX: the
	 * objects an allocation sample stands for; 0 for none. */
	uint64_t aux;
	/* A frame right below the roots, before the user frames (unresolved, STACKAGG_STUB, counted
	 * in stats.markers): "[no stack sampled]" for time known without a stack; NULL for none. */
	const char *mark;
	/* 0, or the stratum (< 2^31) the sample's weight is scaled with by stackagg_fold_strata():
	 * until then a stack of each stratum is counted apart from the same frames of another. */
	uint32_t stratum;
	/* The unwinder proved user[nr_user - 1] is where the thread starts (its CFI leaves the
	 * return address undefined): that native frame counts as a thread root even without a
	 * name (a stripped C library's clone3), in this and every later stack. */
	bool user_rooted;
	/* The thread may carry virtual threads: the sample waits for stackagg_settle(), which asks
	 * resolver.vroot for the root of the one mounted at ts and puts it in place of thread.
	 * With pin (an off-CPU sample), STACKAGG_PINNED goes before leaf when one was. */
	bool vroot, pin;
};

#define STACKAGG_UNNAMED_LIBS 8
#define STACKAGG_LIB_NAME 48

struct stackagg_stats {
	uint64_t samples;		  /* given to stackagg_sample() */
	uint64_t counted;		  /* in stacks now (stackagg_reset() clears it); a stack's
					   * count is the sum of its samples' weights */
	uint64_t dropped;		  /* refused by a memory cap */
	uint64_t deferred;		  /* samples that waited for stackagg_settle() */
	uint64_t forced;		  /* deferred samples settled early by the pending cap */
	uint64_t pending;		  /* waiting now (for settle or for the final retry) */
	uint64_t retried;		  /* samples with a JIT miss kept for the final retry */
	uint64_t late_resolved;		  /* ... of which every JIT frame resolved at the retry */
	uint64_t truncated;		  /* stacks cut at STACKAGG_MAX_FRAMES */
	uint64_t frames[STACKAGG_NCLASS]; /* frames symbolized, per class */
	uint64_t unresolved[STACKAGG_NCLASS]; /* ... of which [unknown] */
	uint64_t inlined;		      /* inlined frames unfolded */
	uint64_t jit_lines;   /* compiled/inlined frames given a line (opts.lines) */
	uint64_t jit_no_line; /* ... shown without one: the agent knew none */
	uint64_t interpreted; /* interpreted frames named by the caller */
	uint64_t markers;     /* marker frames (stackagg_uframe.marker) */
	uint64_t user_stacks; /* counted stacks with user frames ... */
	uint64_t rooted;      /* ... whose outermost one is a thread's start (start_thread, clone3,
			       * _start, JavaMain, thread_native_entry, call_stub) */
	uint64_t unrooted_marked; /* ... not, given a "[truncated]" frame (opts.mark_unrooted) */
	uint64_t untimed;	  /* countings the timeline had no room for (opts.timeline) */
	size_t stacks;		  /* distinct stacks */
	size_t interned;	  /* distinct frames */
	/* Native frames left unnamed, by the library they lie in (the first
	 * STACKAGG_UNNAMED_LIBS libraries met; n_libs of them used): where to look for symbols. */
	struct {
		char lib[STACKAGG_LIB_NAME];
		uint64_t frames;
	} unnamed[STACKAGG_UNNAMED_LIBS];
	uint32_t n_unnamed_libs;
};

struct stackagg;

/* A new aggregator, or NULL without memory. r is copied; r->ctx must outlive the aggregator. */
struct stackagg *stackagg_new(const struct stackagg_opts *opts, const struct stackagg_resolver *r);
void stackagg_free(struct stackagg *a);

/*
 * Symbolize and count one sample. Kernel and native frames are resolved now; if the sample has
 * JIT candidates it waits for stackagg_settle(). 0, or -ENOMEM / -E2BIG (counted as dropped).
 */
int stackagg_sample(struct stackagg *a, const struct stackagg_sample *s);

/*
 * Resolve and count the waiting samples with ts <= upto (in arrival order: it stops at the first
 * later one, or at the first whose virtual-thread root is not ready: stackagg_resolver.vready).
 * UINT64_MAX settles everything. Returns the number of samples settled.
 */
size_t stackagg_settle(struct stackagg *a, uint64_t upto);

/* The time of the oldest waiting sample in arrival order (the next stackagg_settle() looks at):
 * true and *ts, or false when none waits. Samples after it may be older still. */
bool stackagg_next_pending(const struct stackagg *a, uint64_t *ts);

/* Forget cached native/kernel resolutions (call when a process's mappings changed). */
void stackagg_maps_changed(struct stackagg *a);

/*
 * Is name[0..len) a function where a thread's stack begins (start_thread, clone3, _start,
 * JavaMain, thread_native_entry, call_stub)? What stats.rooted counts as a root.
 */
bool stackagg_root_name(const char *name, size_t len);

/*
 * The strings the jit resolver returns may have changed or been freed (a code table was
 * modified). Until this is called, stackagg may map a name pointer it saw before straight to
 * its interned frame without reading the string again. O(1).
 */
void stackagg_jit_changed(struct stackagg *a);

/*
 * Scale every counted stack of a stratum by scale(arg, stratum) (its count rounded; 0 drops it)
 * and merge it with the same frames of other strata and of none: after it, no stack has a
 * stratum (samples still pending keep theirs: settle first). 0, or -ENOMEM (a stack that could
 * not be kept is counted in stats.dropped).
 */
int stackagg_fold_strata(struct stackagg *a, double (*scale)(void *arg, uint32_t stratum),
			 void *arg);

/* Drop every counted stack (pending samples stay); the interned frames are kept. For `top`. */
void stackagg_reset(struct stackagg *a);

/* ---- stacks named by the caller (events from a JVM's agent) ----------------------------- */

/* A Java frame named by the agent: len bytes of name (no terminator), its source line. */
struct stackagg_nframe {
	const char *name;
	size_t len;
	int32_t line; /* > 0: the frame is "name:LINE" with opts.lines; else the name alone */
};

/*
 * A stack whose frames are names already (allocation and lock events): the roots as
 * stackagg_sample's (process, thread or "[tid N]", none with opts.no_thread), a "[truncated]"
 * marker below them when the stack was cut at its outermost end, the frames outermost first
 * labelled as compiled Java frames (kind STACKAGG_JAVA, "_[j]"), then leaf (kind STACKAGG_STUB,
 * no suffix: the allocated class, the monitor's class). Borrowed for the call.
 */
struct stackagg_named {
	uint32_t tid;
	const char *process, *thread;
	bool truncated;
	const struct stackagg_nframe *frames;
	size_t n;
	const char *leaf; /* NUL-terminated, or NULL for none */
	uint64_t ts;	  /* when it happened (CLOCK_MONOTONIC ns, 0: unknown): the timeline's */
	/* The frames are labels as folded text writes them: each one's kind is its suffix's
	 * (_[j], _[i], _[k], _[0], taken off its name; none: a native frame, named as it is). */
	bool labelled;
};

/*
 * Intern s's frames into ids (room for STACKAGG_MAX_FRAMES; a stack over it loses frames next
 * to its leaf, counted in stats.truncated) and their count into *n; counts nothing. The ids
 * stay valid for the life of the aggregator (for a caller that counts the stack later:
 * stackagg_add_ids). 0 or -ENOMEM / -E2BIG (the caller counts its drop).
 */
int stackagg_named_ids(struct stackagg *a, const struct stackagg_named *s, uint32_t *ids,
		       size_t *n);

/*
 * Count one stack of ids (from stackagg_named_ids of this aggregator) with weight w and a
 * second value aux (stackagg_foreach_aux gives both back, summed per stack). 0, or -EINVAL /
 * -ENOMEM / -E2BIG, counted in stats.dropped.
 */
int stackagg_add_ids(struct stackagg *a, const uint32_t *ids, size_t n, uint64_t w, uint64_t aux);

/* stackagg_add_ids, noted in the timeline (opts.timeline) at ts for thread tid. */
int stackagg_add_ids_at(struct stackagg *a, const uint32_t *ids, size_t n, uint64_t w, uint64_t aux,
			uint64_t ts, uint32_t tid);

/* stackagg_named_ids and stackagg_add_ids_at (s->ts, s->tid) in one. */
int stackagg_named(struct stackagg *a, const struct stackagg_named *s, uint64_t w, uint64_t aux);

/* ---- reading the result ---------------------------------------------------------------- */

/* Name (without suffix, NUL-terminated, valid until stackagg_free) and kind of frame id. */
const char *stackagg_frame_name(const struct stackagg *a, uint32_t id);
enum stackagg_kind stackagg_frame_kind(const struct stackagg *a, uint32_t id);
bool stackagg_frame_unresolved(const struct stackagg *a, uint32_t id);
size_t stackagg_frame_count(const struct stackagg *a);

/* The FlameGraph suffix of a kind: "_[j]", "_[i]", "_[0]", "_[k]" or "". */
const char *stackagg_suffix(enum stackagg_kind kind);

/*
 * The labels of an aggregate's frames as every output prints them (framelabel_format: name,
 * suffix, ';' and control bytes replaced), each built on first use and kept.
 * stackagg_labels_new: a is borrowed and must outlive the labels; NULL when out of memory.
 * stackagg_labels_get: frame id's label, valid until stackagg_labels_free; NULL when out of
 * memory or id is not a frame. stackagg_labels_free accepts NULL.
 */
struct stackagg_labels;
struct stackagg_labels *stackagg_labels_new(const struct stackagg *a);
void stackagg_labels_free(struct stackagg_labels *fl);
const char *stackagg_labels_get(struct stackagg_labels *fl, uint32_t id);

/*
 * Visit every distinct stack (frame ids root first) with its count, in no particular order (a
 * stack of a stratum not folded yet is visited apart from the same frames of another).
 * Stops at fn's first nonzero return and returns it; else 0. ids is borrowed for the call.
 */
int stackagg_foreach(const struct stackagg *a,
		     int (*fn)(void *arg, const uint32_t *ids, size_t n, uint64_t count),
		     void *arg);

/* stackagg_foreach, with each stack's second value (0 for stacks of samples). */
int stackagg_foreach_aux(const struct stackagg *a,
			 int (*fn)(void *arg, const uint32_t *ids, size_t n, uint64_t count,
				   uint64_t aux),
			 void *arg);

/*
 * Write FlameGraph folded stacks: one "f1;f2;...;fn COUNT\n" per distinct stack, sorted by the
 * line text (byte order), frame names with their suffix; ';' and newlines inside names become
 * ':' and ' ' so a line always parses back. 0 or -errno (write error, -ENOMEM).
 */
int stackagg_write_folded(const struct stackagg *a, FILE *f);

void stackagg_stats(const struct stackagg *a, struct stackagg_stats *out);

/* ---- the timeline (opts.timeline) ------------------------------------------------------ */

/* One counting of a stack: when (CLOCK_MONOTONIC ns; 0 unknown), which thread (host tid; 0
 * unknown), which stack (an index for stackagg_stack_ids) and what it added. */
struct stackagg_tsample {
	uint64_t ts;
	uint64_t weight;
	uint32_t tid;
	uint32_t stack;
};

/*
 * The countings in the order they were made (not sorted by time: deferred samples come when
 * settled), *n of them; borrowed until the next call that counts, folds or resets. A stack of a
 * stratum not folded yet keeps its unscaled weight.
 */
const struct stackagg_tsample *stackagg_timeline(const struct stackagg *a, size_t *n);

/* The number of distinct stacks, and the frame ids (root first) of stack idx, *n of them;
 * NULL (and *n 0) past the end. Borrowed like stackagg_timeline's. */
size_t stackagg_stack_count(const struct stackagg *a);
const uint32_t *stackagg_stack_ids(const struct stackagg *a, size_t idx, size_t *n);

/*
 * Stacks cut short under a thread root named with root_prefix (a process root may come
 * first): "[truncated]" right after the roots, then the frames walked, the outermost first.
 * Each is given the callers its outermost walked frame has in the whole stacks of the same
 * roots (stacks whose first frame after the roots is no marker, holding a frame of that name,
 * whatever its kind), with a frame named mark_name between those callers and the walked
 * frames. Of those stacks, the ones whose frames from there match the most of the walked
 * frames one for one lend (at the innermost place that matches the most). Its weight (and
 * aux) is shared among them by their weight and moved there; a cut stack that no whole stack holds
 * the frame of stays as it was. The stacks' weights must be final (stackagg_fold_strata done): a
 * stack still in a stratum is left alone, and nothing is done with opts.timeline. Work is bounded
 * by STACKAGG_GRAFT_MAX_WORK (frames compared); past it the rest stay cut. 0, or -ENOMEM.
 */
#define STACKAGG_GRAFT_MAX_WORK (256ull << 20)

struct stackagg_graft_stats {
	uint64_t cut, cut_w;	     /* cut stacks under the roots, their weight */
	uint64_t grafted, grafted_w; /* of them given callers, the weight moved */
	uint64_t too_deep;	     /* a whole stack's callers too deep to lend */
	uint64_t failed;	     /* a grafted stack that could not be added */
	uint64_t over_budget;	     /* cut stacks left past STACKAGG_GRAFT_MAX_WORK */
	bool timeline;		     /* opts.timeline: nothing done */
};

int stackagg_graft_cut(struct stackagg *a, const char *root_prefix, const char *mark_name,
		       struct stackagg_graft_stats *st);

/* Adds b's counts into a (a's timeline flag set when either is). */
void stackagg_graft_stats_add(struct stackagg_graft_stats *a, const struct stackagg_graft_stats *b);

/* Which summary class a frame kind belongs to. */
enum stackagg_class stackagg_kind_class(enum stackagg_kind kind);

#endif
