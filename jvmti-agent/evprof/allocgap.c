// SPDX-License-Identifier: MIT
/* allocgap.c - allocation samples weighed by their thread's own bytes (see allocgap.h). */
#include "allocgap.h"

#include <errno.h>
#include <string.h>

#include "allocring.h"

static bool field_of(const struct vmstructs *vs, const char *type, const char *name, uint64_t *off)
{
	return vmstructs_field(vs, type, name, off, NULL) == 0 && *off < ALLOCGAP_THREAD_MAX;
}

int allocgap_build(const struct vmstructs *vs, struct allocgap_layout *l)
{
	uint64_t ab, tlab, start, top, tsize;

	memset(l, 0, sizeof(*l));
	if (!field_of(vs, "Thread", "_allocated_bytes", &ab) ||
	    !field_of(vs, "Thread", "_tlab", &tlab) ||
	    !field_of(vs, "ThreadLocalAllocBuffer", "_start", &start) ||
	    !field_of(vs, "ThreadLocalAllocBuffer", "_top", &top) ||
	    vmstructs_type_size(vs, "JavaThread", &tsize) != 0 || tsize == 0 ||
	    tsize > ALLOCGAP_THREAD_MAX)
		return -ENOENT;
	if (ab + 8 > tsize || tlab + start + 8 > tsize || tlab + top + 8 > tsize)
		return -ENOENT;
	l->allocated = (uint32_t)ab;
	l->tlab_start = (uint32_t)(tlab + start);
	l->tlab_top = (uint32_t)(tlab + top);
	l->thread_size = (uint32_t)tsize;
	return 0;
}

int allocgap_bind(struct allocgap_layout *l, const void *jni, const void *thread)
{
	intptr_t off = (intptr_t)jni - (intptr_t)thread;

	if (!l->thread_size || !jni || !thread || off <= 0 || (uint64_t)off + 8 > l->thread_size)
		return -EINVAL;
	l->env_off = off;
	return 0;
}

static uint64_t word_at(const char *base, uint32_t off)
{
	uint64_t v;

	memcpy(&v, base + off, sizeof(v));
	return v;
}

bool allocgap_read(const struct allocgap_layout *l, const void *jni, uint64_t *bytes)
{
	const char *t;
	uint64_t start, top;

	if (l->env_off <= 0 || !jni)
		return false;
	t = (const char *)jni - l->env_off;
	start = word_at(t, l->tlab_start);
	top = word_at(t, l->tlab_top);
	if (top < start || top - start > ALLOCGAP_TLAB_MAX)
		return false;
	*bytes = word_at(t, l->allocated) + (top - start);
	return true;
}

uint64_t allocgap_weigh(uint64_t *state, uint16_t epoch, uint64_t bytes, uint64_t size,
			uint64_t interval)
{
	uint64_t prev = *state, gap;

	*state = (uint64_t)epoch << 48 | (bytes & ALLOCGAP_BYTES_MASK);
	if (epoch == 0 || prev >> 48 != epoch)
		return 0; /* the thread's first sample in this epoch */
	gap = (bytes - prev) & ALLOCGAP_BYTES_MASK;
	return allocring_gap_ok(gap, size, interval) ? gap : 0;
}
