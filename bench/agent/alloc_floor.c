// SPDX-License-Identifier: MIT
/*
 * alloc_floor.c - the floor of any JVMTI allocation profiler, for bench/agent/alloc.sh only.
 *
 * Turns on SampledObjectAlloc at the heap sampling interval libfgagent.so uses by default
 * (512 KiB; `interval=BYTES`) and, in the callback, does nothing (`stack=0`) or only what every
 * JVMTI profiler that names its frames must do: GetStackTrace of the allocating thread, at most
 * `stack=N` frames (libfgagent.so's default depth is 128), into a buffer on the thread's stack.
 * A JVM run with it measures what HotSpot itself spends sampling and posting the event, and
 * walking the stack; the difference between it and libfgagent.so is the cost of our agent.
 *
 * `copy=BYTES` measures the JVM's side of the other way to a sample's stack, the way a CPU
 * sample gets its own (no walk in the JVM; the host walks the copy): the callback takes its
 * registers (sp, bp, ip) and copies at most BYTES of its thread's stack from sp up (never past
 * the stack's end, asked once per thread) into a free slot of a ring allocated at load
 * (lock-free: one atomic to claim a slot, one to publish it; a busy slot drops the sample). A
 * thread of this agent's own wakes every `nap=MS` (10) and ships the published slots, header
 * and bytes, into the unix stream socket `out=PATH` (a reader outside the JVM drains it, so the
 * JVM pays the writes as a sender pays them), and frees them; without `out=` it frees them
 * unshipped (the callback's part alone).
 *
 * The callback times its own work (two CLOCK_MONOTONIC reads, ~50 ns, in every mode) and at
 * the VM's exit prints to stderr
 *   alloc_floor: N callbacks, median NS ns in the callback; stack depth to its end KiB p50 P90
 * (its median is robust to a loaded machine, where the JVM's CPU per request is not).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <jvmti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEPTH 1024
#define SLOTS 256
#define COPY_MAX (64 * 1024)
#define HIST_NS 20   /* the callback's time histogram: buckets of 20 ns ... */
#define HIST_N 5000  /* ... up to 100 us */
#define DEPTH_N 1024 /* the stack depth histogram: KiB buckets up to 1 MiB */

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved);
JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm);

static jint depth;
static size_t copy_len;
static long nap_ms = 10;
static char out_path[108];

/* One sample's copy: what the host would walk. */
struct slot_head {
	uint64_t sp, bp, ip, len, size;
};

struct slot {
	atomic_int state; /* 0 free, 1 being written, 2 ready */
	struct slot_head h;
	unsigned char *bytes; /* copy_len of them, allocated at load */
};

static struct slot ring[SLOTS];
static atomic_uint_fast64_t head, dropped, shipped;
static atomic_uint_fast64_t calls, hist[HIST_N], depth_kib[DEPTH_N];
static pthread_key_t top_key;

/* The end of the calling thread's stack (its highest address), asked once per thread. */
static uintptr_t stack_top(void)
{
	uintptr_t top = (uintptr_t)pthread_getspecific(top_key);
	pthread_attr_t a;
	void *lo;
	size_t sz;

	if (top)
		return top;
	if (pthread_getattr_np(pthread_self(), &a) != 0)
		return 0;
	if (pthread_attr_getstack(&a, &lo, &sz) == 0)
		top = (uintptr_t)lo + sz;
	pthread_attr_destroy(&a);
	(void)pthread_setspecific(top_key, (void *)top);
	return top;
}

static __attribute__((noinline)) void take_copy(jlong size)
{
	uintptr_t sp, top;
	struct slot *s;
	int free_state = 0;
	size_t n;

	__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
	top = stack_top();
	s = &ring[atomic_fetch_add_explicit(&head, 1, memory_order_relaxed) % SLOTS];
	if (!top || !atomic_compare_exchange_strong(&s->state, &free_state, 1)) {
		atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
		return;
	}
	n = top > sp ? top - sp : 0;
	atomic_fetch_add_explicit(&depth_kib[n / 1024 < DEPTH_N ? n / 1024 : DEPTH_N - 1], 1,
				  memory_order_relaxed);
	if (n > copy_len)
		n = copy_len;
	s->h.sp = sp;
	s->h.bp = (uint64_t)(uintptr_t)__builtin_frame_address(0);
	s->h.ip = (uint64_t)(uintptr_t)__builtin_return_address(0);
	s->h.len = n;
	s->h.size = (uint64_t)size;
	memcpy(s->bytes, (const void *)sp, n);
	atomic_store_explicit(&s->state, 2, memory_order_release);
}

/* A stream socket connected to out_path, or -1. */
static int out_open(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd, sz = 1 << 20;

	if (!out_path[0])
		return -1;
	memcpy(a.sun_path, out_path, sizeof(out_path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The sender: ready slots shipped in the ring's order, a nap when none is. */
static void *sender(void *arg)
{
	int fd = out_open();
	uint64_t tail = 0;

	(void)arg;
	for (;;) {
		struct slot *s = &ring[tail % SLOTS];
		struct timespec nap = { nap_ms / 1000, (nap_ms % 1000) * 1000000L };
		int st = atomic_load_explicit(&s->state, memory_order_acquire);

		if (st == 0 && tail < atomic_load_explicit(&head, memory_order_relaxed)) {
			tail++; /* a dropped claim: nothing to ship */
			continue;
		}
		if (st != 2) {
			nanosleep(&nap, NULL);
			continue;
		}
		if (fd >= 0) {
			struct iovec iov[2] = { { &s->h, sizeof(s->h) },
						{ s->bytes, (size_t)s->h.len } };

			if (writev(fd, iov, 2) < 0) {
				close(fd);
				fd = -1;
			}
		}
		atomic_store_explicit(&s->state, 0, memory_order_release);
		atomic_fetch_add_explicit(&shipped, 1, memory_order_relaxed);
		tail++;
	}
	return NULL;
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void JNICALL on_alloc(jvmtiEnv *e, JNIEnv *jni, jthread t, jobject o, jclass c, jlong size)
{
	jvmtiFrameInfo frames[MAX_DEPTH];
	jint n = 0;
	uint64_t t0 = mono_ns(), d;

	(void)jni, (void)o, (void)c;
	if (copy_len)
		take_copy(size);
	else if (depth > 0)
		(void)(*e)->GetStackTrace(e, t, 0, depth, frames, &n);
	d = (mono_ns() - t0) / HIST_NS;
	atomic_fetch_add_explicit(&hist[d < HIST_N ? d : HIST_N - 1], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
}

/* The bucket at which a histogram's count reaches pct% of its total. */
static size_t hist_at(atomic_uint_fast64_t *h, size_t n, uint64_t total, unsigned pct)
{
	uint64_t c = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		c += atomic_load(&h[i]);
		if (c * 100 >= total * pct)
			break;
	}
	return i;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	uint64_t n = atomic_load(&calls), nd = 0;

	(void)vm;
	for (size_t i = 0; i < DEPTH_N; i++)
		nd += atomic_load(&depth_kib[i]);
	fprintf(stderr, "alloc_floor: %llu callbacks, median %zu ns in the callback",
		(unsigned long long)n, hist_at(hist, HIST_N, n, 50) * HIST_NS + HIST_NS / 2);
	if (nd)
		fprintf(stderr,
			"; stack depth to its end KiB p50 %zu p90 %zu; %llu shipped, %llu dropped",
			hist_at(depth_kib, DEPTH_N, nd, 50) + 1,
			hist_at(depth_kib, DEPTH_N, nd, 90) + 1,
			(unsigned long long)atomic_load(&shipped),
			(unsigned long long)atomic_load(&dropped));
	fprintf(stderr, "\n");
}

/* "interval=BYTES,stack=N,copy=BYTES,nap=MS,out=PATH", any of them (out= last: the rest of the
 * string is its path); 0 on success. */
static int parse(const char *options, jint *interval)
{
	const char *p = options;

	while (p && *p) {
		char *end;
		long v;

		if (strncmp(p, "out=", 4) == 0) {
			if (strlen(p + 4) >= sizeof(out_path) || !p[4])
				return -1;
			strcpy(out_path, p + 4);
			return 0;
		}
		if (strncmp(p, "interval=", 9) == 0) {
			v = strtol(p + 9, &end, 10);
			if (end == p + 9 || v < 1 || v > (1L << 30))
				return -1;
			*interval = (jint)v;
		} else if (strncmp(p, "stack=", 6) == 0) {
			v = strtol(p + 6, &end, 10);
			if (end == p + 6 || v < 0 || v > MAX_DEPTH)
				return -1;
			depth = (jint)v;
		} else if (strncmp(p, "copy=", 5) == 0) {
			v = strtol(p + 5, &end, 10);
			if (end == p + 5 || v < 0 || v > COPY_MAX)
				return -1;
			copy_len = (size_t)v;
		} else if (strncmp(p, "nap=", 4) == 0) {
			v = strtol(p + 4, &end, 10);
			if (end == p + 4 || v < 1 || v > 1000)
				return -1;
			nap_ms = v;
		} else {
			return -1;
		}
		if (*end != ',' && *end != '\0')
			return -1;
		p = *end ? end + 1 : end;
	}
	return 0;
}

/* The ring and its sender, for copy=. 0 on success. */
static int copy_start(void)
{
	pthread_t th;

	if (pthread_key_create(&top_key, NULL) != 0)
		return -1;
	for (int i = 0; i < SLOTS; i++)
		if (!(ring[i].bytes = malloc(copy_len)))
			return -1;
	if (pthread_create(&th, NULL, sender, NULL) != 0)
		return -1;
	(void)pthread_setname_np(th, "fg-sender"); /* counted as the agent's by alloc.sh */
	return 0;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	jint interval = 512 * 1024;
	jvmtiCapabilities caps;
	jvmtiEventCallbacks cb;
	jvmtiEnv *jvmti;

	(void)reserved;
	if (parse(options, &interval) != 0)
		return JNI_ERR;
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_11) != JNI_OK)
		return JNI_ERR;
	if (copy_len && copy_start() != 0)
		return JNI_ERR;
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_sampled_object_alloc_events = 1;
	memset(&cb, 0, sizeof(cb));
	cb.SampledObjectAlloc = on_alloc;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE ||
	    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE ||
	    (*jvmti)->SetHeapSamplingInterval(jvmti, interval) != JVMTI_ERROR_NONE ||
	    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE,
					       JVMTI_EVENT_SAMPLED_OBJECT_ALLOC,
					       NULL) != JVMTI_ERROR_NONE)
		return JNI_ERR;
	return JNI_OK;
}
