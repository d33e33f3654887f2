// SPDX-License-Identifier: MIT
/*
 * agent.c - libfgagent.so entry points: parse options, wire queue -> sender -> link, register
 * the JVMTI callbacks, and stop the sender when the VM dies. Everything else lives in modules.
 *
 * Invariant: after Agent_OnLoad succeeded nothing here can stop, block or crash the JVM because
 * of the environment (no socket directory, no collector, no permission, collector gone): those
 * only keep records from leaving the process. The only refusal is a malformed option string.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <jvmti.h>

#include "codeheap.h"
#include "codelines.h"
#include "events.h"
#include "evctl.h"
#include "evjvmti.h"
#include "stackring.h"
#include "fgclock.h"
#include "fgproto.h"
#include "intern.h"
#include "link.h"
#include "methodset.h"
#include "nng_stdio.h"
#include "options.h"
#include "queue.h"
#include "samplefix.h"
#include "scratch.h"
#include "sender.h"
#include "service.h"
#include "tables.h"
#include "unloadcount.h"
#include "vmflags.h"
#include "vmlayout.h"

#define STOP_WAIT_MS 300	   /* how long VM death waits for the last records to leave */
#define FREED_RING_SLOTS 16384u	   /* freed tags waiting for the events worker (256 KiB) */
#define LIVE_BYTES_PER_OBJECT 512u /* maxmem= / this: objects the live set tracks at most */

#ifdef FG_AGENT_BENCH
#include "benchstat.h"
#define BENCH_BEGIN() uint64_t bench_t0 = fg_now_ns(), bench_c0 = benchstat_cpu_ns()
#define BENCH_END(kind) benchstat_add(kind, fg_now_ns() - bench_t0, benchstat_cpu_ns() - bench_c0)
#define BENCH_CODE(kind, addr) benchstat_code(kind, (uint64_t)(uintptr_t)(addr), bench_t0)
#else
#define BENCH_BEGIN() ((void)0)
#define BENCH_END(kind) ((void)0)
#define BENCH_CODE(kind, addr) ((void)0)
#endif

/*
 * The GC clock the collector reads from outside (VM_LAYOUT's FGP_VML_GC_CLOCK_*): when the last
 * stop-the-world GC started and ended. Class unloading happens inside those pauses, so a name
 * read after a GC that started after a sample may belong to reused memory.
 */
static struct {
	_Atomic uint64_t start_ns, end_ns;
} gc_clock;

/*
 * The slot the collector reads (VM_LAYOUT's FGP_VML_UNLOAD_SLOT_*): 0 until VMInit found the
 * JVM's count of unloaded classes (unloadcount.h), then its address. Written once.
 */
static _Atomic uint64_t unload_slot;

static struct {
	JavaVM *vm;
	jvmtiEnv *jvmti;
	struct options opt;
	struct queue *q;
	struct intern *names;	 /* NULL: names travel inline */
	struct codelines *lines; /* NULL: no line numbers (no capability, no memory) */
	struct sender *s;
	struct link *l;
	struct codeheap ch;	/* written once in Agent_OnLoad, before any event is enabled */
	struct tables tabs;	/* tables on demand (tables.h) */
	struct evctl evs;	/* alloc, live and lock events on demand (evctl.h) */
	uint32_t ev_caps;	/* FGP_EVM_* this JVM can run (0: never offered) */
	struct stackring *ring; /* allocstack=copy: allocation samples' stack copies */
	bool on_demand;		/* else the tables are always on */
	atomic_bool live;	/* VMInit has run: a thread may attach to the VM */
	atomic_bool stopped;
} agent;

/* A transport for when nng could not even open a socket: records stay in the table. */
static int null_send(void *link, const uint8_t *buf, size_t len)
{
	(void)link;
	(void)buf;
	(void)len;
	return -ENOTCONN;
}

static uint64_t null_state(void *link)
{
	(void)link;
	return 0;
}

static void null_reset(void *link)
{
	(void)link;
}

static const struct link_ops null_ops = { .send = null_send,
					  .state = null_state,
					  .reset = null_reset };

/*
 * The tables worker while the VM announces the live code again (generate_loads): its loads
 * are flagged FGP_REC_AGAIN. (No thread-local variable: it would need the dynamic loader.)
 */
static pthread_t round_thread;
static atomic_bool round_running;
static atomic_uint round_loads; /* loads announced in the current round */

static bool in_round(void)
{
	return atomic_load(&round_running) && pthread_equal(pthread_self(), round_thread);
}

/*
 * CompiledMethodLoad, top to bottom: one load context, one entry point (events.h). Outside a
 * tables round nobody profiles this JVM: the name and the range, all a perf map needs.
 */
static void JNICALL on_code_load(jvmtiEnv *jvmti, jmethodID method, jint code_size,
				 const void *code_addr, jint map_length,
				 const jvmtiAddrLocationMap *map, const void *compile_info)
{
	struct events_load_ctx ctx = {
		.q = agent.q,
		.names = agent.names,
		.jvmti = jvmti,
		.signatures = agent.opt.signatures,
		.method = method,
		.code_size = code_size,
		.code_addr = code_addr,
		.ts = fg_now_ns(),
	};
	bool tables = tables_begin(&agent.tabs);
	struct fgp_code_frame f;
	struct methodset set;
	struct scratch sc;

	BENCH_BEGIN();
	(void)map_length;
	(void)map;
	if (in_round()) { /* the tables worker's round: live code announced again */
		atomic_fetch_add(&round_loads, 1);
		ctx.flags = FGP_REC_AGAIN;
	}
	/*
	 * No JNIEnv (ctx.jni stays NULL), so the class references the names take are not deleted
	 * one by one: HotSpot posts CompiledMethodLoad inside a JNI handle block of its own
	 * (JvmtiEventMark, JDK 8 to 26, the tables worker's GenerateEvents included) and frees
	 * it when the callback returns. GetEnv and DeleteLocalRef were a tenth of the callback.
	 */
	/* The frame facts are read first: the CODE_FRAME then follows its CODE_LOAD at once, and
	 * a collector never sees the code for long without them. */
	if (tables && events_frame_read(&agent.ch, code_addr, true, &f) == 0)
		ctx.frame = &f;
	if (tables)
		ctx.lines = agent.lines;
	/* One methodset and one walk over the compile's pcs for the inline and the line table. */
	scratch_begin(&sc);
	methodset_of_scratch(&set, tables ? compile_info : NULL, &sc);
	ctx.set = &set;
	events_code_load(&ctx);
	methodset_fini(&set);
	scratch_end(&sc);
	if (!tables)
		tables_lean_done(&agent.tabs);
	if (!ctx.flags)
		BENCH_CODE(0, code_addr);
	BENCH_END(0);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The tables worker (tables.h): on a thread of its own, attached to the VM as a daemon the first
 * time, the VM announces every live compiled method again through on_code_load.
 */
static int generate_loads(void *arg)
{
	JavaVMAttachArgs a = { JNI_VERSION_1_6, (char *)"fgagent tables", NULL };
	JNIEnv *jni = NULL;
	uint64_t t0, c0;
	jvmtiError err;

	(void)arg;
	if (atomic_load(&agent.stopped))
		return -ECANCELED;
	/* Attaching a thread while the VM is still being created crashes HotSpot (SIGFPE in
	 * ThreadLocalAllocBuffer::initial_desired_size, JDK 17 and 25): wait for VMInit. */
	if (!atomic_load(&agent.live))
		return -EAGAIN;
	if ((*agent.vm)->GetEnv(agent.vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK &&
	    (*agent.vm)->AttachCurrentThreadAsDaemon(agent.vm, (void **)&jni, &a) != JNI_OK)
		return -EAGAIN; /* not live yet */
	round_thread = pthread_self();
	atomic_store(&round_loads, 0);
	t0 = fg_now_ns();
	c0 = thread_cpu_ns();
	atomic_store(&round_running, true);
	err = (*agent.jvmti)->GenerateEvents(agent.jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
	atomic_store(&round_running, false);
	if (err == JVMTI_ERROR_NONE && agent.opt.log >= OPTIONS_LOG_INFO)
		fprintf(stderr,
			"fgagent: tables on: %u compiled methods announced again in %.1f ms (%.1f ms "
			"of CPU)\n",
			atomic_load(&round_loads), (double)(fg_now_ns() - t0) / 1e6,
			(double)(thread_cpu_ns() - c0) / 1e6);
	if (err == JVMTI_ERROR_WRONG_PHASE)
		return atomic_load(&agent.stopped) ? -ECANCELED : -EAGAIN;
	return err == JVMTI_ERROR_NONE ? 0 : -EIO;
}

/* The tables worker leaves: a thread attached to the VM detaches before it exits. */
static void leave_vm(void *arg)
{
	JNIEnv *jni = NULL;

	(void)arg;
	if ((*agent.vm)->GetEnv(agent.vm, (void **)&jni, JNI_VERSION_1_6) == JNI_OK)
		(*agent.vm)->DetachCurrentThread(agent.vm);
}

static void announce_tables(void *arg, bool on, uint64_t ts)
{
	(void)arg;
	events_tables(agent.q, on, ts);
}

static void on_want(void *arg, bool want)
{
	(void)arg;
	tables_want(&agent.tabs, want);
}

static void on_events(void *arg, const struct want_events *w, uint64_t conn)
{
	(void)arg;
	evctl_want(&agent.evs, w, conn);
}

/*
 * May the tables worker ask the VM to announce its live code again? JVMTI's own version is the
 * JDK's feature release from JDK 9 on (1.2 on JDK 8).
 */
static bool regenerate_is_safe(jvmtiEnv *jvmti)
{
	jint v = 0;

	if ((*jvmti)->GetVersionNumber(jvmti, &v) != JVMTI_ERROR_NONE)
		return false;
	return ((v & JVMTI_VERSION_MASK_MAJOR) >> JVMTI_VERSION_SHIFT_MAJOR) >= 17;
}

/* The HELLO's token: random, so no two agents on a host share one. */
static uint64_t new_token(void)
{
	uint64_t t = 0;

	if (getrandom(&t, sizeof(t), GRND_NONBLOCK) != (ssize_t)sizeof(t))
		t = fg_now_ns() ^ ((uint64_t)getpid() << 32);
	return t ? t : 1;
}

static void JNICALL on_code_unload(jvmtiEnv *jvmti, jmethodID method, const void *code_addr)
{
	BENCH_BEGIN();
	(void)jvmti;
	(void)method; /* may already be invalid: never used */
	events_code_unload(agent.q, code_addr, fg_now_ns());
	BENCH_END(1);
}

static void JNICALL on_dynamic_code(jvmtiEnv *jvmti, const char *name, const void *address,
				    jint length)
{
	struct fgp_code_frame f;
	bool framed;

	BENCH_BEGIN();
	(void)jvmti;
	framed = length > 0 && events_frame_read(&agent.ch, address, false, &f) == 0;
	events_dynamic_code(agent.q, name, address, length, fg_now_ns());
	if (framed)
		events_frame_push(agent.q, &f);
	BENCH_CODE(2, address);
	BENCH_END(2);
}

/* Runs in the VM thread at a safepoint: only a clock read and two stores. */
static void JNICALL on_gc_start(jvmtiEnv *jvmti)
{
	(void)jvmti;
	atomic_store(&gc_clock.start_ns, fg_now_ns());
}

static void JNICALL on_gc_finish(jvmtiEnv *jvmti)
{
	(void)jvmti;
	atomic_store(&gc_clock.end_ns, fg_now_ns());
}

/* allocstack=copy or auto: what the ring took, or that alloc went on with the ring asked and
 * it could not be used (info). */
static void log_ring(void)
{
	const char *how = agent.opt.alloc_copy ? "copy" : "auto";
	const void *base;
	uint64_t size, copied = 0, fellback = 0;

	if (!agent.ring)
		return;
	if (evjvmti_ring(&base, &size, &copied, &fellback)) {
		if (agent.opt.log >= OPTIONS_LOG_INFO)
			fprintf(stderr,
				"fgagent: allocstack=%s: %llu allocation samples copied into the "
				"ring, %llu without a Java frame anchor took GetStackTrace\n",
				how, (unsigned long long)copied, (unsigned long long)fellback);
	} else if (evjvmti_ring_asked() && agent.opt.log >= OPTIONS_LOG_INFO) {
		fprintf(stderr,
			"fgagent: allocstack=%s: the ring was not used (the JVM runs ZGC or "
			"Shenandoah, or its thread layout is not known): stacks were taken by "
			"GetStackTrace\n",
			how);
	}
}

/* What the events lost, by cause, when any was lost (log=warn), and what they sent (info). */
static void log_events(void)
{
	struct evctl_stats st;
	uint64_t lost = 0;

	if (!agent.ev_caps)
		return;
	evctl_get_stats(&agent.evs, &st);
	for (int i = 0; i < EVCTL_DROP_NCAUSES; i++)
		lost += st.drops[i];
	if ((lost && agent.opt.log >= OPTIONS_LOG_WARN) || agent.opt.log >= OPTIONS_LOG_INFO)
		fprintf(stderr,
			"fgagent: events: %llu sent, %llu freed tags, %llu surplus allocation "
			"samples of JDK 11's sampler left out; lost %llu (queue %llu, no stack %llu, "
			"no name %llu, no class %llu, live set full %llu, freed tags %llu)\n",
			(unsigned long long)st.events, (unsigned long long)st.freed,
			(unsigned long long)st.thinned, (unsigned long long)lost,
			(unsigned long long)st.drops[EVCTL_DROP_QUEUE],
			(unsigned long long)st.drops[EVCTL_DROP_NO_STACK],
			(unsigned long long)st.drops[EVCTL_DROP_NO_NAME],
			(unsigned long long)st.drops[EVCTL_DROP_NO_CLASS],
			(unsigned long long)st.drops[EVCTL_DROP_LIVE_FULL],
			(unsigned long long)st.drops[EVCTL_DROP_FREE_LOST]);
	log_ring();
}

static void stop_agent(void)
{
	struct sender_stats st;

	if (atomic_exchange(&agent.stopped, true) || agent.s == NULL)
		return;
	/* A worker still inside the VM is left to the process's exit. */
	(void)tables_stop(&agent.tabs, 100);
	(void)evctl_stop(&agent.evs, 100);
	if (sender_stop(agent.s, STOP_WAIT_MS) != 0)
		return; /* still inside nng: leave it to process exit rather than free under it */
	link_close(agent.l);
	agent.l = NULL;
	sender_get_stats(agent.s, &st);
	if (agent.opt.log >= OPTIONS_LOG_WARN && (st.queue_dropped || st.table_full))
		fprintf(stderr,
			"fgagent: dropped %llu code events (queue full) and kept %llu blobs out of "
			"the replay table (table full); raise maxmem= (now %llu bytes)\n",
			(unsigned long long)st.queue_dropped, (unsigned long long)st.table_full,
			agent.opt.maxmem);
	if (agent.opt.log >= OPTIONS_LOG_INFO)
		fprintf(stderr,
			"fgagent: %llu connections, %llu records sent, %llu replayed, %llu resets\n",
			(unsigned long long)st.connections, (unsigned long long)st.records_sent,
			(unsigned long long)st.replayed, (unsigned long long)st.resets);
	log_events();
	/* The queue stays: a callback still running on another thread may push into it. */
#ifdef FG_AGENT_BENCH
	benchstat_dump();
#endif
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	uint64_t count;

	(void)jni;
	(void)thread;
	/* PerfData memory exists from here on. Without it the collector keeps its GC clock rule. */
	if (unloadcount_find((const void *)(*jvmti)->GetVersionNumber, &count) == 0)
		atomic_store(&unload_slot, count);
	atomic_store(&agent.live, true);
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
	(void)jvmti;
	(void)jni;
	stop_agent();
}

static void on_fork_child(void)
{
	link_forked(); /* nng aborts in a forked child: never let the child touch it */
}

static void kick(void *arg)
{
	queue_kick(arg);
}

/* The JVM version string for HELLO, or "unknown"; the caller frees it. */
static char *jvm_version(jvmtiEnv *jvmti)
{
	char *v = NULL, *copy;

	if ((*jvmti)->GetSystemProperty(jvmti, "java.vm.version", &v) != JVMTI_ERROR_NONE)
		return strdup("unknown");
	copy = strdup(v);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)v);
	return copy;
}

/*
 * The JVM's release as the VM itself says it in every phase: java.vm.specification.version
 * ("1.8", "11", "17"; JDK 8's java.vm.version is HotSpot's "25.x"). NULL when unknown; the
 * caller frees it.
 */
static char *jvm_release(jvmtiEnv *jvmti)
{
	char *v = NULL, *copy;

	if ((*jvmti)->GetSystemProperty(jvmti, "java.vm.specification.version", &v) !=
	    JVMTI_ERROR_NONE)
		return NULL;
	copy = strdup(v);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)v);
	return copy;
}

/*
 * The service label: the service= option, else OTEL_SERVICE_NAME, else the launcher's main
 * class or jar (sun.java.command, which the launcher passes as a -D property: readable in the
 * OnLoad phase already, so the first HELLO carries it).
 */
static void pick_service(jvmtiEnv *jvmti, char *out, size_t cap)
{
	char *cmd = NULL;

	if (agent.opt.service[0] || getenv("OTEL_SERVICE_NAME")) {
		service_pick(agent.opt.service, getenv("OTEL_SERVICE_NAME"), NULL, out, cap);
		if (out[0])
			return;
	}
	if ((*jvmti)->GetSystemProperty(jvmti, "sun.java.command", &cmd) != JVMTI_ERROR_NONE)
		cmd = NULL;
	service_pick(NULL, NULL, cmd, out, cap);
	if (cmd)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)cmd);
}

static jint setup_jvmti(jvmtiEnv *jvmti)
{
	jvmtiCapabilities caps;
	union evjvmti_callbacks cb;
	jvmtiError err;
	static const jvmtiEvent events[] = {
		JVMTI_EVENT_COMPILED_METHOD_LOAD,
		JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
		JVMTI_EVENT_DYNAMIC_CODE_GENERATED,
		JVMTI_EVENT_VM_INIT,
		JVMTI_EVENT_VM_DEATH,
		JVMTI_EVENT_GARBAGE_COLLECTION_START,
		JVMTI_EVENT_GARBAGE_COLLECTION_FINISH,
	};

	memset(&caps, 0, sizeof(caps));
	caps.can_generate_compiled_method_load_events = 1;
	caps.can_generate_garbage_collection_events = 1;
	if ((err = (*jvmti)->AddCapabilities(jvmti, &caps)) != JVMTI_ERROR_NONE) {
		fprintf(stderr, "fgagent: JVMTI AddCapabilities(compiled method load) failed: %d\n",
			err);
		return JNI_ERR;
	}
	/* Line numbers of compiled code (CODE_LINES) are a bonus: without them, none are sent. */
	memset(&caps, 0, sizeof(caps));
	caps.can_get_line_numbers = 1;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
		codelines_free(agent.lines);
		agent.lines = NULL;
	}
	memset(&cb, 0, sizeof(cb));
	cb.cb.CompiledMethodLoad = on_code_load;
	cb.cb.CompiledMethodUnload = on_code_unload;
	cb.cb.DynamicCodeGenerated = on_dynamic_code;
	cb.cb.VMInit = on_vm_init;
	cb.cb.VMDeath = on_vm_death;
	cb.cb.GarbageCollectionStart = on_gc_start;
	cb.cb.GarbageCollectionFinish = on_gc_finish;
	evjvmti_callbacks(&cb, agent.ev_caps);
	if ((err = (*jvmti)->SetEventCallbacks(jvmti, &cb.cb, sizeof(cb))) != JVMTI_ERROR_NONE) {
		fprintf(stderr, "fgagent: JVMTI SetEventCallbacks failed: %d\n", err);
		return JNI_ERR;
	}
	/* Buffers exist already: DynamicCodeGenerated fires before VM init. */
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		err = (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL);
		if (err != JVMTI_ERROR_NONE) {
			fprintf(stderr, "fgagent: JVMTI SetEventNotificationMode(%d) failed: %d\n",
				events[i], err);
			return JNI_ERR;
		}
	}
	return JNI_OK;
}

/*
 * Alloc, live and lock events: the capabilities (OnLoad only), unless events=false or names
 * cannot be interned (event frames are interned names), and the switch. 0 or -ENOMEM.
 */
static int setup_events(void)
{
	static const struct evctl_ops ops = { .apply = evjvmti_apply, .leave = evjvmti_leave };
	uint64_t live_max = agent.opt.maxmem / LIVE_BYTES_PER_OBJECT;
	int rv;

	if (!agent.q)
		return -ENOMEM; /* OnLoad fails anyway */
	agent.ev_caps = agent.opt.events && agent.names ? evjvmti_caps(agent.jvmti) : 0;
	/* allocstack=copy or auto: allocation samples' stacks may go to the ring (made below). */
	if ((agent.ev_caps & FGP_EVM_ALLOC) && (agent.opt.alloc_copy || agent.opt.alloc_auto))
		agent.ev_caps |= FGP_EVM_RING;
	rv = evctl_init(&agent.evs, agent.q, &ops, agent.ev_caps, agent.opt.depth, live_max,
			FREED_RING_SLOTS);
	if (rv != 0)
		agent.ev_caps = 0; /* capabilities held, never used: events are never turned on */
	return rv;
}

/*
 * Open the link, create and start the sender, all with every signal blocked so that nng's
 * threads and ours inherit that mask and never run the JVM's signal handlers. A socket that
 * cannot even be opened only means nothing leaves the process.
 */
static int start_sender(const struct sender_hello *hello, size_t table_budget)
{
	const struct link_ops *ops = &link_nng_ops;
	sigset_t all, old;
	int rv;

	nng_stdio_init();
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rv = link_open(&agent.l, agent.opt.socket, NULL, kick, agent.q);
	if (rv != 0) {
		if (agent.opt.log >= OPTIONS_LOG_WARN)
			fprintf(stderr,
				"fgagent: cannot open a socket for %s (%s); not streaming\n",
				agent.opt.socket, strerror(-rv));
		agent.l = NULL;
		ops = &null_ops;
	}
	agent.s = sender_new(agent.q, table_budget, hello, ops, agent.l);
	if (agent.s) {
		sender_set_intern(agent.s, agent.names);
		if (agent.on_demand)
			sender_on_want(agent.s, on_want, NULL);
		if (agent.ev_caps)
			sender_on_events(agent.s, on_events, NULL);
	}
	rv = agent.s ? sender_start(agent.s) : -ENOMEM;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rv;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	char err[512];
	struct sender_hello hello = { 0 };
	struct fgp_vm_layout layout;
	struct tables_ops tops = { generate_loads, announce_tables, leave_vm, NULL, NULL };
	uint8_t layout_rec[512];
	int layout_len;
	char *version, *release, service[SERVICE_MAX + 1];
	struct options_budget budget;
	bool sampler_fix;
	int rv;

	(void)reserved;
	if (options_parse(options, &agent.opt, err, sizeof(err)) != 0) {
		fprintf(stderr, "fgagent: %s\n", err);
		return JNI_ERR;
	}
	agent.vm = vm;
	if ((*vm)->GetEnv(vm, (void **)&agent.jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
		fprintf(stderr, "fgagent: this JVM offers no JVMTI 1.2 environment\n");
		return JNI_ERR;
	}
	options_budget(&agent.opt, &budget); /* the one split of maxmem= (options.h) */
	agent.q = queue_new(budget.queue);
	/* Without interned names (out of memory) names simply travel inline. */
	agent.names = intern_new(budget.names);
	agent.lines = codelines_new(budget.lines);
	hello.pid = (uint32_t)getpid();
	vmflags_read((const void *)(*agent.jvmti)->GetVersionNumber, &hello.flags);
	if (agent.opt.signatures)
		hello.flags |= FGP_HELLO_SIGNATURES;
	/* Tables on demand need GenerateEvents, which crashed JVMs before JDK 17 (JDK-8173361,
	 * JDK-8212160, JDK-8268524): older JVMs build every table all the time instead. */
	agent.on_demand = regenerate_is_safe(agent.jvmti);
	if (agent.on_demand)
		hello.flags |= FGP_HELLO_TABLES_ON_DEMAND;
	hello.token = new_token();
	if (setup_events() == 0 && agent.ev_caps) {
		hello.flags |= FGP_HELLO_EVENTS;
		/* What the JVM does not offer (JDK 8 has no SampledObjectAlloc), so that a
		 * collector asking for it says so at once. */
		if (!(agent.ev_caps & FGP_EVM_ALLOC))
			hello.flags |= FGP_HELLO_NO_ALLOC;
		if (!(agent.ev_caps & FGP_EVM_LOCK))
			hello.flags |= FGP_HELLO_NO_LOCK;
	}
	version = jvm_version(agent.jvmti);
	hello.jvm_version = version;
	/* How to name interpreted frames from outside: sent after every HELLO. A JVM whose
	 * tables we cannot read gets a layout without capabilities (the collector says why). */
	release = jvm_release(agent.jvmti);
	(void)vmlayout_read((const void *)(*agent.jvmti)->GetVersionNumber, release, &layout);
	sampler_fix = release && samplefix_needed(vmlayout_jdk_major(release));
	free(release);
	vmlayout_set_gc_clock(&layout, (uint64_t)(uintptr_t)&gc_clock);
	vmlayout_set_unload_slot(&layout, (uint64_t)(uintptr_t)&unload_slot);
	/* allocstack=copy or auto: the ring is made once, here, and announced (its pages are
	 * populated when alloc first goes on with it: at once for copy, when a collector that
	 * reads it asks for auto); the callbacks use it once the events worker knows the
	 * threads' layout. */
	if ((agent.ev_caps & FGP_EVM_RING) &&
	    stackring_new(EVJVMTI_RING_SLOTS, EVJVMTI_RING_COPY, &agent.ring) == 0)
		vmlayout_set_alloc_ring(&layout, (uint64_t)(uintptr_t)stackring_base(agent.ring),
					stackring_size(agent.ring));
	/* How to unwind compiled frames without frame pointers: CODE_FRAME records. Without a
	 * usable layout none are sent and the collector unwinds what it can without them. */
	(void)codeheap_read((const void *)(*agent.jvmti)->GetVersionNumber, &agent.ch);
	layout_len = fgp_encode_vm_layout(layout_rec, sizeof(layout_rec), &layout);
	if (layout_len > 0) {
		hello.after_hello = layout_rec;
		hello.after_hello_len = (size_t)layout_len;
	}
	hello.agent_version = "fgagent " FG_VERSION;
	pick_service(agent.jvmti, service, sizeof(service));
	hello.service = service;
	if (agent.q == NULL) {
		free(version);
		fprintf(stderr, "fgagent: out of memory at startup\n");
		return JNI_ERR;
	}
	pthread_atfork(NULL, NULL, on_fork_child);
	if (tables_init(&agent.tabs, &tops) != 0) {
		free(version);
		fprintf(stderr, "fgagent: out of memory at startup\n");
		return JNI_ERR;
	}
	if (!agent.on_demand)
		atomic_store(&agent.tabs.on, true);
	rv = start_sender(&hello, budget.livecode);
	free(version);
	if (rv != 0) {
		fprintf(stderr, "fgagent: cannot start the sender thread: %s\n", strerror(-rv));
		return JNI_ERR;
	}
	if ((rv = setup_jvmti(agent.jvmti)) != JNI_OK)
		return rv;
	evjvmti_init(&(struct evjvmti_cfg){ .vm = vm,
					    .jvmti = agent.jvmti,
					    .ctl = &agent.evs,
					    .names = agent.names,
					    .lines = agent.lines,
					    .signatures = agent.opt.signatures,
					    .live = &agent.live,
					    .sampler_fix = sampler_fix,
					    .ring = agent.ring,
					    .ring_always = agent.opt.alloc_copy });
	if (agent.opt.log >= OPTIONS_LOG_INFO)
		fprintf(stderr, "fgagent: pid %d (service %s) streaming code events to %s\n",
			(int)hello.pid, service[0] ? service : "unknown", agent.opt.socket);
	return JNI_OK;
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	(void)vm;
	(void)options;
	(void)reserved;
	fprintf(stderr, "fgagent: loading into a running JVM is not supported; start the JVM with "
			"-agentpath:/path/to/libfgagent.so\n");
	return JNI_ERR;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	(void)vm;
	stop_agent();
}
