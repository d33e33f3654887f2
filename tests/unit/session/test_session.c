// SPDX-License-Identifier: MIT
/*
 * test_session.c - the conductor of `record` and `top` over its seams (session_seam.h): a fake
 * sampler that delivers records the test made, a fake code-table source driven through its ops
 * vector, and a clock the test moves. No JVM, no perf: what the recording does with what its
 * parts report is pinned here.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/perf_event.h>

#include "session_fakes.h"
#include "session_report.h"
#include "stackagg.h"
#include "vtmount.h"

static struct session *open_all_let_go(bool let_go)
{
	struct session_opts o = { .target = SESSION_TARGET_ALL,
				  .no_kernel = true,
				  .live_view = true,
				  .settle_ns = 300 * MS,
				  .let_go = let_go };
	struct session *s = NULL;
	char why[256];

	memset(&fs, 0, sizeof(fs));
	clock_ns = 1000 * MS;
	if (session_open_seams(&o, &seams, &s, why, sizeof(why)) != 0)
		fail_msg("session_open_seams: %s", why);
	assert_non_null(src);
	return s;
}

static struct session *open_all(void)
{
	return open_all_let_go(false);
}

static uint64_t pending(struct session *s)
{
	struct session_summary sm;

	session_summary(s, &sm);
	return sm.agg.pending;
}

/* ---- tests ---- */

static void test_a_jvm_the_source_announces_is_sampled(void **state)
{
	struct session *s = open_all();
	char note[SESSION_NOTE_MAX];

	(void)state;
	fs.add_rv = -EPERM;
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(fs.nadded, 1);
	assert_int_equal(fs.added[0], (pid_t)JVM_PID);
	assert_int_equal(session_target_count(s), 1);
	assert_int_equal(session_next_note(s, note, sizeof(note)), 1);
	assert_string_equal(note, "PID 2100000000: agent connected");
	assert_int_equal(session_next_note(s, note, sizeof(note)), 1);
	assert_string_equal(note, "PID 2100000000: cannot sample it: Operation not permitted");
	assert_int_equal(session_next_note(s, note, sizeof(note)), 0);
	/* Once only: a later pump adds nothing. */
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(fs.nadded, 1);
	session_close(s);
}

static void test_samples_wait_while_the_source_streams_its_history(void **state)
{
	struct session *s = open_all();

	(void)state;
	assert_int_equal(session_step(s, 0), 0); /* the JVM is adopted */
	src->streaming = true;
	queue_sample(1100 * MS);
	clock_ns = 2000 * MS; /* the settle delay (300 ms) has long passed */
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(pending(s), 1);
	src->streaming = false;
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(pending(s), 0);
	session_close(s);
}

static void test_samples_settle_by_the_clock(void **state)
{
	struct session *s = open_all();

	(void)state;
	assert_int_equal(session_step(s, 0), 0);
	queue_sample(1100 * MS);
	clock_ns = 1300 * MS; /* watermark 1000 ms: the sample is newer */
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(pending(s), 1);
	clock_ns = 1401 * MS; /* watermark 1101 ms */
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(pending(s), 0);
	session_close(s);
}

/*
 * A wait that an agent's message ended (its batch of events) drains the rings only once the
 * drain's gap has passed since the last drain; a wait that ran out drains them at once.
 */
static void test_a_message_drains_the_rings_only_once_the_gap_has_passed(void **state)
{
	struct session *s = open_all();

	(void)state;
	assert_int_equal(session_step(s, 0), 0); /* the JVM is adopted, the rings drained */
	assert_int_equal(pipe(src->wake_fds), 0);
	assert_int_equal(write(src->wake_fds[1], "m", 1), 1);
	src->wake = true;
	queue_sample(1050 * MS);
	clock_ns = 1100 * MS;
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(fs.nq, 1); /* 100 ms since the last drain: the sample stays */
	clock_ns = 1500 * MS;
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(fs.nq, 0);
	src->wake = false;
	queue_sample(1550 * MS);
	clock_ns = 1600 * MS;
	assert_int_equal(session_step(s, 0), 0); /* no message: the wait ran out */
	assert_int_equal(fs.nq, 0);
	close(src->wake_fds[0]);
	close(src->wake_fds[1]);
	session_close(s);
}

static void test_exit_and_duration_follow_the_clock(void **state)
{
	struct session *s = open_all();
	struct session_summary sm;
	char note[SESSION_NOTE_MAX];

	(void)state;
	assert_int_equal(session_step(s, 0), 0);
	while (session_next_note(s, note, sizeof(note)))
		;
	clock_ns = 2500 * MS;
	queue_exit();
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(session_next_note(s, note, sizeof(note)), 1);
	assert_string_equal(note, "PID 2100000000 exited after 1.5 s of recording");
	assert_false(session_done(s)); /* --all: more JVMs may come */
	/* Its events are closed 2 s after its exit, not before. */
	clock_ns = 4400 * MS;
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(fs.nremoved, 0);
	clock_ns = 4500 * MS;
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(fs.nremoved, 1);
	assert_int_equal(fs.removed[0], JVM_PID);
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(fs.nremoved, 1);
	clock_ns = 5000 * MS;
	session_finish(s, 0);
	assert_true(fs.disabled);
	session_summary(s, &sm);
	assert_int_equal(sm.duration_ns, 4000 * MS);
	assert_int_equal(sm.exited, 1);
	assert_int_equal(sm.src, SESSION_SRC_CTL);
	session_close(s);
}

/* A session that lasts lets an exited JVM's table go once every sample up to its exit is named. */
static void test_an_exited_jvm_is_let_go_once_its_samples_are_named(void **state)
{
	struct session *s = open_all_let_go(true);
	struct session_summary sm;

	(void)state;
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(
		codetab_add(src->tab, CODEBLOB_COMPILED, JIT_PC, 0x100, 1050 * MS, "Hot::loop"), 1);
	queue_sample(1100 * MS);
	queue_exit_at(1200 * MS);
	clock_ns = 1450 * MS; /* named up to 1150 ms: the exit is newer */
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(pending(s), 0);
	assert_int_equal(src->forgets, 0);
	assert_non_null(src->tab);
	clock_ns = 1550 * MS; /* up to 1250 ms */
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(src->forgets, 1);
	assert_null(src->tab);
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(src->forgets, 1); /* once */
	session_summary(s, &sm);
	assert_int_equal(sm.njvms, 1);
	assert_int_equal(sm.jvms[0].blobs, 1); /* its table's last count */
	assert_int_equal(sm.exited, 1);
	session_close(s);
	/* A recording keeps it to the end (its code log, its summary). */
	s = open_all();
	assert_int_equal(session_step(s, 0), 0);
	queue_exit_at(1200 * MS);
	clock_ns = 9000 * MS;
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(src->forgets, 0);
	assert_non_null(src->tab);
	session_close(s);
}

/* ... and drops code unloaded a minute before the samples named so far, every 10 s at most. */
static void test_a_lasting_session_prunes_unloaded_code(void **state)
{
	struct codetab_stats cs;

	(void)state;
	for (int let_go = 0; let_go <= 1; let_go++) {
		struct session *s = open_all_let_go(let_go);

		assert_int_equal(session_step(s, 0), 0);
		assert_int_equal(codetab_add(src->tab, CODEBLOB_COMPILED, JIT_PC, 0x100, 1050 * MS,
					     "Old::gone"),
				 1);
		assert_int_equal(codetab_unload(src->tab, JIT_PC, 1100 * MS), 1);
		clock_ns = 61000 * MS; /* named up to 60.7 s: unloaded 59.6 s before */
		assert_int_equal(session_step(s, 0), 0);
		codetab_stats(src->tab, &cs);
		assert_int_equal(cs.pruned, 0);
		clock_ns = 70000 * MS; /* over a minute before, but within 10 s of the last look */
		assert_int_equal(session_step(s, 0), 0);
		codetab_stats(src->tab, &cs);
		assert_int_equal(cs.pruned, 0);
		clock_ns = 71001 * MS;
		assert_int_equal(session_step(s, 0), 0);
		codetab_stats(src->tab, &cs);
		assert_int_equal(cs.pruned, let_go ? 1 : 0);
		session_close(s);
	}
}

static void test_a_lost_source_is_reported(void **state)
{
	struct session *s = open_all();

	(void)state;
	assert_false(session_source_lost(s));
	src->lost = true;
	assert_true(session_source_lost(s));
	session_close(s);
}

/* A --all recording of `event` over a sampler whose rings hold ring_bytes at freq_hz. */
static struct session *open_event(enum fg_event event, unsigned int stack_copy, size_t ring_bytes,
				  unsigned int freq_hz)
{
	struct session_opts o = { .target = SESSION_TARGET_ALL,
				  .event = event,
				  .no_kernel = true,
				  .stack_copy = stack_copy,
				  .settle_ns = 300 * MS };
	struct session *s = NULL;
	char why[256];

	memset(&fs, 0, sizeof(fs));
	fs.info.stack_copy = stack_copy;
	fs.info.ring_bytes = ring_bytes;
	/* As the sampler does: rings wake their reader a quarter full. */
	fs.info.ring_wakeup_bytes = ring_bytes / 4;
	fs.info.mode = event == FG_EVENT_OFFCPU ? SAMPLER_MODE_OFFCPU
		       : event == FG_EVENT_WALL ? SAMPLER_MODE_WALL
						: SAMPLER_MODE_CPU;
	fs.info.freq_hz = freq_hz;
	fs.info.max_stack = 256;
	clock_ns = 1000 * MS;
	if (session_open_seams(&o, &seams, &s, why, sizeof(why)) != 0)
		fail_msg("session_open_seams: %s", why);
	return s;
}

static struct session *open_rings(unsigned int stack_copy, size_t ring_bytes, unsigned int freq_hz)
{
	return open_event(FG_EVENT_CPU, stack_copy, ring_bytes, freq_hz);
}

static void test_an_idle_recording_sleeps_until_a_record_or_the_deadline(void **state)
{
	struct session *s = open_rings(0, 8u << 20, 99);
	bool rings;

	(void)state;
	/* Nothing came yet: the rings (a quarter full) and the source wake us, no tick. */
	assert_int_equal(session_step_wait(s, -1, &rings), -1);
	assert_true(rings);
	assert_int_equal(session_step_wait(s, 5000, &rings), 5000);
	assert_true(rings);
	/* A drain that found records: the next one 500 ms later, the rings and the source still
	 * watched (a ring a quarter full, an agent's message wake us before)... */
	queue_sample(clock_ns);
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(session_step_wait(s, -1, &rings), 500);
	assert_true(rings);
	assert_int_equal(session_step_wait(s, 30, &rings), 30);
	clock_ns += 60 * MS;
	assert_int_equal(session_step_wait(s, -1, &rings), 440);
	fsrc_pollfds_calls = 0;
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(fsrc_pollfds_calls, 1);
	/* ...then a drain that found nothing leaves them to wake us alone. */
	clock_ns += 440 * MS;
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(session_step_wait(s, -1, &rings), -1);
	assert_true(rings);
	session_close(s);
}

/* How long a CPU recording waits for its next drain after a drain that found a sample. */
static int rest_after_a_sample(unsigned int stack_copy, size_t ring_bytes, unsigned int freq_hz)
{
	struct session *s = open_rings(stack_copy, ring_bytes, freq_hz);
	bool rings;
	int ms;

	queue_sample(clock_ns);
	assert_int_equal(session_step(s, 0), 0);
	ms = session_step_wait(s, -1, &rings);
	assert_true(rings);
	session_close(s);
	return ms;
}

static void test_a_busy_ring_is_drained_on_a_timer(void **state)
{
	struct session *s;
	bool rings;

	(void)state;
	/* CPU samples: every 500 ms, whatever the copy, the rings and the rate (a ring a quarter
	 * full wakes us before it can overflow)... */
	assert_int_equal(rest_after_a_sample(65528, 8u << 20, 99), 500);
	assert_int_equal(rest_after_a_sample(16384, 256u << 10, 999), 500);
	assert_int_equal(rest_after_a_sample(0, 64u << 10, 999), 500);
	/*
	 * ...off-CPU and wall stacks, which come at every switch, every 100 ms; an idle ring
	 * waits for the mark or the caller.
	 */
	for (int e = 0; e < 2; e++) {
		s = open_event(e ? FG_EVENT_WALL : FG_EVENT_OFFCPU, 16384, 2u << 20, 99);
		assert_int_equal(session_step_wait(s, -1, &rings), -1);
		assert_true(rings);
		queue_sample(clock_ns);
		assert_int_equal(session_step(s, 0), 0);
		assert_int_equal(session_step_wait(s, -1, &rings), 100);
		assert_true(rings);
		assert_int_equal(session_step_wait(s, 30, &rings), 30);
		clock_ns += 100 * MS;
		assert_int_equal(session_step_wait(s, -1, &rings), 0);
		assert_true(rings);
		/* A drain that finds nothing: idle again. */
		assert_int_equal(session_step(s, 0), 0);
		assert_int_equal(session_step_wait(s, 5000, &rings), 5000);
		assert_true(rings);
		session_close(s);
	}
}

static void test_held_samples_look_at_the_source_every_10_ms(void **state)
{
	struct session *s = open_rings(16384, 2u << 20, 99);
	bool rings;

	(void)state;
	src->streaming = true;
	assert_int_equal(session_step_wait(s, -1, &rings), 10);
	assert_false(rings);
	assert_int_equal(session_step_wait(s, 3, &rings), 3);
	session_close(s);
}

/*
 * Off-CPU whose BPF program was refused and whose fallback, tracepoint events per thread,
 * found no tracefs it could mount: record says what to do on the host and in a container
 * (CAP_BPF only where the BPF path was not ruled out by --scope threads), in one message that
 * fits record's buffer.
 */
static void test_no_tracefs_says_how_to_mount_it(void **state)
{
	static const char *const mount_host = "mount -t tracefs nodev /sys/kernel/tracing";
	static const char *const mount_ct = "-v /sys/kernel/tracing:/sys/kernel/tracing:ro";
	struct session *s = NULL;
	char why[512];

	(void)state;
	for (int scope = SESSION_SCOPE_AUTO; scope <= SESSION_SCOPE_THREADS; scope++) {
		struct session_opts o = { .target = SESSION_TARGET_ALL,
					  .event = FG_EVENT_OFFCPU,
					  .scope = scope };

		memset(&fs, 0, sizeof(fs));
		fs.open_rv = -ENOENT;
		clock_ns = 1000 * MS;
		assert_int_equal(session_open_seams(&o, &seams, &s, why, sizeof(why)), -ENOENT);
		assert_null(s);
		print_message("scope %d: %s\n", scope, why);
		assert_non_null(strstr(why, "off-CPU needs the sched:sched_switch tracepoint: no "
					    "tracefs at /sys/kernel/tracing"));
		assert_non_null(strstr(why, mount_host));
		assert_non_null(strstr(why, mount_ct));
		if (scope == SESSION_SCOPE_AUTO)
			assert_non_null(strstr(why, "CAP_BPF (--cap-add BPF"));
		else
			assert_null(strstr(why, "CAP_BPF"));
		assert_true(strlen(why) < sizeof(why) - 1); /* not cut short */
	}
}

static void add_line(void *arg, const char *text)
{
	char *all = arg;
	size_t n = strlen(all);

	snprintf(all + n, 4096 - n, "%s\n", text);
}

/* The agent's counts are cumulative since its JVM started, the collector's since it first heard
 * of the JVM: a recording says what it lost. */
static void test_agent_drops_are_the_recordings_own(void **state)
{
	static struct session_summary sm;
	struct session_jvm_summary *v = &sm.jvms[0];
	char all[4096] = "";

	(void)state;
	sm.event = FG_EVENT_ALLOC;
	sm.njvms = 1;
	v->pid = 42;
	v->connected_ever = true;
	v->ev.state_known = true;
	v->ev.stacks = 10;
	v->ev.first = (struct fgp_events){
		.dropped_queue = 100, .dropped_other = 7, .lock_short = 5, .lock_short_ns = 2000000
	};
	v->ev.state = (struct fgp_events){
		.dropped_queue = 102, .dropped_other = 8, .lock_short = 9, .lock_short_ns = 5000000
	};
	/* The collector's counts of the JVM are cumulative too (a daemon serves recording after
	 * recording: what an agent sent after the last one ended was nobody's). */
	v->ev.drops_first =
		(struct jvm_ev_drops){ .unknown_id = 1, .unknown_tid = 2, .unwanted = 1816 };
	v->ev.drops = (struct jvm_ev_drops){ .unknown_id = 3, .unknown_tid = 2, .unwanted = 1817 };
	session_report(&sm, add_line, all);
	print_message("%s", all);
	assert_non_null(strstr(all, "PID 42: its events never on; 10 events; the agent dropped 3 "
				    "(queue full 2, other 1) and left out 4 short lock waits "
				    "(3.000 ms); the collector dropped 3 (unknown method id 2, not "
				    "asked for 1) and put 0 under an unknown thread"));
	/* A new agent behind the same PID started its counts again: all of them are ours. */
	v->ev.state.dropped_queue = 4;
	v->ev.on_after_ns = 250000000 + 1;
	all[0] = '\0';
	session_report(&sm, add_line, all);
	assert_non_null(strstr(all, "its events on 0.250 s after the start; 10 events; the agent "
				    "dropped 5 (queue full 4, other 1)"));
}

/* ---- wall at the defaults: each thread's exact time per kind, its stacks scaled to it ---- */

static struct switchtot tot_now; /* what the program's totals hold for the JVM's one thread */

static int fs_totals(const void *smp, switchbpf_total_cb cb, void *ctx)
{
	(void)smp;
	return cb(ctx, JVM_PID, &tot_now);
}

static const uint64_t chain_a[] = { 0x1000 }, chain_b[] = { 0x1000, 0x1000 };

/* A cpu-clock sample of the thread (10 ms), or a switch-out taken for sure (state: the
 * tracepoint's report; sysnr: the call its registers named) and its switch-in d ns later. */
static void queue_tick(uint64_t ts, const uint64_t *chain, uint32_t n)
{
	struct perfring_rec *r;

	queue_sample(ts);
	r = &fs.q[fs.nq - 1];
	r->u.sample.user = chain;
	r->u.sample.nr_user = n;
	r->u.sample.period = 10 * MS;
}

static void queue_wait(uint64_t ts, uint64_t d, const uint64_t *chain, uint32_t n, uint64_t state,
		       int32_t sysnr)
{
	struct perfring_rec *r;

	queue_tick(ts, chain, n);
	r = &fs.q[fs.nq - 1];
	r->u.sample.kind = SAMPLER_KIND_SWITCH;
	r->u.sample.state = state;
	r->u.sample.sysnr = sysnr;
	r->u.sample.scale = 1.0;
	r->u.sample.period = 1;
	r = &fs.q[fs.nq++];
	memset(r, 0, sizeof(*r));
	r->type = PERF_RECORD_SWITCH;
	r->pid = r->tid = JVM_PID;
	r->time = ts + d;
}

/* The address of the kernel's sched_yield entry (+1: inside it), from /proc/kallsyms. */
static uint64_t yield_entry(void)
{
	char line[512], name[256], t;
	unsigned long long a;
	uint64_t found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f) {
		fail_msg("/proc/kallsyms: %s", strerror(errno));
		return 0;
	}
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &t, name) == 3 && a &&
		    (strcmp(name, "__x64_sys_sched_yield") == 0 ||
		     strcmp(name, "__ia32_sys_sched_yield") == 0))
			found = a + 1;
	fclose(f);
	if (!found)
		fail_msg("no address of __x64_sys_sched_yield in /proc/kallsyms (not root?)");
	return found;
}

/*
 * A wall recording at the defaults over the fakes, the sampler's program counting each
 * thread's switches (tot_now), opened at 1000 ms with the JVM come.
 */
static struct session *open_wall(void)
{
	static struct session_sampler_ops counting;
	static struct session_seams counting_seams;
	struct session_opts o = { .target = SESSION_TARGET_ALL,
				  .no_kernel = true,
				  .settle_ns = 300 * MS,
				  .event = FG_EVENT_WALL };
	struct session *s = NULL;
	char why[256];

	counting = fake_sampler;
	counting.totals = fs_totals; /* and the program's counts */
	counting_seams = (struct session_seams){ &counting, fsrc_open, fake_now };
	memset(&fs, 0, sizeof(fs));
	clock_ns = 1000 * MS;
	tot_now = (struct switchtot){ .pid = JVM_PID, .t_first = 900 * MS };
	if (session_open_seams(&o, &counting_seams, &s, why, sizeof(why)) != 0)
		fail_msg("session_open_seams: %s", why);
	assert_int_equal(session_step(s, 0), 0); /* the JVM comes */
	return s;
}

/*
 * Finish s, write its folded profile into *folded and close it. The fake chains never reach a
 * thread root; whether a second session in the process marks them so is not what the tests
 * that read it are about: `[truncated];` is taken out.
 */
static void finish_folded(struct session *s, char **folded)
{
	size_t len = 0;
	FILE *f;

	session_finish(s, 0);
	f = open_memstream(folded, &len);
	assert_non_null(f);
	assert_int_equal(stackagg_write_folded(session_agg(s), f), 0);
	fclose(f);
	session_close(s);
	for (char *t; (t = strstr(*folded, "[truncated];")) != NULL;)
		memmove(t, t + 12, strlen(t + 12) + 1);
}

/* Wall over a 2 s window of the JVM's one thread: 3 CPU ticks in A, 1 in B (inside sched_yield:
 * in_yield); a preemption by an interrupt in B whose stack was taken (irq_stack) or none; a
 * preemption leaving a write in A; the program's counts: 400 ms preempted by interrupts, 100 ms
 * leaving the write, 50 ms leaving sched_yield with no stack, 1 450 ms on the CPU. The folded
 * profile into *folded. */
static void wall_window(bool irq_stack, bool in_yield, char **folded)
{
	static uint64_t kchain[1];
	struct session *s = open_wall();
	queue_tick(1100 * MS, chain_a, 1);
	queue_tick(1200 * MS, chain_a, 1);
	queue_tick(1300 * MS, chain_a, 1);
	queue_tick(1400 * MS, chain_b, 2);
	if (in_yield) {
		kchain[0] = yield_entry();
		fs.q[fs.nq - 1].u.sample.kernel = kchain;
		fs.q[fs.nq - 1].u.sample.nr_kernel = 1;
	}
	if (irq_stack)
		queue_wait(1500 * MS, 5 * MS, chain_b, 2, 0x100, -1);
	queue_wait(1600 * MS, 5 * MS, chain_a, 1, 0x100, 1);
	assert_int_equal(session_step(s, 0), 0);
	clock_ns = 3000 * MS;
	tot_now.off[SWITCHTOT_PREEMPTED] = 400 * MS;
	tot_now.off[SWITCHTOT_PREEMPT_WRITE] = 100 * MS;
	tot_now.off[SWITCHTOT_PREEMPT_YIELD] = 50 * MS; /* no stack taken */
	finish_folded(s, folded);
}

static void test_wall_shows_interrupt_preemptions_at_their_stacks_or_along_the_cpu(void **state)
{
	char *folded = NULL;

	(void)state;
	/* CPU by the ticks' shape; the interrupts' 400 ms on the stack taken at them (B), none
	 * along the ticks; the write's 100 ms on its own stack (A); the yields' 50 ms under the
	 * thread, named by their call. */
	wall_window(true, false, &folded);
	if (!strstr(folded, "[tid 2100000000;[unknown] (jit)_[j] 1087500\n") ||
	    !strstr(folded, "[tid 2100000000;[unknown] (jit)_[j];[unknown] (jit)_[j] 362500\n") ||
	    !strstr(folded,
		    "[tid 2100000000;[unknown] (jit)_[j];[off-cpu: preempted]_[k] 100000\n") ||
	    !strstr(folded, ";[unknown] (jit)_[j];[unknown] (jit)_[j];[off-cpu: preempted]_[k] "
			    "400000\n") ||
	    !strstr(folded, "[tid 2100000000;[no stack sampled];[off-cpu: preempted leaving "
			    "sched_yield]_[k] 50000\n") ||
	    strstr(strstr(folded, "[no stack sampled]") + 1, "[no stack sampled]"))
		fail_msg("wall profile, a stack taken at the interrupts:\n%s", folded);
	free(folded);
	folded = NULL;
	/* No stack taken at them: their 400 ms laid along the ticks (300 in A, 100 in B). */
	wall_window(false, false, &folded);
	if (!strstr(folded, "[tid 2100000000;[unknown] (jit)_[j] 1087500\n") ||
	    !strstr(folded,
		    "[tid 2100000000;[unknown] (jit)_[j];[off-cpu: preempted]_[k] 400000\n") ||
	    !strstr(folded, ";[unknown] (jit)_[j];[unknown] (jit)_[j];[off-cpu: preempted]_[k] "
			    "100000\n") ||
	    strstr(strstr(folded, "[no stack sampled]") + 1, "[no stack sampled]"))
		fail_msg("wall profile, no stack taken at the interrupts:\n%s", folded);
	free(folded);
	folded = NULL;
	/* The tick in B was inside sched_yield: the yields' 50 ms are laid along it, under their
	 * call (no kernel frames: the preemption was the call's return), not at the root. */
	wall_window(true, true, &folded);
	if (!strstr(folded, "[tid 2100000000;[unknown] (jit)_[j];[unknown] (jit)_[j];[off-cpu: "
			    "preempted leaving sched_yield]_[k] 50000\n") ||
	    strstr(folded, "[no stack sampled]") ||
	    !strstr(folded, "[tid 2100000000;[unknown] (jit)_[j] 1087500\n"))
		fail_msg("wall profile, a CPU tick inside sched_yield:\n%s", folded);
	free(folded);
}

/* ---- virtual threads: a carrier's sample rooted once the mounts around its time are known ---- */

/* A mount of name on the JVM's thread tid (its carrier) from t1 - len to t1, as its agent sends
 * it. */
static void give_mount_on(uint32_t tid, uint64_t t1, uint64_t len, const char *name)
{
	struct jvm_event ev = { .type = JVM_EV_STACK,
				.host_pid = JVM_PID,
				.ts = t1,
				.host_tid = tid,
				.kind = FGP_EV_VMOUNT,
				.value = len,
				.tag = 1,
				.cls = { name, strlen(name) } };

	src->env->ev(src->env->ev_arg, &ev);
}

static void give_mount(uint64_t t1, uint64_t len, const char *name)
{
	give_mount_on(JVM_PID, t1, len, name);
}

/*
 * A CPU recording's sample of a carrier waits past the code's settle until a mount of its
 * carrier that ended at or after its time has come (one carrier's mounts arrive in order),
 * however late that is, and is then rooted under the virtual thread mounted at its time; one
 * whose carrier ends no later mount is counted at the bound (VTMOUNT_WAIT_NS past the settle)
 * under the carrier, and said so.
 */
static void test_a_carriers_sample_waits_for_the_mounts_around_its_time(void **state)
{
	struct session_opts o = { .target = SESSION_TARGET_ALL,
				  .event = FG_EVENT_CPU,
				  .no_kernel = true,
				  .live_view = true,
				  .settle_ns = 300 * MS };
	struct session *s = NULL;
	struct session_summary sm;
	char why[256], *folded = NULL;
	size_t len = 0;
	uint64_t bound;
	FILE *f;

	(void)state;
	memset(&fs, 0, sizeof(fs));
	clock_ns = 1000 * MS;
	if (session_open_seams(&o, &seams, &s, why, sizeof(why)) != 0)
		fail_msg("session_open_seams: %s", why);
	assert_int_equal(session_step(s, 0), 0); /* the JVM comes */
	give_mount(1100 * MS, 50 * MS, "vt-a-1");
	queue_sample(1150 * MS);
	clock_ns = 2000 * MS; /* the code's settle (300 ms) has long passed */
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(pending(s), 1); /* its carrier's mounts are known up to 1100 ms only */
	clock_ns = 3000 * MS;
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(pending(s), 1);
	give_mount(1300 * MS, 180 * MS, "vt-b-2"); /* 1120..1300 ms: the sample's */
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(pending(s), 0);
	/* No mount of its carrier ends after this one: it waits for the bound, then is counted. */
	queue_sample(1400 * MS);
	bound = 1400 * MS + 300 * MS + VTMOUNT_WAIT_NS;
	clock_ns = bound - MS;
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(pending(s), 1);
	clock_ns = bound;
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(pending(s), 0);
	session_summary(s, &sm);
	assert_int_equal(sm.vt.mnt.asked, 2);
	assert_int_equal(sm.vt.mnt.rerooted, 1);
	assert_int_equal(sm.vt.mnt.early, 1);
	session_finish(s, 0);
	f = open_memstream(&folded, &len);
	assert_non_null(f);
	assert_int_equal(stackagg_write_folded(session_agg(s), f), 0);
	fclose(f);
	session_close(s);
	if (!strstr(folded, "[virtual threads] vt-b-N;") || !strstr(folded, "[tid 2100000000;") ||
	    strstr(folded, "vt-a"))
		fail_msg("the carrier's samples:\n%s", folded);
	free(folded);
}

/*
 * Wall over a 2 s window (1000 to 3000 ms) of a carrier on the CPU all along (2000 ms): its
 * agent turns the mounts on at 1500 ms. Its tick at 1100 ms (B) was taken before: it stands
 * for the 500 ms before alone. A mount from 1600 to 1700 ms holds the tick at 1650 (B too,
 * rooted under the virtual thread: 100 ms); the ticks at 1800 and 1900 ms (A) take the
 * carrier's other 1400 ms. Unless the agent never says when (on_ms 0): then the ticks not
 * mounted share the 1900 ms by their weights.
 */
static void carrier_before_mounts(uint64_t on_ms, char **folded)
{
	struct jvm_event on = { .type = JVM_EV_STATE,
				.host_pid = JVM_PID,
				.state = { .ts = on_ms * MS,
					   .on = FGP_EVM_VTHREAD | FGP_EVM_VMOUNT } };
	struct session *s = open_wall();
	queue_tick(1100 * MS, chain_b, 2);
	assert_int_equal(session_step(s, 0), 0);
	if (on_ms)
		src->env->ev(src->env->ev_arg, &on);
	queue_tick(1650 * MS, chain_b, 2);
	queue_tick(1800 * MS, chain_a, 1);
	queue_tick(1900 * MS, chain_a, 1);
	give_mount(1700 * MS, 100 * MS, "vt-q-1");
	assert_int_equal(session_step(s, 0), 0);
	clock_ns = 3000 * MS;
	finish_folded(s, folded);
}

static void test_a_carriers_samples_before_the_mounts_weigh_the_time_before(void **state)
{
	char *folded = NULL;

	(void)state;
	carrier_before_mounts(1500, &folded);
	if (!strstr(folded, "[tid 2100000000;[unknown] (jit)_[j];[unknown] (jit)_[j] 500000\n") ||
	    !strstr(folded, "[tid 2100000000;[unknown] (jit)_[j] 1400000\n") ||
	    !strstr(folded, "[virtual threads] vt-q-N;[unknown] (jit)_[j];[unknown] (jit)_[j] "
			    "100000\n"))
		fail_msg("wall profile, a tick before the mounts went on:\n%s", folded);
	free(folded);
	folded = NULL;
	/* never said: 1900 ms over the three ticks not mounted, by weight */
	carrier_before_mounts(0, &folded);
	if (!strstr(folded, "[tid 2100000000;[unknown] (jit)_[j];[unknown] (jit)_[j] 633333\n") ||
	    !strstr(folded, "[tid 2100000000;[unknown] (jit)_[j] 1266667\n"))
		fail_msg("wall profile, the mounts' moment not known:\n%s", folded);
	free(folded);
}

/*
 * A sample that waits behind another carrier's keeps its own mount: mounts are kept behind the
 * first sample still waiting, not only behind the settled ones.
 */
static void test_a_sample_waiting_behind_another_keeps_its_mount(void **state)
{
	struct session_opts o = { .target = SESSION_TARGET_ALL,
				  .event = FG_EVENT_CPU,
				  .no_kernel = true,
				  .live_view = true,
				  .settle_ns = 300 * MS };
	struct session *s = NULL;
	struct session_summary sm;
	char why[256];

	(void)state;
	memset(&fs, 0, sizeof(fs));
	clock_ns = 1000 * MS;
	if (session_open_seams(&o, &seams, &s, why, sizeof(why)) != 0)
		fail_msg("session_open_seams: %s", why);
	assert_int_equal(session_step(s, 0), 0);
	give_mount_on(JVM_PID, 1100 * MS, 50 * MS, "vt-a-1");	   /* carrier 1: known to 1100 */
	give_mount_on(JVM_PID + 1, 1200 * MS, 100 * MS, "vt-b-2"); /* carrier 2: its sample's */
	queue_sample(1150 * MS);				   /* carrier 1: waits */
	queue_sample(1160 * MS);
	fs.q[1].tid = JVM_PID + 1; /* carrier 2: known, waits behind the first */
	clock_ns = 4000 * MS;	   /* 2.7 s past their settle: past VTMOUNT_KEEP_NS */
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(pending(s), 2);
	give_mount_on(JVM_PID, 1400 * MS, 260 * MS, "vt-c-3");
	assert_int_equal(session_step(s, 0), 0);
	assert_int_equal(pending(s), 0);
	session_summary(s, &sm);
	assert_int_equal(sm.vt.mnt.asked, 2);
	assert_int_equal(sm.vt.mnt.rerooted, 2);
	assert_int_equal(sm.vt.mnt.early, 0);
	session_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_jvm_the_source_announces_is_sampled),
		cmocka_unit_test(test_samples_wait_while_the_source_streams_its_history),
		cmocka_unit_test(test_samples_settle_by_the_clock),
		cmocka_unit_test(test_a_message_drains_the_rings_only_once_the_gap_has_passed),
		cmocka_unit_test(test_exit_and_duration_follow_the_clock),
		cmocka_unit_test(test_an_exited_jvm_is_let_go_once_its_samples_are_named),
		cmocka_unit_test(test_a_lasting_session_prunes_unloaded_code),
		cmocka_unit_test(test_a_lost_source_is_reported),
		cmocka_unit_test(test_an_idle_recording_sleeps_until_a_record_or_the_deadline),
		cmocka_unit_test(test_a_busy_ring_is_drained_on_a_timer),
		cmocka_unit_test(test_held_samples_look_at_the_source_every_10_ms),
		cmocka_unit_test(test_no_tracefs_says_how_to_mount_it),
		cmocka_unit_test(test_agent_drops_are_the_recordings_own),
		cmocka_unit_test(
			test_wall_shows_interrupt_preemptions_at_their_stacks_or_along_the_cpu),
		cmocka_unit_test(test_a_carriers_sample_waits_for_the_mounts_around_its_time),
		cmocka_unit_test(test_a_sample_waiting_behind_another_keeps_its_mount),
		cmocka_unit_test(test_a_carriers_samples_before_the_mounts_weigh_the_time_before),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
