// SPDX-License-Identifier: MIT
/*
 * collapse-gen.c - writes realistic `perf script` text of a busy JVM for the collapse benchmark.
 *
 *   collapse-gen MEGABYTES STACKS [SEED] > perf.txt
 *
 * STACKS distinct call paths of 20-80 frames (root to leaf: libc thread start, libjvm entry,
 * interpreter and JIT frames from /tmp/perf-PID.map with Java signatures, sometimes libjvm or
 * libc natives, [unknown] frames, and kernel frames at the leaf), sampled with a skewed
 * popularity, in the layout of perf 6.1's default output (with symbol offsets and varying
 * addresses), until MEGABYTES of text are written. Deterministic for a given SEED.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NJAVA 4000
#define NNATIVE 300
#define NKERNEL 120
#define PID 48213

struct frame {
	char name[160];
	const char *mod;
	uint64_t base;
};

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned below(unsigned n)
{
	return (unsigned)(rnd() % n);
}

static const char *pkgs[] = { "com.acme.orders",	 "com.acme.billing",
			      "org.springframework.web", "io.netty.channel",
			      "java.util.concurrent",	 "com.fasterxml.jackson",
			      "org.hibernate.engine",	 "java.lang",
			      "jdk.internal.misc" };
static const char *types[] = {
	"void", "int", "long", "java.lang.Object", "java.lang.String", "boolean", "java.util.List"
};
static const char *verbs[] = { "handle", "process", "invoke", "read",	 "write", "serialize",
			       "lookup", "apply",   "run",    "compute", "flush", "decode" };
static const char *threads[] = {
	"java",	     "http-nio-8080-e", "C2 CompilerThre", "GC Thread#0", "pool-1-thread-1",
	"VM Thread", "kafka-producer-", "G1 Conc#0"
};

int main(int argc, char **argv)
{
	static struct frame java[NJAVA], native[NNATIVE], kernel[NKERNEL];
	static const char *libjvm = "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so";
	static const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	static char jitmap[64];
	struct frame ***stacks;
	unsigned *depth, *comm;
	unsigned long long target, written = 0, nstacks;
	char *out = malloc(1 << 16);
	double t = 1000.0;

	if (argc < 3 || !out) {
		fprintf(stderr, "usage: collapse-gen MEGABYTES STACKS [SEED]\n");
		free(out);
		return 64;
	}
	target = strtoull(argv[1], NULL, 10) << 20;
	nstacks = strtoull(argv[2], NULL, 10);
	rng_state = argc > 3 ? strtoull(argv[3], NULL, 10) : 42;
	if (!nstacks) {
		free(out);
		return 64;
	}
	snprintf(jitmap, sizeof(jitmap), "/tmp/perf-%d.map", PID);

	for (unsigned i = 0; i < NJAVA; i++) {
		java[i].mod = jitmap;
		java[i].base = 0x7f3a40000000ull + (uint64_t)i * 0x1000;
		if (i % 10 == 0)
			snprintf(java[i].name, sizeof(java[i].name), "Interpreter");
		else if (i % 7 == 0)
			snprintf(java[i].name, sizeof(java[i].name), "L%s/Type%u;::%s%u",
				 pkgs[i % 9], i % 97, verbs[i % 12], i);
		else
			snprintf(java[i].name, sizeof(java[i].name), "%s %s.Type%u.%s%u(%s, int)",
				 types[i % 7], pkgs[i % 9], i % 97, verbs[i % 12], i,
				 types[(i / 7) % 7]);
	}
	for (unsigned i = 0; i < NNATIVE; i++) {
		native[i].mod = i % 3 ? libjvm : libc;
		native[i].base = 0x800000 + (uint64_t)i * 0x400;
		snprintf(native[i].name, sizeof(native[i].name),
			 i % 3 ? "G1ParScanThreadState::trim_queue_%u" : "__memmove_avx_%u", i);
	}
	for (unsigned i = 0; i < NKERNEL; i++) {
		kernel[i].mod = "[kernel.kallsyms]";
		kernel[i].base = 0xffffffff81000000ull + (uint64_t)i * 0x800;
		snprintf(kernel[i].name, sizeof(kernel[i].name), "%s_%u",
			 i % 2 ? "do_syscall" : "__x64_sys_futex", i);
	}

	stacks = calloc(nstacks, sizeof(*stacks));
	depth = calloc(nstacks, sizeof(*depth));
	comm = calloc(nstacks, sizeof(*comm));
	if (!stacks || !depth || !comm)
		return 1;
	for (unsigned long long s = 0; s < nstacks; s++) {
		unsigned d = 20 + below(61), k = 0;

		stacks[s] = calloc(d, sizeof(struct frame *));
		if (!stacks[s])
			return 1;
		comm[s] = below(8);
		/* root first: thread start and VM entry, then Java, then natives/kernel at the leaf
		 */
		stacks[s][k++] = &native[0];
		stacks[s][k++] = &native[1 + below(20)];
		while (k < d) {
			unsigned r = below(100), left = d - k;

			if (left <= 3 && r < 40)
				stacks[s][k++] = &kernel[below(NKERNEL)];
			else if (left <= 6 && r < 30)
				stacks[s][k++] = &native[below(NNATIVE)];
			else
				stacks[s][k++] = &java[below(NJAVA)];
		}
		depth[s] = d;
	}

	while (written < target) {
		/* skewed popularity: a few hot stacks, a long tail */
		double u = (double)(rnd() >> 11) / 9007199254740992.0;
		unsigned long long s = (unsigned long long)(u * u * (double)nstacks);
		unsigned tid = PID + 1 + comm[s] * 3;
		int n;

		t += 0.000101;
		n = snprintf(out, 1 << 16, "%s %6u %11.6f:   10101010 cpu-clock:ppp: \n",
			     threads[comm[s]], tid, t);
		fwrite(out, 1, (size_t)n, stdout);
		written += (unsigned long long)n;
		for (unsigned k = depth[s]; k-- > 0;) {
			const struct frame *f = stacks[s][k];
			unsigned off = 0x10 + below(0x200);

			if (f->name[0] == 'I' && f->name[1] == 'n')
				n = snprintf(out, 1 << 16, "\t%16llx %s+0x%x (%s)\n",
					     (unsigned long long)(f->base + off), f->name, off,
					     f->mod);
			else if (below(500) == 0)
				n = snprintf(out, 1 << 16, "\t%16llx [unknown] (%s)\n",
					     (unsigned long long)(f->base + off), f->mod);
			else
				n = snprintf(out, 1 << 16, "\t%16llx %s+0x%x (%s)\n",
					     (unsigned long long)(f->base + off), f->name, off,
					     f->mod);
			fwrite(out, 1, (size_t)n, stdout);
			written += (unsigned long long)n;
		}
		fputc('\n', stdout);
		written++;
	}
	for (unsigned long long s = 0; s < nstacks; s++)
		free(stacks[s]);
	free(stacks);
	free(depth);
	free(comm);
	free(out);
	return 0;
}
