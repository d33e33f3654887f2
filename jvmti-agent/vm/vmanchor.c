// SPDX-License-Identifier: MIT
/*
 * vmanchor.c - a JVM thread's last Java frame from its JavaThread (see vmanchor.h).
 */
#include "vmanchor.h"

#include <errno.h>
#include <string.h>

#define THREAD_SIZE_MAX 16384u /* JavaThread is 1-2 KiB in JDK 8 to 25 */
#define MIRROR_OFF_MAX 4096
#define STACK_MAX (1ull << 40)

static bool field_of(const struct vmstructs *vs, const char *type, const char *name, uint64_t *off)
{
	return vmstructs_field(vs, type, name, off, NULL) == 0 && *off < THREAD_SIZE_MAX;
}

int vmanchor_build(const struct vmstructs *vs, struct vmanchor *a)
{
	uint64_t anchor, sp, fp, pc, base, size, tsize, kaddr;
	int32_t koff;

	memset(a, 0, sizeof(*a));
	a->klass_off = -1;
	if (!field_of(vs, "JavaThread", "_anchor", &anchor) ||
	    !field_of(vs, "JavaFrameAnchor", "_last_Java_sp", &sp) ||
	    !field_of(vs, "JavaFrameAnchor", "_last_Java_fp", &fp) ||
	    !field_of(vs, "JavaFrameAnchor", "_last_Java_pc", &pc) ||
	    !field_of(vs, "JavaThread", "_stack_base", &base) ||
	    !field_of(vs, "JavaThread", "_stack_size", &size) ||
	    vmstructs_type_size(vs, "JavaThread", &tsize) != 0 || tsize == 0 ||
	    tsize > THREAD_SIZE_MAX)
		return -ENOENT;
	if (anchor + sp + 8 > tsize || anchor + fp + 8 > tsize || anchor + pc + 8 > tsize ||
	    base + 8 > tsize || size + 8 > tsize)
		return -ENOENT;
	a->last_sp = (uint32_t)(anchor + sp);
	a->last_fp = (uint32_t)(anchor + fp);
	a->last_pc = (uint32_t)(anchor + pc);
	a->stack_base = (uint32_t)base;
	a->stack_size = (uint32_t)size;
	a->thread_size = (uint32_t)tsize;
	if (vmstructs_static(vs, "java_lang_Class", "_klass_offset", &kaddr) == 0) {
		memcpy(&koff, (const void *)(uintptr_t)kaddr, sizeof(koff));
		if (koff > 0 && koff < MIRROR_OFF_MAX && (koff & 7) == 0)
			a->klass_off = koff;
	}
	return 0;
}

static uint64_t word_at(const void *base, uint32_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)base + off, sizeof(v));
	return v;
}

/* Is sp on the stack of the JavaThread t? Its end in *top. */
static bool on_stack(const struct vmanchor *a, const void *t, uintptr_t sp, uint64_t *top)
{
	uint64_t base = word_at(t, a->stack_base), size = word_at(t, a->stack_size);

	*top = base;
	return size > 0 && size < STACK_MAX && base > size && sp < base && sp >= base - size;
}

int vmanchor_bind(struct vmanchor *a, const void *jni, const void *thread, uintptr_t sp)
{
	intptr_t off = (intptr_t)jni - (intptr_t)thread;
	uint64_t top;

	if (!jni || !thread || off <= 0 || (uint64_t)off + 8 > a->thread_size ||
	    !on_stack(a, thread, sp, &top))
		return -EINVAL;
	a->env_off = off;
	return 0;
}

int vmanchor_take(const struct vmanchor *a, const void *jni, uintptr_t here,
		  struct vmanchor_frame *f)
{
	const char *t;

	if (a->env_off <= 0 || !jni)
		return -ENOENT;
	t = (const char *)jni - a->env_off;
	f->sp = word_at(t, a->last_sp);
	if (f->sp == 0)
		return -ENOENT;
	if (!on_stack(a, t, (uintptr_t)f->sp, &f->top) || f->sp <= here || (f->sp & 7u))
		return -ERANGE;
	f->fp = word_at(t, a->last_fp);
	f->pc = word_at(t, a->last_pc);
	return 0;
}

uint64_t vmanchor_klass(const struct vmanchor *a, const void *klass)
{
	const char *mirror;

	if (a->klass_off < 0 || !klass)
		return 0;
	memcpy(&mirror, klass, sizeof(mirror)); /* a local reference: the mirror's oop */
	if (!mirror)
		return 0;
	return word_at(mirror, (uint32_t)a->klass_off);
}
