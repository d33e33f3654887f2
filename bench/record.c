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
#include "resolve.h"
#include "stackagg.h"
#include "symbolizer.h"

#define NBLOBS 20000
#define NSTUBS 2000
#define BLOB_SIZE 1024
#define NMETHODS 5000
#define DEPTH_JIT 20
#define DEPTH_NATIVE 14
#define DEPTH_KERNEL 5

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
	cache = mmap(NULL, (size_t)(NBLOBS + NSTUBS) * BLOB_SIZE, PROT_READ | PROT_EXEC,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
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
				sink += (uint64_t)codetab_inline_chain(cb, a, i != 0, names, 64);
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
	codetab_free(x.tab);
	symbolizer_free(x.sz);
	return 0;
}
