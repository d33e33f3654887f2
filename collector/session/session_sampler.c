// SPDX-License-Identifier: MIT
/*
 * session_sampler.c - the sampler behind its seam (session_seam.h: the real one, and none for
 * the agents' events), opened with what went wrong said, and how long samples wait in its rings.
 */
#include "session_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the real sampler (session_seam.h) -------------------------------------------------- */

static int real_open(const struct sampler_opts *o, const pid_t *pids, size_t n, void **smp)
{
	struct sampler *sp = NULL;
	int rv = sampler_open(o, pids, n, &sp);

	*smp = sp;
	return rv;
}

static int real_fd(const void *smp)
{
	return sampler_fd(smp);
}

static int real_poll(void *smp, int timeout_ms, sampler_cb cb, void *ctx)
{
	return sampler_poll(smp, timeout_ms, cb, ctx);
}

static void real_disable(void *smp)
{
	sampler_disable(smp);
}

static int real_add_pid(void *smp, pid_t pid)
{
	return sampler_add_pid(smp, pid);
}

static int real_remove_pid(void *smp, pid_t pid)
{
	return sampler_remove_pid(smp, pid);
}

static int real_keep_name(void *smp, const char *comm, bool keep)
{
	return sampler_keep_name(smp, comm, keep);
}

static int real_totals(const void *smp, switchbpf_total_cb cb, void *ctx)
{
	return sampler_totals(smp, cb, ctx);
}

static int real_forget_thread(void *smp, uint32_t tid)
{
	return sampler_forget_thread(smp, tid);
}

static int real_carrier(void *smp, uint32_t tid)
{
	return sampler_carrier(smp, tid);
}

static const struct sampler_info *real_info(const void *smp)
{
	return sampler_info(smp);
}

static void real_stats(const void *smp, struct sampler_stats *out)
{
	sampler_stats(smp, out);
}

static void real_close(void *smp)
{
	sampler_close(smp);
}

const struct session_sampler_ops ses_real_sampler = {
	.open = real_open,
	.fd = real_fd,
	.poll = real_poll,
	.disable = real_disable,
	.add_pid = real_add_pid,
	.remove_pid = real_remove_pid,
	.info = real_info,
	.stats = real_stats,
	.close = real_close,
	.keep_name = real_keep_name,
	.totals = real_totals,
	.forget_thread = real_forget_thread,
	.carrier = real_carrier,
};

/* ---- no sampler: the agents' events need none ---------------------------------------- */

static const struct sampler_info null_info = { .event_name = "jvmti" };

static int null_open(const struct sampler_opts *o, const pid_t *pids, size_t n, void **smp)
{
	(void)o;
	(void)pids;
	(void)n;
	*smp = NULL;
	return 0;
}

static int null_fd(const void *smp)
{
	(void)smp;
	return -1; /* poll() skips it */
}

static int null_poll(void *smp, int timeout_ms, sampler_cb cb, void *ctx)
{
	(void)smp;
	(void)timeout_ms;
	(void)cb;
	(void)ctx;
	return 0;
}

static void null_void(void *smp)
{
	(void)smp;
}

static int null_pid(void *smp, pid_t pid)
{
	(void)smp;
	(void)pid;
	return 0;
}

static const struct sampler_info *null_info_of(const void *smp)
{
	(void)smp;
	return &null_info;
}

static void null_stats(const void *smp, struct sampler_stats *out)
{
	(void)smp;
	memset(out, 0, sizeof(*out));
}

const struct session_sampler_ops ses_null_sampler = {
	.open = null_open,
	.fd = null_fd,
	.poll = null_poll,
	.disable = null_void,
	.add_pid = null_pid,
	.remove_pid = null_pid,
	.info = null_info_of,
	.stats = null_stats,
	.close = null_void,
};

/*
 * How long a sample waits in its ring while the target is busy: the rings wake us only a
 * quarter full (sampler.h, ring_wakeup_bytes) and a busy one is drained on this timer, so a busy
 * spell costs one wake-up per gap whatever the rate of samples, for us and for the target (the
 * kernel would otherwise queue a wake-up, an interrupt on the sampled CPU, for every record).
 * With a stack copy, interpreted frames are named when their sample is drained, from the JVM's
 * metadata: a class unloaded (a GC) between the sample and its drain voids those names (they are
 * counted as `[unknown]`, "a GC (class unloading) since the sample", never misnamed), so the gap
 * is the window in which an unloading costs names; 500 ms is under half the settle window
 * (1.3 s) the samples wait anyway. Each drain costs us a few times what a sample's walk does on
 * a VM: a 99 Hz recording of a service using a tenth of a core cost ~1.0% of the service's CPU
 * with a drain every 100 ms, ~0.6% every 250 ms (bench/record/realapp.sh).
 */
#define DRAIN_GAP_MS 500
/*
 * A busy off-CPU or wall recording's timer drain when every switch-out (or every Nth) brings a
 * record: switches come at rates no frequency bounds (tens of thousands a second), so they are
 * drained more often. The BPF program at a --switch-rate writes at about that rate: the CPU
 * samples' gap.
 */
#define SWITCH_DRAIN_GAP_MS 100
/* While samples are held, how often the source's state is looked at again. */
#define HOLD_POLL_MS 10

/* The time between two drains of a busy target's rings. */
uint64_t ses_drain_gap(const struct session *s)
{
	const struct sampler_info *si = s->so->info(s->sampler);
	/* Off-CPU by BPF at a rate: stacks come at about that rate, not at every switch. */
	bool every = si->mode != SAMPLER_MODE_CPU && !(si->switch_bpf_err == 0 && si->switch_rate);

	return (every ? SWITCH_DRAIN_GAP_MS : DRAIN_GAP_MS) * 1000000ull;
}

/* ---- opening it ------------------------------------------------------------------------- */

/* The first target whose /proc entry is still there, or 0. */
static uint32_t first_alive(const struct targets *t)
{
	char path[32];

	for (size_t i = 0; i < t->n; i++) {
		snprintf(path, sizeof(path), "/proc/%u/task", (unsigned int)t->v[i].pid);
		if (access(path, F_OK) == 0)
			return (uint32_t)t->v[i].pid;
	}
	return 0;
}

_Static_assert(SESSION_SCOPE_AUTO == (int)SAMPLER_SCOPE_AUTO &&
		       SESSION_SCOPE_THREADS == (int)SAMPLER_SCOPE_THREADS &&
		       SESSION_SCOPE_CPUS == (int)SAMPLER_SCOPE_CPUS,
	       "session and sampler scopes differ");

int ses_open_sampler(struct session *s, char *why, size_t whylen)
{
	struct sampler_opts smo = { .freq_hz = s->o.freq_hz,
				    .exclude_kernel = s->o.no_kernel,
				    .stack_copy = s->o.stack_copy,
				    .switch_period = s->o.switch_period,
				    .switch_rate = s->o.switch_rate,
				    .carrier_rate = session_carrier_rate(s->o.switch_rate),
				    .scope = (enum sampler_scope)s->o.scope };
	size_t n = s->targets.n;
	pid_t *pids = calloc(n ? n : 1, sizeof(*pids));
	uint32_t alive;
	int rv;

	if (!pids)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		pids[i] = (pid_t)s->targets.v[i].pid;
	smo.mode = evkind_of(s->o.event)->mode;
	smo.thread_filter = s->flt.threads_re_on;
	/* exact_start: with --min-block nothing is laid along the CPU samples */
	smo.keep_preempted = s->o.min_block_ns != 0;
	s->start_ns = s->now();
	rv = s->so->open(&smo, pids, n, &s->sampler);
	free(pids);
	if (rv == 0)
		ses_tell_names(s);
	/* The BPF program was refused (or not asked for) and its fallback found no tracefs: say
	 * what to do, on a host and in a container (a collector there cannot mount one). */
	if (rv == -ENOENT && smo.mode != SAMPLER_MODE_CPU)
		snprintf(
			why, whylen,
			"off-CPU needs the sched:sched_switch tracepoint: no tracefs at "
			"/sys/kernel/tracing or /sys/kernel/debug/tracing, and mounting it failed "
			"(that takes root with CAP_SYS_ADMIN). On the host, as root: mount -t "
			"tracefs nodev /sys/kernel/tracing. In a container: mount it on the host, "
			"then into the container (-v /sys/kernel/tracing:/sys/kernel/tracing:ro)%s",
			smo.scope == SAMPLER_SCOPE_THREADS
				? ""
				: ", or give the container CAP_BPF (--cap-add BPF; Docker Engine "
				  "before 23.0: SYS_ADMIN): off-CPU by BPF needs no tracefs");
	else if ((rv == -EACCES || rv == -EPERM) && smo.mode != SAMPLER_MODE_CPU)
		snprintf(why, whylen,
			 "perf_event_open refused the sched_switch tracepoint (%s): off-CPU needs "
			 "root, CAP_PERFMON (or CAP_SYS_ADMIN) and read access to tracefs",
			 strerror(-rv));
	else if (rv == -EACCES || rv == -EPERM)
		snprintf(why, whylen,
			 "perf_event_open refused (%s): run as root with CAP_PERFMON (Docker "
			 "Engine before 23.0, Linux before 5.8: CAP_SYS_ADMIN) or lower "
			 "kernel.perf_event_paranoid",
			 strerror(-rv));
	else if (rv == -ESRCH && (alive = first_alive(&s->targets)) != 0)
		snprintf(why, whylen,
			 "perf_event_open found no thread to sample (ESRCH) although PID %u "
			 "still runs",
			 alive);
	else if (rv == -ESRCH)
		snprintf(why, whylen, "the target process%s exited before sampling started",
			 n > 1 ? "es" : "");
	else if (rv != 0)
		snprintf(why, whylen, "cannot start sampling: %s", strerror(-rv));
	return rv;
}

/*
 * Leave samples in the rings while a target JVM's agent has not connected or is replaying, or
 * the watch daemon is still sending its tables (at most agent_wait_ns from the start): their
 * interpreted frames can only be named from their stack copies once the JVM's layout and
 * interpreter blob are known.
 */
bool ses_hold_samples(const struct session *s, uint64_t now)
{
	if (!s->uw.jf || now - s->start_ns >= s->o.agent_wait_ns)
		return false;
	if (ses_src_streaming(s))
		return true; /* the daemon is still streaming the tables' history */
	for (size_t i = 0; i < s->targets.n; i++) {
		const struct target *t = &s->targets.v[i];

		if (t->jvm && !t->exited && (!t->connected || t->replaying || t->tables_pending))
			return true;
	}
	return false;
}

/*
 * How long session_step waits, and whether the rings may wake it (session_seam.h): the rings
 * and the source are watched all the time; while the target is busy (the last drain had
 * records), a timer drains what stays under the rings' mark.
 */
int ses_step_wait(const struct session *s, uint64_t now, bool held, int timeout_ms, bool *rings)
{
	uint64_t next = s->drain.drained_ns + s->drain.drain_gap_ns;
	int gap_ms;

	*rings = false;
	if (held) /* the source's state changes without a message: look again soon */
		return timeout_ms < 0 || timeout_ms > HOLD_POLL_MS ? HOLD_POLL_MS : timeout_ms;
	*rings = true;
	if (!s->drain.drain_busy)
		return timeout_ms;
	gap_ms = now >= next ? 0 : (int)((next - now + 999999ull) / 1000000ull);
	return timeout_ms >= 0 && timeout_ms < gap_ms ? timeout_ms : gap_ms;
}

/*
 * Whether this step drains the rings: always after a wait that ran out (the drain's timer, or
 * the caller's) or that the rings ended; a wait that the sources alone ended (an agent's batch
 * of events, a few a second at thousands of mounts a second) drains them only once the gap
 * since the last drain has passed, so that the samples' fixed costs (a drain's reads of the
 * JVM's metadata) come at the rings' pace, not at the messages'.
 */
bool ses_drain_due(const struct session *s, bool woken, bool rings_woke, uint64_t now)
{
	return !woken || rings_woke || now - s->drain.tried_ns >= s->drain.drain_gap_ns;
}

int session_step_wait(const struct session *s, int timeout_ms, bool *rings)
{
	uint64_t now = s->now();

	return ses_step_wait(s, now, ses_hold_samples(s, now), timeout_ms, rings);
}
