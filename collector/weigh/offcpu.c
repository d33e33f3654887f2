// SPDX-License-Identifier: MIT
/* offcpu.c - switch-out samples weighed by their thread's time off the CPU (see offcpu.h). */
#include "offcpu.h"

#include "array.h"

#include <stdlib.h>
#include <string.h>

void offcpu_init(struct offcpu *m, uint64_t min_block_ns, offcpu_emit emit, void *ctx)
{
	memset(m, 0, sizeof(*m));
	m->min_block_ns = min_block_ns;
	m->emit = emit;
	m->ctx = ctx;
	htab_init(&m->pend);
	htab_init(&m->lastin);
}

void offcpu_fini(struct offcpu *m)
{
	size_t pos = 0;
	uint64_t *v;

	while ((v = htab_each(&m->pend, &pos, NULL)) != NULL)
		m->emit(m->ctx, m->slots[*v].payload, 0);
	htab_fini(&m->pend);
	htab_fini(&m->lastin);
	free(m->slots);
	free(m->free);
	memset(m, 0, sizeof(*m));
}

/* Hand the sample back weighed by t_out..t_in, or dropped under the minimum. */
static void weigh(struct offcpu *m, void *payload, uint64_t t_out, uint64_t t_in, double scale)
{
	uint64_t d = t_in > t_out ? t_in - t_out : 0;
	double x = (double)d * scale + 0.5;
	uint64_t w = x >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)x;

	if (d < m->min_block_ns || w == 0) {
		m->st.under_min++;
		m->st.under_min_ns += w;
		m->emit(m->ctx, payload, 0);
		return;
	}
	m->st.emitted++;
	m->st.emitted_ns += w;
	m->emit(m->ctx, payload, w);
}

/* Take tid's waiting sample out (and its slot back). */
static void *take(struct offcpu *m, uint64_t *v, uint64_t *t_out, double *scale)
{
	uint32_t i = (uint32_t)*v;
	void *p = m->slots[i].payload;

	*t_out = m->slots[i].t_out;
	*scale = m->slots[i].scale;
	m->slots[i].payload = NULL;
	m->free[m->nfree++] = i;
	htab_remove(&m->pend, v);
	return p;
}

void offcpu_out(struct offcpu *m, uint32_t tid, uint64_t t, double scale, void *payload)
{
	uint64_t *v = htab_get(&m->pend, tid), *li = htab_get(&m->lastin, tid);
	uint32_t i;

	m->st.samples++;
	if (!(scale >= 1.0)) /* NaN included */
		scale = 1.0;
	if (v) {
		/* A second switch-out without a switch-in between: that one was lost. */
		uint64_t t0;
		double s0;

		m->st.unmatched++;
		m->emit(m->ctx, take(m, v, &t0, &s0), 0);
	}
	if (li && *li >= t) {
		/* Its switch-in came through another CPU's ring first. */
		uint64_t t_in = *li;

		htab_remove(&m->lastin, li);
		m->st.early_in++;
		weigh(m, payload, t, t_in, scale);
		return;
	}
	if (m->nfree) {
		i = m->free[--m->nfree];
	} else {
		if (m->nslots >= OFFCPU_MAX_PENDING ||
		    ARRAY_GROW(m->slots, m->cap, m->nslots + 1) != 0)
			goto full;
		/* free holds at most every slot: grow it alongside */
		uint32_t *f = realloc(m->free, m->cap * sizeof(*f));

		if (!f)
			goto full;
		m->free = f;
		i = (uint32_t)m->nslots++;
	}
	if (htab_put(&m->pend, tid, i) != 0) {
		m->free[m->nfree++] = i;
		goto full;
	}
	m->slots[i].t_out = t;
	m->slots[i].scale = scale;
	m->slots[i].payload = payload;
	return;
full:
	m->st.full++;
	m->emit(m->ctx, payload, 0);
}

void offcpu_refused(struct offcpu *m)
{
	m->st.samples++;
	m->st.full++;
}

void offcpu_in(struct offcpu *m, uint32_t tid, uint64_t t)
{
	uint64_t *v = htab_get(&m->pend, tid), t_out;
	double scale;

	if (v && m->slots[*v].t_out <= t) {
		void *p = take(m, v, &t_out, &scale);

		weigh(m, p, t_out, t, scale);
		return;
	}
	/* No sample waits (a skipped switch, or its sample is still in another ring). The
	 * table is bounded by the threads seen: one entry per thread. */
	(void)htab_put(&m->lastin, tid, t);
}

void offcpu_exit(struct offcpu *m, uint32_t tid, uint64_t t)
{
	uint64_t *v = htab_get(&m->pend, tid), *li = htab_get(&m->lastin, tid), t_out;
	double scale;

	if (li)
		htab_remove(&m->lastin, li);
	if (!v)
		return;
	m->st.exited++;
	void *p = take(m, v, &t_out, &scale);

	weigh(m, p, t_out, t, scale);
}

void offcpu_end(struct offcpu *m, uint64_t t)
{
	size_t pos = 0;
	uint64_t *v, key;

	while ((v = htab_each(&m->pend, &pos, &key)) != NULL) {
		struct offcpu_pend *sl = &m->slots[*v];
		void *p = sl->payload;

		sl->payload = NULL;
		m->st.open_at_end++;
		weigh(m, p, sl->t_out, t, sl->scale);
	}
	htab_clear(&m->pend);
	m->nfree = 0;
	m->nslots = 0;
	htab_clear(&m->lastin);
}
