// SPDX-License-Identifier: MIT
/*
 * allocstack.c - an allocation sample's Java frames and class (see allocstack.h).
 */
#include "allocstack.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "codetab.h"
#include "fgjname.h"

uint32_t allocstack_java_from(const struct codetab *tab, const uint64_t *user, uint32_t n,
			      uint64_t ts, bool *java)
{
	uint32_t past_stubs = 0;
	bool stubs = true;

	for (uint32_t i = 0; i < n; i++) {
		/* a return address is looked up at its call (it may end its code) */
		const struct codeblob *b =
			codetab_lookup(tab, i && user[i] ? user[i] - 1 : user[i], ts);

		if (b && (b->kind == CODEBLOB_COMPILED || strcmp(b->name, "Interpreter") == 0)) {
			*java = true;
			return i;
		}
		if (stubs && b)
			past_stubs = i + 1;
		else
			stubs = false;
	}
	*java = false;
	return past_stubs < n ? past_stubs : 0;
}

size_t allocstack_class_name(const uint8_t *sym, size_t len, char *dst, size_t cap)
{
	return fg_java_class_name((const char *)sym, len, dst, cap);
}

static int rd(const struct vmmem_ops *m, uint32_t pid, uint64_t addr, void *dst, size_t len,
	      size_t *got)
{
	struct iovec l = { dst, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n = m->readv(m->ctx, (pid_t)pid, &l, 1, &r, 1);

	if (n < 0)
		return (int)n;
	*got = (size_t)n;
	return 0;
}

static bool ptr_ok(uint64_t p)
{
	return p >= 4096 && p < (1ull << 47) && (p & 7u) == 0;
}

/* The Symbol at sym written as a class name into dst: its length, or a negative errno. */
static int read_name(const struct vmmem_ops *m, uint32_t pid, const struct interp_layout *l,
		     uint64_t sym, char *dst, size_t cap)
{
	uint8_t buf[64 + INTERP_MAX_CLASS_NAME];
	size_t got = 0, want = (size_t)l->sym_body + INTERP_MAX_CLASS_NAME, n;
	uint16_t slen;
	int rv;

	if (!ptr_ok(sym) || want > sizeof(buf) || (size_t)l->sym_len + 2 > (size_t)l->sym_body)
		return -EBADMSG;
	/* A Symbol near the end of its mapping reads partially: enough when it covers the body. */
	if ((rv = rd(m, pid, sym, buf, want, &got)) != 0)
		return rv;
	if (got < l->sym_body)
		return -EFAULT;
	memcpy(&slen, buf + l->sym_len, sizeof(slen));
	if (slen == 0 || slen > INTERP_MAX_CLASS_NAME)
		return -EBADMSG;
	if (got < (size_t)l->sym_body + slen)
		return -EFAULT;
	n = allocstack_class_name(buf + l->sym_body, slen, dst, cap);
	return n ? (int)n : -EBADMSG;
}

size_t allocstack_klass_name(struct allocstack_klasses *c, const struct vmmem_ops *m, uint32_t pid,
			     const struct interp_layout *l, uint64_t klass, char *dst, size_t cap)
{
	struct allocstack_klass_ent *e =
		&c->e[((klass >> 3) ^ (klass >> 12) ^ pid) % ALLOCSTACK_CACHE];
	uint64_t sym = 0;
	size_t got = 0;
	int n;

	c->lookups++;
	if (cap == 0 || !l->names || !ptr_ok(klass) || l->k_name > 4096) {
		c->invalid++;
		return 0;
	}
	if (c->epoch && e->epoch == c->epoch && e->klass == klass && e->pid == pid && e->sym) {
		c->hits++; /* its Klass read in this epoch already */
		n = (int)strlen(e->name);
		snprintf(dst, cap, "%s", e->name);
		return (size_t)n < cap ? (size_t)n : cap - 1;
	}
	if (rd(m, pid, klass + l->k_name, &sym, sizeof(sym), &got) != 0 || got != sizeof(sym)) {
		c->unreadable++;
		return 0;
	}
	if (e->klass == klass && e->pid == pid && e->sym == sym && sym) {
		c->hits++;
		e->epoch = c->epoch;
		n = (int)strlen(e->name);
		snprintf(dst, cap, "%s", e->name);
		return (size_t)n < cap ? (size_t)n : cap - 1;
	}
	n = read_name(m, pid, l, sym, dst, cap);
	if (n <= 0) {
		if (n == -EBADMSG)
			c->invalid++;
		else
			c->unreadable++;
		return 0;
	}
	if ((size_t)n < sizeof(e->name) && (size_t)n < cap) {
		*e = (struct allocstack_klass_ent){
			.pid = pid, .klass = klass, .sym = sym, .epoch = c->epoch
		};
		memcpy(e->name, dst, (size_t)n + 1);
	}
	return (size_t)n;
}

void allocstack_klass_epoch(struct allocstack_klasses *c)
{
	c->epoch++;
}

void allocstack_forget(struct allocstack_klasses *c, uint32_t pid)
{
	for (uint32_t i = 0; i < ALLOCSTACK_CACHE; i++)
		if (c->e[i].pid == pid)
			c->e[i] = (struct allocstack_klass_ent){ 0 };
}
