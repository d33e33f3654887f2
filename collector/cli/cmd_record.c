// SPDX-License-Identifier: MIT
/*
 * cmd_record.c - `fgcollect record`: sample a JVM, a container or every JVM, write a profile.
 *
 *   fgcollect record (--pid HOSTPID | --container ID | --all) [--freq HZ] [--duration S]
 *                    [-o FILE.folded|.svg|.pb.gz] [--no-kernel] [--no-inline] [--stack-copy BYTES]
 * [--lines]
 *                    [--socket PATH] [--ctl PATH]
 *                    [--event cpu|offcpu|wall] [--min-block US] [--switch-rate HZ]
 *                    [--threads REGEX] [--per-thread | --no-per-thread]
 *
 * Only routing and printing: the recording is session.c, the formats are stackagg (folded),
 * flame_svg (SVG) and pprof. Ctrl-C ends the recording early; the output is still written.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_opt.h"
#include "cmds.h"
#include "flame_fold.h"
#include "flame_svg.h"
#include "labels.h"
#include "pprof.h"
#include "session.h"
#include "session_cli.h"
#include "stackagg.h"
#include "util.h"

#define CMD "record"
#define MAX_DURATION_S (7ull * 24 * 3600)

enum out_fmt { OUT_FOLDED, OUT_SVG, OUT_PPROF };

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: fgcollect record (--pid HOSTPID | --container ID | --all) [OPTION...]\n"
		"\n"
		"Sample JVMs (every thread, user and kernel stacks) and write a profile whose Java\n"
		"frames are named as they were when each sample was taken.\n"
		"\n" SESSION_CLI_HELP_TARGETS
		"  -F, --freq=HZ          samples per second per thread (default 99, max 10000)\n"
		"  -d, --duration=S       seconds to record (default: until Ctrl-C or exit)\n"
		"  -o, --output=FILE      .folded, .svg or .pb.gz (default: folded on stdout)\n"
		"      --no-kernel        leave kernel frames out\n"
		"      --no-inline        keep inlined Java methods folded into their caller\n" SESSION_CLI_HELP_JAVA
		"      --socket=PATH      agent socket when no watch daemon runs\n"
		"                         (default " FG_DEFAULT_SOCKET ")\n"
		"      --ctl=PATH         control channel of a running watch daemon\n"
		"      --code-log=FILE    also write the JVMs' code load/unload history (text)\n" SESSION_CLI_HELP_EVENT
		"  -h, --help             this text\n"
		"\n"
		"Examples:\n"
		"  fgcollect record --pid 4242 --duration 30 -o app.svg\n"
		"  fgcollect record --container 3f2a --freq 999 -d 10 -o app.pb.gz\n"
		"  fgcollect record --all -o all.folded      # until Ctrl-C\n"
		"  fgcollect record --pid 4242 --event wall --threads 'http-.*' -d 10 -o wall.svg\n");
}

/* The format FILE's extension picks; -EINVAL for an unknown one. */
static int out_format(const char *path, enum out_fmt *fmt)
{
	size_t n = strlen(path);

#define ENDS(s) (n > strlen(s) && !strcmp(path + n - strlen(s), s))
	if (ENDS(".folded"))
		*fmt = OUT_FOLDED;
	else if (ENDS(".svg"))
		*fmt = OUT_SVG;
	else if (ENDS(".pb.gz"))
		*fmt = OUT_PPROF;
	else
		return -EINVAL;
#undef ENDS
	return 0;
}

/* ---- writers --------------------------------------------------------------------------- */

struct emit {
	struct stackagg_labels *labels; /* frame id -> label (stackagg.h) */
	const char *buf[STACKAGG_MAX_FRAMES];
	struct flame *flame;
	struct pprof *pprof;
	bool multi;  /* roots are process then thread */
	bool merged; /* no thread root frame (--no-per-thread) */
};

static int emit_flame(void *arg, const uint32_t *ids, size_t n, uint64_t count)
{
	struct emit *e = arg;

	for (size_t i = 0; i < n; i++)
		if (!(e->buf[i] = stackagg_labels_get(e->labels, ids[i])))
			return -ENOMEM;
	return flame_add(e->flame, e->buf, n, count);
}

static int emit_pprof(void *arg, const uint32_t *ids, size_t n, uint64_t count)
{
	struct emit *e = arg;
	size_t th = e->multi && n > 1 ? 1 : 0; /* the thread root frame */

	for (size_t i = 0; i < n; i++)
		if (!(e->buf[i] = stackagg_labels_get(e->labels, ids[i])))
			return -ENOMEM;
	return pprof_add(e->pprof, e->buf, n, (int64_t)count, e->merged ? NULL : e->buf[th]);
}

/* The pprof sample type of a time profile. */
static const char *event_pprof_type(enum session_event ev)
{
	return ev == SESSION_EVENT_OFFCPU ? "off_cpu" : "wall";
}

static int write_output(struct stackagg *a, enum out_fmt fmt, int fd, bool multi, bool merged,
			unsigned int freq, uint64_t duration_ns, const char *title,
			const char *subtitle, enum session_event ev)
{
	struct emit *e = calloc(1, sizeof(*e));
	FILE *f = NULL;
	int rv;

	if (!e)
		return -ENOMEM;
	e->multi = multi;
	e->merged = merged;
	if (fmt == OUT_FOLDED) {
		f = fdopen(dup(fd), "w");
		if (!f) {
			rv = -errno;
			goto out;
		}
		rv = stackagg_write_folded(a, f);
		if (fclose(f) != 0 && rv == 0)
			rv = -EIO;
		goto out;
	}
	e->labels = stackagg_labels_new(a);
	if (!e->labels) {
		rv = -ENOMEM;
		goto out;
	}
	if (fmt == OUT_SVG) {
		struct flame_opts o;

		e->flame = flame_new();
		if (!e->flame) {
			rv = -ENOMEM;
			goto out;
		}
		rv = stackagg_foreach(a, emit_flame, e);
		if (rv != 0)
			goto out;
		flame_opts_init(&o);
		o.title = title;
		o.subtitle = subtitle;
		o.palette = FLAME_PALETTE_JAVA;
		if (ev != SESSION_EVENT_CPU)
			o.countname = "us"; /* counts are microseconds */
		f = fdopen(dup(fd), "w");
		if (!f) {
			rv = -errno;
			goto out;
		}
		rv = flame_render_svg(e->flame, &o, f);
		if (rv == -ENODATA)
			rv = 0; /* an SVG saying "no samples" was written */
		if (fclose(f) != 0 && rv == 0)
			rv = -EIO;
	} else {
		/* A time profile counts microseconds: 1000 ns each. */
		e->pprof = pprof_new(ev != SESSION_EVENT_CPU ? 1000
							     : 1000000000ull / (freq ? freq : 99));
		if (!e->pprof) {
			rv = -ENOMEM;
			goto out;
		}
		if (ev != SESSION_EVENT_CPU &&
		    (rv = pprof_set_time_type(e->pprof, event_pprof_type(ev))) != 0)
			goto out;
		pprof_set_time(e->pprof, 0, (int64_t)duration_ns);
		(void)pprof_add_comment(e->pprof, title); /* the labels, as in the SVG's title */
		rv = stackagg_foreach(a, emit_pprof, e);
		if (rv == 0)
			rv = pprof_write_gz(e->pprof, fd);
	}
out:
	flame_free(e->flame);
	pprof_free(e->pprof);
	stackagg_labels_free(e->labels);
	free(e);
	return rv;
}

/* Write to a temporary file next to path, then rename it over path. */
static int write_file(const char *path, struct stackagg *a, enum out_fmt fmt, bool multi,
		      bool merged, unsigned int freq, uint64_t duration_ns, const char *title,
		      const char *subtitle, enum session_event ev)
{
	char *tmp = NULL;
	int fd, rv;

	if (asprintf(&tmp, "%s.tmp.%d", path, (int)getpid()) < 0)
		return -ENOMEM;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		rv = -errno;
		free(tmp);
		return rv;
	}
	rv = write_output(a, fmt, fd, multi, merged, freq, duration_ns, title, subtitle, ev);
	if (rv == 0 && fsync(fd) != 0)
		rv = -errno;
	if (close(fd) != 0 && rv == 0)
		rv = -errno;
	if (rv == 0 && rename(tmp, path) != 0)
		rv = -errno;
	if (rv != 0)
		unlink(tmp);
	free(tmp);
	return rv;
}

/* ---- summary --------------------------------------------------------------------------- */

static void pct(char *buf, size_t len, uint64_t part, uint64_t all)
{
	if (!all)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%% (%llu/%llu)", 100.0 * (double)part / (double)all,
			 (unsigned long long)part, (unsigned long long)all);
}

/* What became of interpreted frames, and why some were not named. */
static void print_java_summary(const struct session_summary *sm)
{
	const struct javaframes_stats *j = &sm->java;
	uint64_t left = j->no_layout + j->no_regs;
	char named[64];

	if (!j->interp)
		return;
	pct(named, sizeof(named), j->named, j->interp);
	fg_err(CMD,
	       "interpreted frames: %s named (%llu with a line), %llu [unknown] (interpreted), "
	       "%llu left as Interpreter",
	       named, (unsigned long long)j->lines, (unsigned long long)j->unknown,
	       (unsigned long long)left);
	if (j->unknown)
		fg_err(CMD,
		       "  unknown because: beyond the %u-byte stack copy %llu, stack copy and "
		       "kernel chain disagreed %llu, memory unreadable %llu, not a valid method "
		       "(class unloaded?) %llu, bcp outside the method %llu, read budget spent "
		       "%llu, a GC (class unloading) since the sample %llu",
		       sm->stack_copy, (unsigned long long)j->no_stack,
		       (unsigned long long)j->desync, (unsigned long long)j->unreadable,
		       (unsigned long long)j->invalid, (unsigned long long)j->bad_bcp,
		       (unsigned long long)j->over_budget, (unsigned long long)j->gc_since);
	if (j->epoch_reads)
		fg_err(CMD, "  the JVM's unloaded-class count read %llu times for %llu samples",
		       (unsigned long long)j->epoch_reads, (unsigned long long)j->samples);
	if (j->no_layout)
		fg_err(CMD, "  left as Interpreter: %s",
		       j->layout_why ? j->layout_why : "no VM layout from the agent");
	if (j->no_regs)
		fg_err(CMD, "  left as Interpreter: %llu frames of samples without a stack copy",
		       (unsigned long long)j->no_regs);
}

/* How user stacks were unwound and how many reached their thread's start, for the SVG. */
static void unwind_subtitle(const struct session_summary *sm, char *buf, size_t len)
{
	uint64_t all = sm->unwound_fp + sm->unwound_vm;
	const struct stackagg_stats *a = &sm->agg;
	double root = a->user_stacks ? 100.0 * (double)a->rooted / (double)a->user_stacks : 0;

	if (!sm->unwound_vm)
		snprintf(buf, len, "user stacks: frame pointers | %.1f%% reached a thread root",
			 root);
	else if (!sm->unwound_fp)
		snprintf(buf, len,
			 "user stacks: stack copy + JVM frame facts (no frame pointers needed) | "
			 "%.1f%% reached a thread root",
			 root);
	else
		snprintf(buf, len,
			 "user stacks: %.1f%% by stack copy + JVM frame facts, %.1f%% by frame "
			 "pointers | %.1f%% reached a thread root",
			 100.0 * (double)sm->unwound_vm / (double)all,
			 100.0 * (double)sm->unwound_fp / (double)all, root);
}

/* How user stacks were unwound, how far they got, and why some stopped short. */
static void print_unwind_summary(const struct session_summary *sm)
{
	const struct vmstack_stats *v = &sm->vm;
	uint64_t all = sm->unwound_fp + sm->unwound_vm;
	char vm[64], root[64], agree[64];

	pct(root, sizeof(root), sm->agg.rooted, sm->agg.user_stacks);
	if (!all) {
		fg_err(CMD,
		       "user stacks: frame pointers (no stack copy); reached a thread root: %s",
		       root);
		return;
	}
	pct(vm, sizeof(vm), sm->unwound_vm, all);
	fg_err(CMD,
	       "user stacks: %s unwound from the stack copy and the JVM's frame facts, the rest "
	       "by frame pointers; reached a thread root (start_thread, JavaMain, call_stub): %s; "
	       "%llu that stopped short shown under a [truncated] frame",
	       vm, root, (unsigned long long)sm->agg.unrooted_marked);
	if (v->hybrid)
		fg_err(CMD,
		       "  frame pointers stopped short of a thread root in %llu samples; continued "
		       "from the stack copy (CFI and frame facts) to the root: %llu (the vm "
		       "unwinder's walks below include them)",
		       (unsigned long long)v->hybrid, (unsigned long long)v->hybrid_rooted);
	if (v->samples)
		fg_err(CMD,
		       "  vm unwinder: %llu walks, %.1f frames each, %.2f us each; ended at the "
		       "root %llu, [truncated] by the %u-byte copy %llu (continued to the root by "
		       "the kernel's chain %llu, not where it held what is not code %llu), at max depth %llu, lost "
		       "%llu (in compiled code %llu, stubs %llu, the interpreter %llu, native code "
		       "%llu, code not announced yet %llu, not code %llu); deoptimised frames %llu; "
		       "walked again once the code tables were complete up to their time %llu",
		       (unsigned long long)v->samples, (double)v->frames / (double)v->samples,
		       (double)v->ns / 1e3 / (double)v->samples,
		       (unsigned long long)v->end[UNW_END_ROOT], sm->stack_copy,
		       (unsigned long long)v->end[UNW_END_TRUNCATED],
		       (unsigned long long)v->past_copy, (unsigned long long)v->past_copy_refused,
		       (unsigned long long)v->end[UNW_END_MAX],
		       (unsigned long long)v->end[UNW_END_LOST],
		       (unsigned long long)v->lost_at[UNW_COMPILED],
		       (unsigned long long)v->lost_at[UNW_STUB] +
			       (unsigned long long)v->lost_at[UNW_CALL_STUB],
		       (unsigned long long)v->lost_at[UNW_INTERP],
		       (unsigned long long)v->lost_at[UNW_NATIVE],
		       (unsigned long long)v->lost_at[UNW_ANON],
		       (unsigned long long)v->lost_at[UNW_NOT_CODE], (unsigned long long)v->deopt,
		       (unsigned long long)v->deferred);
	if (v->checked || v->check_broken) {
		pct(agree, sizeof(agree), v->agreed, v->checked);
		fg_err(CMD,
		       "unwind check: %s samples agree frame for frame with the kernel's "
		       "frame-pointer chain (%llu more not compared: their chain broke before the "
		       "thread's start)",
		       agree, (unsigned long long)v->check_broken);
		if (v->fp_samples && v->samples && v->ns && v->fp_ns)
			fg_err(CMD,
			       "unwind cost on the same samples: vm %.2f us/sample (%.2f M frames/s), "
			       "frame pointers walked again in the copy %.2f us/sample (%.2f M frames/s), "
			       "%.1fx",
			       (double)v->ns / 1e3 / (double)v->samples,
			       (double)v->frames * 1e3 / (double)v->ns,
			       (double)v->fp_ns / 1e3 / (double)v->fp_samples,
			       (double)v->fp_frames * 1e3 / (double)v->fp_ns,
			       ((double)v->ns / (double)v->samples) /
				       ((double)v->fp_ns / (double)v->fp_samples));
	}
}

/* Off-CPU and wall: each thread's exact time, and how its stacks were scaled to it. */
static void print_exact_summary(const struct session_summary *sm)
{
	const struct session_exact *x = &sm->exact;
	const uint64_t *ns = x->ns;
	double off = (double)(ns[0] + ns[1] + ns[2] + ns[3]) / 1e9;

	if (!x->on) {
		fg_err(CMD,
		       "exact times: off (%s): the widths are the sampled stacks' weights, unbiased "
		       "but not exact",
		       x->why_off ? x->why_off : "?");
		return;
	}
	fg_err(CMD,
	       "exact times: %llu threads counted at every switch: %.3f s off the CPU (sleeping "
	       "%.3f, preempted %.3f, disk I/O %.3f, other %.3f)",
	       (unsigned long long)x->threads, off, (double)ns[1] / 1e9, (double)ns[0] / 1e9,
	       (double)ns[2] / 1e9, (double)ns[3] / 1e9);
	fg_err(CMD,
	       "exact times: the stacks of %llu (thread, kind) pairs scaled to their time (they "
	       "weighed %.3f s); %llu pairs got no stack, %.3f s shown under [no stack "
	       "sampled]",
	       (unsigned long long)x->strata, (double)x->sampled_us / 1e6,
	       (unsigned long long)x->nostack, (double)x->nostack_ns / 1e9);
	if (x->over)
		fg_err(CMD, "exact times: %llu threads not counted (over the limits)",
		       (unsigned long long)x->over);
	if (x->filtered)
		fg_err(CMD, "exact times: %llu threads left out by --threads",
		       (unsigned long long)x->filtered);
}

/* Off-CPU and wall: what was recorded and every switch not counted, by cause. */
static void print_offcpu_summary(const struct session_summary *sm)
{
	uint64_t skipped =
		sm->switches_out > sm->switch_samples ? sm->switches_out - sm->switch_samples : 0;

	if (sm->event == SESSION_EVENT_CPU)
		return;
	if (sm->switch_bpf_err == 0) {
		char how[128];

		if (sm->switch_rate && sm->offcpu_emitted)
			snprintf(how, sizeof(how),
				 "about %u a second asked, each standing for %.3g ms of waiting on "
				 "average",
				 sm->switch_rate,
				 (double)sm->offcpu_ns / 1e6 / (double)sm->offcpu_emitted);
		else if (sm->switch_rate)
			snprintf(how, sizeof(how), "about %u a second asked", sm->switch_rate);
		else
			snprintf(how, sizeof(how), "each by chance 1/%u", sm->switch_period);
		skipped = sm->switches_skipped;
		fg_err(CMD,
		       "off-CPU: %llu switch-outs, %llu stacks taken in the kernel by BPF (%s; each "
		       "weighed by 1 / the chance it was taken), %llu lost in full rings",
		       (unsigned long long)sm->switches_out, (unsigned long long)sm->switch_samples,
		       how, (unsigned long long)sm->switches_lost);
		if (sm->switch_ends_late)
			fg_err(CMD,
			       "off-CPU: %llu waits' ends timed at their thread's next switch-out by "
			       "the CPU time it had used (switches from the idle task this kernel "
			       "does not trace)",
			       (unsigned long long)sm->switch_ends_late);
		if (sm->switches_filtered)
			fg_err(CMD,
			       "off-CPU: %llu switch-outs of threads --threads leaves out were left "
			       "out in the kernel",
			       (unsigned long long)sm->switches_filtered);
		if (sm->stacks_none)
			fg_err(CMD,
			       "off-CPU: %llu stacks taken without a copy of the user stack "
			       "(unreadable: their interpreted frames and frames without frame "
			       "pointers cannot be named)",
			       (unsigned long long)sm->stacks_none);
	} else {
		fg_err(CMD,
		       "off-CPU: %llu switch-outs, %llu stacks taken (every %u%s) by tracepoint "
		       "events per thread from %s%s: no BPF (%s)",
		       (unsigned long long)sm->switches_out, (unsigned long long)sm->switch_samples,
		       sm->switch_period, sm->switch_period == 1 ? "" : ", weighed that many times",
		       sm->tracefs_dir ? sm->tracefs_dir : "?",
		       sm->tracefs_mounted ? " (mounted by us)" : "",
		       sm->switch_bpf_why ? sm->switch_bpf_why : "?");
	}
	fg_err(CMD,
	       "off-CPU: %llu waits counted, %.3f s (%llu up to their thread's exit, %llu still "
	       "waiting at the end, counted up to it)",
	       (unsigned long long)sm->offcpu_emitted, (double)sm->offcpu_ns / 1e9,
	       (unsigned long long)sm->offcpu_exited, (unsigned long long)sm->offcpu_open_at_end);
	fg_err(CMD,
	       "off-CPU dropped: %llu shorter than --min-block %llu us (%.3f s), %llu not taken "
	       "(the stacks taken stand for them), %llu whose switch-in was lost, %llu over the "
	       "waiting cap",
	       (unsigned long long)sm->offcpu_under_min,
	       (unsigned long long)(sm->min_block_ns / 1000), (double)sm->offcpu_under_min_ns / 1e9,
	       (unsigned long long)skipped, (unsigned long long)sm->offcpu_unmatched,
	       (unsigned long long)sm->offcpu_full);
	if (sm->event == SESSION_EVENT_WALL && sm->exact.on)
		fg_err(CMD,
		       "wall: %.3f s on the CPU + %.3f s off it, every thread's exact time (the "
		       "samples weighed %.3f s + %.3f s)",
		       (double)sm->exact.ns[4] / 1e9,
		       (double)(sm->exact.ns[0] + sm->exact.ns[1] + sm->exact.ns[2] +
				sm->exact.ns[3]) /
			       1e9,
		       (double)sm->cpu_ns / 1e9, (double)sm->offcpu_ns / 1e9);
	else if (sm->event == SESSION_EVENT_WALL)
		fg_err(CMD, "wall: %.3f s on the CPU (cpu-clock samples) + %.3f s off it",
		       (double)sm->cpu_ns / 1e9, (double)sm->offcpu_ns / 1e9);
	print_exact_summary(sm);
	if (sm->thread_filtered)
		fg_err(CMD, "--threads left out %llu samples of other threads",
		       (unsigned long long)sm->thread_filtered);
}

static void print_summary(const struct session_summary *sm)
{
	char j[64], n[64], k[64];

	if (sm->cycles_err && sm->cycles_err != -ECANCELED)
		fg_err(CMD, "cycles not supported here, using %s", sm->event_name);
	if (sm->ring_bytes < sm->ring_bytes_wanted)
		fg_err(CMD,
		       "rings of %zu KiB per CPU, not the %zu KiB that %u-byte stack copies ask for: "
		       "the kernel granted no more locked memory (kernel.perf_event_mlock_kb per CPU, "
		       "then RLIMIT_MEMLOCK; CAP_IPC_LOCK lifts both); records lost for it are "
		       "counted below",
		       sm->ring_bytes >> 10, sm->ring_bytes_wanted >> 10, sm->stack_copy);
	if (sm->cpus_err)
		fg_err(CMD,
		       "sampling per thread: CPU-wide events refused (%s; root or CAP_PERFMON "
		       "allows them), so the JVM pays for its events at each context switch",
		       strerror(-sm->cpus_err));
	/* Off-CPU alone takes no CPU samples: no filter of them to speak of. */
	if (sm->per_cpu && sm->filter_err && sm->event != SESSION_EVENT_OFFCPU)
		fg_err(CMD,
		       "sampling per CPU without the kernel's filter by process (BPF: %s; "
		       "CAP_BPF allows it): %llu samples of other processes were taken and dropped",
		       strerror(-sm->filter_err), (unsigned long long)sm->samples_foreign);
	if (sm->event == SESSION_EVENT_OFFCPU)
		fg_err(CMD,
		       "%llu samples in %.1f s at switch-outs (off-CPU stacks %s, stack depth "
		       "%u), %llu lost records (%llu events lost), %llu dropped",
		       (unsigned long long)sm->samples, (double)sm->duration_ns / 1e9,
		       sm->switch_bpf_err == 0 ? "by BPF" : "by tracepoint events per thread",
		       sm->max_stack, (unsigned long long)sm->lost_records,
		       (unsigned long long)sm->lost + (unsigned long long)sm->lost_samples,
		       (unsigned long long)sm->agg.dropped);
	else
		fg_err(CMD,
		       "%llu samples in %.1f s at %u Hz (event %s %s, stack depth %u), "
		       "%llu lost records (%llu events lost), %llu dropped",
		       (unsigned long long)sm->samples, (double)sm->duration_ns / 1e9, sm->freq_hz,
		       sm->event_name, sm->per_cpu ? "per CPU" : "per thread", sm->max_stack,
		       (unsigned long long)sm->lost_records,
		       (unsigned long long)sm->lost + (unsigned long long)sm->lost_samples,
		       (unsigned long long)sm->agg.dropped);
	pct(j, sizeof(j), sm->agg.unresolved[STACKAGG_CLASS_JAVA],
	    sm->agg.frames[STACKAGG_CLASS_JAVA]);
	pct(n, sizeof(n), sm->agg.unresolved[STACKAGG_CLASS_NATIVE],
	    sm->agg.frames[STACKAGG_CLASS_NATIVE]);
	pct(k, sizeof(k), sm->agg.unresolved[STACKAGG_CLASS_KERNEL],
	    sm->agg.frames[STACKAGG_CLASS_KERNEL]);
	fg_err(CMD, "unresolved frames: java %s, native %s, kernel %s", j, n, k);
	if (sm->agg.retried)
		fg_err(CMD,
		       "%llu samples had a JIT address with no code yet when first looked up; "
		       "%llu of them resolved at the end with the late code events",
		       (unsigned long long)sm->agg.retried,
		       (unsigned long long)sm->agg.late_resolved);
	if (sm->kernel_error)
		fg_err(CMD, "kernel symbols unavailable: %s", strerror(-sm->kernel_error));
	if (sm->agg.jit_lines + sm->agg.jit_no_line) {
		pct(j, sizeof(j), sm->agg.jit_lines, sm->agg.jit_lines + sm->agg.jit_no_line);
		fg_err(CMD,
		       "compiled and inlined frames with a line: %s; %llu without (no line from "
		       "the agent for that code: an older agent, a method without a line table, "
		       "or a chain that did not match)",
		       j, (unsigned long long)sm->agg.jit_no_line);
	}
	print_offcpu_summary(sm);
	print_java_summary(sm);
	if (sm->debuginfod)
		fg_err(CMD,
		       "debuginfod: %llu lookups in %.1f s, %llu debug files found (%llu libraries "
		       "named from them), %llu not found, %llu timed out, %llu failed, %llu over "
		       "the limits",
		       (unsigned long long)sm->debuginfod_st.lookups,
		       (double)sm->debuginfod_st.ns / 1e9,
		       (unsigned long long)sm->debuginfod_st.found,
		       (unsigned long long)sm->debug_fetched,
		       (unsigned long long)sm->debuginfod_st.not_found,
		       (unsigned long long)sm->debuginfod_st.timeouts,
		       (unsigned long long)sm->debuginfod_st.errors,
		       (unsigned long long)sm->debuginfod_st.refused);
	if (sm->debuginfod && sm->debuginfod_st.timeouts && !sm->debuginfod_st.found &&
	    !sm->debuginfod_st.not_found)
		fg_err(CMD,
		       "debuginfod: %s did not answer within the lookup timeout: not asked again "
		       "in this run (check DEBUGINFOD_URLS)",
		       getenv("DEBUGINFOD_URLS") ? getenv("DEBUGINFOD_URLS") : "the server");
	print_unwind_summary(sm);
	for (size_t i = 0; i < sm->njvms; i++) {
		const struct session_jvm_summary *v = &sm->jvms[i];

		if (!v->connected_ever && !v->jvm)
			continue; /* not a JVM (a shell, a sidecar): nothing to say */
		if (!v->connected_ever) {
			fg_err(CMD,
			       "PID %u: no fgcollect agent connected; Java frames are [unknown] "
			       "(start the JVM with -agentpath:.../libfgagent.so)",
			       v->pid);
			continue;
		}
		if (!v->drops_known) {
			fg_err(CMD,
			       "PID %u: %llu code blobs (%llu live)%s; events the agent dropped: "
			       "unknown (the watch daemon did not report them)",
			       v->pid, (unsigned long long)v->blobs, (unsigned long long)v->live,
			       v->exited ? ", exited" : "");
			continue;
		}
		fg_err(CMD,
		       "PID %u: %llu code blobs (%llu live), agent dropped %llu events "
		       "(queue full %llu, table full %llu)%s",
		       v->pid, (unsigned long long)v->blobs, (unsigned long long)v->live,
		       (unsigned long long)v->agent_queue_full +
			       (unsigned long long)v->agent_table_full,
		       (unsigned long long)v->agent_queue_full,
		       (unsigned long long)v->agent_table_full, v->exited ? ", exited" : "");
	}
}

static void print_notes(struct session *s)
{
	char buf[SESSION_NOTE_MAX];

	while (session_next_note(s, buf, sizeof(buf)))
		fg_err(CMD, "%s", buf);
}

/* ---- entry ----------------------------------------------------------------------------- */

/* What the command line asks for. */
struct env {
	struct session_opts so;
	enum out_fmt fmt;
	const char *out, *code_log;
	uint64_t duration_s;
};

enum { OPT_CODE_LOG = SESSION_OPT_END };

/* One of record's own options: 1 when c is one, 0 when it is not, -1 for a bad value (printed). */
static int record_opt(int c, const char *arg, void *ctx)
{
	struct env *env = ctx;

	switch (c) {
	case 'd':
		return cli_u64(CMD, "duration", arg, 1, MAX_DURATION_S, "whole seconds",
			       &env->duration_s);
	case 'o':
		env->out = arg;
		if (out_format(arg, &env->fmt) != 0) {
			fg_err(CMD, "-o '%s': unknown extension; use .folded, .svg or .pb.gz", arg);
			return -1;
		}
		return 1;
	case OPT_CODE_LOG:
		env->code_log = arg;
		return 1;
	default:
		return 0;
	}
}

/* 0 to go on, -1 when --help was printed, or an exit status (the error printed). */
static int parse_args(int argc, char **argv, struct env *env)
{
	static const struct option longopts[] = {
		SESSION_CLI_LONGOPTS,
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "code-log", required_argument, NULL, OPT_CODE_LOG },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	return session_cli_parse(CMD, argc, argv, ":p:c:aF:d:o:e:h", longopts, record_opt, env,
				 &env->so, usage);
}

/* Sample until the duration ends, a signal arrives or every target has exited. */
static void run(struct session *s, uint64_t duration_s)
{
	uint64_t deadline = duration_s ? fg_now_ns() + duration_s * 1000000000ull : UINT64_MAX;
	int rv;

	while (!stop_flag && !session_done(s)) {
		uint64_t now = fg_now_ns();

		if (now >= deadline)
			break;
		/* Until the deadline: the recording wakes for its own work (session.h); the
		 * second's cap only bounds a wake-up the kernel might not give. */
		rv = session_step(s, deadline - now > 1000000000ull
					     ? 1000
					     : (int)((deadline - now + 999999ull) / 1000000ull));
		print_notes(s);
		if (rv != 0 && rv != -EINTR) {
			fg_err(CMD, "sampling failed: %s; writing what was recorded",
			       strerror(-rv));
			break;
		}
	}
	if (stop_flag)
		fg_err(CMD, "interrupted; writing what was recorded");
	else if (session_done(s))
		fg_err(CMD, "every target exited; recording ended early");
	session_finish(s, 500);
	print_notes(s);
}

static void write_code_log(struct session *s, const char *path)
{
	FILE *cf = fopen(path, "we");
	int rv = cf ? session_write_code_log(s, cf) : -errno;

	if (cf && fclose(cf) != 0 && rv == 0)
		rv = -EIO;
	if (rv != 0)
		fg_err(CMD, "cannot write the code log %s: %s", path, strerror(-rv));
}

/* Write the profile, the summary and the code log; the exit status. */
static int report(struct session *s, const struct env *env)
{
	const struct session_opts *so = &env->so;
	struct session_summary sm;
	char title[512], subtitle[256], host[65] = "";
	int rv;

	session_summary(s, &sm);
	if (gethostname(host, sizeof(host) - 1) != 0)
		snprintf(host, sizeof(host), "unknown");
	/* The labels of rolling profiles: service, container, host PID, host. */
	if (so->target == SESSION_TARGET_PID) {
		struct session_target_info ti = { .service = "", .container_id = "" };
		struct prof_labels pl;

		if (session_target_count(s) > 0)
			session_target_at(s, 0, &ti);
		prof_labels_set(&pl, ti.service, ti.container_id, so->pid, host);
		prof_labels_title(&pl, title, sizeof(title));
	} else if (so->target == SESSION_TARGET_CONTAINER) {
		snprintf(title, sizeof(title), "CPU: container %.12s | host %s", so->container,
			 host);
	} else {
		snprintf(title, sizeof(title), "CPU: every JVM | host %s", host);
	}
	if (so->event != SESSION_EVENT_CPU) {
		/* "Off-CPU time (us): ..." / "Wall-clock time (us): ..." in place of "CPU: ". */
		char t[sizeof(title)];
		const char *rest = strncmp(title, "CPU: ", 5) ? title : title + 5;
		int k = snprintf(t, sizeof(t), "%s time (us): ",
				 so->event == SESSION_EVENT_OFFCPU ? "Off-CPU" : "Wall-clock");

		strncat(t, rest, sizeof(t) - (size_t)k - 1);
		memcpy(title, t, sizeof(title));
	}
	unwind_subtitle(&sm, subtitle, sizeof(subtitle));
	if (env->out)
		rv = write_file(env->out, session_agg(s), env->fmt,
				so->target != SESSION_TARGET_PID, so->merge_threads, sm.freq_hz,
				sm.duration_ns, title, subtitle, so->event);
	else
		rv = write_output(session_agg(s), OUT_FOLDED, STDOUT_FILENO, false, false,
				  sm.freq_hz, sm.duration_ns, title, subtitle, so->event);
	print_summary(&sm);
	if (env->code_log)
		write_code_log(s, env->code_log);
	if (rv != 0) {
		fg_err(CMD, "cannot write %s: %s", env->out ? env->out : "stdout", strerror(-rv));
		return FG_EXIT_FAIL;
	}
	if (env->out)
		fg_err(CMD, "wrote %s (%zu distinct stacks)", env->out, sm.agg.stacks);
	return FG_EXIT_OK;
}

int cmd_record(int argc, char **argv)
{
	struct env env = { .so = { .src = SESSION_SRC_AUTO,
				   .stack_copy = SESSION_STACK_COPY_AUTO,
				   .switch_rate = SESSION_SWITCH_RATE_AUTO,
				   .min_block_ns = SESSION_DEFAULT_MIN_BLOCK_NS },
			   .fmt = OUT_FOLDED };
	struct sigaction sa = { .sa_handler = on_signal };
	struct session *s = NULL;
	char why[512];
	int rv;

	rv = parse_args(argc, argv, &env);
	if (rv)
		return rv < 0 ? FG_EXIT_OK : rv;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	cli_warn_privs(CMD, env.so.event != SESSION_EVENT_CPU);
	rv = session_open(&env.so, &s, why, sizeof(why));
	if (rv != 0) {
		fg_err(CMD, "%s", why);
		return FG_EXIT_FAIL;
	}
	run(s, env.duration_s);
	rv = report(s, &env);
	session_close(s);
	return rv;
}
