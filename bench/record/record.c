// SPDX-License-Identifier: MIT
/*
 * record.c - end-to-end symbolization throughput of `record`: raw call chains -> stackagg with
 * the real symbolizer (this process's libjvm.so, libc and the kernel's kallsyms) and a real code
 * table (20k compiled blobs with inline tables, 2k stubs, in an executable anonymous mapping as
 * HotSpot's code cache is), deferred JIT lookups settled by time as in a recording.
 *
 *   bench_record LIBJVM [SAMPLES]
 *
 * Prints frames/s for the whole pipeline and, measured in the same run on the same frames, the
 * bare lookups it is built on (symbolizer_lookup for native/kernel, codetab_lookup +
 * codetab_inline_chain for JIT) as the baseline.
 *
 * Then interpreted frames: HotSpot metadata (Method, ConstMethod with bytecodes and a line
 * table, ConstantPool, Klass, Symbols, JDK 17's layout) built in this process's own memory and
 * read back with process_vm_readv of our own PID, as `record` reads a JVM's: the namer's cost
 * per new Method* and its cached (revalidated) lookups per second, and the whole pipeline again
 * with INTERP_DEPTH interpreted frames per sample named from synthetic stack copies
 * (javaframes: frame walk + names + lines), in frames/s against the pipeline above.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "codetab.h"
#include "fgclock.h"
#include "fgproto.h"
#include "interp.h"
#include "javaframes.h"
#include "resolve.h"
#include "stackagg.h"
#include "symbolizer.h"
#include "vmmem.h"

#define NBLOBS 20000
#define NSTUBS 2000
#define BLOB_SIZE 1024
#define NMETHODS 5000
#define DEPTH_JIT 20
#define DEPTH_NATIVE 14
#define DEPTH_KERNEL 5
#define NINTERP 2000	   /* interpreted methods */
#define INTERP_DEPTH 12	   /* interpreted frames per sample in part 3 */
#define INTERP_CODE 0x4000 /* bytes of the interpreter blob */
#define NSTACKS 64	   /* distinct synthetic stack copies */
#define STACK_BYTES 8192

static volatile uint64_t sink; /* keeps the baseline's lookups from being optimized out */

struct ctx {
	struct symbolizer *sz;
	struct codetab *tab;
	pid_t pid;
};

static double now_s(void)
{
	return (double)fg_now_ns() / 1e9;
}

/* Every sample is of this process: its one code table. */
static const struct codetab *table_of(void *arg, uint32_t pid)
{
	(void)pid;
	return arg;
}

/* A code table like a warmed-up service's: compiled methods with inline info, then stubs. */
static int fill_table(struct codetab *tab, uint64_t base)
{
	static char names[NMETHODS][64];
	struct fgp_str methods[4];
	struct fgp_pc_in pcs[24];
	uint16_t chains[24][4];
	uint8_t *buf = malloc(1 << 16);
	unsigned int seed = 7;

	if (!buf)
		return -ENOMEM;
	for (int i = 0; i < NMETHODS; i++)
		snprintf(names[i], sizeof(names[i]), "com.example.service.pkg%d.Class%d::method%d",
			 i % 37, i % 911, i);
	for (int b = 0; b < NBLOBS + NSTUBS; b++) {
		uint64_t addr = base + (uint64_t)b * BLOB_SIZE;
		struct fgp_reader rd;
		struct fgp_record rec;
		size_t off = fgp_msg_header_size();
		int n;

		fgp_encode_msg_header(buf, 1 << 16);
		if (b < NBLOBS) {
			uint16_t nm = (uint16_t)(1 + rand_r(&seed) % 4);
			struct fgp_code_load_in in = {
				.addr = addr,
				.size = BLOB_SIZE - 16,
				.ts = 1000,
				.name = { names[b % NMETHODS],
					  (uint16_t)strlen(names[b % NMETHODS]) },
				.n_methods = nm,
				.methods = methods,
				.n_pcs = 24,
				.pcs = pcs,
			};

			for (int m = 0; m < nm; m++) {
				const char *s = names[(b * 7 + m * 13) % NMETHODS];

				methods[m] = (struct fgp_str){ s, (uint16_t)strlen(s) };
			}
			for (int p = 0; p < 24; p++) {
				uint16_t d = (uint16_t)(1 + rand_r(&seed) % nm);

				for (int k = 0; k < d; k++)
					chains[p][k] = (uint16_t)(nm - d + k);
				pcs[p] = (struct fgp_pc_in){ .pc_off = (uint32_t)(p + 1) * 40,
							     .depth = d,
							     .chain = chains[p] };
			}
			n = fgp_encode_code_load(buf + off, (1 << 16) - off, &in);
		} else {
			char sn[32];
			struct fgp_dynamic_code d = { .addr = addr,
						      .size = BLOB_SIZE - 16,
						      .ts = 1000 };

			snprintf(sn, sizeof(sn), "StubRoutines (%d)", b - NBLOBS);
			d.name = (struct fgp_str){ sn, (uint16_t)strlen(sn) };
			n = fgp_encode_dynamic_code(buf + off, (1 << 16) - off, &d);
		}
		if (n < 0 || fgp_reader_init(&rd, buf, off + (size_t)n) != 0 ||
		    fgp_next(&rd, &rec) != 1 || codetab_apply(tab, &rec) < 0) {
			free(buf);
			return -EINVAL;
		}
	}
	free(buf);
	return 0;
}

/* Addresses in the text of a loaded library, from its symbols (dladdr-checked). */
static size_t lib_addrs(void *h, const char *const *syms, uint64_t *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; syms[i] && n < max; i++) {
		void *p = dlsym(h, syms[i]);

		if (p)
			out[n++] = (uint64_t)p + 4;
	}
	return n;
}

static int kernel_addrs(uint64_t *out, size_t max)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512];
	size_t n = 0;

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char t;

		if (sscanf(line, "%llx %c", &a, &t) == 2 && (t == 't' || t == 'T') && a &&
		    (rand() % 20) == 0)
			out[n++] = a + 8;
	}
	fclose(f);
	return (int)n;
}

/* ---- interpreted frames: HotSpot metadata in our own memory --------------------------------- */

struct fake_method {
	uint8_t method[88];
	uint8_t cm[48 + 64 + 16]; /* header, 64 bytes of bytecode, line table */
	uint8_t cp[72 + 8 * 8];
	uint8_t klass[208];
	uint8_t hsym[64], msym[64];
};

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static void put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static void fake_symbol(uint8_t *sym, const char *s)
{
	size_t n = strlen(s);

	put16(sym + 4, (uint16_t)n);
	memcpy(sym + 6, s, n);
}

static void fake_fill(struct fake_method *m, int i)
{
	static const uint8_t lines[] = { 0xff, 0x00, 0x14, 0x22, 0xff, 0x08, 0x38, 0x00 };
	char k[48], n[32];

	memset(m, 0, sizeof(*m));
	put64(m->method + 8, (uint64_t)(uintptr_t)m->cm);
	put64(m->cm + 8, (uint64_t)(uintptr_t)m->cp);
	put16(m->cm + 28, 1); /* has a line table */
	put16(m->cm + 32, 64);
	put16(m->cm + 34, 5);
	put16(m->cm + 36, 6);
	memcpy(m->cm + 48 + 64, lines, sizeof(lines));
	put64(m->cp + 24, (uint64_t)(uintptr_t)m->klass);
	put64(m->cp + 72 + 5 * 8, (uint64_t)(uintptr_t)m->msym);
	put64(m->klass + 24, (uint64_t)(uintptr_t)m->hsym);
	snprintf(k, sizeof(k), "com/example/service/pkg%d/Handler%d", i % 29, i);
	snprintf(n, sizeof(n), "handle%d", i % 17);
	fake_symbol(m->hsym, k);
	fake_symbol(m->msym, n);
}

static void fake_layout(struct fgp_vm_layout *l, uint64_t gc_clock)
{
	static const struct {
		enum fgp_vml_key k;
		uint32_t v;
	} kv[] = {
		{ FGP_VML_JDK_MAJOR, 17 },
		{ FGP_VML_METHOD_CONSTMETHOD, 8 },
		{ FGP_VML_CONSTMETHOD_CONSTANTS, 8 },
		{ FGP_VML_CONSTMETHOD_FLAGS, 28 },
		{ FGP_VML_CONSTMETHOD_FLAGS_SIZE, 2 },
		{ FGP_VML_CONSTMETHOD_HAS_LINES, 1 },
		{ FGP_VML_CONSTMETHOD_CODE_SIZE, 32 },
		{ FGP_VML_CONSTMETHOD_NAME_INDEX, 34 },
		{ FGP_VML_CONSTMETHOD_SIGNATURE_INDEX, 36 },
		{ FGP_VML_CONSTMETHOD_IDNUM, 38 },
		{ FGP_VML_CONSTMETHOD_SIZE, 48 },
		{ FGP_VML_CONSTPOOL_HOLDER, 24 },
		{ FGP_VML_CONSTPOOL_SIZE, 72 },
		{ FGP_VML_KLASS_NAME, 24 },
		{ FGP_VML_SYMBOL_LENGTH, 4 },
		{ FGP_VML_SYMBOL_BODY, 6 },
		{ FGP_VML_LINES_UNSIGNED5_X, 0 },
		{ FGP_VML_INTERP_METHOD_SLOT, (uint32_t)-3 },
		{ FGP_VML_INTERP_BCP_SLOT, (uint32_t)-8 },
	};

	memset(l, 0, sizeof(*l));
	l->caps = FGP_VML_CAP_NAMES | FGP_VML_CAP_INTERP_FRAME | FGP_VML_CAP_LINES |
		  FGP_VML_CAP_GC_CLOCK;
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
		fgp_vml_set(l, kv[i].k, kv[i].v);
	fgp_vml_set(l, FGP_VML_GC_CLOCK_LO, (uint32_t)gc_clock);
	fgp_vml_set(l, FGP_VML_GC_CLOCK_HI, (uint32_t)(gc_clock >> 32));
}

/*
 * A stack copy of INTERP_DEPTH interpreter frames (0x100 bytes apart, each with its Method* and
 * bcp slots) and the kernel's chain for it: ips[0..INTERP_DEPTH) in the interpreter blob.
 */
struct fake_stack {
	uint8_t bytes[STACK_BYTES];
	uint64_t sp;
	uint64_t ips[INTERP_DEPTH];
	struct uregs regs;
};

static void fake_stack_fill(struct fake_stack *st, const struct fake_method *ms, uint64_t interp,
			    unsigned int *seed)
{
	st->sp = 0x7ffd00000000ull;
	memset(st->bytes, 0, sizeof(st->bytes));
	for (int k = 0; k < INTERP_DEPTH; k++) {
		uint64_t fp = st->sp + 0x100 + 0x100 * (uint64_t)k;
		const struct fake_method *m = &ms[rand_r(seed) % NINTERP];
		uint64_t code = (uint64_t)(uintptr_t)m->cm + 48;

		st->ips[k] = interp + 0x40 + 0x100 * (uint64_t)k;
		put64(st->bytes + (fp - st->sp), fp + 0x100);
		put64(st->bytes + (fp - st->sp) + 8, interp + 0x40 + 0x100 * (uint64_t)(k + 1));
		put64(st->bytes + (fp - st->sp) - 24, (uint64_t)(uintptr_t)m->method);
		put64(st->bytes + (fp - st->sp) - 64, code + (uint64_t)(rand_r(seed) % 64));
	}
	st->regs = (struct uregs){
		.valid = true, .ip = st->ips[0], .sp = st->sp, .bp = st->sp + 0x100, .r13 = 0
	};
}

/* Parts 3 and 4: the namer alone, then the pipeline with interpreted frames. */
static int interp_part(struct ctx *x, uint64_t interp, size_t nsamples, const uint64_t *native,
		       size_t nnative, double base_fps)
{
	static uint64_t gc_clock[2]; /* never a GC: start 0, end 0 */
	struct fake_method *ms = aligned_alloc(64, sizeof(*ms) * NINTERP);
	struct fake_stack *stacks = calloc(NSTACKS, sizeof(*stacks));
	struct stackagg_uframe uf[64];
	struct fgp_record rec = { .type = FGP_VM_LAYOUT };
	struct interp_layout il;
	struct interp_namer *nm;
	struct javaframes *jf;
	struct stackagg_resolver res;
	struct resolve_ctx rc = { .table_of = table_of, .sz = x->sz, .arg = x->tab };
	struct stackagg *agg;
	struct javaframes_stats js;
	const char *why, *name;
	unsigned int seed = 9;
	uint64_t user[64], frames = 0, interp_frames = 0;
	size_t lookups = 0;
	double t0, t_new, t_hit, t_trust, t_full;
	int line;

	if (!ms || !stacks)
		return -ENOMEM;
	for (int i = 0; i < NINTERP; i++)
		fake_fill(&ms[i], i);
	fake_layout(&rec.u.layout, (uint64_t)(uintptr_t)gc_clock);
	if (codetab_apply(x->tab, &rec) != 0 ||
	    codetab_add(x->tab, CODEBLOB_DYNAMIC, interp, INTERP_CODE, 1000, "Interpreter") < 0 ||
	    interp_layout_init(&rec.u.layout, &il, &why) != 0)
		return -EINVAL;

	/* The namer alone: every Method* new once, then cached lookups (one read each). */
	nm = interp_namer_new(&vmmem_process);
	if (!nm)
		return -ENOMEM;
	t0 = now_s();
	for (int i = 0; i < NINTERP; i++) {
		uint64_t bcp = (uint64_t)(uintptr_t)ms[i].cm + 48 + 5;

		interp_begin_sample(nm);
		if (interp_name(nm, (uint32_t)x->pid, &il, (uint64_t)(uintptr_t)ms[i].method, &bcp,
				1, true, &name, &line) != 0) {
			fprintf(stderr, "bench_record: the namer failed on our own metadata\n");
			return -EINVAL;
		}
	}
	t_new = now_s() - t0;
	t0 = now_s();
	for (size_t i = 0; i < nsamples; i++) {
		const struct fake_method *m = &ms[rand_r(&seed) % NINTERP];
		uint64_t bcp = (uint64_t)(uintptr_t)m->cm + 48 + (uint64_t)(i % 64);

		if (i % INTERP_DEPTH == 0)
			interp_begin_sample(nm);
		lookups += interp_name(nm, (uint32_t)x->pid, &il, (uint64_t)(uintptr_t)m->method,
				       &bcp, 1, true, &name, &line) == 0;
	}
	t_hit = now_s() - t0;
	/* Cached and trusted (no GC since they were read: the GC clock says so), a sample's frames
	 * at a time. */
	struct interp_req reqs[INTERP_DEPTH];
	size_t trusted = 0;

	t0 = now_s();
	for (size_t i = 0; i < nsamples; i += INTERP_DEPTH) {
		for (int k = 0; k < INTERP_DEPTH; k++) {
			const struct fake_method *m = &ms[rand_r(&seed) % NINTERP];

			reqs[k] = (struct interp_req){ .method = (uint64_t)(uintptr_t)m->method,
						       .bcps = { (uint64_t)(uintptr_t)m->cm + 48 +
								 (uint64_t)(k % 64) },
						       .nbcp = 1 };
		}
		interp_begin_sample(nm);
		interp_name_many(nm, (uint32_t)x->pid, &il, reqs, INTERP_DEPTH, true, 0,
				 fg_now_ns());
		for (int k = 0; k < INTERP_DEPTH; k++)
			trusted += reqs[k].rv == 0;
	}
	t_trust = now_s() - t0;
	interp_namer_free(nm);

	/* The pipeline with interpreted frames: javaframes + stackagg, as a session runs them. */
	for (int i = 0; i < NSTACKS; i++)
		fake_stack_fill(&stacks[i], ms, interp, &seed);
	jf = javaframes_new(&vmmem_process, true);
	resolve_init(&res, &rc);
	agg = stackagg_new(NULL, &res);
	if (!jf || !agg)
		return -ENOMEM;
	t0 = now_s();
	for (size_t s = 0; s < nsamples; s++) {
		const struct fake_stack *st = &stacks[s % NSTACKS];
		struct ustack us = { st->bytes, st->sp, sizeof(st->bytes) };
		uint32_t nu = 0;
		struct javaframes_in in = { .pid = (uint32_t)x->pid,
					    .ts = 2000 + s,
					    .tab = x->tab,
					    .user = user,
					    .regs = &st->regs,
					    .stack = &us };
		struct stackagg_sample smp;

		for (int i = 0; i < INTERP_DEPTH; i++)
			user[nu++] = st->ips[i];
		for (int i = 0; i < DEPTH_NATIVE && nnative; i++)
			user[nu++] = native[rand_r(&seed) % nnative];
		in.nr_user = nu;
		smp = (struct stackagg_sample){ .pid = (uint32_t)x->pid,
						.tid = 1,
						.ts = 2000 + s,
						.user = user,
						.nr_user = nu,
						.thread = "worker" };
		if (javaframes_name(jf, &in, uf) > 0)
			smp.uframes = uf;
		stackagg_sample(agg, &smp);
		frames += nu;
		interp_frames += INTERP_DEPTH;
		if (s % 1000 == 999)
			stackagg_settle(agg, 2000 + s - 500);
	}
	stackagg_settle(agg, UINT64_MAX);
	t_full = now_s() - t0;
	javaframes_stats(jf, &js);

	printf("interpreted frames (HotSpot metadata of %d methods in our own memory, read with "
	       "process_vm_readv of our PID):\n",
	       NINTERP);
	printf("  new Method* (resolve from scratch, ~6 reads + line table): %.2f us each\n",
	       t_new * 1e6 / NINTERP);
	printf("  cached lookups re-read (one revalidating read each, with the line): %.2f M/s "
	       "(%.2f us each), %zu of %zu named\n",
	       (double)lookups / t_hit / 1e6, t_hit * 1e6 / (double)nsamples, lookups, nsamples);
	printf("  cached lookups trusted (no GC since they were read), %d per sample: %.2f M/s "
	       "(%.3f us each), %zu named\n",
	       INTERP_DEPTH, (double)trusted / t_trust / 1e6, t_trust * 1e6 / (double)trusted,
	       trusted);
	printf("  pipeline with %d interpreted + %d native frames per sample (frame walk in a stack "
	       "copy, names, lines, intern, aggregate): %.2f M frames/s (%.2f M interpreted/s), "
	       "%.2fx the pipeline above (%.2f M frames/s)\n",
	       INTERP_DEPTH, DEPTH_NATIVE, (double)frames / t_full / 1e6,
	       (double)interp_frames / t_full / 1e6, (double)frames / t_full / base_fps,
	       base_fps / 1e6);
	printf("  named %llu of %llu interpreted frames (%llu with a line); %llu reads\n",
	       (unsigned long long)js.named, (unsigned long long)js.interp,
	       (unsigned long long)js.lines, (unsigned long long)js.namer.reads);
	stackagg_free(agg);
	javaframes_free(jf);
	free(stacks);
	free(ms);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const jvm_syms[] = { "JVM_ArrayCopy",
						"JVM_Clone",
						"JVM_CurrentTimeMillis",
						"JVM_NanoTime",
						"JVM_GC",
						"JVM_FillInStackTrace",
						"JVM_IHashCode",
						"JVM_MonitorWait",
						"JVM_MonitorNotify",
						"JVM_Sleep",
						"JVM_Yield",
						"JVM_StartThread",
						"JVM_GetClassName",
						"JVM_FindLoadedClass",
						"JVM_InitProperties",
						"JVM_DefineClass",
						"JVM_GetStackAccessControlContext",
						"JNI_CreateJavaVM",
						"JNI_GetCreatedJavaVMs",
						"JVM_FindClassFromCaller",
						NULL };
	static const char *const libc_syms[] = { "memcpy",
						 "malloc",
						 "free",
						 "pthread_mutex_lock",
						 "read",
						 "write",
						 "clock_gettime",
						 "epoll_wait",
						 "futex",
						 "strlen",
						 NULL };
	size_t nsamples = argc > 2 ? strtoull(argv[2], NULL, 10) : 200000;
	uint64_t native[64], kernel[4096], user[64], kchain[8];
	struct ctx x = { .pid = getpid() };
	struct stackagg_resolver res;
	struct resolve_ctx rc = { .table_of = table_of };
	struct stackagg_stats st;
	size_t nnative = 0, nkernel, frames = 0;
	unsigned int seed = 42;
	struct stackagg *agg;
	double t0, t_full, t_base;
	void *jvm, *libc, *cache;
	uint64_t base;

	if (argc < 2) {
		fprintf(stderr, "usage: bench_record LIBJVM [SAMPLES]\n");
		return 64;
	}
	jvm = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	libc = dlopen("libc.so.6", RTLD_NOW);
	if (!jvm || !libc) {
		fprintf(stderr, "bench_record: dlopen: %s\n", dlerror());
		return 1;
	}
	nnative = lib_addrs(jvm, jvm_syms, native, 40);
	nnative += lib_addrs(libc, libc_syms, native + nnative, 64 - nnative);
	nkernel = (size_t)kernel_addrs(kernel, 4096);
	cache = mmap(NULL, (size_t)(NBLOBS + NSTUBS) * BLOB_SIZE + INTERP_CODE,
		     PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (cache == MAP_FAILED)
		return 1;
	base = (uint64_t)cache;
	x.sz = symbolizer_new(NULL);
	x.tab = codetab_new(NULL);
	if (!x.sz || !x.tab || fill_table(x.tab, base) != 0 ||
	    symbolizer_add_process(x.sz, x.pid) != 0) {
		fprintf(stderr, "bench_record: setup failed\n");
		return 1;
	}
	/* The resolvers `record` and `top` use (collector/resolve.c), so this is their cost. */
	rc.sz = x.sz;
	rc.arg = x.tab;
	resolve_init(&res, &rc);
	agg = stackagg_new(NULL, &res);

	/* Pipeline: sample -> symbolize -> aggregate, JIT settled every 1000 samples by time. */
	t0 = now_s();
	for (size_t s = 0; s < nsamples; s++) {
		uint32_t nu = 0, nk = 0;
		struct stackagg_sample smp;

		for (int i = 0; i < DEPTH_JIT; i++) {
			uint64_t b = (uint64_t)(rand_r(&seed) % (NBLOBS + NSTUBS / 10));

			user[nu++] = base + b * BLOB_SIZE + 8 + (uint64_t)(rand_r(&seed) % 900);
		}
		for (int i = 0; i < DEPTH_NATIVE && nnative; i++)
			user[nu++] = native[rand_r(&seed) % nnative];
		if (s % 5 == 0)
			for (int i = 0; i < DEPTH_KERNEL && nkernel; i++)
				kchain[nk++] = kernel[rand_r(&seed) % nkernel];
		smp = (struct stackagg_sample){ .pid = (uint32_t)x.pid,
						.tid = 1,
						.ts = 2000 + s,
						.kernel = kchain,
						.nr_kernel = nk,
						.user = user,
						.nr_user = nu,
						.thread = "worker" };
		stackagg_sample(agg, &smp);
		frames += nu + nk;
		if (s % 1000 == 999)
			stackagg_settle(agg, 2000 + s - 500);
	}
	stackagg_settle(agg, UINT64_MAX);
	t_full = now_s() - t0;
	stackagg_stats(agg, &st);

	/* Baseline: the bare lookups on the same frame mix, nothing interned or counted. */
	seed = 42;
	t0 = now_s();
	for (size_t s = 0; s < nsamples; s++) {
		const char *names[64];
		struct sym_result r;

		for (int i = 0; i < DEPTH_JIT; i++) {
			uint64_t b = (uint64_t)(rand_r(&seed) % (NBLOBS + NSTUBS / 10));
			uint64_t a = base + b * BLOB_SIZE + 8 + (uint64_t)(rand_r(&seed) % 900);
			const struct codeblob *cb = codetab_lookup(x.tab, a, 3000);

			if (cb)
				sink += (uint64_t)codetab_inline_chain(cb, a, names, 64);
		}
		for (int i = 0; i < DEPTH_NATIVE && nnative; i++) {
			symbolizer_lookup(x.sz, x.pid, native[rand_r(&seed) % nnative], true, &r);
			sink += r.status;
		}
		if (s % 5 == 0)
			for (int i = 0; i < DEPTH_KERNEL && nkernel; i++) {
				symbolizer_lookup(x.sz, 0, kernel[rand_r(&seed) % nkernel], true,
						  &r);
				sink += r.status;
			}
	}
	t_base = now_s() - t0;

	printf("record symbolization, %zu samples, %zu frames (%d JIT + %d native per sample, "
	       "%d kernel in 1 of 5), code table %d compiled blobs with inline tables + %d stubs\n",
	       nsamples, frames, DEPTH_JIT, DEPTH_NATIVE, DEPTH_KERNEL, NBLOBS, NSTUBS);
	printf("  pipeline (symbolize + unfold inlines + intern + aggregate): %.2f s, %.2f M frames/s "
	       "on one core (target >= 1 M)\n",
	       t_full, (double)frames / t_full / 1e6);
	printf("  baseline (bare lookups, same frames):                        %.2f s, %.2f M frames/s "
	       "(pipeline/baseline time %.2fx)\n",
	       t_base, (double)frames / t_base / 1e6, t_full / t_base);
	printf("  result: %zu distinct stacks, %zu distinct frames, %llu inlined frames unfolded, "
	       "unresolved java %llu/%llu native %llu/%llu kernel %llu/%llu\n",
	       st.stacks, st.interned, (unsigned long long)st.inlined,
	       (unsigned long long)st.unresolved[0], (unsigned long long)st.frames[0],
	       (unsigned long long)st.unresolved[1], (unsigned long long)st.frames[1],
	       (unsigned long long)st.unresolved[2], (unsigned long long)st.frames[2]);
	stackagg_free(agg);
	if (interp_part(&x, base + (uint64_t)(NBLOBS + NSTUBS) * BLOB_SIZE, nsamples, native,
			nnative, (double)frames / t_full) != 0)
		return 1;
	codetab_free(x.tab);
	symbolizer_free(x.sz);
	return 0;
}
