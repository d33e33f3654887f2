// SPDX-License-Identifier: MIT
/*
 * session_ring.c - allocation samples whose stacks the agents copied into their rings
 * (shared/allocring.h; agent option allocstack=copy): each JVM's ring read from its memory
 * (allocread.h: the kernel-verified PID, every slot checked), each copy walked with the vm
 * walker and code tables of a CPU sample (ses_walk_copy) at the sample's own time, cut to its
 * innermost Java frame, its class named from its Klass (allocstack.h), weighed by the interval
 * it was drawn with (evweigh.h) and counted as the agents' GetStackTrace samples are. What the
 * copies lost before they were read weighed (allocread.h: the ring's sums) is counted too, under
 * LOST_FRAME in the place of a thread, with no stack and no class: the totals stay whole and
 * nothing is made up.
 *
 * Invariant: a ring is read only at the address and size its own agent announced in its
 * VM_LAYOUT, in the process that agent's connection was verified for; what a slot holds is
 * never trusted (allocread.h, vmstack.h, allocstack.h check it). Memory: a batch's buffers per
 * JVM and at most RING_DEFER_MAX copies (RING_DEFER_BYTES of stack) waiting for their code.
 *
 * HotSpot announces a compiled method after it may already run (CompiledMethodLoad comes from
 * its ServiceThread, its frame facts perhaps in the agent's next message): a copy whose walk
 * went through code the table does not have yet waits, and is walked again as soon as its
 * JVM's table has new code, or at the latest once the tables are complete up to its time (the
 * watermark, as a CPU sample's walk and every JIT lookup wait). Most wait a few milliseconds,
 * so a fresh method hot in every thread at once does not fill the wait.
 */
#include "session_int.h"
#include "allocread.h"
#include "allocstack.h"
#include "nstid.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define RING_MAX 16		     /* JVMs whose rings are read at once */
#define RING_PER_POLL 4096u	     /* slots read from one ring per poll at most */
#define RING_DEFER_MAX 4096u	     /* copies waiting for code not announced yet ... */
#define RING_DEFER_BYTES (16u << 20) /* ... and their stack bytes */
#define UNKNOWN_CLASS "[unknown class]"
#define LOST_FRAME "[lost before read]" /* in a thread's place: copies lost, stacks unknown */

struct ses_ring {
	uint32_t pid;
	bool open;
	struct allocread rd;
	struct nstid tids; /* the agent's thread ids -> the host's */
	struct interp_layout il;
	bool il_ok;
	uint64_t code_gen;	       /* its code table's ring_code_gen() at this poll */
	uint64_t took;		       /* samples its last poll went through */
	uint64_t lost_seen, torn_seen; /* rd.st counted into the summary so far */
	uint64_t lost_bytes_seen, lost_objs_seen, unweighed_seen, refused_seen;
};

/* A copy whose walk went through code not announced yet: walked again when its JVM's table
 * has new code (code_gen moved) where it waits, and at the latest at its watermark. */
struct ring_deferred {
	uint32_t pid;
	uint64_t code_gen; /* its JVM's ring_code_gen() when it was last walked */
	uint64_t wants;	   /* the address whose code its walk waits for (vmstack_out.wants) */
	struct allocring_slot sl;
	uint8_t *stack;
};

struct ses_rings {
	struct ses_ring r[RING_MAX];
	size_t n;
	uint32_t tried[RING_MAX * 4]; /* pids whose ring was looked at (opened or refused) */
	size_t ntried;
	struct allocstack_klasses kc;
	struct ring_deferred *defer; /* RING_DEFER_MAX, allocated at the first wait */
	size_t ndefer;
	size_t defer_bytes; /* their stacks' bytes */
	char cls[ALLOCSTACK_NAME_MAX];
	struct session *s; /* the poll's, for its callback */
	struct ses_ring *cur;
	int wait_ms;	  /* until the next poll: longer while the rings fill slowly */
	uint64_t last_ns; /* the last poll's time */
};

static struct ses_ring *ring_of(struct ses_rings *rs, uint32_t pid)
{
	for (size_t i = 0; i < rs->n; i++)
		if (rs->r[i].pid == pid)
			return &rs->r[i];
	return NULL;
}

/* What pid's code table has taken so far (loads, stubs, frame facts): moves when code came. */
static uint64_t ring_code_gen(const struct session *s, uint32_t pid)
{
	const struct codetab *tab = ses_src_table(s, pid);
	struct codetab_stats st;

	if (!tab)
		return 0;
	codetab_stats(tab, &st);
	return st.loads + st.dynamic + st.frames + st.refreshed + st.unloads;
}

/* One copy walked, weighed and counted; false when it waits for its code (deferred). */
static bool walk_one(struct session *s, struct ses_ring *r, const struct allocring_slot *sl,
		     const uint8_t *stack, bool may_defer)
{
	struct ses_rings *rs = s->ae.rings;
	struct uregs regs = { .valid = true, .ip = sl->pc, .sp = sl->sp, .bp = sl->fp };
	struct ustack st = { stack, sl->sp, sl->len };
	struct stackagg_sample smp = { .pid = r->pid, .ts = sl->ts, .leaf_stub = true };
	struct target *t = targets_find(&s->targets, r->pid);
	uint32_t tid = 0, k;
	uint64_t w, aux;
	bool java = false;
	int rv;

	if (nstid_lookup(&r->tids, sl->tid, s->now(), &tid) == 0 && tid) {
		smp.tid = tid;
		smp.thread = threadnames_get(&s->names, r->pid, tid);
	} else {
		smp.thread = "[tid ?]";
	}
	/* A thread --threads leaves out: counted, never walked. */
	if (s->flt.threads_re_on &&
	    (!smp.thread || regexec(&s->flt.threads_re, smp.thread, 0, NULL, 0) != 0)) {
		s->ae.ev.events++;
		if (t)
			t->ev.stacks++;
		if (!smp.tid)
			s->ae.ev.no_thread++;
		s->ae.ev.filtered++;
		return true;
	}
	rv = ses_walk_copy(s, r->pid, sl->ts, &regs, &st, may_defer, &smp);
	if (rv == -EAGAIN)
		return false;
	if (rv != 0 || !smp.user_rooted)
		s->ae.ev.ring_unrooted++;
	s->ae.ev.events++;
	if (t)
		t->ev.stacks++;
	if (!smp.tid)
		s->ae.ev.no_thread++;
	if (evweigh_alloc_gap(&s->ae.wg, sl->size, sl->interval,
			      (sl->flags & ALLOCRING_F_GAP) ? sl->w_bytes : 0, &w, &aux) != 0) {
		s->ae.ev.bad++;
		return true;
	}
	/* From the thread's last Java frame anchor: stubs and the VM's frames may come first.
	 * A walk that found no Java frame still leaves its leading stubs out: the runtime stub
	 * the allocation went through is never the frame shown allocating. */
	k = rv == 0 ? allocstack_java_from(ses_src_table(s, r->pid), smp.user, smp.nr_user, sl->ts,
					   &java)
		    : 0;
	if (rv != 0 || !java)
		s->ae.ev.ring_no_java++;
	if (k) {
		smp.user += k;
		smp.nr_user -= k;
		if (smp.uframes)
			smp.uframes += k;
	}
	if (!r->il_ok || !allocstack_klass_name(&rs->kc, &vmmem_process, r->pid, &r->il, sl->klass,
						rs->cls, sizeof(rs->cls))) {
		snprintf(rs->cls, sizeof(rs->cls), "%s", UNKNOWN_CLASS);
		s->ae.ev.ring_no_class++;
	}
	smp.leaf = rs->cls;
	smp.weight = w;
	smp.aux = aux;
	smp.process = ses_process_root(s, r->pid);
	if (stackagg_sample(s->agg, &smp) != 0) {
		s->ae.ev.dropped++;
		return true;
	}
	s->ae.ev.counted++;
	s->ae.ev.ring_counted++;
	s->ae.ev.bytes += w;
	s->ae.ev.objects += aux;
	return true;
}

/*
 * A copy walked without waiting any more: when its walk still wants code (walked again with
 * may_defer first), counted as walked without it.
 */
static void walk_final(struct session *s, struct ses_ring *r, const struct allocring_slot *sl,
		       const uint8_t *stack)
{
	if (walk_one(s, r, sl, stack, true))
		return;
	s->ae.ev.ring_no_code++;
	(void)walk_one(s, r, sl, stack, false);
}

/* Keep a copy whose walk wants code not announced yet: false when the wait is full. */
static bool defer_copy(struct ses_rings *rs, struct ses_ring *r, const struct allocring_slot *sl,
		       const uint8_t *stack, uint64_t wants)
{
	struct ring_deferred *d;

	if (rs->ndefer == RING_DEFER_MAX || rs->defer_bytes + sl->len > RING_DEFER_BYTES ||
	    (!rs->defer && !(rs->defer = calloc(RING_DEFER_MAX, sizeof(*rs->defer)))))
		return false;
	d = &rs->defer[rs->ndefer];
	d->stack = malloc(sl->len ? sl->len : 1);
	if (!d->stack)
		return false;
	memcpy(d->stack, stack, sl->len);
	d->sl = *sl;
	d->pid = r->pid;
	d->code_gen = r->code_gen;
	d->wants = wants;
	rs->defer_bytes += sl->len;
	rs->ndefer++;
	return true;
}

/* allocread's callback: a whole copy of the polled ring. */
static void on_copy(void *arg, const struct allocring_slot *sl, const uint8_t *stack)
{
	struct ses_rings *rs = arg;
	struct session *s = rs->s;

	if (sl->ts < s->start_ns) {
		s->ae.ev.ring_early++;
		return;
	}
	if (walk_one(s, rs->cur, sl, stack, true))
		return;
	if (defer_copy(rs, rs->cur, sl, stack, s->uw.wants)) {
		s->ae.ev.ring_waited++;
		return;
	}
	s->ae.ev.ring_no_code++; /* too many wait already */
	(void)walk_one(s, rs->cur, sl, stack, false);
}

/* Has the code that d's walk waits for come (a blob there at its time, with frame facts when
 * it is a compiled method)? */
static bool code_came(const struct session *s, const struct ring_deferred *d)
{
	const struct codetab *tab = ses_src_table(s, d->pid);
	const struct codeblob *b = tab ? codetab_lookup(tab, d->wants, d->sl.ts) : NULL;

	return b && (b->kind != CODEBLOB_COMPILED || b->frame);
}

void ses_ring_walk_deferred(struct session *s, uint64_t w)
{
	struct ses_rings *rs = s->ae.rings;
	size_t k = 0;
	uint64_t t0;

	if (!rs || !rs->ndefer)
		return;
	t0 = fg_thread_cpu_ns();
	for (size_t i = 0; i < rs->n; i++)
		rs->r[i].code_gen = ring_code_gen(s, rs->r[i].pid);
	for (size_t i = 0; i < rs->ndefer; i++) {
		struct ring_deferred *d = &rs->defer[i];
		struct ses_ring *r = ring_of(rs, d->pid);

		if (r && d->sl.ts > w) {
			/* Walked again only once its JVM's table has taken new code, its own. */
			bool wait = true;

			if (d->code_gen != r->code_gen && code_came(s, d)) {
				wait = !walk_one(s, r, &d->sl, d->stack, true);
				d->wants = s->uw.wants; /* it may wait further up now */
			}
			d->code_gen = r->code_gen;
			if (wait) {
				rs->defer[k++] = *d;
				continue;
			}
		} else if (r) {
			walk_final(s, r, &d->sl, d->stack);
		}
		rs->defer_bytes -= d->sl.len;
		free(d->stack);
	}
	rs->ndefer = k;
	s->ae.ev.ring_cpu_ns += fg_thread_cpu_ns() - t0;
}

/* Open pid's ring when its agent announced one: false when it has none or cannot be read. */
static bool ring_open(struct session *s, struct ses_rings *rs, uint32_t pid)
{
	const struct codetab *tab = ses_src_table(s, pid);
	const struct fgp_vm_layout *l = tab ? codetab_layout(tab, NULL) : NULL;
	struct ses_ring *r;
	const char *why = NULL;
	uint64_t addr;
	int rv;

	if (!l)
		return false; /* no layout yet: asked again at the next poll */
	if (rs->ntried < sizeof(rs->tried) / sizeof(rs->tried[0]))
		rs->tried[rs->ntried++] = pid;
	if (!(l->caps & FGP_VML_CAP_ALLOC_RING) || !fgp_vml_has(l, FGP_VML_ALLOC_RING_LO) ||
	    !fgp_vml_has(l, FGP_VML_ALLOC_RING_HI) || !fgp_vml_has(l, FGP_VML_ALLOC_RING_SIZE) ||
	    rs->n == RING_MAX)
		return false;
	if ((!s->uw.vs && !(s->uw.vs = vmstack_new())) ||
	    (!s->uw.jf && !(s->uw.jf = javaframes_new(&vmmem_process, s->o.lines))))
		return false;
	addr = fgp_vml_get(l, FGP_VML_ALLOC_RING_LO) |
	       (uint64_t)fgp_vml_get(l, FGP_VML_ALLOC_RING_HI) << 32;
	r = &rs->r[rs->n];
	*r = (struct ses_ring){ .pid = pid };
	rv = allocread_open(&r->rd, &vmmem_process, (pid_t)pid, addr,
			    fgp_vml_get(l, FGP_VML_ALLOC_RING_SIZE));
	if (rv != 0) {
		allocread_close(&r->rd);
		notes_add(&s->notes,
			  "PID %u: its agent's ring of allocation stacks cannot be read (%s): its "
			  "samples copied there are lost",
			  pid, strerror(-rv));
		return false;
	}
	r->rd.since_ns = s->start_ns;
	r->il_ok = interp_layout_init(l, &r->il, &why) == 0 && r->il.names;
	nstid_init(&r->tids, NULL, pid);
	r->open = true;
	rs->n++;
	s->ae.ev.ring_jvms++;
	return true;
}

static bool tried(const struct ses_rings *rs, uint32_t pid)
{
	for (size_t i = 0; i < rs->ntried; i++)
		if (rs->tried[i] == pid)
			return true;
	return false;
}

/*
 * What r's lost copies weighed since the last poll: under LOST_FRAME below the JVM's root,
 * class unknown. Left out with --threads: their threads are not known.
 */
static void count_lost(struct session *s, struct ses_ring *r)
{
	const struct allocread_stats *st = &r->rd.st;
	uint64_t b = st->lost_bytes - r->lost_bytes_seen, o = st->lost_objs - r->lost_objs_seen;
	struct stackagg_sample smp = { .pid = r->pid,
				       .thread = LOST_FRAME,
				       .leaf = UNKNOWN_CLASS,
				       .leaf_stub = true,
				       .ts = s->now() };
	uint64_t objs;

	s->ae.ev.ring_unweighed += st->unweighed - r->unweighed_seen;
	s->ae.ev.ring_refused += st->refused - r->refused_seen;
	r->unweighed_seen = st->unweighed;
	r->refused_seen = st->refused;
	r->lost_bytes_seen = st->lost_bytes;
	r->lost_objs_seen = st->lost_objs;
	if (!b || s->flt.threads_re_on)
		return;
	if (s->o.merge_threads) { /* no thread frames: the mark in their place */
		smp.thread = NULL;
		smp.mark = LOST_FRAME;
	}
	objs = evweigh_round(&s->ae.wg, (double)o / ALLOCRING_OBJ_SCALE);
	smp.process = ses_process_root(s, r->pid);
	/* aux holds at most UINT32_MAX objects a sample: split into that many parts, the bytes
	 * alike (each part's bytes are more than 0: a lost sample weighs at least its objects) */
	for (uint64_t parts = objs / UINT32_MAX + 1, i = 0; i < parts; i++) {
		smp.weight = b / parts + (i == 0 ? b % parts : 0);
		smp.aux = objs / parts + (i == 0 ? objs % parts : 0);
		if (!smp.weight || stackagg_sample(s->agg, &smp) != 0) {
			s->ae.ev.dropped++;
			return;
		}
	}
	s->ae.ev.ring_lost_bytes += b;
	s->ae.ev.bytes += b;
	s->ae.ev.objects += objs;
}

/* Read what r's ring holds now (all: until nothing more comes). */
static void ring_read(struct session *s, struct ses_rings *rs, struct ses_ring *r, bool all)
{
	uint32_t tries = 0;
	uint64_t reads = r->rd.st.reads, next = r->rd.next;
	int rv;

	rs->cur = r;
	r->code_gen = ring_code_gen(s, r->pid); /* what a copy deferred now waits past */
	allocstack_klass_epoch(&rs->kc);	/* a class's Klass read once a poll */
	do {
		rv = allocread_poll(&r->rd, &vmmem_process, RING_PER_POLL, on_copy, rs);
		/* all: a slot still being written is waited for as allocread.h says */
	} while (rv > 0 || (all && rv == 0 && tries++ < ALLOCREAD_STUCK_POLLS));
	s->ae.ev.ring_lost += r->rd.st.lost - r->lost_seen;
	s->ae.ev.ring_torn += r->rd.st.torn - r->torn_seen;
	r->lost_seen = r->rd.st.lost;
	r->torn_seen = r->rd.st.torn;
	count_lost(s, r);
	s->ae.ev.ring_reads += r->rd.st.reads - reads;
	r->took = r->rd.next - next;
	if (rv < 0) { /* the process is gone, or its ring is not one any more */
		allocread_close(&r->rd);
		r->open = false;
	}
}

/*
 * The wait before the next poll: the shortest any open ring asks for (allocread_pace): an empty
 * poll costs one read of a ring's counts, and quiet rings are polled less and less often, never
 * so seldom that one fills halfway at a high allocation rate.
 */
static void ring_pace(struct ses_rings *rs)
{
	int w = INT_MAX;

	for (size_t i = 0; i < rs->n; i++) {
		const struct ses_ring *r = &rs->r[i];
		int rw;

		if (!r->open)
			continue;
		rw = allocread_pace(rs->wait_ms, r->took, r->rd.head.slots, r->rd.interval);
		if (rw < w)
			w = rw;
	}
	rs->wait_ms = w == INT_MAX ? 0 : w;
}

void ses_ring_poll(struct session *s, bool all)
{
	struct ses_rings *rs = s->ae.rings;
	uint64_t t0;

	if (s->o.event != FG_EVENT_ALLOC)
		return;
	if (!rs && !(rs = s->ae.rings = calloc(1, sizeof(*rs))))
		return;
	/* Steps come with every record too: the rings are read at their own pace. */
	if (!all && rs->n && s->now() - rs->last_ns < (uint64_t)rs->wait_ms * 1000000u)
		return;
	rs->last_ns = s->now();
	t0 = fg_thread_cpu_ns();
	rs->s = s;
	for (size_t i = 0; i < s->targets.n; i++) {
		const struct target *t = &s->targets.v[i];

		if (t->connected && !ring_of(rs, t->pid) && !tried(rs, t->pid))
			(void)ring_open(s, rs, t->pid);
	}
	if (s->uw.jf && rs->n)
		javaframes_drain(s->uw.jf);
	for (size_t i = 0; i < rs->n; i++)
		if (rs->r[i].open)
			ring_read(s, rs, &rs->r[i], all);
	ring_pace(rs);
	s->ae.ev.ring_cpu_ns += fg_thread_cpu_ns() - t0;
}

int ses_ring_wait(const struct session *s, int timeout_ms)
{
	const struct ses_rings *rs = s->ae.rings;

	int w;

	if (!rs || !rs->n)
		return timeout_ms;
	w = rs->wait_ms >= ALLOCREAD_POLL_MS ? rs->wait_ms : ALLOCREAD_POLL_MS;
	return timeout_ms < 0 || timeout_ms > w ? w : timeout_ms;
}

uint64_t ses_ring_grace(const struct session *s, uint64_t until)
{
	const struct ses_rings *rs = s->ae.rings;

	for (size_t i = 0; rs && i < rs->ndefer; i++)
		if (rs->defer[i].sl.ts + CODETAB_GRACE_NS > until)
			until = rs->defer[i].sl.ts + CODETAB_GRACE_NS;
	return until;
}

void ses_ring_close(struct session *s)
{
	struct ses_rings *rs = s->ae.rings;

	if (!rs)
		return;
	for (size_t i = 0; i < rs->n; i++) {
		allocread_close(&rs->r[i].rd);
		nstid_fini(&rs->r[i].tids);
	}
	for (size_t i = 0; i < rs->ndefer; i++)
		free(rs->defer[i].stack);
	free(rs->defer);
	free(rs);
	s->ae.rings = NULL;
}
