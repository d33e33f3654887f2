// SPDX-License-Identifier: MIT
/*
 * symbol.c - symbolization throughput of native and kernel frames (bench/symbolize/symbol.sh).
 *
 * This process dlopen()s the JDK's libjvm.so (without starting a VM), then symbolizes a
 * realistic mix of addresses: functions of libjvm.so (.symtab, ~58k symbols, C++ names
 * demangled), of libc.so.6 (.dynsym) and of the kernel (kallsyms), all as return addresses at
 * a random offset inside a function. It reports the cold cost (loading the tables) and the
 * cached throughput in frames/s on one core, against glibc's dladdr() on the same user
 * addresses as a baseline measured in the same run (dladdr only searches .dynsym and does not
 * demangle: it does less work, and is what a naive symbolizer in-process would use).
 *
 * Usage: bench_symbol [LIBJVM] [FRAMES]
 */
#include "fgclock.h"
#include "symbolizer.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NADDR 65536

static double now(void)
{
	return (double)fg_now_ns() / 1e9;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Function start addresses of the ELF file of loaded object `anchor`, made runtime. */
static size_t user_functions(void *anchor, uint64_t **out)
{
	struct elfsym *es;
	uint64_t a, s, *v;
	size_t n = 0;
	Dl_info di;
	int fd;

	if (!dladdr(anchor, &di) || (fd = open(di.dli_fname, O_RDONLY)) < 0)
		return 0;
	if (elfsym_load_fd(fd, NULL, &es) != 0) {
		close(fd);
		return 0;
	}
	close(fd);
	v = calloc(elfsym_count(es), sizeof(*v));
	for (size_t i = 0; v && i < elfsym_count(es); i++) {
		elfsym_at(es, i, &a, &s);
		if (s > 1)
			v[n++] = (uint64_t)(uintptr_t)di.dli_fbase + a + 1 + rnd() % (s - 1);
	}
	elfsym_free(es);
	*out = v;
	return n;
}

static size_t kernel_functions(uint64_t **out)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	size_t n = 0, cap = 1 << 18;
	uint64_t *v = malloc(cap * sizeof(*v));
	char line[512];

	while (f && v && fgets(line, sizeof(line), f) && n < cap) {
		unsigned long long a;
		char type;

		if (sscanf(line, "%llx %c", &a, &type) == 2 && a && (type == 't' || type == 'T'))
			v[n++] = a + 1 + rnd() % 32;
	}
	if (f)
		fclose(f);
	*out = v;
	return n;
}

struct mix {
	const char *name;
	int pct_jvm, pct_libc, pct_kernel;
};

static double run(struct symbolizer *sz, const uint64_t *addrs, size_t frames, uint64_t *resolved)
{
	struct sym_result r;
	pid_t pid = getpid();
	double t0 = now();

	*resolved = 0;
	for (size_t i = 0; i < frames; i++) {
		symbolizer_lookup(sz, pid, addrs[i % NADDR], true, &r);
		*resolved += r.status == SYM_RESOLVED;
	}
	return now() - t0;
}

int main(int argc, char **argv)
{
	const char *jvm =
		argc > 1 ? argv[1] : "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so";
	size_t frames = argc > 2 ? strtoull(argv[2], NULL, 10) : 4000000;
	static const struct mix mixes[] = {
		{ "jvm50/libc20/kernel30", 50, 20, 30 },
		{ "libjvm only", 100, 0, 0 },
		{ "libc only", 0, 100, 0 },
		{ "kernel only", 0, 0, 100 },
	};
	uint64_t *jv = NULL, *lc = NULL, *kn = NULL, *addrs = malloc(NADDR * sizeof(*addrs));
	size_t njv, nlc, nkn;
	struct symbolizer_stats st;
	struct symbolizer *sz;
	void *h;
	double t, base_rate = 0;

	h = dlopen(jvm, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "bench_symbol: cannot dlopen %s: %s (pass LIBJVM)\n", jvm,
			dlerror());
		free(addrs);
		return 1;
	}
	njv = user_functions(dlsym(h, "JNI_CreateJavaVM"), &jv);
	nlc = user_functions((void *)&getpid, &lc);
	nkn = kernel_functions(&kn);
	if (!njv || !nlc || !addrs) {
		fprintf(stderr, "bench_symbol: could not list functions of %s or libc\n", jvm);
		free(jv);
		free(lc);
		free(kn);
		free(addrs);
		dlclose(h);
		return 1;
	}
	printf("functions: libjvm.so %zu, libc.so.6 %zu, kernel %zu; %zu frames per mix, "
	       "%d distinct addresses\n",
	       njv, nlc, nkn, frames, NADDR);

	sz = symbolizer_new(NULL);
	t = now();
	symbolizer_add_process(sz, getpid());
	printf("cold: read maps %.2f ms", (now() - t) * 1e3);
	t = now();
	{
		struct sym_result r;

		symbolizer_lookup(sz, getpid(), jv[0], true, &r);
		printf(", load libjvm.so symbols %.1f ms", (now() - t) * 1e3);
		t = now();
		symbolizer_lookup(sz, getpid(), lc[0], true, &r);
		printf(", libc %.1f ms", (now() - t) * 1e3);
		t = now();
		symbolizer_lookup(sz, getpid(), kn ? kn[0] : 0, true, &r);
		printf(", kallsyms %.1f ms (%s)\n", (now() - t) * 1e3,
		       symbolizer_kernel_status(sz) ? "unavailable" : "ok");
	}

	/* Baseline: dladdr() over the user part of the first mix. */
	for (size_t i = 0; i < NADDR; i++)
		addrs[i] = rnd() % 70 < 50 ? jv[rnd() % njv] : lc[rnd() % nlc];
	{
		size_t n = frames / 4, hit = 0;
		Dl_info di;

		t = now();
		for (size_t i = 0; i < n; i++)
			hit += dladdr((void *)(uintptr_t)(addrs[i % NADDR] - 1), &di) &&
			       di.dli_sname;
		t = now() - t;
		base_rate = (double)n / t;
		printf("baseline dladdr (user frames, .dynsym only): %.2f M frames/s, %.0f ns/frame, "
		       "%.1f%% named\n",
		       base_rate / 1e6, t * 1e9 / (double)n, 100.0 * (double)hit / (double)n);
	}
	for (size_t m = 0; m < sizeof(mixes) / sizeof(mixes[0]); m++) {
		uint64_t resolved;
		double rate;

		if (mixes[m].pct_kernel && !nkn)
			continue;
		for (size_t i = 0; i < NADDR; i++) {
			int x = (int)(rnd() % 100);

			if (x < mixes[m].pct_jvm)
				addrs[i] = jv[rnd() % njv];
			else if (x < mixes[m].pct_jvm + mixes[m].pct_libc)
				addrs[i] = lc[rnd() % nlc];
			else
				addrs[i] = kn[rnd() % nkn];
		}
		run(sz, addrs, NADDR, &resolved); /* warm: demangle once */
		t = run(sz, addrs, frames, &resolved);
		rate = (double)frames / t;
		printf("%-22s %6.2f M frames/s  %5.0f ns/frame  resolved %5.1f%%  "
		       "x%.1f vs dladdr  x%.1f vs 1M/s target\n",
		       mixes[m].name, rate / 1e6, t * 1e9 / (double)frames,
		       100.0 * (double)resolved / (double)frames, rate / base_rate, rate / 1e6);
	}
	symbolizer_stats(sz, &st);
	printf("cache: %u files, %" PRIu64 " symbols, %.1f MiB\n", st.cache.files, st.cache.symbols,
	       (double)st.cache.bytes / (1 << 20));
	symbolizer_free(sz);
	free(jv);
	free(lc);
	free(kn);
	free(addrs);
	return 0;
}
