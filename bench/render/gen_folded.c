// SPDX-License-Identifier: MIT
/*
 * gen_folded.c - deterministic generator of Java-like folded stacks for the render benchmark.
 *
 *   gen_folded SIZE_MB UNIQUE_STACKS [SEED] > out.folded
 *
 * Writes UNIQUE_STACKS distinct stacks of depth 20-80, grown as a call tree (each new stack
 * shares a prefix with an earlier one, as real profiles do), each once in shuffled order, then
 * random repeats until SIZE_MB megabytes. Frames look like async-profiler/perf-map output:
 * `com/example/svc3/OrderService12.handle7_[j]`, some `_[i]` inlined, native JVM frames and
 * `_[k]` kernel frames at the leaves. Invariant: same arguments, same bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t below(uint32_t n)
{
	return (uint32_t)(next() % n);
}

#define NJAVA 20000
#define NNATIVE 300
#define NKERNEL 120

static char *names[NJAVA + NNATIVE + NKERNEL];

static void make_names(void)
{
	static const char *const pkgs[] = { "com/example/shop",
					    "com/example/billing",
					    "org/springframework/web/servlet",
					    "io/netty/channel",
					    "java/util/concurrent",
					    "jdk/internal/misc",
					    "org/apache/kafka/clients",
					    "com/fasterxml/jackson/databind" };
	static const char *const cls[] = {
		"OrderService",	 "PaymentHandler",     "DispatcherServlet",
		"NioEventLoop",	 "ThreadPoolExecutor", "Unsafe",
		"KafkaConsumer", "ObjectMapper",       "HashMap",
		"Repository"
	};
	static const char *const meth[] = {
		"handle",	"process", "invoke", "run",  "apply",
		"lambda$run$0", "get",	   "put",    "read", "serialize"
	};
	static const char *const nat[] = { "Interpreter",
					   "call_stub",
					   "JavaCalls::call_helper",
					   "G1CollectedHeap::do_collection_pause",
					   "libc.so.6`__memmove_avx_unaligned",
					   "Monitor::wait",
					   "SharedRuntime::resolve_static_call_C",
					   "[unknown]" };
	static const char *const kern[] = { "entry_SYSCALL_64_after_hwframe",
					    "do_syscall_64",
					    "__x64_sys_futex",
					    "futex_wait",
					    "schedule",
					    "__schedule",
					    "tcp_sendmsg",
					    "copy_user_enhanced_fast_string" };
	char buf[256];

	for (int i = 0; i < NJAVA; i++) {
		snprintf(buf, sizeof(buf), "%s/svc%u/%s%u.%s%u_[%c]", pkgs[below(8)], below(40),
			 cls[below(10)], below(100), meth[below(10)], below(20),
			 below(5) ? 'j' : 'i');
		names[i] = strdup(buf);
	}
	for (int i = 0; i < NNATIVE; i++) {
		snprintf(buf, sizeof(buf), "%s%s%d", nat[below(8)], i ? "_" : "", i);
		names[NJAVA + i] = strdup(buf);
	}
	for (int i = 0; i < NKERNEL; i++) {
		snprintf(buf, sizeof(buf), "%s%s%d_[k]", kern[below(8)], i ? "." : "", i);
		names[NJAVA + NNATIVE + i] = strdup(buf);
	}
}

static uint32_t frame(uint32_t depth, uint32_t maxdepth)
{
	if (depth < 3)
		return NJAVA + below(20); /* thread entry: a few native roots */
	if (depth + 4 >= maxdepth && below(3) == 0)
		return NJAVA + NNATIVE + below(NKERNEL);
	if (below(12) == 0)
		return NJAVA + below(NNATIVE);
	return below(NJAVA);
}

/* Open-addressing set of 64-bit stack hashes, to keep stacks unique. */
static uint64_t *set;
static size_t set_mask;

static int insert_hash(uint64_t h)
{
	size_t i = h & set_mask;

	h |= 1;
	for (; set[i]; i = (i + 1) & set_mask)
		if (set[i] == h)
			return 0;
	set[i] = h;
	return 1;
}

int main(int argc, char **argv)
{
	uint64_t size, written = 0;
	uint32_t nuniq, *off, *len, *fr, *perm;
	size_t used = 0;
	char *line;

	if (argc < 3) {
		fprintf(stderr, "usage: gen_folded SIZE_MB UNIQUE_STACKS [SEED]\n");
		return 64;
	}
	size = strtoull(argv[1], NULL, 10) << 20;
	nuniq = (uint32_t)strtoul(argv[2], NULL, 10);
	if (argc > 3)
		rng ^= strtoull(argv[3], NULL, 10);
	if (!nuniq || nuniq > 10000000)
		return 64;
	make_names();
	off = malloc(nuniq * sizeof(*off));
	len = malloc(nuniq * sizeof(*len));
	fr = malloc((size_t)nuniq * 80 * sizeof(*fr));
	perm = malloc(nuniq * sizeof(*perm));
	for (set_mask = 1; set_mask < (size_t)nuniq * 4; set_mask <<= 1)
		;
	set = calloc(set_mask, sizeof(*set));
	set_mask--;
	line = malloc(80 * 256 + 64);
	if (!off || !len || !fr || !perm || !set || !line)
		return 1;
	for (uint32_t i = 0; i < nuniq;) {
		uint32_t d = 20 + below(61), keep = 0, *s = fr + used;
		uint64_t h = 1469598103934665603ull;

		if (i > 0 && below(20)) {
			uint32_t p = below(i);

			keep = len[p] / 3 + below(len[p] - len[p] / 3);
			if (keep >= d)
				keep = d - 1;
			memcpy(s, fr + off[p], keep * sizeof(*s));
		}
		for (uint32_t k = keep; k < d; k++)
			s[k] = frame(k, d);
		for (uint32_t k = 0; k < d; k++)
			h = (h ^ s[k]) * 1099511628211ull;
		if (!insert_hash(h))
			continue;
		off[i] = (uint32_t)used;
		len[i] = d;
		used += d;
		perm[i] = i;
		i++;
	}
	for (uint32_t i = nuniq - 1; i > 0; i--) {
		uint32_t j = below(i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (uint64_t n = 0; written < size || n < nuniq; n++) {
		uint32_t s = n < nuniq ? perm[n] : below(nuniq);
		char *p = line;

		for (uint32_t k = 0; k < len[s]; k++) {
			size_t l = strlen(names[fr[off[s] + k]]);

			if (k)
				*p++ = ';';
			memcpy(p, names[fr[off[s] + k]], l);
			p += l;
		}
		p += sprintf(p, " %u\n", 1 + below(below(10) ? 50 : 1000));
		fwrite(line, 1, (size_t)(p - line), stdout);
		written += (uint64_t)(p - line);
	}
	return fflush(stdout) ? 1 : 0;
}
